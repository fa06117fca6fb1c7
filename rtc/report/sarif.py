"""``--format sarif``: a SARIF 2.1.0 log for code scanning (e.g. GitHub's upload-sarif).

One run; ``tool.driver`` names rtc and lists, as ``rules``, every rule that has a result
(from :func:`rtc.rules.all_rules`: id, name, shortDescription = the one-line summary,
fullDescription = the explanation ``rtc explain`` prints, help = its "Fix:" part, and the
default level). Each result has ``ruleId``/``ruleIndex``, ``level`` (error, warning,
note), ``message.text`` (the message, then "where:", "hint:" lines) and a
``physicalLocation`` with the file's URI (relative paths stay relative, with ``uriBaseId``
``%SRCROOT%``) and a ``region`` (startLine, startColumn, and the end when known).
Related locations (the first of a duplicate, an inventory fact) are ``relatedLocations``.
Columns count Unicode code points (``columnKind``), as rtc's spans do. A folded finding
(:mod:`rtc.report.folding`) has ``occurrenceCount``; findings ``--max-findings`` left out
are counted in the run's ``properties.omittedFindings``.
``tests/data/sarif/`` pins the OASIS schema the output is validated against in the tests.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from rtc.diagnostics import Diagnostic, Severity, Span, finding_count
from rtc.report.json_report import dumps
from rtc.report.registry import ReportContext, Reporter

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
_FIX = re.compile(r"(?m)^Fix:\s*(.*(?:\n(?!What:|Why|Example:).*)*)")


def artifact_uri(path: str) -> tuple[str, bool]:
    """(URI, relative?) for a file name as the user gave it."""
    if path.startswith("<") and path.endswith(">"):
        return _quote(path.strip("<>"), ""), True
    if os.path.isabs(path):
        return Path(path).as_uri(), False
    return _quote(path.replace(os.sep, "/"), "/"), True


def _quote(text: str, safe: str) -> str:
    """Percent-encoded UTF-8 of ``text``; an undecodable byte of a file name (the surrogate
    os.fsdecode makes of it) is encoded as the byte it was, another lone surrogate as the
    text of its escape."""
    try:
        return quote(text, safe=safe, errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(text, safe=safe, errors="backslashreplace")


def _location(span: Span) -> dict:
    uri, relative = artifact_uri(span.file)
    artifact = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "%SRCROOT%"
    region = {"startLine": max(1, span.line), "startColumn": max(1, span.column)}
    if span.end_line >= span.line and span.end_column > 0 and (
            span.end_line > span.line or span.end_column > span.column):
        region["endLine"] = span.end_line
        region["endColumn"] = span.end_column
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _rule_entry(code: str) -> dict:
    from rtc.catalogue import get_rule  # loads every rule module: only here

    r = get_rule(code)
    if r is None:
        return {"id": code}
    m = _FIX.search(r.explanation)
    help_text = (m.group(1).strip() if m else r.summary) + f"\n(rtc explain {r.code})"
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.explanation},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": _LEVEL[r.severity]},
    }


def document(diagnostics: list[Diagnostic], ctx: ReportContext) -> dict:
    """The SARIF log as plain data."""
    codes = sorted({d.code for d in diagnostics})
    index = {c: n for n, c in enumerate(codes)}
    results = []
    for d in diagnostics:
        lines = [d.message]
        if d.subject:
            lines.append(f"where: {d.subject}")
        if d.hint:
            lines.append(f"hint: {d.hint}")
        res: dict = {"ruleId": d.code, "ruleIndex": index[d.code], "level": _LEVEL[d.severity],
                     "message": {"text": "\n".join(lines)}}
        if d.span is not None:
            res["locations"] = [_location(d.span)]
        if d.repeats:  # a folded finding: SARIF's own field for "seen this many times"
            res["occurrenceCount"] = 1 + d.repeats
        related = []
        for n, r in enumerate(d.related):
            if r.span is None:
                continue
            loc = _location(r.span)
            loc["id"] = n
            loc["message"] = {"text": r.message}
            related.append(loc)
        if related:
            res["relatedLocations"] = related
        results.append(res)
    artifacts = []
    for info in ctx.files:
        uri, relative = artifact_uri(info.file)
        loc = {"uri": uri}
        if relative:
            loc["uriBaseId"] = "%SRCROOT%"
        artifacts.append({"location": loc})
    run = {
        "tool": {"driver": {
            "name": "rtc",
            "version": ctx.tool_version,
            "semanticVersion": ctx.tool_version,
            "rules": [_rule_entry(c) for c in codes],
        }},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if artifacts:
        run["artifacts"] = artifacts
    if ctx.omitted:
        run["properties"] = {"omittedFindings": finding_count(ctx.omitted)}
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return dumps(document(diagnostics, ctx))


REPORTER = Reporter("sarif", "SARIF 2.1.0 log (tool.driver.rules + results) for code scanning", render_sarif)
