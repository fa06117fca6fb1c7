"""`rtc check`."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from rtc.cli.app import app
from rtc.cli.common import (FORMAT_HELP, compile_input, exit_for, input_label,
                            report_in_order, reporter_for)


@app.command("check")
def check_command(
    files: List[Path] = typer.Argument(..., readable=False, metavar="FILE...", help="The .rtc cluster description(s) (`-` "
                                          "reads standard input); with several, the ports of "
                                          "their jobs on shared hosts are checked together."),
    fmt: str = typer.Option("text", "--format", help=FORMAT_HELP),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Run every stage and check on FILE; write nothing. Exit 1 on errors.

    Examples:

      rtc check examples/a2-2node-dp2-tp8.rtc

      rtc check --format sarif cluster.rtc > rtc.sarif

      rtc check prefill.rtc decode.rtc    # and the ports of both on shared hosts
    """
    from rtc.api.checking import check

    out = reporter_for(fmt, "check", input_label(files[0]))
    found = check(files, strict=strict, compile_one=compile_input)
    if fmt == "text" and len(found.results) > 1:     # in the order of the command line
        report_in_order(found.groups, found.sources)
    else:
        out(found.diagnostics, found.sources)
    if found.unreadable:
        raise typer.Exit(2)
    exit_for(found.diagnostics)
