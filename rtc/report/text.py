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

from rtc.diagnostics import Diagnostic, Severity, sorted_diagnostics

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.NOTE: "bold cyan"}


def format_diagnostic(d: Diagnostic, sources: dict[str, str]) -> list[tuple[str, str | None]]:
    """The lines of one diagnostic as (text, rich style or None)."""
    lines: list[tuple[str, str | None]] = []
    where = f"{d.span}: " if d.span else "rtc: "
    lines.append((f"{where}{d.severity.label}[{d.code}]: {d.message}", _STYLE[d.severity]))
    if d.span is not None:
        text = sources.get(d.span.file)
        if text is not None:
            src_lines = text.splitlines()
            if 0 < d.span.line <= len(src_lines):
                src = src_lines[d.span.line - 1].expandtabs(1)
                num = str(d.span.line)
                pad = " " * len(num)
                width = 1
                if d.span.end_line == d.span.line and d.span.end_column > d.span.column:
                    width = d.span.end_column - d.span.column
                width = max(1, min(width, max(1, len(src) - d.span.column + 1)))
                lines.append((f" {num} | {src}", None))
                lines.append((f" {pad} | {' ' * (d.span.column - 1)}{'^' * width}", _STYLE[d.severity]))
    if d.subject:
        lines.append((f"   = where: {d.subject}", None))
    for r in d.related:
        lines.append((f"   = note: {r.message} ({r.span})", None))
    if d.hint:
        lines.append((f"   = hint: {d.hint}", "green"))
    return lines


def summary(diagnostics: Iterable[Diagnostic]) -> str:
    """'2 errors, 1 warning' (or 'no problems found')."""
    ds = list(diagnostics)
    e = sum(d.severity is Severity.ERROR for d in ds)
    w = sum(d.severity is Severity.WARNING for d in ds)
    n = sum(d.severity is Severity.NOTE for d in ds)
    parts = []
    if e:
        parts.append(f"{e} error{'s' if e != 1 else ''}")
    if w:
        parts.append(f"{w} warning{'s' if w != 1 else ''}")
    if n:
        parts.append(f"{n} note{'s' if n != 1 else ''}")
    return ", ".join(parts) if parts else "no problems found"


def render_text(diagnostics: Iterable[Diagnostic], sources: dict[str, str], *,
                limit: int = 200) -> str:
    """All diagnostics as plain text, sorted, at most ``limit`` shown ("... and N more")."""
    ds = sorted_diagnostics(diagnostics)
    out = []
    for d in ds[:limit]:
        out.extend(t for t, _ in format_diagnostic(d, sources))
        out.append("")
    if len(ds) > limit:
        out.append(f"... and {len(ds) - limit} more")
    return "\n".join(out)


def print_diagnostics(diagnostics: Iterable[Diagnostic], sources: dict[str, str], *,
                      stream=None, limit: int = 200) -> None:
    """Print sorted diagnostics to ``stream`` (default stderr) with colour when it is a
    terminal."""
    import sys

    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream or sys.stderr, highlight=False, soft_wrap=True)
    ds = sorted_diagnostics(diagnostics)
    for d in ds[:limit]:
        for text, style in format_diagnostic(d, sources):
            console.print(Text(text, style=style or ""))
        console.print()
    if len(ds) > limit:
        console.print(f"... and {len(ds) - limit} more")
