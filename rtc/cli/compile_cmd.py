"""`rtc compile`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import (FORMAT_HELP, compile_input, fail_usage,
                            input_label, refuse_input_as_output, reporter_for, while_checking,
                            write_or_fail, write_stdout)
from rtc.outputs.targets import DEFAULT_IMAGE, GPU_IMAGE, TARGETS


def _select_jobs(topo, job_name: str | None, need_one: bool) -> list:
    """The jobs whose tables to write (``[None]``: a description without jobs); exit 2 when
    ``--job`` names none, or -o/--stdout would need one of several."""
    from rtc.api.writing import choose_jobs

    jobs, problem = choose_jobs(topo, job_name, need_one)
    if problem is not None:
        fail_usage(*problem)
    return jobs


@app.command("compile")
def compile_command(
    file: Path = typer.Argument(..., readable=False, metavar="FILE", help="The .rtc cluster description (`-` reads standard "
                                          "input)."),
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE", help="Write "
                                         "the rank table here (`-`: stdout, as --stdout)."),
    stdout: bool = typer.Option(False, "--stdout", help="Print the rank table instead of writing it."),
    job: Optional[str] = typer.Option(None, "--job", help="Emit the rank table of this job."),
    out_dir: Optional[str] = typer.Option(None, "--out-dir", help="Write every output into "
                                          "this folder (hccl.json, or hccl-<job>.json per "
                                          "job), per-server .env / .sh / preflight-*.sh, "
                                          "plan.json, plus topology.svg and groups.svg."),
    no_diagrams: bool = typer.Option(False, "--no-diagrams", help="With --out-dir: skip "
                                     "topology.svg and groups.svg."),
    global_table: bool = typer.Option(False, "--global-ranktable", help="With --out-dir: "
                                      "also write the MindCluster / MindIE global rank table "
                                      "of each prefill/decode pair (global-ranktable.json)."),
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
    force: bool = typer.Option(False, "--force", help="With --out-dir: replace files rtc did "
                               "not write there (without it: refused, nothing written)."),
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
         target=target, image=image, force=force)


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
         target: str, image: str | None, force: bool = False) -> None:
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
        _write_k8s(result, jobs, tables, out_dir, file, job, image, out, force)
        return
    topo_files = _topology_files(result, jobs, out) if output is not None else []
    if out_dir is not None:
        _write_out_dir(result, jobs, tables, out_dir, file, job, no_diagrams, out, global_table,
                       target, force)
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
               image: str | None, out, force: bool = False) -> None:
    """Write each job's LeaderWorkerSet and rings-config ConfigMap into ``out_dir``
    (:func:`rtc.api.write_outputs`, target k8s), all or nothing; exit 1 when a job has no
    LWS form (RTC770), 2 when a manifest fails its schema (RTC003), kubernetes-validate is
    not installed (RTC006) or a manifest cannot be written."""
    from rtc.rules import SCHEMA_SELF, TOOL_REQUIRED

    if not any(j is not None for j in jobs):
        fail_usage("--target k8s writes one LeaderWorkerSet per job, and the file has no job",
                   "add a job block, or use --target shell")
    done = _write_outputs(result, out, file, out_dir=out_dir, job=job, target="k8s",
                          image=image, tables=tables, force=force,
                          refused_exit=lambda ds: 2 if any(
                              d.code in (SCHEMA_SELF.code, TOOL_REQUIRED.code) for d in ds) else 1)
    typer.echo(f"rtc: wrote {len(done.files)} Kubernetes manifests to {out_dir} ("
               + ", ".join(done.files) + ")", err=True)
    for line in k8s_start_lines(out_dir, {n: _read_k8s(out_dir, n) for n in done.files}):
        typer.echo(line, err=True)
    _say_pruned(out_dir, done.removed)


def _write_outputs(result, out, file: Path, *, refused_exit=lambda diags: 2, **options):
    """:func:`rtc.api.write_outputs` of ``result`` with the CLI's hooks: before anything is
    written, refuse to overwrite the input ``file`` and print the report; print diagram
    warnings and what an interrupt left. Exits with its messages: ``refused_exit(diags)``
    when an output was refused (the report printed), 2 for an unusable folder or a failed
    write, or a deferred plan.json failing its schema."""
    from rtc.api import write_outputs
    from rtc.api.writing import Hooks, OutputsRefused
    from rtc.emit.bundle import SelfCheckFailed
    from rtc.outputs.out_dir import OutputProblem

    diags = list(result.diagnostics)

    def before_write(paths: list) -> None:
        refuse_input_as_output(paths, [file])
        out(diags, result.sources, quiet=True)

    hooks = Hooks(before_write, _warn_diagram, lambda line: typer.echo(line, err=True))
    try:
        return write_outputs(result, inputs=[file], hooks=hooks, **options)
    except OutputsRefused as refused:
        out(diags + refused.diagnostics, result.sources)
        raise typer.Exit(refused_exit(refused.diagnostics)) from None
    except OutputProblem as p:
        fail_usage(p.message, p.hint, p.rule)
    except SelfCheckFailed as exc:   # plan.json, made while the rest was written
        out([exc.diagnostic], result.sources)
        raise typer.Exit(2) from None


def _warn_diagram(rule, message: str, hint: str) -> None:
    """Print a diagram's RTC004 / RTC005 warning (the diagrams never fail a compile)."""
    from rtc.cli.common import warn_internal, warn_tool_missing
    from rtc.rules import TOOL_MISSING

    (warn_tool_missing if rule is TOOL_MISSING else warn_internal)(message, hint)


def _say_pruned(out_dir: Path, removed: list[str]) -> None:
    """The line that says which files of an earlier plan were removed (none: no line)."""
    from rtc.outputs.out_dir import pruned_message

    line = pruned_message(out_dir, removed)
    if line:
        typer.echo(line, err=True)


def _read_k8s(out_dir: Path, name: str) -> str:
    """The text of the preflight Job rtc just wrote (its header holds the judge command);
    "" for the other manifests, whose names are all :func:`k8s_start_lines` needs."""
    from rtc.emit import k8s_preflight

    return (out_dir / name).read_text(encoding="utf-8") if name == k8s_preflight.FILE else ""


def k8s_start_lines(out_dir: Path, texts: dict[str, str]) -> list[str]:
    """How to start the manifests written into ``out_dir`` (``texts``: name -> text): the
    preflight Job first, waited for (its pods request the same NPUs / GPUs on the same
    nodes as the LeaderWorkerSets: applied together, one side waits for the other's
    devices, and a preflight beside a running job measures a busy server), its logs
    judged as its header says, then the ConfigMaps and the LeaderWorkerSets by name."""
    from rtc.emit import k8s_preflight

    names = sorted((n for n in texts if n != k8s_preflight.FILE),
                   key=lambda n: (not n.startswith("rings-config-"), n))
    rest = " ".join(f"-f {out_dir / n}" for n in names)
    if k8s_preflight.FILE not in texts:
        return [f"rtc: start them with: kubectl apply {rest}"]
    judge = next(x for x in texts[k8s_preflight.FILE].splitlines()
                 if x.startswith(k8s_preflight.JUDGE))[len(k8s_preflight.JUDGE):]
    return [f"rtc: first run the preflight and wait for it (its pods take the servers' "
            f"NPUs/GPUs, as the jobs' pods do): kubectl apply -f "
            f"{out_dir / k8s_preflight.FILE} && kubectl wait --for=condition=complete "
            f"--timeout=30m job/{k8s_preflight.NAME}",
            f"rtc: then judge it: {judge}",
            f"rtc: then start the jobs: kubectl apply {rest}"]


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
    from rtc.api.writing import choose_jobs

    jobs, problem = choose_jobs(topo, job_name, need_one)
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
                   target: str = "shell", force: bool = False) -> None:
    """Write the rank tables, the bundle, the diagrams and the outputs list into
    ``out_dir`` in one transaction (:func:`rtc.api.write_outputs`: all or nothing; exit 2
    when one cannot be written), then remove the files of an earlier plan (not with
    --job), and say what was written."""
    done = _write_outputs(result, out, file, out_dir=out_dir, job=job, target=target,
                          diagrams=not no_diagrams, global_table=global_table or None,
                          tables=tables, defer_plan_json=True, force=force)
    for path in done.tables:
        typer.echo(f"rtc: wrote {path}", err=True)
    if done.files:
        typer.echo(f"rtc: wrote {len(done.files)} files to {out_dir}: "
                   f"{file_kinds(done.files)}", err=True)
    for name in done.diagrams:
        typer.echo(f"rtc: wrote {out_dir / name}", err=True)
    _say_pruned(out_dir, done.removed)


def _transaction(out_dir: Path, files: list, listed: set | None, new: bool = False) -> None:
    """:func:`rtc.outputs.out_dir.transaction`; on failure an I/O error (exit 2) naming
    the file; interrupted, the line that says what the folder holds."""
    from rtc.outputs.out_dir import OutputProblem, interrupted_message, transaction

    try:
        transaction(out_dir, files, listed, new)
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, SIGTERM (exit 130 / 143 stays)
        typer.echo(interrupted_message(out_dir, new), err=True)
        raise
    except OutputProblem as p:
        fail_usage(p.message, p.hint, p.rule)
