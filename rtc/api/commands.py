"""One library entry per command: what ``rtc compile``, ``check``, ``validate``, ``lint``,
``diagram``, ``cost``, ``advise``, ``preflight`` and ``import`` compute, callable from
Python without the command line (``rtc.api.compile(...)`` etc.; :func:`rtc.api.checking.check`,
:func:`rtc.api.writing.write_outputs` and :func:`rtc.api.preflighting.preflight` live in their
drivers' modules). Each takes the input path first and keyword-only options, prints
nothing, never exits, and never raises for bad input: problems are diagnostics in the
result, and a choice the input cannot satisfy (an unknown job, a bad cost parameter) is a
ValueError subclass naming it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from rtc.api.compiling import CompileResult, compile_file
from rtc.checks.cost_inputs import MODEL_LAYOUT
from rtc.checks.kv_capacity import KV_NO_ROOM, KV_TOO_SMALL
from rtc.diagnostics import Diagnostic


def compile(path: str | os.PathLike, *, strict: bool = False) -> CompileResult:  # noqa: A001
    """Compile the description at ``path`` (parse, lower, plan, check, policies); the
    :class:`~rtc.api.compiling.CompileResult` (``.ok``, ``.topology``, ``.plan``,
    ``.diagnostics``). ``strict`` turns warnings into errors. An unreadable file is an
    RTC001 diagnostic."""
    return compile_file(os.fspath(path), strict=strict)


def validate(path: str | os.PathLike, *, hardware: str | None = None, schema: str | None = None,
             inventory: str | os.PathLike | None = None, fold: bool = True):
    """Validate the rank table at ``path`` (``rtc validate``): the
    :class:`~rtc.api.validating.TableReport` (``.form``, ``.diagnostics``, ``.ok``).
    ``hardware`` a preset name, ``schema`` a form name, ``inventory`` a folder of captures
    (``DIR/<server_id>/``), ``fold`` repeated schema findings folded into one with a
    count. An unreadable file is a report whose only diagnostic is RTC001."""
    from rtc.api.validating import Inventory, TableReport, load_for_report, validate_source

    data, problem = load_for_report(os.fspath(path))
    if data is None:
        return TableReport(os.fspath(path), None, diagnostics=[problem])
    return validate_source(data, os.fspath(path), hardware=hardware, schema=schema,
                           inventory=Inventory(os.fspath(inventory)) if inventory else None,
                           fold=fold)


def lint(paths: Sequence[str | os.PathLike], *, nodes: dict[str, str] | None = None,
         hardware: str | None = None, vllm_version: str | None = None,
         cann: str | None = None, against: str | os.PathLike | None = None,
         table: str | os.PathLike | None = None,
         inventory: str | os.PathLike | None = None):
    """Lint launch scripts and manifests (``rtc lint``): the
    :class:`~rtc.api.linting.LintReport` (``.diagnostics``, ``.topology`` lifted from
    them, ``.unreadable``). ``nodes`` maps a file to its node name, ``against`` a
    description the scripts are compared with (RTC707), ``table`` a rank table they are
    checked against (``--table``: its own findings come first in ``.diagnostics``, as
    ``rtc lint`` prints them) with ``inventory`` a folder of captures of its servers.
    Raises ValueError for ``inventory`` without ``table`` (as the CLI refuses it)."""
    from rtc.api.linting import lint_files, read_table
    from rtc.api.validating import Inventory

    if inventory is not None and table is None:
        raise ValueError("inventory needs table: the captures are compared with the rank "
                         "table's servers")
    compiled = compile_file(os.fspath(against)) if against is not None else None
    topo, found, sources = None, [], {}
    if table is not None:
        topo, found = read_table(os.fspath(table), hardware,
                                 Inventory(os.fspath(inventory)) if inventory else None,
                                 sources=sources)
    rep = lint_files([os.fspath(p) for p in paths],
                     names=dict(nodes) if nodes else None,
                     hardware=hardware, vllm_version=vllm_version, cann=cann,
                     table=topo, against=compiled)
    rep.diagnostics[:0] = found
    rep.sources = {**sources, **rep.sources}
    return rep


@dataclass
class Drawing:
    """What :func:`diagram` drew: ``data`` (DOT or SVG text, PNG / PDF bytes; None when
    nothing could be drawn) and the compile's ``diagnostics`` and ``sources``."""

    data: str | bytes | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)


class DrawingFailed(RuntimeError):
    """Drawing the DOT text failed (an internal error: its cause is the exception)."""


def diagram(path: str | os.PathLike, *, view: str = "topology", job: str | None = None,
            dim: str = "tp", kind: str = "dot", collapse_above: int = 256,
            cost: bool = False, strict: bool = False,
            compiled: CompileResult | None = None) -> Drawing:
    """Draw the description at ``path`` (``rtc diagram``) even when it has errors (they are
    marked): ``view`` topology, groups or network; ``kind`` dot, svg, png or pdf (the last
    three need Graphviz: :class:`rtc.emit.diagram.DotNotFound` else, RuntimeError when it
    fails); ``compiled`` the description already compiled. Raises ValueError for an
    unknown view, dim, kind or job, :class:`DrawingFailed` when drawing fails."""
    from rtc.api.diagramming import diagram_options
    from rtc.emit.diagram import DIMS, FORMATS, VIEWS, diagram_dot, render

    for name, value, allowed in (("view", view, VIEWS), ("dim", dim, DIMS),
                                 ("kind", kind, FORMATS)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)} (not {value!r})")
    result = compiled or compile_file(os.fspath(path), strict=strict)
    diags = list(result.diagnostics)
    topo = result.topology
    if topo is None:
        return Drawing(None, diags, result.sources)
    if job is not None and topo.job(job) is None:
        raise ValueError(topo.no_job(job))
    options = diagram_options(topo, diags, view=view, job=job, dim=dim,
                              collapse_above=collapse_above, cost=cost)
    try:
        source = diagram_dot(topo, diags, options)
    except Exception as exc:  # noqa: BLE001 - an internal error, named as such
        raise DrawingFailed(f"internal error while drawing: {exc}") from exc
    return Drawing(source if kind == "dot" else render(source, kind), diags, result.sources)


@dataclass
class CostRun:
    """What :func:`cost` or :func:`advise` computed: the ``compiled`` description and
    ``costs`` (a list of :class:`rtc.cost.jobs.JobCost`) or ``advice``
    (:class:`rtc.cost.jobs.Advice`); both None when the description has errors (read
    ``compiled.diagnostics``)."""

    compiled: CompileResult
    costs: list | None = None
    advice: object = None


def _options(preset, params, model, decode_seqs=None, prefill_tokens=None):
    from rtc.cost.jobs import CostOptions

    return CostOptions(preset=preset, params=tuple(params or ()), model=model,
                       decode_seqs=decode_seqs, prefill_tokens=prefill_tokens)


#: Errors :func:`advise` goes on after: the layout does not fit the model's heads or
#: experts (RTC342), its KV cache (RTC344) or leaves no memory for one (RTC348), which is
#: what it ranks layouts for.
ADVISE_TOLERATES = frozenset({MODEL_LAYOUT.code, KV_TOO_SMALL.code, KV_NO_ROOM.code})

#: ``phase`` of :func:`cost` -> the phases costed.
COST_PHASES = {"decode": ("decode",), "prefill": ("prefill",), "both": ("decode", "prefill")}


def cost(path: str | os.PathLike, *, job: str | None = None, phase: str | None = None,
         preset: str | None = None, params: Sequence[str] = (), model: str | None = None,
         decode_seqs: int | None = None, prefill_tokens: int | None = None,
         compiled: CompileResult | None = None) -> CostRun:
    """Communication time per group, layer and step of the jobs of ``path`` (``rtc cost``):
    ``phase`` decode, prefill or both (default per job: prefill for a role prefill job),
    ``preset`` nominal or hccl-plan, ``params`` ``KEY=VALUE`` overrides, ``model`` a preset
    or config.json; ``compiled`` the description already compiled (not read again).
    Raises :class:`rtc.api.costing.JobChoiceError` or
    :class:`rtc.cost.errors.CostInputError` (ValueErrors) for a choice that cannot be made."""
    from rtc.api.costing import chosen_jobs
    from rtc.cost.jobs import cost_jobs, default_phase

    run = CostRun(compiled or compile_file(os.fspath(path)))
    if not run.compiled.ok:
        return run
    topo, options = run.compiled.topology, _options(preset, params, model, decode_seqs,
                                                    prefill_tokens)
    run.costs = [c for j in chosen_jobs(topo, job) for c in cost_jobs(
        topo, [j], COST_PHASES[phase] if phase else (default_phase(j),), options)]
    return run


def advise(path: str | os.PathLike, *, job: str | None = None, phase: str | None = None,
           preset: str | None = None, params: Sequence[str] = (), model: str | None = None,
           max_pp: int | None = None, compiled: CompileResult | None = None) -> CostRun:
    """Every layout of a job's devices ranked by communication time per token (``rtc
    advise``); ``job`` is needed when the file has several. The errors of a layout that
    does not fit (RTC342, RTC344, RTC348) are what it ranks layouts for, so they do not stop it
    (:data:`ADVISE_TOLERATES`); ``compiled`` the description already compiled. Raises
    ValueError (JobChoiceError; SeveralJobs without ``job`` in a file of several;
    CostInputError) for a choice that cannot be made."""
    from rtc.api.costing import SeveralJobs, chosen_jobs
    from rtc.cost.jobs import advise_job, default_phase
    from rtc.diagnostics import Severity

    run = CostRun(compiled or compile_file(os.fspath(path)))
    topo = run.compiled.topology
    if topo is None or any(d.severity is Severity.ERROR and d.code not in ADVISE_TOLERATES
                           for d in run.compiled.diagnostics):
        return run
    jobs = chosen_jobs(topo, job)
    if len(jobs) > 1:
        raise SeveralJobs([j.name for j in jobs])
    run.advice = advise_job(topo, jobs[0], phase=phase or default_phase(jobs[0]),
                            options=_options(preset, params, model), max_pp=max_pp)
    return run


def import_table(path: str | os.PathLike, *, hardware: str | None = None,
                 output_name: str = "cluster.rtc", cluster_name: str | None = None):
    """The description of the rank table at ``path`` (``rtc import``): the
    :class:`~rtc.api.importing.ImportResult` (``.text``, None when refused, and
    ``.diagnostics``). An unreadable file is a result whose only diagnostic is RTC001."""
    from rtc.api.importing import ImportResult
    from rtc.api.importing import import_table as import_data
    from rtc.api.validating import load_for_report

    data, problem = load_for_report(os.fspath(path))
    if data is None:
        return ImportResult(None, [problem])
    return import_data(data, os.fspath(path), hardware=hardware, output_name=output_name,
                       cluster_name=cluster_name)
