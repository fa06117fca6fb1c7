"""Compiler-style text for people::

    cluster.rtc:14:13: error[RTC208]: device IP 6.0.2.1 of atlas-02 device 0 is also ...
       14 |   device_ip 6.0.2.1 step 2
          |             ^^^^^^^^^^^^^^
       = where: server atlas-02, device 0
       = note: atlas-01 device 0 (cluster.rtc:8:13)
       = hint: every NPU needs its own RoCE address; ...

Colour (via rich) only when the stream is a terminal and NO_COLOR is unset.
"""

from __future__ import annotations

from typing import Iterable

from rtc.diagnostics import Diagnostic, Severity, severity_counts, sorted_diagnostics
from rtc.textfmt import printable, source_lines

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.NOTE: "bold cyan"}


#: At most this many characters of a source line are shown (a window around the caret).
MAX_SOURCE = 120
#: Messages, subjects, notes and hints longer than this are cut in the middle.
MAX_MESSAGE = 400
_ELLIPSIS = "..."


def _window(src: str, column: int, width: int) -> tuple[str, int, int]:
    """Cut a long source line to at most :data:`MAX_SOURCE` characters around the caret:
    returns (shown text, caret column in it, caret width); "..." marks cut sides."""
    if len(src) <= MAX_SOURCE:
        return src, column, width
    room = MAX_SOURCE - 2 * len(_ELLIPSIS)
    width = min(width, room - 20)  # keep some context before the caret
    start = max(0, column - 1 - max(20, (room - width) // 2))
    start = min(start, len(src) - room)
    end = min(len(src), start + room)
    left = _ELLIPSIS if start > 0 else ""
    if not left:  # nothing cut on the left: use that room for text
        end = min(len(src), MAX_SOURCE - len(_ELLIPSIS))
    right = _ELLIPSIS if end < len(src) else ""
    shown = left + src[start:end] + right
    col = column - start + len(left)
    width = max(1, min(width, end - (column - 1)))
    return shown, col, width


def _clip(text: str, limit: int) -> str:
    """``text`` cut in the middle to at most ``limit`` characters (user values can be huge)."""
    if len(text) <= limit:
        return text
    keep = limit - len(_ELLIPSIS) - 20
    head = keep * 2 // 3
    return (f"{text[:head]}{_ELLIPSIS}({len(text) - keep} characters cut)"
            f"{_ELLIPSIS}{text[len(text) - (keep - head):]}")


def _quoted_line(d: Diagnostic, line: str) -> list[tuple[str, str | None]]:
    """The source line of ``d``'s span and the caret line under it."""
    # Control bytes (a UTF-16 file read as text, a stray NUL) would garble the terminal:
    # one replacement character each keeps the caret's column.
    src = "".join(c if c.isprintable() else "\ufffd" for c in line.expandtabs(1))
    num = str(d.span.line)
    width = 1
    if d.span.end_line == d.span.line and d.span.end_column > d.span.column:
        width = d.span.end_column - d.span.column
    width = max(1, min(width, max(1, len(src) - d.span.column + 1)))
    src, col, width = _window(src, d.span.column, width)
    pad, under = _cells(src[:col - 1]), max(1, _cells(src[col - 1:col - 1 + width]))
    return [(f" {num} | {src}", None),
            (f" {' ' * len(num)} | {' ' * pad}{'^' * under}", _STYLE[d.severity])]


def _cells(text: str) -> int:
    """The terminal columns ``text`` takes: two for a wide (CJK) character, none for a
    combining mark, one for the rest (Unicode East Asian Width), so carets stay under
    their word on a line of Chinese names."""
    if text.isascii():
        return len(text)
    from unicodedata import combining, east_asian_width

    return sum(0 if combining(c) else 2 if east_asian_width(c) in "WF" else 1 for c in text)


class SourceLines:
    """The lines of each source file, split once on first use (rendering 65,536 findings
    of one table must not split its 20 MB text 65,536 times)."""

    def __init__(self, sources: dict[str, str]):
        self.sources = sources
        self._lines: dict[str, list[str]] = {}

    def get(self, file: str) -> list[str] | None:
        """The lines of ``file`` (:func:`rtc.textfmt.source_lines`: cut where lark and the
        JSON reader count lines), or None when its text is unknown."""
        lines = self._lines.get(file)
        if lines is None:
            text = self.sources.get(file)
            if text is None:
                return None
            lines = self._lines[file] = source_lines(text)
        return lines


def format_diagnostic(d: Diagnostic, sources: "dict[str, str] | SourceLines") -> list[tuple[str, str | None]]:
    """The lines of one diagnostic as (text, rich style or None). ``sources`` maps file
    names to their text; pass a :class:`SourceLines` when formatting many diagnostics."""
    lines: list[tuple[str, str | None]] = []
    where = f"{d.span}: " if d.span else "rtc: "
    lines.append((f"{where}{d.severity.label}[{d.code}]: {_clip(d.message, MAX_MESSAGE)}",
                  _STYLE[d.severity]))
    if not isinstance(sources, SourceLines):
        sources = SourceLines(sources)
    if d.span is not None:
        src_lines = sources.get(d.span.file)
        if src_lines is not None and 0 < d.span.line <= len(src_lines):
            lines.extend(_quoted_line(d, src_lines[d.span.line - 1]))
    if d.subject:
        lines.append((f"   = where: {_clip(d.subject, MAX_MESSAGE)}", None))
    for r in d.related:
        lines.append((f"   = note: {_clip(r.message, MAX_MESSAGE)} ({r.span})", None))
    if d.hint:
        lines.append((f"   = hint: {_clip(d.hint, MAX_MESSAGE)}", "green"))
    return lines


def summary(diagnostics: Iterable[Diagnostic]) -> str:
    """'2 errors, 1 warning' (or 'no problems found'); a folded finding counts
    ``1 + repeats``."""
    by = severity_counts(diagnostics)
    e, w, n = by[Severity.ERROR], by[Severity.WARNING], by[Severity.NOTE]
    parts = []
    if e:
        parts.append(f"{e:,} error{'s' if e != 1 else ''}")
    if w:
        parts.append(f"{w:,} warning{'s' if w != 1 else ''}")
    if n:
        parts.append(f"{n:,} note{'s' if n != 1 else ''}")
    return ", ".join(parts) if parts else "no problems found"


def report_lines(diagnostics: Iterable[Diagnostic], sources: dict[str, str], *,
                 limit: int = 200):
    """``(text, rich style or None)`` of each line of a text report: the diagnostics
    sorted, each followed by an empty line, at most ``limit`` shown ("... and N more");
    every text :func:`printable`."""
    ds = sorted_diagnostics(diagnostics)
    index = SourceLines(sources)
    for d in ds[:limit]:
        for text, style in format_diagnostic(d, index):
            yield printable(text), style
        yield "", None
    if len(ds) > limit:
        yield f"... and {len(ds) - limit} more", None


def render_text(diagnostics: Iterable[Diagnostic], sources: dict[str, str], *,
                limit: int = 200) -> str:
    """All diagnostics as plain text, sorted, at most ``limit`` shown ("... and N more")."""
    return "\n".join(text for text, _style in report_lines(diagnostics, sources, limit=limit))


def print_diagnostics(diagnostics: Iterable[Diagnostic], sources: dict[str, str], *,
                      stream=None, limit: int = 200) -> None:
    """Print sorted diagnostics to ``stream`` (default stderr) with colour when it is a
    terminal (or ``FORCE_COLOR`` is set, as rich has it); otherwise the same text is
    written plainly (:func:`render_text`), without importing rich (~20 ms of a run that
    ends with a note)."""
    import os
    import sys

    stream = stream or sys.stderr
    if not _is_terminal(stream) and not os.environ.get("FORCE_COLOR"):
        text = render_text(diagnostics, sources, limit=limit)
        if text:
            stream.write(text + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for text, style in report_lines(diagnostics, sources, limit=limit):
        console.print(Text(text, style=style or ""))


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):   # no isatty, or closed
        return False
