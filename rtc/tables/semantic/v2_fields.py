"""Field-level rules of a version 2.0 (Ascend 950) rank table that the schema cannot say
(HCCL rank_table_config_a5.md; MindCluster writes EIDs as 32 hex digits):

* RTC671: an address that is not of its ``addr_type`` (an EID that is not 32 hex digits,
  an IPV4 entry whose address is not a valid IPv4 address, IPV6 likewise);
* RTC672: two ranks of one level-0 instance (one server) with the same ``local_id`` (its
  topology file's peers are keyed by local_id);
* RTC673: ``rank_id`` / ``local_id`` / ``device_id`` / ``replaced_local_id`` /
  ``net_layer`` written with a fraction (``1.0``), which JSON Schema's ``integer`` accepts
  but HCCL's integer fields do not;
* RTC652 (the backup rule): ``replaced_local_id`` on a rank whose local_id is not 64;
* RTC676 (warning): one port of a rank listed at two levels;
* with the hardware known (:func:`check_v2_hardware`): RTC674 a ``net_layer`` that is no
  level of the preset, RTC675 a port the preset's NPU does not have (die or port number
  out of range), RTC679 a ``local_id`` that is no NPU of a preset server (0..N-1, 64 for
  the backup rank).

The lowering (:mod:`rtc.tables.lower_v2`) skips the addresses and ports these rules
reject, so the model checks do not report them again under other ids.
"""

from __future__ import annotations

import ipaddress
import re

from rtc.diagnostics import Related, error, warning
from rtc.model.net_layers import NET_LAYER, layer_problem
from rtc.rules import rule

from ..jsonload import format_path
from ._context import Ctx
from .v2 import V2_BACKUP

V2_ADDRESS_FORM = rule("RTC671", "v2-address-form", "error",
                       "A 2.0 rank_addr_list address is not of its addr_type.", """
    What: an `addr` that does not match its `addr_type`: an EID that is not 32 hex digits
    (e.g. "xyz", or 34 digits), an IPV4 entry that is no valid IPv4 address (10.30.0.300),
    an IPV6 entry holding an IPv4 address.
    Why: HCCL parses the address by its addr_type; a malformed one fails the link set-up
    at run time (or, truncated, addresses another die).
    Fix: copy the EID from `hccn_tool -i N -eid -g` (32 hex digits) and the IP from
    `hccn_tool -i N -ip -g`, and set addr_type to match.""")
V2_LOCAL_ID_TWICE = rule("RTC672", "v2-local-id-twice", "error",
                         "Two ranks of one 2.0 server have the same local_id.", """
    What: two ranks with the same level-0 net_instance_id (one server) and one local_id.
    Why: the server's topology file names its NPUs by local_id (peer_list, edge_list);
    HCCL cannot tell which of the two ranks a mesh edge belongs to.
    Fix: give each rank of the server its own local_id (its physical device id; 64 for
    the one backup rank).""")
V2_FRACTION = rule("RTC673", "v2-integer-with-fraction", "error",
                   "A 2.0 integer field is written with a fraction (1.0).", """
    What: rank_id, local_id, device_id, replaced_local_id or net_layer written as 1.0.
    Why: JSON Schema counts 1.0 as an integer, but HCCL reads these fields as JSON
    integers (rank table 2.0 numbers are integers, not strings or floats).
    Fix: write the number without the fraction (1).""")
V2_PORT_LEVELS = rule("RTC676", "v2-port-two-levels", "warning",
                      "One port of a 2.0 rank is listed at two levels.", """
    What: a `die/port` listed in the rank_addr_list of two levels of one rank (e.g. 0/0
    at level 0, the node's mesh, and at level 1, the super pod's UB).
    Why: a port is one physical link: a mesh port goes to a peer NPU of the node, a
    super pod port to the UB switch, the RoCE port to the RoCE network (the preset's
    port layout, rtc/model/presets.toml); the same port at two levels gives HCCL two
    networks over one link, so one of them has no link there.
    Fix: list each port at the one level whose network it is cabled to (compare the
    factory topology file under /usr/local/Ascend/driver/topo/).""")
V2_PORT = rule("RTC675", "v2-unknown-port", "error",
               "A 2.0 address lists a port the NPU does not have.", """
    What: a `ports` entry `die/port` whose die or port number is outside the hardware's
    (atlas-950-superpod: dies 0..1, ports 0..8), or that is not of that form.
    Why: HCCL binds the address to that physical port; a port that does not exist leaves
    the address without links.
    Fix: use the ports of the server's topology file (`die/port`).""")

V2_LOCAL_ID_RANGE = rule("RTC679", "v2-local-id-range", "error",
                         "A 2.0 rank's local_id is no NPU of its server.", """
    What: a `local_id` outside 0..N-1 for servers of N NPUs (the hardware's count), other
    than 64, the backup rank's.
    Why: local_id is the NPU's number inside its server: the server's topology file
    (/usr/local/Ascend/driver/topo/, written at the factory) lists its NPUs as peer_list
    local_ids and its links by them (HCCL rank table doc for Atlas 350/950, "拓扑文件配置";
    HCOMM's examples give each rank the local_id of its device_id). A local_id the file
    does not list has no links, and HCCL cannot place the rank in the server's mesh.
    Example: rank 3 on an 8-NPU server with "local_id": 9 and "device_id": 3.
    Fix: set local_id to the NPU's number in the server (its device_id on MindCluster and
    HCOMM tables); 64 only for the one backup rank.""")

_INT_FIELDS = ("rank_id", "local_id", "device_id", "replaced_local_id")
_HEX32 = re.compile(r"[0-9A-Fa-f]{32}")
_PORT = re.compile(r"(\d{1,3})/(\d{1,3})")


def address_problem(kind, addr) -> str | None:
    """Why ``addr`` is not an address of ``addr_type`` ``kind``, or None (also None for
    values of the wrong JSON type or kinds the schema already rejects)."""
    if not isinstance(addr, str):
        return None
    if kind == "EID":
        return None if _HEX32.fullmatch(addr) else \
            f"is not an EID: {len(addr)} characters, an EID is 32 hex digits"
    if kind in ("IPV4", "IPV6"):
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            return f"is not an {kind} address"
        want = 4 if kind == "IPV4" else 6
        if ip.version != want:
            return f"is an IPv{ip.version} address, but addr_type is {kind}"
    return None


def _fraction(ctx: Ctx, path: tuple, value) -> None:
    if type(value) is float and path not in ctx.bad:
        ctx.add(error(V2_FRACTION, f"{format_path(path)}: {value!r} has a fraction; HCCL "
                      "reads a JSON integer here", ctx.span(path),
                      hint=f"write {int(value)}" if value.is_integer() else
                      "write a whole number"))


def check_v2_fields(ctx: Ctx) -> None:
    """RTC671, RTC672, RTC673 and RTC652 (replaced_local_id without local_id 64)."""
    ranks = ctx.doc.get("rank_list")
    # level-0 instance -> (its first device_id, local_id -> first rank path)
    locals_seen: dict[str, tuple] = {}
    reported = set()
    for k, r in enumerate(ranks if isinstance(ranks, list) else ()):
        if not isinstance(r, dict):
            continue
        rp = ("rank_list", k)
        for key in _INT_FIELDS:
            _fraction(ctx, rp + (key,), r.get(key))
        levels = r.get("level_list") if isinstance(r.get("level_list"), list) else []
        inst0 = None
        for n, lv in enumerate(levels):
            if isinstance(lv, dict):
                _fraction(ctx, rp + ("level_list", n, "net_layer"), lv.get("net_layer"))
                if lv.get("net_layer") == 0 and type(lv.get("net_layer")) is int:
                    inst0 = lv.get("net_instance_id")
                _addresses(ctx, rp + ("level_list", n), lv, reported)
        _port_levels(ctx, rp, levels)
        local = r.get("local_id")
        if "replaced_local_id" in r and type(local) is int and local != 64 and \
                rp + ("local_id",) not in ctx.bad:
            ctx.add(error(V2_BACKUP, f"{format_path(rp)}: replaced_local_id on a rank with "
                          f"local_id {local}; only the backup rank (local_id 64) replaces one",
                          ctx.span(rp + ("replaced_local_id",)),
                          hint="set local_id 64 on the backup rank, or drop replaced_local_id"))
        if isinstance(inst0, str) and type(local) is int and rp + ("local_id",) not in ctx.bad:
            did = r.get("device_id")
            group = locals_seen.get(inst0)
            if group is None or group[0] == did:
                # the instance's device list starts again: a second server (RTC232, as
                # rtc.tables.lower_v2 reads it)
                group = locals_seen[inst0] = (did, {})
            first = group[1].setdefault(local, rp)
            if first is not rp:
                ctx.add(error(V2_LOCAL_ID_TWICE, f"{format_path(rp + ('local_id',))}: local_id "
                              f"{local} is already {format_path(first)}'s in net instance "
                              f"\"{inst0}\" (one server)", ctx.span(rp + ("local_id",)),
                              related=[Related(ctx.span(first + ("local_id",)), "first")],
                              hint="give each rank of the server its own local_id (its "
                                   "physical device id)"))


def _port_levels(ctx: Ctx, rp: tuple, levels: list) -> None:
    """RTC676 for the first port of a rank listed at a second level."""
    owner: dict = {}
    for n, lv in enumerate(levels):
        addrs = lv.get("rank_addr_list") if isinstance(lv, dict) else None
        for m, a in enumerate(addrs if isinstance(addrs, list) else ()):
            plist = a.get("ports") if isinstance(a, dict) else None
            for q, port in enumerate(plist if isinstance(plist, list) else ()):
                if not isinstance(port, str):
                    continue
                first = owner.setdefault(port, (n, lv.get("net_layer")))
                if first[0] != n:
                    pp = rp + ("level_list", n, "rank_addr_list", m, "ports", q)
                    ctx.add(warning(V2_PORT_LEVELS, f"{format_path(pp)}: port {port} is also "
                                  f"listed at net_layer {first[1]} "
                                  f"({format_path(rp + ('level_list', first[0]))}) of this "
                                  "rank; a port is one link, cabled to one level's network",
                                  ctx.span(pp), hint="list the port at one level only"))
                    return


def _addresses(ctx: Ctx, lp: tuple, lv: dict, reported: set) -> None:
    addrs = lv.get("rank_addr_list")
    for m, a in enumerate(addrs if isinstance(addrs, list) else ()):
        ap = lp + ("rank_addr_list", m, "addr")
        if not isinstance(a, dict) or ap in ctx.bad or lp + ("rank_addr_list", m,
                                                             "addr_type") in ctx.bad:
            continue
        why = address_problem(a.get("addr_type"), a.get("addr"))
        if why is not None and len(reported) < 20:
            reported.add(ap)
            ctx.add(error(V2_ADDRESS_FORM, f"{format_path(ap)}: {a['addr']!r} {why}",
                          ctx.span(ap), hint="copy the address from `hccn_tool -i N -eid -g` "
                          "/ `-ip -g` and set addr_type to match"))


def port_problem(port, dies: int, ports: int) -> str | None:
    """Why ``port`` (a ``die/port`` string) is not a port of an NPU with ``dies`` dies of
    ``ports`` ports, or None."""
    if not isinstance(port, str):
        return None
    m = _PORT.fullmatch(port)
    if m is None:
        return "is not of the form die/port"
    die, num = int(m.group(1)), int(m.group(2))
    if die >= dies or num >= ports:
        return f"is not a port of the NPU (dies 0..{dies - 1}, ports 0..{ports - 1})"
    return None


def check_v2_hardware(ctx: Ctx, preset) -> None:
    """RTC674 (a net_layer that is no level of ``preset``) and RTC675 (a port the
    preset's NPU does not have); one finding each per table, naming the count."""
    ranks = ctx.doc.get("rank_list")
    layers: list = []
    ports: list = []
    _local_ids(ctx, ranks, preset)
    for k, r in enumerate(ranks if isinstance(ranks, list) else ()):
        levels = r.get("level_list") if isinstance(r, dict) else None
        for n, lv in enumerate(levels if isinstance(levels, list) else ()):
            lp = ("rank_list", k, "level_list", n)
            if not isinstance(lv, dict):
                continue
            layer = lv.get("net_layer")
            if type(layer) is int and lp + ("net_layer",) not in ctx.bad:
                why = layer_problem(preset, layer, "net_layer") or \
                    _portless(preset, layer, lv.get("rank_addr_list"))
                if why is not None:
                    layers.append((lp + ("net_layer",), why))
            if preset.ports_per_die:
                _ports_of(lv, lp, preset, ports, ctx.bad)
    for found, rule_, hint in ((layers, NET_LAYER, "use the hardware's levels (or pass the "
                                "right --hardware)"),
                               (ports, V2_PORT, "use the ports of the topology file")):
        if found:
            path, why = found[0]
            more = f" ({len(found) - 1} more like it)" if len(found) > 1 else ""
            ctx.add(error(rule_, f"{format_path(path)}: {why}{more}", ctx.span(path),
                          hint=hint))


def _local_ids(ctx: Ctx, ranks, preset) -> None:
    """RTC679 for the first rank whose local_id is no NPU of a ``preset`` server (0..N-1,
    or 64 for the backup rank), naming how many more there are."""
    n = preset.devices_per_server
    found = []
    for k, r in enumerate(ranks if isinstance(ranks, list) else ()):
        local = r.get("local_id") if isinstance(r, dict) else None
        path = ("rank_list", k, "local_id")
        if type(local) is int and path not in ctx.bad and not 0 <= local < n and \
                local != BACKUP_LOCAL_ID:
            found.append((path, local, r.get("device_id")))
    if not found:
        return
    path, local, did = found[0]
    more = f" ({len(found) - 1} more like it)" if len(found) > 1 else ""
    device = f" (its device_id is {did})" if type(did) is int else ""
    fix = f"set local_id {did}, the NPU's number in the server" if \
        type(did) is int and 0 <= did < n else "set the NPU's number in the server"
    ctx.add(error(V2_LOCAL_ID_RANGE, f"{format_path(path)}: local_id {local}{device} is no "
                  f"NPU of its server: the topology file of a {preset.name} server "
                  f"({n} NPUs) lists local_ids 0..{n - 1} (64 only for the backup "
                  f"rank){more}", ctx.span(path),
                  hint=fix))


#: The backup rank's local_id (HCOMM BACKUP_LOCAL_ID, the "64 + 1" spare).
BACKUP_LOCAL_ID = 64


def _portless(preset, layer: int, addrs) -> str | None:
    """Why addresses at ``layer`` do not fit ``preset``: a UB level without ports there
    (atlas-350 has no UB mesh: its table lists no EID), or None."""
    level = next((lv for lv in preset.levels if lv.net_layer == layer), None)
    if level is None or level.address != "eid" or level.ports or not addrs or \
            (level.topo_type == "1DMESH" and preset.mesh_ports):
        return None
    return (f"layer {layer} lists addresses, but {preset.name} has no UB ports at layer "
            f"{layer} (its table lists none there): the table is of other hardware, e.g. "
            "atlas-850")


def _ports_of(lv: dict, lp: tuple, preset, out: list, ctx_bad: frozenset) -> None:
    addrs = lv.get("rank_addr_list")
    for m, a in enumerate(addrs if isinstance(addrs, list) else ()):
        plist = a.get("ports") if isinstance(a, dict) else None
        for q, port in enumerate(plist if isinstance(plist, list) else ()):
            if lp + ("rank_addr_list", m, "ports", q) in ctx_bad:
                continue  # the schema reported it
            why = port_problem(port, preset.dies_per_device, preset.ports_per_die)
            if why is not None:
                out.append((lp + ("rank_addr_list", m, "ports", q), f"port {port!r} {why}"))


#: The rules this module reports (RTC674 is rtc.model.net_layers', RTC652 v2's).
RULES = (V2_ADDRESS_FORM, V2_LOCAL_ID_TWICE, V2_FRACTION, V2_PORT, V2_PORT_LEVELS,
         V2_LOCAL_ID_RANGE)
