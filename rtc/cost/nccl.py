"""NCCL collectives on NVIDIA GPU groups: the ring (and NVLS) model over the link classes of
:mod:`rtc.cost.links`.

NCCL's ring AllReduce moves ``2(p-1)/p · n`` bytes through every rank's slowest link and
takes ``2(p-1)`` steps (``NCCLT-PERF``: this is why nccl-tests report bus bandwidth
``busbw = algbw · 2(p-1)/p``). So **(derived)**:

    T = 2(p-1)·α + 2(p-1)/p · n / busbw

where ``busbw`` is the slowest class the group crosses at ``bandwidth × efficiency``
(``links.toml``; efficiency = measured busbw / line rate, reference ``cost-model.md``
§1.4). Across servers NCCL runs one ring per NIC, so a NIC class counts
``min(NICs per server, group members per server)`` NICs; the NIC count is the servers'
``ib_hca`` when declared, else the preset's ``nics_per_server``. Inside one NVSwitch island
of more than two GPUs, NVLS (``nvls_link``) is used when its measured busbw is higher.
α is the largest per-step α among the classes crossed (NCCL-TUNE LL128 latencies).

Anchors (``tests/test_gpu_cost.py``): V7 (8 × H100 ring busbw 365-370 GB/s, NVLS ~480;
8 × A100 ~200) and V8 (3 × 8 A100 with 4 HDR NICs: 84.8 GB/s busbw). Units: bytes,
seconds, bytes/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.errors import CostInputError
from rtc.cost.links import LOCAL
from rtc.cost.params import CostParams
from rtc.cost.spans import GroupSpan

#: nccl-tests' bus-bandwidth factor per operator, as a function of the rank count n
#: (NCCLT-PERF; reference cost-model.md 2.3).
BUSBW_FACTORS = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


def busbw_factor(op: str, ranks: int) -> float:
    """nccl-tests' busbw / algbw for ``op`` on ``ranks`` ranks. CostInputError for an
    operator it does not know or fewer than one rank."""
    if op not in BUSBW_FACTORS or ranks < 1:
        raise CostInputError(f"no bus-bandwidth factor for {op!r} on {ranks} ranks; "
                             f"operators: {', '.join(BUSBW_FACTORS)}")
    return BUSBW_FACTORS[op](ranks)


@dataclass(frozen=True)
class NcclEstimate:
    """One AllReduce on a GPU group: ``nbytes`` per rank, ``ranks``, the bottleneck
    ``link`` class, ``algorithm`` (``ring`` / ``nvls`` / ``local``), ``busbw`` bytes/s and
    the α / β parts in seconds."""

    nbytes: float
    ranks: int
    link: str
    algorithm: str
    busbw: float
    alpha: float
    beta: float

    @property
    def seconds(self) -> float:
        """Time of the call (α + β), seconds."""
        return self.alpha + self.beta

    @property
    def algbw(self) -> float:
        """nccl-tests' algorithm bandwidth ``nbytes / seconds`` (bytes/s; 0 for no time)."""
        return self.nbytes / self.seconds if self.seconds else 0.0

    @property
    def measured_busbw(self) -> float:
        """The busbw nccl-tests would print for this call (α included), bytes/s."""
        return self.algbw * busbw_factor("allreduce", self.ranks) if self.ranks > 1 else 0.0


def _nics(span: GroupSpan, nics: int | None) -> int:
    count = nics if nics is not None else span.hardware.nics_per_server
    return max(1, min(count or 1, span.p_intra))


def class_busbw(span: GroupSpan, params: CostParams, nics: int | None = None) -> list[tuple[float, str]]:
    """(busbw bytes/s, class) of every link class the group crosses (``local`` left out),
    NIC classes multiplied by the NICs in use per server."""
    out = []
    for c in span.classes:
        if c == LOCAL:
            continue
        p = params.link(c)
        bw = p.bandwidth * p.efficiency
        if p.port == "nic":
            bw *= _nics(span, nics)
        out.append((bw, c))
    return out


def allreduce(nbytes: float, span: GroupSpan, params: CostParams, *,
              nics: int | None = None, nvls: bool = True) -> NcclEstimate:
    """The NCCL AllReduce of ``nbytes`` per rank on the group ``span`` (module docstring).
    ``nics``: NICs per server (None: the preset's); ``nvls`` False models
    ``NCCL_NVLS_ENABLE=0``. CostInputError for a negative size; ParamError when a class
    has no parameters in ``params``."""
    if nbytes < 0:
        raise CostInputError(f"message size must be at least 0 bytes, not {nbytes}")
    p = span.size
    rated = class_busbw(span, params, nics)
    if p <= 1 or not rated:
        return NcclEstimate(nbytes, p, LOCAL, "local", 0.0, 0.0, 0.0)
    busbw, link = min(rated)
    algorithm = "ring"
    hw = span.hardware
    if nvls and hw.nvls_link and span.servers == 1 and p > 2 \
            and set(span.classes) <= {hw.server_link, LOCAL}:
        nv = params.link(hw.nvls_link)
        if nv.bandwidth * nv.efficiency > busbw:
            busbw, link, algorithm = nv.bandwidth * nv.efficiency, hw.nvls_link, "nvls"
    alpha = max(params.link(c).alpha for _, c in rated)
    steps = 2 * (p - 1)
    return NcclEstimate(nbytes, p, link, algorithm, busbw, steps * alpha,
                        busbw_factor("allreduce", p) * nbytes / busbw)
