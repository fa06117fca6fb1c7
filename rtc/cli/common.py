"""Helpers shared by CLI commands: printing diagnostics and choosing the exit code."""

from __future__ import annotations

import typer

from rtc.diagnostics import Diagnostic, Severity, has_errors


def report(diags: list[Diagnostic], sources: dict[str, str], *, quiet: bool = False) -> None:
    """Print diagnostics (sorted, compiler style) and a one-line summary to stderr."""
    from rtc.report.text import print_diagnostics, summary

    if diags:
        print_diagnostics(diags, sources)
    if diags or not quiet:
        typer.echo(f"rtc: {summary(diags)}", err=True)


def report_in_order(groups: list[list[Diagnostic]], sources: dict[str, str]) -> None:
    """:func:`report` of several inputs' diagnostics, one group after the other in the
    order given (the order of the command line: ``rtc check prefill.rtc decode.rtc``
    reports prefill.rtc first, although sorting by file name would not), each group
    sorted as usual; one summary line for them all."""
    from rtc.report.text import print_diagnostics, summary

    for group in groups:
        if group:
            print_diagnostics(group, sources)
    typer.echo(f"rtc: {summary([d for g in groups for d in g])}", err=True)


def exit_for(diags: list[Diagnostic]) -> None:
    """Exit 1 when any diagnostic is an error."""
    if has_errors(diags):
        raise typer.Exit(1)


def say(rule, message: str, hint: str | None = None, *, severity: str = "error") -> None:
    """Print a finding that has no place in a file (``rtc: error[RTC002]: ...``, then its
    hint) to stderr, in the compiler style of the other diagnostics."""
    typer.echo(f"rtc: {severity}[{rule.code}]: {message}", err=True)
    if hint:
        typer.echo(f"   = hint: {hint}", err=True)


def fail_usage(message: str, hint: str | None = None, rule=None) -> None:
    """Print a usage error (RTC002; or ``rule``, a :class:`rtc.rules.Rule`: RTC001 for I/O,
    RTC004 internal) and exit 2."""
    from rtc.rules import USAGE  # rtc.rules is not needed by runs without a problem

    say(rule or USAGE, message, hint)
    raise typer.Exit(2)


def fail_io(message: str, hint: str | None = None) -> None:
    """Print an I/O error (RTC001) and exit 2."""
    from rtc.rules import IO_ERROR

    fail_usage(message, hint, IO_ERROR)


def fail_internal(message: str, hint: str | None = None) -> None:
    """Print an internal error (RTC004) and exit 2."""
    from rtc.rules import INTERNAL

    fail_usage(message, hint, INTERNAL)


def warn_tool_missing(message: str, hint: str | None = None) -> None:
    """Print a warning that a program an optional output needs is missing (RTC005)."""
    from rtc.rules import TOOL_MISSING

    say(TOOL_MISSING, message, hint, severity="warning")


def warn_internal(message: str, hint: str | None = None) -> None:
    """Print a warning that an optional output could not be made (RTC004)."""
    from rtc.rules import INTERNAL

    say(INTERNAL, message, hint, severity="warning")


def write_stdout(text: str) -> None:
    """Print ``text`` to standard output and flush it. A closed reader (EPIPE, e.g.
    `| head`) ends the run quietly with exit 0; any other failure (stdout closed with
    `>&-`, a full disk) is an I/O error: message on stderr, exit 2. Text the stream's
    encoding cannot hold (a lone surrogate read from a table, a name on an ASCII
    terminal) is written with backslash escapes (``\\ud800``), as Python does on stderr."""
    import errno
    import sys

    from rtc import interrupts

    out = sys.stdout
    if out is None:
        fail_io("cannot write to standard output: it is closed")
    interrupts.writing("standard output")
    try:
        try:
            out.write(text)
        except UnicodeEncodeError:
            out.write(_encodable(text, getattr(out, "encoding", None) or "utf-8"))
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise typer.Exit(0)
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
            _silence_stdout()
            raise typer.Exit(0)
        _silence_stdout()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail_io(f"cannot write to standard output: {reason}")


def _encodable(text: str, encoding: str) -> str:
    """``text`` with every character ``encoding`` cannot encode written as a backslash
    escape (an unknown encoding: as UTF-8 would need it)."""
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    import os
    import sys

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def refuse_input_as_output(outputs, inputs) -> None:
    """Exit 2 when any output path is (or resolves to) one of the input files: writing it
    would destroy the source before anyone noticed. An existing output is compared by
    device and inode (symlinks and hard links included). Each output folder is listed once,
    so an output name the listing lacks (every file of a first ``--out-dir`` run: 24,000 at
    8,192 servers) costs no system call: it cannot be an existing input. An output whose
    ``stat`` fails although it is listed is compared by its resolved path."""
    import os

    from rtc.outputs.files import folder_names

    ins = [i for i in inputs if i is not None and str(i) != "-"]
    if not ins:
        return
    ids, reals = {}, {}
    for src in ins:
        try:
            st = os.stat(src)
            ids[(st.st_dev, st.st_ino)] = src
        except OSError:
            pass
        reals[os.path.realpath(src)] = src
    listings: dict[str, frozenset | None] = {}
    for out in outputs:
        if out is None:
            continue
        folder, name = os.path.split(os.fspath(out))
        listed = listings.get(folder, ())
        if listed == ():
            listed = listings[folder] = folder_names(folder)
        if listed is not None and name not in listed:
            continue
        src = _input_at(os.fspath(out), ids, reals)
        if src is not None:
            fail_usage(f"the output {out} is the input file {src}; refusing to overwrite it",
                       "choose another output name")


def _input_at(out: str, ids: dict, reals: dict):
    """The input file that the output path ``out`` is (by device and inode, else by its
    resolved path), None when it is none of them."""
    import os

    try:
        st = os.stat(out)
        return ids.get((st.st_dev, st.st_ino))
    except OSError:
        return reals.get(os.path.realpath(out))


def write_or_fail(path, data, **kwargs) -> None:
    """Write an output file atomically (:func:`rtc.outputs.files.write_atomic`, which takes
    the same keyword options); on an OS error print a usage error and exit 2. Interrupted
    (Ctrl-C, SIGTERM), it says that the file is either old or new, and lets the exit be."""
    from rtc.outputs.files import write_atomic

    import os

    if os.path.isdir(path):
        suffix = os.path.splitext(str(path).rstrip("/\\"))[1].lower()
        if suffix in (".svg", ".dot", ".png", ".pdf", ".rtc"):   # rtc diagram / rtc import
            fail_io(f"cannot write {path}: it is a folder",
                    f"give a file name, e.g. -o {os.path.join(str(path), 'cluster' + suffix)}")
        fail_io(f"cannot write {path}: it is a folder",
                "give a file name (e.g. -o hccl.json), or use --out-dir for a folder")
    from rtc import interrupts

    interrupts.writing(str(path))
    try:
        write_atomic(path, data, **kwargs)
    except (KeyboardInterrupt, SystemExit):   # Ctrl-C, SIGTERM: exit 130 / 143 stays
        typer.echo(f"rtc: interrupted while writing {path}: it holds either its old content "
                   "or all of the new, nothing half-written", err=True)
        raise
    except OSError as exc:
        fail_io(f"cannot write {path}: {exc.strerror or exc}",
                   "check that the folder exists and is writable")


#: The --format help of the commands that report diagnostics.
FORMAT_HELP = "Report: text (on stderr), or json, github or sarif (on stdout)."


def reporter_for(fmt: str, command: str, label: str):
    """The ``report(diags, sources, quiet=...)`` of ``--format fmt`` for ``command`` on the
    input called ``label``: :func:`report` itself for text; for json, github and sarif a
    function that prints the document (:data:`rtc.report.formats.REPORTERS`) on stdout and
    the summary line on stderr. Exit 2 on an unknown format."""
    if fmt == "text":
        return report
    from rtc.report.formats import get_reporter, reporter_names

    reporter = get_reporter(fmt)
    if reporter is None:
        fail_usage(f"unknown --format '{fmt}'", "formats: " + ", ".join(reporter_names()))

    def machine_report(diags: list[Diagnostic], sources: dict[str, str], *,
                       quiet: bool = False) -> None:
        from rtc.diagnostics import Span
        from rtc.report.registry import FileInfo, ReportContext
        from rtc.report.text import summary

        if not sources:  # nothing was read: the problems concern the input as a whole
            diags = [d if d.span is not None else d._replace(span=Span.whole_file(label))
                     for d in diags]
        write_stdout(reporter(diags, ReportContext.make(sources, [FileInfo(label)], command)))
        if diags or not quiet:
            typer.echo(f"rtc: {summary(diags)}", err=True)

    return machine_report


def input_label(file) -> str:
    """How an input is named in messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(file) == "-" else str(file)


def checked_topology(result, tolerated: frozenset = frozenset()):
    """The Topology of a :class:`rtc.api.CompileResult` for a command that needs a
    description without errors: exit 2 when the file could not be read, 1 (after the
    report) when it has errors other than the ``tolerated`` rule codes; otherwise the
    notes and warnings are printed and the Topology returned (``rtc advise`` tolerates
    the errors of a layout that does not fit, which it is asked to fix)."""
    if result.topology is None and not result.sources:
        report(result.diagnostics, result.sources)
        raise typer.Exit(2)
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    if errors and result.topology is not None and all(d.code in tolerated for d in errors):
        report(result.diagnostics, result.sources)
        return result.topology
    if not result.ok:
        report(result.diagnostics, result.sources)
        raise typer.Exit(1)
    report(result.diagnostics, result.sources, quiet=True)
    return result.topology


#: What this run keeps until the process ends (see :func:`kept`).
_KEPT: list = []


def kept(value):
    """``value``, kept alive until the process ends: :func:`rtc.cli.entry` ends it without
    freeing anything, and freeing a 65,536-NPU model and its rank table object by object
    as the command returns costs ~0.05 s. :func:`rtc.cli.main` lets go of the previous
    run's values when it starts again (in-process callers: the tests; :func:`release_kept`)."""
    _KEPT.append(value)
    return value


def release_kept() -> None:
    """Let go of what the previous in-process run kept (:func:`kept`)."""
    _KEPT.clear()


def while_checking(result, fn, *args):
    """``fn(*args)`` done while the checks of ``result`` still run in their child process
    (:attr:`rtc.api.CompileResult.checks_pending`); None when they are not pending, or
    when ``fn`` raises: a topology the checks will reject may not emit, and work on a
    clean one is simply done again after the checks (so a real bug still raises there)."""
    if not result.checks_pending:
        return None
    try:
        return kept(fn(*args))
    except Exception:   # noqa: BLE001 - see the docstring
        return None


def compile_input(file, strict: bool, background_checks: bool = False):
    """Compile ``file`` (``-``: standard input, named ``<stdin>``) with a progress bar on a
    terminal; the :class:`rtc.api.CompileResult` (``background_checks``: see
    :func:`rtc.api.compile_text`)."""
    import sys

    from rtc.api import STAGES, compile_file
    from rtc.cli.progress import StageProgress

    if str(file) == "-":
        from rtc.api.compiling import compile_stream

        stream = getattr(sys.stdin, "buffer", None) if sys.stdin is not None else None
        with StageProgress(STAGES) as progress:
            return kept(compile_stream(stream, "<stdin>", strict=strict, progress=progress,
                                       background_checks=background_checks))
    with StageProgress(STAGES) as progress:
        return kept(compile_file(str(file), strict=strict, progress=progress,
                                 background_checks=background_checks))
