"""`rtc diagram`: topology, groups and network pictures (Graphviz)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import (exit_for, fail_internal, fail_usage, refuse_input_as_output, report,
                            write_or_fail, write_stdout)


@app.command("diagram")
def diagram_command(
    file: Path = typer.Argument(..., readable=False, metavar="FILE", help="The .rtc cluster description."),
    output: Optional[Path] = typer.Option(
        None, "-o", "--output",
        readable=False, help="Write the diagram here; the format follows the suffix (.svg, .png, .pdf, "
             ".dot). Without -o the DOT text (or SVG) is printed."),
    view: str = typer.Option("topology", "--view", help="topology, groups or network."),
    job: Optional[str] = typer.Option(None, "--job", help="Only this job (default: every job)."),
    dim: str = typer.Option("tp", "--dim",
                            help="Which groups the topology view outlines: tp, pp, dp, ep "
                                 "or pcp."),
    fmt: Optional[str] = typer.Option(None, "--format",
                                      help="svg, png, pdf or dot (default: from the -o "
                                           "suffix; dot without -o)."),
    collapse_above: int = typer.Option(
        256, "--collapse-above", min=0, metavar="N",
        help="Above this many NPUs, families of identical servers are drawn as one box "
             "(only their first member and exceptions in full)."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    cost: bool = typer.Option(False, "--cost", help="With --view groups: label each job's "
                              "groups with their time per call (rtc cost, decode)."),
) -> None:
    """Draw FILE as a diagram: servers and NPUs with parallel groups (topology), the
    DP x PP x PCP x TP grid of each job (groups), or host networks, device subnets and
    fabrics (network).

    The diagram is drawn even when FILE has errors, because that is when the picture
    helps: each error is marked on the server or NPU it concerns and listed in a panel,
    the file is written, and the exit code is 1. When nothing can be drawn (a syntax
    error, an unreadable file) nothing is written. SVG, PNG and PDF need Graphviz's
    `dot` (apt-get install graphviz); `--format dot` works without it.

    Exit codes: 0 drawn, no errors; 1 drawn with errors (or nothing to draw); 2 usage,
    I/O, or `dot` missing.

    Examples:

      rtc diagram examples/a2-2node-dp2-tp8.rtc -o topology.svg

      rtc diagram examples/a2-2node-dp2-tp8.rtc --view groups -o groups.png

      rtc diagram examples/pd-a3.rtc --job decode --dim dp -o decode-dp.svg

      rtc diagram examples/family-a3-1024.rtc --format dot > family.dot
    """
    kind = _check_options(view, dim, fmt, output, file)
    from rtc.api import compile_file

    result = compile_file(str(file), strict=strict)
    diags = list(result.diagnostics)
    if result.topology is None:
        report(diags, result.sources)
        raise typer.Exit(2 if not result.sources else 1)
    topo = result.topology
    if job is not None and topo.job(job) is None:
        fail_usage(topo.no_job(job))
    data = _draw(file, result, diags, kind, view=view, job=job, dim=dim,
                 collapse_above=collapse_above, cost=cost)
    report(diags, result.sources, quiet=True)
    if output is None:
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        write_stdout(data)
    else:
        write_or_fail(output, data)
        typer.echo(f"rtc: wrote {output}", err=True)
    exit_for(diags)


def _check_options(view: str, dim: str, fmt: str | None, output: Path | None, file: Path) -> str:
    """The output format (exit 2 on an unknown view, dim or format, a format that does
    not match the suffix of ``output``, an output that is the input ``file``, or binary
    output without -o)."""
    from rtc.emit.diagram import DIMS, FORMATS, VIEWS, format_for

    if view not in VIEWS:
        fail_usage(f"--view must be one of {', '.join(VIEWS)} (not '{view}')")
    if dim not in DIMS:
        fail_usage(f"--dim must be one of {', '.join(DIMS)} (not '{dim}')")
    if fmt is not None and fmt.lower() not in FORMATS:
        fail_usage(f"--format must be one of {', '.join(FORMATS)} (not '{fmt}')")
    kind = format_for(output, fmt)
    if fmt is not None and output is not None:
        by_suffix = format_for(output, None)
        if by_suffix is not None and by_suffix != kind:
            fail_usage(f"--format {kind} does not match the suffix of {output} "
                       f"(a {by_suffix} file name)",
                       f"drop --format, or name the file {output.with_suffix('.' + kind)}")
    refuse_input_as_output([output], [file])
    if kind is None:
        if output is not None:
            fail_usage(f"cannot tell the format of {output} from its suffix",
                       "use .svg, .png, .pdf or .dot, or say --format")
        kind = "dot"
    if output is None and kind in ("png", "pdf"):
        fail_usage(f"--format {kind} needs -o FILE (binary output is not printed)")
    return kind


def _draw(file: Path, result, diags, kind: str, **options) -> bytes | str:
    """The diagram in ``kind`` (:func:`rtc.api.diagram`: DOT text, or rendered by
    Graphviz); exit 2 when drawing fails (RTC004) or ``dot`` is missing (RTC006)."""
    from rtc.api.commands import DrawingFailed, diagram
    from rtc.emit.diagram import DotNotFound
    from rtc.rules import TOOL_REQUIRED

    try:
        return diagram(file, kind=kind, compiled=result, **options).data
    except DrawingFailed as exc:
        report(diags, result.sources)
        fail_internal(str(exc), "please report it with your .rtc file")
    except DotNotFound as exc:
        report(diags, result.sources, quiet=True)
        fail_usage(str(exc), "--format dot writes the DOT text without Graphviz", TOOL_REQUIRED)
    except RuntimeError as exc:
        fail_internal(str(exc))
