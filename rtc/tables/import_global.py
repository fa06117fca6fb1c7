"""``rtc import`` of the MindCluster / MindIE global rank table (``server_group_list``):
describe it in the rtc language as servers and one ``framework mindie`` job per group.

Servers are the table's ``server_id``\\ s in order of first appearance (a server in two
groups holds the devices of both), with ``host`` = ``server_ip``, their ``device_ip``\\ s,
``super_device_id``\\ s and ``super_pod`` (version 1.2), and ``visible_devices`` when the
``device_logical_id``\\ s are not the physical ids. Each group becomes a job on its servers'
devices (``servers`` when it uses all of them, else ``on S devices SET``), ``dp`` = its
servers and ``tp`` = NPUs per server (``tp`` = all its NPUs when the counts differ).

The table does not say which group is prefill and which decode: rtc writes prefill jobs
first, so group 1 is taken as ``role prefill`` and the others as ``role decode`` (a comment
says so; the table compiles back the same either way). The caller compiles the
description back and compares (:func:`rtc.tables.import_v2.first_difference`); a table
rtc would write otherwise (``deploy_server`` "1", logical ids that are no container
numbering, servers in an order no description gives) is refused with RTC659.
"""

from __future__ import annotations

import ipaddress
import os
import re

from rtc.diagnostics import Diagnostic, error
from rtc.rules import rule
from rtc.syntax.writer import Block, ClusterSource, device_set, label, render_source, word

from .importer import ip_plan_single, sdid_plan_single

IMPORT_GLOBAL = rule("RTC659", "import-global-not-expressible", "error",
                     "A global rank table that no rtc description compiles to.", """
    What: `rtc import` of a MindIE / MindCluster global rank table (server_group_list)
    whose layout rtc would write otherwise: deploy_server "1", device_logical_id values
    that are no container numbering, servers of two groups in orders that disagree, or
    device ids that are not numbers.
    Why: rtc only writes a description that compiles back to the same table; anything else
    would change the table behind your back.
    Example: a group whose device_logical_id runs 3, 2, 1, 0 on devices 0..3.
    Fix: keep editing this table by hand (rtc validate still checks it), or describe the
    cluster in rtc and let it write the table.""")

RULES = (IMPORT_GLOBAL,)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


def instances_of(doc: dict) -> list:
    """The instance groups: those with devices (MindIE Motor's coordinator "0" and
    controller "1" groups have servers without devices, or none)."""
    return [g for g in doc["server_group_list"]
            if any(s.get("device") for s in g.get("server_list") or ())]


def _servers(doc: dict) -> dict:
    """server_id -> {ip, devices: {id: (device_ip, sdid, logical)}, pod}, first seen first."""
    out: dict = {}
    pods = {s["server_id"]: p["super_pod_id"] for g in doc["server_group_list"]
            for p in g.get("super_pod_list", ()) for s in p["server_list"]}
    for g in instances_of(doc):
        for s in g["server_list"]:
            entry = out.setdefault(s["server_id"], {"ip": s.get("server_ip") or None,
                                                    "devices": {},
                                                    "pod": pods.get(s["server_id"])})
            for d in s["device"]:
                entry["devices"][int(d["device_id"])] = (d.get("device_ip") or None,
                                                         d.get("super_device_id"),
                                                         int(d["device_logical_id"]))
    return out


def _server_block(sid: str, s: dict, n: int, a3: bool) -> tuple[Block, str]:
    name = sid if _NAME.match(sid) else f"server{n}"
    attrs = [] if name == sid else [("server_id", word(sid))]
    if s["ip"]:
        attrs.append(("host", s["ip"]))
    ids = sorted(s["devices"])
    attrs.append(("devices", device_set(ids)))
    ips = [s["devices"][d][0] for d in ids]
    if all(ips):
        attrs.append(("device_ip", ip_plan_single([ipaddress.ip_address(i) for i in ips], ids)))
    if a3 and s["pod"] is not None:
        attrs.append(("super_pod", word(s["pod"])))
    sdids = [s["devices"][d][1] for d in ids]
    if a3 and all(x is not None for x in sdids):
        attrs.append(("super_device_id", sdid_plan_single([int(x) for x in sdids], ids)))
    by_logical = sorted(ids, key=lambda d: s["devices"][d][2])
    if [s["devices"][d][2] for d in by_logical] == list(range(len(ids))) and by_logical != ids:
        attrs.append(("visible_devices", ", ".join(str(d) for d in by_logical)))
    return Block("server", name, attrs), name


def _job_block(g: dict, names: dict, full: dict, first: bool) -> Block:
    attrs = [("role", "prefill" if first else "decode"), ("framework", "mindie")]
    used = [(names[s["server_id"]], [int(d["device_id"]) for d in s["device"]])
            for s in g["server_list"]]
    if all(sorted(ids) == full[n] for n, ids in used):
        attrs.append(("servers", ", ".join(n for n, _ids in used)))
    else:
        attrs += [("on", f"{n} devices {device_set(sorted(ids))}") for n, ids in used]
    counts = {len(ids) for _n, ids in used}
    if len(counts) == 1:
        if len(used) > 1:
            attrs.append(("dp", str(len(used))))
        attrs.append(("tp", str(counts.pop())))
    else:
        attrs.append(("tp", str(sum(len(ids) for _n, ids in used))))
    return Block("job", label(f"group{g['group_id']}"), attrs,
                 comment=None if not first else "the global table does not say which group "
                 "is prefill: rtc writes prefill groups first (group 1 prefill, the others "
                 "decode)")


def describe_global(doc: dict, filename: str, diags: list[Diagnostic], *,
                    hardware: str | None = None, cluster_name: str | None = None) -> str | None:
    """The description of a valid global table, or None after an RTC659 diagnostic (see the
    module docstring)."""
    try:
        servers = _servers(doc)
    except (KeyError, TypeError, ValueError) as exc:
        diags.append(error(IMPORT_GLOBAL, f"the global table cannot be described: {exc}", None,
                           hint="keep editing this table by hand"))
        return None
    a3 = doc.get("version") == "1.2"
    hw = hardware or ("atlas-800-a3" if a3 else "atlas-800t-a2")
    blocks, names, full = [], {}, {}
    for n, (sid, s) in enumerate(servers.items()):
        block, name = _server_block(sid, s, n, a3)
        blocks.append(block)
        names[sid], full[name] = name, sorted(s["devices"])
    groups = instances_of(doc)
    blocks += [_job_block(g, names, full, k == 0) for k, g in enumerate(groups)]
    stem = os.path.splitext(os.path.basename(filename))[0] or "cluster"
    src = ClusterSource(cluster_name or re.sub(r"[^A-Za-z0-9_.-]", "-", stem), hw,
                        blocks=blocks,
                        header=[f"Imported by `rtc import` from {os.path.basename(filename)} "
                                f"(a MindIE global rank table, {len(groups)} groups)."])
    return render_source(src)


def compare(doc: dict, built: dict | None) -> str | None:
    """Where the compiled-back global table differs from ``doc`` (``status`` aside)."""
    from .import_v2 import first_difference

    if built is None:
        return "the description has no prefill/decode pair"
    want = {k: v for k, v in doc.items() if k != "status"}
    got = {k: v for k, v in built.items() if k != "status"}
    return first_difference(want, got)
