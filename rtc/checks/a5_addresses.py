"""Ascend 950 (rank table 2.0) addresses: every die needs its UB EID, and RoCE device IPs
are needed between link units (HCCL rank_table_config_a5.md: ``rank_addr_list`` is
mandatory at every level and "each die must be configured separately").

* RTC221: a table with more than one device where a device has no ``eid``: its mesh
  (level 0) and super pod (level 1) entries would have no address (hardware whose EID
  levels have no ports, the Atlas 350 card, needs none).
* RTC224: two dies with the same EID (die EIDs and per-port EIDs).
* RTC230: two dies with the same UB-level IP address (``level_ip``).
* RTC212 (missing-super-pod-data, the A3 rule): an atlas-950-superpod node without
  ``super_pod`` (those nodes are always in one).
* RTC211 (missing-device-ip, the 1.0 rule): a table whose servers are in different super
  pods (or in none) where a device has no ``device_ip``: the RoCE level (3) is how they
  reach each other.
"""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.checks.ranktable_rules import MISSING_DEVICE_IP, MISSING_SUPER_POD, tables_of
from rtc.diagnostics import Related, error
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

DUPLICATE_EID = rule("RTC224", "duplicate-eid", "error",
                     "Two Ascend 950 dies have the same UB EID.", """
    What: the `eid` plans of two servers (or one list) give two dies the same EID.
    Why: UB addresses a die by its EID; HCCL links to whichever die answers, so two ranks
    share one address and collectives hang or mix data.
    Example: `eid base ...dfdf0000` on a5-node0 and `eid base ...dfdf0002` on a5-node1:
    node1's die 0 gets node0's device 1 die 0 EID.
    Fix: give each server the EID base of its own first die (`hccn_tool -i 0 -eid -g`);
    bases must be 2 x dies apart per server at least.""")


_UB_KEYS = frozenset({"eid", "port_eid", "level_ip"})


DUPLICATE_LEVEL_IP = rule("RTC230", "duplicate-level-ip", "error",
                          "Two Ascend 950 dies have the same address at the UB levels.", """
    What: the `level_ip` addresses (or, in a 2.0 table, the IPV4 / IPV6 entries of the
    levels below the RoCE one) give two dies the same address.
    Why: a rank_addr_list address names one die's ports; HCCL links to whichever die
    answers, so two ranks share an address and their connections mix.
    Example: `level_ip 1 172.16.0.{d}` on two servers: device 3 of both gets 172.16.0.3.
    Fix: make the template depend on the server (`172.16.{i}.{d}`) and on the die when
    each die has its own address (`172.16.{i}.{2*d}, 172.16.{i}.{2*d+1}`).""")


def _level_ips_of(d):
    """(die, address) of each ``level_ip`` address of a device (one die may carry one
    address at several layers)."""
    return ((die, ip) for _layer, die, ip in d.port_ips or ())


def uses_eids(preset) -> bool:
    """True when a level of the preset addresses dies by EID over some port (the Atlas 350
    card has none: no UB mesh, no super pod; MindCluster v2dot0 writes no EID for it)."""
    return any(lv.address == "eid" and (lv.ports or (lv.topo_type == "1DMESH" and
                                                     preset.mesh_ports))
               for lv in preset.levels)


def _eid_layers(preset, server) -> set:
    """The layers where ``server``'s dies need an address: EID levels with ports (the super
    pod level only for a server in one)."""
    return {lv.net_layer for lv in preset.levels
            if lv.address == "eid" and (lv.ports or (lv.topo_type == "1DMESH" and
                                                     preset.mesh_ports))
            and (lv.scope != "super_pod" or server.super_pod_id is not None)}


def has_ub_address(preset, server, d) -> bool:
    """True when device ``d`` has an address at every UB layer of ``server``: its die EIDs
    (``eid``, used at all of them), or per layer ``port_eid`` EIDs or ``level_ip``
    addresses (in a table: the EIDs or IP addresses listed there)."""
    if d.eids is not None:
        return True
    if d.port_eids is None and d.port_ips is None:
        return False
    have = {x[0] for x in d.port_eids or ()} | {x[0] for x in d.port_ips or ()}
    return _eid_layers(preset, server) <= have


def _missing_layers(preset, server, devs) -> str:
    """The UB layers (``"0, 1"``) where some of ``devs`` have no address."""
    need = sorted(_eid_layers(preset, server))
    have = [{x[0] for x in d.port_eids or ()} | {x[0] for x in d.port_ips or ()}
            for d in devs if d.eids is None]
    return ", ".join(str(n) for n in need if any(n not in h for h in have)) or \
        ", ".join(map(str, need))


def _eids_of(d):
    """(die, EID) of each die EID and per-port EID of a device (a port's die is the number
    before its ``/``); one EID may serve its die at several levels."""
    yield from ((die, eid) for die, eid in enumerate(d.eids or ()) if eid)
    for _layer, port, eid in d.port_eids or ():
        head = port.split("/", 1)[0]
        yield (int(head) if (head.isdigit() and len(head) <= 20) else port), eid


def _first_reuses(topo: Topology, values_of, found, attr: str, what: str, hint: str):
    """One finding (rule ``found``) per server: the first value ``values_of(device)``
    gives -- (die, value) pairs -- that another die already holds."""
    seen: dict = {}
    folded = Folded("servers")
    for s in topo.servers:
        clash = None
        for d in s.devices:
            for die, value in values_of(d):
                first = seen.setdefault(value, (s, d, die))
                if clash is None and (first[0] is not s or first[1] is not d or first[2] != die):
                    clash = (d, die, value, first)
        if clash is not None:
            d, die, value, (fs, fd, fdie) = clash
            folded.add((found.code, s.span_of(attr)), error(
                found, f"{s.name} device {d.device_id} die {die} has {what} {value}, "
                f"already die {fdie} of {fs.name} device {fd.device_id}",
                s.span_of(attr), subject=f"{s.label}, device {d.device_id}",
                related=[Related(fs.span_of(attr), f"{fs.name} device {fd.device_id}")],
                hint=hint), s.name)
    yield from folded.emit()


def _pods_required(topo: Topology):
    """RTC212 on a preset whose servers are always in a super pod (atlas-950-superpod)."""
    if not topo.preset.super_pod:
        return
    folded = Folded("servers")
    for s in topo.servers:
        if s.super_pod_id is None and "super_pod" not in s.incomplete:
            folded.add((MISSING_SUPER_POD.code, s.span), error(
                MISSING_SUPER_POD, f"{s.name} has no super_pod: {topo.preset.name} nodes are "
                "always in one (rank table 2.0 level 1)", s.span, subject=s.label,
                hint="add `super_pod ID` (`npu-smi info -t spod-info`)"), s.name)
    yield from folded.emit()


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_a5:
        return
    yield from _first_reuses(topo, _eids_of, DUPLICATE_EID, "eid", "EID",
                             "give each server the EID base of its own first die")
    yield from _first_reuses(topo, _level_ips_of, DUPLICATE_LEVEL_IP, "level_ip",
                             "UB-level address", "make the level_ip template depend on the "
                             "server (i) and the device")
    yield from _pods_required(topo)
    folded = Folded("servers")
    for job, members in tables_of(topo):
        what = f"job {job.name}" if job else "the cluster"
        if sum(len(devs) for _s, devs in members) > 1 and uses_eids(topo.preset):
            for s, devs in members:
                if s.incomplete & _UB_KEYS or all(has_ub_address(topo.preset, s, d)
                                                  for d in devs):
                    continue
                layers = _missing_layers(topo.preset, s, devs)
                one = layers.split(",")[0]
                folded.add((MISSING_EID.code, s.span), error(
                    MISSING_EID, f"{what} has {sum(len(d) for _s, d in members)} ranks but "
                    f"{s.name} has no UB address (eid, port_eid or level_ip) at layer "
                    f"{layers}: HCCL's rank_addr_list there would be empty", s.span,
                    subject=s.label,
                    hint="add `eid base HEX` (die 0 of the first device; from `hccn_tool`; "
                         f"used at every UB layer) or one EID per die, or `port_eid {one} HEX` "
                         f"/ `level_ip {one} ADDR` for each layer named"),
                    s.name)
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
RULES = (MISSING_EID, DUPLICATE_EID, DUPLICATE_LEVEL_IP)
