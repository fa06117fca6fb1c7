"""Lowering: typed declarations -> :class:`~rtc.model.topology.Topology`.

Resolves the hardware preset, expands server families (``node[0..1023]``) and device
ranges, evaluates address templates per server and device, and resolves the servers and
devices of each job. Problems that make a value impossible to compute are reported here
(RTC200, RTC206, RTC207, RTC215); everything that can be judged on the finished
Topology is left to :mod:`rtc.checks`.
"""

from __future__ import annotations

import dataclasses

import ipaddress

from rtc.diagnostics import Diagnostic, Related, Span, error
from rtc.model.presets import presets
from rtc.model.topology import Device, Job, Placement, Server, Topology
from rtc.rules import rule
from rtc.textfmt import format_ids
from rtc.syntax.schema import MISSING_ATTRIBUTE, AddressPlan, Decl
from rtc.syntax.values import (FamilyName, ValueProblem, fast_ipv4, is_family_ref,
                               parse_family_name, parse_ip)

CLUSTER = rule("RTC200", "cluster-definition", "error",
               "The cluster block is missing, repeated, or names an unknown hardware preset.", """
    What: every file needs exactly one `cluster NAME { hardware PRESET }` block, and the
    preset must be one of atlas-800t-a2, atlas-800-a3, atlas-800-910a, generic (generic
    also needs `devices_per_server`).
    Why: the preset decides the valid device ids, the rank table version (1.0 or 1.2)
    and the hardware rules every check applies.
    Example: `hardware atlas-800-a2` (typo for atlas-800t-a2).
    Fix: write one cluster block with a known preset.""")
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
UNKNOWN_REF = rule("RTC215", "unknown-server-or-device", "error",
                   "A job names a server or device that does not exist.", """
    What: `servers atlas-03` when only atlas-01 and atlas-02 are declared, or
    `on atlas-01 devices 8..15` on an 8-NPU server.
    Why: the job's rank table would silently miss those devices.
    Example: `servers atlas-1` (the server is atlas-01).
    Fix: use the declared server names and their device ids.""")


UNKNOWN_POLICY = rule("RTC118", "unknown-policy-rule", "error",
                      "A `policy` line names a rule that does not exist.", """
    What: `policy RTC999 error` or `policy cross_node_tpp warn`: the name is neither a rule
    id (RTCnnn) nor a rule name (kebab-case or snake_case).
    Why: the policy would silently change nothing, and the finding you meant to allow,
    demote or promote would keep its default severity.
    Example: `policy cross_node_tpp error` (the rule is cross-node-tp).
    Fix: use a name or id from `rtc rules` (rtc suggests the closest one).""")

#: Prefix of the marker keys lowering puts in ``Server.spans`` / ``Job.spans`` for an
#: attribute whose value could not be read (already reported): ``spans["!tp"]``.
INCOMPLETE_MARK = "!"


def incomplete(obj) -> set[str]:
    """The attributes of a :class:`Server` or :class:`Job` that were written but could not
    be read or resolved (an error was already reported for each). A check that depends on
    one of them must skip the object instead of judging defaults: e.g. ``tp eight`` leaves
    tp at 1, and a world-size error about tp 1 would be wrong advice."""
    return {k[len(INCOMPLETE_MARK):] for k in obj.spans if k.startswith(INCOMPLETE_MARK)}


def _problem(p: ValueProblem, subject: str | None = None) -> Diagnostic:
    return error(p.code, p.message, p.span, hint=p.hint, subject=subject)


class _Lowerer:
    def __init__(self, decls: list[Decl], files: dict):
        self.decls = decls
        self.files = files
        self.diags: list[Diagnostic] = []
        self._spans: dict[int, tuple[Decl, dict]] = {}  # id(decl) -> (decl, attribute spans)

    # -- cluster ---------------------------------------------------------------------
    def cluster(self):
        clusters = [d for d in self.decls if d.kind == "cluster"]
        if not clusters:
            first = self.decls[0].span if self.decls else Span.whole_file(next(iter(self.files), "<input>"))
            self.diags.append(error(CLUSTER, "no cluster block: rtc needs the hardware preset",
                                    Span(first.file, 1, 1),
                                    hint="start the file with `cluster NAME {` / "
                                         "`hardware atlas-800t-a2` / `}`"))
            return None, None
        for extra in clusters[1:]:
            self.diags.append(error(CLUSTER, "a file describes one cluster; this is a second "
                                    "cluster block", extra.name_span,
                                    related=[Related(clusters[0].name_span, "first cluster block")],
                                    hint="merge the two blocks"))
        c = clusters[0]
        hw = c.get("hardware")
        if hw is None:
            self.diags.append(error(MISSING_ATTRIBUTE, "the cluster block has no `hardware`",
                                    c.name_span, hint="add e.g. `hardware atlas-800t-a2`"))
            return c, None
        table = presets()
        preset = table.get(hw)
        if preset is None:
            import difflib

            close = difflib.get_close_matches(hw, list(table), n=1)
            self.diags.append(error(CLUSTER, f"unknown hardware preset '{hw}'", c.span_of("hardware"),
                                    hint=(f"did you mean '{close[0]}'? " if close else "") +
                                    "presets: " + ", ".join(table)))
            return c, None
        if preset.devices_per_server == 0:
            count = c.get("devices_per_server")
            if count is None:
                self.diags.append(error(MISSING_ATTRIBUTE, "hardware generic needs "
                                        "`devices_per_server`", c.span_of("hardware"),
                                        hint="add e.g. `devices_per_server 8`"))
                return c, None
            preset = preset.with_devices(count)
        return c, preset

    # -- servers ---------------------------------------------------------------------
    def servers(self, preset) -> list[Server]:
        out: list[Server] = []
        for decl in self.decls:
            if decl.kind == "server" and decl.name:
                s = self.server(decl, preset, decl.name, 0, None, {})
                if s is not None:
                    s.index = len(out)
                    out.append(s)
            elif decl.kind == "family" and decl.name:
                try:
                    fam = parse_family_name(decl.name, decl.name_span)
                except ValueProblem:
                    continue  # already reported by the schema stage
                self.family(decl, preset, fam, out)
        return out

    def family(self, decl: Decl, preset, fam: FamilyName, out: list[Server]) -> None:
        reported: dict = {}  # attribute -> (index of its diagnostic, servers that failed)
        for i in fam.indices:
            s = self.server(decl, preset, fam.name(i), i, decl.name, reported)
            if s is not None:
                s.index = len(out)
                out.append(s)
        # Each attribute was reported for its first failing member: say how many failed.
        total = len(fam.indices)
        for index, names in reported.values():
            if len(names) > 1:
                d = self.diags[index]
                self.diags[index] = dataclasses.replace(
                    d, message=d.message[:-1] + f"; {len(names)} of its {total} servers)")

    def server(self, decl: Decl, preset, name: str, i: int, family: str | None,
               reported: dict | None = None) -> Server | None:
        subject = f"server {name}"
        spans = self.attribute_spans(decl)

        def report(key: str, p: ValueProblem) -> None:
            # Mark the attribute incomplete on this server (a private copy of the shared
            # spans), so checks do not also report it as missing.
            nonlocal spans
            if INCOMPLETE_MARK + key not in spans:
                spans = {**spans, INCOMPLETE_MARK + key: decl.span_of(key)}
            # Each attribute's first failure only: per server (one line, one finding), and
            # per family (naming the member).
            if reported is not None:
                got = reported.get(key)
                if got is not None:
                    got[1].add(name)
                    return
                reported[key] = (len(self.diags), {name})
            if family is not None:
                p = ValueProblem(p.code, f"{p.message} (first for {name} of family {family})",
                                 p.span, p.hint)
            self.diags.append(_problem(p, subject))

        try:
            server_id = decl.get("server_id").render(i=i) if decl.get("server_id") else name
        except ValueProblem as p:
            report("server_id", p)
            server_id = name
        device_ids = list(decl.get("devices") or range(preset.devices_per_server))
        devices = [Device(d) for d in device_ids]

        host_ip = None
        host = decl.get("host")
        if host is not None:
            # A plain IPv4 template of i alone is computed; anything else (and any
            # failure) takes the text path, which explains the problem.
            fast = host.ipv4_addresses(i, (0,)) if host.variables <= {"i"} else None
            host_ip = fast[0] if fast and fast[0] is not None else \
                self.address(host, decl.span_of("host"), {"i": i}, report, "host", name)

        for key in ("device_ip", "gateway"):
            plan = decl.get(key)
            if plan is None or plan.kind == "inventory":
                continue
            values = self.plan_addresses(plan, decl.span_of(key), i, device_ids, report, key, name)
            if values is None:
                continue
            for dev, v in zip(devices, values):
                if key == "device_ip":
                    dev.device_ip = v
                else:
                    dev.gateway = v
        prefix = decl.get("prefix")
        if prefix is not None:
            for dev in devices:
                dev.prefix = prefix

        super_pod = None
        if decl.get("super_pod") is not None:
            try:
                super_pod = decl.get("super_pod").render(i=i)
            except ValueProblem as p:
                report("super_pod", p)
        sdid_plan = decl.get("super_device_id")
        if sdid_plan is not None:
            values = self.plan_ints(sdid_plan, decl.span_of("super_device_id"), i, device_ids,
                                    report, name)
            if values is not None:
                for dev, v in zip(devices, values):
                    dev.super_device_id = v

        inventory = decl.get("inventory")
        if inventory is not None:
            import os

            base = os.path.dirname(decl.span.file)
            inventory = os.path.join(base, inventory) if not os.path.isabs(inventory) else inventory
        return Server(name=name, server_id=server_id, index=0, span=decl.name_span,
                      devices=devices, host_ip=host_ip, nic=decl.get("nic"),
                      super_pod_id=super_pod, family=family,
                      family_index=i if family else None, inventory=inventory, spans=spans)

    def attribute_spans(self, decl: Decl) -> dict:
        """Attribute name -> where it was written, for the servers of ``decl``. One dict
        per block, shared by all members of a family (read-only after lowering)."""
        cache = self._spans
        got = cache.get(id(decl))
        if got is not None and got[0] is decl:
            return got[1]
        spans = {k: decl.span_of(k) for k in decl.attrs}
        spans["name"] = decl.name_span
        for key in decl.failed:
            # A device_ip (etc.) that was written but did not parse: checks that look for
            # `key in spans` (e.g. RTC211 "no device_ip") must not report it as missing.
            spans.setdefault(key, decl.name_span)
            spans[INCOMPLETE_MARK + key] = decl.name_span
        cache[id(decl)] = (decl, spans)
        return spans

    def address(self, template, span: Span, env: dict, report, key: str, name: str = ""):
        text = None
        try:
            text = template.render(**env)
            return parse_ip(text, span, "RTC111" if template.is_constant else RENDERED_ADDRESS)
        except ValueProblem as p:
            if text is None:  # the template itself failed (e.g. divides by zero)
                where = f" for server {name}" if name else ""
                p = ValueProblem(p.code, f"{key} {p.message.replace(' (', where + ' (', 1)}"
                                 if " (" in p.message else f"{key} {p.message}{where}",
                                 p.span, p.hint)
            elif not template.is_constant:
                where = (f" for {name}" if name else "") + (f" device {env['d']}" if "d" in env
                                                            else "")
                p = ValueProblem(RENDERED_ADDRESS, f"{key} template '{template.text}' gives "
                                 f"'{text}'{where}: {p.message}", span, p.hint)
            report(key, p)
            return None

    def plan_addresses(self, plan: AddressPlan, span: Span, i: int, device_ids: list[int],
                       report, key: str, name: str):
        n = len(device_ids)
        if plan.kind == "list" and key == "gateway" and len(plan.items) == 1 and n > 1:
            # One gateway for every NPU of the server (a shared device subnet, e.g. a /24).
            t = plan.items[0]
            gateway = self.address(t, t.span, {"i": i}, report, key, name)
            return None if gateway is None else [gateway] * n
        if plan.kind == "list":
            if len(plan.items) != n:
                report(key, ValueProblem(ADDRESS_COUNT, f"{name} has {n} devices but {key} lists "
                                         f"{len(plan.items)} address"
                                         f"{'es' if len(plan.items) != 1 else ''}", span,
                                         f"give one {key} per device, in device order, or use "
                                         f"`{key} START step N`"))
                return None
            out = []
            for k, (t, d) in enumerate(zip(plan.items, device_ids)):
                out.append(self.address(t, t.span, {"i": i, "d": d, "k": k}, report, key, name))
            return out
        if plan.kind == "step":
            start = self.address(plan.items[0], span, {"i": i}, report, key, name)
            if start is None:
                return None
            out = []
            for k in range(n):
                try:
                    out.append(start + k * plan.step)
                except (ipaddress.AddressValueError, ValueError):
                    report(key, ValueProblem(RENDERED_ADDRESS, f"{key} {start} step {plan.step} "
                                             f"runs out of addresses at device position {k}",
                                             span))
                    return None
            return out
        if plan.kind == "template":
            # Plain IPv4 shapes are computed with integer arithmetic; a device whose octet
            # falls outside 0-255 (None) and every other shape take the text path below,
            # which explains the problem.
            fast = plan.items[0].ipv4_addresses(i, device_ids)
            if fast is not None and not any(a is None for a in fast):
                return fast
            # Evaluate the per-server part once, then only the per-device groups.
            try:
                t = plan.items[0].bind(i=i)
            except ValueProblem as p:
                report(key, p)
                return None
            render = t.render_env
            out = []
            for k, d in enumerate(device_ids):
                env = {"i": i, "d": d, "k": k}
                try:
                    ip = fast_ipv4(render(env))
                except ValueProblem:
                    ip = None
                # Anything but a plain dotted quad takes the path that explains errors.
                out.append(ip if ip is not None else self.address(t, span, env, report, key, name))
            return out
        return None

    def plan_ints(self, plan: AddressPlan, span: Span, i: int, device_ids: list[int], report,
                  name: str):
        n = len(device_ids)
        try:
            if plan.kind == "base":
                base = int(plan.items[0].render(i=i))
                values = [base + d for d in device_ids]
            elif plan.kind == "list":
                if len(plan.items) != n:
                    report("super_device_id", ValueProblem(
                        ADDRESS_COUNT, f"{name} has {n} devices but super_device_id lists "
                        f"{len(plan.items)} value{'s' if len(plan.items) != 1 else ''}", span,
                        "give one value per device, `base N` (N + device id), or a template "
                        "that uses d, e.g. {i*16 + d}"))
                    return None
                values = [int(t.render(i=i, d=d, k=k)) for k, (t, d) in
                          enumerate(zip(plan.items, device_ids))]
            else:
                t = plan.items[0]
                values = [int(t.render(i=i, d=d, k=k)) for k, d in enumerate(device_ids)]
            for d, v in zip(device_ids, values):
                if not 0 <= v <= SDID_MAX:
                    report("super_device_id", ValueProblem(
                        RENDERED_ADDRESS, f"super_device_id of {name} device {d} is {v}, outside "
                        f"0..{SDID_MAX}", span, "an SDID is an unsigned 32-bit number from "
                        "`npu-smi info -t spod-info`; e.g. `super_device_id base {(i%64)*16}`"))
                    return None
            return values
        except ValueProblem as p:
            report("super_device_id", p)
        except ValueError:
            report("super_device_id", ValueProblem(RENDERED_ADDRESS, "super_device_id must be "
                                                   "a whole number", span))
        return None

    # -- jobs ------------------------------------------------------------------------
    def jobs(self, servers: list[Server]) -> list[Job]:
        by_name = {}
        for s in servers:
            by_name.setdefault(s.name, s)
        out = []
        for decl in self.decls:
            if decl.kind != "job" or not decl.name:
                continue
            placements: dict[str, Placement] = {}
            claims: list = []  # (server, device ids, server span, via, devices span)
            unresolved: set[str] = set(decl.failed)
            for w in decl.get("servers") or ():
                before = len(self.diags)
                found = self.resolve(w, by_name, servers)
                if len(self.diags) > before:
                    unresolved.add("servers")
                for s in found:
                    placements[s.name] = Placement(s, tuple(d.device_id for d in s.devices), w.span)
                    claims.append((s.name, placements[s.name].device_ids, w.span, "servers", None))
            for ref in decl.get("on") or ():
                before = len(self.diags)
                found = self.resolve(ref.server, by_name, servers)
                if len(self.diags) > before:
                    unresolved.add("on")
                for s in found:
                    ids = ref.devices if ref.devices is not None else tuple(d.device_id for d in s.devices)
                    have = {d.device_id for d in s.devices}
                    missing = [d for d in ids if d not in have]
                    if missing:
                        self.diags.append(error(
                            UNKNOWN_REF, f"job {decl.name} uses device"
                            f"{'s' if len(missing) > 1 else ''} {_ids(missing)} on {s.name}, "
                            f"which has devices {_ids(sorted(have))}",
                            ref.devices_span or ref.server.span, subject=f"server {s.name}",
                            hint=f"use devices of {s.name} ({_ids(sorted(have))})"))
                        ids = tuple(d for d in ids if d in have)
                        unresolved.add("on")
                    placements[s.name] = Placement(s, tuple(sorted(ids)), ref.server.span,
                                                   ref.dp_local)
                    claims.append((s.name, tuple(ids), ref.server.span, "on", ref.devices_span))
            spans = {k: decl.span_of(k) for k in decl.attrs}
            for key in unresolved:
                spans[INCOMPLETE_MARK + key] = decl.span_of(key)
            env = [v for v in (decl.get("env") or ())]
            policies = {name: (level, loc.span) for loc in decl.attrs.get("policy", ())
                        for name, level in [loc.value]}
            job = Job(
                name=decl.name, span=decl.name_span,
                placements=sorted(placements.values(), key=lambda p: p.server.index),
                role=decl.get("role", "serve"), framework=decl.get("framework", "vllm"),
                dp=decl.get("dp", 1), tp=decl.get("tp", 1), pp=decl.get("pp", 1),
                pcp=decl.get("pcp", 1), dcp=decl.get("dcp", 1),
                expert_parallel=decl.get("expert_parallel", False),
                model_kind=decl.get("model_kind", "moe"), order=decl.get("order"),
                env=env, policies=policies, spans=spans, claims=claims)
            if not job.placements and not unresolved & {"servers", "on"}:
                self.diags.append(error(MISSING_ATTRIBUTE, f"job {decl.name} uses no devices",
                                        decl.name_span,
                                        hint="add `servers NAME, NAME` or `on NAME devices 0..7`"))
            out.append(job)
        return out

    def resolve(self, word, by_name: dict, servers: list[Server]) -> list[Server]:
        text = word.text
        if text == "all":
            return list(servers)
        if is_family_ref(text):
            fam = parse_family_name(text, word.span)
            found = [by_name.get(fam.name(i)) for i in fam.indices]
            missing = [fam.name(i) for i, s in zip(fam.indices, found) if s is None]
            if missing:
                self.diags.append(error(UNKNOWN_REF, f"no server named {missing[0]}"
                                        + (f" (and {len(missing) - 1} more of {text})"
                                           if len(missing) > 1 else ""), word.span,
                                        hint="family members are named PREFIX + index, "
                                             "zero-padded like the family's first index"))
            return [s for s in found if s is not None]
        s = by_name.get(text)
        if s is None:
            import difflib

            close = difflib.get_close_matches(text, list(by_name), n=1)
            self.diags.append(error(UNKNOWN_REF, f"no server named '{text}'", word.span,
                                    hint=f"did you mean '{close[0]}'?" if close else
                                    "declare it with `server NAME {` or `family`"))
            return []
        return [s]


def _check_policies(decls: list[Decl]) -> list[Diagnostic]:
    """RTC118 for every `policy NAME level` whose NAME is no rule id or name."""
    if not any(d.attrs.get("policy") for d in decls):
        return []   # loading every rule module costs ~0.1 s; only pay it when needed
    import difflib

    from rtc.rules import all_rules

    rules = all_rules()
    known = {r.code for r in rules} | {r.name for r in rules} | \
        {r.name.replace("-", "_") for r in rules}
    out = []
    for decl in decls:
        for loc in decl.attrs.get("policy", ()):
            key = loc.value[0]
            if key in known or key.upper() in {r.code for r in rules}:
                continue
            pool = [r.code for r in rules] if key[:3].upper() == "RTC" else \
                [r.name for r in rules] + [r.name.replace("-", "_") for r in rules]
            close = difflib.get_close_matches(key.upper() if pool[0].startswith("RTC") else key,
                                              pool, n=1, cutoff=0.8 if key[:3].upper() == "RTC"
                                              else 0.6)
            where = f"{decl.kind} {decl.name}" if decl.name else f"the {decl.kind} block"
            span = Span(loc.span.file, loc.span.line, loc.span.column, loc.span.line,
                        loc.span.column + len(key))
            out.append(error(UNKNOWN_POLICY, f"policy in {where} names {key!r}, which is no "
                             "rule; the policy would change nothing", span,
                             hint=(f"did you mean '{close[0]}'? " if close else "") +
                             "`rtc rules` lists every rule id and name"))
    return out


def _ids(ids) -> str:
    """Compact id list: [0,1,2,3,5] -> '0..3, 5' (:func:`rtc.textfmt.format_ids`)."""
    return format_ids(ids)


def lower(decls: list[Decl], files: dict) -> tuple[Topology | None, list[Diagnostic]]:
    """Lower declarations into a Topology. Returns (None, diagnostics) when the cluster
    itself cannot be resolved (no or unknown preset); otherwise a Topology, possibly with
    error diagnostics for the parts that could not be computed."""
    lw = _Lowerer(decls, files)
    cdecl, preset = lw.cluster()
    if preset is None:
        return None, lw.diags
    servers = lw.servers(preset)
    jobs = lw.jobs(servers)
    lw.diags.extend(_check_policies(decls))
    policies = {name: (level, loc.span) for loc in cdecl.attrs.get("policy", ())
                for name, level in [loc.value]}
    topo = Topology(name=cdecl.name or "cluster", preset=preset, servers=servers, jobs=jobs,
                    cann=cdecl.get("cann"), vllm_version=cdecl.get("vllm_version"),
                    policies=policies, span=cdecl.name_span, files=files)
    from rtc.network.lowering import finish as finish_network  # networks, inventory

    finish_network(decls, topo, lw.diags)
    from rtc.emit.launch.spec import finish as finish_launch  # launch attributes, PD pairs

    finish_launch(decls, topo, lw.diags)
    from rtc.network.ports import plan_ports  # last: the ports depend on the launch form

    topo.port_plan = plan_ports(topo)
    return topo, lw.diags
