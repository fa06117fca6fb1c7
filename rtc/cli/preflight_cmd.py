"""`rtc preflight report`: judge the results folders written by the preflight scripts."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
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
    results: list[Path] = typer.Argument(..., metavar="RESULTS_DIR", help="Results folders (one per server), as "
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
    from rtc.preflight import npu_bandwidth
    from rtc.preflight.findings import analyse
    from rtc.preflight.results import load_results

    _check_format(fmt)
    missing = [p for p in results if not p.exists()]
    with _unpacked(results) as (paths, relabel):
        folders = [load_results(p) for p in paths]
        diags, matrix, texts = analyse(folders)
        diags, texts = relabel(diags, texts)
    text = matrix.text() if any(r.problem is None for r in folders) else ""  # none unread
    text += npu_bandwidth.text(folders)
    sweeps = [x for x in map(npu_bandwidth.to_dict, folders) if x is not None]
    _finish(missing, diags, texts, fmt, strict, text,
            lambda ds: {"servers": [r.server for r in folders], "matrix": matrix.to_dict(),
                        **({"bandwidth": sweeps} if sweeps else {}),
                        "diagnostics": [d.to_dict() for d in ds]})


@contextmanager
def _unpacked(results: list[Path]):
    """``(paths, relabel)``: the results folders to read, a log among ``results`` (Slurm's
    per-node output files, ``kubectl logs``; :mod:`rtc.preflight.stream`) unpacked into a
    temporary folder per server; ``relabel(diags, texts)`` names a file of such a folder
    ``LOG#SERVER/FILE`` instead of its temporary path. Paths that do not exist are left
    out (reported by :func:`_finish`)."""
    from rtc.preflight.stream import is_log, unpack

    with tempfile.TemporaryDirectory(prefix="rtc-preflight-") as tmp:
        paths, names = [], {}
        for i, p in enumerate(results):
            if not p.exists():
                continue
            if not is_log(str(p)):
                paths.append(str(p))
                continue
            for server, folder in unpack(str(p), os.path.join(tmp, str(i))):
                paths.append(folder)
                names[folder] = f"{p}#{server}"

        def relabel(diags: list, texts: dict):
            def name(f: str | None):
                for folder, label in names.items():
                    if f and f.startswith(folder + os.sep):
                        return label + f[len(folder):]
                return f
            out = [d._replace(span=d.span._replace(file=name(d.span.file)))
                   if d.span is not None else d for d in diags]
            return out, {name(k): v for k, v in texts.items()}

        yield paths, relabel


def _check_format(fmt: str) -> None:
    if fmt not in ("text", "json"):
        fail_usage(f"--format must be text or json (not '{fmt}')")


def _finish(missing: list[Path], diags: list, texts: dict, fmt: str, strict: bool, text: str,
            document) -> None:
    """Report ``diags`` (RTC001 for each ``missing`` path first; ``--strict`` applied): the
    JSON ``document(diags)`` on stdout, or ``text`` then the findings; exit 2 when a path
    was missing, else 1 on problems."""
    from rtc.diagnostics import Severity, sorted_diagnostics

    diags = sorted_diagnostics(_missing(missing) + diags)
    if strict:
        diags = [d.with_severity(Severity.ERROR) if d.severity is Severity.WARNING else d
                 for d in diags]
    if fmt == "json":
        write_stdout(json.dumps(document(diags), indent=2) + "\n")
        if diags:  # the findings are in the document: stderr gets the summary line only
            from rtc.report.text import summary
            typer.echo(f"rtc: {summary(diags)}", err=True)
    else:
        if text:
            write_stdout(text)
        report(diags, texts)
    if missing:
        raise typer.Exit(2)
    exit_for(diags)


def _missing(paths: list[Path]) -> list:
    """An I/O error (RTC001) for each results folder that does not exist."""
    from rtc.diagnostics import Span, error
    from rtc.rules import IO_ERROR

    return [error(IO_ERROR, f"cannot read {p}: it does not exist", Span.whole_file(str(p)),
                  hint="pass the folders the preflight scripts wrote "
                       "(default preflight-results/SERVER)")
            for p in paths]


@preflight_app.command("nccl")
def nccl_command(
    results: list[Path] = typer.Argument(..., metavar="RESULTS", help="Results folders of GPU "
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
    from rtc.preflight.nccl import judge, table

    _check_format(fmt)
    missing = [p for p in results if not p.exists()]
    with _unpacked(results) as (paths, relabel):
        judged = [judge(p) for p in paths]
        texts = {k: v for r, _d in judged for k, v in r.texts.items()}
        found, texts = relabel([d for _r, ds in judged for d in ds], texts)
    _finish(missing, found, texts, fmt, strict,
            "".join(table(r) for r, _d in judged),
            lambda ds: {"results": [_nccl_json(r) for r, _d in judged],
                        "diagnostics": [d.to_dict() for d in ds]})


def _nccl_json(r) -> dict:
    rows = [] if r.run is None else [
        {"size": x.size, "time_us": x.time, "algbw_gbps": x.algbw, "busbw_gbps": x.busbw,
         "in_place_busbw_gbps": x.in_busbw, "wrong": x.wrong} for x in r.run.rows]
    return {"server": r.label, "gpus": r.run.gpus if r.run else None,
            "expected_busbw_gbps": r.expected, "expected_link": r.link, "rows": rows}
