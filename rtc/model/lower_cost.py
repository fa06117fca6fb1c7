"""Lowering pass: the cost model's inputs as written -- each job's ``cost_model``,
``decode_seqs``, ``prefill_tokens``, ``mtp_tokens`` (:class:`~rtc.model.topology.CostSpec`)
and the cluster's ``links`` block (:class:`~rtc.model.topology.LinksSpec`).

Nothing is interpreted here: whether a parameter key exists, its unit parses, or a model
preset / config.json can be read is judged by :mod:`rtc.checks.cost_inputs` (RTC340,
RTC341), which reports each problem at the line that wrote it.
"""

from __future__ import annotations

import os

from rtc.diagnostics import Diagnostic, Related, error
from rtc.model.topology import CostSpec, LinksSpec, Topology
from rtc.syntax.decls import Decl, JobDecl, LinksDecl
from rtc.syntax.schema import DUPLICATE_ATTRIBUTE

_KEYS = ("decode_seqs", "prefill_tokens", "mtp_tokens")


def _model_word(decl: JobDecl) -> str | None:
    """``cost_model`` as written; a path to a .json file is joined to the .rtc file's
    folder when relative (like ``inventory``)."""
    word = decl.cost_model
    if word is None or not word.lower().endswith(".json") or os.path.isabs(word):
        return word
    return os.path.join(os.path.dirname(decl.span.file), word)


def lower_cost(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Set every job's :class:`CostSpec` and the Topology's :class:`LinksSpec` (a second
    ``links`` block is an error: RTC115, the first one counts)."""
    by_name = {d.name: d for d in decls if isinstance(d, JobDecl) and d.name}
    for job in topo.jobs:
        decl = by_name.get(job.name)
        if decl is None:
            continue
        spec = CostSpec(model=_model_word(decl))
        for key in ("cost_model",) + _KEYS:
            if decl.given(key):
                spec.spans[key] = decl.span_of(key)
                if key != "cost_model":
                    setattr(spec, key, getattr(decl, key))
        job.cost = spec
    for d in decls:
        if not isinstance(d, LinksDecl):
            continue
        if topo.links is not None:
            diags.append(error(DUPLICATE_ATTRIBUTE, "a second `links` block: the cost model "
                               "takes one per cluster", d.name_span,
                               related=[Related(topo.links.span, "first links block")],
                               hint="merge the two blocks"))
            continue
        topo.links = LinksSpec(span=d.name_span, preset=d.preset, params=tuple(d.param),
                               preset_span=d.spans.get("preset"))
