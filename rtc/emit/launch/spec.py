"""The launch part of lowering: job launch attributes and ``disaggregation`` blocks.

Run once at the end of :func:`rtc.model.lower.lower` (after the network part, so the
port plan exists). It fills :attr:`Job.launch <rtc.model.topology.Job.launch>` with a
:class:`LaunchSpec` (the values as written; None when not given) and
:attr:`Topology.disaggregations <rtc.model.topology.Topology.disaggregations>` with one
:class:`Disaggregation` per block. Nothing is judged here: :mod:`rtc.checks.launch` and
:mod:`rtc.checks.disaggregation` report problems, :func:`pd_pairs` resolves the pairs for
checks and emitters alike.

Prefill/decode pairing
======================

``disaggregation NAME { prefill JOB[, JOB]  decode JOB[, JOB] }`` pairs prefill instances
with decode instances (several prefill jobs = several prefill instances, the tutorial's
"2P1D"). Without any ``disaggregation`` block, the jobs with ``role prefill`` and the
jobs with ``role decode`` of the file form one implicit pair. The KV connector is each
job's ``kv_connector`` (the port plan reserves its ports); both sides must use the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.diagnostics import Span


@dataclass
class LaunchSpec:
    """A job's launch attributes as written (None / () when not given)."""

    model: str | None = None
    served_name: str | None = None
    entry: str | None = None
    args: tuple = ()
    head_args: tuple = ()
    worker_args: tuple = ()
    executor: str | None = None      # mp | ray
    lb: str | None = None            # internal | external | hybrid
    master_port: int | None = None
    spans: dict = field(default_factory=dict)

    def span_of(self, key: str, default: Span | None = None) -> Span | None:
        return self.spans.get(key, default)


@dataclass
class Disaggregation:
    """One ``disaggregation`` block: job names with their spans (unresolved)."""

    name: str | None
    span: Span
    prefill: list = field(default_factory=list)   # [(job name, span)]
    decode: list = field(default_factory=list)
    implicit: bool = False


@dataclass
class PdPair:
    """Resolved prefill and decode jobs of one disaggregation (block or implicit)."""

    name: str | None
    span: Span | None
    prefill: list      # [Job]
    decode: list       # [Job]
    implicit: bool = False

    @property
    def jobs(self) -> list:
        return list(self.prefill) + list(self.decode)


_KEYS = ("model", "served_name", "entry", "args", "head_args", "worker_args", "executor", "lb",
         "master_port")
_REPEAT = ("args", "head_args", "worker_args")


def finish(decls: list, topo, diags: list) -> None:
    """Complete ``topo`` with launch specs and disaggregation blocks."""
    job_decls = [d for d in decls if d.kind == "job" and d.name]
    by_name = {d.name: d for d in job_decls}
    for job in topo.jobs:
        decl = by_name.get(job.name)
        spec = LaunchSpec()
        if decl is not None:
            for key in _KEYS:
                if key not in decl.attrs:
                    continue
                value = decl.get(key)
                if key in _REPEAT:
                    value = tuple(a for chunk in value for a in chunk)
                setattr(spec, key, value)
                spec.spans[key] = decl.span_of(key)
        job.launch = spec
    for d in decls:
        if d.kind != "disaggregation":
            continue
        block = Disaggregation(d.name, d.name_span)
        for side in ("prefill", "decode"):
            for loc in d.attrs.get(side, ()):
                for w in loc.value:
                    getattr(block, side).append((w.text, w.span))
        topo.disaggregations.append(block)


def launch_of(job) -> LaunchSpec:
    """The job's :class:`LaunchSpec` (an empty one for a job built without lowering)."""
    spec = getattr(job, "launch", None)
    return spec if isinstance(spec, LaunchSpec) else LaunchSpec()


def pd_pairs(topo) -> list[PdPair]:
    """The prefill/decode pairs: one per ``disaggregation`` block (unknown names dropped;
    the checks report them), or one implicit pair of the ``role prefill`` and
    ``role decode`` jobs when there is no block."""
    blocks = list(getattr(topo, "disaggregations", None) or [])
    if not blocks:
        pre = [j for j in topo.jobs if j.role == "prefill"]
        dec = [j for j in topo.jobs if j.role == "decode"]
        if pre and dec:
            return [PdPair(None, None, pre, dec, implicit=True)]
        return []
    out = []
    for b in blocks:
        pre = [topo.job(n) for n, _ in b.prefill]
        dec = [topo.job(n) for n, _ in b.decode]
        out.append(PdPair(b.name, b.span, [j for j in pre if j is not None],
                          [j for j in dec if j is not None]))
    return out


def pd_side(topo, job) -> tuple[PdPair, str] | None:
    """(pair, "prefill" | "decode") for a job that takes part in a complete pair."""
    if job.role not in ("prefill", "decode") and not getattr(topo, "disaggregations", None):
        return None   # only role-paired jobs can be in an implicit pair (called per node)
    for pair in pd_pairs(topo):
        if not pair.prefill or not pair.decode:
            continue
        if any(j is job for j in pair.prefill):
            return pair, "prefill"
        if any(j is job for j in pair.decode):
            return pair, "decode"
    return None
