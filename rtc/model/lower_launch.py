"""Lowering pass: the launch attributes of each job and the ``disaggregation`` blocks.

Fills :attr:`Job.launch <rtc.model.topology.Job.launch>` with a
:class:`~rtc.model.topology.LaunchSpec` (the values as written; None when not given; the
argv words of repeated ``args`` / ``head_args`` / ``worker_args`` lines joined in order) and
:attr:`Topology.disaggregations <rtc.model.topology.Topology.disaggregations>` with one
:class:`~rtc.model.topology.Disaggregation` per block. Nothing is judged here:
:mod:`rtc.checks.launch_settings` and :mod:`rtc.checks.pd_pairing` report problems, and
:func:`rtc.plan.disaggregation.pd_pairs` resolves the pairs for checks and emitters alike.

Prefill/decode pairing
======================

``disaggregation NAME { prefill JOB[, JOB]  decode JOB[, JOB] }`` pairs prefill instances
with decode instances (several prefill jobs = several prefill instances, the tutorial's
"2P1D"). Without any ``disaggregation`` block, the jobs with ``role prefill`` and the
jobs with ``role decode`` of the file form one implicit pair. The KV connector is each
job's ``kv_connector`` (the port plan reserves its ports); both sides must use the same.
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic
from rtc.model.topology import Disaggregation, LaunchSpec, Topology
from rtc.syntax.decls import Decl, DisaggregationDecl, JobDecl

_KEYS = ("model", "served_name", "entry", "executor", "lb", "master_port")
_ARGV = ("args", "head_args", "worker_args")


def lower_launch(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Set every job's :class:`LaunchSpec` and collect the ``disaggregation`` blocks."""
    by_name = {d.name: d for d in decls if isinstance(d, JobDecl) and d.name}
    for job in topo.jobs:
        decl = by_name.get(job.name)
        spec = LaunchSpec()
        if decl is not None:
            for key in _KEYS + _ARGV:
                if not decl.given(key):
                    continue
                value = getattr(decl, key)
                if key in _ARGV:
                    value = tuple(a for line in value for a in line)
                setattr(spec, key, value)
                spec.spans[key] = decl.span_of(key)
        job.launch = spec
    for d in decls:
        if not isinstance(d, DisaggregationDecl):
            continue
        block = Disaggregation(d.name, d.name_span)
        for side in ("prefill", "decode"):
            for words in getattr(d, side):
                getattr(block, side).extend((w.text, w.span) for w in words)
        topo.disaggregations.append(block)
