"""The driver of ``rtc compile --out-dir``: every output of a compiled description built in
memory (rank tables, env files, launch and preflight scripts, plan.json, diagrams, or the
Kubernetes manifests) and written into one folder in one transaction
(:mod:`rtc.outputs.out_dir`: all or nothing), then what an earlier plan wrote there and
this one does not is removed."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rtc.api.compiling import CompileResult, rank_table
from rtc.diagnostics import Diagnostic
from rtc.model.topology import Topology
from rtc.outputs.targets import DEFAULT_IMAGE, GPU_IMAGE, TARGETS



class OutputsRefused(Exception):
    """The outputs were not written: ``diagnostics`` says why (errors of the description,
    RTC003 when an output fails rtc's own schema, RTC770 when a job has no Kubernetes
    form, RTC002 when the job choice is impossible)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class WrittenOutputs:
    """What :func:`write_outputs` wrote into ``out_dir``: the rank tables' paths, the other
    files' names (env files, scripts, plan.json; or the Kubernetes manifests), the
    diagrams' names, the names of an earlier plan it removed, and ``warnings``: (rule,
    message, hint) of a diagram that could not be drawn (RTC004, RTC005), when no ``warn``
    was given."""

    out_dir: Path
    tables: list[Path] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    diagrams: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[tuple] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        """Every file written, by name, in the order written."""
        return [p.name for p in self.tables] + self.files + self.diagrams


@dataclass
class Hooks:
    """What a caller (the CLI) does between the steps of :func:`write_outputs`:
    ``before_write(paths)`` once everything but the diagrams is built, before the folder is
    touched (refuse to overwrite an input, print the report); ``warn(rule, message, hint)``
    for a diagram that cannot be drawn; ``interrupted(line)`` when Ctrl-C or SIGTERM stops
    the transaction (what the folder holds)."""

    before_write: Callable[[list], None] | None = None
    warn: Callable[[object, str, str], None] | None = None
    interrupted: Callable[[str], None] | None = None


def choose_jobs(topo: Topology, job_name: str | None, need_one: bool
                ) -> tuple[list, tuple | None]:
    """(jobs, None): the jobs whose tables to write (``[None]``: a description without
    jobs); or ([], (message, hint...)) when ``job_name`` names none, or ``need_one`` (-o,
    --stdout) and the file has several."""
    if job_name is not None:
        job = topo.job(job_name)
        if job is None:
            return [], (topo.no_job(job_name),)
        return [job], None
    if not topo.jobs:
        return [None], None
    if len(topo.jobs) == 1 or not need_one:
        return topo.jobs, None
    names = ", ".join(j.name for j in topo.jobs)
    return [], (f"the file has {len(topo.jobs)} jobs ({names}); -o/--stdout write one rank "
                "table", "choose one with --job NAME, or write one file per job with "
                "--out-dir DIR")


def write_outputs(result: CompileResult, *, out_dir: str | os.PathLike, job: str | None = None,
                  target: str = "shell", diagrams: bool = True,
                  global_table: str | None = None, image: str | None = None,
                  inputs: Sequence = (), tables: list | None = None,
                  defer_plan_json: bool = False, hooks: Hooks | None = None,
                  force: bool = False) -> WrittenOutputs:
    """Write every output of the compiled ``result`` into ``out_dir`` in one transaction,
    as ``rtc compile --out-dir`` does: ``job`` only that job's (no outputs list, nothing
    pruned); ``target`` one of :data:`TARGETS`; ``diagrams`` topology.svg and groups.svg
    (need Graphviz); ``global_table`` the MindIE global rank table with that numbering
    (``mindie-motor`` or ``omniinfer``); ``image`` the pods' image for k8s; ``inputs``
    files never pruned; ``tables`` the (path, text) rank tables when already built;
    ``defer_plan_json`` plan.json made while the rest is written (a large cluster);
    ``hooks`` see :class:`Hooks`; ``force`` replace files of an existing folder that its
    outputs list does not name (without it they are refused: a user's own hccl.json or
    scripts are never overwritten silently).

    Raises :class:`OutputsRefused` (nothing written) when the description has errors or an
    output fails its self-check, :class:`rtc.outputs.out_dir.OutputProblem` when the folder
    cannot be used or written, :class:`rtc.emit.bundle.SelfCheckFailed` when a deferred
    plan.json fails its schema (rolled back), ValueError for an unknown ``target``."""
    from rtc.diagnostics import error
    from rtc.rules import USAGE

    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (targets: {', '.join(TARGETS)})")
    if result.topology is None or not result.ok:
        raise OutputsRefused(list(result.diagnostics))
    folder, hooks = Path(out_dir), hooks or Hooks()
    jobs, problem = choose_jobs(result.topology, job, need_one=False)
    if problem is not None:
        raise OutputsRefused([error(USAGE, problem[0])])
    tables = tables if tables is not None else _tables(result.topology, jobs, folder)
    if target == "k8s":
        done = WrittenOutputs(folder, files=k8s_files(result, jobs, tables, image))
        names = [folder / n for n, _t, _m in done.files]
    else:
        done = WrittenOutputs(folder, tables=[p for p, _t in tables],
                              files=bundle_files(result, jobs, tables, target=target,
                                                 global_table=global_table,
                                                 defer_plan_json=defer_plan_json))
        names = _paths(folder, tables, done.files, diagrams)
    if hooks.before_write is not None:
        hooks.before_write(names)
    shell = target != "k8s"
    _write(result, done, [(p.name, t, None) for p, t in tables] if shell else [],
           diagrams and shell, job, inputs, hooks, force)
    return done


def _diagram_names() -> set[str]:
    """topology.svg, groups.svg: kept in the outputs list when asked for, even when one
    could not be drawn this time (RTC004: the old one stays, neither written nor pruned)."""
    from rtc.api.diagramming import COMPILE_DIAGRAMS

    return {n for n, _v in COMPILE_DIAGRAMS}


def _paths(folder: Path, tables: list, files: list, diagrams: bool) -> list:
    """The paths :func:`write_outputs` is about to write (for ``before_write``)."""
    from rtc.api.diagramming import COMPILE_DIAGRAMS

    base = os.fspath(folder)
    return [p for p, _t in tables] + [os.path.join(base, n) for n, _t, _m in files] \
        + ([os.path.join(base, n) for n, _v in COMPILE_DIAGRAMS] if diagrams else [])


def _write(result: CompileResult, done: WrittenOutputs, tables: list, diagrams: bool,
           job: str | None, inputs: Sequence, hooks: Hooks, force: bool) -> None:
    """Check the folder (and, unless ``force``, that it holds no file of these names that
    its outputs list does not name), draw the diagrams, write every file in one
    transaction and prune (:mod:`rtc.outputs.out_dir`); fills ``done`` (its ``files``
    become names). Without ``diagrams`` (--no-diagrams) an earlier plan's diagrams are
    pruned like its other files: they would show another plan."""
    from rtc.api.diagramming import compile_diagrams
    from rtc.outputs.files import read_manifest
    from rtc.outputs.out_dir import (interrupted_message, prepare_out_dir, prune,
                                     refuse_foreign, transaction)

    folder = done.out_dir
    new = prepare_out_dir(folder)
    drawn = compile_diagrams(result.topology, list(result.diagnostics), job,
                             warn=hooks.warn or (lambda *said: done.warnings.append(said))) \
        if diagrams else []
    files = tables + done.files + [(n, data, None) for n, data in drawn]
    if not new and not force:
        refuse_foreign(folder, [n for n, _t, _m in files])
    listed = None
    if job is None:   # one job's outputs are part of a plan: no outputs list, prune nothing
        listed = {n for n, _t, _m in files} | (_diagram_names() if diagrams else set())
    old = read_manifest(folder) if listed is not None else set()
    try:
        transaction(folder, files, listed, new)
    except (KeyboardInterrupt, SystemExit):   # Ctrl-C, SIGTERM: say what the folder holds
        if hooks.interrupted is not None:
            hooks.interrupted(interrupted_message(folder, new))
        raise
    done.files = [n for n, _t, _m in done.files]
    done.diagrams = [n for n, _data in drawn]
    done.removed = prune(folder, old, listed, inputs) if listed is not None else []


def _tables(topo: Topology, jobs: list, folder: Path) -> list[tuple[Path, str]]:
    """(path, text) of each job's rank table in ``folder`` (none on GPU hardware); raises
    :class:`OutputsRefused` on an RTC003 self-check failure."""
    if topo.preset.is_gpu:
        return []
    out = []
    for j in jobs:
        text, _doc, problems = rank_table(topo, j)
        if problems:
            raise OutputsRefused(problems)
        out.append((folder / ("hccl.json" if len(jobs) == 1 else f"hccl-{j.name}.json"), text))
    return out


def bundle_files(result: CompileResult, jobs: list, tables: list, *, target: str = "shell",
                 global_table: str | bool | None = None, defer_plan_json: bool = False) -> list:
    """(file name, text, mode or None) of the env, launch, preflight, calibration and plan
    files of ``jobs`` (:mod:`rtc.emit.bundle`; ``tables``: (path, text) of their rank
    tables), plus the Slurm or Ansible files of that ``target``; with ``defer_plan_json``
    plan.json's text may be a callable, made while the rest is written. Raises
    :class:`OutputsRefused` when one fails its schema (RTC003)."""
    from rtc.emit.bundle import build_bundle

    bundle = build_bundle(result.topology, result.plan, jobs,
                          {(j.name if j else None): p.name for j, (p, _t) in zip(jobs, tables)},
                          global_table=global_table or False, defer_plan_json=defer_plan_json)
    if bundle.diagnostics:
        raise OutputsRefused(bundle.diagnostics)
    fleet = []
    if target in ("slurm", "ansible"):
        from rtc.emit.fleet import fleet_files

        fleet = fleet_files(bundle, result.topology, result.plan, jobs, target)
    return [(name, text, mode if mode != 0o644 else None)
            for name, text, mode in bundle.outputs] + fleet


def k8s_files(result: CompileResult, jobs: list, tables: list, image: str | None) -> list:
    """(name, text, None) of the Kubernetes manifests of ``jobs`` (:mod:`rtc.emit.kubernetes`:
    a LeaderWorkerSet and rank table ConfigMap per job) and the preflight Job; ``image``
    the pods' image (default :data:`DEFAULT_IMAGE`, :data:`GPU_IMAGE` on GPUs). Raises
    :class:`OutputsRefused` for RTC770 (no LWS form), RTC003 (a manifest fails its schema),
    RTC006 (kubernetes-validate, the ``k8s`` extra, is not installed) or RTC002 (no job)."""
    from rtc.emit.env_file import source_name
    from rtc.emit.fleet import k8s_preflight
    from rtc.emit.kubernetes import build_k8s

    real = [j for j in jobs if j is not None]
    if not real:
        from rtc.diagnostics import error
        from rtc.rules import USAGE

        raise OutputsRefused([error(USAGE, "target k8s writes one LeaderWorkerSet per job, "
                                    "and the file has no job")])
    from rtc.extras import MissingExtra, kubernetes_validate

    try:
        kubernetes_validate("--target k8s")
    except MissingExtra as exc:
        raise OutputsRefused([exc.diagnostic]) from None
    topo = result.topology
    image = image or (GPU_IMAGE if topo.preset.is_gpu else DEFAULT_IMAGE)
    bundle = build_k8s(topo, result.plan, real, {j.name: t for j, (_p, t) in zip(jobs, tables)},
                       image, source_name(topo))
    if not bundle.diagnostics:
        resource = next(lp.resource for lp in bundle.plans.values() if lp.resource)
        extra, bundle.diagnostics = k8s_preflight(topo, result.plan, real, resource, image)
        bundle.outputs += extra
    if bundle.diagnostics:
        raise OutputsRefused(bundle.diagnostics)
    return [(n, t, None) for n, t in bundle.outputs]
