"""Lower a version 2.0 (Ascend 950) rank table into the compiler's servers, so that
``rtc validate`` runs the same model checks on it as ``rtc compile`` runs on a description
(RTC221 missing EID, RTC224 duplicate EID, RTC204 / RTC208 duplicate device ids and
addresses, RTC211, RTC212, ...), with the same rule ids.

A 2.0 table has no server list (HCCL ``rank_table_config_a5.md``): a server is the set of
ranks that share a level-0 ``net_instance_id`` (the topology-file domain, as
:mod:`rtc.tables.import_v2` reads it). Per rank (one Device):

* ``device_id`` (a JSON integer; a value the schema rejected is left out);
* the EIDs: at each level the ``EID`` entries are grouped by die (the ``die/`` prefix of
  their first port); a die with one entry at a level has that die EID (``Device.eids``,
  taken from the lowest level that has one per die), a die with several entries at a level
  lists per-port EIDs (``Device.port_eids``, one per port, MindCluster's physical EIDs);
* ``device_ip``: the first ``IPV4`` / ``IPV6`` address at a level whose preset address is
  ``device_ip`` (the RoCE level); IP addresses at the other levels (the host NIC form of
  the HCCL document's first example) are ``Device.port_ips``;
* the super pod: the ``net_instance_id`` at the preset's super pod layer;
* every level's ``net_instance_id`` (``Server.net_instances``).

A rank whose ``device_id`` is the first device of its level-0 instance again starts a
second server with that instance (two servers given one ``net_instance 0``), which the
model check RTC232 reports as the compile does; another repeated device stays in the
server (RTC204).

Servers are kept in rank order (by their lowest ``rank_id``). Hardware: ``--hardware``,
else ``atlas-950-superpod`` when a rank has a layer-1 level (a UB super pod), else
``atlas-350`` when no rank lists a level-0 address (MindCluster's standard-card form), else
``atlas-850`` (:func:`preset_v2`).
"""

from __future__ import annotations

from rtc.model.presets import Preset, presets
from rtc.model.topology import Device

from .json_values import decimal, parse_address
from .raw_servers import NO_IP, RawServer, ServerOrigin
from .semantic.v2_fields import address_problem

__all__ = ["preset_v2", "servers_v2"]

_INF = float("inf")


def preset_v2(doc: dict, hardware: str | None) -> tuple[Preset, str]:
    """The preset to check a 2.0 table against and how it was chosen."""
    if hardware is not None:
        return presets()[hardware], f"{hardware} (--hardware)"
    ranks = doc.get("rank_list") if isinstance(doc.get("rank_list"), list) else ()
    pods = any(isinstance(lv, dict) and lv.get("net_layer") == 1
               for r in ranks if isinstance(r, dict)
               for lv in (r.get("level_list") if isinstance(r.get("level_list"), list) else ()))
    if pods:
        return presets()["atlas-950-superpod"], ("atlas-950-superpod (inferred: version "
                                                 '"2.0" with a super pod level, net_layer 1)')
    if not any(isinstance(lv, dict) and lv.get("net_layer") == 0 and lv.get("rank_addr_list")
               for r in ranks if isinstance(r, dict)
               for lv in (r.get("level_list") if isinstance(r.get("level_list"), list) else ())):
        return presets()["atlas-350"], ('atlas-350 (inferred: version "2.0" without net_layer 1 '
                                        "and without level-0 addresses, the standard-card form; "
                                        "pass --hardware atlas-850 for Atlas 850 nodes)")
    return presets()["atlas-850"], 'atlas-850 (inferred: version "2.0" without net_layer 1)'


def _die(addr: dict, dies: int) -> int | None:
    """The die of an address: the die most of its ports are on (a port moved to another
    die's address is RTC670's, not another die EID), None when a port is no port of the
    NPU (RTC675) or the address is malformed (RTC671)."""
    if address_problem(addr.get("addr_type"), addr.get("addr")) is not None:
        return None
    ports = addr.get("ports")
    heads = [str(p).split("/", 1)[0] for p in ports] if isinstance(ports, list) else []
    if not heads:
        return 0
    if not all(h.isdigit() and len(h) < 4 and int(h) < dies for h in heads):
        return None
    return int(max(heads, key=heads.count))


def _levels(r: dict, rp: tuple, bad: frozenset) -> list:
    """(layer, net_instance_id, addresses, level path) of each usable level of a rank."""
    out = []
    levels = r.get("level_list")
    for n, lv in enumerate(levels if isinstance(levels, list) else ()):
        lp = rp + ("level_list", n)
        if not isinstance(lv, dict) or lp + ("net_layer",) in bad:
            continue
        layer = lv.get("net_layer")
        if not isinstance(layer, int) or isinstance(layer, bool):
            continue
        inst = lv.get("net_instance_id")
        addrs = lv.get("rank_addr_list")
        out.append((layer, inst if isinstance(inst, str) and lp + ("net_instance_id",)
                    not in bad else None, addrs if isinstance(addrs, list) else [], lp))
    return out


class _Addresses:
    """The EIDs and device IP of one rank, with the JSON path of the first of each."""

    def __init__(self, levels: list, ip_layers: set, bad: frozenset, dies: int):
        self.die_eids: dict[int, str] = {}
        self.port_eids: list[tuple[int, str, str]] = []
        self.port_ips: list[tuple[int, int, object]] = []
        self.ip = None
        self.eid_path = self.ip_path = None
        for layer, _inst, addrs, lp in sorted(levels, key=lambda x: x[0]):
            by_die: dict[int, list] = {}
            for m, a in enumerate(addrs):
                ap = lp + ("rank_addr_list", m, "addr")
                if not isinstance(a, dict) or ap in bad or not isinstance(a.get("addr"), str):
                    continue
                kind = a.get("addr_type")
                die = _die(a, dies)
                if die is None:
                    continue  # reported by RTC671 / RTC675
                if kind == "EID":
                    by_die.setdefault(die, []).append(a)
                    self.eid_path = self.eid_path or ap
                elif kind in ("IPV4", "IPV6") and layer in ip_layers:
                    if self.ip is None:
                        self.ip, self.ip_path = parse_address(a["addr"]), ap
                elif kind in ("IPV4", "IPV6"):
                    ports = a.get("ports") if isinstance(a.get("ports"), list) else []
                    self.port_ips.append((layer, die, parse_address(a["addr"])))
                    self.eid_path = self.eid_path or ap
            for die, found in by_die.items():
                if len(found) == 1:
                    self.die_eids.setdefault(die, found[0]["addr"].lower())
                    continue
                for a in found:
                    ports = a.get("ports") if isinstance(a.get("ports"), list) else []
                    self.port_eids += [(layer, str(p), a["addr"].lower()) for p in ports[:1]]

    def eids(self) -> tuple[str, ...] | None:
        """The die EIDs by die number ("" for a die without one), None when none."""
        if not self.die_eids:
            return None
        return tuple(self.die_eids.get(d, "") for d in range(max(self.die_eids) + 1))


def servers_v2(doc: dict, bad: frozenset, preset: Preset) -> list[RawServer]:
    """The servers of a parsed 2.0 table in rank order (see the module docstring)."""
    ranks = doc.get("rank_list")
    ip_layers = {lv.net_layer for lv in preset.levels if lv.address == "device_ip"}
    pod_layer = next((lv.net_layer for lv in preset.levels if lv.scope == "super_pod"), None)
    dies = max(preset.dies_per_device, 1)
    by_instance: dict[str, RawServer] = {}
    order: list[RawServer] = []
    for k, r in enumerate(ranks if isinstance(ranks, list) else ()):
        rp = ("rank_list", k)
        if not isinstance(r, dict) or rp + ("device_id",) in bad:
            continue
        did = decimal(r.get("device_id"))
        levels = _levels(r, rp, bad)
        inst, ip = next(((i, lp) for layer, i, _a, lp in levels if layer == 0), (None, None))
        if did is None or inst is None:
            continue  # the schema (or RTC650) reported it
        rs = by_instance.get(inst)
        sid = inst
        if rs is not None and rs.devices and rs.devices[0].device_id == did:
            # the instance's device list starts again: a second server (RTC232), named
            # by its first rank (a 2.0 table has no server_id to clash: no RTC203)
            rs, sid = None, f"{inst}@rank_list[{k}]"
        if rs is None:
            rs = by_instance[inst] = RawServer(
                sid, ServerOrigin(server_id=ip + ("net_instance_id",), obj=rp))
            rs.order = (_INF, k)
            order.append(rs)
        _add_rank(rs, r, rp, did, _Addresses(levels, ip_layers, bad, dies), bad)
        for layer, i, _a, lp in levels:
            if i is not None:
                rs.net_instances.setdefault(layer, i)
                if layer == pod_layer and rs.pod is None:
                    rs.pod, rs.origin.pod = i, lp + ("net_instance_id",)
    for rs in order:
        if rs.order[0] == _INF:
            rs.incomplete = frozenset({"rank_id"})
    order.sort(key=lambda rs: rs.order)
    return order


def _add_rank(rs: RawServer, r: dict, rp: tuple, did: int,
              addrs: _Addresses, bad: frozenset) -> None:
    o = rs.origin
    dev = Device(did, addrs.ip)
    dev.eids = addrs.eids()
    dev.port_eids = tuple(addrs.port_eids) or None
    dev.port_ips = tuple(addrs.port_ips) or None
    if addrs.eid_path is not None:
        o.subpaths[(did, "eid")] = addrs.eid_path
    elif "eid" not in o.first_missing:
        o.first_missing["eid"] = rp
    if addrs.ip_path is not None:
        o.subpaths[(did, "device_ip")] = addrs.ip_path
    elif "device_ip" not in o.first_missing:
        o.first_missing["device_ip"] = rp
        rs.hidden = NO_IP
    rs.devices.append(dev)
    o.devices.append((did, rp, r))
    replaced = r.get("replaced_local_id")
    if r.get("local_id") == 64 and rp + ("local_id",) not in bad and rs.backup is None \
            and type(replaced) is int and rp + ("replaced_local_id",) not in bad:
        rs.backup, o.backup = (did, replaced), rp + ("replaced_local_id",)  # RTC231
    rank = None if rp + ("rank_id",) in bad else decimal(r.get("rank_id"))
    if rank is not None and rank < rs.order[0]:
        rs.order = (rank, rs.order[1])
