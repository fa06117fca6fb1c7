"""`rtc compile` and `rtc check`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import (exit_for, fail_io, fail_usage, refuse_input_as_output, report,
                            write_or_fail, write_stdout)


def _select_jobs(topo, job_name: str | None, need_one: bool):
    if job_name is not None:
        job = topo.job(job_name)
        if job is None:
            names = ", ".join(j.name for j in topo.jobs) or "none"
            fail_usage(f"no job named '{job_name}' (jobs: {names})")
        return [job]
    if not topo.jobs:
        return [None]
    if len(topo.jobs) == 1:
        return topo.jobs
    if need_one:
        names = ", ".join(j.name for j in topo.jobs)
        fail_usage(f"the file has {len(topo.jobs)} jobs ({names}); -o/--stdout write one rank table",
                   "choose one with --job NAME, or write one file per job with --out-dir DIR")
    return topo.jobs


@app.command("compile")
def compile_command(
    file: Path = typer.Argument(..., help="The .rtc cluster description."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the rank table here."),
    stdout: bool = typer.Option(False, "--stdout", help="Print the rank table instead of writing it."),
    job: Optional[str] = typer.Option(None, "--job", help="Emit the rank table of this job."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir",
                                           help="Write every output into this folder "
                                                "(hccl.json, or hccl-<job>.json per job), "
                                                "per-server .env / .sh / preflight-*.sh, "
                                                "plan.json, plus topology.svg and groups.svg."),
    no_diagrams: bool = typer.Option(False, "--no-diagrams",
                                     help="With --out-dir: skip topology.svg and groups.svg."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Check FILE and write its HCCL rank table (hccl.json).

    Nothing is written when there is any error; an existing output is left untouched.

    Examples:

      rtc compile examples/a2-2node-dp2-tp8.rtc -o hccl.json

      rtc compile examples/pd-a3.rtc --out-dir build/
    """
    modes = sum(x is not None and x is not False for x in (output, out_dir)) + int(stdout)
    if modes > 1:
        fail_usage("use only one of -o, --stdout, --out-dir")
    if modes != 1:
        fail_usage("say where the rank table goes: -o FILE, --stdout, or --out-dir DIR")
    refuse_input_as_output([output], [file])
    result = _compile(file, strict)
    diags = list(result.diagnostics)
    topo = result.topology
    jobs = _select_jobs(topo, job, need_one=out_dir is None)
    tables = _rank_tables(result, jobs, out_dir, output)
    if out_dir is None:
        report(diags, result.sources, quiet=True)
        if stdout:
            write_stdout(tables[0][1])
            return
        _write_tables(tables)
        return
    extra = _bundle(result, jobs, tables, out_dir)
    names = [p for p, _t in tables] + [p for p, _t, _m in extra]
    if not no_diagrams:
        from rtc.cli.diagram_cmd import COMPILE_DIAGRAMS

        names += [out_dir / n for n, _v in COMPILE_DIAGRAMS]
    refuse_input_as_output(names, [file])
    report(diags, result.sources, quiet=True)
    _prepare_out_dir(out_dir)
    _write_tables(tables)
    _write_extra(extra, out_dir)
    if not no_diagrams:
        from rtc.cli.diagram_cmd import write_compile_diagrams

        write_compile_diagrams(out_dir, topo, diags, job)
    if job is None:  # --job writes part of a plan: prune nothing
        _prune(out_dir, tables, extra)


def _compile(file: Path, strict: bool):
    """Compile ``file`` with a progress bar on a terminal; exit 1 (2 when unreadable) when
    there are errors."""
    from rtc.api import STAGES, compile_file
    from rtc.cli.progress import StageProgress

    with StageProgress(STAGES) as progress:
        result = compile_file(str(file), strict=strict, progress=progress)
    if result.topology is None or not result.ok:
        report(result.diagnostics, result.sources)
        raise typer.Exit(2 if result.topology is None and not result.sources else 1)
    return result


def _rank_tables(result, jobs, out_dir: Path | None, output: Path | None) -> list:
    """(path, text) of each selected job's rank table (``hccl.json``, or
    ``hccl-<job>.json`` per job in ``--out-dir``); exit 2 on an RTC003 self-check failure."""
    from rtc.api import rank_table

    out = []
    for j in jobs:
        text, _doc, problems = rank_table(result.topology, j)
        if problems:
            report(list(result.diagnostics) + problems, result.sources)
            raise typer.Exit(2)
        if out_dir is not None:
            out.append((out_dir / ("hccl.json" if len(jobs) == 1 else f"hccl-{j.name}.json"), text))
        else:
            out.append((output, text))
    return out


def _bundle(result, jobs, tables: list, out_dir: Path) -> list:
    """(path, text, mode or None) of the env, launch, preflight and plan files
    (:mod:`rtc.emit.bundle`), built in memory; exit 2 when one fails its schema."""
    from rtc.emit.bundle import build_bundle

    bundle = build_bundle(result.topology, result.plan, jobs,
                          {(j.name if j else None): p.name for j, (p, _t) in zip(jobs, tables)})
    if bundle.diagnostics:
        report(list(result.diagnostics) + bundle.diagnostics, result.sources)
        raise typer.Exit(2)
    return [(out_dir / name, text, mode if mode != 0o644 else None)
            for name, text, mode in bundle.outputs]


def _prepare_out_dir(out_dir: Path) -> None:
    """Create ``out_dir`` (exit 2 when it is a file, cannot be created, or holds a folder
    named like the outputs list)."""
    from rtc.emit.files import MANIFEST

    if out_dir.exists() and not out_dir.is_dir():
        fail_usage(f"--out-dir {out_dir} is a file, not a folder",
                   "give a folder (it is created if missing), or -o FILE for one rank table")
    if (out_dir / MANIFEST).is_dir() and not (out_dir / MANIFEST).is_symlink():
        fail_usage(f"{out_dir / MANIFEST} is a folder; rtc keeps its list of outputs there",
                   "remove or rename that folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail_io(f"cannot create {out_dir}: {exc.strerror}",
                "check that the parent folder exists and is writable")


def _write_tables(tables: list) -> None:
    for path, text in tables:
        write_or_fail(path, text)
        typer.echo(f"rtc: wrote {path}", err=True)


def _write_extra(extra: list, out_dir: Path) -> None:
    """Write the bundle's files; above 64 files, one sync at the end instead of one each."""
    from rtc.emit.files import sync_all

    many = len(extra) > 64
    for path, text, mode in extra:
        write_or_fail(path, text, mode=mode, durable=not many)
    if many:
        sync_all()
    if extra:
        typer.echo(f"rtc: wrote {len(extra)} env, launch, preflight and plan files to {out_dir}",
                   err=True)


def _prune(out_dir: Path, tables: list, extra: list) -> None:
    """Remove the files an earlier plan wrote to ``out_dir`` that this one does not (its
    servers' env files, scripts, hccl-<job>.json would be read as current). Diagrams are
    kept even with --no-diagrams."""
    from rtc.cli.diagram_cmd import COMPILE_DIAGRAMS
    from rtc.emit.files import MANIFEST, prune_outputs

    names = {p.name for p, _t in tables} | {p.name for p, _t, _m in extra} | \
        {n for n, _v in COMPILE_DIAGRAMS}
    try:
        removed = prune_outputs(out_dir, names)
    except OSError as exc:
        fail_io(f"cannot write {out_dir / MANIFEST}: {exc.strerror or exc}",
                "check that the folder is writable")
    if removed:
        shown = ", ".join(removed[:4]) + (", ..." if len(removed) > 4 else "")
        typer.echo(f"rtc: removed {len(removed)} file{'s' if len(removed) != 1 else ''} "
                   f"an earlier plan wrote to {out_dir} ({shown})", err=True)


@app.command("check")
def check_command(
    file: Path = typer.Argument(..., help="The .rtc cluster description."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Run every stage and check on FILE; write nothing. Exit 1 on errors.

    Example:

      rtc check examples/a2-2node-dp2-tp8.rtc
    """
    from rtc.api import STAGES, compile_file
    from rtc.cli.progress import StageProgress

    with StageProgress(STAGES) as progress:
        result = compile_file(str(file), strict=strict, progress=progress)
    report(result.diagnostics, result.sources)
    if result.topology is None and not result.sources:
        raise typer.Exit(2)
    exit_for(result.diagnostics)
