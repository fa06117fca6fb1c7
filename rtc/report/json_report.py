"""``--format json``: one JSON document for scripts.

::

    {
      "tool": {"name": "rtc", "version": "0.1.0", "command": "validate"},
      "files": [{"file": "hccl.json", "form": "hccl-v1.0", "hardware": "...",
                 "errors": 1, "warnings": 0, "notes": 0}],
      "diagnostics": [<Diagnostic.to_dict()>, ...],     # sorted by file, line, column
      "summary": {"files": 1, "errors": 1, "warnings": 0, "notes": 0, "ok": false}
    }

``ok`` is false when there is any error (after ``--strict`` turned warnings into errors).
The counts include every finding: a folded diagnostic (:mod:`rtc.report.folding`) has a
``count`` and counts that many, and when ``--max-findings`` cut the list the summary also
has ``"omitted"`` (how many findings are not in ``diagnostics``).
Keys are stable; new keys may be added.
"""

from __future__ import annotations

import json
import re

from rtc.diagnostics import Diagnostic, finding_count
from rtc.report.registry import ReportContext, Reporter, counts

_SURROGATE = re.compile("[\ud800-\udfff]")


def document(diagnostics: list[Diagnostic], ctx: ReportContext) -> dict:
    """The report as plain data."""
    per_file: dict[str, list[Diagnostic]] = {}
    everything = list(diagnostics) + list(ctx.omitted)
    for d in everything:
        if d.span is not None:
            per_file.setdefault(d.span.file, []).append(d)
    files = []
    for info in ctx.files:
        entry = {"file": info.file, "form": info.form, "hardware": info.hardware}
        entry.update(counts(per_file.get(info.file, [])))
        files.append(entry)
    total = counts(everything)
    summary = {"files": len(ctx.files), **total, "ok": total["errors"] == 0}
    if ctx.omitted:
        summary["omitted"] = finding_count(ctx.omitted)
    return {
        "tool": {"name": "rtc", "version": ctx.tool_version, "command": ctx.command},
        "files": files,
        "diagnostics": [d.to_dict() for d in diagnostics],
        "summary": summary,
    }


def dumps(doc: dict) -> str:
    """``doc`` as indented JSON text that any UTF-8 stream can take: a lone surrogate (a
    table's ``"\\ud800"``, an undecodable file name), which ``ensure_ascii=False`` would
    leave raw, is written as its ``\\uXXXX`` escape (it can only stand inside a string)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def render_json(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return dumps(document(diagnostics, ctx))


REPORTER = Reporter("json", "one JSON document: files, diagnostics (Diagnostic.to_dict) and a summary", render_json)
