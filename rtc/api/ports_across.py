"""Ports across several descriptions (``rtc check a.rtc b.rtc``): each file is planned on
its own, as its launch scripts will run, and the ports every job binds are then put on
the hosts they share (servers with one host IP, or one name when they have none), so that
two files' jobs on one host on the same HCCL window, API or DP RPC port are reported like
two jobs of one file (RTC440-RTC443, at the later value written).

A finding between two jobs of one file is left out here: the file's own check reports it.
"""

from __future__ import annotations

import copy

from rtc.checks import port_conflicts
from rtc.diagnostics import Diagnostic
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.ports import PortPlan


def _key(server) -> str:
    return str(server.host_ip) if server.host_ip is not None else server.name


def cross_file_ports(results: list) -> list[Diagnostic]:
    """The port findings between jobs of different files of ``results`` (compile results
    with a topology and a plan, in command-line order)."""
    done = [r for r in results if r.topology is not None and r.plan is not None]
    if len(done) < 2:
        return []
    merged = PortPlan()
    servers: dict[str, object] = {}
    for r in done:
        source = next(iter(r.sources), "?")
        by_name = {s.name: s for s in r.topology.servers}
        for name, claims in r.plan.ports.claims.items():
            s = by_name.get(name)
            key = _key(s) if s is not None else name
            if s is not None and key not in servers:
                servers[key] = copy.copy(s)
                servers[key].name = key
            for c in claims:
                job = f"{source}:{c.job}" if c.job else source
                j = r.topology.job(c.job) if c.job else None
                span = c.span or (j.span if j is not None else r.topology.span)
                merged.add(c._replace(server=key, job=job, span=span))
    first = done[0].topology
    topo = Topology(name="files", preset=first.preset, servers=list(servers.values()),
                    jobs=[], cann=first.cann, span=first.span)
    out = []
    for d in port_conflicts.check(topo, Plan(merged)):
        if d.code not in (port_conflicts.CONFLICT.code, port_conflicts.KV_IN_ADXL.code,
                          port_conflicts.SHARED_DP.code):
            continue
        other = d.related[0].span if d.related else None
        if d.span is not None and other is not None and other.file == d.span.file:
            continue   # both claims in one file: that file's check reports it
        out.append(d)
    return out


__all__ = ["cross_file_ports"]
