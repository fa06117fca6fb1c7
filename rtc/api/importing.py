"""``rtc import``'s pipeline: validate the table (:func:`rtc.api.validate_source`), describe
it in the rtc language (:func:`rtc.tables.importer.describe_table`), and compile the
description back to check that it gives the same table (RTC663 when not; nothing is
returned then).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.api.compiling import compile_text, rank_table
from rtc.api.validate_k8s import configmap_tables, initializing, moved
from rtc.api.validating import validate_source
from rtc.diagnostics import Diagnostic, Severity, Span, error
from rtc.tables.configmap import looks_like_yaml
from rtc.tables.importer import (IMPORT_FORM, IMPORT_INVALID, IMPORT_ROUND_TRIP,
                                 IMPORT_SHAPE, describe_table, round_trip_difference)
from rtc.tables.recognise import rtc_description


@dataclass
class ImportResult:
    """The description text (None when refused) and every diagnostic (validation findings,
    refusals, dropped keys)."""

    text: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    source_text: str | None = None
    form: str | None = None
    #: The file could not be read as text (not UTF-8: :attr:`TableReport.unreadable`).
    unreadable: bool = False

    @property
    def ok(self) -> bool:
        return self.text is not None


def import_table(data: bytes | str, filename: str, *, hardware: str | None = None,
                 output_name: str = "cluster.rtc", cluster_name: str | None = None,
                 configmap: str | None = None) -> ImportResult:
    """Import one rank table (see :mod:`rtc.tables.importer`): a JSON file, or the
    ConfigMap YAML ``rtc validate`` reads (``kubectl get cm rings-config-JOB -o yaml``),
    whose findings are located in the YAML; ``configmap`` names the ConfigMap to import
    when the file holds several. Never raises for bad input: an invalid table (RTC660),
    another form or an ambiguous file (RTC661) or a layout the language cannot express
    (RTC662) gives no text."""
    raw = data if isinstance(data, bytes) else data.encode()
    options = dict(hardware=hardware, output_name=output_name, cluster_name=cluster_name)
    if looks_like_yaml(raw, filename):
        return _import_configmap(raw, filename, configmap, **options)
    if configmap is not None:
        return ImportResult(None, [error(IMPORT_FORM, f"{filename} is a rank table, not a "
                                         f"ConfigMap file; --configmap {configmap} picks one "
                                         "ConfigMap of a YAML or JSON ConfigMap file", None,
                                         hint="leave --configmap out")])
    return _import_json(data, filename, **options)


def _import_configmap(data: bytes, filename: str, configmap: str | None,
                      **options) -> ImportResult:
    """:func:`import_table` of a ConfigMap file: its one completed rank table (or the one
    named ``configmap``), imported as a JSON table, every location moved into the YAML.
    Tables still initializing are skipped with an RTC774 note when another is completed."""
    text = data.decode("utf-8", errors="replace")
    text = text[1:] if text.startswith("\ufeff") else text
    described = rtc_description(text, filename)     # an .rtc file given by mistake
    if described is not None:
        return ImportResult(None, [described], text)
    tables, diags, pending = configmap_tables(text, filename)
    if configmap is not None:
        names = [t.name for t in tables + pending]
        if configmap not in names:
            diags.append(error(IMPORT_FORM, f"{filename} has no ConfigMap {configmap} with a "
                               f"rank table (it has: {', '.join(names) or 'none'})", None,
                               hint="give one of those names to --configmap"))
        tables = [t for t in tables if t.name == configmap]
        pending = [t for t in pending if t.name == configmap]
    diags += [initializing(t, filename, True) if not tables else
              initializing(t, filename, False)._replace(
                  message=f"ConfigMap {t.name} is still initializing: not imported")
              for t in pending]
    if len(tables) > 1:
        diags.append(error(IMPORT_FORM, f"{filename} holds {len(tables)} ConfigMaps with a "
                           f"rank table ({', '.join(t.name for t in tables)}); rtc import "
                           "reads one table", Span(filename, *tables[1].where.position(1, 1)),
                           hint=f"pick one: rtc import {filename} --configmap {tables[0].name}"))
    if not tables or any(d.severity is Severity.ERROR for d in diags):
        return ImportResult(None, diags, text)
    emb = tables[0]
    inner = _import_json(emb.text, filename, **options)
    inner.diagnostics = diags + [moved(d, emb, filename) for d in inner.diagnostics]
    inner.source_text = text
    inner.form = f"configmap:{inner.form}" if inner.form else None
    return inner


def _import_json(data: bytes | str, filename: str, *, hardware: str | None,
                 output_name: str, cluster_name: str | None) -> ImportResult:
    """:func:`import_table` of a JSON table (a rank table or MindIE global rank table)."""
    rep = validate_source(data, filename, hardware=hardware, fold=True)   # as rtc validate
    diags = list(rep.diagnostics)
    result = ImportResult(None, diags, rep.text, rep.form, rep.unreadable)
    if rep.doc is not None and rep.form is not None and \
            rep.form not in ("hccl-v1.0", "hccl-v1.2", "hccl-v2.0", "mindie-global"):
        diags.append(error(IMPORT_FORM, "rtc import reads version 1.0, 1.2 and 2.0 rank tables "
                           "and MindIE global rank tables; this "
                           f"file is {rep.form}", None,
                           hint="rtc validate still checks it; edit it by hand"))
        return result
    if any(d.severity is Severity.ERROR for d in diags) or rep.doc is None or rep.form is None:
        # a folded finding counts 1 + repeats, as in the summary line (which adds this one)
        n = sum(1 + d.repeats for d in diags if d.severity is Severity.ERROR)
        listed = f"the {n} errors below" if n != 1 else "the error below"
        diags.append(error(IMPORT_INVALID, f"{filename} is not a valid rank table ({listed}); "
                           "nothing was imported", None,
                           hint="fix the findings listed with this one (rtc validate shows "
                                "them too), then import again"))
        return result
    if rep.form == "hccl-v2.0":
        result.text = _import_v2(rep.doc, filename, diags, hardware, output_name, cluster_name,
                                 rep.lowered.source_map if rep.lowered else None)
        return result
    if rep.form == "mindie-global":
        result.text = _import_global(rep.doc, filename, diags, hardware, output_name,
                                     cluster_name, rep.text)
        return result
    text = describe_table(rep.doc, rep.lowered.source_map, rep.lowered.topology.preset, filename,
                          diags, hardware=hardware, cluster_name=cluster_name)
    if text is None:
        return result
    problem = round_trip_problem(text, output_name, rep.doc, rep.doc["version"])
    if problem is not None:
        diags.append(error(IMPORT_ROUND_TRIP, f"internal error: the generated description does not "
                           f"compile back to the table ({problem}); nothing was written", None,
                           hint="please report this with the table"))
        return result
    result.text = text
    return result


def _import_v2(doc: dict, filename: str, diags: list, hardware: str | None, output_name: str,
               cluster_name: str | None, smap=None) -> str | None:
    """A 2.0 table's description (:mod:`rtc.tables.import_v2`), compiled back and compared
    (without ``status``); RTC662 when the preset does not give the same table."""
    from rtc.tables.import_v2 import path_text, describe_v2, first_difference_at

    locate = smap.locate_nearest if smap is not None and smap.parsed else None
    text = describe_v2(doc, filename, diags, hardware=hardware, cluster_name=cluster_name,
                       locate=locate)
    if text is None:
        return None
    res = compile_text(text, output_name)
    bad = [d for d in res.diagnostics if d.severity is Severity.ERROR]
    if bad or res.topology is None:  # e.g. IPv4 at level 0 where the preset has UB EIDs
        diags.append(error(IMPORT_SHAPE, "the 2.0 table does not fit an rtc description: the "
                           "description rtc can write from it does not compile ("
                           + (bad[0].message if bad else "no topology") + ")",
                           None, hint="rtc writes the preset's levels (UB EIDs at levels 0-1, "
                           "RoCE device_ip at level 3); keep editing this table by hand"))
        return None
    _, built, _problems = rank_table(res.topology, None)
    want = {k: v for k, v in doc.items() if k != "status"}
    got = {k: v for k, v in built.items() if k != "status"}
    diff = first_difference_at(want, got)
    if diff is not None:
        path, what = diff
        diags.append(error(IMPORT_SHAPE, f"{path_text(path)}: the 2.0 table is laid out "
                           f"otherwise than hardware {res.topology.preset.name} compiles it: "
                           f"{what}", locate(path) if locate else None,
                           hint="rtc writes the preset's ports, planes and net types; keep "
                                "editing this table by hand (rtc validate still checks it)"))
        return None
    return text


def _groups_span(source_text: str | None, filename: str):
    """Where ``server_group_list`` is in the file (the whole file when it cannot be found)."""
    from rtc.diagnostics import Span
    from rtc.tables.jsonload import load_json

    if source_text is None:
        return Span.whole_file(filename)
    _doc, smap, _d = load_json(source_text, filename=filename)
    return smap.locate_nearest(("server_group_list",), key=True) if smap.parsed else \
        Span.whole_file(filename)


def _import_global(doc: dict, filename: str, diags: list, hardware: str | None,
                   output_name: str, cluster_name: str | None,
                   source_text: str | None = None) -> str | None:
    """A MindIE global table's description (:mod:`rtc.tables.import_global`), compiled back
    to its global table and compared; RTC659 (at ``server_group_list``) when it has fewer
    than two groups or compiles back otherwise."""
    from rtc.emit import global_ranktable
    from rtc.tables.contracts import numbering as _numbering
    from rtc.tables.import_global import IMPORT_GLOBAL, instances_of, compare, describe_global

    n = len(instances_of(doc))
    if n < 2:
        diags.append(error(IMPORT_GLOBAL, f"the global table has {n} group{'s' if n != 1 else ''}"
                           "; rtc imports a global table as a prefill/decode pair of MindIE "
                           "jobs (the first group prefill, the others decode), which needs "
                           "two groups or more", _groups_span(source_text, filename),
                           hint="import the instance's own hccl.json instead (`rtc import "
                                "hccl.json`), or add the decode group"))
        return None
    text = describe_global(doc, filename, diags, hardware=hardware, cluster_name=cluster_name)
    if text is None:
        return None
    res = compile_text(text, output_name)
    bad = [d for d in res.diagnostics if d.severity is Severity.ERROR]
    pairs = [p for p in res.plan.pairs if p.prefill and p.decode] if res.plan else []
    numbering = "omniinfer" if _numbering(doc) == "omniinfer" else "mindie-motor"
    diff = (f"compiling it fails: {bad[0].code} {bad[0].message}" if bad else
            compare(doc, global_ranktable.build(res.topology, pairs[0], numbering)
                    if pairs else None))
    if diff is not None:
        diags.append(error(IMPORT_GLOBAL, "the global rank table does not fit an rtc "
                           f"description: {diff}", _groups_span(source_text, filename),
                           hint="keep editing this table by hand (rtc validate still checks "
                                "it)"))
        return None
    return text


def round_trip_problem(text: str, name: str, doc: dict, version: str) -> str | None:
    """None when ``text`` compiles to a table equal to ``doc`` in everything the round trip
    keeps; otherwise what differs."""
    res = compile_text(text, name)
    if not res.ok:
        bad = [d for d in res.diagnostics if d.severity is Severity.ERROR]
        return f"compiling it fails: {bad[0].code} {bad[0].message}" if bad else "compiling it fails"
    _, built, problems = rank_table(res.topology, None)
    if problems:
        return problems[0].message
    return round_trip_difference(doc, version, built)
