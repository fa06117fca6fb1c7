"""Helpers shared by CLI commands: printing diagnostics and choosing the exit code."""

from __future__ import annotations

import typer

from rtc.diagnostics import Diagnostic, has_errors


def report(diags: list[Diagnostic], sources: dict[str, str], *, quiet: bool = False) -> None:
    """Print diagnostics (sorted, compiler style) and a one-line summary to stderr."""
    from rtc.report.text import print_diagnostics, summary

    if diags:
        print_diagnostics(diags, sources)
    if diags or not quiet:
        typer.echo(f"rtc: {summary(diags)}", err=True)


def exit_for(diags: list[Diagnostic]) -> None:
    """Exit 1 when any diagnostic is an error."""
    if has_errors(diags):
        raise typer.Exit(1)


def fail_usage(message: str, hint: str | None = None) -> None:
    """Print a usage error and exit 2."""
    typer.echo(f"rtc: error: {message}", err=True)
    if hint:
        typer.echo(f"   = hint: {hint}", err=True)
    raise typer.Exit(2)
