"""The workload knobs of the cost model (reference ``cost-model.md`` §5.1 item 5, §5.6).

Tokens are counted **per DP rank per forward step** (T in reference §3): in decode
``T = decode_seqs · (1 + mtp_tokens)`` (each running sequence feeds its MTP draft tokens
too, reference §1.5 item 2); in prefill ``T = prefill_tokens`` (the chunk). Tokens
*generated* per step in decode are ``decode_seqs · (1 + mtp_tokens · mtp_acceptance)``
(CM384v2 §5.4.2: 1.7 per step at 70 % acceptance with one MTP token).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from rtc.cost.errors import CostInputError

#: The phases a schedule can be computed for.
PHASES: tuple[str, ...] = ("decode", "prefill")

#: vllm-ascend MoE communication methods (``MoECommType``, VLLMA ascend_forward_context.py).
MOE_METHODS: tuple[str, ...] = ("ALLGATHER", "MC2", "ALLTOALL", "FUSED_MC2")


@dataclass(frozen=True)
class Workload:
    """What one DP rank processes per step, and the framework options that change the
    communication.

    * ``decode_seqs``: running sequences per DP rank (decode concurrency).
    * ``prefill_tokens``: prefill chunk tokens per DP rank per step.
    * ``mtp_tokens`` / ``mtp_acceptance``: speculative (MTP) tokens per sequence per step
      and the fraction of them accepted.
    * ``activation_bytes``: bytes per activation element (BF16 = 2).
    * ``dispatch_bytes`` / ``dispatch_scale_bytes`` / ``combine_bytes``: MoE dispatch
      element bytes (INT8/FP8 = 1), scale bytes per token copy (None: 512 for 1-byte
      dispatch, CANN's padded scale, CM384v2 §4.2.1; 0 otherwise), combine element bytes.
    * ``imbalance``: ι ≥ 1, the busiest EP rank's receive volume over the mean
      (CM384v2 Table 3: about 1.18 with default EPLB; 1 = perfect balance).
    * ``moe_method``: force ALLGATHER / MC2 / ALLTOALL / FUSED_MC2 (None: vllm-ascend's
      choice); ``fused_mc2``: ``enable_fused_mc2``; ``mc2_max_tokens``: the token count
      the MC2 capacity is sized for (None: the decode tokens per step; vllm-ascend sizes it
      from the largest decode graph, reference §3.4).
    * ``sequence_parallel``: each TP AllReduce becomes ReduceScatter + AllGather.
    * ``context_tokens``: context length a DCP prefill gathers (None: the chunk).
    * ``overlap``: φ ∈ [0, 1], the share of MoE dispatch/combine hidden behind compute
      (MC2 fusion, micro-batching; reference §5.4). 0 = none.
    """

    decode_seqs: int = 64
    prefill_tokens: int = 4096
    mtp_tokens: int = 0
    mtp_acceptance: float = 0.7
    activation_bytes: int = 2
    dispatch_bytes: int = 1
    dispatch_scale_bytes: int | None = None
    combine_bytes: int = 2
    imbalance: float = 1.0
    moe_method: str | None = None
    fused_mc2: bool = False
    mc2_max_tokens: int | None = None
    sequence_parallel: bool = False
    context_tokens: int | None = None
    overlap: float = 0.0

    def __post_init__(self) -> None:
        for name in ("decode_seqs", "prefill_tokens", "activation_bytes", "dispatch_bytes",
                     "combine_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CostInputError(f"workload {name} = {value!r}; expected a whole "
                                     f"number >= 1")
        if self.mtp_tokens < 0 or not 0 <= self.mtp_acceptance <= 1:
            raise CostInputError("workload mtp_tokens must be >= 0 and mtp_acceptance in "
                                 f"[0, 1], got {self.mtp_tokens}, {self.mtp_acceptance}")
        if self.imbalance < 1 or not 0 <= self.overlap <= 1:
            raise CostInputError(f"workload imbalance must be >= 1 and overlap in [0, 1], "
                                 f"got {self.imbalance}, {self.overlap}")
        if self.moe_method is not None and self.moe_method not in MOE_METHODS:
            raise CostInputError(f"workload moe_method {self.moe_method!r}; accepted: "
                                 f"{', '.join(MOE_METHODS)}")

    @property
    def scale_bytes(self) -> int:
        """Scale bytes per dispatched token copy."""
        if self.dispatch_scale_bytes is not None:
            return self.dispatch_scale_bytes
        return 512 if self.dispatch_bytes == 1 else 0

    def tokens(self, phase: str) -> int:
        """T: tokens one DP rank processes per step in ``phase``."""
        check_phase(phase)
        if phase == "prefill":
            return self.prefill_tokens
        return self.decode_seqs * (1 + self.mtp_tokens)

    def generated(self, phase: str) -> float:
        """Tokens one DP rank produces per step: decode ``seqs · (1 + mtp · acceptance)``;
        prefill counts the processed prompt tokens."""
        check_phase(phase)
        if phase == "prefill":
            return float(self.prefill_tokens)
        return self.decode_seqs * (1 + self.mtp_tokens * self.mtp_acceptance)

    def mc2_base_tokens(self) -> int:
        """Tokens the MC2 capacity is sized for (``max_num_tokens`` of
        ``set_mc2_tokens_capacity``, VLLMA)."""
        return self.mc2_max_tokens or self.tokens("decode")

    def per_rank(self, phase: str, total: int, dp: int) -> "Workload":
        """A copy where one of ``dp`` DP ranks gets ``ceil(total / dp)`` of a global load
        (sequences in decode, prompt tokens in prefill): equal total load across layouts."""
        share = max(1, math.ceil(total / dp))
        return replace(self, decode_seqs=share) if phase == "decode" else \
            replace(self, prefill_tokens=share)


def check_phase(phase: str) -> None:
    """CostInputError unless ``phase`` is one of :data:`PHASES`."""
    if phase not in PHASES:
        raise CostInputError(f"unknown phase {phase!r}; accepted: {', '.join(PHASES)}")
