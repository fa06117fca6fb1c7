"""`rtc rules` and `rtc explain`."""

from __future__ import annotations

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_usage


@app.command("rules")
def rules_command() -> None:
    """List every rule id rtc can report, one per line."""
    from rtc.report.rule_catalogue import RULES

    for r in RULES:
        typer.echo(f"{r.code}  {r.severity.label:<7}  {r.name:<28}  {r.summary}")


@app.command("explain")
def explain_command(code: str = typer.Argument(..., help="A rule id, e.g. RTC208.")) -> None:
    """Explain a rule: what it finds, why it breaks at run time, an example, the fix."""
    from rtc.report.rule_catalogue import get_rule

    r = get_rule(code)
    if r is None:
        fail_usage(f"unknown rule '{code}'", "`rtc rules` lists them")
    typer.echo(f"{r.code} {r.name} ({r.severity.label})\n\n{r.summary}\n\n{r.explanation}")
