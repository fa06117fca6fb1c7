"""Lower an existing rank table into the compiler's :class:`~rtc.model.topology.Topology`.

``rtc validate`` (:func:`rtc.api.validate_source`) runs the same structural checks as
``rtc compile`` (:mod:`rtc.checks`) on the servers and devices of a table. This module builds that Topology from a parsed,
schema-checked document and keeps, for every server, where its values sit in the JSON
file, so that findings point at JSON lines.

Which values are used
    ``server_id`` (the server's name too), ``host_ip``, each device's ``device_id``,
    ``device_ip`` (the first address of a comma list), ``super_device_id`` (1.2 and PD
    tables) and the super pod of each server (``super_pod_list`` in 1.2, ``super_pod_id``
    in PD tables). A value the schema already rejected, or that does not parse, is left
    out (``None``); it has been reported once and is not reported again as "missing".

Server order
    Servers are kept in rank order (by their lowest ``rank_id``; ``server_list`` order for
    ties and for servers without valid ranks), so the Topology numbers ranks the way the
    table does when the table follows rtc's rules. PD tables keep first-appearance order;
    the legacy "cloud" form is ordered by ``server_id`` as text, which is how HCCL numbers
    its ranks; the legacy "lab" form by rank.

    A server's place is a rank order only when the table gives it a usable rank: servers
    of PD tables (which have no ``rank_id``: vllm-ascend's connector indexes each side's
    list by position) and servers whose every ``rank_id`` was rejected or missing carry
    ``rank_id`` in :attr:`Server.incomplete <rtc.model.topology.Server.incomplete>`; a
    server whose ``server_id`` is missing, empty, not a string or rejected by the schema
    carries ``server_id`` there (it is named ``server_list[N]`` then). The server-order
    rule (``rtc explain server-id-order``) judges neither.

Hardware (when ``--hardware`` is not given)
    ============================  ====================================================
    table                         preset
    ============================  ====================================================
    version "1.2"                 ``atlas-800-a3`` (super pod)
    version "1.0", device ids     ``atlas-800t-a2``
    all <= 7
    version "1.0", a device id    ``atlas-800-a3`` in typical networking (no super
    above 7                       pods, rank table 1.0, device IPs between servers)
    PD table                      ``atlas-800-a3`` when any entry has a
                                  ``super_device_id``, else ``atlas-800t-a2``
    legacy group_list             ``atlas-800-910a`` (the form is documented for the
                                  Atlas training series only)
    ============================  ====================================================

    ``--hardware atlas-800-a3`` with a version "1.0" table also means typical networking.
    910A (``atlas-800-910a``) cannot be told from A2 by a 1.0 table; pass it to get the
    HCCS ring checks. ``generic`` takes its device count from the table (highest id + 1).

Spans
    Servers and their attributes get placeholder spans (line 0; the column numbers the
    server, the end column the attribute) so that lowering 65,536 ranks costs no lookups;
    :meth:`LoweredTable.resolve` turns each finding's placeholders into JSON positions
    afterwards, narrowing to the device named in the finding (``..., device 3``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Related, Span
from rtc.model.presets import MAX_GENERIC_DEVICES, Preset, presets
from rtc.model.topology import Device, Server, Topology

from .json_values import address, decimal, is_address, parse_address, plain_decimal  # noqa: F401
from .jsonload import SourceMap
from .raw_servers import NO_IP, RawServer, ServerOrigin

__all__ = ["LoweredTable", "ServerOrigin", "choose_preset", "lower_table", "LOWERED_FORMS",
           "decimal", "address", "parse_address", "is_address", "max_device_id"]

#: Forms that lower into a Topology (topology files do not; 2.0 tables by
#: :mod:`rtc.tables.lower_v2`).
LOWERED_FORMS = ("hccl-v1.0", "hccl-v1.2", "pd-ranktable", "hccl-legacy-cloud", "hccl-legacy-lab",
                 "hccl-v2.0")

# Attributes a check may ask a server for (Server.span_of); index + 1 is the placeholder's
# end column. "server" is Server.span itself.
_ATTRS = ("server", "name", "server_id", "host", "devices", "device_ip", "gateway", "prefix",
          "super_pod", "super_device_id", "inventory", "nic", "visible_devices", "eid",
          "net_instance", "container_ip", "backup")
_ATTR_CODE = {a: n + 1 for n, a in enumerate(_ATTRS)}
# Device-level attributes: the key inside a device object they stand for.
_DEVICE_KEY = {"device_ip": "device_ip", "gateway": "device_ip", "prefix": "device_ip",
               "super_device_id": "super_device_id", "devices": "device_id",
               "inventory": "device_id", "eid": "eid"}
_NONE: frozenset = frozenset()
_DEVICE_IN_TEXT = re.compile(r"\bdevice (\d+)\b")
_DEVICE_ID_IN_TEXT = re.compile(r"\bdevice ids? (\d+)\b")


def max_device_id(doc, form: str) -> int:
    """The highest device id in the table (-1 when none)."""
    best = -1
    for _, dev, _ in _iter_devices(doc, form):
        v = decimal(dev.get("device_id"))
        if v is not None and v > best:
            best = v
    return best


def _iter_devices(doc, form):
    """(server-ish key, device dict, path) for every device entry of a lowered form."""
    if not isinstance(doc, dict):
        return
    if form in ("hccl-v1.0", "hccl-v1.2"):
        sl = doc.get("server_list")
        if not isinstance(sl, list):
            return
        for i, s in enumerate(sl):
            if isinstance(s, dict) and isinstance(s.get("device"), list):
                for j, d in enumerate(s["device"]):
                    if isinstance(d, dict):
                        yield i, d, ("server_list", i, "device", j)
    elif form == "pd-ranktable":
        for key in ("prefill_device_list", "decode_device_list"):
            lst = doc.get(key)
            if isinstance(lst, list):
                for k, d in enumerate(lst):
                    if isinstance(d, dict):
                        yield d.get("server_id"), d, (key, k)
    elif form in ("hccl-legacy-cloud", "hccl-legacy-lab"):
        groups = doc.get("group_list")
        if not isinstance(groups, list):
            return
        for g, grp in enumerate(groups):
            insts = grp.get("instance_list") if isinstance(grp, dict) else None
            if not isinstance(insts, list):
                continue
            for k, inst in enumerate(insts):
                devs = inst.get("devices") if isinstance(inst, dict) else None
                if isinstance(devs, list):
                    for j, d in enumerate(devs):
                        if isinstance(d, dict):
                            yield inst.get("server_id"), d, ("group_list", g, "instance_list", k,
                                                             "devices", j)


# --------------------------------------------------------------------------- hardware

def _a3_typical(p: Preset) -> Preset:
    return p._replace(ranktable_version="1.0", super_pod=False,
                               device_ip_required_multi_server=True,
                               description=p.description + " (typical networking, rank table 1.0)")


def choose_preset(doc, form: str, hardware: str | None = None, *,
                  top: int | None = None) -> tuple[Preset, str]:
    """The hardware preset to check a table against, and how it was chosen (see the module
    docstring). ``hardware`` must be a known preset name (the CLI checks it); ``top`` is
    the highest device id when the caller knows it already."""
    table = presets()
    if top is None:
        top = max_device_id(doc, form)
    if hardware is not None:
        p = table[hardware]
        if p.devices_per_server == 0:
            # as many devices as the highest id needs, within what the language allows for
            # generic hardware (higher ids are then RTC205, not a preset of 10**10 devices)
            p = p.with_devices(min(max(top + 1, 1), MAX_GENERIC_DEVICES))
        if p.super_pod and form == "hccl-v1.0":
            p = _a3_typical(p)
        return p, f"{hardware} (--hardware)"
    if form == "hccl-v1.2":
        return table["atlas-800-a3"], 'atlas-800-a3 (inferred: version "1.2" is the A3 super pod table)'
    if form == "pd-ranktable":
        a3 = any("super_device_id" in d for _, d, _ in _iter_devices(doc, form))
        if a3:
            return table["atlas-800-a3"], "atlas-800-a3 (inferred: the PD table has super_device_id)"
        return table["atlas-800t-a2"], "atlas-800t-a2 (inferred: the PD table has no super_device_id)"
    if form in ("hccl-legacy-cloud", "hccl-legacy-lab"):
        return table["atlas-800-910a"], ("atlas-800-910a (inferred: the group_list form is for the "
                                         "Atlas training series)")
    if top > 7:
        above = ids_above_seven(doc, form)
        if _lone_typo(doc, form, above):
            server, did, _ = above[0]
            return table["atlas-800t-a2"], (
                f'atlas-800t-a2 (inferred: version "1.0"; device id {did} on server {server} is '
                f'the only id above 7 and every other server has ids 0..7, so it reads as a typo)')
        shown = ", ".join(f"{did} on {server}" for server, did, _ in above[:3])
        more = f" and {len(above) - 3} more" if len(above) > 3 else ""
        return _a3_typical(table["atlas-800-a3"]), (
            f'atlas-800-a3 in typical networking (inferred: version "1.0" with device ids above 7: '
            f'{shown}{more})')
    return table["atlas-800t-a2"], 'atlas-800t-a2 (inferred: version "1.0" with device ids 0..7)'


def ids_above_seven(doc, form: str) -> list[tuple[str, int, tuple]]:
    """(server_id, device id, JSON path of the device) for every device id above 7 of a
    version 1.0 / 1.2 table, in table order (the evidence for A3 hardware, 16 dies)."""
    out = []
    for i, d, path in _iter_devices(doc, form):
        v = decimal(d.get("device_id"))
        if v is not None and v > 7:
            sid = doc["server_list"][i].get("server_id") if form.startswith("hccl-v1") else i
            out.append((str(sid) if sid is not None else f"server_list[{i}]", v,
                        path + ("device_id",)))
    return out


def _lone_typo(doc, form: str, above: list) -> bool:
    """True when one device id above 7 is the whole evidence for A3: a single such id, on a
    server of at most 8 devices, and at least one other server (all of whose ids are 0..7).
    An experienced user reads that as a mistyped A2 id (RTC205 then names it), not as
    16-die servers."""
    if len(above) != 1 or not form.startswith("hccl-v1"):
        return False
    sl = doc.get("server_list")
    if not isinstance(sl, list) or len(sl) < 2:
        return False
    index = above[0][2][1]
    devs = sl[index].get("device") if isinstance(sl[index], dict) else None
    return isinstance(devs, list) and len(devs) <= 8


# --------------------------------------------------------------------------- origins

@dataclass
class LoweredTable:
    """A table lowered to a Topology, with the map from placeholder spans to JSON spans."""

    topology: Topology
    origins: list[ServerOrigin]
    source_map: SourceMap
    preset_reason: str = ""

    @property
    def filename(self) -> str:
        return self.source_map.filename

    def placeholder(self, server_index: int, attr: str) -> Span:
        return Span(self.filename, 0, server_index + 1, 0, _ATTR_CODE[attr])

    def is_placeholder(self, span: Span | None) -> bool:
        return span is not None and span.line == 0 and span.file == self.filename

    def _locate(self, path, key: bool = False) -> Span:
        if path is None:
            return Span.whole_file(self.filename)
        return self.source_map.locate_nearest(path, key=key)

    def resolve_span(self, span: Span | None, text: str | None = None,
                     message: str = "") -> Span | None:
        """The JSON span for ``span`` when it is a placeholder (else ``span`` unchanged);
        ``text`` (a subject or related message) may name ``device N``; for ``devices``
        without a device list key (2.0 tables), ``message`` naming ``device id N`` puts it
        at that rank's device_id."""
        if not self.is_placeholder(span):
            return span
        idx = span.column - 1
        if not (0 <= idx < len(self.origins)) or not (1 <= span.end_column <= len(_ATTRS)):
            return Span.whole_file(self.filename)
        o = self.origins[idx]
        attr = _ATTRS[span.end_column - 1]
        dev_key = _DEVICE_KEY.get(attr)
        m = _DEVICE_IN_TEXT.search(text or "")
        if dev_key is not None and m and (int(m.group(1)), dev_key) in o.subpaths:
            return self._locate(o.subpaths[(int(m.group(1)), dev_key)])
        if dev_key is not None and m:
            hit = o.device_path(int(m.group(1)))
            if hit is not None:
                path, d = hit
                if dev_key in d:
                    return self._locate(path + (dev_key,))
                return self._locate(path)
        if attr == "devices":
            if o.device_key:
                return self._locate(o.device_key, key=True)
            m = _DEVICE_ID_IN_TEXT.search(message)
            hit = o.device_path(int(m.group(1))) if m else None
            return self._locate(hit[0] + ("device_id",) if hit else o.anchor())
        if dev_key is not None and attr != "inventory":
            missing = o.first_missing.get(dev_key)
            if missing is not None:
                return self._locate(missing)
            for did, path, d in o.devices:
                if dev_key in d:
                    return self._locate(path + (dev_key,))
                if (did, dev_key) in o.subpaths:
                    return self._locate(o.subpaths[(did, dev_key)])
        if attr == "host" and o.host is not None:
            return self._locate(o.host)
        if attr == "super_pod" and o.pod is not None:
            return self._locate(o.pod)
        if attr == "container_ip" and o.container is not None:
            return self._locate(o.container)
        if attr == "backup" and o.backup is not None:
            return self._locate(o.backup)
        return self._locate(o.anchor())

    def _related_text(self, r: Related, message: str) -> str:
        """The related location's own words, or, when they name no device, the device the
        main message names next to that server ("repeats node_0 device 1")."""
        if _DEVICE_IN_TEXT.search(r.message) or not self.is_placeholder(r.span):
            return r.message
        idx = r.span.column - 1
        if 0 <= idx < len(self.topology.servers):
            name = self.topology.servers[idx].name
            m = re.search(re.escape(name) + r" device (\d+)\b", message)
            if m:
                return f"device {m.group(1)}"
        return r.message

    def missing_ip_reported(self, server_name: str) -> bool:
        """True when every device of the server without an address had one that was
        reported as invalid (so "no device_ip" would report it again)."""
        s = self.topology.server(server_name)
        return s is not None and "device_ip" not in s.spans.hidden

    def resolve(self, d: Diagnostic) -> Diagnostic:
        """``d`` with placeholder spans (its own and its related ones) replaced."""
        span = d.span
        related = d.related
        changed = False
        if self.is_placeholder(span):
            span = self.resolve_span(span, d.subject, d.message)
            changed = True
        if any(self.is_placeholder(r.span) for r in related):
            related = tuple(Related(self.resolve_span(r.span, self._related_text(r, d.message)),
                                    r.message) for r in related)
            changed = True
        if not changed:
            return d
        return Diagnostic(d.code, d.severity, d.message, span, d.hint, related, d.subject)


class _Spans(dict):
    """Server.spans for a lowered table: every attribute a check asks for gets a
    placeholder span, made on demand (65,536-rank tables need no span until a finding).

    ``"device_ip" in spans`` is False when a device of the server simply has no address,
    so the compile's missing-device-ip rule still fires (it skips servers whose address
    line failed to evaluate, which for a table means an address already reported)."""

    __slots__ = ("file", "idx", "hidden")

    def __init__(self, file: str, idx: int, hidden: frozenset):
        super().__init__()
        self.file = file
        self.idx = idx
        self.hidden = hidden

    def get(self, key, default=None):
        code = _ATTR_CODE.get(key)
        if code is None or key == "server":
            return default
        return Span(self.file, 0, self.idx + 1, 0, code)

    def __getitem__(self, key):
        got = self.get(key)
        if got is None:
            raise KeyError(key)
        return got

    def __contains__(self, key) -> bool:
        return key in _ATTR_CODE and key != "server" and key not in self.hidden

    def keys(self):
        return [a for a in _ATTRS if a in self]

    def __iter__(self):
        return iter(self.keys())

    def items(self):
        return [(a, self.get(a)) for a in self.keys()]

    def values(self):
        return [self.get(a) for a in self.keys()]

    def __len__(self) -> int:
        return len(self.keys())


# --------------------------------------------------------------------------- raw servers

_INF = float("inf")


def _add_device(rs: RawServer, d: dict, path: tuple, bad: frozenset, sdid: bool) -> int | None:
    """Append the device at ``path`` to ``rs``; returns its rank (None when unusable)."""
    did = plain_decimal(d.get("device_id"), path + ("device_id",), bad)
    if did is None:
        return None
    o = rs.origin
    if bad and path + ("device_ip",) in bad:
        ip = None  # reported by the schema
    else:
        value = d.get("device_ip")
        if value:
            ip = parse_address(value.split(",", 1)[0] if "," in value else value) \
                if type(value) is str else None  # a bad one is reported by RTC634
        else:
            ip = None
            if "device_ip" not in o.first_missing:
                o.first_missing["device_ip"] = path + (("device_ip",) if "device_ip" in d else ())
            rs.hidden = NO_IP
    sd = None
    if sdid and not (bad and path + ("super_device_id",) in bad):
        sd = decimal(d.get("super_device_id"))
    if sd is None and "super_device_id" not in o.first_missing:
        o.first_missing["super_device_id"] = path
    rs.devices.append(Device(did, ip, None, None, sd))
    o.devices.append((did, path, d))
    return plain_decimal(d.get("rank_id"), path + ("rank_id",), bad)


def _host(value, path: tuple, bad: frozenset):
    if path in bad:
        return None
    ip, state = address(value)
    return ip if state == "ok" else None


def _servers_v1(doc: dict, form: str, bad: frozenset) -> list[RawServer]:
    sl = doc.get("server_list")
    out: list[RawServer] = []
    if not isinstance(sl, list):
        return out
    pods: dict[str, tuple[str, tuple]] = {}
    if form == "hccl-v1.2" and isinstance(doc.get("super_pod_list"), list):
        for k, pod in enumerate(doc["super_pod_list"]):
            if not isinstance(pod, dict):
                continue
            pid = pod.get("super_pod_id")
            members = pod.get("server_list")
            if not isinstance(pid, str) or not pid or not isinstance(members, list):
                continue
            for m in members:
                sid = m.get("server_id") if isinstance(m, dict) else None
                if isinstance(sid, str):
                    pods.setdefault(sid, (pid, ("super_pod_list", k, "super_pod_id")))
    sdid = form == "hccl-v1.2"
    for i, s in enumerate(sl):
        if type(s) is not dict:
            continue
        sid = s.get("server_id") if isinstance(s.get("server_id"), str) else None
        o = ServerOrigin(server_id=("server_list", i, "server_id") if "server_id" in s else None,
                         obj=("server_list", i))
        rs = RawServer(sid, o)
        if not sid or ("server_list", i, "server_id") in bad:
            rs.incomplete = frozenset({"server_id"})
        if "host_ip" in s:
            o.host = ("server_list", i, "host_ip")
            rs.host = _host(s["host_ip"], o.host, bad)
        if "container_ip" in s:
            o.container = ("server_list", i, "container_ip")
            rs.container = _host(s["container_ip"], o.container, bad)
        devs = s.get("device")
        low = _INF
        if type(devs) is list:
            o.device_key = ("server_list", i, "device")
            for j, d in enumerate(devs):
                if type(d) is dict:
                    r = _add_device(rs, d, ("server_list", i, "device", j), bad, sdid)
                    if r is not None and r < low:
                        low = r
        if sid is not None and sid in pods:
            rs.pod, o.pod = pods[sid]
        if low == _INF:
            rs.incomplete |= {"rank_id"}
        rs.order = (low, i)
        out.append(rs)
    out.sort(key=lambda r: r.order)
    return out


def _servers_grouped(doc: dict, form: str, bad: frozenset) -> list[RawServer]:
    """PD and legacy forms: devices are grouped into servers by ``server_id``."""
    by_id: dict[str, RawServer] = {}
    order: list[RawServer] = []
    sdid = form == "pd-ranktable"
    for n, (sid, d, path) in enumerate(_iter_devices(doc, form)):
        if not isinstance(sid, str):
            continue
        rs = by_id.get(sid)
        if rs is None:
            if form == "pd-ranktable":
                sid_path = path + ("server_id",)
            else:
                sid_path = path[:-2] + ("server_id",)
            rs = by_id[sid] = RawServer(sid, ServerOrigin(server_id=sid_path))
            rs.order = (_INF, n)
            order.append(rs)
        r = _add_device(rs, d, path, bad, sdid)
        if form == "hccl-legacy-lab":
            inst_rank = path[:-2] + ("rank_id",)  # a missing one is RTC611's: left out
            r = plain_decimal(_get(doc, inst_rank), inst_rank, bad)
        if r is not None and r < rs.order[0]:
            rs.order = (r, rs.order[1])
        if form == "pd-ranktable" and rs.pod is None:
            pid = d.get("super_pod_id")
            if isinstance(pid, str) and pid and path + ("super_pod_id",) not in bad:
                rs.pod, rs.origin.pod = pid, path + ("super_pod_id",)
    for rs in order:
        if form == "pd-ranktable" or rs.order[0] == _INF:
            rs.incomplete = frozenset({"rank_id"})  # PD tables have no rank_id
    if form == "hccl-legacy-cloud":
        order.sort(key=lambda r: r.server_id)
    elif form == "hccl-legacy-lab":
        order.sort(key=lambda r: r.order)
    return order


def _get(doc, path):
    """The value at ``path``, or None when a key or index on the way is missing or a node
    is not a container (a schema-invalid table: the schema reports it)."""
    node = doc
    for p in path:
        if isinstance(node, dict) and isinstance(p, str):
            node = node.get(p)
        elif isinstance(node, list) and type(p) is int and -len(node) <= p < len(node):
            node = node[p]
        else:
            return None
    return node


# --------------------------------------------------------------------------- lowering

def lower_table(doc, form: str, source_map: SourceMap, *, hardware: str | None = None,
                bad_paths: frozenset = frozenset(), name: str = "table") -> LoweredTable | None:
    """Lower a parsed table of one of :data:`LOWERED_FORMS`; None for other forms or when
    the document is not an object. ``bad_paths`` are JSON paths the schema rejected
    (their values are not used)."""
    if form not in LOWERED_FORMS or not isinstance(doc, dict):
        return None
    if form == "hccl-v2.0":
        from .lower_v2 import preset_v2, servers_v2

        preset, reason = preset_v2(doc, hardware)
        raw = servers_v2(doc, bad_paths, preset)
    else:
        if form in ("hccl-v1.0", "hccl-v1.2"):
            raw = _servers_v1(doc, form, bad_paths)
        else:
            raw = _servers_grouped(doc, form, bad_paths)
        top = max((dv.device_id for rs in raw for dv in rs.devices), default=-1)
        preset, reason = choose_preset(doc, form, hardware, top=top)
    filename = source_map.filename
    topo = Topology(name=name, preset=preset, servers=[], jobs=[], span=Span(filename, 1, 1),
                    origin="table")
    lt = LoweredTable(topo, [], source_map, reason)
    used_names: set[str] = set()
    for rs in raw:
        idx = len(topo.servers)
        o = rs.origin
        sid = rs.server_id
        if sid is None or sid == "":
            sid = f"server_list[{o.obj[1]}]" if o.obj else f"server #{idx + 1}"
        name_ = sid if sid not in used_names else f"{sid}@{_where(o, idx)}"
        used_names.add(name_)
        server = Server(name=name_, server_id=sid, index=idx,
                        span=Span(filename, 0, idx + 1, 0, 1), devices=rs.devices, host_ip=rs.host,
                        super_pod_id=rs.pod, spans=_Spans(filename, idx, rs.hidden),
                        incomplete=rs.incomplete, net_instances=rs.net_instances,
                        container_ip=rs.container, backup=rs.backup)
        topo.servers.append(server)
        lt.origins.append(o)
    return lt


def _where(o: ServerOrigin, idx: int) -> str:
    if o.obj is not None:
        return f"server_list[{o.obj[1]}]"
    return f"#{idx + 1}"
