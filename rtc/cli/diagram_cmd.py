"""`rtc diagram`: topology, groups and network pictures (Graphviz), and the diagrams
`rtc compile --out-dir` writes next to the rank tables."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import (exit_for, fail_internal, fail_usage, refuse_input_as_output, report,
                            warn_internal, warn_tool_missing, write_or_fail, write_stdout)


@app.command("diagram")
def diagram_command(
    file: Path = typer.Argument(..., metavar="FILE", help="The .rtc cluster description."),
    output: Optional[Path] = typer.Option(
        None, "-o", "--output",
        help="Write the diagram here; the format follows the suffix (.svg, .png, .pdf, "
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
    from rtc.checks.peer_reachability import unreachable_examples
    from rtc.emit.diagram import Options

    result = compile_file(str(file), strict=strict)
    diags = list(result.diagnostics)
    if result.topology is None:
        report(diags, result.sources)
        raise typer.Exit(2 if not result.sources else 1)
    topo = result.topology
    if job is not None and topo.job(job) is None:
        fail_usage(topo.no_job(job))
    options = Options(view=view, job=job, dim=dim, collapse_above=collapse_above,
                      unreachable=unreachable_examples(topo, diags),
                      costs=_group_costs(topo, job) if cost and view == "groups" else {})
    data = _draw(topo, diags, options, kind, result.sources)
    report(diags, result.sources, quiet=True)
    if output is None:
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        write_stdout(data)
    else:
        write_or_fail(output, data)
        typer.echo(f"rtc: wrote {output}", err=True)
    exit_for(diags)


def _group_costs(topo, job: str | None) -> dict[str, tuple[str, ...]]:
    """Per job, one line per group kind and op with its decode time per call
    (:func:`rtc.report.cost_report.group_cost_lines`); a job whose cost cannot be computed
    (no model, bad cost inputs) gets one line saying why."""
    from rtc.cost.errors import CostInputError
    from rtc.cost.jobs import cost_jobs
    from rtc.report.cost_report import group_cost_lines

    out = {}
    for j in topo.jobs:
        if (job is not None and j.name != job) or not j.placements:
            continue
        try:
            (jc,) = cost_jobs(topo, [j], ("decode",))
            out[j.name] = group_cost_lines(jc)
        except CostInputError as exc:
            out[j.name] = (f"no cost: {exc}",)
    return out


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


def _draw(topo, diags, options, kind: str, sources) -> bytes | str:
    """The diagram in ``kind`` (DOT text, or rendered by Graphviz); exit 2 when drawing
    fails (RTC004) or ``dot`` is missing (RTC005)."""
    from rtc.emit.diagram import DotNotFound, diagram_dot, render
    from rtc.rules import TOOL_MISSING

    try:
        source = diagram_dot(topo, diags, options)
    except Exception as exc:  # noqa: BLE001 - an internal error, reported as such
        report(diags, sources)
        fail_internal(f"internal error while drawing: {exc}",
                      "please report it with your .rtc file")
    try:
        return source if kind == "dot" else render(source, kind)
    except DotNotFound as exc:
        report(diags, sources, quiet=True)
        fail_usage(str(exc), "--format dot writes the DOT text without Graphviz", TOOL_MISSING)
    except RuntimeError as exc:
        fail_internal(str(exc))


#: The diagrams `rtc compile --out-dir` writes: file name -> view.
COMPILE_DIAGRAMS = (("topology.svg", "topology"), ("groups.svg", "groups"))


def render_compile_diagrams(topo, diags, job: str | None = None) -> list[tuple[str, bytes]]:
    """(file name, SVG) of topology.svg and groups.svg, drawn in memory for `rtc compile
    --out-dir` (which writes them with the other outputs, all or nothing). A diagram that
    cannot be drawn is skipped with a warning (RTC004; RTC005 for both when `dot` is
    missing): diagrams never fail the compile."""
    from rtc.checks.peer_reachability import unreachable_examples
    from rtc.emit.diagram import DotNotFound, Options, diagram_dot, render

    unreachable = unreachable_examples(topo, diags)
    out = []
    for name, view in COMPILE_DIAGRAMS:
        try:
            options = Options(view=view, job=job, unreachable=unreachable)
            out.append((name, render(diagram_dot(topo, diags, options), "svg")))
        except DotNotFound:
            warn_tool_missing("Graphviz `dot` not found; skipped topology.svg and groups.svg",
                              "apt-get install graphviz, or pass --no-diagrams")
            return []
        except Exception as exc:  # noqa: BLE001 - diagrams are extras; the tables are written
            warn_internal(f"could not draw {name}: {exc}; it is not written",
                          "please report it with your .rtc file; --no-diagrams skips the diagrams")
    return out
