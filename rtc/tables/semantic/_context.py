"""What the table rules of :mod:`rtc.tables.semantic` share: the check context
:class:`Ctx` (document, source map, schema-rejected paths, findings) and small helpers."""

from __future__ import annotations

from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Span
from rtc.textfmt import format_ids

from ..jsonload import SourceMap
from ..json_values import plain_decimal


@dataclass
class Ctx:
    doc: dict
    smap: SourceMap
    bad: frozenset
    out: list

    @property
    def file(self) -> str:
        return self.smap.filename

    def span(self, path, key: bool = False) -> Span:
        if self.smap.parsed:
            return self.smap.locate_nearest(path, key=key)
        return Span.whole_file(self.file)

    def add(self, d: Diagnostic) -> None:
        self.out.append(d)

    def number(self, path: tuple, value) -> int | None:
        """The decimal at ``path``, None when the schema rejected it, except a bare JSON
        integer (:func:`rtc.tables.lower_table.plain_decimal`)."""
        return plain_decimal(value, path, self.bad)


def ids_of(values) -> str:
    """[0,1,2,5] -> '0..2, 5' (at most 8 pieces shown; :func:`rtc.textfmt.format_ids`)."""
    return format_ids(values, 8)


def value_subspan(span: Span, text: str, item: str) -> Span:
    """Narrow a string value's span (at its opening quote) to ``item`` inside it."""
    off = text.find(item)
    if off < 0 or span.line == 0:
        return span
    col = span.column + 1 + off
    return Span(span.file, span.line, col, span.line, col + max(1, len(item)))


def server_label(s, i: int) -> str:
    sid = s.get("server_id") if isinstance(s, dict) else None
    return sid if isinstance(sid, str) and sid else f"server_list[{i}]"
