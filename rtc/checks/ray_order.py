"""vLLM jobs launched over Ray whose rank table orders servers differently from vLLM's Ray
executor (RTC510).

vLLM's Ray executor ranks its workers by the key ``(not on the driver node, number of
workers on the node, node IP as text)`` (``sort_by_driver_then_worker_ip`` in
vllm/executor/ray_distributed_executor.py and vllm/v1/executor/ray_executor.py): the driver
(the head, where ``vllm serve`` runs) first, then nodes with fewer workers, then by IP
*as a string*, so ``10.0.0.10`` sorts before ``10.0.0.9``. rtc places ranks server by
server in declaration order; with three or more servers the two orders can differ.
"""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

RAY_ORDER = rule("RTC510", "ray-worker-order", "error",
                 "vLLM's Ray executor will order the job's servers differently from the rank table.", """
    What: a vLLM job run over Ray (`ray_port`, or one replica over several servers) on
    three or more servers, whose servers after the head are not declared in the order
    vLLM's Ray executor ranks them: by the number of the job's NPUs on the server, then by
    host IP compared as text (10.0.0.10 sorts before 10.0.0.9).
    Why: vLLM gives worker ranks in that order, while the rank table (and the plan's
    groups and preflight pings) follow the declaration; every rank after the head's would
    run on another server than the table says, and HCCL links or pipeline stages meet the
    wrong peers.
    Example: servers n1 (10.0.0.8), n2 (10.0.0.9), n3 (10.0.0.10) in one Ray job: vLLM
    ranks n1, n3, n2.
    Fix: declare the servers in vLLM's order, or give the hosts addresses whose text sorts
    like the declaration (e.g. the same number of digits in the last part).""")


def vllm_ray_order(nodes: list) -> list:
    """``nodes`` (``(server, npus on it)``, head first) in vLLM's Ray worker order."""
    head, rest = nodes[0], nodes[1:]
    return [head] + sorted(rest, key=lambda n: (n[1], str(n[0].host_ip)))


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        if job.framework != "vllm" or \
                job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue
        launch = plan.launches.get(job.name)
        if launch is None or launch.mode != "ray":
            continue   # no placement (reported by the placement checks), or not Ray
        pl = topo.placement(job)
        nodes = [(topo.server(n.name), n.device_count) for n in pl.nodes if n.device_count]
        if len(nodes) < 3 or any(s is None or s.host_ip is None for s, _ in nodes):
            continue
        ray = vllm_ray_order(nodes)
        if [s.name for s, _ in ray] == [s.name for s, _ in nodes]:
            continue
        first = next(k for k, (a, b) in enumerate(zip(nodes, ray)) if a[0] is not b[0])
        declared, actual = nodes[first][0], ray[first][0]
        order = ", ".join(f"{s.name} ({s.host_ip})" for s, _ in ray)
        yield error(RAY_ORDER, f"job {job.name}: vLLM's Ray executor ranks the servers "
                    f"{order}, but the rank table has {declared.name} where vLLM puts "
                    f"{actual.name} (servers after the head are ranked by their NPU count, "
                    "then by host IP as text)", job.span, subject=f"job {job.name}",
                    hint="declare the servers in vLLM's order, or give the hosts addresses "
                         "whose text sorts like the declaration (same number of digits)")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (RAY_ORDER,)
