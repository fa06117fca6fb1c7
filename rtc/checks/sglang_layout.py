"""How SGLang lays a job over its servers (RTC350): the facts rtc's rank layout cannot
follow for ``framework sglang``.

SGLang gives each node of a server ``--nnodes N`` the ranks of
``engine.py _calculate_rank_ranges``: ``nnodes_per_tp_group = max(N // pp, 1)`` nodes
share every TP group, each holding ``tp / nnodes_per_tp_group`` of its ranks; with
``--dp-size`` > 1 (without ``--enable-dp-attention``) the data-parallel controller starts
every replica on every node, so each replica's TP group is split over the nodes too.
"""

from __future__ import annotations

from rtc.diagnostics import warning
from rtc.model.topology import Topology
from rtc.rules import rule

DP_OVER_NODES = rule("RTC350", "sglang-dp-over-nodes", "warning",
                     "An SGLang job with dp > 1 spans servers: SGLang splits every replica's TP group over them.", """
    What: `framework sglang` (or an SGLang launch) with `dp` > 1 over several servers
    (`--nnodes`).
    Why: SGLang starts each DP replica on every node with tp / nnodes of its TP ranks there
    (engine.py _calculate_rank_ranges), so every replica's TP all-reduce crosses the
    servers' network, and rtc's rank layout (whole replicas per server) is not what runs.
    Example: `dp 2`, `tp 8` on two 8-GPU servers: each replica runs TP 4 + 4 across both.
    Fix: one SGLang job (one server each) per replica behind `sglang_router`, or `pp` over
    the servers instead of `dp`, or `--enable-dp-attention` (DP inside the TP group).""")

RULES = (DP_OVER_NODES,)


def check(topo: Topology, plan):
    for job in topo.jobs:
        servers = [p for p in job.placements if p.device_ids]
        if job.framework == "sglang" and job.dp > 1 and len(servers) > 1:
            yield warning(DP_OVER_NODES, f"job {job.name}: SGLang with dp {job.dp} over "
                          f"{len(servers)} servers starts every replica on every server "
                          f"(tp {job.tp} split {len(servers)} ways), so each replica's TP "
                          "group crosses servers", job.span_of("dp"), subject=f"job {job.name}",
                          hint="run one SGLang job per replica behind sglang_router, or use "
                               "pp across the servers")
