"""The compile driver: parse -> elaborate -> lower -> plan -> check -> policies, and the
rank table of a compiled job.

    >>> from rtc.api import compile_text
    >>> result = compile_text('''
    ... cluster demo {
    ...   hardware atlas-800t-a2
    ... }
    ... server node_0 {
    ...   devices 0..1
    ...   device_ip 192.168.1.8 step 1
    ... }
    ... ''', "demo.rtc")
    >>> result.ok, [s.server_id for s in result.topology.servers]
    (True, ['node_0'])
"""

from __future__ import annotations

from collections import Counter
from functools import cache, partial

from rtc import forked
from rtc.checks import check_tasks, joined, run_checks
from rtc.cost.inputs import settle_model_kinds
from rtc.diagnostics import Diagnostic, Severity, Span, error, has_errors
from rtc.emit.hccl_json import build_rank_table, render, schema_name
from rtc.model.lower_decls import lower
from rtc.model.topology import Job, Topology
from rtc.plan import Plan, build_plan
from rtc.rules import IO_ERROR, SCHEMA_SELF
from rtc.schema import validate_document
from rtc.syntax.parser import parse_text
from rtc.syntax.schema import elaborate


class CompileResult:
    """What a compile produced: the Topology (None when lowering could not start), its plan
    (None likewise), every diagnostic (sorted when shown), and the source texts by file
    name.

    With ``background_checks`` (:func:`compile_text`) the checks may still be running in a
    child process (:attr:`checks_pending`): reading :attr:`diagnostics` or :attr:`ok`
    waits for them. A caller that reads neither can meanwhile start on what it will do
    with a clean result (e.g. build the rank table), and discard it when the checks fail."""

    topology: Topology | None
    sources: dict[str, str]
    _plan: Plan | None
    _plan_of: object  # a callable giving the plan (made on first use), or None
    _diagnostics: list[Diagnostic]
    _pending: object  # a callable giving the final diagnostics, or None

    def __init__(
            self, topology: Topology | None, diagnostics: list[Diagnostic] | None = None,
            sources: dict[str, str] | None = None, plan: Plan | None = None,
            pending=None, plan_of=None) -> None:
        self.topology = topology
        self._diagnostics = [] if diagnostics is None else diagnostics
        self.sources = {} if sources is None else sources
        self._plan = plan
        self._plan_of = plan_of
        self._pending = pending

    @property
    def plan(self) -> Plan | None:
        """The plan of :attr:`topology`; with the checks in a child (``background_checks``)
        it is made here on first use."""
        if self._plan_of is not None:
            make, self._plan_of = self._plan_of, None
            self._plan = make()
        return self._plan

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic; waits for checks still running."""
        if self._pending is not None:
            finish, self._pending = self._pending, None
            self._diagnostics = finish()
        return self._diagnostics

    @diagnostics.setter
    def diagnostics(self, value: list[Diagnostic]) -> None:
        self._diagnostics, self._pending = value, None

    @property
    def checks_pending(self) -> bool:
        """True while the checks run in a child process (before anything reads
        :attr:`diagnostics`); lowering reported no error then."""
        return self._pending is not None

    @property
    def ok(self) -> bool:
        return self.topology is not None and not has_errors(self.diagnostics)

    def __repr__(self) -> str:
        """One line: ok or failed, the findings by severity, the cluster's size and each
        job's world size, e.g. ``<CompileResult ok: 0 errors, 1 warning, 2 notes; cluster
        a2 (2 servers, 16 NPUs); jobs: ds (world 16)>``. Does not wait for checks still
        running in a child (says so instead)."""
        if self._pending is not None:
            found = "checks running"
        else:
            counts = Counter(d.severity.label for d in self._diagnostics)
            found = ", ".join(f"{counts[s]} {s}{'' if counts[s] == 1 else 's'}"
                              for s in ("error", "warning", "note"))
            found = ("ok: " if self.ok else "failed: ") + found
        topo = self.topology
        if topo is None:
            return f"<CompileResult {found}; no topology>"
        chips = "GPUs" if getattr(topo.preset, "is_gpu", False) else "NPUs"
        size = f"cluster {topo.name} ({len(topo.servers)} servers, {topo.npu_count} {chips})"
        jobs = ", ".join(f"{j.name} (world {j.world_size})" for j in topo.jobs) or "none"
        return f"<CompileResult {found}; {size}; jobs: {jobs}>"


STAGES = ("parse", "lower", "check", "emit")


def compile_text(text: str, filename: str = "<input>", *, strict: bool = False,
                 progress=None, background_checks: bool = False) -> CompileResult:
    """Parse, lower, plan and check rtc source. Never raises for bad input: problems are
    diagnostics. ``strict`` turns warnings into errors (``--strict``). ``progress``, if
    given, is called with each stage name of :data:`STAGES` as it starts.
    ``background_checks``: for a cluster of at least :data:`rtc.forked.WORTH_NPUS` NPUs that
    lowered without errors, start the checks in a forked child (:func:`rtc.forked.share`)
    and return at once (see :class:`CompileResult`); the first read of the diagnostics
    runs the checks the child has not reached yet here, from the last one back, and then
    waits for the child. The diagnostics are the same."""
    report = progress or (lambda stage: None)
    sources = {filename: text}
    report("parse")
    source, diags = parse_text(text, filename)
    if source is None:
        return CompileResult(None, diags, sources)
    decls, more = elaborate(source)
    diags += more
    report("lower")
    topo, more = lower(decls, sources)
    diags += more
    report("check")
    if topo is None:
        return CompileResult(None, _strict(diags, strict), sources)
    settle_model_kinds(topo)   # before planning: the kind shapes worlds and launches
    if background_checks and not has_errors(diags) and topo.npu_count >= forked.WORTH_NPUS:
        # The child plans (the plan readers check first) while this process goes on;
        # this process plans only if it is asked for the plan (its own copy, the same).
        plan_of = cache(partial(build_plan, topo))
        checks = forked.share(check_tasks(topo, plan_of))
        return CompileResult(topo, None, sources, plan_of=plan_of, pending=lambda: _finish(
            topo, diags, joined(checks.results()), strict))
    plan = build_plan(topo)
    # The checks run even when lowering reported errors, so the user sees everything in
    # one go; the topology is incomplete only where errors were already reported.
    return CompileResult(topo, _finish(topo, diags, run_checks(topo, plan), strict),
                         sources, plan)


def _finish(topo: Topology, diags: list[Diagnostic], checked: list[Diagnostic],
            strict: bool) -> list[Diagnostic]:
    """The diagnostics of lowering and of the checks, with the policies and ``strict``
    applied."""
    diags = diags + checked
    if topo.policies or any(j.policies for j in topo.jobs):
        # Loaded only when there are policies: the catalogue imports every rule module.
        from rtc.checks.policies import apply_policies, unknown_policies
        from rtc.catalogue import RULES

        diags = apply_policies(topo, diags + unknown_policies(topo, RULES), RULES)
    return _strict(diags, strict)


def _strict(diags: list[Diagnostic], strict: bool) -> list[Diagnostic]:
    if strict:
        return [d.with_severity(Severity.ERROR) if d.severity is Severity.WARNING else d
                for d in diags]
    return diags


def compile_file(path: str, *, strict: bool = False, progress=None,
                 background_checks: bool = False) -> CompileResult:
    """Read ``path`` (UTF-8) and :func:`compile_text` it (the options are its own). An
    unreadable file (also one that is not a regular file, or larger than
    :func:`rtc.readfile.max_input_bytes`) gives an RTC001 diagnostic and no topology."""
    from rtc.readfile import read_bytes

    try:
        data = read_bytes(path)
    except OSError as exc:
        return _unreadable(path, exc)
    return compile_bytes(data, path, strict=strict, progress=progress,
                         background_checks=background_checks)


def compile_stream(stream, filename: str = "<stdin>", *, strict: bool = False,
                   progress=None, background_checks: bool = False) -> CompileResult:
    """Read the binary ``stream`` to its end (standard input for ``rtc compile -``; None
    when it is closed; at most :func:`rtc.readfile.max_input_bytes`) and compile it as
    ``filename``. A failed read gives an RTC001 diagnostic and no topology."""
    from rtc.readfile import read_stream

    try:
        data = read_stream(stream)
    except (OSError, ValueError) as exc:
        return _unreadable(filename, exc)
    return compile_bytes(data, filename, strict=strict, progress=progress,
                         background_checks=background_checks)


def compile_bytes(data: bytes, filename: str, *, strict: bool = False,
                  progress=None, background_checks: bool = False) -> CompileResult:
    """:func:`compile_text` of a file's bytes (UTF-8; a byte order mark is dropped). Bytes
    that are not UTF-8 give an RTC001 diagnostic and no topology."""
    try:
        text = data.decode("utf-8-sig")  # -sig: drop a byte order mark
    except UnicodeDecodeError as exc:
        return CompileResult(None, [_not_utf8(filename, data, exc)], {})
    return compile_text(text, filename, strict=strict, progress=progress,
                        background_checks=background_checks)


def _unreadable(path: str, exc: Exception) -> CompileResult:
    from rtc.readfile import unreadable

    message, hint = unreadable(path, exc)
    return CompileResult(None, [error(IO_ERROR, message, None, hint=hint)], {})


def _not_utf8(path: str, data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    if not utf16 and b"\0" in data[:8192]:   # NUL bytes: a program or archive, not text
        return error(IO_ERROR, f"cannot read {path}: it is a binary file (it holds NUL bytes), "
                     "not an rtc description", None,
                     hint="give the .rtc file (rank tables: `rtc validate`, scripts: `rtc lint`)")
    return error(
        IO_ERROR, f"cannot read {path}: "
        + ("it is UTF-16, not UTF-8" if utf16 else
           f"byte 0x{data[exc.start]:02x} at line {line}, column {column} is not UTF-8"),
        None if utf16 else Span(path, line, column),
        hint="save the file as UTF-8 (e.g. `iconv -f "
             + ("UTF-16" if utf16 else "LATIN1") + " -t UTF-8 IN > OUT`)")


def rank_table(topology: Topology, job: Job | None = None) -> tuple[str, dict, list[Diagnostic]]:
    """Build, validate against the schema, and render the rank table of ``job``.

    Returns (text, document, diagnostics); diagnostics is non-empty (RTC003) only if the
    table violates rtc's own schema, in which case the text must not be written. NVIDIA GPU
    hardware (``preset.is_gpu``) has no rank table: ``("", {}, [])``."""
    if topology.preset.is_gpu:
        return "", {}, []
    doc = build_rank_table(topology, job)
    problems = validate_document(doc, schema_name(doc), filename="<emitted hccl.json>")
    bad = [p for p in problems if p.severity is Severity.ERROR]
    if bad:
        return "", doc, [error(SCHEMA_SELF, "internal error: the rank table rtc built fails "
                               f"schema {schema_name(doc)}: {bad[0].message}", None,
                               hint="please report this with your .rtc file; nothing was written")]
    if doc["version"] == "2.0":  # rendered one rank at a time (memory)
        from rtc.emit.hccl_v2 import render_v2

        return render_v2(doc), doc, []
    return render(doc), doc, []



def topology_files(topology: Topology, job: Job | None = None):
    """The Ascend 950 topology files of ``job``'s servers, schema-checked
    (:func:`rtc.emit.hccl_v2.topology_files`): ([(file name, text)], RTC003 diagnostics)."""
    from rtc.emit.hccl_v2 import topology_files as build

    return build(topology, job)
