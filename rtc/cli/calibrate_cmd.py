"""`rtc calibrate`: fit a link class's alpha and bandwidth to HCCL Test / nccl-tests
output and print a `links` block."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import fail_io, fail_usage, write_stdout

#: The most ranks --ranks takes: the largest world size of a job
#: (rtc.syntax.schema.MAX_WORLD, not imported here to keep start-up light).
_MAX_RANKS = 2_097_152


@app.command("calibrate")
def calibrate_command(
    results: List[Path] = typer.Argument(..., readable=False, metavar="RESULTS...", help="HCCL Test or nccl-tests output files of one link class."),
    link: str = typer.Option(..., "--link", help="The link class measured, e.g. roce-200ge or hccs-910b (rtc cost --list-params)."),
    ranks: int = typer.Option(..., "--ranks", min=2, max=_MAX_RANKS, help="Ranks in the benchmark (mpirun -np)."),
    op: Optional[str] = typer.Option(None, "--op", help="allreduce, allgather, reduce_scatter, alltoall or broadcast (default: from the file or binary name)."),
    algorithm: Optional[str] = typer.Option(None, "--algorithm", help="ring or mesh (default: mesh for hccs-* inside a server, ring otherwise)."),
) -> None:
    """Fit alpha and bandwidth of one link class to measured collective times.

    Run HCCL Test across the link (e.g. `mpirun -np 16 all_reduce_test -b 8K -e 1G -f 2
    -p 8` for RoCE between two servers), save its output, and pass it here. rtc fits
    time = steps x alpha + bytes x factor / bandwidth by least squares and prints a
    `links` block to paste into the .rtc file; rtc cost and rtc advise then use it.

    Examples:

      rtc calibrate ar-16p.txt --link roce-200ge --ranks 16

      rtc calibrate all_reduce_perf.log --link roce-400ge --ranks 16 --op allreduce
    """
    from rtc.cost.params import load_params
    from rtc.cost.calibrate import fit_link
    from rtc.cost.errors import CostInputError
    from rtc.preflight.bench_output import OPS, BenchOutputError, read_bench_output
    from rtc.readfile import read_text, unreadable
    from rtc.report.cost_report import links_block

    classes = load_params().links
    if link not in classes:
        fail_usage(f"unknown link class '{link}'", "classes: " + ", ".join(classes))
    if algorithm not in (None, "ring", "mesh"):
        fail_usage(f"--algorithm must be ring or mesh (not '{algorithm}')")
    if op is not None and op not in set(OPS.values()):
        fail_usage(f"--op must be one of {', '.join(sorted(set(OPS.values())))} (not '{op}')")
    runs = []
    for path in results:
        try:
            text = read_text(path, errors="replace")
            runs.append(read_bench_output(str(path), text))
        except OSError as exc:
            fail_io(*unreadable(path, exc))
        except BenchOutputError as exc:
            fail_usage(str(exc), "pass the text HCCL Test or nccl-tests printed")
    chosen = _collective(op, runs)
    algo = algorithm or ("mesh" if link.startswith("hccs") else "ring")
    points = [(s.nbytes, s.seconds) for r in runs for s in r.samples]
    try:
        fit = fit_link(link, chosen, ranks, points, algo)
    except CostInputError as exc:
        fail_usage(str(exc), "check the files: " + ", ".join(str(p) for p in results))
    for r in runs:
        for note in r.notes:
            typer.echo(f"rtc: note: {note}", err=True)
    if fit.r2 < 0.98:
        typer.echo(f"rtc: warning: the fit is poor (R^2 {fit.r2:.3f}): the files may mix "
                   "links, rank counts or collectives, or the run was disturbed; measure "
                   "again before pasting", err=True)
    write_stdout(links_block([fit], [str(p) for p in results]))


def _collective(op: str | None, runs) -> str:
    """The collective measured: ``--op``, else what the file names say (one for all).
    A file name that says another collective than ``--op`` is a usage error."""
    named = {r.op for r in runs if r.op is not None}
    if op is not None:
        other = sorted(named - {op})
        if other:
            fail_usage(f"--op {op}, but the file names say {', '.join(other)}",
                       "rename the files or give the --op they measured")
        return op
    if len(named) == 1 and all(r.op is not None for r in runs):
        return named.pop()
    if not named:
        fail_usage("the file names do not say which collective was measured",
                   "give --op allreduce (or the one measured)")
    fail_usage(f"the files measured different collectives ({', '.join(sorted(named))})",
               "calibrate one collective at a time")
