"""Tell which form of rank table (or topology file) a parsed JSON document is.

The forms and their schemas are listed in :mod:`rtc.schema.forms`.

Version ``"1.1"`` (heterogeneous) is recognised but not supported.

Rules RTC605-RTC609 are declared below with their explanations (``rtc explain RTC605``).

"""

from __future__ import annotations

import difflib
import shlex

from rtc.rules import rule
from rtc.diagnostics import Diagnostic, Span, error, note, warning
from rtc.schema.forms import FORM_DESCRIPTIONS, FORMS

from .jsonload import SourceMap

__all__ = ["detect_form", "rtc_description"]

RULE_UNKNOWN_VERSION = rule("RTC605", "unknown-table-version", "error",
                            "The table's version is not one HCCL knows.", """
    What: `version` is not one HCCL knows ("1.0", "1.1", "1.2", "2.0").
    Why it breaks: HCCL picks its parser by `version` and fails with "version[...] is not
    support".
    Fix: use "1.0" (A2/910/300I Duo, A3 typical networking), "1.2" (A3 SuperPoD) or "2.0"
    (Ascend 950); the hint suggests the closest.""")
RULE_HETEROGENEOUS = rule("RTC606", "heterogeneous-unsupported", "error",
                          "Version \"1.1\" (heterogeneous) tables are not checked.", """
    What: a heterogeneous table (`mode`, `node_list`, ...).
    Why: rtc has no schema or checks for it, so it cannot vouch for the file.
    Fix: none in rtc; validate it with the HCCL tools, or convert the cluster to a 1.0/1.2
    table.""")
RULE_NOT_A_TABLE = rule("RTC607", "not-a-rank-table", "error",
                        "The file is not a rank table or topology file.", """
    What: the top level is not a JSON object, or it has neither `version` nor any key that
    identifies a known form.
    Why: HCCL would read it with the legacy group_list parser and fail.
    Fix: check that the right file was given (`rtc validate` expects a rank table or an A5
    topology file). An rtc description (a `.rtc` file, or text that opens with a block such
    as `cluster NAME {`) is said to be one: compile it with `rtc compile FILE`.""")
RULE_VERSION_CONTENT = rule("RTC608", "version-content-mismatch", "warning",
                            "The version and the keys belong to different forms.", """
    What: e.g. `"version": "2.0"` with a `server_list`, or `"version": "1.0"` with a
    `rank_list`.
    Why: HCCL reads the file with the parser of `version` and will reject or ignore the
    other form's keys.
    Fix: set `version` to match the content.""")
RULE_OVERRIDE = rule("RTC609", "schema-override", "error",
                     "The --schema option names an unknown or a different form.", """
    What: the caller forced a schema; an unknown name is an error (with "did you mean"), and
    a note records when the forced form differs from the detected one.
    Why: validating against the wrong form produces misleading findings.
    Fix: pass one of :data:`FORMS`.""", also={"note": "a known form that differs from the detected one"})

_BY_VERSION = {"1.0": "hccl-v1.0", "1.2": "hccl-v1.2", "2.0": "hccl-v2.0"}


def _span(source_map: SourceMap | None, filename: str | None, path: tuple, *, key=False) -> Span | None:
    if source_map is not None:
        return source_map.locate_nearest(path, key=key)
    return Span.whole_file(filename) if filename else None


def _version_text(v) -> str | None:
    """The version as text; JSON numbers (1.0, 2) are normalised ("1.0", "2.0") so a
    number-typed version still selects a form (the schema then reports the type error)."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return f"{float(v):.1f}"
    return None


def _guess(doc: dict) -> str | None:
    """Form suggested by the keys alone (ignoring ``version``)."""
    if "prefill_device_list" in doc or "decode_device_list" in doc:
        return "pd-ranktable"
    if "server_group_list" in doc:
        return "mindie-global"
    if "peer_list" in doc or "edge_list" in doc:
        return "topo-v2.0"
    if "rank_list" in doc or ("rank_count" in doc and "server_list" not in doc):
        return "hccl-v2.0"
    if "group_list" in doc:
        return "hccl-legacy-lab" if "deploy_mode" in doc else "hccl-legacy-cloud"
    if "server_list" in doc:
        sl = doc.get("server_list")
        a3 = "super_pod_list" in doc or (
            isinstance(sl, list) and any(isinstance(s, dict) and isinstance(s.get("device"), list)
                                         and any(isinstance(d, dict) and "super_device_id" in d
                                                 for d in s["device"]) for s in sl[:4]))
        return "hccl-v1.2" if a3 else "hccl-v1.0"
    return None


def detect_form(doc, *, override: str | None = None, source_map: SourceMap | None = None,
                filename: str | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Detect the form of a parsed document.

    Returns ``(form, diagnostics)``; ``form`` is None when the document cannot be checked
    (not an object, unknown or unsupported version). ``override`` (the CLI's ``--schema``)
    forces a form. ``source_map``/``filename`` are used for spans.
    """
    diags: list[Diagnostic] = []
    if filename is None and source_map is not None:
        filename = source_map.filename
    detected: str | None = None
    if isinstance(doc, dict):
        detected = _detect_dict(doc, diags, source_map, filename, quiet=override is not None)
    elif override is None:
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(doc), "a number")
        diags.append(error(RULE_NOT_A_TABLE,
                           f"the top level is {kind}; a rank table is a JSON object",
                           _span(source_map, filename, ()),
                           hint="pass the rank table file itself (hccl.json / rank_table.json)"))

    if override is None:
        return detected, diags

    if override not in FORM_DESCRIPTIONS:
        close = difflib.get_close_matches(override, FORMS, n=1, cutoff=0.5)
        diags.append(error(RULE_OVERRIDE,
                           f"unknown schema {override!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                           None, hint=f"known schemas: {', '.join(FORMS)}"))
        return None, diags
    if detected is not None and detected != override:
        diags.append(note(RULE_OVERRIDE,
                          f"validating as {override} as requested; the file looks like {detected} "
                          f"({FORM_DESCRIPTIONS[detected]})",
                          _span(source_map, filename, ())))
    return override, diags


def _detect_dict(doc: dict, diags: list[Diagnostic], source_map, filename, *, quiet: bool) -> str | None:
    guessed = _guess(doc)
    # The PD table, the topology file and the global table are recognised by their keys:
    # the PD table's version is "1.2", the topology file's "2.0" and the global table's
    # that of its groups, like real rank tables.
    if guessed in ("pd-ranktable", "topo-v2.0", "mindie-global"):
        return guessed
    if "version" not in doc:
        if guessed is None and not quiet and {"ServerConfig", "BackendConfig"} & set(doc):
            diags.append(note(RULE_MINDIE_CONFIG, "a MindIE config.json fragment (ServerConfig "
                              "/ BackendConfig, as rtc writes mindie-<server>.json), not a "
                              "rank table: not validated", _span(source_map, filename, ()),
                              hint="validate the job's hccl.json; merge this file into the "
                                   "node's MindIE config.json (MIES_CONFIG_JSON_PATH)"))
        elif guessed is None and not quiet:
            diags.append(error(
                RULE_NOT_A_TABLE,
                "not a rank table: no `version` key and none of server_list, rank_list, "
                "group_list, prefill_device_list/decode_device_list or peer_list/edge_list",
                _span(source_map, filename, ()),
                hint="HCCL reads a table without `version` as the legacy group_list form"))
        # a server_list/rank_list table without version: check it against its schema,
        # which reports the missing `version` key.
        return guessed

    raw = doc["version"]
    v = _version_text(raw)
    if v in _BY_VERSION:
        form = _BY_VERSION[v]
        if not quiet and guessed is not None and guessed != form and not (
                {form, guessed} <= {"hccl-v1.0", "hccl-v1.2"}):
            diags.append(warning(
                RULE_VERSION_CONTENT,
                f"`version` is {raw!r} but the keys look like {FORM_DESCRIPTIONS[guessed]}",
                _span(source_map, filename, ("version",)),
                hint=f"HCCL will read the file as version {v}; fix `version` or the content"))
        return form
    if quiet:
        return None
    if v == "1.1":
        diags.append(error(
            RULE_HETEROGENEOUS,
            'version "1.1" (heterogeneous rank table) is recognised but not supported by rtc',
            _span(source_map, filename, ("version",)),
            hint="rtc checks versions 1.0, 1.2 and 2.0; validate a 1.1 table with the HCCL tools"))
        return None
    close = difflib.get_close_matches(v or "", ["1.0", "1.2", "2.0"], n=1, cutoff=0.3)
    suggestion = close[0] if close else None
    if guessed in ("hccl-v1.0", "hccl-v1.2", "hccl-v2.0"):
        suggestion = guessed[len("hccl-v"):]
    diags.append(error(
        RULE_UNKNOWN_VERSION,
        f"unknown rank table version {raw!r}; HCCL accepts \"1.0\", \"1.2\" (A3 SuperPoD), "
        f"\"2.0\" (Ascend 950) and \"1.1\" (heterogeneous)",
        _span(source_map, filename, ("version",)),
        hint=(f"did you mean \"version\": \"{suggestion}\"? " if suggestion else "")
        + "HCCL fails with \"version[...] is not support\""))
    return None

#: The rules this module reports (collected by rtc.catalogue).
RULE_MINDIE_CONFIG = rule("RTC668", "mindie-config-not-a-table", "note",
                          "The file is a MindIE config.json fragment, not a rank table.", """
    What: the JSON object has MindIE's `ServerConfig` / `BackendConfig` keys, as the
    `mindie-<server>.json` files `rtc compile --out-dir` writes for `framework mindie`
    jobs (the cluster-dependent keys of MindIE's config.json, to merge into the node's own).
    Why: it is not read by HCCL, so there is nothing of a rank table to validate; `rtc
    validate out/*.json` of an --out-dir should not fail on it.
    Example: `rtc validate build/mindie-d1.json`.
    Fix: nothing; validate the job's `hccl.json`, and check the description itself with
    `rtc check` (MindIE's rules RTC656-RTC658).""")

def rtc_description(text: str, filename: str) -> Diagnostic | None:
    """RTC607 at the first word when ``text`` is an rtc description rather than a rank
    table (:func:`rtc.syntax.sniff.description_start`); None otherwise (JSON text, YAML
    such as ``cluster: x``)."""
    from rtc.syntax.sniff import description_start

    start = description_start(text, filename)
    if start is None:
        return None
    number, column, word = start
    shown = "- < FILE" if filename.startswith("<") else shlex.quote(filename)  # <stdin>
    return error(RULE_NOT_A_TABLE, f"{filename} is an rtc description, not a rank table",
                 Span(filename, number, column, number, column + len(word)),
                 hint=f"compile it with `rtc compile {shown}` (it writes and checks the "
                      "rank table); `rtc validate` checks rank tables and ConfigMaps")


RULES = (RULE_UNKNOWN_VERSION, RULE_HETEROGENEOUS, RULE_NOT_A_TABLE, RULE_VERSION_CONTENT,
         RULE_OVERRIDE, RULE_MINDIE_CONFIG)
