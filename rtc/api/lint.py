"""``rtc lint``'s pipeline: the launch scripts people already run, read by the script front
end (:mod:`rtc.scripts`), lifted into the compiler's Topology and launch plan, and checked by
the compiler's rules (:func:`rtc.checks.run_checks`), with the same rule ids.

1. read every script (bytes; a binary file is RTC700) and split it into ``## node``
   sections;
2. read each as shell (:func:`rtc.scripts.shell.read_shell`: nothing is executed) and
   recognise its launches (:mod:`rtc.scripts.commands`); what could not be read is RTC700 /
   RTC701, unknown commands one RTC702 note;
3. group the scripts into nodes (:mod:`rtc.scripts.nodes`) and the launches into jobs, and
   lift both (:func:`rtc.scripts.lift.lift`);
4. :func:`rtc.plan.build_plan` for the port plan, with each job's launch replaced by the
   lifted one, then :func:`rtc.checks.run_checks`;
5. with a rank table (``--table``, or the ``RANK_TABLE_FILE`` a script exports when it can
   be read), the table's devices are the servers' devices and RTC704-706 compare the two.
"""

from __future__ import annotations

import shlex

import os
from dataclasses import dataclass, field

from rtc.checks import (a5_addresses, device_numbering, duplicates, gpu_islands, host_addressing,
                        launch_settings, port_conflicts, ranktable_rules, run_checks,
                        unused_attributes)
from rtc.diagnostics import Diagnostic, Span, error, note, sorted_diagnostics, warning
from rtc.model.presets import presets
from rtc.model.topology import Topology
from rtc.plan import build_plan
from rtc.rules import IO_ERROR
from rtc.scripts import rules as R
from rtc.scripts import manifests, sglang_rules
from rtc.scripts.lift import group_launches, lift
from rtc.scripts.nodes import Unit, group_nodes, problems_of, read_unit, split_sections
from rtc.scripts.partial import drop_skipped, lost_workers, partial_jobs
from rtc.scripts.engines import as_shell, is_ansible
from rtc.scripts.values import value_findings
from rtc.scripts.shell import decode_script, path_from_script, quote_problems

DEFAULT_HARDWARE = "atlas-800t-a2"
#: The preset of scripts that set up NVIDIA GPUs (CUDA_VISIBLE_DEVICES, NCCL_*) and nothing
#: of Ascend's, without --hardware or a table: as many GPUs as the scripts use (RTC464).
GUESSED_GPU = "generic-gpu"
#: The MindIE Server binary (its launch is RTC463, not lifted).
MINDIE_DAEMON = "mindieservice_daemon"
#: Ascend variables: scripts that export one are for NPUs whatever else they set.
_ASCEND_VARS = ("ASCEND_", "HCCL_", "RANK_TABLE_FILE")


@dataclass
class LintReport:
    """What linting a set of scripts found: diagnostics, the texts of every file read (for
    showing source lines), the lifted Topology (None when no script could be read), and the
    number of scripts that could not be read at all."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict = field(default_factory=dict)
    topology: Topology | None = None
    unreadable: int = 0

    @property
    def ok(self) -> bool:
        from rtc.diagnostics import has_errors
        return not has_errors(self.diagnostics)


def _load(path: str):
    try:
        with open(path, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        return None, exc.strerror or str(exc)


#: The second line of the tool scripts ``rtc compile --out-dir`` writes beside the launches.
_TOOL_HEADERS = (("# rtc preflight of server", "preflight"),
                 ("# rtc preflight of GPU server", "preflight"),
                 ("# rtc calibration runs", "calibration"),
                 ("# rtc: prefill/decode proxy of", "prefill/decode proxy"))


def _rtc_tool_script(text: str) -> str | None:
    """``preflight`` / ``calibration`` for a script rtc itself wrote (its header), else None."""
    second = text.split("\n", 2)[1] if text.count("\n") >= 1 else ""
    return next((kind for head, kind in _TOOL_HEADERS if second.startswith(head)), None)


def _plain_line_ends(rep: LintReport, label: str, text: str) -> str:
    """``text`` without the carriage returns of CRLF line ends; RTC708 at the first one
    (bash would read each ``\r`` as part of a word)."""
    at = text.find("\r\n")
    if at < 0:
        return text
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    count = text.count("\r\n")
    rep.diagnostics.append(error(R.CRLF, f"{label} has Windows (CRLF) line endings ({count} "
                                 "lines): bash reads each carriage return as part of a word",
                                 Span(label, line, col),
                                 hint=f"sed -i 's/\\r$//' {label}   (or dos2unix)"))
    return text.replace("\r\n", "\n")


def _read_units(rep: LintReport, scripts, names: dict, loader,
                kube: manifests.Manifests | None = None) -> list[Unit]:
    """Each script read into its node units (``## node`` sections split); unreadable files
    (RTC700), CRLF line ends (RTC708) and rtc's own tool scripts (an RTC701 note) are
    reported into ``rep``."""
    units: list[Unit] = []
    for label, content in scripts:
        text, why = (content, None) if isinstance(content, str) else decode_script(content)
        if text is None:
            rep.unreadable += 1
            rep.diagnostics.append(error(R.UNREADABLE, f"{label} {why}", Span.whole_file(label),
                                         hint="give rtc lint the shell script each node runs"))
            continue
        text = _plain_line_ends(rep, label, text)
        rep.sources[label] = text
        if kube is not None and manifests.looks_like_manifest(label, text) \
                and not is_ansible(label, text):
            pods, problems = manifests.read(label, text, kube)
            rep.diagnostics += problems
            units += pods
            continue
        if _is_description(rep, label, text):
            continue
        tool = _rtc_tool_script(text)
        if tool:
            rep.diagnostics.append(note(R.NOT_READ, f"{label} is rtc's own {tool} script, not "
                                        "a node's launch: not linted", Span(label, 1, 1),
                                        hint="lint the S.sh launch scripts of the folder"))
            rep.diagnostics += [error(R.UNREADABLE, p.message, p.span)
                                for p in quote_problems(label, text)]
            continue
        for u in split_sections(label, as_shell(label, text)):  # sbatch, playbooks: engines
            u.given_name = names.get(label) or u.given_name
            read_unit(u, loader)
            units.append(u)
    return units


def _is_description(rep: LintReport, label: str, text: str) -> bool:
    """True, after an RTC700 error, when ``text`` is an rtc description rather than a
    script (:func:`rtc.syntax.sniff.description_start`): read as shell it would only be
    unknown commands, and the lint would pass."""
    from rtc.syntax.sniff import description_start

    start = description_start(text, label)
    if start is None:
        return False
    line, col, word = start
    shown = shlex.quote(label) if not label.startswith("<") else "CLUSTER.rtc"
    rep.diagnostics.append(error(
        R.UNREADABLE, f"{label} is an rtc description, not a launch script",
        Span(label, line, col, line, col + len(word)),
        hint=f"give it as `--against {shown}` to see where the scripts drift from its plan, "
             f"with the scripts each node runs; `rtc compile {shown} --out-dir DIR` writes "
             "them"))
    return True


def lint_scripts(scripts: list[tuple[str, bytes | str]], *, names: dict | None = None,
                 hardware: str | None = None, vllm_version: str | None = None,
                 cann: str | None = None, table: Topology | None = None,
                 loader=None, against=None) -> LintReport:
    """Lint ``scripts`` (``(label, content)`` pairs: one node's script each, or a file with
    ``## node`` sections). ``names`` maps labels to node names (``--node NAME=FILE``);
    ``hardware`` is a preset name (default atlas-800t-a2, or the table's); ``table`` a rank
    table lowered by :mod:`rtc.tables`. ``loader(path) -> (bytes | None, why)`` reads
    sourced files (default: the file system). ``against`` is a compile result
    (:class:`rtc.api.compile.CompileResult`) the scripts are compared with (RTC707).
    Never raises for bad input."""
    rep = LintReport()
    kube = manifests.Manifests()
    units = _read_units(rep, scripts, names or {}, loader or _load, kube)
    units = _without_idle_pods(rep, units, kube)
    _front_end_findings(rep, units)
    rep.diagnostics += value_findings(la for u in units for la in (u.found.launches
                                                                   if u.found else []))
    if not units:
        rep.diagnostics += manifests.check(kube, [], None)
        return rep
    tables = [table] if table is not None else []
    if table is None:
        table, tables = _exported_table(rep, units, hardware, loader or _load)
    guessed = hardware is None and table is None and _gpu_scripts(units)
    preset = table.preset if table is not None and hardware is None else \
        presets()[hardware or (GUESSED_GPU if guessed else DEFAULT_HARDWARE)]
    nodes = group_nodes(units)
    groups = group_launches(nodes)
    for u in units:
        rep.sources.update({k: v for k, v in (u.run.files if u.run else {}).items()
                            if k not in rep.sources})
    lifted = lift(nodes, groups, preset, vllm_version=vllm_version, cann=cann, table=table,
                  files=rep.sources)
    topo = lifted.topology
    rep.topology = topo
    domains = guessed and _nvlink_domains(topo)
    plan = build_plan(topo)
    plan.launches.update(lifted.launches)
    skip = _NOT_FOR_SCRIPTS if table is not None else _NOT_FOR_SCRIPTS | _NEED_TABLE
    skip = skip | ({ranktable_rules.SERVER_ORDER.code} if kube.pods else set())
    if guessed:
        skip = skip | (_NEED_ISLANDS - {gpu_islands.TP_ISLANDS.code} if domains
                       else _NEED_ISLANDS)
        rep.diagnostics.append(_gpu_guessed(topo, domains))
    found = _said_as_values(run_checks(topo, plan), rep.diagnostics, skip)
    rep.diagnostics += drop_skipped(found, partial_jobs(groups, topo.jobs))
    rep.diagnostics += lost_workers(groups)
    rep.diagnostics += sglang_rules.check(groups, nodes)
    rep.diagnostics += manifests.check(kube, units, topo)
    rep.diagnostics = _in_script_terms(rep.diagnostics, nodes)
    if table is not None:
        rep.diagnostics += list(_against_table(topo, tables, lifted))
    if against is not None and against.topology is not None and against.plan is not None:
        from rtc.scripts.drift import drift

        source = next(iter(against.sources), "the description")
        rep.diagnostics += drift(lifted.launches, against.topology, against.plan, source)
    rep.diagnostics = sorted_diagnostics(rep.diagnostics)
    return rep


def _said_as_values(found: list[Diagnostic], earlier: list[Diagnostic],
                    skip) -> list[Diagnostic]:
    """``found`` without the rule codes in ``skip`` and without RTC446 (a port past 65535)
    on a script line where RTC720 already said the value is not a port (``--port
    70000``): one finding per bad value."""
    bad = {(d.span.file, d.span.line) for d in earlier
           if d.code == R.BAD_VALUE.code and d.span is not None}
    return [d for d in found if d.code not in skip
            and not (d.code == port_conflicts.PORT_RANGE.code
                                     and d.span is not None
                                     and (d.span.file, d.span.line) in bad)]


#: The tray preset rtc lint infers for GPU scripts that name NVLink domains
#: (``RTC_NVLINK_DOMAIN``, which ``rtc compile`` writes for NVL72-class trays only).
NVL72_TRAY = "gb200-nvl72"


def _nvlink_domains(topo: Topology) -> bool:
    """True when every server of the lifted GPU ``topo`` names its NVLink domain
    (``RTC_NVLINK_DOMAIN``, written by ``rtc compile`` for NVL72-class trays): the guessed
    preset becomes a GB200 NVL72 tray (:data:`NVL72_TRAY`, its links: NVLink 5 in the
    domain, InfiniBand NDR between domains) with as many GPUs as the scripts use, when they
    use at most a tray's 4; else the generic preset joins servers into domains as an
    NVL72-class preset does (its ``super_pod``). Either way TP across the trays of one
    domain is not cross-server (RTC310) and across domains RTC312 gives its cost."""
    if not topo.servers or any(s.super_pod_id is None for s in topo.servers):
        return False
    n = topo.preset.devices_per_server
    tray = presets()[NVL72_TRAY]
    base = tray if 0 < n <= tray.devices_per_server else topo.preset
    topo.preset = base._replace(super_pod=True, devices_per_server=n,
                                nvlink_islands=(tuple(range(n)),))  # all on the NVLink
    return True


def _gpu_guessed(topo: Topology, domains: bool = False) -> Diagnostic:
    """The RTC464 note: the scripts were checked as NVIDIA GPU servers of a guessed size
    (``domains``: in the NVLink domains they name, as the tray preset inferred)."""
    if domains:
        named = sorted({str(s.super_pod_id) for s in topo.servers})
        ib = sorted({h for s in topo.servers for h in (s.ib_hca or ())})
        kind = ("GB200 NVL72 compute trays" if topo.preset.name == NVL72_TRAY
                else "NVIDIA GPU trays")
        return note(R.GPU_GUESSED, "the scripts export CUDA_VISIBLE_DEVICES / NCCL variables "
                    f"and RTC_NVLINK_DOMAIN: checked as {kind} ({topo.preset.name}, inferred "
                    f"from RTC_NVLINK_DOMAIN; {topo.preset.devices_per_server} GPUs each as "
                    "the scripts use them) in NVLink "
                    f"domain{'s' if len(named) > 1 else ''} {', '.join(named)}"
                    + (f", with the HCAs their NCCL_IB_HCA names ({', '.join(ib)})"
                       if ib else "")
                    + "; RTC313 (islands inside a tray) is skipped", topo.span,
                    hint="give --hardware (e.g. gb300-nvl72) when the trays are another kind")
    return note(R.GPU_GUESSED, "the scripts export CUDA_VISIBLE_DEVICES / NCCL variables: "
                f"checked as NVIDIA GPU servers ({GUESSED_GPU}, "
                f"{topo.preset.devices_per_server} GPUs each as the scripts use them); the "
                "NVLink-island rules RTC312 / RTC313 are skipped (the islands are not known)",
                topo.span, hint="give --hardware (e.g. hgx-h100) to check the islands too")


def _without_idle_pods(rep: LintReport, units: list[Unit], kube) -> list[Unit]:
    """``units`` without the manifests' pods that start nothing rtc reads (one RTC792 note
    lists them instead of an RTC703 warning each)."""
    idle = {id(u) for u in units if id(u) in kube.unit_pod and not u.found.launches}
    rep.diagnostics += manifests.not_lifted_note(kube, [u for u in units if id(u) in idle])
    return [u for u in units if id(u) not in idle]


#: Compiler rules about the description language itself, which a script cannot break.
#: (RTC444 moved defaults, RTC509 / RTC456 no host, RTC507 env rtc computes, RTC433 the
#: numbering note: a script's values are what runs; RTC512 a KV connector without a pair:
#: the other side of a prefill/decode pair is often not among the scripts.)
_NOT_FOR_SCRIPTS = frozenset(r.code for r in (
    port_conflicts.ASSIGNED, launch_settings.BLOCKED, host_addressing.NO_HOST,
    launch_settings.ENV_COMPUTED, device_numbering.NUMBERING, unused_attributes.NOT_USED))
#: Rules about the rank table's device IPs, super pods and (Ascend 950) EIDs: scripts do not
#: give them (only ``--table`` or the RANK_TABLE_FILE they export).
_NEED_TABLE = frozenset({ranktable_rules.MISSING_DEVICE_IP.code,
                         ranktable_rules.MISSING_SUPER_POD.code, a5_addresses.MISSING_EID.code})


#: Rules that need the servers' NVLink islands, which scripts do not give (RTC464).
_NEED_ISLANDS = frozenset({gpu_islands.TP_ISLANDS.code, gpu_islands.SET_ISLANDS.code})


def _in_script_terms(diagnostics: list[Diagnostic], nodes) -> list[Diagnostic]:
    """The compiler's RTC202 (two servers with one host IP) said of the scripts: which two
    scripts set it, by which variable (the finding stays at the second script's line)."""
    by_span = {n.host_span: n for n in nodes if n.host_span is not None}
    out = []
    for d in diagnostics:
        node = by_span.get(d.span) if d.code == duplicates.DUP_HOST_IP.code else None
        other = by_span.get(d.related[0].span) if node is not None and d.related else None
        if other is not None:
            d = d._replace(message=f"{node.host_span.file} and {other.host_span.file} both "
                           f"claim host {node.host_ip} via {node.host_var}: two machines "
                           "cannot share one host IP", hint=f"export each node's own host "
                           f"IP as {node.host_var} (a copied script keeps the first's)")
        out.append(d)
    return out


def _gpu_scripts(units: list[Unit]) -> bool:
    """True when the units' launches export CUDA_VISIBLE_DEVICES or an NCCL_* variable and
    no Ascend one (ASCEND_*, HCCL_*, RANK_TABLE_FILE)."""
    names = {n for u in units for la in (u.found.launches if u.found else []) for n in la.env}
    gpu = any(n == "CUDA_VISIBLE_DEVICES" or n.startswith("NCCL_") for n in names)
    return gpu and not any(n.startswith(_ASCEND_VARS) for n in names)


def _front_end_findings(rep: LintReport, units: list[Unit]) -> None:
    for p in problems_of(units):
        rule = R.UNREADABLE if p.kind == "syntax" else R.NOT_READ
        make = error if p.kind == "syntax" else note
        rep.diagnostics.append(make(rule, p.message, p.span))
    unknown: dict[str, Span] = {}
    for u in units:
        if u.found is None:
            continue
        for name, span in u.found.unknown.items():
            unknown.setdefault(name, span)
        if not u.found.launches and not (u.run and any(p.kind == "syntax" for p in u.run.problems)):
            where = f"section {u.given_name} of {u.label}" if u.first_line > 1 else u.label
            daemon = u.found.unknown.get(MINDIE_DAEMON)
            if daemon is not None:
                rep.diagnostics.append(note(R.MINDIE_NOT_LINTED, f"{where} starts MindIE "
                                            f"Server ({MINDIE_DAEMON}), which takes its "
                                            "parallel sizes and ports from config.json: its "
                                            "launch is not checked", daemon,
                                            hint="check the description with `rtc check` and "
                                                 "the rank table with `rtc validate`"))
                continue
            rep.diagnostics.append(warning(R.NO_LAUNCH, f"{where} starts no process rtc "
                                           "recognises (vllm serve, ray start, torchrun, "
                                           "msrun, docker run)", Span(u.label, u.first_line, 1),
                                           hint="lint the script that sources it"))
    if unknown:
        first = next(iter(unknown.values()))
        names = ", ".join(f"`{n}` ({s})" for n, s in list(unknown.items())[:8])
        more = f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""
        rep.diagnostics.append(note(R.UNKNOWN_COMMAND, f"commands rtc does not check: {names}"
                                    f"{more}", first,
                                    hint="what they start is not linted"))


def _against_table(topo: Topology, tables: list[Topology], lifted) -> list[Diagnostic]:
    """RTC704-706 (and the RTC462 note) of the lifted nodes against the rank tables (one
    per job of a prefill/decode pair: each job is compared with the table of its head)."""
    out = []
    listed = ", ".join(str(s.host_ip or s.server_id)
                       for s in [s for t in tables for s in t.servers][:4]) or "none"
    matched = lifted.table_servers
    if lifted.matched_by_order:
        pairs = ", ".join(f"{s.name} = {matched[s.name].server_id}" for s in topo.servers[:4])
        more = f" and {len(topo.servers) - 4} more" if len(topo.servers) > 4 else ""
        out.append(note(R.TABLE_BY_ORDER, "no node matches a server of the rank table by "
                        "address or name (the table names no hosts, or the nodes give no "
                        f"host IP): nodes matched to its servers in launch order ({pairs}{more})",
                        topo.span, hint="keep the nodes' DP ranks in the table's server "
                                        "order (on a 2.0 table HCCL gives each process the "
                                        "rank of its place in the launch)"))
    for s in topo.servers:
        if matched.get(s.name) is None:
            what = f"host IP {s.host_ip}" if s.host_ip is not None else "no host IP"
            out.append(error(R.HOST_NOT_IN_TABLE, f"node {s.name} has {what}, which is no "
                             f"server of the rank table (servers {listed})",
                             s.span_of("host"), subject=s.label,
                             hint="export the host IP the table lists for this server "
                                  "(HCCL_IF_IP), or regenerate the table"))
    for job in topo.jobs:
        for p in job.placements:
            ts = matched.get(p.server.name)
            have = {d.device_id for d in ts.devices} if ts is not None else set()
            extra = [d for d in p.device_ids if d not in have]
            if ts is not None and extra:
                out.append(error(R.DEVICE_NOT_IN_TABLE, f"job {job.name} uses NPU "
                                 f"{extra[0]} on {p.server.name}, which the rank table's "
                                 f"server {ts.server_id} does not list (it has "
                                 f"{', '.join(map(str, sorted(have)))})", p.span,
                                 subject=p.server.label,
                                 hint="use the table's devices (ASCEND_RT_VISIBLE_DEVICES), "
                                      "or regenerate the table"))
        ranks = _table_ranks(tables, matched, job, lifted.launches.get(job.name))
        if job.framework == "vllm" and job.world_size != ranks:
            out.append(error(R.WORLD_NOT_TABLE, f"job {job.name}: world size "
                             f"{job.world_size} (dp {job.dp} x pp {job.pp} x tp {job.tp}) but "
                             f"the rank table has {ranks} ranks", job.span,
                             subject=f"job {job.name}",
                             hint="make the parallel sizes and the table agree"))
    return out


def _table_ranks(tables: list[Topology], matched: dict, job, launch=None) -> int:
    """The rank count of the table ``job``'s head node is in (the first table when the
    head is in none); of a prefill/decode table, the side of the job's kv_role."""
    head = matched.get(job.placements[0].server.name) if job.placements else None
    table = next((t for t in tables if any(s is head for s in t.servers)), tables[0])
    side = _PD_SIDES.get(_kv_role(launch) or "")
    part = next((j for j in table.jobs if side and j.role == side), None)
    if part is not None:
        return sum(len(p.device_ids) for p in part.placements)
    return sum(len(s.devices) for s in table.servers)


def _kv_role(launch) -> str | None:
    """The kv_role of the --kv-transfer-config of a lifted job's head process, or None."""
    import json

    procs = launch.nodes[0].procs if launch is not None and launch.nodes else []
    kv = procs[0].flags().get("--kv-transfer-config") if procs else None
    try:
        doc = json.loads(kv) if kv else None
    except ValueError:
        return None
    return doc.get("kv_role") if isinstance(doc, dict) else None


def read_table(path: str, hardware: str | None = None, inventory=None, loader=None,
               sources: dict | None = None) -> tuple[Topology | None, list]:
    """A rank table for ``--table`` lowered into a Topology (:mod:`rtc.tables`), and the
    findings of validating it (which ``rtc validate`` would report; ``inventory`` an
    :class:`rtc.api.validate.Inventory`). The table's text goes into ``sources``."""
    from rtc.api.validate import validate_source

    data, why = (loader or _load)(path)
    if data is None:
        return None, [error(IO_ERROR, f"cannot read {path}: {why}", None, hint="check the path")]
    rep = validate_source(data, path, hardware=hardware, inventory=inventory)
    if sources is not None and rep.text is not None:
        sources[path] = rep.text
    topo = rep.lowered.topology if rep.lowered is not None else None
    if topo is not None and rep.form == "pd-ranktable" and isinstance(rep.doc, dict):
        _pd_sides(topo, rep.doc)
    return topo, rep.diagnostics


#: The side of a vllm-ascend prefill/decode rank table each kv_role runs on.
_PD_SIDES = {"kv_producer": "prefill", "kv_consumer": "decode"}


def _pd_sides(topo: Topology, doc: dict) -> None:
    """A vllm-ascend prefill/decode rank table (``prefill_device_list`` /
    ``decode_device_list``, vllm-ascend v0.11.0-dev examples/disaggregated_prefill_v1/
    gen_ranktable.py) is two sides, never one job: one ``prefill`` and one ``decode`` job
    on the lowered table's servers, each with its side's devices (what RTC706 compares a
    producer's or consumer's world size with)."""
    from rtc.model.topology import Job, Placement

    by_id = {s.server_id: s for s in topo.servers}
    for key, role in (("prefill_device_list", "prefill"), ("decode_device_list", "decode")):
        ids: dict[str, list[int]] = {}
        for d in doc.get(key) or []:
            dev = str(d.get("device_id")) if isinstance(d, dict) else ""
            if dev.isascii() and dev.isdigit() and str(d.get("server_id")) in by_id:
                ids.setdefault(str(d.get("server_id")), []).append(int(dev))
        placements = [Placement(by_id[sid], tuple(v), topo.span) for sid, v in ids.items()]
        topo.jobs.append(Job(role, topo.span, placements, role=role))


def _exported_table(rep: LintReport, units: list[Unit], hardware,
                    loader) -> tuple[Topology | None, list[Topology]]:
    """The rank tables the scripts export as RANK_TABLE_FILE that can be read here (their
    findings join the report): one Topology of all their servers (None without any), and
    each table. A prefill/decode pair exports one table per job; they must agree on the
    hardware, else none is used (the scripts are then checked without a table)."""
    paths = {}
    for u in units:
        for la in (u.found.launches if u.found else []):
            s = la.env.get("RANK_TABLE_FILE")
            if s is not None and not s.unresolved:
                paths.setdefault(s.value, s.span.file)
    tables = [t for t in (_read_exported(rep, path, where, hardware, loader)
                          for path, where in paths.items()) if t is not None]
    if not tables or len({t.preset.name for t in tables}) != 1:
        return None, []
    if len(tables) == 1:
        return tables[0], tables
    servers = [s for t in tables for s in t.servers]
    return Topology(name="tables", preset=tables[0].preset, servers=servers, jobs=[],
                    origin="table"), tables


def _read_exported(rep: LintReport, path: str, where: str, hardware, loader) -> Topology | None:
    """The table RANK_TABLE_FILE names (``where``: the script that exports it), or None."""
    if os.path.isabs(path):     # "$RTC_DIR"/hccl.json: named from the script's label again
        path = path_from_script(path, where)
    data, _why = loader(path)
    if data is None and not os.path.isabs(path):   # relative: bash's cwd, or the script's
        path = os.path.join(os.path.dirname(where), path)
        data, _why = loader(path)
    if data is None:
        return None
    topo, diags = read_table(path, hardware, loader=lambda p: (data, None), sources=rep.sources)
    rep.diagnostics += diags
    return topo


def lint_files(paths: list[str], **kw) -> LintReport:
    """:func:`lint_scripts` of files on disk (``-``: standard input, named ``<stdin>``;
    an unreadable file is RTC001)."""
    import sys

    scripts, problems = [], []
    for path in paths:
        if path == "-":         # standard input, like `rtc validate -` and `rtc compile -`
            stream = getattr(sys.stdin, "buffer", None)
            scripts.append(("<stdin>", stream.read() if stream is not None else b""))
            continue
        data, why = _load(path)
        if data is None:
            problems.append(error(IO_ERROR, f"cannot read {path}: {why}", None,
                                  hint="check the path"))
            continue
        scripts.append((path, data))
    rep = lint_scripts(scripts, **kw)
    rep.unreadable += len(problems)
    rep.diagnostics = problems + rep.diagnostics
    return rep


__all__ = ["LintReport", "lint_scripts", "lint_files", "read_table"]
