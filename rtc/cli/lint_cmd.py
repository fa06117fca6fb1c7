"""`rtc lint`: check the launch scripts and env files people already run."""

from __future__ import annotations


import os
from pathlib import Path
from typing import List, Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_usage, write_stdout

NODE_HELP = ("Name the node a script runs on: NAME=FILE (repeatable). Used when the script "
             "gives no host IP (HCCL_IF_IP, VLLM_HOST_IP, --host, --node-ip-address).")


@app.command("lint")
def lint_command(
    scripts: List[str] = typer.Argument(..., metavar="SCRIPT...",
                                        help="What each node runs: shell scripts (env files "
                                             "they source are read), or one file with "
                                             "`## node-a` sections."),
    table: Optional[Path] = typer.Option(None, "--table", readable=False, metavar="HCCL_JSON",
                                         help="Check the scripts against this rank table "
                                              "(host IPs, devices, world size)."),
    hardware: Optional[str] = typer.Option(None, "--hardware",
                                           help="Hardware preset (default atlas-800t-a2, or "
                                                "the table's)."),
    inventory: Optional[Path] = typer.Option(None, "--inventory", readable=False, metavar="DIR",
                                             help="Hardware captures, DIR/<server_id>/, "
                                                  "checked with --table's servers."),
    vllm_version: Optional[str] = typer.Option(None, "--vllm-version", metavar="V",
                                               help="The vLLM release the nodes run (decides "
                                                    "which --headless forms are rejected)."),
    node: List[str] = typer.Option([], "--node", metavar="NAME=FILE", help=NODE_HELP),
    against: Optional[Path] = typer.Option(None, "--against", readable=False, metavar="CLUSTER_RTC",
                                           help="Report where the scripts drift from this "
                                                "description's plan (flags, env, nodes)."),
    fmt: str = typer.Option("text", "--format", help="Output: text, json, github or sarif."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    exit_zero: bool = typer.Option(False, "--exit-zero",
                                   help="Exit 0 even when problems are found (usage errors "
                                        "still exit 2)."),
) -> None:
    """Lint launch scripts: read as shell (nothing runs), lifted into rtc's plan and
    checked by the rules of `rtc compile`, at script:line:col. Exit 0 no errors, 1 errors
    (or warnings with --strict), 2 usage or I/O.

    Example: rtc lint --vllm-version 0.11.0 --table hccl.json atlas-01.sh atlas-02.sh
    """
    _run(scripts, table, hardware, inventory, vllm_version, node, fmt, strict, exit_zero,
         against)


def _run(scripts, table, hardware, inventory, vllm_version, node, fmt, strict, exit_zero,
         against=None):
    """Lint ``scripts`` as :func:`lint_command` says and exit with its code."""
    from rtc.api.linting import lint_files
    from rtc.diagnostics import Severity, has_errors, sorted_diagnostics
    from rtc.report.formats import get_reporter

    reporter = get_reporter(fmt)
    names = _check_options(reporter, fmt, hardware, node, inventory, table, scripts)
    _check_version(vllm_version)
    topo, diags, table_text = None, [], {}
    if table is not None:
        topo, diags, table_text = _read_table(str(table), hardware, inventory)
    plan = _compile_against(str(against)) if against is not None else None
    rep = lint_files(list(dict.fromkeys(scripts)), names=names, hardware=hardware,
                     vllm_version=vllm_version, table=topo, against=plan)
    diags = diags + rep.diagnostics
    if strict:
        diags = [d.with_severity(Severity.ERROR) if d.severity is Severity.WARNING else d
                 for d in diags]
    diags = sorted_diagnostics(diags)
    _print(reporter, fmt, diags, {**table_text, **rep.sources}, len(scripts) - rep.unreadable)
    if exit_zero:
        raise typer.Exit(0)
    if rep.unreadable and not rep.sources:
        raise typer.Exit(2)
    if has_errors(diags):
        raise typer.Exit(1)


def _check_options(reporter, fmt: str, hardware, node: list[str], inventory, table,
                   scripts_given=()) -> dict:
    import difflib

    from rtc.model.presets import presets
    from rtc.report.formats import reporter_names

    if reporter is None:
        fail_usage(f"unknown --format '{fmt}'", "formats: " + ", ".join(reporter_names()))
    if hardware is not None and hardware not in presets():
        close = difflib.get_close_matches(hardware, list(presets()), n=1)
        fail_usage(f"unknown --hardware '{hardware}'",
                   (f"did you mean '{close[0]}'? " if close else "")
                   + "presets: " + ", ".join(presets()))
    if inventory is not None and table is None:
        fail_usage("--inventory needs --table", "the captures are compared with the rank "
                   "table's servers: give --table hccl.json too")
    if inventory is not None and not inventory.is_dir():
        fail_usage(f"--inventory {inventory} is not a folder",
                   "give the folder that holds INVENTORY/<server_id>/ captures")
    names = {}
    for item in node:
        name, eq, path = item.partition("=")
        if not eq or not name or not path:
            fail_usage(f"--node {item}: write NAME=FILE", "e.g. --node atlas-01=head.sh")
        if path not in {str(p) for p in scripts_given} and not os.path.exists(path):
            fail_usage(f"--node {item}: {path} does not exist",
                       "give the path of one of the scripts, as on the command line")
        names[path] = name
    return names


def _check_version(vllm_version) -> None:
    """RTC002 for a --vllm-version that is no version number."""
    from rtc.plan.versions import parse_version, version_problem

    if vllm_version is not None and parse_version(vllm_version) is None:
        fail_usage(f"--vllm-version {vllm_version} {version_problem(vllm_version)}",
                   "give the vLLM release the nodes run, e.g. --vllm-version 0.11.0 "
                   "(`pip show vllm` on a node)")


def _read_table(path: str, hardware, inventory):
    """The --table lowered into a Topology (with --inventory checked against it), the
    table's own findings and its text."""
    from rtc.api.linting import read_table
    from rtc.api.validating import Inventory, load_for_report
    from rtc.cli.common import fail_io

    data, problem = load_for_report(path)
    if problem is not None:
        fail_io(problem.message, "check the --table path")
    inv = Inventory(str(inventory)) if inventory is not None else None
    sources: dict = {}
    topo, diags = read_table(path, hardware, inv, loader=lambda p: (data, None),
                             sources=sources)
    return topo, diags, sources


def _compile_against(path: str):
    """The compile result of --against (exit 2 when it cannot be read or parsed)."""
    from rtc.api import compile_file
    from rtc.cli.common import fail_io

    result = compile_file(path)
    if result.topology is None or result.plan is None:
        first = next((d.message for d in result.diagnostics), "it cannot be compiled")
        fail_io(f"--against {path}: {first}", "give a .rtc description that `rtc check` reads")
    return result


def _print(reporter, fmt: str, diags, sources: dict, files: int) -> None:
    from rtc.report.registry import FileInfo, ReportContext, summary_line

    line = summary_line(list(diags), files)
    if fmt == "text":
        from rtc.report.text import render_text

        body = render_text(diags, sources, limit=max(1, len(diags)))
        write_stdout((body + "\n" if body else "") + line + "\n")
    else:
        infos = [FileInfo(name) for name in sources]
        write_stdout(reporter(diags, ReportContext.make(sources, infos, command="lint")))
        typer.echo(line, err=True)

