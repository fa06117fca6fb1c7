"""`rtc validate`: check existing rank tables (for CI and pre-commit)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_usage, input_label, write_stdout

HARDWARE_HELP = ("Hardware preset to check against (atlas-800t-a2, atlas-800-a3, atlas-800-910a, "
                 "generic). Default: inferred from the table: version 1.2 -> atlas-800-a3; 1.0 -> "
                 "atlas-800t-a2 (device ids 0..7) or atlas-800-a3 typical networking (ids above 7); "
                 "PD tables by super_device_id; legacy group_list -> atlas-800-910a.")

SCHEMA_HELP = ("Check as this form instead of detecting it (hccl-v1.0, hccl-v1.2, hccl-v2.0, "
               "hccl-legacy-cloud, hccl-legacy-lab, pd-ranktable, topo-v2.0).")
MAX_FINDINGS_HELP = "Report at most N findings (after folding); the summary still counts all."
NO_FOLD_HELP = ("Report every finding on its own: by default more than 10 findings of one rule "
                "and pattern (every rank_id a number) are one finding with a count and examples.")

INVENTORY_HELP = ("Folder of captures: INVENTORY/<server_id>/ per server (or the folder itself "
                  "for a one-server table); values are checked against them.")
WAIT_HELP = ("Re-read each file every second while it is missing, not complete JSON or "
             "its status is initializing (at most SECONDS), then validate it as with "
             "--require-completed; for an init container.")
PODS_HELP = ("`kubectl get pods -o json` of the job: each table server is checked against its "
             "pod's node, IP and the NPUs the device plugin gave it. With `kubectl get "
             "pods,nodes -o json` the pods of a group that must share a node label's "
             "domain (LWS exclusive-topology, Kueue required topology) are checked too.")
REQUIRE_COMPLETED_HELP = ("A ConfigMap's rank table whose status is still initializing is an "
                          "error (a note otherwise).")


@app.command("validate")
def validate_command(
    files: List[str] = typer.Argument(..., metavar="FILES", help="Rank tables to check (hccl*.json, rank_table*.json); "
                                                "`-` reads standard input."),
    hardware: Optional[str] = typer.Option(None, "--hardware", help=HARDWARE_HELP),
    inventory: Optional[Path] = typer.Option(None, "--inventory", readable=False, metavar="DIR",
                                             help=INVENTORY_HELP),
    fmt: str = typer.Option("text", "--format", help="Output: text, json, github or sarif."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    exit_zero: bool = typer.Option(False, "--exit-zero",
                                   help="Exit 0 even when problems are found (usage errors still exit 2)."),
    schema: Optional[str] = typer.Option(None, "--schema", help=SCHEMA_HELP),
    max_findings: Optional[int] = typer.Option(None, "--max-findings", min=1, metavar="N",
                                               help=MAX_FINDINGS_HELP),
    no_fold: bool = typer.Option(False, "--no-fold", help=NO_FOLD_HELP),
    require_completed: bool = typer.Option(False, "--require-completed",
                                           help=REQUIRE_COMPLETED_HELP),
    pods: Optional[Path] = typer.Option(None, "--pods", readable=False, metavar="PODS_JSON", help=PODS_HELP),
    wait: Optional[float] = typer.Option(None, "--wait", metavar="SECONDS", min=0,
                                         help=WAIT_HELP),
) -> None:
    """Check existing rank tables: JSON syntax, the schema of their form, and the same
    semantic checks as `rtc compile` (ranks, counts, unique ids and IPs, super pods,
    hardware), reported with the JSON line and column.

    Exit codes: 0 no errors (warnings allowed), 1 errors (or warnings with --strict),
    2 usage or I/O error; --exit-zero exits 0 unless the command line is wrong.

    Examples:

      rtc validate hccl.json

      rtc validate --format github hccl*.json

      rtc validate --format sarif rank_table.json > rtc.sarif

      rtc validate --hardware atlas-800-910a --inventory captures/ hccl.json

      rtc validate --max-findings 20 merged_hccl.json

      kubectl get cm rings-config-deepseek -o yaml | rtc validate -
    """
    from rtc.diagnostics import Severity, has_errors, sorted_diagnostics
    from rtc.report.folding import cap, fold
    from rtc.report.formats import get_reporter

    reporter = get_reporter(fmt)
    inv = _check_options(reporter, fmt, hardware, schema, inventory)
    require_completed = _wait(files, wait) or require_completed
    diags, sources, infos, unreadable = _validate_files(files, hardware, schema, inv,
                                                        not no_fold, require_completed, pods)
    diags = sorted_diagnostics([d.with_severity(Severity.ERROR)
                                if strict and d.severity is Severity.WARNING else d
                                for d in diags])
    shown, omitted = cap(diags if no_fold else fold(diags), max_findings)
    _print_report(reporter, fmt, shown, omitted, sources, infos, unreadable)
    raise typer.Exit(0 if exit_zero else 2 if unreadable else 1 if has_errors(diags) else 0)


def _check_options(reporter, fmt: str, hardware: str | None, schema: str | None,
                   inventory: Path | None):
    """Exit 2 on an unknown --format, --hardware or --schema (with the closest name), or
    an --inventory that is no folder; the inventory to use, or None."""
    import difflib

    from rtc.api.validating import Inventory
    from rtc.model.presets import presets
    from rtc.report.formats import reporter_names
    from rtc.schema.forms import FORMS

    if reporter is None:
        fail_usage(f"unknown --format '{fmt}'", "formats: " + ", ".join(reporter_names()))
    if hardware is not None and hardware not in presets():
        close = difflib.get_close_matches(hardware, list(presets()), n=1)
        fail_usage(f"unknown --hardware '{hardware}'",
                   (f"did you mean '{close[0]}'? " if close else "") + "presets: " + ", ".join(presets()))
    if hardware is not None and presets()[hardware].is_gpu:
        fail_usage(f"--hardware {hardware} is an NVIDIA GPU preset: GPU servers have no HCCL "
                   "rank table to validate", "give an Ascend preset, or check a GPU cluster's "
                   ".rtc file with `rtc check`")
    if schema is not None and schema not in FORMS:
        close = difflib.get_close_matches(schema, FORMS, n=1)
        fail_usage(f"unknown --schema '{schema}'",
                   (f"did you mean '{close[0]}'? " if close else "") + "forms: " + ", ".join(FORMS))
    if inventory is None:
        return None
    if not inventory.is_dir():
        fail_usage(f"--inventory {inventory} is not a folder",
                   "give the folder that holds INVENTORY/<server_id>/ captures")
    return Inventory(str(inventory))


def _wait(files: List[str], seconds: float | None) -> bool:
    """--wait: poll each file while it is missing, not complete JSON or initializing
    (exit 2 for `-`), at most ``seconds`` each, saying on stderr when the wait ran out;
    True when waiting was asked for (the tables are then validated as
    --require-completed, missing ones reported as unreadable)."""
    import os

    from rtc.api.validate_k8s import wait_for_table

    if seconds is None:
        return False
    if "-" in files:
        fail_usage("--wait re-reads files; standard input cannot be re-read",
                   "give the mounted table's path, e.g. /user/serverid/devindex/config/hccl.json")
    for name in dict.fromkeys(files):
        if os.path.exists(name) and not Path(name).is_file():
            continue      # a folder or a pipe: reported by the validation that follows
        why = wait_for_table(name, seconds)
        if why is not None:
            typer.echo(f"rtc: {name} {why} after {seconds:g} s; validating it as it is",
                       err=True)
    return True


def _validate_files(files: List[str], hardware, schema, inv, fold: bool,
                    require_completed: bool = False, pods: Path | None = None):
    """Validate each file once (``-``: standard input; YAML is read as ConfigMaps):
    (diagnostics, sources by name, FileInfo per file, how many could not be read)."""
    from rtc.api.validating import load_for_report, validate_source
    from rtc.diagnostics import Span
    from rtc.report.registry import FileInfo
    from rtc.tables.configmap import looks_like_yaml

    diags = []
    sources: dict[str, str] = {}
    infos: list = []
    unreadable = 0
    seen: set[str] = set()
    for name in files:
        if name in seen:
            continue
        seen.add(name)
        (data, problem), label = load_for_report(name), input_label(name)
        if problem is not None:
            # attribute the I/O error to the file so per-file counts match the summary
            unreadable += 1
            diags.append(problem._replace(span=Span.whole_file(label)))
            infos.append(FileInfo(label))
            continue
        if looks_like_yaml(data, label):
            from rtc.api.validate_k8s import validate_configmap

            rep = validate_configmap(data, label, hardware=hardware, schema=schema,
                                     inventory=inv, fold=fold,
                                     require_completed=require_completed)
        else:
            from rtc.api.validate_k8s import initializing_json

            rep = (initializing_json(data, label, True) if require_completed else None) \
                or validate_source(data, label, hardware=hardware, schema=schema,
                                   inventory=inv, fold=fold)
        sources[label] = rep.text or ""
        infos.append(FileInfo(label, rep.form, rep.hardware))
        diags.extend(rep.diagnostics)
        unreadable += rep.unreadable    # not UTF-8 (RTC603): exit 2, as for RTC001
        if pods is not None:
            unreadable += _check_pods(pods, rep, label, diags, sources)
    return diags, sources, infos, unreadable


def _check_pods(pods: Path, rep, label: str, diags: list, sources: dict) -> int:
    """Add the findings of ``--pods`` against the table of ``rep``; 1 when the pods file
    cannot be read (its RTC001 is added once), else 0."""
    from rtc.api.validating import load_for_report
    from rtc.tables.pods import check_pods, load_pods

    data, problem = load_for_report(str(pods))
    if problem is not None:
        if problem not in diags:
            diags.append(problem)
            return 1
        return 0
    found, smap, more = load_pods(data, str(pods))
    sources[str(pods)] = data.decode("utf-8", errors="replace")
    new = more + (check_pods(found, smap, str(pods), rep.doc, label) if found else [])
    diags.extend(d for d in new if d not in diags)
    return 0


def _print_report(reporter, fmt: str, diags, omitted, sources: dict, infos: list,
                  unreadable: int) -> None:
    """The report of ``diags`` on stdout (text: compiler style, coloured on a terminal), and
    the summary line, counting ``omitted`` too (on stderr for the machine formats)."""
    from rtc.report.folding import omitted_text
    from rtc.report.registry import ReportContext, summary_line

    line = summary_line(list(diags) + list(omitted), len(infos) - unreadable)
    if unreadable:
        line = line[:-1] + f", {unreadable} could not be read)"
    if omitted:
        line += f"; {omitted_text(omitted)}"
    if fmt == "text" and sys.stdout is not None and sys.stdout.isatty():
        from rtc.report.text import print_diagnostics

        print_diagnostics(diags, sources, stream=sys.stdout, limit=max(1, len(diags)))
        write_stdout(line + "\n")
    elif fmt == "text":
        from rtc.report.text import render_text

        body = render_text(diags, sources, limit=max(1, len(diags)))
        write_stdout((body + "\n" if body else "") + line + "\n")
    else:
        write_stdout(reporter(diags, ReportContext.make(sources, infos, omitted=omitted)))
        _say_unreadable(diags)
        typer.echo(line, err=True)


def _say_unreadable(diags) -> None:
    """On stderr, each file that could not be read (RTC001: the file and why, and the
    hint): with --format json/github/sarif on stdout (often redirected to a file), the
    summary line alone would not say which file or why."""
    from rtc.cli.common import say
    from rtc.rules import IO_ERROR

    for d in diags:
        if d.code == IO_ERROR.code:
            say(IO_ERROR, d.message, d.hint)
