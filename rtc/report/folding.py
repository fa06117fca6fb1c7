"""Folding repeated findings: one diagnostic per rule and pattern, with a count.

A merged MindSpore table that writes every ``rank_id`` as a JSON number gets the same
RTC610 on each of its 65,536 ranks. Printing 65,536 near-identical blocks helps nobody (and
a GitHub step shows only the first few annotations), so a run's findings are grouped by
*pattern* — rule id, severity, file and the message with every JSON index, number and
address written as a wildcard (``server_list[*].device[*].rank_id: ... ("#")``) — and a
pattern with more than :data:`FOLD_AFTER` findings is reported once: the first finding (in
report order), its message ending "(and 65,535 more like it)", the next
:data:`EXAMPLES` findings as related locations, and :attr:`Diagnostic.repeats` holding how
many findings it stands for beyond itself, so every summary (and ``--format json``'s
``summary`` and per-diagnostic ``count``) still counts all of them.

Patterns with at most :data:`FOLD_AFTER` findings are left as they are: small reports read
exactly as before. ``--no-fold`` turns folding off; ``--max-findings N`` (see
:func:`cap`) keeps the first N diagnostics after folding.
"""

from __future__ import annotations

from typing import Iterable

from rtc.diagnostics import Diagnostic, Related, finding_count, sorted_diagnostics
from rtc.textfmt import number_pattern

#: A pattern folds when it has more findings than this.
FOLD_AFTER = 10
#: How many further findings of a folded pattern are listed as related locations.
EXAMPLES = 3

#: A message's pattern (:func:`rtc.textfmt.number_pattern`).
pattern_of = number_pattern


def _key(d: Diagnostic) -> tuple:
    return (d.code, d.severity, d.span.file if d.span else "", pattern_of(d.message))


def fold(diagnostics: Iterable[Diagnostic], *, after: int = FOLD_AFTER,
         examples: int = EXAMPLES) -> list[Diagnostic]:
    """The diagnostics in report order with every pattern of more than ``after`` findings
    folded into its first finding (see the module docstring). Linear in the number of
    findings (one sort, one pass). Findings already folded by a check keep their count."""
    ordered = sorted_diagnostics(diagnostics)
    keys = [_key(d) for d in ordered]
    groups: dict[tuple, list[Diagnostic]] = {}
    for d, key in zip(ordered, keys):
        groups.setdefault(key, []).append(d)
    out = []
    for d, key in zip(ordered, keys):
        group = groups[key]
        if len(group) <= after:
            out.append(d)
        elif group[0] is d:
            out.append(_folded(group, examples))
    return out


def _folded(group: list[Diagnostic], examples: int) -> Diagnostic:
    first = group[0]
    more = finding_count(group) - 1 - first.repeats
    return folded(first, group[1:1 + examples], more)


def folded(first: Diagnostic, examples: Iterable[Diagnostic], more: int) -> Diagnostic:
    """``first`` standing for ``more`` further findings like it: its message ends "(and
    N more like it)", ``examples`` (findings of the same pattern) become related
    locations, and :attr:`Diagnostic.repeats` grows by ``more``."""
    shown = tuple(Related(d.span, f"also {d.subject}" if d.subject else "also here")
                  for d in examples if d.span is not None)
    message = f"{first.message} (and {more:,} more like it)"
    return first._replace(message=message, related=first.related + shown,
                               repeats=first.repeats + more)


def cap(diagnostics: list[Diagnostic], limit: int | None) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(the first ``limit`` diagnostics, the rest); all are shown when ``limit`` is None.
    Reports print the first list and count the second (see ``ReportContext.omitted``)."""
    if limit is None or len(diagnostics) <= limit:
        return diagnostics, []
    return diagnostics[:limit], diagnostics[limit:]


def omitted_text(omitted: list[Diagnostic]) -> str:
    """'65,530 more findings not shown (--max-findings)', or '' when nothing was cut."""
    n = finding_count(omitted)
    if not n:
        return ""
    return f"{n:,} more finding{'s' if n != 1 else ''} not shown (--max-findings)"
