"""``rtc validate``'s pipeline for one rank table file: the JSON front end
(:mod:`rtc.tables`), then the same plan and checks as ``rtc compile``.

1. load the JSON (:func:`rtc.tables.jsonload.load_json`: syntax, comments, trailing commas,
   encoding, duplicate keys; RTC600-604);
2. detect the form (:func:`rtc.tables.recognise.detect_form`, or ``--schema``;
   RTC605-609);
3. validate against the form's JSON Schema (:func:`rtc.schema.check_schema`; RTC610-619,
   every error with its JSON path);
4. the table-only rules (:func:`rtc.tables.semantic.check_table`; rank ids, counts,
   addresses, super pods, ...; RTC630-652);
5. lower the table into a Topology (:func:`rtc.tables.lower_table.lower_table`), plan it
   (:func:`rtc.plan.build_plan`) and run the compiler's checks on it
   (:func:`rtc.checks.run_checks`; RTC2xx, RTC3xx, RTC4xx), with every span mapped back
   into the JSON file;
6. with ``inventory``, compare the table with each server's captures (RTC420-424 via
   :mod:`rtc.checks.inventory_facts`, RTC480-489 from the loaders, RTC647/648).

Values the schema rejected are not used by steps 4-6, so a bad value is reported once.

Inventory layout (``--inventory DIR``): ``DIR/<server_id>/`` holds the captures of that
server (hccn_tool outputs, /etc/hccn.conf, npu-smi outputs; see :mod:`rtc.inventory`).
For a table with one server, ``DIR`` itself may hold the captures instead. Servers without
a folder are reported (RTC647, a warning) and not compared.
"""

from __future__ import annotations


import os
from dataclasses import dataclass, field

from rtc.checks import run_checks
from rtc.checks.ranktable_rules import MISSING_DEVICE_IP, MISSING_SUPER_POD, SERVER_ID_LENGTH
from rtc.diagnostics import Diagnostic, Related, Severity, Span, error, sorted_diagnostics, warning
from rtc.model.presets import presets
from rtc.plan import build_plan
from rtc.report.folding import EXAMPLES, FOLD_AFTER, folded
from rtc.rules import IO_ERROR
from rtc.schema import check_schema
from rtc.schema.explain import RULE_RANGE, subject_of
from rtc.tables.recognise import detect_form, rtc_description
from rtc.tables.jsonload import RULE_ENCODING, SourceMap, load_json
from rtc.tables.lower_table import LOWERED_FORMS, LoweredTable, ids_above_seven, lower_table
from rtc.tables.semantic import (INVENTORY_DEVICE, INVENTORY_SERVER, POD_MEMBERSHIP, check_table,
                                 check_v2_preset, check_version_fit,
                                 hardware_guess_note)
from rtc.textfmt import format_ids

#: A compile check's finding that a table or schema rule at the same place supersedes
#: (the same fact is not reported twice): compile rule id -> table / schema rule ids.
SUPERSEDES = {
    SERVER_ID_LENGTH.code: {RULE_RANGE.code},  # server_id too long: the schema's maxLength
    MISSING_SUPER_POD.code: {POD_MEMBERSHIP.code},  # no super pod: said by super_pod_list
}

__all__ = ["TableReport", "validate_source", "Inventory", "resolve_inventory"]


@dataclass
class TableReport:
    """What validating one file found. ``text`` is the file's text as read (for showing
    source lines), ``doc`` the parsed document (None when it did not parse), ``form`` the
    form checked, ``hardware`` how the hardware preset was chosen, ``lowered`` the table
    lowered to a Topology (None for forms that are not lowered)."""

    file: str
    text: str | None
    doc: object = None
    form: str | None = None
    hardware: str | None = None
    lowered: LoweredTable | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def unreadable(self) -> bool:
        """True when the file could not be read as text: an RTC603 and no document (not
        UTF-8, UTF-16, a NUL byte). The commands exit 2 for it, as for an RTC001 (the
        documented meaning of exit 2: the input could not be read); a lone surrogate
        escape (RTC603 in a parsed document) is a finding like any other (exit 1)."""
        return self.doc is None and any(d.code == RULE_ENCODING.code for d in self.diagnostics)


@dataclass
class Inventory:
    """An ``--inventory`` folder: ``DIR/<server_id>/`` per server, or ``DIR`` itself for a
    single-server table."""

    root: str

    def folders(self) -> set[str]:
        try:
            return {e.name for e in os.scandir(self.root) if e.is_dir() and not e.name.startswith(".")}
        except OSError:
            return set()


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def validate_source(data: bytes | str, filename: str, *, hardware: str | None = None,
                    schema: str | None = None, inventory: Inventory | None = None,
                    fold: bool = False) -> TableReport:
    """Validate one rank table given as bytes (a file's content) or text.

    ``hardware`` is a preset name (``--hardware``), ``schema`` a form name (``--schema``).
    ``fold`` folds repeated schema findings as they are made (one diagnostic with a count
    for more than :data:`rtc.report.folding.FOLD_AFTER` errors of one keyword and path
    pattern, see :func:`rtc.report.folding.folded`), so a table with a finding on each of
    65,536 ranks is not located and explained 65,536 times; what reports fold later reads
    the same. Never raises for bad input: every problem is a diagnostic."""
    text = _decode(data) if isinstance(data, bytes) else data
    report = TableReport(filename, text)
    doc, smap, diags = load_json(data, filename=filename)
    report.doc = doc
    if doc is None:
        # text that is not UTF-8 (or binary) is that, whatever its name (`x.rtc`)
        undecodable = any(d.code == RULE_ENCODING.code for d in diags)
        described = rtc_description(text, filename) if diags and not undecodable else None
        if described is not None:   # an rtc description, whatever its name (`desc.json`)
            diags = [described]
        elif not any(d.severity is Severity.ERROR for d in diags):
            # the document parsed and is JSON `null`: not a rank table (RTC607), like
            # `[1,2,3]` or `42` (detect_form reports it)
            diags.extend(detect_form(None, source_map=smap, filename=filename)[1])
        report.diagnostics = sorted_diagnostics(diags)
        return report
    form, more = detect_form(doc, override=schema, source_map=smap)
    diags.extend(more)
    report.form = form
    if form is None:
        report.diagnostics = sorted_diagnostics(diags)
        return report
    findings = check_schema(doc, form, fold_after=FOLD_AFTER if fold else None,
                            examples=EXAMPLES)
    bad = frozenset(p for f in findings for p in (f.path, *f.more))
    for f in findings:
        d = _schema_diagnostic(f, doc, smap, filename)
        if f.more:
            d = folded(d, [_schema_diagnostic(x, doc, smap, filename) for x in f.examples],
                       len(f.more))
        diags.append(d)
    table_diags = check_table(doc, form, smap, bad)
    lowered = lower_table(doc, form, smap, hardware=hardware, bad_paths=bad,
                          name=os.path.splitext(os.path.basename(filename))[0] or "table")
    report.lowered = lowered
    if lowered is not None:
        report.hardware = lowered.preset_reason
        table_diags += _lowered_findings(lowered, doc, form, smap, bad, hardware, inventory,
                                         diags + table_diags)
    elif hardware is not None:
        table_diags += check_version_fit(doc, form, smap, presets()[hardware], True)
    report.diagnostics = sorted_diagnostics(diags + table_diags)
    return report


def _lowered_findings(lowered: LoweredTable, doc, form: str, smap: SourceMap, bad: frozenset,
                      hardware: str | None, inventory, earlier: list[Diagnostic]) -> list[Diagnostic]:
    """The findings on a lowered table: version against hardware (RTC636), the hardware
    guess (RTC677), 2.0 hardware rules, ``--inventory`` and the compiler's checks (those a
    finding in ``earlier`` already says are dropped); ``bad`` are the paths the schema
    rejected."""
    out: list[Diagnostic] = []
    unfit = check_version_fit(doc, form, smap, lowered.topology.preset, hardware is not None)
    unreadable = any(d.severity is Severity.ERROR for d in unfit)
    if unreadable:  # judging a table the chip cannot read as that hardware is only noise
        unfit = [d._replace(hint=d.hint + " (rtc ran no hardware checks on "
                                     "this table)") for d in unfit]
    out += unfit + check_v2_preset(doc if form == "hccl-v2.0" and not unreadable
                                   else {}, smap, bad, lowered.topology.preset)
    if hardware is None:
        out += hardware_guess_note(doc, form, smap, lowered.preset_reason,
                                   ids_above_seven(doc, form))
    if inventory is not None:
        out += _attach_inventory(lowered, inventory)
    if not unreadable:
        topo_diags = [lowered.resolve(d) for d in _run_checks(lowered)
                      if not _reported_already(d, lowered)]
        out += _drop_superseded(topo_diags, earlier + out)
    return out


def _schema_diagnostic(f, doc, smap, filename: str) -> Diagnostic:
    """The diagnostic of schema finding ``f``: located in the text, with its subject."""
    span = smap.locate_nearest(f.path, key=f.at_key) if smap.parsed else Span.whole_file(filename)
    return Diagnostic(f.code, f.severity, f.message, span, f.hint, (), subject_of(doc, f.path))


def _run_checks(lowered: LoweredTable) -> list[Diagnostic]:
    topo = lowered.topology
    return run_checks(topo, build_plan(topo))


def _reported_already(d: Diagnostic, lowered: LoweredTable) -> bool:
    """A missing-device-ip finding (RTC211) for a server whose devices only lack an address
    because their value was already reported as invalid (RTC615 / RTC634)."""
    if d.code != MISSING_DEVICE_IP.code or not d.subject or not d.subject.startswith("server "):
        return False
    return lowered.missing_ip_reported(d.subject[len("server "):])


def _drop_superseded(topo_diags: list[Diagnostic], others: list[Diagnostic]) -> list[Diagnostic]:
    """Drop a compile check's finding when a table or schema rule that says the same
    thing already sits at the same place (see :data:`SUPERSEDES`)."""
    places: dict[tuple, set] = {}
    for d in others:
        if d.span is not None:
            places.setdefault((d.span.file, d.span.line, d.span.column), set()).add(d.code)
    out = []
    for d in topo_diags:
        codes = SUPERSEDES.get(d.code)
        if codes and d.span is not None and codes & places.get((d.span.file, d.span.line,
                                                                 d.span.column), set()):
            continue
        out.append(d)
    return out


def resolve_inventory(inventory: Inventory, server_ids: list[str]) -> tuple[dict[str, str], str | None]:
    """Which folder holds each server's captures: ({server_id: folder}, problem or None)."""
    folders = inventory.folders()
    found = {sid: os.path.join(inventory.root, sid) for sid in server_ids if sid in folders}
    if found:
        return found, None
    if len(server_ids) == 1:
        return {server_ids[0]: inventory.root}, None
    return {}, (f"the inventory folder {inventory.root} has no subfolder named after any server_id "
                f"of the table ({', '.join(server_ids[:3])}{', ...' if len(server_ids) > 3 else ''})")


def _attach_inventory(lowered: LoweredTable, inventory: Inventory) -> list[Diagnostic]:
    from rtc.inventory import load_inventory_dir  # the parsers load only when asked for

    topo = lowered.topology
    out: list[Diagnostic] = []
    ids = [s.server_id for s in topo.servers]
    where, problem = resolve_inventory(inventory, ids)
    if problem:
        return [error(INVENTORY_SERVER, problem, Span.whole_file(lowered.filename),
                      hint="put each server's captures in INVENTORY/<server_id>/ (a table with one "
                           "server may use the folder itself)")]
    for s, origin in zip(topo.servers, lowered.origins):
        folder = where.get(s.server_id)
        anchor = lowered.resolve_span(s.span)
        if folder is None:
            out.append(warning(INVENTORY_SERVER, f"no captures for server {s.server_id} in "
                               f"{inventory.root}; its values are not checked against the facts",
                               anchor, subject=s.label,
                               hint=f"capture it into {os.path.join(inventory.root, s.server_id)}/"))
            continue
        inv, diags = load_inventory_dir(folder)
        out.extend(diags)
        s.inventory = folder
        s.inventory_facts = inv
        if any(d.device_ip is not None for d in s.devices):
            s.address_sources["device_ip"] = "dsl"
        known = set(inv.devices)
        if known:
            for dev in s.devices:
                if dev.device_id not in known:
                    span = lowered.resolve_span(s.spans["devices"], f"device {dev.device_id}")
                    out.append(warning(INVENTORY_DEVICE, f"{s.server_id} device {dev.device_id} is "
                                       f"not in the server's captures ({folder}), which cover devices "
                                       f"{format_ids(known)}", span,
                                       subject=f"{s.label}, device {dev.device_id}",
                                       related=[Related(Span.whole_file(folder), "inventory folder")],
                                       hint="check the device id, or capture this device too"))
    return out


def load_for_report(path: str) -> tuple[bytes | None, Diagnostic | None]:
    """Read a file for validation (``-``: standard input, named ``<stdin>``): (bytes, None)
    or (None, an RTC001 I/O diagnostic: also for what is not a regular file or is larger
    than :func:`rtc.readfile.max_input_bytes`)."""
    import sys

    from rtc.readfile import read_bytes, read_stream, unreadable

    try:
        if path == "-":
            return read_stream(getattr(sys.stdin, "buffer", None)), None
        return read_bytes(path), None
    except (OSError, ValueError) as exc:
        message, hint = unreadable("<stdin>" if path == "-" else path, exc)
        return None, error(IO_ERROR, message, None, hint=hint)


__all__ += ["load_for_report", "LOWERED_FORMS", "SourceMap", "SUPERSEDES"]
