"""HCCS between the NPUs of an Ascend server, as its ``npu-smi info -t topo`` capture shows
it (RTC225, RTC226).

A server's HCCS islands are the connected components of its HCCS-class links
(:meth:`rtc.inventory.npu_smi.TopoMatrix.hccs_islands`: ``HCCS``, ``HCCS_SW``, ``SIO``);
pairs in different islands reach each other only over PCIe or the CPU (``PIX`` ... ``SYS``).
The cost model takes the same islands (:mod:`rtc.cost.captured`), so `rtc cost` and the
costs quoted here agree. Costs are rtc's estimate of one 1 MiB AllReduce (one decode step's
TP AllReduce of 64 tokens x 8192 hidden x 2 bytes, as RTC312), under the file's `links`
parameters (default set ``nominal``).

The HCCL device-set rule of 910A servers (RTC320) stays with the preset: HCCL's rank-table
parser accepts device sets by product, not by what the links are; a capture that splits a
910B server makes the job slow (RTC225), not refused.
"""

from __future__ import annotations

from rtc.checks._ranks import runs_by_server
from rtc.diagnostics import Related, Span, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule
from rtc.textfmt import compact

TP_WITHOUT_HCCS = rule("RTC225", "tp-without-hccs", "warning",
                       "A TP group uses NPUs of a server that its npu-smi topo capture shows without HCCS between them.", """
    What: the server's `inventory` holds `npu-smi info -t topo`, and some NPUs of one TP
    group on that server are joined only by PIX / PXB / PHB / SYS (PCIe through switches or
    the CPU), not by HCCS, HCCS_SW or SIO.
    Why: TP does an AllReduce in every layer for every token; HCCL's intra-server mesh runs
    at the speed of its slowest pair, so one PCIe pair (about 32 GB/s, 13 us per step)
    replaces HCCS for the whole group. The message gives rtc's estimate of one 1 MiB
    AllReduce on the captured links and on the HCCS the hardware should have.
    Example: `tp 8` on an atlas-800t-a2 server whose capture reads SYS between NPU0-3 and
    NPU4-7 (a 910A-style split, or HCCS links down).
    Fix: keep each TP group inside one HCCS island of the capture (the message names them),
    e.g. `tp 4` with `dp 2`; or repair the HCCS links (`npu-smi info -t topo` should read
    HCCS between every pair of an A2 server) and re-capture.""")
TOPOLOGY_DIFFERS = rule("RTC226", "hccs-topology-differs", "warning",
                        "A server's npu-smi topo capture shows other HCCS groups than its hardware has.", """
    What: the HCCS islands of the server's `npu-smi info -t topo` capture, restricted to the
    NPUs the tables use, differ from the preset's HCCS groups (an A2 server is one full
    mesh of 8, an A3 server one of 16 dies, a 910A server two rings of 4), or the capture
    lacks an NPU the server uses.
    Why: HCCL follows the real links: where HCCS is missing, its intra-server algorithms
    fall back to PCIe, and every collective between those NPUs gets several times slower.
    rtc's cost model (`rtc cost`, RTC310) then uses the captured links, not the preset's.
    Example: hardware atlas-800t-a2 with a capture in which NPU0-3 see NPU4-7 over SYS.
    Fix: check the HCCS links (a faulty link, a board seated wrong, or the wrong `hardware`:
    atlas-800-910a has two rings), re-capture, or describe the hardware the capture shows.""")

#: Message size of the cost comparison (bytes): one decode step's TP AllReduce, 64 tokens x
#: 8192 hidden x 2 bytes (reference cost-model.md 5.7 Example B), as RTC312.
MESSAGE = 64 * 8192 * 2


def _captured(topo: Topology) -> dict:
    """server name -> (server, its captured islands) for Ascend servers with a topo capture."""
    from rtc.cost.captured import server_islands

    out = {}
    if topo.preset.is_gpu:
        return out
    for s in topo.servers:
        islands = server_islands(s)
        if islands is not None:
            out[s.name] = (s, islands)
    return out


def check(topo: Topology, plan: Plan):
    captured = _captured(topo)
    if not captured:
        return
    yield from _differs(topo, captured)
    for job in topo.jobs:
        if job.tp < 2 or not job.placements or \
                job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue
        try:
            pl = topo.placement(job)
        except ValueError:
            continue   # reported by the RTC3xx placement checks
        yield from _tp_groups(topo, job, pl, captured)


def _island_of(islands, device: int):
    return next((i for i, isl in enumerate(islands) if device in isl), None)


def _tp_groups(topo: Topology, job, pl, captured: dict):
    """RTC225: one finding per job, the first crossing group as the example, with its cost."""
    crossing = []
    for group in pl.groups("tp"):
        for name, members in _by_server(pl, group).items():
            if name in captured and len({_island_of(captured[name][1], pl.device_of(r))
                                         for r in members}) > 1:
                crossing.append((group, name))
                break
    if not crossing:
        return
    group, name = crossing[0]
    server, islands = captured[name]
    total = len(pl.groups("tp"))
    which = (f"its TP group (tp {job.tp})" if total == 1 else
             f"{len(crossing)} of {total} TP groups (tp {job.tp})")
    devices = sorted(pl.device_of(r) for r in _by_server(pl, group)[name])
    parts = [compact(list(g)) for g in islands if set(g) & set(devices)]
    cost = _cost(topo, job, group, islands)
    inv = server.inventory_facts.topo
    yield warning(
        TP_WITHOUT_HCCS,
        f"job {job.name}: {which} use{'s' if total == 1 else ''} NPUs without HCCS between "
        f"them; e.g. TP group {pl.group_index('tp', group[0])} ({runs_by_server(pl, group)}) "
        f"has NPUs {compact(devices)} of {name}, which npu-smi info -t topo splits into HCCS "
        f"islands {', '.join(parts)} (PCIe / SYS between them){cost}",
        job.span_of("tp"), subject=f"job {job.name}, server {name}",
        related=[Related(Span.whole_file(inv.file), "npu-smi info -t topo")],
        hint=_hint(job, islands, devices))


def _by_server(pl, group) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in group:
        name = pl.server_of(r)
        if name is not None:
            out.setdefault(name, []).append(r)
    return out


def _hint(job, islands, devices) -> str:
    biggest = max((len(set(g) & set(devices)) for g in islands), default=1)
    size = max((t for t in range(1, biggest + 1) if job.tp % t == 0), default=1)
    alt = (f"e.g. tp {size} with dp {job.dp * job.tp // size}" if size > 1 else
           "e.g. NPUs of one island")
    return (f"keep each TP group inside one HCCS island ({alt}), or repair the HCCS links "
            "and re-capture `npu-smi info -t topo`")


def _cost(topo: Topology, job, group, islands) -> str:
    """'; rtc's estimate of a 1 MiB AllReduce: ... vs ... over HCCS' ('' when the cost
    inputs are unusable: RTC340 reports them)."""
    from rtc.cost.captured import with_islands
    from rtc.cost.collectives import allreduce
    from rtc.cost.errors import CostInputError
    from rtc.cost.inputs import topology_params
    from rtc.cost.links import hardware_of
    from rtc.cost.spans import group_span, job_sites
    from rtc.cost.units import human_time

    try:
        params = topology_params(topo)
    except CostInputError:
        return ""
    sites = job_sites(topo, job)
    base = hardware_of(topo.preset, env=job.env)
    now_span = group_span(group, sites, with_islands(base, islands))
    want_span = group_span(group, sites, base)
    now, want = allreduce(MESSAGE, now_span, params), allreduce(MESSAGE, want_span, params)
    if now.seconds <= 0 or want.seconds <= 0:
        return ""
    between = next((c for c in now_span.classes if c not in want_span.classes), "PCIe")
    return (f"; rtc's estimate of a 1 MiB AllReduce on this group: "
            f"{human_time(now.seconds)} with {between} between the islands vs "
            f"{human_time(want.seconds)} over the hardware's HCCS "
            f"({now.seconds / want.seconds:.1f}x)")


def _differs(topo: Topology, captured: dict):
    """RTC226: per server in a table, captured islands (on its used NPUs) != the preset's."""
    from rtc.cost.captured import restricted

    used: dict[str, set[int]] = {}
    for job in topo.jobs or [None]:
        for s, devs in topo.rank_table_members(job):
            used.setdefault(s.name, set()).update(d.device_id for d in devs)
    groups = topo.preset.hccs_groups
    for name, (server, islands) in captured.items():
        mine = used.get(name)
        if not mine:
            continue
        inv = server.inventory_facts.topo
        related = [Related(Span.whole_file(inv.file), "npu-smi info -t topo")]
        missing = sorted(mine - set(inv.ids))
        if missing:
            yield warning(TOPOLOGY_DIFFERS, f"{name} uses NPU{'s' if len(missing) > 1 else ''} "
                          f"{compact(missing)}, which its npu-smi info -t topo capture does not "
                          f"list (it shows {compact(sorted(inv.ids))}); their links are unknown",
                          server.span_of("inventory"), subject=server.label, related=related,
                          hint="capture `npu-smi info -t topo` on this server, or correct `devices`")
            continue
        want = restricted(groups or (tuple(sorted(mine)),), mine)
        have = restricted(islands, mine)
        if want != have:
            yield warning(TOPOLOGY_DIFFERS, f"{name}: npu-smi info -t topo shows HCCS islands "
                          f"{_text(have)} among the NPUs in use, but hardware {topo.preset.name} "
                          f"has {_text(want)}; HCCL (and rtc's cost model) follow the captured "
                          "links, PCIe / SYS where HCCS is missing",
                          server.span_of("inventory"), subject=server.label, related=related,
                          hint="check the HCCS links and re-capture, or declare the hardware the "
                               "capture shows (atlas-800-910a: two rings 0-3, 4-7)")


def _text(islands) -> str:
    if all(len(i) == 1 for i in islands):
        return "none (every NPU on its own)"
    return ", ".join(compact(list(i)) for i in islands)


#: The rules this module reports (collected by rtc.catalogue).
RULES = (TP_WITHOUT_HCCS, TOPOLOGY_DIFFERS)
