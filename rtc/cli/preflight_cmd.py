"""`rtc preflight report`: judge the results folders written by the preflight scripts."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rtc.cli.app import app
from rtc.cli.common import exit_for, fail_usage, report, write_stdout

preflight_app = typer.Typer(help="Preflight checks of the servers before a launch: "
                            "`preflight report` (Ascend NPUs), `preflight nccl` (NVIDIA GPUs: "
                            "nccl-tests busbw).",
                            short_help="Preflight results: `report` (NPUs), `nccl` (GPUs).",
                            no_args_is_help=True, add_completion=False,
                            rich_markup_mode=None, pretty_exceptions_enable=False)
app.add_typer(preflight_app, name="preflight")


@preflight_app.command("report")
def report_command(
    results: list[Path] = typer.Argument(..., readable=False, metavar="RESULTS_DIR", help="Results folders (one per server), as "
                                         "written by preflight-<server>.sh."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Parse preflight results into a reachability matrix and findings (RTC560-RTC569,
    RTC580-RTC582): links down, bad net health, IP or gateway mismatches, unreachable peer
    NPUs, HCCL ports not reserved, failed or missing checks; the AllReduce sweep's peak bus
    bandwidth (HCCL Test, else torch_npu) and what was skipped for a missing tool. Exit 1
    when anything is wrong, 2 when a RESULTS_DIR does not exist (RTC001).

    Example:

      rtc compile cluster.rtc --out-dir build/ ; (on each server) build/preflight-atlas-01.sh

      rtc preflight report preflight-results/atlas-01 preflight-results/atlas-02
    """
    _check_format(fmt)
    _finish(fmt, strict, results, "npu")


def _check_format(fmt: str) -> None:
    if fmt not in ("text", "json"):
        fail_usage(f"--format must be text or json (not '{fmt}')")


def _finish(fmt: str, strict: bool, results: list[Path], kind: str) -> None:
    """Judge ``results`` (:func:`rtc.api.preflighting.preflight`) and report: the JSON
    document on stdout, or the tables then the findings; exit 2 when a path was missing,
    else 1 on problems."""
    from rtc.api.preflighting import preflight

    rep = preflight(results, kind=kind, strict=strict)
    if fmt == "json":
        write_stdout(json.dumps(rep.document(rep.diagnostics), indent=2) + "\n")
        if rep.diagnostics:  # the findings are in the document: stderr gets the summary
            from rtc.report.text import summary

            typer.echo(f"rtc: {summary(rep.diagnostics)}", err=True)
    else:
        if rep.text:
            write_stdout(rep.text)
        report(rep.diagnostics, rep.texts)
    if rep.missing:
        raise typer.Exit(2)
    exit_for(rep.diagnostics)


@preflight_app.command("nccl")
def nccl_command(
    results: list[Path] = typer.Argument(..., readable=False, metavar="RESULTS", help="Results folders of GPU "
                                         "servers (written by preflight-<server>.sh), or "
                                         "all_reduce_perf output files."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
) -> None:
    """Read nccl-tests results of NVIDIA GPU servers: busbw per message size, compared with
    the bus bandwidth rtc's cost model expects (RTC570), the captured NVLink islands against
    the plan's (RTC571), failed commands (RTC572), damaged output (RTC575). Exit 1 when
    anything is wrong, 2 when a path does not exist (RTC001).

    Example:

      rtc compile gpu.rtc --out-dir build/ ; (on each server) build/preflight-gpu-01.sh

      rtc preflight nccl preflight-results/gpu-01 preflight-results/gpu-02
    """
    _check_format(fmt)
    _finish(fmt, strict, results, "nccl")
