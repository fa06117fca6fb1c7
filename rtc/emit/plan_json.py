"""``plan.json``: the whole compiled plan for other tools (schema: schemas/plan.schema.json,
JSON Schema draft 2020-12).

Top level: ``rtc_plan`` (format version 1), ``source`` (the .rtc file name), ``cluster``,
``servers`` (devices with addresses), ``jobs`` (sizes, launch mode, every rank with its
server, device and coordinates, the communication groups as rank lists, and per server its
environment and the argv of every process it starts), ``ports`` (the per-host port plan),
``disaggregation`` (prefill/decode pairs), ``preflight`` (what each server's preflight
checks) and ``files`` (everything ``rtc compile --out-dir`` wrote).

Size is linear in the cluster: one record per server, device and rank, groups as rank
lists (each rank appears once per group kind). The text is deterministic: keys in a fixed
order, one rank / device / group / process per line (containers holding only scalars are
written on one line).
"""

from __future__ import annotations

import json
from itertools import chain

from rtc.model.topology import Job, Topology
from rtc.plan import Plan
from rtc.plan.modes import effective_executor
from rtc.textfmt import one_line_encoder, one_line_many_encoder

FORMAT = 1


def build(topo: Topology, plan: Plan, ctx, later: list[str] = ()) -> dict:
    """The plan document. ``ctx`` is the :class:`rtc.emit.bundle.Bundle` being built (file
    names, launches, env, preflight, and its ``ip_text``: address texts shared with the
    preflight scripts); ``later``: names of files it will hold that are not added yet."""
    cluster = {"name": topo.name, "hardware": topo.preset.name, "cann": topo.cann,
               "vllm_version": topo.vllm_version,
               "ranktable_version": topo.preset.ranktable_version,
               "devices_per_server": topo.preset.devices_per_server}
    _ip = ctx.ip_text
    servers = [{
        "name": s.name, "server_id": s.server_id, "host": _ip(s.host_ip), "nic": s.nic,
        "super_pod_id": s.super_pod_id,
        "visible_devices": list(s.visible_devices) if s.visible_devices is not None else None,
        "devices": [{"device_id": d.device_id, "device_ip": _ip(d.device_ip),
                     "gateway": _ip(d.gateway), "prefix": d.prefix,
                     "super_device_id": d.super_device_id} for d in s.devices]}
        for s in topo.servers]
    jobs = [_job(topo, job, ctx, _ip) for job in ctx.jobs if job is not None]
    ports = [{"server": s.name, "lo": c.lo, "hi": c.hi, "kind": c.kind, "job": c.job,
              "assigned": c.assigned}
             for s in topo.servers
             for c in sorted(plan.ports.on(s.name), key=lambda c: (c.lo, c.hi, c.kind))]
    pd = [{"name": pair.name, "prefill": [j.name for j in pair.prefill],
           "decode": [j.name for j in pair.decode],
           "kv_connector": next((j.kv_connector for j in pair.jobs if j.kv_connector), None),
           "pd_rank_table": ctx.pd_tables.get(id(pair))} for pair in plan.pairs]
    preflight = [{"server": sp.server.name, "file": f"preflight-{sp.server.name}.sh",
                  "devices": [d.device_id for d in sp.devices],
                  "pings": sum(len(t) for t in sp.pings.values()),
                  "hccl_ports": [[lo, hi] for lo, hi, _ in sp.ports]}
                 for sp in ctx.preflight]
    return {"rtc_plan": FORMAT, "source": ctx.source, "cluster": cluster, "servers": servers,
            "jobs": jobs, "ports": ports, "disaggregation": pd, "preflight": preflight,
            "files": sorted(ctx.file_names() + list(later) + ["plan.json"])}


def _job(topo: Topology, job: Job, ctx, ip_text) -> dict:
    """One job: sizes, launch mode, every rank with its coordinates, groups, nodes."""
    pl = topo.placement(job)
    spec = job.launch
    jl = ctx.launches.get(job.name)
    ranks = []
    # pl.server_of / device_of / device_ip_of, inline (65,536 ranks)
    nodes, rank_node, pos_node, pos_slot = pl.nodes, pl.rank_node, pl.position_node, \
        pl.position_slot
    for r in range(pl.world):
        c = pl.coords(r)
        p = pl.rank_position[r]
        n = rank_node[r]
        device = ip = None
        if p >= 0:
            node, slot = nodes[pos_node[p]], pos_slot[p]
            device = node.device_ids[slot]
            ip = ip_text(node.device_ips[slot]) if slot < len(node.device_ips) else None
        ranks.append({"rank": r, "rank_id": p if p >= 0 else None,
                      "server": nodes[n].name if n >= 0 else None, "device_id": device,
                      "device_ip": ip, "dp": c.dp, "pp": c.pp, "pcp": c.pcp, "tp": c.tp})
    groups = {dim: [list(g) for g in pl.groups(dim)] for dim in pl.dims}
    vllm = job.framework == "vllm"
    return {
        "name": job.name, "role": job.role, "framework": job.framework,
        "sizes": {"dp": job.dp, "tp": job.tp, "pp": job.pp, "pcp": job.pcp,
                  "dcp": job.dcp, "world": pl.world},
        "expert_parallel": bool(job.expert_parallel), "model_kind": job.model_kind,
        "rank_table": ctx.tables.get(job.name),
        "launch_mode": jl.mode if jl is not None else None,
        "executor": effective_executor(job, pl) if vllm else None,
        "lb": spec.lb or "internal" if vllm else None,
        "model": spec.model, "entry": spec.entry, "kv_connector": job.kv_connector,
        "nodes": _nodes(job, pl, jl, ctx), "ranks": ranks, "groups": groups}


def _nodes(job: Job, pl, jl, ctx) -> list[dict]:
    """Per server of the job: devices, ranks, its files, env and processes."""
    by_server = jl.nodes_by_server if jl is not None else {}
    nodes = []
    for n in pl.nodes:
        if not n.device_count:
            continue
        nl = by_server.get(n.name)
        ne = ctx.envs.get((n.name, job.name))
        entry = {"server": n.name, "head": bool(nl.head) if nl else n.index == 0,
                 "device_ids": list(n.device_ids),
                 "ranks": [n.first_rank, n.placed],
                 "dp_local": n.dp_local, "dp_start": n.dp_start,
                 "env_file": ctx.env_files.get((n.name, job.name)),
                 "launch_file": ctx.launch_files.get((n.name, job.name)),
                 "env": [[v.name, ("${RTC_DIR}/" + v.value) if v.path else v.value]
                         for v in (ne.variables if ne else [])],
                 "processes": []}
        if nl is not None:
            values = {name: value for name, value, _ in nl.variables if value}
            for proc in nl.procs:
                entry["processes"].append({
                    "argv": proc.words(values), "env": [[k, v] for k, v in proc.env],
                    "background": proc.background, "step": proc.step})
        nodes.append(entry)
    return nodes


_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
#: ``json.dumps(x, ensure_ascii=False)``, with one encoder for the ~900,000 values of a
#: 65,536-NPU plan.
_encode = one_line_encoder(ensure_ascii=False)
_encode_many = one_line_many_encoder(ensure_ascii=False)
_encode_key = json.encoder.encode_basestring_ascii  # what JSONEncoder().encode does for a str
_encode_str = json.encoder.encode_basestring  # what the encoder above does for a str


#: The text of a scalar value by its exact type, as ``json.dumps`` writes it (floats go
#: through the encoder: ``repr`` differs for inf and nan).
_SCALAR_TEXT = {str: _encode_str, int: int.__repr__, type(None): lambda v: "null",
                bool: lambda v: "true" if v else "false"}


def _scalars(values) -> bool:
    """True when every value is a JSON scalar (exact types first: one C-level pass)."""
    return _SCALAR_TYPES.issuperset(map(type, values)) or \
        all(isinstance(v, _SCALARS) for v in values)


def _one_line(x) -> str | None:
    """The one-line text of ``x`` when it goes on one line, else None. Lists of scalars
    always do (ranks of a group, argv); so do dicts of scalars (a rank, a device) and
    dicts whose lists hold only scalars when they fit in 160 characters."""
    if isinstance(x, list):
        return _encode(x) if _scalars(x) else None
    values = x.values()
    if _scalars(values):
        return _encode(x)
    if all(isinstance(v, _SCALARS) or (isinstance(v, list) and _scalars(v))
           for v in values):
        text = _encode(x)
        return text if len(text) <= 160 else None
    return None


def _dump(x, indent: str) -> str:
    t = type(x)
    if t is str:
        return _encode_str(x)
    if t is int:
        return int.__repr__(x)
    if x is None:
        return "null"
    if not x or not isinstance(x, (dict, list)):
        return _encode(x)
    text = _one_line(x)
    if text is not None:
        return text
    inner = indent + "  "
    if isinstance(x, dict):
        scalar = _SCALAR_TEXT.get
        items = [f"{inner}{_encode_key(k)}: "
                 f"{f(v) if (f := scalar(type(v))) is not None else _dump(v, inner)}"
                 for k, v in x.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return "[\n" + ",\n".join(_list_items(x, inner)) + "\n" + indent + "]"


def _list_items(x: list, inner: str) -> list[str]:
    """The lines of the items of a list that does not go on one line: :func:`_dump` of
    each, with its one-line cases for a list or dict of scalars taken inline (plan.json
    has ~400,000 such items at 65,536 NPUs: ranks, devices, groups, env pairs). A list
    whose items are all such lists, or all such dicts (the ranks, a server's devices, the
    groups of a dimension), is encoded in one pass of the C encoder."""
    kinds = set(map(type, x))
    if kinds == {dict} and _SCALAR_TYPES.issuperset(
            map(type, chain.from_iterable(map(dict.values, x)))) or \
            kinds == {list} and _SCALAR_TYPES.issuperset(map(type, chain.from_iterable(x))):
        return list(map(inner.__add__, _encode_many(x)))
    out = []
    append = out.append
    scalar_types = _SCALAR_TYPES.issuperset
    for v in x:
        t = type(v)
        if t is list and scalar_types(map(type, v)) or \
                t is dict and scalar_types(map(type, v.values())):
            append(inner + _encode(v))
        else:
            append(inner + _dump(v, inner))
    return out


def render(doc: dict) -> str:
    return _dump(doc, "") + "\n"
