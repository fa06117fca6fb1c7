"""Tensor-parallel (RTC310) and prefill-context-parallel (RTC311) groups that cross servers.

One diagnostic per job, with the number of crossing groups and the first example. The
default severity is warning; `policy cross-node-tp error|warn|allow` (cluster or job
block) or `--strict` change it.
"""

from __future__ import annotations

from rtc.checks._ranks import runs_by_server
from rtc.diagnostics import warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

CROSS_NODE_TP = rule("RTC310", "cross-node-tp", "warning",
                     "A tensor-parallel group has members on different servers.", """
    What: TP is larger than the NPUs the job has per server (or the placement splits a TP
    group), so some TP groups span servers.
    Why: tensor parallelism does an AllReduce (or AllGather/ReduceScatter) in every layer
    for every token. Inside a server it runs over HCCS; a TP group that crosses servers
    sends every one of those collectives over the inter-server RoCE network, which is far
    slower. Users report several-fold slower decoding (tokens/s) than the same model with
    TP inside one server. It works, so nothing fails: it is just slow.
    Example: `tp 16` over two Atlas 800T A2 servers with 8 NPUs each.
    Fix: keep TP <= NPUs per server and spread the rest across servers with DP, PP or
    expert parallel (e.g. `pp 2` `tp 8`, or `dp 2` `tp 8` with `expert_parallel on`). If it
    is intended, say so with `policy cross-node-tp allow`; `policy cross-node-tp error` or
    `--strict` make it an error.""")
CROSS_NODE_PCP = rule("RTC311", "cross-node-pcp", "warning",
                      "A prefill-context-parallel group has members on different servers.", """
    What: some PCP groups (ranks TP apart) span servers.
    Why: prefill context parallelism exchanges attention/KV blocks between the PCP ranks
    in every layer of every prefill; across servers this runs over RoCE instead of HCCS
    and prefill slows down accordingly.
    Example: `pcp 2` `tp 8` over two 8-NPU servers (each PCP pair is one NPU of each server).
    Fix: keep TP*PCP <= NPUs per server; or accept it with `policy cross-node-pcp allow`.""")

_RULES = (("tp", CROSS_NODE_TP, "TP"), ("pcp", CROSS_NODE_PCP, "PCP"))


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        if not job.placements or (job.tp == 1 and job.pcp == 1):
            continue
        if job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue   # an error about the unreadable attribute was reported already
        pl = topo.placement(job)
        if len(pl.nodes) < 2:
            continue
        per_server = min(n.device_count for n in pl.nodes)
        for dim, code, label in _RULES:
            size = getattr(job, dim)
            if size == 1:
                continue
            total, crossing, first = (_domain_crossing(topo, pl, dim) if _nvlink_domains(topo)
                                      else pl.crossing(dim))
            if not crossing:
                continue
            index = pl.group_index(dim, first[0])
            servers = [s for s in dict.fromkeys(pl.server_of(r) for r in first) if s is not None]
            if total == 1:
                which = f"its {label} group ({dim} {size}) spans"
            elif crossing == total:
                which = f"all {total} {label} groups ({dim} {size}) span"
            else:
                which = f"{crossing} of {total} {label} groups ({dim} {size}) span"
            domains = domain_text(topo, servers) if _nvlink_domains(topo) else ""
            msg = (f"job {job.name}: {which} servers{domains}; e.g. {label} group {index}: "
                   f"{runs_by_server(pl, first)}")
            if dim == "tp":
                msg, hint = _tp_cost(topo, job, per_server, msg)
                if domains:
                    hint = f"keep each TP group inside one NVLink domain; {hint}"
            else:
                hint = (f"keep tp x pcp ({job.tp * job.pcp}) within the {per_server} NPUs per "
                        "server, or accept it with `policy cross-node-pcp allow`")
            yield warning(code, msg, job.span_of(dim),
                          subject=f"job {job.name}, servers {', '.join(servers[:4])}"
                          + (" ..." if len(servers) > 4 else ""), hint=hint)


def _nvlink_domains(topo: Topology) -> bool:
    """True on NVIDIA hardware whose servers join NVLink domains (NVL72 trays: the
    preset's ``super_pod``; a server's ``super_pod ID`` names its domain)."""
    return topo.preset.is_gpu and topo.preset.super_pod


def domain_text(topo: Topology, servers) -> str:
    """`` in NVLink domains nvl72-a (tray-01), nvl72-b (tray-02)``: the domains of
    ``servers`` (names), each with its servers in the order given; ``(none)`` for servers
    without a ``super_pod``."""
    pods = {s.name: s.super_pod_id for s in topo.servers}
    by: dict = {}
    for name in servers:
        by.setdefault(pods.get(name), []).append(name)
    parts = [f"{d if d is not None else '(none)'} ({', '.join(n)})" for d, n in by.items()]
    return f" in NVLink domains {', '.join(parts)}"


def _domain_crossing(topo: Topology, pl, dim: str):
    """``pl.crossing(dim)`` where the servers of one NVLink domain count as one: a group
    crosses when its servers lie in several domains or one has no ``super_pod``."""
    pods = {s.name: s.super_pod_id for s in topo.servers}
    groups = pl.groups(dim)
    crossing = [g for g in groups
                if len(names := {pl.server_of(r) for r in g} - {None}) > 1
                and (len(ids := {pods.get(n) for n in names}) > 1 or None in ids)]
    return len(groups), len(crossing), crossing[0] if crossing else None


def _tp_cost(topo: Topology, job, per_server: int, msg: str) -> tuple[str, str]:
    """The message with what the crossing costs (rtc.cost: the job's decode
    communication per token against the best layout that keeps TP inside a server) and
    the hint naming that layout; the plain hint when the cost cannot be computed."""
    if topo.preset.is_gpu:     # NCCL's cost is RTC312's; the advisor models HCCL
        return msg, _tp_hint(job, per_server, gpu=True)
    from rtc.cost.jobs import cross_server_tp_cost
    from rtc.cost.units import human_time

    got = cross_server_tp_cost(topo, job, per_server)
    if got is None or isinstance(got, str):
        return msg + (f" ({got})" if got else ""), _tp_hint(job, per_server, topo=topo)
    alt = got.best.layout.label
    msg += (f"; about {got.ratio:.1f}x the communication time of keeping TP inside one "
            f"server ({human_time(got.current.per_token)} vs "
            f"{human_time(got.best.per_token)} per generated token with {alt}, both at "
            f"{got.current.generated:g} tokens per step; decode, {got.model}, preset "
            f"{got.params})")
    link = _crossing_link(got.current)
    return msg, (f"every layer's AllReduce now crosses {link} between servers; keep tp <= "
                 f"{per_server} (NPUs per server): rtc advise ranks {_words(got.best.layout)}"
                 f" best of those (`rtc advise --job {job.name}`); `policy cross-node-tp "
                 "allow` if intended")


def _crossing_link(step) -> str:
    """The link class the TP AllReduce's cross-server stages run over (``roce-200ge``,
    ``ub-a3`` inside an A3 super pod), from the costed step: the first stage that is not
    a ``server`` stage (a flat algorithm's only stage); "the network" if none."""
    for row in step.rows:
        if row.kind == "tp":
            for st in row.cost.stages:
                if not st.label.startswith("server"):
                    return st.link
    return "the network"


def _words(layout) -> str:
    """A layout in the job's attribute words: ``tp 8 with pp 2 and expert_parallel on``."""
    extra = [f"{k} {v}" for k, v in (("dp", layout.dp), ("pp", layout.pp)) if v > 1]
    if layout.expert_parallel:
        extra.append("expert_parallel on")
    return f"tp {layout.tp}" + (" with " + " and ".join(extra) if extra else "")


def _between_servers(topo: Topology, job) -> str:
    """What a TP group's AllReduce crosses between ``job``'s servers, instead of what:
    on Ascend 950 UB joins the servers of one super pod (rank table 2.0 level 1) and RoCE
    joins super pods; elsewhere RoCE replaces the HCCS inside a server."""
    if not topo.preset.is_a5:
        return "RoCE instead of HCCS"
    pods = {p.server.super_pod_id for p in job.placements}
    if len(pods) == 1 and None not in pods:
        return (f"the UB links between the servers of super pod {next(iter(pods))} instead "
                "of the UB mesh inside one server")
    return "RoCE between super pods (or servers outside one) instead of UB"


def _tp_hint(job, per_server: int, gpu: bool = False, topo: Topology | None = None) -> str:
    links, kind = ("the network instead of NVLink", "GPUs") if gpu else (
        _between_servers(topo, job) if topo is not None else "RoCE instead of HCCS", "NPUs")
    base = (f"every layer's AllReduce now crosses {links}; keep tp <= "
            f"{per_server} ({kind} per server) and spread DP/PP/EP across servers")
    if job.tp > per_server and job.tp % per_server == 0:
        k = job.tp // per_server
        ep = "" if job.model_kind == "dense" else " and expert_parallel on"
        base += (f", e.g. tp {per_server} with pp {job.pp * k}, or tp {per_server} with "
                 f"dp {job.dp * k}{ep}")
    return base + "; `policy cross-node-tp allow` if intended"

#: The rules this module reports (collected by rtc.catalogue).
RULES = (CROSS_NODE_TP, CROSS_NODE_PCP)
