"""A deployment to cost: a parallel :class:`Layout`, where every rank runs (sites), the
hardware, and the communication groups, built from an rtc Topology job or from a plain
grid of servers (for the layout search).

Ranks are placed by rtc's own placement (:mod:`rtc.parallel.placement`, vLLM's DP-aware
node placement, TP fastest), so the groups are the ones ``rtc groups`` shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rtc.cost.captured import job_islands, with_islands
from rtc.cost.errors import LayoutError
from rtc.cost.hccl_algo import DEFAULT_OPTIONS, HcclOptions, hccl_options
from rtc.cost.links import Hardware, Site, hardware_of
from rtc.cost.spans import job_sites
from rtc.cost.layout import Layout
from rtc.parallel.groups import ep_groups
from rtc.parallel.placement import JobPlacement, NodeInput, place

Groups = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Deployment:
    """A layout placed on hardware: ``sites[r]`` where global rank ``r`` runs (None: no
    device), ``groups`` by kind (``tp``, ``pcp``, ``pp``, ``dp``, ``ep``, ``moe`` = the
    DP·PCP·TP ranks of a PP stage that share MoE layers, ``dcp``), in global ranks."""

    layout: Layout
    hardware: Hardware
    sites: tuple[Site | None, ...]
    groups: Mapping[str, Groups]
    options: HcclOptions = DEFAULT_OPTIONS
    moe: bool = True
    name: str = ""
    problems: tuple[str, ...] = field(default_factory=tuple)
    #: group kind -> the spans of its groups, one per shape (filled by
    #: :func:`rtc.cost.schedule.unique_spans`; not part of the value).
    span_cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


def _dcp_groups(tp_groups: Groups, dcp: int) -> Groups:
    """DCP groups: consecutive slices of ``dcp`` ranks inside every TP group."""
    if dcp <= 1:
        return tuple((r,) for g in tp_groups for r in g)
    return tuple(tuple(g[i:i + dcp]) for g in tp_groups for i in range(0, len(g), dcp))


def _groups(placement: JobPlacement, layout: Layout, moe: bool) -> dict[str, Groups]:
    out = {dim: tuple(tuple(g) for g in placement.groups(dim)) for dim in placement.dims}
    if moe:
        out["moe"] = tuple(tuple(g) for g in ep_groups(placement.sizes))
    out["dcp"] = _dcp_groups(out.get("tp", ()), layout.dcp)
    return out


def job_hardware(topology, job, *, nic: str | None = None) -> Hardware:
    """The preset's :class:`Hardware` with ``job``'s env applied (``HCCL_INTER_HCCS_
    DISABLE``), the cluster's largest server as the device count, and the HCCS islands
    of the job's servers' ``npu-smi info -t topo`` captures where they split the job's
    NPUs otherwise than the preset (:func:`rtc.cost.captured.job_islands`)."""
    hw = hardware_of(topology.preset, env=job.env, nic=nic,
                     devices_per_server=max((len(s.devices) for s in topology.servers),
                                            default=0) or None)
    islands = job_islands(topology, job)
    return hw if islands is None else with_islands(hw, islands)


def deployment_of_job(topology, job, *, nic: str | None = None) -> Deployment:
    """The :class:`Deployment` of ``job`` in ``topology`` (a compiled rtc Topology): its
    sizes, rtc's placement of its ranks, the preset's hardware with the job's env
    (``HCCL_INTER_HCCS_DISABLE``, ``HCCL_ALGO``, ``HCCL_OP_EXPANSION_MODE``).

    Raises what :meth:`Topology.placement` raises for sizes that cannot be placed."""
    dcp_ok = job.dcp >= 1 and job.tp % job.dcp == 0
    layout = Layout(dp=job.dp, pp=job.pp, tp=job.tp, pcp=job.pcp,
                    dcp=job.dcp if dcp_ok else 1, expert_parallel=bool(job.expert_parallel))
    moe = job.model_kind != "dense"
    placement = topology.placement(job)
    hw = job_hardware(topology, job, nic=nic)
    problems = tuple(placement.problems)
    if not dcp_ok:
        problems += (f"dcp {job.dcp} does not divide tp {job.tp}; DCP is not costed",)
    if placement.unplaced:
        problems += (f"{len(placement.unplaced)} ranks have no device; they are left out",)
    return Deployment(layout=layout, hardware=hw, sites=job_sites(topology, job),
                      groups=_groups(placement, layout, moe), options=hccl_options(job.env),
                      moe=moe, name=job.name, problems=problems)


def grid_sites(placement: JobPlacement, hardware: Hardware,
               super_pod_servers: int | None = None) -> tuple[Site | None, ...]:
    """Sites of a placement on a grid of servers numbered 0.. in order; with super pods
    (A3), server ``i`` is in pod ``i // super_pod_servers`` (all in pod 0 when None)."""
    out: list[Site | None] = []
    for rank in range(placement.world):
        node = placement.rank_node[rank]
        device = placement.device_of(rank)
        if node < 0 or device is None:
            out.append(None)
            continue
        pod = None
        if hardware.super_pod_link:
            pod = str(node // super_pod_servers) if super_pod_servers else "0"
        out.append(Site(node, device, pod))
    return tuple(out)


def deployment_on_grid(layout: Layout, servers: int, npus_per_server: int,
                       hardware: Hardware, *, super_pod_servers: int | None = None,
                       options: HcclOptions = DEFAULT_OPTIONS, moe: bool = True) -> Deployment:
    """``layout`` placed by vLLM's placement on ``servers`` servers of
    ``npus_per_server`` NPUs each (device ids 0..npus-1), servers in order; super pods of
    ``super_pod_servers`` servers on A3. A pure function of its inputs."""
    if servers < 1 or npus_per_server < 1:
        raise LayoutError(f"need at least one server and one NPU per server, got "
                          f"{servers} x {npus_per_server}")
    world = layout.dp * layout.pp * layout.tp * layout.pcp
    if world > servers * npus_per_server:
        raise LayoutError(f"layout {layout.label} needs {world} NPUs but {servers} x "
                          f"{npus_per_server} = {servers * npus_per_server} are given")
    nodes = [NodeInput(f"server{i}", tuple(range(npus_per_server))) for i in range(servers)]
    placement = place(nodes, layout.sizes(moe), model_kind="moe" if moe else "dense")
    return Deployment(layout=layout, hardware=hardware,
                      sites=grid_sites(placement, hardware, super_pod_servers),
                      groups=_groups(placement, layout, moe), options=options, moe=moe,
                      name=layout.label, problems=tuple(placement.problems))
