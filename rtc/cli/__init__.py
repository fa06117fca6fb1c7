"""The command-line interface (typer): flags -> API -> reporter -> exit code.

Each command lives in its own module and registers itself on :data:`rtc.cli.app.app`.
"""

from __future__ import annotations

import copy
import sys

import typer

from rtc import forked, interrupts
from rtc.cli import common, lean_params
from rtc.cli.app import app
from rtc.cli import compile_cmd, check_cmd, diagram_cmd, fmt_cmd, groups_cmd, import_cmd, rules_cmd, validate_cmd  # noqa: F401  (register commands)
from rtc.cli import preflight_cmd  # noqa: F401  (rtc preflight report)
from rtc.cli import calibrate_cmd, cost_cmd  # noqa: F401  (rtc calibrate, cost, advise)
from rtc.cli import lint_cmd  # noqa: F401  (rtc lint)


lean_params.install()  # rtc's parameter values without importing pydantic (see the module)


def _on_sigterm(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    """SIGTERM (a CI timeout, `kill`): unwind like Ctrl-C so that half-written temporary
    files are removed (rtc.outputs.files.write_atomic), then exit 143 (128 + SIGTERM)."""
    raise SystemExit(143)


class _StderrUntilClosed:
    """``sys.stderr`` that stops writing, quietly, once its reader has gone (``2>&1 |
    head``), the disk is full (``2>/dev/full``) or when there is none (``2>&-``: Python
    then sets ``sys.stderr`` to None): the findings are still judged, outputs written, and
    the exit code stays the command's own."""

    def __init__(self, stream) -> None:
        self._stream, self._closed = stream, stream is None

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):  # gone, full (2>/dev/full), closed
                self._closed = True
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._closed = True

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


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
    import sys

    gc.disable()
    common.release_kept()   # the previous in-process run's
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError, AttributeError):  # not the main thread / no SIGTERM
        pass
    stderr = sys.stderr
    sys.stderr = _StderrUntilClosed(stderr)
    interrupts.begin(f"running `rtc {sys.argv[1]}`" if len(sys.argv) > 1 else "starting")
    try:
        raise SystemExit(_run())
    except KeyboardInterrupt:   # Ctrl-C outside the command: exit 130 (rtc.cli.entry)
        _say_interrupted()
        raise
    finally:
        forked.stop_all()   # a child still checking when the run ends early (Ctrl-C, SIGTERM)
        sys.stderr = stderr


def entry() -> None:
    """The ``rtc`` console script and ``python -m rtc``: :func:`main`, then the process
    ends at once, without the interpreter's teardown (what ``mypy`` does too): freeing
    every module, rank and address object one by one costs ~7% of a small run's
    instructions (``rtc --help``, a 2-server compile; start-up is issue 19's) and ~0.1 s
    after a 65,536-NPU compile, and nothing rtc leaves behind needs it: outputs are
    written and closed before, standard output and error are flushed here. A
    non-integer exit (``SystemExit("message")``), any other exception, and a run under a
    profiler or tracer (``python -m cProfile -m rtc``, coverage: they write their results
    at the teardown) take Python's usual way out. In-process callers (the tests) call
    :func:`main`, which raises ``SystemExit``."""
    import os

    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is not None and type(code) is not int or sys.getprofile() or sys.gettrace():
            raise
        os._exit(_flushed(code or 0))
    except KeyboardInterrupt:
        # A second Ctrl-C while the first one's clean-up ran (which holds signals back and
        # raises them at its end): that clean-up is done and reported; exit as for one.
        if sys.getprofile() or sys.gettrace():
            raise
        os._exit(_flushed(130))


def _flushed(code: int) -> int:
    """Flush standard output and error before :func:`os._exit`; ``code``, or 120 (what
    Python's own exit uses) when standard output cannot be flushed, except for a reader
    that went away (``| head``: rtc ends quietly there, as :func:`rtc.cli.common.write_stdout`
    does)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            pass
        except (OSError, ValueError):
            if stream is sys.stdout and code == 0:
                code = 120
    return code


def _app_for(argv: list[str]):
    """The typer app to run for ``argv``: when its first word names a command (or the
    ``preflight`` group), a copy of :data:`rtc.cli.app.app` that holds only that one, so
    typer builds one command's parameters instead of all thirteen (start-up is measured:
    issue 19); otherwise (``--help``, ``--version``, a mistyped command) the whole app."""
    name = argv[1] if len(argv) > 1 else ""
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return one


def _run() -> int:
    """Run the typer app; its exit code (2 for a command-line parser error)."""
    try:
        code = _app_for(sys.argv)(standalone_mode=False)
    except Exception as exc:  # noqa: BLE001 - only the command-line parser's errors
        if not _is_usage_error(exc):
            raise
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()     # plain `rtc`: the help itself, as click prints it
        else:
            _report_usage_error(exc)
        return 2
    if code == 130:     # typer's answer to a Ctrl-C inside the command (rtc exits 130 for
        _say_interrupted()  # nothing else)
    return code if isinstance(code, int) else 0


def _say_interrupted() -> None:
    """After a Ctrl-C: what was interrupted, and that nothing was written when nothing was
    (:func:`rtc.interrupts.interrupted_message`; a writer reports its own)."""
    message = interrupts.interrupted_message()
    if message:
        typer.echo(message, err=True)


def _is_usage_error(exc: Exception) -> bool:
    """True for the command-line parser's own errors (an unknown option, a missing
    argument, a bad value): click's UsageError, found by its interface (typer may vendor
    click, so the class is not importable under one stable name)."""
    return getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message")


def _report_usage_error(exc) -> None:
    """The usage line and the parser's message as an RTC002 finding, with where to look."""
    from rtc.cli.common import say
    from rtc.rules import USAGE

    ctx = getattr(exc, "ctx", None)
    hint = None
    if ctx is not None:
        typer.echo(ctx.get_usage(), err=True)
        hint = f"`{ctx.command_path} -h` lists the options and arguments"
    say(USAGE, exc.format_message(), hint)
