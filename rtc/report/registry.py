"""What every output format (``--format``) is made of: a :class:`Reporter` turns the sorted
diagnostics of a run (each read through :meth:`~rtc.diagnostics.Diagnostic.to_dict`) plus a
:class:`ReportContext` into the text to print. The formats are listed in
:data:`rtc.report.formats.REPORTERS`:

========  ===================================================================
``text``  compiler style with the source line (:mod:`rtc.report.text`)
``json``  ``{"tool", "files", "diagnostics": [Diagnostic.to_dict()], "summary"}``
``github`` GitHub Actions workflow commands (``::error file=...::message``)
``sarif`` SARIF 2.1.0 for code scanning (:mod:`rtc.report.sarif`)
========  ===================================================================

Adding a format is a module with a ``REPORTER = Reporter("csv", "one line per finding",
render_csv)`` and one more entry in that tuple.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from rtc.diagnostics import Diagnostic, Severity, severity_counts, sorted_diagnostics


@dataclass(frozen=True)
class FileInfo:
    """One checked input: its name as given, and (for rank tables) the form it was read as
    and how the hardware preset was chosen."""

    file: str
    form: str | None = None
    hardware: str | None = None


@dataclass(frozen=True)
class ReportContext:
    """What reporters may need besides the diagnostics: the text of each file (for source
    lines), the files checked, the tool version, and the diagnostics ``--max-findings``
    left out (``omitted``: not shown, but counted in every summary)."""

    sources: dict = field(default_factory=dict)
    files: tuple = ()
    tool_version: str = ""
    command: str = "validate"
    omitted: tuple = ()

    @classmethod
    def make(cls, sources: dict | None = None, files: Iterable[FileInfo] = (),
             command: str = "validate", omitted: Iterable[Diagnostic] = ()) -> "ReportContext":
        from rtc import __version__

        return cls(dict(sources or {}), tuple(files), __version__, command, tuple(omitted))


Render = Callable[[list[Diagnostic], ReportContext], str]


@dataclass(frozen=True)
class Reporter:
    """A named output format. ``render`` gets the diagnostics sorted."""

    name: str
    description: str
    render: Render

    def __call__(self, diagnostics: Iterable[Diagnostic], ctx: ReportContext) -> str:
        return self.render(sorted_diagnostics(diagnostics), ctx)


def counts(diagnostics: Iterable[Diagnostic]) -> dict[str, int]:
    """{"errors": e, "warnings": w, "notes": n}; a folded finding counts ``1 + repeats``."""
    out = severity_counts(diagnostics)
    return {"errors": out[Severity.ERROR], "warnings": out[Severity.WARNING],
            "notes": out[Severity.NOTE]}


def summary_line(diagnostics: Iterable[Diagnostic], nfiles: int) -> str:
    """'rtc: 2 errors, 1 warning (3 files checked)'."""
    from rtc.report.text import summary  # text imports nothing of this package

    return f"rtc: {summary(diagnostics)} ({nfiles:,} file{'s' if nfiles != 1 else ''} checked)"
