"""Ascend 950 (rank table 2.0) addresses: every die needs its UB EID, and RoCE device IPs
are needed between link units (HCCL rank_table_config_a5.md: ``rank_addr_list`` is
mandatory at every level and "each die must be configured separately").

* RTC221: a table with more than one device where a device has no ``eid``: its mesh
  (level 0) and super pod (level 1) entries would have no address.
* RTC211 (missing-device-ip, the 1.0 rule): a table whose servers are in different super
  pods (or in none) where a device has no ``device_ip``: the RoCE level (3) is how they
  reach each other.
"""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.checks.ranktable_rules import MISSING_DEVICE_IP, _tables
from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

MISSING_EID = rule("RTC221", "missing-eid", "error",
                   "An Ascend 950 rank table has devices without their UB EIDs.", """
    What: hardware atlas-950-superpod / atlas-850 (rank table 2.0) with a table of more
    than one device where a server has no `eid`.
    Why: 2.0 ranks reach each other over UB by EID (one per die); without it the level 0
    (and super pod level 1) rank_addr_list is empty and HCCL cannot build the links.
    Example: two Atlas 950 nodes with `device_ip` but no `eid` line.
    Fix: add `eid base HEX` (the EID of die 0 of the first device, from `hccn_tool`) or
    list one EID per die.""")


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_a5:
        return
    folded = Folded("servers")
    for job, members in _tables(topo):
        what = f"job {job.name}" if job else "the cluster"
        if sum(len(devs) for _s, devs in members) > 1:
            for s, devs in members:
                if "eid" in s.incomplete or not any(d.eids is None for d in devs):
                    continue
                folded.add((MISSING_EID.code, s.span), error(
                    MISSING_EID, f"{what} has {sum(len(d) for _s, d in members)} ranks but "
                    f"{s.name} has no eid (UB EID per die)", s.span, subject=s.label,
                    hint="add `eid base HEX` (die 0 of the first device; from `hccn_tool`) "
                         "or one EID per die"), s.name)
        units = {("pod", s.super_pod_id) if s.super_pod_id is not None else ("srv", s.name)
                 for s, _d in members}
        if len(units) < 2:
            continue
        for s, devs in members:
            if "device_ip" in s.incomplete or not any(d.device_ip is None for d in devs):
                continue
            folded.add((MISSING_DEVICE_IP.code, s.span_of("device_ip")), error(
                MISSING_DEVICE_IP, f"{what} spans {len(units)} super pods or servers "
                f"outside one but {s.name} has devices without device_ip (the RoCE level)",
                s.span_of("device_ip"), subject=s.label,
                hint="add `device_ip` (from `hccn_tool -i N -ip -g`)"), s.name)
    yield from folded.emit()


#: The rules this module reports (RTC211 is ranktable_rules').
RULES = (MISSING_EID,)
