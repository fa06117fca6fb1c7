"""``--format github``: GitHub Actions workflow commands, one line per finding::

    ::error file=hccl.json,line=14,col=24,title=RTC208::device IP 10.0.0.1 of ... %0Ahint: ...

Errors are ``::error``, warnings ``::warning``, notes ``::notice``; GitHub shows them as
annotations on the file and line. The message (with its hint and related locations on
further lines) is escaped as GitHub requires: ``%`` -> ``%25``, CR -> ``%0D``, LF ->
``%0A``; property values (file, title) also escape ``:`` -> ``%3A`` and ``,`` -> ``%2C``.
A finding without a location has no ``file``/``line``/``col`` properties.
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic, Severity
from rtc.report.registry import ReportContext, Reporter
from rtc.textfmt import printable

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command_line(d: Diagnostic) -> str:
    """The workflow command for one diagnostic."""
    props = []
    if d.span is not None:
        props.append(f"file={escape_property(printable(d.span.file))}")
        props.append(f"line={d.span.line}")
        props.append(f"col={d.span.column}")
    props.append(f"title={escape_property(d.code)}")
    lines = [d.message]
    if d.subject:
        lines.append(f"where: {d.subject}")
    for r in d.related:
        lines.append(f"note: {r.message} ({r.span})")
    if d.hint:
        lines.append(f"hint: {d.hint}")
    # no raw escape sequences in the log; line breaks are encoded as %0D / %0A below
    data = chr(10).join(printable(line, keep="\r\n") for line in lines)
    return f"::{_COMMAND[d.severity]} {','.join(props)}::{escape_data(data)}"


def render_github(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    """One workflow command per diagnostic; a closing ``::notice::`` when ``--max-findings``
    left findings out."""
    from rtc.report.folding import omitted_text

    text = "".join(command_line(d) + "\n" for d in diagnostics)
    cut = omitted_text(list(ctx.omitted))
    return text + (f"::notice title=rtc::{escape_data(cut)}\n" if cut else "")


REPORTER = Reporter("github", "GitHub Actions annotations (::error file=...,line=...,col=...,title=RTCnnn::...)", render_github)
