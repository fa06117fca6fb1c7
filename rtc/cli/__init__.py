"""The command-line interface (typer): flags -> API -> reporter -> exit code.

Each command lives in its own module and registers itself on :data:`rtc.cli.app.app`.
"""

from __future__ import annotations

from rtc.cli.app import app
from rtc.cli import compile_cmd, diagram_cmd, groups_cmd, import_cmd, rules_cmd, validate_cmd  # noqa: F401  (register commands)
from rtc.cli import preflight_cmd  # noqa: F401  (rtc preflight report)


def _on_sigterm(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    """SIGTERM (a CI timeout, `kill`): unwind like Ctrl-C so that half-written temporary
    files are removed (rtc.emit.files.write_atomic), then exit 143 (128 + SIGTERM)."""
    raise SystemExit(143)


def main() -> None:
    """Console-script entry point (``rtc``).

    Automatic cyclic garbage collection is switched off for the process: a run lives a
    few seconds, and the objects it builds (one per rank, device and address: millions at
    65,536 NPUs) are kept to the end and hold no reference cycles worth collecting, yet
    each full collection walks all of them -- about 35% of a large compile's time.
    Reference counting still frees everything as usual. (The library API leaves the
    collector alone; this is a property of the short-lived command, not of the code.)"""
    import gc
    import signal

    gc.disable()

    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError, AttributeError):  # not the main thread / no SIGTERM
        pass
    app()
