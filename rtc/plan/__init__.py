"""The plan: what runs where. Built once from the lowered Topology and read by the checks
and the emitters alike.

* :mod:`.modes` - each job's launch mode (vLLM single / DP / Ray / --nnodes, rank-table
  launches, torchrun);
* :mod:`.ports` - every TCP port each host binds, with the defaults rtc moved;
* :mod:`.launch` - the processes each server starts for a job, with their argv and env;
* :mod:`.node_env` - each node's environment (``HCCL_IF_IP``, ``*_SOCKET_IFNAME``,
  ``ASCEND_RT_VISIBLE_DEVICES``, ...);
* :mod:`.disaggregation` - prefill/decode pairs;
* :mod:`.nixl` - prefill/decode on NVIDIA GPUs (NixlConnector side channel, proxy);
* :mod:`.preflight` - what each server's preflight checks and pings;
* :mod:`.versions` - the vLLM releases and the flags each has (data, with sources).
"""

from __future__ import annotations

from rtc.model.topology import Topology
from rtc.plan.disaggregation import PdPair, pd_pairs
from rtc.plan.launch import JobLaunch, plan_job, server_stems
from rtc.plan.nixl import plan_proxies
from rtc.plan.ports import PortPlan, plan_ports


class Plan:
    """The plan of a Topology: the port plan, the prefill/decode pairs, each (server, job)'s
    file stem, and the launch of every job that can be placed (``launches[job name]``; a
    job whose sizes do not fit its devices has none: the RTC3xx checks say why)."""

    ports: PortPlan
    pairs: list[PdPair]
    stems: dict
    launches: dict[str, JobLaunch]
    #: the proxy of each NIXL prefill/decode pair (:func:`rtc.plan.nixl.plan_proxies`)
    proxies: list

    def __init__(
            self, ports: PortPlan, pairs: list[PdPair] | None = None,
            stems: dict | None = None, launches: dict[str, JobLaunch] | None = None,
            proxies: list | None = None) -> None:
        self.ports = ports
        self.pairs = [] if pairs is None else pairs
        self.stems = {} if stems is None else stems
        self.launches = {} if launches is None else launches
        self.proxies = [] if proxies is None else proxies


def build_plan(topo: Topology) -> Plan:
    """Plan every job of ``topo``: ports first (they decide the Ray and master ports the
    launches use), then pairs and launches. Never raises for a bad description."""
    plan = Plan(plan_ports(topo), pd_pairs(topo), server_stems(topo))
    for job in topo.jobs:
        if not job.placements:
            continue
        try:
            plan.launches[job.name] = plan_job(topo, job, plan.ports, plan.pairs, plan.stems)
        except ValueError:
            continue   # a placement that cannot be made is reported by RTC3xx
    plan.proxies = plan_proxies(topo, plan.ports, plan.pairs, plan.launches)
    return plan


__all__ = ["Plan", "build_plan"]
