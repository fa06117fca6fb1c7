"""vllm-ascend's MoE communication method and the MoE byte volumes (reference
``cost-model.md`` §3.4).

``select_moe_comm_method`` (VLLMA ``vllm_ascend/ascend_forward_context.py``):

==========================  =====================================================
EP off or EP size 1         ``ALLGATHER``
LoRA with EP                ``ALLTOALL``
A2 (910B)                   ``MC2`` if experts per device <= 24 **and** EP >= 16 **and**
                            tokens <= MC2 capacity; else ``ALLGATHER``
A3                          ``FUSED_MC2`` if enabled and EP <= 32 (<= 64 with MegaMoE);
                            else ``MC2`` if tokens <= capacity; else ``ALLTOALL``
==========================  =====================================================

MC2 capacity = min(ceil(max_num_tokens / TP), 512) · TP
(``_MC2_TOKENS_PER_RANK_LIMIT = 512``; 4096 with MegaMoE, ``set_mc2_tokens_capacity``).

Byte volumes per MoE layer (T_r = tokens on one EP rank = ceil(T / TP), because MC2 and
AllToAll prepare split a DP rank's tokens across its TP ranks, VLLMA
``prepare_finalize.py``): dispatch ``T_r · k · (H · b_d + scale)``, combine
``T_r · k · H · b_c`` bytes sent per rank, every top-k copy counted (DeepEP and CM384v2
Table 7 define per-rank bandwidth this way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Per-TP-rank token limit of MC2 capacity (VLLMA ``_MC2_TOKENS_PER_RANK_LIMIT``).
MC2_TOKENS_PER_RANK_LIMIT = 512
#: ... with MegaMoE (VLLMA ``_MEGA_MOE_TOKENS_PER_RANK_LIMIT``).
MEGA_MOE_TOKENS_PER_RANK_LIMIT = 4096
#: A2 MC2 needs at most this many experts per device (VLLMA ``_select_a2_moe_comm_method``).
A2_MC2_MAX_EXPERTS_PER_DEVICE = 24
#: ... and an EP group of at least this size.
A2_MC2_MIN_EP = 16


@dataclass(frozen=True)
class MoeChoice:
    """The MoE communication method vllm-ascend picks, why, and the MC2 capacity
    (tokens per DP rank) it compared against."""

    method: str
    reason: str
    capacity: int


def mc2_capacity(tp: int, max_num_tokens: int, *, fused: bool = False,
                 mega_moe: bool = False) -> int:
    """MC2 token capacity of a DP rank: min(ceil(max_num_tokens / tp), limit) · tp with
    limit 512 (4096 for fused MegaMoE) (VLLMA ``set_mc2_tokens_capacity``).

    >>> mc2_capacity(8, 64), mc2_capacity(4, 8192)
    (64, 2048)
    """
    limit = MEGA_MOE_TOKENS_PER_RANK_LIMIT if fused and mega_moe else MC2_TOKENS_PER_RANK_LIMIT
    return min(math.ceil(max_num_tokens / tp), limit) * tp


def select_moe_method(family: str, *, expert_parallel: bool, ep_size: int, experts: int,
                      tokens: int, capacity: int, fused_mc2: bool = False,
                      mega_moe: bool = False, lora: bool = False) -> MoeChoice:
    """vllm-ascend's MoE method for a step of ``tokens`` tokens on a DP rank
    (module docstring). ``family`` is the hardware family (``a3`` takes the A3 branch;
    every other Ascend family the A2 one)."""
    if not expert_parallel or ep_size <= 1:
        return MoeChoice("ALLGATHER", "expert parallel off (or EP size 1)", capacity)
    if lora:
        return MoeChoice("ALLTOALL", "LoRA with expert parallel", capacity)
    fits = tokens <= capacity
    if family == "a3":
        if fused_mc2 and ep_size <= (64 if mega_moe else 32) and fits:
            return MoeChoice("FUSED_MC2", "A3, enable_fused_mc2 and EP <= "
                             f"{64 if mega_moe else 32}", capacity)
        if fits:
            return MoeChoice("MC2", f"A3, {tokens} tokens <= MC2 capacity {capacity}",
                             capacity)
        return MoeChoice("ALLTOALL", f"A3, {tokens} tokens > MC2 capacity {capacity}",
                         capacity)
    per_device = experts / ep_size
    if per_device <= A2_MC2_MAX_EXPERTS_PER_DEVICE and ep_size >= A2_MC2_MIN_EP and fits:
        return MoeChoice("MC2", f"A2, {per_device:g} experts per device <= 24, EP {ep_size} "
                         f">= 16, {tokens} tokens <= capacity {capacity}", capacity)
    why = []
    if per_device > A2_MC2_MAX_EXPERTS_PER_DEVICE:
        why.append(f"{per_device:g} experts per device > 24")
    if ep_size < A2_MC2_MIN_EP:
        why.append(f"EP {ep_size} < 16")
    if not fits:
        why.append(f"{tokens} tokens > MC2 capacity {capacity}")
    return MoeChoice("ALLGATHER", "A2, " + ", ".join(why), capacity)


def tokens_per_ep_rank(tokens: int, tp: int) -> int:
    """T_r = ceil(T / TP): MC2/AllToAll split a DP rank's tokens across its TP ranks."""
    return math.ceil(tokens / tp)


def dispatch_bytes(tokens_per_rank: int, top_k: int, hidden: int, elem_bytes: int,
                   scale_bytes: int) -> float:
    """Bytes one rank sends in a dispatch: T_r · k · (H · b_d + scale) (reference §3.4;
    CM384v2 §4.2.1: 7,168 + 512 B per copy; DeepEP FP8: 7,168 + 56 · 4 B)."""
    return float(tokens_per_rank * top_k * (hidden * elem_bytes + scale_bytes))


def combine_bytes(tokens_per_rank: int, top_k: int, hidden: int, elem_bytes: int) -> float:
    """Bytes one rank sends in a combine: T_r · k · H · b_c (BF16: 14,336 B per copy for
    H = 7,168, CM384v2 §4.2.1)."""
    return float(tokens_per_rank * top_k * hidden * elem_bytes)


def allgather_method_bytes(tokens_max: int, hidden: int, elem_bytes: int, dp: int) -> float:
    """Output bytes of the ALLGATHER method's DP AllGather (and input of its
    ReduceScatter): every DP rank padded to the DP-wide maximum, T_max · H · b · DP
    (VLLMA ``PrepareAndFinalizeWithAllGather``; reference §3.4)."""
    return float(tokens_max * hidden * elem_bytes * dp)
