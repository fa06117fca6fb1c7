"""Prefill/decode pairs: which prefill jobs feed which decode jobs (PD disaggregation).

One pair per ``disaggregation`` block (job names resolved; unknown names are dropped here
and reported by :mod:`rtc.checks.pd_pairing`), or, without any block, one implicit pair of
all ``role prefill`` jobs with all ``role decode`` jobs (see :mod:`rtc.model.lower_launch`).
"""

from __future__ import annotations

from rtc.diagnostics import Span
from rtc.model.topology import Job, Topology


class PdPair:
    """Resolved prefill and decode jobs of one disaggregation (block or implicit)."""

    name: str | None
    span: Span | None
    prefill: list[Job]
    decode: list[Job]
    implicit: bool

    def __init__(
            self, name: str | None, span: Span | None, prefill: list[Job], decode: list[Job],
            implicit: bool = False) -> None:
        self.name = name
        self.span = span
        self.prefill = prefill
        self.decode = decode
        self.implicit = implicit

    @property
    def jobs(self) -> list[Job]:
        return list(self.prefill) + list(self.decode)


def pd_pairs(topo: Topology) -> list[PdPair]:
    """The prefill/decode pairs of ``topo`` (see the module docstring), blocks in source
    order."""
    if not topo.disaggregations:
        pre = [j for j in topo.jobs if j.role == "prefill"]
        dec = [j for j in topo.jobs if j.role == "decode"]
        if pre and dec:
            return [PdPair(None, None, pre, dec, implicit=True)]
        return []
    out = []
    for b in topo.disaggregations:
        pre = [topo.job(n) for n, _ in b.prefill]
        dec = [topo.job(n) for n, _ in b.decode]
        out.append(PdPair(b.name, b.span, [j for j in pre if j is not None],
                          [j for j in dec if j is not None]))
    return out


def pd_side(pairs: list[PdPair], job: Job) -> tuple[PdPair, str] | None:
    """(pair, "prefill" | "decode") for a job that takes part in a complete pair of
    ``pairs``."""
    for pair in pairs:
        if not pair.prefill or not pair.decode:
            continue
        if any(j is job for j in pair.prefill):
            return pair, "prefill"
        if any(j is job for j in pair.decode):
            return pair, "decode"
    return None
