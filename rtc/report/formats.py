"""The output formats of ``--format``, in their documented order: ``text`` (compiler style
with the source line, :mod:`rtc.report.text`), ``json`` (``{"tool", "files",
"diagnostics": [Diagnostic.to_dict()], "summary"}``), ``github`` (GitHub Actions workflow
commands) and ``sarif`` (SARIF 2.1.0 for code scanning)."""

from __future__ import annotations

from rtc.diagnostics import Diagnostic
from rtc.report import github, json_report, sarif
from rtc.report.registry import ReportContext, Reporter, summary_line
from rtc.report.text import render_text


def _render_text(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    """Every finding (no limit) as :mod:`rtc.report.text` formats it, then a summary."""
    body = render_text(diagnostics, ctx.sources, limit=max(1, len(diagnostics)))
    return (body + "\n" if body else "") + summary_line(diagnostics, len(ctx.files)) + "\n"


TEXT = Reporter("text", "compiler style: file:line:col: severity[RULE]: message, the source "
                "line, hints", _render_text)

#: Every format, in the order ``--help`` lists them.
REPORTERS: tuple[Reporter, ...] = (TEXT, json_report.REPORTER, github.REPORTER, sarif.REPORTER)


def get_reporter(name: str) -> Reporter | None:
    """The format called ``name``, or None."""
    return next((r for r in REPORTERS if r.name == name), None)


def reporter_names() -> list[str]:
    """The format names, in :data:`REPORTERS` order."""
    return [r.name for r in REPORTERS]
