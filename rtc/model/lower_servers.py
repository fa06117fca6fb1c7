"""Lowering pass: ``server`` and ``family`` declarations -> :class:`~rtc.model.topology.Server`.

Expands families (``node[0..1023]``: one server per index ``i``), takes the device ids
(``devices``, else the preset's), and computes per server and device: ``server_id``,
``host``, ``device_ip`` / ``gateway`` (a list, ``START step N``, a template in i, d and k),
``prefix``, ``super_pod`` and ``super_device_id``. A value that cannot be computed is an
error here (RTC206 wrong count, RTC207 a computed address or id that is invalid; template
errors keep their own rule) and the attribute is marked incomplete on that server. A
family reports each attribute's first failing member once, with the count of members it
hits. Addresses of plain IPv4 shapes are computed with integer arithmetic
(:meth:`rtc.syntax.values.Template.ipv4_addresses`); every other shape, and every failure,
takes the text path, which explains the problem.
"""

from __future__ import annotations

import ipaddress
import os

from rtc.diagnostics import Diagnostic, Span, error
from rtc.model.net_layers import NET_LAYER, layer_problem
from rtc.model.presets import Preset
from rtc.model.topology import Device, Server, Topology
from rtc.rules import rule
from rtc.syntax.attribute_values import EID_DIGITS
from rtc.syntax.decls import AddressPlan, Decl, ServerDecl
from rtc.syntax.values import (BAD_IP, BAD_TEMPLATE, FamilyName, Template, ValueProblem,
                               fast_ipv4, parse_family_name, parse_ip)

ADDRESS_COUNT = rule("RTC206", "address-count-mismatch", "error",
                     "A server lists a different number of device IPs than devices.", """
    What: `devices 0..7` with a `device_ip` list of 7 addresses (or gateways, or super
    device ids).
    Why: rtc cannot tell which device the missing or extra address belongs to; HCCL needs
    exactly one device_ip per device.
    Example: `devices 0..7` and `device_ip 6.0.2.1, 6.0.2.3`.
    Fix: give one address per device, or use `device_ip START step N`.""")
RENDERED_ADDRESS = rule("RTC207", "bad-computed-address", "error",
                        "A template or step computes an invalid address or id.", """
    What: a family template such as `10.1.{i/256}.{i%256+1}` produced 10.1.0.256 for
    some server, or a step ran past 255.
    Why: the rank table would hold an address HCCL rejects.
    Example: `host 10.0.0.{i}` in `family node[0..299]`.
    Fix: change the template so every server and device gets a valid address.""")

SDID_MAX = 2**32 - 1  # super_device_id is an unsigned 32-bit value (HCCL rank table 1.2)
EID_MAX = 2**128 - 1  # an EID is 128 bits (HCCL rank_table_config_a5.md; MindCluster parse_eid.py)
NET_INSTANCE_MAX = 1024  # net_instance_id length limit (HCCL rank_table_config_a5.md)


def lower_servers(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Append the servers of every ``server`` / ``family`` block to ``topo.servers``, in
    declaration order (``Server.index`` is the position)."""
    spans_cache: dict[int, tuple[Decl, dict]] = {}
    for decl in decls:
        if not isinstance(decl, ServerDecl) or not decl.name:
            continue
        if decl.kind == "server":
            members = [(decl.name, 0)]
            family = None
        else:
            try:
                fam = parse_family_name(decl.name, decl.name_span)
            except ValueProblem:
                continue  # already reported by the schema stage
            members = [(fam.name(i), i) for i in fam.indices]
            family = fam
        _lower_block(decl, family, members, topo, diags, _attribute_spans(decl, spans_cache))
    _shared_hosts_keep_names(topo.servers)


def _shared_hosts_keep_names(servers: list) -> None:
    """Servers whose ``server_id`` defaulted to their host IP but share that host with
    another server (two pods of one node) get their name back as ``server_id``: a rank
    table's server_ids must be unique (HCCL ``CheckUniquePara``), and the shared host is
    reported on its own."""
    count: dict = {}
    for s in servers:
        if s.host_ip is not None and s.server_id == str(s.host_ip):
            count[s.server_id] = count.get(s.server_id, 0) + 1
    for s in servers:
        if count.get(s.server_id, 0) > 1 and "server_id" not in s.spans:
            s.server_id = s.name


def _lower_block(decl: ServerDecl, family: FamilyName | None, members: list, topo: Topology,
                 diags: list[Diagnostic], spans: dict) -> None:
    reported: dict = {}  # attribute -> (index of its diagnostic, servers that failed)
    without_i = _uses_i(decl, diags) if family is None else frozenset()
    for name, i in members:
        s = _ServerLowering(decl, topo.preset, name, i, decl.name if family else None,
                            spans, diags, reported).server()
        s.index = len(topo.servers)
        s.incomplete |= without_i
        topo.servers.append(s)
    if family is None:
        return
    # Each attribute was reported for its first failing member: say how many failed.
    total = len(members)
    for index, names in reported.values():
        if len(names) > 1:
            d = diags[index]
            diags[index] = d._replace(message=d.message[:-1] + f"; {len(names)} of its {total} servers)")


_TEMPLATE_KEYS = ("server_id", "host", "super_pod", "device_ip", "gateway", "super_device_id",
                  "eid", "container_ip")


def _uses_i(decl: ServerDecl, diags: list[Diagnostic]) -> frozenset:
    """RTC113 for each template of a plain ``server`` block that uses ``i`` (the member
    number of a family, which a plain server has none of: it would silently be 0); the
    attributes concerned (marked incomplete: their values are not judged further)."""
    bad = set()
    for key in _TEMPLATE_KEYS:
        value = getattr(decl, key)
        items = value.items if isinstance(value, AddressPlan) else (value,) if value else ()
        for t in items:
            if "i" in t.variables:
                bad.add(key)
                diags.append(error(BAD_TEMPLATE, f"{key} template '{t.text}' uses i, the "
                                   f"member number of a family; server {decl.name} is not "
                                   "in a family, so i has no value", t.span,
                                   subject=f"server {decl.name}",
                                   hint="write the value itself, or make the block a family "
                                        "(`family node[0..N] {`)"))
                break
    return frozenset(bad)


def _attribute_spans(decl: ServerDecl, cache: dict) -> dict:
    """Attribute name -> where it was written, for the servers of ``decl``. One dict per
    block, shared by all members of a family (read-only after lowering). An attribute that
    was written but did not parse is present (at the block's label), so checks that look
    for ``key in spans`` (e.g. RTC211 "no device_ip") do not report it as missing."""
    got = cache.get(id(decl))
    if got is not None and got[0] is decl:
        return got[1]
    spans = dict(decl.spans)
    spans["name"] = decl.name_span
    for key in decl.failed:
        spans.setdefault(key, decl.name_span)
    cache[id(decl)] = (decl, spans)
    return spans


class _ServerLowering:
    """One server of a block: computes its values and reports what cannot be computed."""

    def __init__(self, decl: ServerDecl, preset: Preset, name: str, i: int,
                 family: str | None, spans: dict, diags: list[Diagnostic], reported: dict):
        self.decl, self.preset, self.name, self.i = decl, preset, name, i
        self.family, self.spans, self.diags, self.reported = family, spans, diags, reported
        self.incomplete: set[str] = set(decl.failed)

    def server(self) -> Server:
        decl, i = self.decl, self.i
        device_ids = list(decl.devices or range(self.preset.devices_per_server))
        ips = self.device_addresses("device_ip", device_ids)
        gateways = self.device_addresses("gateway", device_ids)
        devices = [Device(d, ip, gw, decl.prefix)
                   for d, ip, gw in zip(device_ids, ips, gateways)]
        if decl.super_device_id is not None:
            values = self.plan_ints(decl.super_device_id, decl.span_of("super_device_id"),
                                    device_ids)
            for dev, v in zip(devices, values or ()):
                dev.super_device_id = v
        if decl.eid is not None:
            per_die = self.eids(decl.eid, decl.span_of("eid"), len(device_ids))
            dies = self.preset.dies_per_device
            for k, dev in enumerate(devices if per_die else ()):
                dev.eids = tuple(per_die[k * dies:(k + 1) * dies])
        if decl.plane or decl.port_eid or decl.level_ip:
            self.ub_layers(devices)
        host_ip = self.host()
        # server_id: as written, else the host IP (what Ascend Operator writes and what
        # MindIE-LLM's atb_llm EnvVar.check_ranktable and MindIE Motor's RankTableLoader
        # require), else the server's name.
        default_id = str(host_ip) if host_ip is not None else self.name
        return Server(name=self.name, server_id=self.render_once("server_id", default_id),
                      index=0, span=decl.name_span, devices=devices, host_ip=host_ip,
                      nic=decl.nic, super_pod_id=self.render_once("super_pod", None),
                      family=self.family, family_index=i if self.family else None,
                      inventory=self.inventory_path(), spans=self.spans,
                      incomplete=frozenset(self.incomplete),
                      net_instances=self.net_instances(),
                      container_ip=self.container_ip(),
                      backup=(decl.backup.device, decl.backup.replaces) if decl.backup else None)

    def device_addresses(self, key: str, device_ids: list[int]) -> list:
        """The ``device_ip`` or ``gateway`` (``key``) of each device, in order: None for
        a device without one (not written, taken from the inventory, or reported)."""
        n = len(device_ids)
        plan = getattr(self.decl, key)
        if plan is None or plan.kind == "inventory":
            return [None] * n
        values = self.plan_addresses(plan, self.decl.span_of(key), device_ids, key)
        if values is not None and len(values) == n:
            return values
        return (list(values or ()) + [None] * n)[:n]

    def ub_layers(self, devices: list[Device]) -> None:
        """``plane``, ``port_eid`` and ``level_ip`` lines rendered per device (i, d, k):
        ``Device.planes``, ``port_eids`` and ``port_ips``; a bad value is reported once."""
        dies, ppd = self.preset.dies_per_device, self.preset.ports_per_die
        for key in ("plane", "port_eid", "level_ip"):
            for line in getattr(self.decl, key):
                if not self.layer_ok(key, line):
                    continue
                if len(line.values) not in (1, dies):
                    self.report(key, ValueProblem(
                        ADDRESS_COUNT, f"{key} {line.layer} of {self.name} gives "
                        f"{len(line.values)} values for {dies} dies", line.span,
                        "give one value for every die, or one per die in die order"))
                    continue
                for k, dev in enumerate(devices):
                    env = {"i": self.i, "d": dev.device_id, "k": k}
                    if not self._ub_line(key, line, dev, env, dies, ppd):
                        break

    def _ub_line(self, key: str, line, dev: Device, env: dict, dies: int, ppd: int) -> bool:
        """One device's values of one ``plane`` / ``port_eid`` / ``level_ip`` line (False
        after reporting a failure)."""
        try:
            texts = [t.render(**env) for t in line.values]
        except ValueProblem as p:
            self.report(key, p)
            return False
        if key == "plane":
            dev.planes = {**(dev.planes or {}), line.layer: tuple(texts)}
            return True
        if key == "level_ip":
            ips = [self.address(t, line.span, env, key) for t in line.values]
            if None in ips:
                return False
            dev.port_ips = (dev.port_ips or ()) + tuple(
                (line.layer, e, ips[e if len(ips) > 1 else 0]) for e in range(dies))
            return True
        try:
            base = int(self._eid_text(texts[0], f"port_eid {line.layer}", line.span), 16)
        except ValueProblem as p:
            self.report(key, p)
            return False
        except ValueError:
            base = -1
        if base < 0 or base + dies * ppd > EID_MAX:
            self.report(key, ValueProblem(RENDERED_ADDRESS, f"port_eid {line.layer} of "
                                          f"{self.name} gives '{texts[0]}', not an EID of "
                                          "32 hex digits", line.span))
            return False
        dev.port_eids = (dev.port_eids or ()) + tuple(
            (line.layer, f"{e}/{p}", f"{base + 1 + e * ppd + p:032x}")
            for e in range(dies) for p in range(ppd))
        return True

    def layer_ok(self, key: str, line) -> bool:
        """False after reporting RTC674 for a line whose layer the preset has no level for
        (or, for ``port_eid`` / ``level_ip``, no UB level)."""
        why = layer_problem(self.preset, line.layer, key)
        if why is None:
            return True
        self.report(key, ValueProblem(NET_LAYER, f"{key} {line.layer} of {self.name}: "
                                      f"{why}; the line would be ignored", line.span,
                                      "use one of the levels named, or drop the line (the "
                                      "RoCE address is `device_ip`)"))
        return False

    def net_instances(self) -> dict:
        """``net_instance`` lines rendered with ``i``: layer -> name (a bad one reported)."""
        out = {}
        for line in self.decl.net_instance:
            if not self.layer_ok("net_instance", line):
                continue
            try:
                name = line.name.render(i=self.i)
            except ValueProblem as p:
                self.report("net_instance", p)
                continue
            if not 0 < len(name) <= NET_INSTANCE_MAX:
                self.report("net_instance", ValueProblem(
                    RENDERED_ADDRESS, f"net_instance {line.layer} of {self.name} has "
                    f"{len(name)} characters; HCCL takes 1..{NET_INSTANCE_MAX}", line.span))
                continue
            out[line.layer] = name
        return out

    def eids(self, plan: AddressPlan, span: Span, n: int) -> list[str] | None:
        """One EID per die of the server's ``n`` devices (32 lowercase hex digits, device
        order, die 0 first), or None after reporting why not (bad hex, wrong count, past
        128 bits)."""
        dies = self.preset.dies_per_device
        try:
            if plan.kind == "base":
                base = int(self._eid_text(plan.items[0].render(i=self.i), "eid base", span),
                           16)
                values = [base + j for j in range(n * dies)]
            elif len(plan.items) != n * dies:
                raise ValueProblem(ADDRESS_COUNT, f"{self.name} has {n} devices x {dies} dies "
                                   f"but eid lists {len(plan.items)}", span,
                                   "give one EID per die in device order, or `eid base HEX`")
            else:
                values = [int(self._eid_text(t.render(i=self.i), "eid", span), 16)
                          for t in plan.items]
        except ValueProblem as p:
            self.report("eid", p)
            return None
        except ValueError:
            self.report("eid", ValueProblem(RENDERED_ADDRESS, f"eid of {self.name} is not "
                                            "hexadecimal", span))
            return None
        if any(v > EID_MAX for v in values):
            self.report("eid", ValueProblem(RENDERED_ADDRESS, f"eid of {self.name} runs past "
                                            "128 bits", span, "an EID has 32 hex digits"))
            return None
        return [f"{v:032x}" for v in values]

    def _eid_text(self, text: str, what: str, span: Span) -> str:
        """``text`` when it has at most 32 hex digits (a templated EID gets the literal's
        RTC114 length rule here, as RTC207: a longer one would be read as another number
        with a leading digit dropped); raises ValueProblem otherwise."""
        if len(text) > EID_DIGITS:
            raise ValueProblem(RENDERED_ADDRESS, f"{what} of {self.name} renders to '{text}', "
                               f"{len(text)} hex digits; an EID has {EID_DIGITS} (128 bits), so "
                               "the table would get another number with a digit dropped", span,
                               f"shorten the fixed part of the template by "
                               f"{len(text) - EID_DIGITS} digit(s) so that every server "
                               f"renders {EID_DIGITS} (e.g. drop a leading 0)")
        return text

    def report(self, key: str, p: ValueProblem) -> None:
        """Mark ``key`` incomplete on this server and report its first failure: once per
        server (one line, one finding) and once per family (naming the member)."""
        self.incomplete.add(key)
        got = self.reported.get(key)
        if got is not None:
            got[1].add(self.name)
            return
        self.reported[key] = (len(self.diags), {self.name})
        if self.family is not None:
            p = ValueProblem(p.code, f"{p.message} (first for {self.name} of family "
                             f"{self.family})", p.span, p.hint)
        self.diags.append(error(p.code, p.message, p.span, hint=p.hint,
                                subject=f"server {self.name}"))

    def render_once(self, key: str, default):
        """A per-server template (``server_id``, ``super_pod``) rendered with ``i``."""
        template = getattr(self.decl, key)
        if template is None:
            return default
        try:
            return template.render(i=self.i)
        except ValueProblem as p:
            self.report(key, p)
            return default

    def host(self):
        template = self.decl.host
        if template is None:
            return None
        # A plain IPv4 template of i alone is computed; anything else (and any failure)
        # takes the text path, which explains the problem.
        fast = template.ipv4_addresses(self.i, (0,)) if template.variables <= {"i"} else None
        if fast and fast[0] is not None:
            return fast[0]
        return self.address(template, self.decl.span_of("host"), {"i": self.i}, "host")

    def container_ip(self):
        """The ``container_ip`` rendered with ``i`` (None: not given, or reported)."""
        template = self.decl.container_ip
        if template is None:
            return None
        return self.address(template, self.decl.span_of("container_ip"), {"i": self.i},
                            "container_ip")

    def inventory_path(self) -> str | None:
        """The ``inventory`` folder, relative to the .rtc file's folder."""
        path = self.decl.inventory
        if path is None or os.path.isabs(path):
            return path
        return os.path.join(os.path.dirname(self.decl.span.file), path)

    def address(self, template: Template, span: Span, env: dict, key: str):
        """The address ``template`` renders to with ``env`` (None after reporting why it
        cannot be one)."""
        text = None
        try:
            text = template.render(**env)
            return parse_ip(text, span, BAD_IP if template.is_constant else RENDERED_ADDRESS)
        except ValueProblem as p:
            if text is None:  # the template itself failed (e.g. divides by zero)
                where = f" for server {self.name}"
                p = ValueProblem(p.code, f"{key} {p.message.replace(' (', where + ' (', 1)}"
                                 if " (" in p.message else f"{key} {p.message}{where}",
                                 p.span, p.hint)
            elif not template.is_constant:
                where = f" for {self.name}" + (f" device {env['d']}" if "d" in env else "")
                p = ValueProblem(RENDERED_ADDRESS, f"{key} template '{template.text}' gives "
                                 f"'{text}'{where}: {p.message}", span, p.hint)
            self.report(key, p)
            return None

    def plan_addresses(self, plan: AddressPlan, span: Span, device_ids: list[int], key: str):
        """One address per device (None entries where one failed), or None when the plan
        as a whole cannot be used (reported)."""
        n, i = len(device_ids), self.i
        if plan.kind == "list" and key == "gateway" and len(plan.items) == 1 and n > 1:
            # One gateway for every NPU of the server (a shared device subnet, e.g. a /24).
            t = plan.items[0]
            gateway = self.address(t, t.span, {"i": i}, key)
            return None if gateway is None else [gateway] * n
        if plan.kind == "list":
            if len(plan.items) != n:
                self.report(key, ValueProblem(
                    ADDRESS_COUNT, f"{self.name} has {n} devices but {key} lists "
                    f"{len(plan.items)} address{'es' if len(plan.items) != 1 else ''}", span,
                    f"give one {key} per device, in device order, or use `{key} START step N`"))
                return None
            return [self.address(t, t.span, {"i": i, "d": d, "k": k}, key)
                    for k, (t, d) in enumerate(zip(plan.items, device_ids))]
        if plan.kind == "step":
            return self.step_addresses(plan, span, n, key)
        if plan.kind == "template":
            return self.template_addresses(plan.items[0], span, device_ids, key)
        return None

    def step_addresses(self, plan: AddressPlan, span: Span, n: int, key: str):
        start = self.address(plan.items[0], span, {"i": self.i}, key)
        if start is None:
            return None
        out = []
        for k in range(n):
            try:
                out.append(start + k * plan.step)
            except (ipaddress.AddressValueError, ValueError):
                self.report(key, ValueProblem(RENDERED_ADDRESS, f"{key} {start} step "
                                              f"{plan.step} runs out of addresses at device "
                                              f"position {k}", span))
                return None
        return out

    def template_addresses(self, template: Template, span: Span, device_ids: list[int],
                           key: str):
        # Plain IPv4 shapes are computed with integer arithmetic; a device whose octet
        # falls outside 0-255 (None) and every other shape take the text path below,
        # which explains the problem.
        fast = template.ipv4_addresses(self.i, device_ids)
        if fast is not None and all(fast):  # an address is always true, None false
            return fast
        # Evaluate the per-server part once, then only the per-device groups.
        try:
            t = template.bind(i=self.i)
        except ValueProblem as p:
            self.report(key, p)
            return None
        out = []
        for k, d in enumerate(device_ids):
            env = {"i": self.i, "d": d, "k": k}
            try:
                ip = fast_ipv4(t.render_env(env))
            except ValueProblem:
                ip = None
            # Anything but a plain dotted quad takes the path that explains errors.
            out.append(ip if ip is not None else self.address(t, span, env, key))
        return out

    def plan_ints(self, plan: AddressPlan, span: Span, device_ids: list[int]):
        """The super device id of each device (``base N``, a list, or a template), or None
        after reporting a problem (wrong count, not a whole number, outside 32 bits)."""
        key = "super_device_id"
        try:
            values = self.sdid_values(plan, span, device_ids)
        except ValueProblem as p:
            self.report(key, p)
            return None
        except ValueError:
            self.report(key, ValueProblem(RENDERED_ADDRESS, "super_device_id must be a whole "
                                          "number", span))
            return None
        for d, v in zip(device_ids, values or ()):
            if not 0 <= v <= SDID_MAX:
                self.report(key, ValueProblem(
                    RENDERED_ADDRESS, f"super_device_id of {self.name} device {d} is {v}, "
                    f"outside 0..{SDID_MAX}", span, "an SDID is an unsigned 32-bit number "
                    "from `npu-smi info -t spod-info`; e.g. `super_device_id base {(i%64)*16}`"))
                return None
        return values

    def sdid_values(self, plan: AddressPlan, span: Span, device_ids: list[int]):
        i, n = self.i, len(device_ids)
        if plan.kind == "base":
            base = int(plan.items[0].render(i=i))
            return [base + d for d in device_ids]
        if plan.kind == "list" and len(plan.items) != n:
            self.report("super_device_id", ValueProblem(
                ADDRESS_COUNT, f"{self.name} has {n} devices but super_device_id lists "
                f"{len(plan.items)} value{'s' if len(plan.items) != 1 else ''}", span,
                "give one value per device, `base N` (N + device id), or a template that "
                "uses d, e.g. {i*16 + d}"))
            return None
        if plan.kind == "list":
            return [int(t.render(i=i, d=d, k=k))
                    for k, (t, d) in enumerate(zip(plan.items, device_ids))]
        t = plan.items[0]
        return [int(t.render(i=i, d=d, k=k)) for k, d in enumerate(device_ids)]


#: The rules this module reports (collected by rtc.catalogue).
RULES = (ADDRESS_COUNT, RENDERED_ADDRESS)
