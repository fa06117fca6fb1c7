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

Anchors (``tests/model/test_gpu.py``): V7 (8 × H100 ring busbw 365-370 GB/s, NVLS ~480;
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


# ---------------------------------------------------------------- ring vs tree across servers
#
# Across servers NCCL also has its (double binary) tree: a chain inside each server, trees
# between the servers. NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel;
# reference cost-model.md 1.3 NCCL-TUNE) prices an AllReduce on p ranks over N servers as
#
#   ring:  latency (2(p-1) - 2(N-1))·α_intra + 2(N-1)·α_inter   algbw = busbw · p/(2(p-1))
#   tree:  latency 2·((p/N - 1)·α_intra + log2(N)·α_inter)  algbw = 0.5 · 0.92 · busbw
#
# (the ring's inter-server steps are its 2(N-1) hops between servers, as in NCCL 2.2x;
# the tree pays the intra-server chain and log2 N tree levels, up and down; its bus
# bandwidth is capped at 92 % of the graph's). So the tree wins below a crossover size and the ring above it -
# NCCL's own choice when NCCL_ALGO is not set. rtc uses the same split, with α per class
# from links.toml (intra: the slowest in-server class crossed; inter: the NIC class) and
# busbw as for the ring (:func:`class_busbw`). NVLS-tree (NVSwitch + IB SHARP) is not
# modelled.

#: NCCL's tree bandwidth cap (tuning.cc: ``busBw = min(busBw * .92, ...)`` for the tree
#: AllReduce) and its bus-to-algorithm ratio for non-ring algorithms (``ratio = .5``).
TREE_BW_CAP = 0.92
TREE_RATIO = 0.5


def _alphas(span: GroupSpan, params: CostParams) -> tuple[float, float]:
    """(α intra-server, α inter-server) of the classes the group crosses (0 when none)."""
    intra = [params.link(c).alpha for c in span.classes
             if c != LOCAL and params.link(c).port != "nic"]
    inter = [params.link(c).alpha for c in span.classes
             if c != LOCAL and params.link(c).port == "nic"]
    return max(intra, default=0.0), max(inter, default=0.0)


def ring_and_tree(nbytes: float, span: GroupSpan, params: CostParams, *,
                  nics: int | None = None) -> tuple[NcclEstimate, NcclEstimate] | None:
    """(ring, tree) AllReduce estimates of ``nbytes`` per rank on a group over several
    servers, with NCCL's latency split (see above); None for a group on one server.
    Raises as :func:`allreduce`."""
    if nbytes < 0:
        raise CostInputError(f"message size must be at least 0 bytes, not {nbytes}")
    p, n = span.size, span.servers
    rated = class_busbw(span, params, nics)
    if n <= 1 or p <= 1 or not rated:
        return None
    busbw, link = min(rated)
    a_in, a_out = _alphas(span, params)
    ring_alpha = (2 * (p - 1) - 2 * (n - 1)) * a_in + 2 * (n - 1) * a_out
    ring = NcclEstimate(nbytes, p, link, "ring", busbw, ring_alpha,
                        busbw_factor("allreduce", p) * nbytes / busbw)
    levels = max(1, (n - 1).bit_length())                 # ceil(log2 N)
    tree_alpha = 2 * ((p // n - 1) * a_in + levels * a_out)
    tree = NcclEstimate(nbytes, p, link, "tree", busbw * TREE_BW_CAP, tree_alpha,
                        nbytes / (TREE_RATIO * TREE_BW_CAP * busbw))
    return ring, tree


def tree_crossover(span: GroupSpan, params: CostParams, *, nics: int | None = None) -> float | None:
    """The message size (bytes per rank) above which the ring beats the tree on this
    group (their times are equal there); None on one server, or when the tree never wins
    (its latency is not lower)."""
    both = ring_and_tree(0.0, span, params, nics=nics)
    if both is None:
        return None
    ring, tree = both
    gain = ring.alpha - tree.alpha
    p = span.size
    per_byte = (1 / (TREE_RATIO * TREE_BW_CAP) - busbw_factor("allreduce", p)) / ring.busbw
    if gain <= 0 or per_byte <= 0:
        return None
    return gain / per_byte


def nccl_choice(nbytes: float, span: GroupSpan, params: CostParams, *,
                nics: int | None = None) -> NcclEstimate:
    """NCCL's AllReduce as it would choose it: on several servers the faster of ring and
    tree (:func:`ring_and_tree`), else :func:`allreduce` (ring or NVLS)."""
    both = ring_and_tree(nbytes, span, params, nics=nics)
    if both is None:
        return allreduce(nbytes, span, params, nics=nics)
    return min(both, key=lambda e: e.seconds)


def cross_server_note(span: GroupSpan, params: CostParams, *, nics: int | None = None,
                      group: str = "the group") -> str | None:
    """One line for the cost report of a GPU group over several servers (``group`` names
    it, e.g. ``the TP group 0..15``): which AllReduce algorithm NCCL picks by size on it
    (tree below the crossover, ring above), with a 1 MiB and a 256 MiB example; None on
    one server. ``nics``: NICs per server (the servers' ``ib_hca``; None: the preset's)."""
    small = ring_and_tree(float(1 << 20), span, params, nics=nics)
    if small is None:
        return None
    big = ring_and_tree(float(1 << 28), span, params, nics=nics)
    cross = tree_crossover(span, params, nics=nics)
    nic = next((c for c in span.classes if c != LOCAL and params.link(c).port == "nic"), None)
    used = _nics(span, nics)
    where = (f"{group}: {span.size} GPUs on {span.servers} servers"
             + (f", {nic} x {used} NIC{'s' if used != 1 else ''} per server" if nic else ""))
    pick = ("the ring at every size (the tree saves no latency here)" if cross is None else
            f"the tree below {cross / (1 << 20):,.1f} MiB per rank, the ring above")
    def pair(both, size):
        ring, tree = both
        return (f"{size} tree {tree.seconds * 1e6:,.0f} us vs ring {ring.seconds * 1e6:,.0f} us")
    return (f"NCCL AllReduce across servers ({where}): NCCL picks {pick} (rtc's reading of "
            f"NCCL's tuning model, NVLS-tree not modelled); {pair(small, '1 MiB')}, "
            f"{pair(big, '256 MiB')}")
