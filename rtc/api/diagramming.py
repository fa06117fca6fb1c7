"""The driver of ``rtc diagram`` and of the diagrams ``rtc compile --out-dir`` writes: a
compiled description drawn as DOT text, or rendered by Graphviz (:mod:`rtc.emit.diagram`)."""

from __future__ import annotations

from collections.abc import Callable

from rtc.diagnostics import Diagnostic
from rtc.model.topology import Topology

#: The diagrams `rtc compile --out-dir` writes: file name -> view.
COMPILE_DIAGRAMS = (("topology.svg", "topology"), ("groups.svg", "groups"))


def group_costs(topo: Topology, job: str | None) -> dict[str, tuple[str, ...]]:
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


def diagram_options(topo: Topology, diags: list[Diagnostic], *, view: str = "topology",
                    job: str | None = None, dim: str = "tp", collapse_above: int = 256,
                    cost: bool = False):
    """The :class:`rtc.emit.diagram.Options` of a drawing of ``topo`` with its diagnostics
    ``diags`` marked (unreachable peers found by the checks; with ``cost`` and the groups
    view, each job's groups labelled with their time per call)."""
    from rtc.checks.peer_reachability import unreachable_examples
    from rtc.emit.diagram import Options

    return Options(view=view, job=job, dim=dim, collapse_above=collapse_above,
                   unreachable=unreachable_examples(topo, diags),
                   costs=group_costs(topo, job) if cost and view == "groups" else {})


def compile_diagrams(topo: Topology, diags: list[Diagnostic], job: str | None = None, *,
                     warn: Callable[[object, str, str], None] | None = None
                     ) -> list[tuple[str, bytes]]:
    """(file name, SVG) of topology.svg and groups.svg, drawn in memory for `rtc compile
    --out-dir` (which writes them with the other outputs, all or nothing). A diagram that
    cannot be drawn is skipped and ``warn(rule, message, hint)`` called (RTC004; RTC005
    for both when `dot` is missing): diagrams never fail the compile."""
    from rtc.checks.peer_reachability import unreachable_examples
    from rtc.emit.diagram import DotNotFound, Options, diagram_dot, render
    from rtc.rules import INTERNAL, TOOL_MISSING

    say = warn or (lambda rule, message, hint: None)
    unreachable = unreachable_examples(topo, diags)
    out = []
    for name, view in COMPILE_DIAGRAMS:
        try:
            options = Options(view=view, job=job, unreachable=unreachable)
            out.append((name, render(diagram_dot(topo, diags, options), "svg")))
        except DotNotFound:
            say(TOOL_MISSING, "Graphviz `dot` not found; skipped topology.svg and groups.svg",
                "apt-get install graphviz, or pass --no-diagrams")
            return []
        except Exception as exc:  # noqa: BLE001 - diagrams are extras; the tables are written
            say(INTERNAL, f"could not draw {name}: {exc}; it is not written",
                "please report it with your .rtc file; --no-diagrams skips the diagrams")
    return out
