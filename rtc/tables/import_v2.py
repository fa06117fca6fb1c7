"""``rtc import`` of a version 2.0 (Ascend 950) rank table: describe it in the rtc language.

A 2.0 table has no server list: rtc's servers are the topology-file domains, i.e. the
ranks sharing a level-0 ``net_instance_id`` (which must be contiguous in rank order, with
``local_id`` equal to ``device_id``, devices ascending; a backup rank, ``local_id`` 64, is
written as the server's ``backup DEVICE replaces LOCAL``). Per server it reads the UB EIDs of
each die (level 0, die from the ports' ``die/`` prefix; the super pod level must carry the
same ones), the super pod (the ``net_instance_id`` of layer 1) and the RoCE ``device_ip``
(the IPV4 / IPV6 address of a ``device_ip`` level). A ``net_instance`` line is written only
where the id differs from what rtc derives by default
(:func:`rtc.emit.hccl_v2.net_instance`). Ports, planes and net types come from the
hardware preset: the caller compiles the description back and compares
(:func:`first_difference`); a table laid out otherwise is refused (RTC662).
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, error
from rtc.model.presets import Preset
from rtc.syntax.writer import Block, ClusterSource, device_set, is_word, render_source, word

from .importer import IMPORT_SHAPE, ip_plan_single
from .lower_v2 import preset_v2

__all__ = ["describe_v2", "first_difference", "first_difference_at", "a5_preset_for",
           "unwritten_feature"]


@dataclass
class _Server:
    instance: str                   # level-0 net_instance_id
    devices: list[int] = field(default_factory=list)
    eids: list[list[str]] = field(default_factory=list)   # per device, per die
    ips: list = field(default_factory=list)               # per device (None when absent)
    pod: str | None = None
    layers: dict = field(default_factory=dict)            # layer -> net_instance_id
    backup: tuple | None = None                           # (device id, replaced local_id)


def a5_preset_for(doc: dict, hardware: str | None) -> Preset:
    """``--hardware`` when given, else the hardware ``rtc validate`` infers for the table
    (:func:`rtc.tables.lower_v2.preset_v2`: atlas-950-superpod with a layer-1 level,
    atlas-350 without level-0 addresses, else atlas-850), so both commands agree."""
    return preset_v2(doc, hardware)[0]


def _die(addr: dict) -> int:
    ports = addr.get("ports") or ["0/0"]
    head = str(ports[0]).split("/", 1)[0]
    return int(head) if (head.isdigit() and len(head) <= 20) else 0


def _eids(level: dict | None) -> list[str]:
    if level is None:
        return []
    found = sorted((_die(a), a["addr"]) for a in level.get("rank_addr_list", ())
                   if a.get("addr_type") == "EID")
    return [e for _d, e in found]


def _servers(doc: dict, preset: Preset) -> tuple[list[_Server] | None, str | None]:
    """The servers in rank order, or (None, why the layout cannot be expressed)."""
    ip_layers = {lv.net_layer for lv in preset.levels if lv.address == "device_ip"}
    out: list[_Server] = []
    by_instance: dict[str, _Server] = {}
    for r in sorted(doc["rank_list"], key=lambda r: r["rank_id"]):
        levels = {lv["net_layer"]: lv for lv in r["level_list"]}
        if 0 not in levels:
            return None, f"rank {r['rank_id']} has no level 0 (no topology-file domain)"
        inst = levels[0]["net_instance_id"]
        s = by_instance.get(inst)
        if s is None:
            s = by_instance[inst] = _Server(inst)
            out.append(s)
        elif out[-1] is not s:
            return None, f"the ranks of level-0 instance {inst!r} are not contiguous"
        if r["local_id"] == 64 and "replaced_local_id" in r and s.backup is None:
            s.backup = (r["device_id"], r["replaced_local_id"])  # the backup rank
        elif r["local_id"] != r["device_id"]:
            return None, (f"rank {r['rank_id']}: local_id / device_id not ascending and equal "
                          "within its server")
        if s.devices and r["device_id"] <= s.devices[-1]:
            return None, (f"rank {r['rank_id']}: local_id / device_id not ascending and equal "
                          "within its server")
        s.devices.append(r["device_id"])
        eids = _eids(levels[0]) or _eids(levels.get(1))
        if levels.get(1) is not None and _eids(levels[1]) and _eids(levels[1]) != eids:
            return None, f"rank {r['rank_id']}: the super pod level has other EIDs than level 0"
        s.eids.append(eids)
        ips = [a["addr"] for n in sorted(ip_layers) if n in levels
               for a in levels[n]["rank_addr_list"] if a.get("addr_type") in ("IPV4", "IPV6")]
        s.ips.append(ipaddress.ip_address(ips[0]) if ips else None)
        pod = levels[1]["net_instance_id"] if 1 in levels else None
        if s.layers and (pod != s.pod or {n: lv["net_instance_id"] for n, lv in levels.items()}
                         != s.layers):
            return None, f"the ranks of level-0 instance {inst!r} differ in their levels"
        s.pod = pod
        s.layers = {n: lv["net_instance_id"] for n, lv in levels.items()}
    return out, None


def _eid_plan(eids: list[str]) -> str | None:
    flat = [e for dev in eids for e in dev]
    if not flat:
        return None
    width = len(flat[0])
    values = [int(e, 16) for e in flat]
    if all(v == values[0] + j for j, v in enumerate(values)) and \
            all(f"{v:0{width}x}" == e for v, e in zip(values, flat)):
        return f"base {flat[0]}"
    return ", ".join(flat)


def _block(s: _Server, name: str, default0: str, preset: Preset) -> Block:
    attrs: list = [("devices", device_set(s.devices))]
    if any(ip is not None for ip in s.ips) and None not in s.ips:
        attrs.append(("device_ip", ip_plan_single(s.ips, s.devices)))
    plan = _eid_plan(s.eids)
    if plan is not None:
        attrs.append(("eid", plan))
    if s.pod is not None:
        attrs.append(("super_pod", word(s.pod)))
    if s.backup is not None:
        attrs.append(("backup", f"{s.backup[0]} replaces {s.backup[1]}"))
    defaults = {lv.net_layer: (default0 if lv.scope == "server" else s.pod
                               if lv.scope == "super_pod" else "CLUSTER")
                for lv in preset.levels}
    for layer, inst in sorted(s.layers.items()):
        if defaults.get(layer) != inst:
            attrs.append(("net_instance", f"{layer} {word(inst)}"))
    return Block("server", name, attrs)


#: The language's per-layer attributes rtc import does not write yet, by what a table shows.
_NOT_WRITTEN = {"ip": "IP addresses at a UB level (the language's `level_ip`)",
                "ports": "one EID per port (the language's `port_eid`)",
                "plane": "plane_ids other than the preset's (the language's `plane`)"}


def _plane_default(level, die: int) -> str:
    return str(die) if level.plane == "die" else level.plane


def unwritten_feature(doc: dict, preset: Preset) -> tuple[tuple, str] | None:
    """(JSON path, what) of the first rank_addr_list entry that needs ``level_ip``,
    ``port_eid`` or ``plane`` to be described, which rtc import does not write yet."""
    levels = {lv.net_layer: lv for lv in preset.levels}
    for k, r in enumerate(doc.get("rank_list", ())):
        seen: dict = {}  # die -> its EID at the first UB level listing it
        for n, lv in enumerate(r.get("level_list", ())):
            if getattr(levels.get(lv.get("net_layer")), "address", "") != "eid":
                continue
            for a in lv.get("rank_addr_list", ()):
                if a.get("addr_type") == "EID" and \
                        seen.setdefault(_die(a), a.get("addr")) != a.get("addr"):
                    # another EID for the die at another layer: per-port EIDs
                    return (("rank_list", k, "level_list", n, "rank_addr_list"),
                            _NOT_WRITTEN["ports"])
        for n, lv in enumerate(r.get("level_list", ())):
            level = levels.get(lv.get("net_layer"))
            if level is None:
                continue
            addrs = lv.get("rank_addr_list", ())
            for m, a in enumerate(addrs):
                path = ("rank_list", k, "level_list", n, "rank_addr_list", m)
                if level.address == "eid" and a.get("addr_type") in ("IPV4", "IPV6"):
                    return path + ("addr_type",), _NOT_WRITTEN["ip"]
                if a.get("plane_id") != _plane_default(level, _die(a)):
                    return path + ("plane_id",), _NOT_WRITTEN["plane"]
            dies = [_die(a) for a in addrs if a.get("addr_type") == "EID"]
            if len(dies) != len(set(dies)):
                return ("rank_list", k, "level_list", n, "rank_addr_list"), _NOT_WRITTEN["ports"]
    return None


def describe_v2(doc: dict, filename: str, diags: list[Diagnostic], *,
                hardware: str | None = None, cluster_name: str | None = None,
                locate=None) -> str | None:
    """The rtc description of a valid 2.0 table ``doc``, or None after adding RTC662 to
    ``diags`` when its layout cannot be written. ``locate(path)`` gives the span of a JSON
    path (None: the findings have no location)."""
    preset = a5_preset_for(doc, hardware)
    if not preset.is_a5:
        diags.append(error(IMPORT_SHAPE, f"hardware {preset.name} compiles to version "
                           f"{preset.ranktable_version} tables but this table is version 2.0",
                           None, hint="leave out --hardware, or pass an Ascend 950 preset"))
        return None
    unwritten = unwritten_feature(doc, preset)
    if unwritten is not None:
        path, what = unwritten
        diags.append(error(IMPORT_SHAPE, f"{path_text(path)}: the table uses {what}, which "
                           "rtc import does not write yet (rtc compile does): the "
                           "description would compile to another table",
                           locate(path) if locate else None,
                           hint="keep the .rtc file the table was compiled from, or edit the "
                                "table by hand (rtc validate still checks it)"))
        return None
    servers, why = _servers(doc, preset)
    if servers is None:
        diags.append(error(IMPORT_SHAPE, f"the 2.0 table cannot be described: {why}", None,
                           hint="rtc numbers ranks server by server, devices ascending"))
        return None
    blocks = []
    pod_count: dict = {}
    for k, s in enumerate(servers):
        n = pod_count.get(s.pod, 0)
        pod_count[s.pod] = n + 1
        name = s.instance if s.pod is None and is_word(s.instance) and \
            re.fullmatch(r"[A-Za-z0-9_.:-]{1,100}", s.instance) else f"node{k:0{len(str(len(servers) - 1))}d}"
        default0 = f"{s.pod}_{n}" if s.pod is not None else name
        blocks.append(_block(s, name, default0, preset))
    ndev = sum(len(s.devices) for s in servers)
    return render_source(ClusterSource(
        name=cluster_name or re.sub(r"[^A-Za-z0-9_-]+", "-", os.path.splitext(
            os.path.basename(filename))[0]).strip("-") or "imported",
        hardware=preset.name, blocks=blocks,
        header=[f"Imported by `rtc import` from {os.path.basename(filename)}: version 2.0, "
                f"{len(servers)} server{'s' if len(servers) != 1 else ''}, {ndev} devices.",
                "`rtc compile` of this file (no job: the whole cluster) gives the table back;",
                "the topology files are derived from the preset: compare them with the "
                "factory ones."]))


def path_text(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def first_difference_at(a, b, path: tuple = ()) -> tuple[tuple, str] | None:
    """(JSON path, what differs) where table ``a`` and the compiled ``b`` first differ,
    the message naming the table's value first, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in b:
                return path + (key,), "the table has it; the description compiles without it"
            if key not in a:
                return path, f"the description compiles to an extra {key!r}"
            got = first_difference_at(a[key], b[key], path + (key,))
            if got:
                return got
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path, f"the table has {len(a)} items; the description compiles to {len(b)}"
        for n, (x, y) in enumerate(zip(a, b)):
            got = first_difference_at(x, y, path + (n,))
            if got:
                return got
        return None
    if a == b and type(a) is type(b):
        return None
    return path, f"the table has {a!r}; the description compiles to {b!r}"


def first_difference(a, b, path: str = "") -> str | None:
    """Where two JSON values first differ (``rank_list[3].level_list[0]...``), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}".lstrip(".") + (" is missing" if key not in b else
                                                      " is extra")
            got = first_difference(a[key], b[key], f"{path}.{key}")
            if got:
                return got
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path.lstrip('.')} has {len(b)} items, not {len(a)}"
        for n, (x, y) in enumerate(zip(a, b)):
            got = first_difference(x, y, f"{path}[{n}]")
            if got:
                return got
        return None
    return None if a == b and type(a) is type(b) else f"{path.lstrip('.')}: {b!r}, not {a!r}"
