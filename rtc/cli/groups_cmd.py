"""`rtc groups`: the communication groups of a job, member by member."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import checked_topology, fail_usage, while_checking, write_stdout

_DIMS = ("tp", "pcp", "pp", "dp", "ep")


@app.command("groups")
def groups_command(
    file: Path = typer.Argument(..., readable=False, metavar="FILE", help="The .rtc cluster description."),
    job: Optional[str] = typer.Option(None, "--job", help="Only this job (default: every job)."),
    dim: str = typer.Option("all", "--dim", help="tp, pp, dp, ep, pcp or all."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """Print the parallel groups of FILE's jobs as the framework builds them.

    Every member is shown as `rank (server:device ip)`; groups that cross servers are
    marked. The file is checked first: with any error nothing is printed and the exit
    code is 1.

    Examples:

      rtc groups examples/a2-2node-pp2-tp8.rtc --dim pp

      rtc groups examples/pd-a3.rtc --job decode --format json
    """
    from rtc.api import compile_file

    if dim not in _DIMS + ("all",):
        fail_usage(f"--dim must be one of {', '.join(_DIMS)}, all (not '{dim}')")
    if fmt not in ("text", "json"):
        fail_usage(f"--format must be text or json (not '{fmt}')")
    dims = _DIMS if dim == "all" else (dim,)
    result = compile_file(str(file), background_checks=True)
    # a large cluster: render while its checks run
    early = while_checking(result, _groups_output, result.topology, job, dims, fmt, file)
    topo = checked_topology(result)
    text, problem = early if early is not None else _groups_output(topo, job, dims, fmt, file)
    if problem is not None:
        fail_usage(*problem)
    # write_stdout: a full disk or closed stdout is RTC001 (exit 2), `| head` ends quietly;
    # neither format holds terminal escapes, so echo's scan for them is not needed.
    write_stdout(text)


def _groups_output(topo, job: str | None, dims: tuple, fmt: str, file: Path):
    """(the groups of ``job`` (None: every job with servers) in ``fmt``, None), or (None,
    (message, hint...)) for the usage error of an unknown job or a file without jobs."""
    from rtc.report.groups import groups_json, groups_text

    if job is not None:
        chosen = topo.job(job)
        if chosen is None:
            return None, (topo.no_job(job),)
        jobs = [chosen]
    else:
        jobs = [j for j in topo.jobs if j.placements]
    if not jobs:
        return None, (f"{file} has no job: groups belong to jobs",
                      "add a `job NAME` block with a `servers ...` line and a `tp N` line")
    if fmt == "json":
        return groups_json(topo, jobs, dims, str(file)), None
    return groups_text(topo, jobs, dims), None
