"""`rtc fmt`: rewrite .rtc files in their canonical layout (:mod:`rtc.syntax.formatter`)."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_io, input_label, report, write_or_fail, write_stdout


@app.command("fmt")
def fmt_command(
    files: list[Path] = typer.Argument(..., readable=False, metavar="FILES",
                                       help="The .rtc files to format (`-`: standard input, "
                                            "formatted onto standard output)."),
    check: bool = typer.Option(False, "--check",
                               help="Write nothing; exit 1 when a file would change."),
    diff: bool = typer.Option(False, "--diff",
                              help="Write nothing; print a unified diff of the changes."),
) -> None:
    """Rewrite each of FILES in the canonical layout: two-space indentation, one space between
    words, attributes in the order of the language reference, one blank line between
    blocks; comments, quoted strings and {templates} are kept as written. `-` reads
    standard input (named <stdin>) and prints the formatted text on standard output.

    A file is rewritten (atomically) only when it changes. A file with a syntax error is
    left untouched and its errors are reported (exit 1).

    Examples:

      rtc fmt cluster.rtc

      rtc fmt examples/*.rtc --check

      rtc fmt cluster.rtc --diff

      rtc fmt - < cluster.rtc > formatted.rtc
    """
    from rtc.syntax.formatter import SourceSyntaxError, format_source

    texts = [(path, _read(path)) for path in files]   # every file is readable, or exit 2
    failed = changed = False
    for path, text in texts:
        name = "<stdin>" if str(path) == "-" else str(path)
        try:
            formatted = format_source(text, name)
        except SourceSyntaxError as exc:
            report(exc.diagnostics, {name: text.removeprefix("\ufeff")})
            failed = True
            continue
        if str(path) == "-" and not (check or diff):
            write_stdout(formatted)     # standard input cannot be rewritten: print it
            continue
        if formatted == text:
            continue
        changed = True
        if diff:
            write_stdout(unified_diff(text, formatted, name))
        if check:
            typer.echo(f"rtc: would reformat {name}", err=True)
        elif not diff:
            write_or_fail(path, formatted)
            typer.echo(f"rtc: reformatted {path}", err=True)
    if failed or (check and changed):
        raise typer.Exit(1)


def _read(path: Path) -> str:
    """The text of ``path`` (UTF-8, a byte order mark kept so that fmt removes it); exit 2
    when it cannot be read or is not UTF-8. ``-`` is standard input."""
    from rtc.readfile import read_bytes, read_stream, unreadable

    try:
        data = read_stream(getattr(sys.stdin, "buffer", None)) if str(path) == "-" \
            else read_bytes(path)
    except IsADirectoryError:
        fail_io(f"cannot read {path}: it is a folder", "give .rtc files, e.g. `rtc fmt dir/*.rtc`")
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            fail_io(f"cannot read {path}: it is a folder",
                    "give .rtc files, e.g. `rtc fmt dir/*.rtc`")
        fail_io(*unreadable(input_label(path), exc))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        fail_io(f"cannot read {path}: byte 0x{data[exc.start]:02x} at line {line} is not UTF-8",
                "save the file as UTF-8")


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of ``old`` -> ``new`` (``--- NAME (original)``, ``+++ NAME
    (formatted)``), with difflib's marker for a last line without a newline."""
    import difflib

    lines = []
    for line in difflib.unified_diff(old.splitlines(keepends=True),
                                     new.splitlines(keepends=True),
                                     f"{name} (original)", f"{name} (formatted)"):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
