"""The command-line interface (typer): flags -> API -> reporter -> exit code.

Each command lives in its own module and registers itself on :data:`rtc.cli.app.app`.
"""

from __future__ import annotations

from rtc.cli.app import app
from rtc.cli import compile_cmd, diagram_cmd, groups_cmd, import_cmd, rules_cmd, validate_cmd  # noqa: F401  (register commands)
from rtc.cli import preflight_cmd  # noqa: F401  (rtc preflight report)


def main() -> None:
    """Console-script entry point (``rtc``)."""
    app()
