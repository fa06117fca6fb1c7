"""`rtc compile` and `rtc check`."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import List, Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import (FORMAT_HELP, compile_input, exit_for, fail_io, fail_usage,
                            input_label, refuse_input_as_output, reporter_for, while_checking,
                            write_or_fail, write_stdout)


#: The container image of ``--target k8s`` pods unless ``--image`` names another:
#: vllm-ascend's published image (quay.io/ascend/vllm-ascend, its docs' `docker run` lines).
DEFAULT_IMAGE = "quay.io/ascend/vllm-ascend:latest"
#: The same on NVIDIA GPU hardware: vLLM's published image (docker.io/vllm/vllm-openai,
#: vLLM docs deployment/docker).
GPU_IMAGE = "vllm/vllm-openai:latest"
TARGETS = ("shell", "k8s", "slurm", "ansible")


def _select_jobs(topo, job_name: str | None, need_one: bool) -> list:
    """The jobs whose tables to write (``[None]``: a description without jobs); exit 2 when
    ``--job`` names none, or -o/--stdout would need one of several."""
    jobs, problem = _chosen_jobs(topo, job_name, need_one)
    if problem is not None:
        fail_usage(*problem)
    return jobs


def _chosen_jobs(topo, job_name: str | None, need_one: bool) -> tuple[list, tuple | None]:
    """(jobs, None), or ([], (message, hint...)) for :func:`_select_jobs`' usage error."""
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


@app.command("compile")
def compile_command(
    file: Path = typer.Argument(..., metavar="FILE", help="The .rtc cluster description (`-` reads standard "
                                          "input)."),
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE", help="Write "
                                         "the rank table here (`-`: stdout, as --stdout)."),
    stdout: bool = typer.Option(False, "--stdout", help="Print the rank table instead of writing it."),
    job: Optional[str] = typer.Option(None, "--job", help="Emit the rank table of this job."),
    out_dir: Optional[str] = typer.Option(None, "--out-dir",
                                           help="Write every output into this folder "
                                                "(hccl.json, or hccl-<job>.json per job), "
                                                "per-server .env / .sh / preflight-*.sh, "
                                                "plan.json, plus topology.svg and groups.svg."),
    no_diagrams: bool = typer.Option(False, "--no-diagrams",
                                     help="With --out-dir: skip topology.svg and groups.svg."),
    global_table: bool = typer.Option(False, "--global-ranktable",
                                      help="With --out-dir: also write the MindCluster / MindIE "
                                           "global rank table (server_group_list) of each "
                                           "prefill/decode pair (global-ranktable.json)."),
    global_for: str = typer.Option("mindie-motor", "--global-ranktable-for",
                                   metavar="mindie-motor|omniinfer",
                                   help="Global rank table group numbering: mindie-motor (Motor, "
                                        "ClusterD: 0 coordinator, 1 controller, instances from 2) "
                                        "or omniinfer (prefill from 0, then decode)."),
    fmt: str = typer.Option("text", "--format", help=FORMAT_HELP + " Not with --stdout."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    target: str = typer.Option("shell", "--target", metavar="shell|k8s|slurm|ansible",
                               help="With --out-dir: shell; k8s (LeaderWorkerSets, rank "
                                    "table ConfigMaps, a preflight Job); slurm / ansible "
                                    "(shell plus sbatch scripts / inventory and playbooks)."),
    image: str | None = typer.Option(None, "--image",
                                     help="With --target k8s: the container image of the "
                                          f"pods (default {DEFAULT_IMAGE}, on NVIDIA GPUs "
                                          f"{GPU_IMAGE})."),
) -> None:
    """Check FILE and write its HCCL rank table (hccl.json).

    NVIDIA GPU hardware has no rank table: use --out-dir (env files, launch and
    preflight scripts, plan.json, diagrams).

    Nothing is written when there is any error; an existing output is left untouched.
    With --out-dir every file is written, or none is replaced.

    Examples:

      rtc compile examples/a2-2node-dp2-tp8.rtc -o hccl.json

      rtc compile examples/pd-a3.rtc --out-dir build/

      rtc compile examples/pd-a3.rtc --target k8s --out-dir k8s/

      rtc compile - --stdout < cluster.rtc
    """
    output, out_dir, stdout = _outputs(output, out_dir, stdout)
    _check_outputs(output, out_dir, stdout, target)
    _check_options(fmt, stdout, target, image, global_for)
    out = reporter_for(fmt, "compile", input_label(file))
    refuse_input_as_output([output], [file])
    _run(file, out, strict=strict, job=job, output=output, out_dir=out_dir, stdout=stdout,
         no_diagrams=no_diagrams, global_table=global_for if global_table else False,
         target=target, image=image)


def _note_idle_options(no_diagrams: bool, out_dir, target: str) -> None:
    """A note on stderr for ``--no-diagrams`` where no diagram would be written anyway
    (-o FILE, --stdout, --target k8s): the option is accepted but does nothing."""
    if not no_diagrams:
        return
    if out_dir is None:
        where = "with -o / --stdout (they write the rank table only)"
    elif target == "k8s":
        where = "with --target k8s (it writes manifests, no diagrams)"
    else:
        return
    typer.echo(f"rtc: note: --no-diagrams has no effect {where}; only --out-dir writes "
               "topology.svg and groups.svg", err=True)


def _check_options(fmt: str, stdout: bool, target: str, image: str | None,
                   global_for: str) -> None:
    """Exit 2 (usage) for an empty --image, --stdout with a report --format, or an unknown
    --global-ranktable-for."""
    from rtc.emit.global_ranktable import NUMBERINGS

    if target == "k8s" and image is not None and not image.strip():
        fail_usage("--image is empty", "name the container image, e.g. "
                   f"--image {DEFAULT_IMAGE.rsplit(':', 1)[0]}:<tag>")
    if stdout and fmt != "text":
        fail_usage(f"--stdout prints the rank table on stdout, where --format {fmt} would "
                   "print the report", "write the table with -o FILE or --out-dir DIR, or "
                   "drop --format")
    if global_for not in NUMBERINGS:
        fail_usage(f"--global-ranktable-for {global_for}: not a global rank table consumer",
                   "use " + " or ".join(NUMBERINGS))


def _run(file: Path, out, *, strict: bool, job: str | None, output: Path | None,
         out_dir: Path | None, stdout: bool, no_diagrams: bool, global_table: bool | str,
         target: str, image: str | None) -> None:
    """Compile ``file`` and write what the options ask for (the options were checked)."""
    _note_idle_options(no_diagrams, out_dir, target)
    result = _compile(file, strict, out)
    early = _tables_while_checking(result, job, out_dir)
    _fail_on_errors(result, out)
    if global_table:
        _check_global_table(result, out_dir)
    if result.topology.preset.is_gpu and out_dir is None:  # before "which job?"
        out(list(result.diagnostics), result.sources, quiet=True)
        fail_usage(f"hardware {result.topology.preset.name} is an NVIDIA GPU server: NCCL "
                   "has no rank table to write with -o / --stdout",
                   "write the env files, launch and preflight scripts with --out-dir DIR")
    jobs = _select_jobs(result.topology, job, need_one=out_dir is None)
    tables = _rank_tables(result, jobs, out_dir, output, out, early)
    if out_dir is not None and target == "k8s":
        _write_k8s(result, jobs, tables, out_dir, file, job, image, out)
        return
    topo_files = _topology_files(result, jobs, out) if output is not None else []
    if out_dir is not None:
        _write_out_dir(result, jobs, tables, out_dir, file, job, no_diagrams, out, global_table,
                       target)
        return
    out(list(result.diagnostics), result.sources, quiet=True)
    if stdout:
        write_stdout(tables[0][1])
        if result.topology.preset.is_a5:  # the 2.0 table's topology files have no stdout
            n = len(result.topology.rank_table_members(jobs[0] if jobs else None))
            typer.echo(f"rtc: note: --stdout printed the 2.0 rank table only; the {n} "
                       "topology files (topo-<server>.json) it is paired with were not "
                       "written: use -o FILE or --out-dir DIR for them", err=True)
        return
    _write_table(tables[0], topo_files)


def _write_table(table: tuple, topo_files: list) -> None:
    """``-o FILE``: the rank table, and on Ascend 950 its topology files beside it (all or
    nothing)."""
    path, text = table
    if topo_files:
        _transaction(path.parent, [(path.name, text, None)]
                     + [(n, t, None) for n, t in topo_files], None)
        typer.echo(f"rtc: wrote {path} and {len(topo_files)} topology files "
                   f"(topo-<server>.json) beside it", err=True)
        return
    write_or_fail(path, text)
    typer.echo(f"rtc: wrote {path}", err=True)


def _outputs(output: str | None, out_dir: str | None, stdout: bool):
    """(-o path, --out-dir path, --stdout) from the options as typed: ``-o -`` is standard
    output, as ``-`` is standard input; an empty name is a usage error (exit 2)."""
    if output == "-":
        if stdout:
            fail_usage("use only one of -o - and --stdout: both print the rank table")
        output, stdout = None, True
    return _named(output, "-o", "hccl.json"), _named(out_dir, "--out-dir", "build/"), stdout


def _named(value: str | None, flag: str, example: str) -> Path | None:
    """The path an output option names; exit 2 for an empty one (an unset ``$OUT`` in a
    script would otherwise write into the current folder)."""
    if value is None:
        return None
    if not value.strip():
        fail_usage(f"{flag} is empty", f"name the output, e.g. {flag} {example}")
    return Path(value)


def _check_outputs(output: Path | None, out_dir: Path | None, stdout: bool,
                   target: str) -> None:
    """Exit 2 unless exactly one of -o, --stdout, --out-dir is given, for an unknown
    --target, or k8s without --out-dir."""
    modes = sum(x is not None and x is not False for x in (output, out_dir)) + int(stdout)
    if modes > 1:
        fail_usage("use only one of -o, --stdout, --out-dir")
    if modes != 1:
        fail_usage("say where the rank table goes: -o FILE, --stdout, or --out-dir DIR")
    if target not in TARGETS:
        fail_usage(f"unknown --target '{target}'", "targets: " + ", ".join(TARGETS))
    if target != "shell" and out_dir is None:
        fail_usage(f"--target {target} writes a folder of files", "add --out-dir DIR")


def _write_k8s(result, jobs, tables: list, out_dir: Path, file: Path, job: str | None,
               image: str | None, out) -> None:
    """Write each job's LeaderWorkerSet and rings-config ConfigMap into ``out_dir``
    (:mod:`rtc.emit.kubernetes`), all or nothing; exit 1 when a job has no LWS form
    (RTC770), 2 when a manifest fails its schema (RTC003) or cannot be written."""
    from rtc.emit.env_file import source_name
    from rtc.emit.files import read_manifest
    from rtc.emit.kubernetes import build_k8s
    from rtc.rules import SCHEMA_SELF

    real = [j for j in jobs if j is not None]
    if not real:
        fail_usage("--target k8s writes one LeaderWorkerSet per job, and the file has no job",
                   "add a job block, or use --target shell")
    texts = {j.name: t for j, (_p, t) in zip(jobs, tables)}
    image = image or (GPU_IMAGE if result.topology.preset.is_gpu else DEFAULT_IMAGE)
    bundle = build_k8s(result.topology, result.plan, real, texts, image,
                       source_name(result.topology))
    if not bundle.diagnostics:
        from rtc.emit.fleet import k8s_preflight

        resource = next(lp.resource for lp in bundle.plans.values() if lp.resource)
        extra, bundle.diagnostics = k8s_preflight(result.topology, result.plan, real,
                                                  resource, image)
        bundle.outputs += extra
    if bundle.diagnostics:
        out(list(result.diagnostics) + bundle.diagnostics, result.sources)
        internal = any(d.code == SCHEMA_SELF.code for d in bundle.diagnostics)
        raise typer.Exit(2 if internal else 1)
    refuse_input_as_output([out_dir / n for n, _t in bundle.outputs], [file])
    out(list(result.diagnostics), result.sources, quiet=True)
    new = _prepare_out_dir(out_dir)
    files = [(n, t, None) for n, t in bundle.outputs]
    listed = {n for n, _t, _m in files} if job is None else None
    old = read_manifest(out_dir) if listed is not None else set()
    _transaction(out_dir, files, listed, new)
    typer.echo(f"rtc: wrote {len(files)} Kubernetes manifests to {out_dir} ("
               + ", ".join(n for n, _t, _m in files) + ")", err=True)
    typer.echo(f"rtc: start them with: kubectl apply -f {out_dir}", err=True)
    if listed is not None:
        _prune(out_dir, old, listed, [file])


def _compile(file: Path, strict: bool, out):
    """Compile ``file`` (large clusters: the checks in the background, see
    :func:`_tables_while_checking`); exit 1 (2 when unreadable) when there are errors
    already known, reported by ``out``."""
    result = compile_input(file, strict, background_checks=True)
    if not result.checks_pending:
        _fail_on_errors(result, out)
    return result


def _fail_on_errors(result, out) -> None:
    """Exit 1 (2 when unreadable) after ``out`` reported the errors of ``result``; waits
    for checks still running."""
    if result.topology is None or not result.ok:
        out(result.diagnostics, result.sources)
        raise typer.Exit(2 if result.topology is None and not result.sources else 1)


def _tables_while_checking(result, job_name: str | None, out_dir: Path | None):
    """While the checks of a large cluster run in their child process
    (:func:`rtc.cli.common.while_checking`): ``{id(job): (text, doc, problems)}`` of the
    rank table of each job :func:`_select_jobs` would choose, built now on the second
    CPU's time; None when the checks are not pending, a table cannot be built, or the
    choice of jobs would fail (that usage error comes after the checks' report)."""
    if result.topology is None or result.topology.preset.is_gpu:
        return None
    return while_checking(result, _tables_of, result.topology, job_name, out_dir is None)


def _tables_of(topo, job_name: str | None, need_one: bool) -> dict | None:
    from rtc.api import rank_table

    jobs, problem = _chosen_jobs(topo, job_name, need_one)
    return None if problem is not None else {id(j): rank_table(topo, j) for j in jobs}


def _rank_tables(result, jobs, out_dir: Path | None, output: Path | None, out,
                 early: dict | None = None) -> list:
    """(path, text) of each selected job's rank table (``hccl.json``, or
    ``hccl-<job>.json`` per job in ``--out-dir``); exit 2 on an RTC003 self-check failure.
    ``early``: tables already built (:func:`_tables_while_checking`)."""
    from rtc.api import rank_table

    if result.topology.preset.is_gpu:  # NCCL has no rank table: env, scripts, diagrams
        return []
    tables = []
    for j in jobs:
        got = early.get(id(j)) if early else None
        text, _doc, problems = got if got is not None else rank_table(result.topology, j)
        if problems:
            out(list(result.diagnostics) + problems, result.sources)
            raise typer.Exit(2)
        if out_dir is not None:
            tables.append((out_dir / ("hccl.json" if len(jobs) == 1 else f"hccl-{j.name}.json"),
                           text))
        else:
            tables.append((output, text))
    return tables


def _topology_files(result, jobs, out) -> list:
    """(name, text) of the Ascend 950 topology file of every server of the selected jobs'
    tables (none for other hardware); exit 2 on an RTC003 self-check failure."""
    from rtc.api import topology_files

    files: dict = {}
    for j in jobs:
        got, problems = topology_files(result.topology, j)
        if problems:
            out(list(result.diagnostics) + problems, result.sources)
            raise typer.Exit(2)
        files.update(got)
    return list(files.items())


def _bundle(result, jobs, tables: list, out, global_table: bool | str = False,
            target: str = "shell") -> list:
    """(file name, text, mode or None) of the env, launch, preflight, calibration and plan
    files (:mod:`rtc.emit.bundle`), built in memory (plan.json's text may be a callable,
    made while the rest is written); exit 2 when one fails its schema."""
    from rtc.emit.bundle import build_bundle

    bundle = build_bundle(result.topology, result.plan, jobs,
                          {(j.name if j else None): p.name for j, (p, _t) in zip(jobs, tables)},
                          global_table=global_table, defer_plan_json=True)
    if bundle.diagnostics:
        out(list(result.diagnostics) + bundle.diagnostics, result.sources)
        raise typer.Exit(2)
    fleet = []
    if target in ("slurm", "ansible"):
        from rtc.emit.fleet import fleet_files

        fleet = fleet_files(bundle, result.topology, result.plan, jobs, target)
    return [(name, text, mode if mode != 0o644 else None)
            for name, text, mode in bundle.outputs] + fleet


#: (test of a file name, what the compile summary calls it), first match wins (the names
#: are those of :mod:`rtc.emit.bundle`); :data:`_KIND_ORDER` is the order it lists them.
_KINDS = (
    (lambda n: n.endswith(".env"), "env"),
    (lambda n: n.startswith("preflight-") and n.endswith(".sh"), "preflight"),
    (lambda n: n == "calibrate.sh", "calibration"),
    (lambda n: n.startswith("proxy-") and n.endswith(".sh"), "proxy"),
    (lambda n: n.endswith(".sh"), "launch"),
    (lambda n: n == "plan.json", "plan"),
    (lambda n: n.startswith("topo-") and n.endswith(".json"), "topology"),
    (lambda n: n.startswith("nccl-topo-"), "NCCL topology"),
    (lambda n: n.startswith("pd-ranktable"), "PD rank table"),
    (lambda n: n.startswith("global-ranktable"), "global rank table"),
    (lambda n: n.startswith("mindie-"), "MindIE config"),
    (lambda n: n.endswith(".sbatch"), "Slurm"),
    (lambda n: n.endswith(".yml"), "Ansible"),
)
_KIND_ORDER = ("env", "launch", "proxy", "preflight", "calibration", "plan", "topology",
               "NCCL topology", "PD rank table", "global rank table", "MindIE config", "Slurm", "Ansible", "other")


def file_kinds(names: list[str]) -> str:
    """What the files ``names`` are, counted by kind in a fixed order, e.g. ``2 env, 2
    launch, 1 plan``: only kinds that were written (no "calibration" without calibrate.sh);
    a name of no known kind counts as ``other``."""
    counts: dict[str, int] = {}
    for n in names:
        kind = next((k for test, k in _KINDS if test(n)), "other")
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{counts[k]} {k}" for k in _KIND_ORDER if k in counts)


def _check_global_table(result, out_dir) -> None:
    """--global-ranktable needs --out-dir, a prefill/decode pair and a 1.x table (usage
    error else)."""
    if out_dir is None:
        fail_usage("--global-ranktable writes into --out-dir DIR")
    if result.topology.preset.is_gpu:
        fail_usage(f"--global-ranktable: hardware {result.topology.preset.name} is an NVIDIA "
                   "GPU server, and NVIDIA GPU servers have no rank table (MindIE's global "
                   "rank table is for Ascend NPUs; NCCL finds its peers itself)",
                   "leave out --global-ranktable on GPU hardware")
    if result.topology.preset.is_a5:
        fail_usage("--global-ranktable: the global rank table has no documented Ascend 950 "
                   "(rank table 2.0) form", "leave out --global-ranktable on this hardware")
    if not any(p.prefill and p.decode for p in result.plan.pairs):
        fail_usage("--global-ranktable: the plan has no prefill/decode pair", "give jobs "
                   "`role prefill` and `role decode` (or a disaggregation block)")


def _write_out_dir(result, jobs, tables: list, out_dir: Path, file: Path, job: str | None,
                   no_diagrams: bool, out, global_table: bool | str = False,
                   target: str = "shell") -> None:
    """Write the rank tables, the bundle, the diagrams and the manifest into ``out_dir``
    in one transaction (:func:`rtc.emit.files.write_all`: all or nothing; exit 2 when one
    cannot be written), then remove the files of an earlier plan (not with --job)."""
    from rtc.cli.diagram_cmd import COMPILE_DIAGRAMS, render_compile_diagrams
    from rtc.emit.files import read_manifest

    diags = list(result.diagnostics)
    extra = _bundle(result, jobs, tables, out, global_table, target)
    folder = os.fspath(out_dir)
    names = [p for p, _t in tables] + [os.path.join(folder, n) for n, _t, _m in extra]
    if not no_diagrams:
        names += [os.path.join(folder, n) for n, _v in COMPILE_DIAGRAMS]
    refuse_input_as_output(names, [file])
    out(diags, result.sources, quiet=True)
    new = _prepare_out_dir(out_dir)
    diagrams = [] if no_diagrams else render_compile_diagrams(result.topology, diags, job)
    files = [(p.name, t, None) for p, t in tables] + extra \
        + [(n, data, None) for n, data in diagrams]
    listed = None
    if job is None:  # --job writes part of a plan: no manifest, prune nothing
        listed = {n for n, _t, _m in files} | {n for n, _v in COMPILE_DIAGRAMS}
    old = read_manifest(out_dir) if listed is not None else set()
    _transaction_checked(out_dir, files, listed, out, result, new)
    for path, _t in tables:
        typer.echo(f"rtc: wrote {path}", err=True)
    if extra:
        typer.echo(f"rtc: wrote {len(extra)} files to {out_dir}: "
                   f"{file_kinds([n for n, _t, _m in extra])}", err=True)
    for name, _data in diagrams:
        typer.echo(f"rtc: wrote {out_dir / name}", err=True)
    if listed is not None:
        _prune(out_dir, old, listed, [file])


def _transaction_checked(out_dir: Path, files: list, listed: set | None, out, result,
                         new: bool) -> None:
    """:func:`_transaction` of files of which plan.json may still be made in its child
    (:func:`rtc.emit.bundle.build_bundle`'s ``defer_plan_json``): when it fails its schema,
    the transaction was rolled back (a ``new`` folder was never created); report the
    RTC003 and exit 2."""
    from rtc.emit.bundle import SelfCheckFailed

    try:
        _transaction(out_dir, files, listed, new)
    except SelfCheckFailed as exc:
        out([exc.diagnostic], result.sources)
        raise typer.Exit(2) from None


def _transaction(out_dir: Path, files: list, listed: set | None, new: bool = False) -> None:
    """:func:`rtc.emit.files.write_all`, or for a folder that does not exist yet (``new``)
    :func:`rtc.emit.new_folder.write_new_folder`; on failure an I/O error (exit 2) naming
    the file."""
    from rtc.emit.files import TransactionError, write_all
    from rtc.emit.new_folder import sweep_hidden, write_new_folder

    try:
        if new:
            write_new_folder(out_dir, files, manifest=listed)   # it sweeps, too
        else:
            write_all(out_dir, files, manifest=listed)
            sweep_hidden(out_dir)   # what a killed run into a then-new folder left beside it
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, SIGTERM (exit 130 / 143 stays)
        typer.echo(f"rtc: interrupted while writing {out_dir}: " + (
            "it is either absent or complete" if new else
            "it holds either all its old files or all the new ones") + ", nothing half-written",
                   err=True)
        raise
    except TransactionError as exc:
        done = ("nothing was written" if new else
                f"nothing in {out_dir} was replaced" if not exc.leftovers else
                "some old files could not be put back; they are kept as "
                + ", ".join(exc.leftovers))
        fail_io(f"cannot write {exc.path}: {exc.strerror}; {done}",
                "remove or rename that folder" if isinstance(exc.cause, IsADirectoryError)
                else "check that the folder is writable and has room")


def _prepare_out_dir(out_dir: Path) -> bool:
    """Check ``out_dir`` and create the folders it is to go in (exit 2 when it is a file,
    they cannot be created, or it holds a folder named like the outputs list). True when
    ``out_dir`` is still to be made, complete, by the transaction (see :func:`_transaction`);
    a folder whose hidden name would not fit the file system is made here."""
    from rtc.emit.files import MANIFEST
    from rtc.emit.new_folder import fits

    missing = False
    try:
        os.lstat(out_dir)
    except (FileNotFoundError, NotADirectoryError):  # a file among the parents: below
        missing = True
    except OSError as exc:   # a name too long for the file system, a loop of symlinks
        fail_io(f"cannot create {out_dir}: {exc.strerror}",
                "give a shorter folder name" if exc.errno == errno.ENAMETOOLONG
                else "check the folder path")
    if out_dir.exists() and not out_dir.is_dir():
        fail_usage(f"--out-dir {out_dir} is a file, not a folder",
                   "give a folder (it is created if missing), or -o FILE for one rank table")
    broken = _broken_link(out_dir)
    if broken:
        fail_usage(f"--out-dir {out_dir} {broken}", "create that folder, or remove the symlink")
    if (out_dir / MANIFEST).is_dir() and not (out_dir / MANIFEST).is_symlink():
        fail_usage(f"{out_dir / MANIFEST} is a folder; rtc keeps its list of outputs there",
                   "remove or rename that folder")
    new = missing and fits(out_dir)
    try:
        (out_dir.parent if new else out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        for a in reversed(out_dir.parents):
            why = _broken_link(a) or (a.exists() and not a.is_dir() and "is a file, not a folder")
            if why:
                fail_usage(f"cannot create --out-dir {out_dir}: {a} {why}",
                           "give a folder path whose parents are folders")
        fail_io(f"cannot create {out_dir}: {exc.strerror}",
                "check that the parent folder exists and is writable")
    return new


def _broken_link(path: Path) -> str | None:
    """What is wrong with ``path`` when it is a symlink that leads to nothing (``is a
    symlink to X, which does not exist`` / ``... a loop of symlinks``), else None."""
    if not path.is_symlink():
        return None
    try:
        os.stat(path)
    except FileNotFoundError:
        return f"is a symlink to {os.readlink(path)}, which does not exist"
    except OSError as exc:
        return f"is a symlink to {os.readlink(path)}, which cannot be followed ({exc.strerror})"
    return None


def _prune(out_dir: Path, old: set, listed: set, inputs=()) -> None:
    """Remove the files an earlier plan wrote to ``out_dir`` that this one does not (its
    servers' env files, scripts, hccl-<job>.json would be read as current), never one of
    ``inputs``. Diagrams are kept even with --no-diagrams."""
    from rtc.emit.files import remove_stale

    removed = remove_stale(out_dir, old, listed, keep=[i for i in inputs if str(i) != "-"])
    if removed:
        shown = ", ".join(removed[:4]) + (", ..." if len(removed) > 4 else "")
        typer.echo(f"rtc: removed {len(removed)} file{'s' if len(removed) != 1 else ''} "
                   f"an earlier plan wrote to {out_dir} ({shown})", err=True)


@app.command("check")
def check_command(
    files: List[Path] = typer.Argument(..., metavar="FILE...", help="The .rtc cluster description(s) (`-` "
                                          "reads standard input); with several, the ports of "
                                          "their jobs on shared hosts are checked together."),
    fmt: str = typer.Option("text", "--format", help=FORMAT_HELP),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Run every stage and check on FILE; write nothing. Exit 1 on errors.

    Examples:

      rtc check examples/a2-2node-dp2-tp8.rtc

      rtc check --format sarif cluster.rtc > rtc.sarif

      rtc check prefill.rtc decode.rtc    # and the ports of both on shared hosts
    """
    out = reporter_for(fmt, "check", input_label(files[0]))
    results = [compile_input(f, strict) for f in files]
    diags, sources = [], {}
    for result in results:
        diags += result.diagnostics
        sources.update(result.sources)
    if len(results) > 1:
        from rtc.api.ports_across import cross_file_ports

        diags += cross_file_ports(results)
    out(diags, sources)
    if all(r.topology is None and not r.sources for r in results):
        raise typer.Exit(2)
    exit_for(diags)
