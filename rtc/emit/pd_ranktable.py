"""The prefill/decode rank table of vllm-ascend's LLMDataDist connector
(``pd-ranktable.json``; ``pd-ranktable-<name>.json`` when a file has several
``disaggregation`` blocks using that connector).

Format (rtc reference ranktable-formats.md section 4, schemas/pd-ranktable.schema.json)::

    {"version": "1.2", "server_count": "<servers of both sides>",
     "prefill_device_list": [{"server_id": "<host IP>", "device_id": "0", "device_ip": "...",
                              ["super_pod_id": "0", "super_device_id": "0",] "cluster_id": "1"}, ...],
     "decode_device_list": [... cluster_id continues ...],
     "status": "completed"}

Devices are listed per side in the jobs' rank order (prefill jobs first, in the pair's
order; each job's servers in declared order, devices ascending - the TP rank order the
connector's ``[pcp_rank * tp_size + tp_rank]`` lookup needs); ``cluster_id`` numbers them
from 1 across the whole table; ``server_id`` is the server's ``host`` (the worker matches
it against its own IP); ``super_pod_id`` / ``super_device_id`` on A3 (rank table 1.2
presets). Every value is a string. The table is validated against the schema before it is
written; the jobs' env files point ``DISAGGREGATED_PREFILL_RANK_TABLE_PATH`` at it.
"""

from __future__ import annotations

import json

from rtc.schema import validate_document


def table_names(pairs) -> dict:
    """id(pair) -> file name, for the pairs whose jobs use the LLMDataDist connector."""
    using = [p for p in pairs if p.prefill and p.decode
             and any(j.kv_connector == "llmdatadist" for j in p.jobs)]
    out = {}
    for i, p in enumerate(using):
        if len(using) == 1:
            out[id(p)] = "pd-ranktable.json"
        else:
            out[id(p)] = f"pd-ranktable-{p.name or i + 1}.json"
    return out


def build(topo, pair) -> dict:
    """The PD table of ``pair`` as a dict in canonical key order."""
    a3 = topo.preset.ranktable_version == "1.2"
    servers: list[str] = []
    cluster_id = 0

    def side(jobs) -> list:
        nonlocal cluster_id
        out = []
        for job in jobs:
            for server, devs in topo.rank_table_members(job):
                if server.name not in servers:
                    servers.append(server.name)
                for d in devs:
                    cluster_id += 1
                    item = {"server_id": str(server.host_ip) if server.host_ip is not None
                            else server.server_id,
                            "device_id": str(d.device_id),
                            "device_ip": str(d.device_ip) if d.device_ip is not None else ""}
                    if a3 and server.super_pod_id is not None:
                        item["super_pod_id"] = str(server.super_pod_id)
                    if a3 and d.super_device_id is not None:
                        item["super_device_id"] = str(d.super_device_id)
                    item["cluster_id"] = str(cluster_id)
                    out.append(item)
        return out

    prefill = side(pair.prefill)
    decode = side(pair.decode)
    return {"version": "1.2", "server_count": str(len(servers)),
            "prefill_device_list": prefill, "decode_device_list": decode,
            "status": "completed"}


def render(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def validate(doc: dict, name: str) -> list:
    """Schema findings (rtc's own validator, pd-ranktable form)."""
    return validate_document(doc, "pd-ranktable", filename=name)
