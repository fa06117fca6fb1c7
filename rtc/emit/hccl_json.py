"""Emit the HCCL rank table (``hccl.json``) from a checked Topology.

Format (HCCL user guide, hicann/hccl @09300b70
``docs/zh/user_guide/cluster_info_config/rank_table_config_a2.md`` / ``_a3.md``; the parser,
libochao-huawei/hcomm @8958adbf ``src/legacy/ascend910/framework/common/src/topo/``
``topoinfo_ranktableConcise.cc``; ``schemas/hccl-v1.0.schema.json``, ``hccl-v1.2.schema.json``):

* version "1.0" (Atlas 800T A2, 910A, generic)::

    {"status": "completed", "version": "1.0", "server_count": "2",
     "server_list": [{"server_id": "node_0",
                      "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"}]}]}

* ``server_id`` is the server's host IP unless the file writes ``server_id`` (as Ascend
  Operator writes it, MindCluster ``ascend-operator/pkg/ranktable/common/common.go``
  ``buildServerInfo``; MindIE-LLM's ``atb_llm`` ``EnvVar.check_ranktable`` and MindIE
  Motor's ``RankTableLoader`` refuse a server_id that is not an IP); the server's name
  stays rtc's own (plan, diagnostics); a server without ``host`` keeps its name;
* ``host_ip`` when the server has a ``host``: always in 1.2; in 1.0 when every device of
  the server has a ``device_ip`` (Ascend Operator always writes both; a ``host_ip``
  beside a device without ``device_ip`` would switch HCCL to host-NIC links,
  ``concise.cc DetectNicDepoly``);
* version "1.2" (Atlas A3 super pods): each device adds ``super_device_id``;

* any version: a server adds ``container_ip`` (after ``host_ip``) when it declares one, and
  in a ``framework mindie`` job's table always (the host IP without one): MindIE reads it
  to find its own server and refuses a multi-node table without it
  (:mod:`rtc.plan.mindie`; Ascend Operator writes the pod IP there); a top-level ``super_pod_list`` lists the servers of each
  super pod (``[{"super_pod_id": "0", "server_list": [{"server_id": ...}]}]``).

Every scalar is a JSON string; rank ids run 0..N-1 in rank order (servers in declared
order, devices ascending) so they are contiguous per server and never interleaved. Servers
of one super pod must be adjacent (the checks enforce it). Output bytes are deterministic:
fixed key order, 2-space indent, trailing newline.
"""

from __future__ import annotations

from rtc.emit.jsontext import render  # noqa: F401  (the table's text: callers import it here)
from rtc.model.topology import Job, Topology
from rtc.textfmt import SMALL_INTS, ip_text_memo


def build_rank_table(topo: Topology, job: Job | None = None) -> dict:
    """The rank table of ``job`` (or of every device when ``job`` is None) as a dict in
    canonical key order. Version "1.2" when the preset uses super pods, "2.0" on Ascend 950
    presets (:func:`rtc.emit.hccl_v2.build_rank_table_v2`), else "1.0"."""
    if topo.preset.is_a5:
        from rtc.emit.hccl_v2 import build_rank_table_v2

        return build_rank_table_v2(topo, job)
    members = topo.rank_table_members(job)
    version = topo.preset.ranktable_version
    mindie = job is not None and job.framework == "mindie"
    ranks = list(map(str, range(sum(len(devices) for _s, devices in members))))
    ip_text = ip_text_memo()
    server_list = []
    rank = 0
    for server, devices in members:
        entry: dict = {"server_id": server.server_id}
        if server.host_ip is not None and (version == "1.2" or all(
                d.device_ip is not None for d in devices)):
            entry["host_ip"] = str(server.host_ip)
        pod_ip = server.container_ip if server.container_ip is not None else \
            (server.host_ip if mindie else None)
        if pod_ip is not None:
            entry["container_ip"] = str(pod_ip)
        devs = []
        for d in devices:
            item = {"device_id": _int_text(d.device_id)}
            if version == "1.2" and d.super_device_id is not None:
                item["super_device_id"] = str(d.super_device_id)
            if d.device_ip is not None:
                item["device_ip"] = ip_text(d.device_ip)
            item["rank_id"] = ranks[rank]
            rank += 1
            devs.append(item)
        entry["device"] = devs
        server_list.append(entry)
    doc: dict = {"status": "completed", "version": version,
                 "server_count": str(len(server_list)), "server_list": server_list}
    if version == "1.2":
        pods: dict[str, list] = {}
        for server, _ in members:
            if server.super_pod_id is not None:
                pods.setdefault(server.super_pod_id, []).append({"server_id": server.server_id})
        if pods:
            doc["super_pod_list"] = [{"super_pod_id": pid, "server_list": servers}
                                     for pid, servers in pods.items()]
    return doc


def _int_text(n: int) -> str:
    """``str(n)`` of an int (a table lookup for 0..255)."""
    return SMALL_INTS[n] if 0 <= n < 256 else str(n)


def schema_name(doc: dict) -> str:
    """The rtc schema a table built here must satisfy (``hccl-v1.0``, ``-v1.2``, ``-v2.0``)."""
    return f"hccl-v{doc['version']}"


