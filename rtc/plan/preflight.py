"""The preflight plan: which NPUs each server checks, which peers every NPU pings, and
which HCCL port windows must be reserved (rendered as ``preflight-<server>.sh`` by
:mod:`rtc.emit.preflight_script`).

Which pings
===========

An NPU pings the device IPs of the NPUs it communicates with on *other link units* (another
server; inside an A3 super pod NPUs talk over HCCS, so only other super pods count, unless
``HCCL_INTER_HCCS_DISABLE=TRUE``): the members of its groups (expert parallel and pipeline
groups when EP is on, else TP, PCP, PP and DP groups; Megatron: TP, CP, PP, DP), every
NPU of a table without jobs, and for prefill/decode pairs the other side's NPUs. Per
group, when those peers are more than :data:`PING_BUDGET` (16), one representative per
(peer server, peer subnet) is pinged - the first such NPU in rank order - and when the
representatives are still more than 16, 16 of them spread evenly over the group, starting
after the NPU's own position (so different NPUs cover different peers). The cost is at
most 16 pings per NPU and group, linear in the cluster.
"""


from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rtc.model.topology import Device, Job, Server, Topology
from rtc.network.addressing import subnet_of
from rtc.network.env import HCCL_DEFAULT_BASE, env_map, hccl_window_size
from rtc.plan.disaggregation import PdPair
from rtc.plan.ports import PortPlan
from rtc.textfmt import ip_text

PING_BUDGET = 16


@dataclass
class ServerPreflight:
    """One server's preflight: the NPUs in use, each NPU's pings ``[(target ip, (peer
    server, peer device id))]`` (distinct target IPs, in planned order), and the HCCL port
    windows ``(lo, hi, job)`` to check."""

    server: Server
    devices: list[Device]                          # in use, ascending
    pings: dict = field(default_factory=dict)      # device id -> [(target ip, (server, device id))]
    ports: list = field(default_factory=list)      # [(lo, hi, job)]


def _unit(server, pods: bool) -> tuple:
    """The link unit of ``server``: its super pod when pods talk over HCCS, else itself."""
    return ("pod", server.super_pod_id) if pods and server.super_pod_id is not None \
        else ("server", server.name)


def _hccs_pods(topo, jobs) -> bool:
    if not topo.preset.super_pod:
        return False
    for j in jobs:
        if str(env_map(j).get("HCCL_INTER_HCCS_DISABLE", ("",))[0]).upper() == "TRUE":
            return False
    return True


def _groups(topo, job):
    """Lists of (server, device) that must reach each other, for ``job``."""
    members = topo.rank_table_members(job)
    flat = [(s, d) for s, devs in members for d in devs]
    pl = topo.placement(job)
    dims = ("ep", "pp") if "ep" in pl.dims else pl.dims
    position, placed = pl.rank_position, len(flat)
    known = len(position)
    for dim in dims:
        for g in pl.groups(dim):
            if len(g) < 2:  # a group of one (pp 1: 65,536 of them) has no peers
                continue
            out = [flat[p] for p in (position[r] if r < known else -1 for r in g)
                   if 0 <= p < placed]
            if len(out) > 1:
                yield out


def _members(group, pods: bool) -> tuple[list, list, int]:
    """(members, representatives, number of link units) of a group: each member as
    (unit number, server, device, ip text, (server name, device id)); the
    representatives are the first member with an IP of each (unit, peer server and
    subnet), in group order. A server's unit is looked up once per run of its devices."""
    unit_ids: dict = {}
    members = []
    reps = []
    seen = set()
    last = u = None
    for s, d in group:
        if s is not last:
            last, u = s, unit_ids.setdefault(_unit(s, pods), len(unit_ids))
        ip = ip_text(d.device_ip)
        m = (u, s, d, ip, (s.name, d.device_id))
        members.append(m)
        if ip is not None:
            rep = (u, s.name, subnet_of(d.device_ip, d.prefix) or ("dev", d.device_id))
            if rep not in seen:
                seen.add(rep)
                reps.append(m)
    return members, reps, len(unit_ids)


def _run_ends(rep_unit: list[int]) -> list[int]:
    """For each index, the index after its run of equal units (an A3 super pod's 1,024
    NPUs are one run), so skipping a member's own unit jumps over the run instead of
    stepping through it one by one."""
    n = len(rep_unit)
    run_end = [n] * n
    for idx in range(n - 2, -1, -1):
        run_end[idx] = run_end[idx + 1] if rep_unit[idx] == rep_unit[idx + 1] else idx + 1
    return run_end


def _select(group, pods: bool, sink: dict) -> None:
    """Add each member's pings for one group to ``sink[(server, device id)]`` (linear in
    the group: at most PING_BUDGET picks per member)."""
    members, reps, n_units = _members(group, pods)
    if n_units < 2:
        return
    size = len(members)
    units = Counter(m[0] for m in members)
    rep_units = Counter(m[0] for m in reps)
    n = len(reps)
    rep_unit = [m[0] for m in reps]
    run_end = _run_ends(rep_unit)
    offsets = [1 + (j * n) // PING_BUDGET for j in range(PING_BUDGET)]
    pairs = [(m[3], m[4]) for m in reps]
    # With distinct IPs among the representatives, distinct picks of a spread member are
    # one pair per IP, so they need no dict to drop repeats.
    distinct = len({p[0] for p in pairs}) == n

    def other(idx: int, unit: int) -> int:
        while rep_unit[idx] == unit:
            idx = run_end[idx] % n
        return idx

    for pos, (unit, s, d, _ip, key) in enumerate(members):
        peers = size - units[unit]
        if peers <= 0:
            continue
        if peers <= PING_BUDGET:
            chosen = [(m[3], m[4]) for m in members if m[0] != unit and m[3] is not None]
        elif n - rep_units[unit] <= PING_BUDGET:
            chosen = [pairs[k] for k, m in enumerate(reps) if m[0] != unit]
        else:
            # 16 representatives spread evenly, starting after the member's own position
            start = (pos * n) // size
            picks = [i if rep_unit[i] != unit else other(i, unit)
                     for i in [(start + off) % n for off in offsets]]
            _add(sink, key, list(map(pairs.__getitem__, picks)),
                 distinct and len(set(picks)) == len(picks))
            continue
        _add(sink, key, chosen, False)


def _add(sink: dict, key, chosen: list, distinct: bool) -> None:
    """Add the pings ``chosen`` (``(ip, value)`` pairs; the first one of an IP wins, in
    order) to the bucket ``sink[key]``: a new bucket of ``distinct`` IPs is the list
    itself (no dict for the ~1M pings of 65,536 NPUs in one EP group), any other bucket a
    dict ``{ip: value}`` (a list bucket becomes one on the next add)."""
    bucket = sink.get(key)
    if bucket is None and distinct:
        sink[key] = chosen
        return
    if bucket is None or type(bucket) is list:
        bucket = sink[key] = dict(bucket or ())
    add = bucket.setdefault
    for ip, value in chosen:
        add(ip, value)


def plan_preflight(topo: Topology, ports: PortPlan, pairs: list[PdPair],
                   jobs: list[Job] | None = None) -> list[ServerPreflight]:
    """One :class:`ServerPreflight` per server with NPUs in use by ``jobs`` (all jobs when
    None), in declared order."""
    jobs = list(topo.jobs) if jobs is None else list(jobs)
    used: dict[str, set] = {}
    if not topo.jobs:
        for s in topo.servers:
            used[s.name] = {d.device_id for d in s.devices}
    for j in jobs:
        for p in j.placements:
            used.setdefault(p.server.name, set()).update(p.device_ids)
    pods = _hccs_pods(topo, jobs)
    sink: dict = {}
    if not topo.jobs:
        group = [(s, d) for s, devs in topo.rank_table_members(None) for d in devs]
        _select(group, pods, sink)
    for j in jobs:
        for g in _groups(topo, j):
            _select(g, pods, sink)
    for pair in pairs:
        if any(j in jobs for j in pair.jobs) and pair.prefill and pair.decode:
            group = [(s, d) for j in pair.jobs for s, devs in topo.rank_table_members(j)
                     for d in devs]
            _select(group, pods, sink)
    count, _ = hccl_window_size(topo.cann)
    out = []
    for s in topo.servers:
        ids = used.get(s.name)
        if not ids:
            continue
        sp = ServerPreflight(s, [d for d in s.devices if d.device_id in ids])
        for d in sp.devices:
            got = sink.get((s.name, d.device_id))
            if type(got) is dict:
                got = list(got.items())
            if got:
                sp.pings[d.device_id] = got
        claims = ports.on(s.name)
        sp.ports = sorted({(c.lo, c.hi, c.job or "") for c in claims if c.kind == "hccl"})
        if not sp.ports:
            sp.ports = [(HCCL_DEFAULT_BASE, HCCL_DEFAULT_BASE + count - 1, "")]
        out.append(sp)
    return out
