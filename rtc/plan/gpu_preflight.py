"""The preflight plan of NVIDIA GPU servers: per server, the GPUs the jobs use, the NVLink
islands the plan assumes for them, and the bus bandwidth rtc's cost model expects from
``all_reduce_perf`` over them (rendered as ``preflight-<server>.sh`` by
:mod:`rtc.emit.gpu_preflight_script`, judged by ``rtc preflight nccl``).

The expectation is :func:`rtc.cost.nccl.allreduce` of 1 GiB on those GPUs of one server
(set ``nominal``): NVLS / ring over NVLink inside an island, PCIe / SYS across islands.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.model.topology import Job, Server, Topology, container_ids

#: all_reduce_perf sweep: 8 bytes to 1 GiB, doubling (nccl-tests -b / -e / -f).
SWEEP = ("-b", "8", "-e", "1G", "-f", "2")
LARGEST = 1 << 30


@dataclass(frozen=True)
class GpuPreflight:
    """One GPU server's preflight: ``gpus`` physical ids in use (ascending),
    ``visible`` the CUDA_VISIBLE_DEVICES value for them, ``islands`` the plan's NVLink
    islands restricted to them, ``expected_busbw`` GB/s at 1 GiB and the bottleneck
    ``link`` class of that estimate, ``jobs`` the job names using the server."""

    server: Server
    gpus: tuple[int, ...]
    visible: str
    islands: tuple[tuple[int, ...], ...]
    expected_busbw: float
    link: str
    jobs: tuple[str, ...]


def plan_gpu_preflight(topo: Topology, jobs: list[Job]) -> list[GpuPreflight]:
    """The :class:`GpuPreflight` of every server some of ``jobs`` use (every server when
    ``jobs`` is empty), in server order."""
    from rtc.cost.links import Site, hardware_of
    from rtc.cost.nccl import allreduce
    from rtc.cost.params import load_params
    from rtc.cost.spans import group_span

    used: dict[str, tuple[set, list]] = {}
    for j in jobs:
        for p in j.placements:
            ids, names = used.setdefault(p.server.name, (set(), []))
            ids.update(p.device_ids)
            names.append(j.name)
    params, hw = load_params("nominal"), hardware_of(topo.preset)
    out = []
    for s in topo.servers:
        if jobs and s.name not in used:
            continue
        ids, names = used.get(s.name, ({d.device_id for d in s.devices}, []))
        gpus = tuple(sorted(ids))
        if not gpus:
            continue
        mapping, _ = container_ids(s, topo.preset)
        sites = [Site(0, d) for d in gpus]
        est = allreduce(LARGEST, group_span(range(len(sites)), sites, hw), params)
        islands = tuple(t for t in (tuple(d for d in isl if d in ids)
                                    for isl in topo.preset.nvlink_islands) if t)
        out.append(GpuPreflight(s, gpus, ",".join(str(mapping.get(d, d)) for d in gpus),
                                islands, round(est.measured_busbw / 1e9, 1), est.link,
                                tuple(dict.fromkeys(names))))
    return out
