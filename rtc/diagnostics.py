"""Diagnostics: the one record every stage of rtc reports problems with.

A :class:`Diagnostic` carries a rule id (``RTCnnn``), a :class:`Severity`, a message,
the :class:`Span` it concerns (file, 1-based line and column), an optional hint (how to
fix it) and related spans (the other claimant of a duplicate, the inventory fact that
disagrees, ...). Checks never print: they return diagnostics. Reporters (``rtc.report``)
turn them into text, JSON, GitHub annotations or SARIF from :meth:`Diagnostic.to_dict`.

Rule id ranges (never reused):

* ``RTC0xx`` usage, I/O and internal errors
* ``RTC1xx`` syntax and the shape of the language (unknown keys, bad literals)
* ``RTC2xx`` structural checks of the cluster description (duplicates, counts, IPs)
* ``RTC3xx`` parallel groups and placement
* ``RTC4xx`` network, ports, inventory
* ``RTC5xx`` launch, environment and disaggregation settings
* ``RTC6xx`` existing rank tables (``rtc validate``)
"""

from __future__ import annotations

import enum
from typing import Iterable, NamedTuple


class Severity(enum.IntEnum):
    """How bad a finding is. Errors make a run exit 1; warnings and notes do not
    (unless ``--strict`` promotes warnings)."""

    NOTE = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return {0: "note", 1: "warning", 2: "error"}[int(self)]


class Span(NamedTuple):
    """A location in a source file. ``line`` and ``column`` are 1-based; ``end_line`` /
    ``end_column`` point one past the last character (0 when unknown). ``file`` is the
    path as the user gave it (or a label such as ``<stdin>``)."""

    file: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @classmethod
    def whole_file(cls, file: str) -> "Span":
        """A span for findings that concern a file as a whole (line 1, column 1)."""
        return cls(file, 1, 1)


class Related(NamedTuple):
    """A secondary location with a short label, e.g. the first definition of a duplicate."""

    span: Span
    message: str


class Diagnostic(NamedTuple):
    """One finding.

    ``code`` is the rule id (``RTC203``); ``subject`` optionally names what the finding is
    about in cluster terms (``server atlas-02, device 3, rank 11``) so reports can show
    it even when the span points at a family or a rank table line. ``repeats`` is how many
    more findings of the same pattern this one stands for once reports fold them
    (:mod:`rtc.report.folding`); summaries count ``1 + repeats``.
    """

    code: str
    severity: Severity
    message: str
    span: Span | None = None
    hint: str | None = None
    related: tuple[Related, ...] = ()
    subject: str | None = None
    repeats: int = 0

    def sort_key(self) -> tuple:
        s = self.span
        return (
            s.file if s else "",
            s.line if s else 0,
            s.column if s else 0,
            -int(self.severity),
            self.code,
            self.message,
        )

    def with_severity(self, severity: Severity) -> "Diagnostic":
        """Return a copy with another severity (used by policies and ``--strict``)."""
        return self._replace(severity=severity)

    def to_dict(self) -> dict:
        """The one plain-data record every reporter works from (stable keys). A span's
        end is never before its start: an unknown end (0) is written as the start. A
        folded finding also has ``"count"``: how many findings it stands for (itself
        included)."""
        def span_dict(s: Span | None) -> dict | None:
            if s is None:
                return None
            end = (s.end_line, s.end_column)
            if s.end_line <= 0 or s.end_column <= 0 or end < (s.line, s.column):
                end = (s.line, s.column)
            return {"file": s.file, "line": s.line, "column": s.column,
                    "end_line": end[0], "end_column": end[1]}

        out = {
            "code": self.code,
            "severity": self.severity.label,
            "message": self.message,
            "span": span_dict(self.span),
            "hint": self.hint,
            "subject": self.subject,
            "related": [{"span": span_dict(r.span), "message": r.message} for r in self.related],
        }
        if self.repeats:
            out["count"] = 1 + self.repeats
        return out


def _code(rule) -> str:
    """The rule id of a :class:`rtc.rules.Rule` (or of an id given as text, for tests)."""
    return getattr(rule, "code", rule)


def error(rule, message: str, span: Span | None = None, *, hint: str | None = None,
          related: Iterable[Related] = (), subject: str | None = None) -> Diagnostic:
    """An error-severity :class:`Diagnostic` of ``rule`` (a :class:`rtc.rules.Rule`)."""
    return Diagnostic(_code(rule), Severity.ERROR, message, span, hint, tuple(related), subject)


def warning(rule, message: str, span: Span | None = None, *, hint: str | None = None,
            related: Iterable[Related] = (), subject: str | None = None) -> Diagnostic:
    """A warning-severity :class:`Diagnostic` of ``rule``."""
    return Diagnostic(_code(rule), Severity.WARNING, message, span, hint, tuple(related),
                      subject)


def note(rule, message: str, span: Span | None = None, *, hint: str | None = None,
         related: Iterable[Related] = (), subject: str | None = None) -> Diagnostic:
    """A note-severity :class:`Diagnostic` of ``rule``."""
    return Diagnostic(_code(rule), Severity.NOTE, message, span, hint, tuple(related), subject)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.severity is Severity.ERROR for d in diagnostics)


def finding_count(diagnostics: Iterable[Diagnostic]) -> int:
    """How many findings ``diagnostics`` stand for: a folded one counts ``1 + repeats``."""
    return sum(1 + d.repeats for d in diagnostics)


def severity_counts(diagnostics: Iterable[Diagnostic]) -> dict[Severity, int]:
    """Findings per severity (every severity present as a key), folded ones in full."""
    out = {Severity.ERROR: 0, Severity.WARNING: 0, Severity.NOTE: 0}
    for d in diagnostics:
        out[d.severity] += 1 + d.repeats
    return out


def sorted_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics in report order: by file, line, column, then severity (errors first)."""
    return sorted(diagnostics, key=Diagnostic.sort_key)
