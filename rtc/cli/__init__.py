"""The command-line interface (typer): flags -> API -> reporter -> exit code.

Each command lives in its own module and registers itself on :data:`rtc.cli.app.app`.
"""

from __future__ import annotations

from rtc.cli.app import app
from rtc.cli import compile_cmd, groups_cmd, rules_cmd  # noqa: F401  (register commands)


def main() -> None:
    """Console-script entry point (``rtc``)."""
    app()
