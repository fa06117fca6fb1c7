"""Which HCCL Test runs measure the link classes the cost model uses on this cluster
(``calibrate.sh``, :mod:`rtc.emit.calibrate_script`; reference ``cost-model.md`` §5.6).

One AllReduce sweep (8 KB .. 1 GB, factor 2) per link class a job of the file uses, on
the fewest servers that make every AllReduce cross that class:

* the server link (HCCS mesh): all NPUs of one server (``-p N``);
* the A3 die pair (SIO): the two dies of one package;
* the A3 super pod (UB): one NPU on each of two servers of one super pod;
* RoCE: one NPU on each of two servers in different super pods (any two servers without
  pods).

Cross-server runs use one NPU per server, so the only link their AllReduce crosses is
the one measured (a run on all NPUs would be hierarchical: the in-server stages would be
fitted into the network's α and bandwidth); the parameters are per NPU port, as in
``links.toml``.

Each run names the ``rtc calibrate`` command that turns its output into a ``links``
block. The servers are the first ones of the jobs, in declaration order; a cross-server
run uses the same device on both (the first server's first NPU), named as the runtime
sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.errors import ParamError
from rtc.cost.links import hardware_of
from rtc.model.topology import Job, Server, Topology, container_ids


@dataclass(frozen=True)
class CalibrationRun:
    """One HCCL Test run: the link class it measures, the servers (hosts) it runs on,
    NPUs per server (``-p``), total ranks (``mpirun -n``), its output file name and the
    device ids the runtime sees on each server (``ASCEND_RT_VISIBLE_DEVICES``: container
    ids where the server has ``visible_devices``, else physical ids)."""

    link: str
    servers: tuple[Server, ...]
    per_server: int
    ranks: int
    output: str
    devices: tuple[int, ...]


def _servers(topo: Topology, jobs: list[Job]) -> list[Server]:
    seen = {p.server.name: p.server for j in jobs for p in j.placements}
    return sorted(seen.values(), key=lambda s: s.index)


def _run(topo: Topology, link: str, servers: list[Server],
         devices: tuple[int, ...]) -> CalibrationRun:
    n = len(devices)
    seen, _ = container_ids(servers[0], topo.preset)
    visible = tuple(seen.get(d, d) for d in devices)
    return CalibrationRun(link, tuple(servers), n, n * len(servers),
                          f"all_reduce-{link}-{n * len(servers)}p.txt", visible)


def plan_calibration(topo: Topology, jobs: list[Job]) -> list[CalibrationRun]:
    """The runs of :mod:`this module <rtc.plan.calibration>` for ``jobs`` (empty when
    they use no server with two NPUs, or on hardware the cost model has no link classes
    for). Raises nothing: a link class without servers to measure it on is left out."""
    servers = [s for s in _servers(topo, jobs) if s.host_ip is not None and len(s.devices) > 1]
    if not servers:
        return []
    try:
        hw = hardware_of(topo.preset)
    except ParamError:
        return []    # a chip the cost model has no link classes for (Ascend 950)
    first = servers[0]
    ids = tuple(d.device_id for d in first.devices)
    runs = [_run(topo, hw.server_link, [first], ids)]
    if hw.die_pair_link and hw.die_pairs and set(hw.die_pairs[0]) <= set(ids):
        runs.append(_run(topo, hw.die_pair_link, [first], tuple(hw.die_pairs[0])))
    same_pod = [s for s in servers[1:] if s.super_pod_id is not None
                and s.super_pod_id == first.super_pod_id]
    if hw.super_pod_link and same_pod:
        runs.append(_run(topo, hw.super_pod_link, [first, same_pod[0]], ids[:1]))
    other = [s for s in servers[1:]
             if not hw.super_pod_link or s.super_pod_id != first.super_pod_id]
    if other:
        runs.append(_run(topo, hw.nic, [first, other[0]], ids[:1]))
    return runs
