"""NVLink islands on NVIDIA GPU servers (RTC312, RTC313, RTC473): TP groups that leave an
island, GPU sets that straddle islands when one island would hold them, and islands that
the captured ``nvidia-smi topo -m`` contradicts.

A server's islands are the preset's ``nvlink_islands`` (``generic-gpu``: the cluster's
``nvlink_island`` lines), or, when the server has an ``inventory`` with a
``nvidia-smi topo -m`` capture, the connected components of its NV# pairs
(:meth:`rtc.inventory.nvidia_smi.GpuTopo.islands`). Costs come from
:mod:`rtc.cost.nccl` (set ``nominal``) for a 1 MiB AllReduce, the size of one decode
step's TP AllReduce of 64 tokens x 8192 hidden x 2 bytes.
"""

from __future__ import annotations

from rtc.checks._ranks import runs_by_server
from rtc.checks.cross_node import domain_text
from rtc.diagnostics import Related, error, note, warning
from rtc.model.topology import Server, Topology
from rtc.plan import Plan
from rtc.rules import rule
from rtc.textfmt import compact

TP_ISLANDS = rule("RTC312", "tp-crosses-nvlink-island", "warning",
                  "A tensor-parallel group on NVIDIA GPUs leaves its NVLink island.", """
    What: the GPUs of a TP group are not all in one NVLink island: on one server they sit
    in different islands (joined only by PCIe or the CPU), or the group spans servers.
    Why: TP does an AllReduce in every layer for every token; NCCL's ring runs at the
    speed of its slowest hop, so one PCIe / SYS hop (about 32 / 9 GB/s) or the network
    (12.5-50 GB/s per NIC) replaces NVLink (200-730 GB/s). TP 8 on an 8-GPU box made of
    NVLink pairs can be slower than TP 2. The message gives rtc's estimate of one 1 MiB
    AllReduce both ways (rtc/cost/nccl.py, set nominal).
    Example: `tp 4` on hardware pcie-nvlink-4x2 (islands 0-1, 2-3, 4-5, 6-7).
    Fix: keep tp <= the island size and put the rest in DP or PP (`tp 2` `dp 4`), or
    choose hardware whose islands hold the group.""")
SET_ISLANDS = rule("RTC313", "gpu-set-straddles-islands", "warning",
                   "A job's GPUs on a server straddle NVLink islands although one island would hold them.", """
    What: a job uses k GPUs of a server that lie in several NVLink islands, while an
    island of that server has k or more GPUs.
    Why: the job's collectives between those GPUs go over PCIe or the CPU instead of
    NVLink; the same job on one island's GPUs is several times faster to communicate.
    Example: `on gpu-01 devices 1, 2` on pcie-nvlink-4x2 (1 and 2 are in different pairs).
    Fix: allocate the GPUs of one island (here `devices 0, 1` or `devices 2, 3`).""")
CAPTURED_ISLANDS = rule("RTC473", "nvlink-islands-differ", "error",
                        "The NVLink islands in a server's nvidia-smi topo -m capture differ from its hardware.", """
    What: the server's `inventory` holds an `nvidia-smi topo -m` matrix whose NV# pairs
    form other islands than the hardware preset declares for the GPUs in use, or lacks
    a GPU the server uses.
    Why: NCCL follows the real links. A cloud VM without NVLink pass-through, a bridge
    not fitted, or a faulty NVSwitch turn NVLink into PCIe / SYS: every TP AllReduce gets
    several times slower, and the TP placement rtc checked is not the one that runs.
    Example: hardware hgx-h100 with a capture in which every GPU pair reads SYS.
    Fix: repair the NVLink (nvidia-smi nvlink --status), choose the hardware the capture
    shows (generic-gpu with `nvlink_island` lines), or capture the right server.""")

VM_WITHOUT_NVLINK = rule("RTC479", "gpu-capture-without-nvlink", "note",
                         "A server's nvidia-smi topo -m shows none of the NVLink its hardware has.", """
    What: the `inventory` capture of a server whose hardware preset joins GPUs by NVLink
    (hgx-h100, hgx-h200 ...) lists fewer GPUs than the board has and no NV# pair at all,
    while the GPUs in use still match the preset's islands (else RTC473 reports it).
    Why: this is what a cloud VM or a partial pass-through shows (one H200 of an HGX
    board): the job runs, but no collective of this server can use NVLink; TP or EP across
    its GPUs would run over PCIe / SYS, and a preflight measures PCIe, not NVLink.
    Example: hardware hgx-h200, `devices 0`, a one-GPU capture (tests/ecosystem).
    Fix: nothing for one-GPU jobs; for TP across GPUs ask for a VM with the whole NVLink
    domain passed through (all GPUs of the board, with Fabric Manager), or describe the
    server as it is (hardware generic-gpu).""")

#: Message size of the cost comparison: one decode step's TP AllReduce, 64 tokens x
#: 8192 hidden x 2 bytes (reference cost-model.md 5.7 Example B).
MESSAGE = 64 * 8192 * 2


def server_islands(topo: Topology, server: Server) -> tuple[tuple[int, ...], ...]:
    """The NVLink islands of ``server``: captured (nvidia-smi topo -m) when there is a
    capture, else the preset's."""
    inv = server.inventory_facts
    if inv is not None and getattr(inv, "gpu_topo", None) is not None:
        return tuple(inv.gpu_topo.islands())
    return topo.preset.nvlink_islands


def _island_index(islands, device: int) -> int | None:
    return next((i for i, isl in enumerate(islands) if device in isl), None)


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_gpu:
        return
    yield from _captured(topo)
    for job in topo.jobs:
        if not job.placements or job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue
        try:
            pl = topo.placement(job)
        except ValueError:
            continue   # reported by the RTC3xx placement checks
        if job.tp > 1:
            yield from _tp_groups(topo, job, pl)
        if job.world_size > 1:
            yield from _device_sets(topo, job)


def _tp_groups(topo: Topology, job, pl):
    """RTC312: one finding per job, the first group as the example, with its cost."""
    servers = {s.name: s for s in topo.servers}
    crossing = []
    for group in pl.groups("tp"):
        where = {_place(topo, servers[pl.server_of(r)], pl.device_of(r))
                 for r in group if pl.server_of(r) in servers}
        if len(where) > 1:
            crossing.append(group)
    if not crossing:
        return
    first = crossing[0]
    total = len(pl.groups("tp"))
    names = list(dict.fromkeys(pl.server_of(r) for r in first))
    how = "spans servers" if len(names) > 1 else "spans NVLink islands"
    domains = domain_text(topo, names) if topo.preset.super_pod and len(names) > 1 else ""
    which = (f"its TP group (tp {job.tp})" if total == 1 else
             f"{len(crossing)} of {total} TP groups (tp {job.tp})")
    cost, best = _costs(topo, job, first)
    verb = "leaves its" if total == 1 else "leave their"
    index = pl.group_index("tp", first[0])
    if len(names) > 1:     # RTC310 reports this group (cross_node): say its cost only
        yield warning(TP_ISLANDS, f"job {job.name}: {which} {verb} NVLink island: TP group "
                      f"{index} crosses servers{domains} (RTC310); {cost}", job.span_of("tp"),
                      subject=f"job {job.name}",
                      hint="the fix is RTC310's (keep each TP group inside one "
                           + ("NVLink domain" if domains else "server") + "); to accept "
                           "the slower AllReduce write `policy tp-crosses-nvlink-island "
                           "allow` beside `policy cross-node-tp allow`")
        return
    yield warning(TP_ISLANDS, f"job {job.name}: {which} {verb} NVLink island; e.g. TP "
                  f"group {index} {how}{domains}: "
                  f"{runs_by_server(pl, first)}; {cost}", job.span_of("tp"),
                  subject=f"job {job.name}",
                  hint=(f"keep each TP group inside one NVLink domain (put its trays in one "
                        f"super_pod), or {best}" if domains else best))


def _place(topo: Topology, server: Server, device: int) -> tuple:
    """The NVLink island a GPU is in: its NVLink domain on NVL72-class hardware (the
    preset's ``super_pod``, named by the server's ``super_pod``), else (server, island)."""
    if topo.preset.super_pod and server.super_pod_id is not None:
        return ("domain", server.super_pod_id)
    return (server.name, _island_index(server_islands(topo, server), device))


def _costs(topo: Topology, job, group) -> tuple[str, str]:
    """(the cost sentence, the hint) for a TP group that leaves its island."""
    from rtc.cost.links import Site, hardware_of
    from rtc.cost.nccl import allreduce
    from rtc.cost.params import load_params
    from rtc.cost.spans import group_span, job_sites

    params = load_params("nominal")
    hw = hardware_of(topo.preset, env=job.env)
    sites = job_sites(topo, job)
    first = topo.server(topo.placement(job).server_of(group[0]))
    nics = len(first.ib_hca) if first is not None and first.ib_hca else None
    now = allreduce(MESSAGE, group_span(group, sites, hw), params, nics=nics)
    islands = server_islands(topo, first) if first is not None else ()
    big = max(islands, key=len, default=())
    size = min(job.tp, len(big))
    inside = [Site(0, d) for d in big[:size]]
    alt = allreduce(MESSAGE, group_span(range(len(inside)), inside, hw), params)
    text = (f"rtc's estimate of a 1 MiB AllReduce: {now.seconds * 1e6:,.0f} us over "
            f"{now.link} (busbw {now.busbw / 1e9:,.0f} GB/s)")
    if size == job.tp:
        return (text + f" vs {alt.seconds * 1e6:,.0f} us inside one island over {alt.link}",
                f"place each TP group inside one NVLink island (GPUs {compact(list(big))})")
    return (text + f"; tp {size} inside one island would take {alt.seconds * 1e6:,.0f} us "
            f"over {alt.link}",
            f"keep tp <= {len(big)} (the largest NVLink island: {compact(list(big))}) and put "
            f"the rest in dp or pp (e.g. tp {size} dp {job.dp * job.tp // size})"
            + (", or accept it with `policy tp-crosses-nvlink-island allow`"))


def _device_sets(topo: Topology, job):
    """RTC313: per server, a GPU set over several islands that one island would hold."""
    for p in job.placements:
        ids = list(p.device_ids)
        islands = server_islands(topo, p.server)
        touched = {_island_index(islands, d) for d in ids}
        if len(ids) < 2 or len(touched) < 2:
            continue
        fits = [isl for isl in islands if len(isl) >= len(ids)]
        if not fits:
            continue
        best = fits[0][:len(ids)]
        yield warning(SET_ISLANDS, f"job {job.name} uses GPUs {compact(ids)} of "
                      f"{p.server.name}, which lie in {len(touched)} NVLink islands; one "
                      f"island ({compact(list(fits[0]))}) holds {len(ids)} GPUs", p.span,
                      subject=f"job {job.name}, server {p.server.name}",
                      hint=f"use the GPUs of one island, e.g. devices {compact(list(best))}")


def _captured(topo: Topology):
    """RTC473: captured islands (restricted to the GPUs in use) differ from the preset's."""
    for s in topo.servers:
        inv = s.inventory_facts
        gt = getattr(inv, "gpu_topo", None) if inv is not None else None
        if gt is None:
            continue
        used = {d.device_id for d in s.devices}
        span = s.span_of("inventory")
        related = [Related(span.__class__.whole_file(gt.file), "nvidia-smi topo -m")]
        missing = sorted(used - set(gt.gpus))
        if missing:
            yield error(CAPTURED_ISLANDS, f"{s.name} uses GPU{'s' if len(missing) > 1 else ''} "
                        f"{compact(missing)}, which its nvidia-smi topo -m capture does not "
                        f"list (it shows GPUs {compact(gt.gpus)})", s.span_of("devices"),
                        subject=s.label, related=related,
                        hint="capture `nvidia-smi topo -m` on this server, or correct `devices`")
            continue
        want = _restricted(topo.preset.nvlink_islands, used)
        have = _restricted(gt.islands(), used)
        if want == have:
            yield from _without_nvlink(topo, s, gt, span, related)
        if want != have:
            yield error(CAPTURED_ISLANDS, f"{s.name}: nvidia-smi topo -m shows NVLink islands "
                        f"{_islands_text(have)}, but hardware {topo.preset.name} has "
                        f"{_islands_text(want)}; NCCL follows the captured links (PCIe / SYS "
                        "where NVLink is missing)", span, subject=s.label, related=related,
                        hint="repair or pass through the NVLink (`nvidia-smi nvlink --status`), "
                             "or describe the server as it is (hardware generic-gpu with "
                             "`nvlink_island` lines)")


def _without_nvlink(topo: Topology, s: Server, gt, span, related):
    """RTC479: the capture has fewer GPUs than the board and no NVLink, the preset has NVLink."""
    board = sum(len(i) for i in topo.preset.nvlink_islands)
    if max((len(i) for i in topo.preset.nvlink_islands), default=1) < 2 or len(gt.gpus) >= board \
            or any(len(i) > 1 for i in gt.islands()):
        return
    yield note(VM_WITHOUT_NVLINK, f"{s.name}: nvidia-smi topo -m shows {len(gt.gpus)} GPU"
               f"{'s' if len(gt.gpus) != 1 else ''} and no NVLink, where hardware "
               f"{topo.preset.name} has {board} GPUs joined by NVLink: a VM or a partial "
               "pass-through; jobs on one GPU are unaffected, but TP or EP across GPUs of this "
               "server would run over PCIe / SYS and a preflight measures PCIe, not NVLink",
               span, subject=s.label, related=related,
               hint="for TP across GPUs pass the whole NVLink domain through (all GPUs, Fabric "
                    "Manager), or describe the server as it is (hardware generic-gpu)")


def _restricted(islands, used: set[int]) -> list[tuple[int, ...]]:
    out = [tuple(d for d in isl if d in used) for isl in islands]
    return sorted(i for i in out if i)


def _islands_text(islands) -> str:
    if all(len(i) == 1 for i in islands):
        return "none (every GPU on its own)"
    return ", ".join(compact(list(i)) for i in islands)


#: The rules this module reports (collected by rtc.catalogue).
RULES = (TP_ISLANDS, SET_ISLANDS, CAPTURED_ISLANDS, VM_WITHOUT_NVLINK)
