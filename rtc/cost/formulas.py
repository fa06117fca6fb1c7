"""The textbook α-β-γ cost formulas, one function per (collective, algorithm).

Notation (reference ``cost-model.md`` §2.1): ``p`` ranks; ``n`` bytes of the **full**
vector (AllReduce: each rank's input; AllGather: the output, each rank contributes
``n/p``; ReduceScatter: the input, each rank keeps ``n/p``; all-to-all: the total each
rank sends, its own share included); ``a`` = α seconds per step; ``b`` = β seconds per
byte on one link (1/bandwidth); ``g`` = γ seconds per byte of local reduction.

Every function returns :class:`Terms` (steps, α part, β part, γ part, in seconds).
Sources per row are §2.2's (``THAKUR05``, ``HCCL-ALGO`` Ring/RHD/Mesh/NHR/Pairwise/
Pipeline.md). Mesh formulas take ``b`` as the time per byte **sent to one peer** while
all peers are served at once (per-link meshes: the link's β; shared ports: see
:func:`rtc.cost.collectives.mesh_beta`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Terms:
    """A cost split into its parts (seconds): ``alpha`` start-up, ``beta`` transfer,
    ``gamma`` local reduction; ``steps`` is the number of α steps."""

    steps: int
    alpha: float
    beta: float
    gamma: float = 0.0

    @property
    def seconds(self) -> float:
        """α + β + γ in seconds."""
        return self.alpha + self.beta + self.gamma


def _log2ceil(p: int) -> int:
    return max(0, math.ceil(math.log2(p))) if p > 1 else 0


def is_power_of_two(p: int) -> bool:
    """True for 1, 2, 4, 8, ... (HCCL's HD needs it, RHD.md)."""
    return p >= 1 and p & (p - 1) == 0


# ----------------------------------------------------------------- AllGather / RS

def ring_allgather(p: int, n: float, a: float, b: float) -> Terms:
    """Ring AllGather: (p-1)α + ((p-1)/p)·nβ (THAKUR05 §4.1; HCCL-ALGO Ring.md)."""
    return Terms(p - 1, (p - 1) * a, (p - 1) / p * n * b)


def ring_reduce_scatter(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Ring ReduceScatter: (p-1)α + ((p-1)/p)·n(β+γ) (HCCL-ALGO Ring.md)."""
    return Terms(p - 1, (p - 1) * a, (p - 1) / p * n * b, (p - 1) / p * n * g)


def log_allgather(p: int, n: float, a: float, b: float) -> Terms:
    """Recursive doubling / Bruck / NHR AllGather: ⌈log₂p⌉α + ((p-1)/p)·nβ
    (THAKUR05 §4.1.1-4.1.2; HCCL-ALGO NHR.md, NB.md)."""
    k = _log2ceil(p)
    return Terms(k, k * a, (p - 1) / p * n * b)


def log_reduce_scatter(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Recursive halving / NHR ReduceScatter: ⌈log₂p⌉α + ((p-1)/p)·n(β+γ)
    (THAKUR05 §5; HCCL-ALGO RHD.md, NHR.md)."""
    k = _log2ceil(p)
    return Terms(k, k * a, (p - 1) / p * n * b, (p - 1) / p * n * g)


def mesh_allgather(p: int, n: float, a: float, b: float) -> Terms:
    """Mesh AllGather, one shot: α + (n/p)β (HCCL-ALGO Mesh.md)."""
    return Terms(1, a, n / p * b)


def mesh_reduce_scatter(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Mesh ReduceScatter: α + (n/p)β + ((p-1)/p)·nγ (HCCL-ALGO Mesh.md)."""
    return Terms(1, a, n / p * b, (p - 1) / p * n * g)


# ----------------------------------------------------------------- AllReduce

def ring_allreduce(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Ring AllReduce (RS + AG): 2(p-1)α + 2((p-1)/p)·nβ + ((p-1)/p)·nγ
    (THAKUR05 §5; HCCL-ALGO Ring.md)."""
    return Terms(2 * (p - 1), 2 * (p - 1) * a, 2 * (p - 1) / p * n * b,
                 (p - 1) / p * n * g)


def rhd_allreduce(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Recursive halving-doubling (Rabenseifner) AllReduce. p a power of two:
    2log₂p·α + 2((p-1)/p)·nβ + ((p-1)/p)·nγ; otherwise, with p' = 2^⌊log₂p⌋:
    (2⌊log₂p⌋+2)α + (2(p'-1)/p' + 2)·nβ + ((p'-1)/p' + 1)·nγ (HCCL-ALGO RHD.md)."""
    if is_power_of_two(p):
        k = _log2ceil(p)
        return Terms(2 * k, 2 * k * a, 2 * (p - 1) / p * n * b, (p - 1) / p * n * g)
    k = int(math.floor(math.log2(p)))
    q = 2 ** k
    return Terms(2 * k + 2, (2 * k + 2) * a, (2 * (q - 1) / q + 2) * n * b,
                 ((q - 1) / q + 1) * n * g)


def nhr_allreduce(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """NHR / NB AllReduce: 2⌈log₂p⌉α + 2((p-1)/p)·nβ + ((p-1)/p)·nγ
    (HCCL-ALGO NHR.md, NB.md)."""
    k = _log2ceil(p)
    return Terms(2 * k, 2 * k * a, 2 * (p - 1) / p * n * b, (p - 1) / p * n * g)


def mesh_allreduce(p: int, n: float, a: float, b: float, g: float) -> Terms:
    """Mesh AllReduce (one-shot RS + AG): 2α + (2/p)·nβ + ((p-1)/p)·nγ
    (HCCL-ALGO Mesh.md)."""
    return Terms(2, 2 * a, 2 / p * n * b, (p - 1) / p * n * g)


# ----------------------------------------------------------------- Broadcast

def binomial_broadcast(p: int, n: float, a: float, b: float) -> Terms:
    """Binomial-tree Broadcast: ⌈log₂p⌉(α + nβ) (THAKUR05 §4.2)."""
    k = _log2ceil(p)
    return Terms(k, k * a, k * n * b)


def scatter_allgather_broadcast(p: int, n: float, a: float, b: float) -> Terms:
    """Scatter + ring AllGather Broadcast (van de Geijn): (⌈log₂p⌉ + p - 1)α +
    2((p-1)/p)·nβ (THAKUR05 §4.2)."""
    k = _log2ceil(p) + p - 1
    return Terms(k, k * a, 2 * (p - 1) / p * n * b)


def ring_broadcast(p: int, n: float, a: float, b: float) -> Terms:
    """HCCL Ring Broadcast: (p-1)(α + nβ) (HCCL-ALGO Ring.md)."""
    return Terms(p - 1, (p - 1) * a, (p - 1) * n * b)


def mesh_broadcast(p: int, n: float, a: float, b: float) -> Terms:
    """HCCL Mesh Broadcast: 2α + (2/p)·nβ (HCCL-ALGO Mesh.md)."""
    return Terms(2, 2 * a, 2 / p * n * b)


# ----------------------------------------------------------------- all-to-all, p2p

def pairwise_alltoall(p: int, n: float, a: float, b: float) -> Terms:
    """Pairwise exchange, uniform: (p-1)α + ((p-1)/p)·nβ (HCCL-ALGO Pairwise.md;
    THAKUR05 §4.3)."""
    return Terms(p - 1, (p - 1) * a, (p - 1) / p * n * b)


def mesh_alltoall(p: int, n: float, a: float, b: float) -> Terms:
    """Mesh (all peers at once), uniform: α + (n/p)β (derived from the Mesh model,
    reference §2.2)."""
    return Terms(1, a, n / p * b)


def bruck_alltoall(p: int, n: float, a: float, b: float) -> Terms:
    """Bruck all-to-all (short messages): ⌈log₂p⌉α + (n/2)·log₂p·β (THAKUR05 §4.3)."""
    k = _log2ceil(p)
    return Terms(k, k * a, n / 2 * math.log2(p) * b if p > 1 else 0.0)


def send_recv(n: float, a: float, b: float) -> Terms:
    """Point to point: α + nβ (THAKUR05 §3)."""
    return Terms(1, a, n * b)


# ----------------------------------------------------------------- HCCL Pipeline

def pipeline_reduce_scatter(p_intra: int, p_inter: int, s: float, a_in: float,
                            b_in: float, a_out: float, b_out: float) -> Terms:
    """HCCL Pipeline ReduceScatter / AllGather over ``p = p_intra·p_inter`` ranks,
    ``s`` the total bytes (HCCL-ALGO Pipeline.md):
    max(s/p·β_inter + α_inter, s/p·β_intra + α_intra)·(p_inter-1) + s/p·β_intra + α_intra.
    The α part is the α of the slower branch per overlapped step plus the last α_intra."""
    chunk = s / (p_intra * p_inter)
    inter, intra = chunk * b_out + a_out, chunk * b_in + a_in
    step_a = a_out if inter >= intra else a_in
    step_b = chunk * (b_out if inter >= intra else b_in)
    m = p_inter - 1
    return Terms(m + 1, m * step_a + a_in, m * step_b + chunk * b_in)


def pipeline_allreduce(p_intra: int, p_inter: int, s: float, a_in: float, b_in: float,
                       a_out: float, b_out: float) -> Terms:
    """HCCL Pipeline AllReduce = 2 × :func:`pipeline_reduce_scatter` (Pipeline.md)."""
    t = pipeline_reduce_scatter(p_intra, p_inter, s, a_in, b_in, a_out, b_out)
    return Terms(2 * t.steps, 2 * t.alpha, 2 * t.beta)
