"""A parallel layout (DP, PP, PCP, TP, DCP, EP on/off) and whether a model can run it:
the light part of the cost model that the checks need (RTC342, RTC343) without loading
the collectives."""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.errors import LayoutError
from rtc.cost.models import ModelSpec
from rtc.parallel.groups import ParallelSizes


@dataclass(frozen=True)
class Layout:
    """Parallel sizes of one vLLM job: world = DP · PP · PCP · TP; DCP (decode context
    parallel) lives inside TP and must divide it; ``expert_parallel`` is
    ``--enable-expert-parallel`` (EP size = DP · PCP · TP, vLLM's EP group)."""

    dp: int = 1
    pp: int = 1
    tp: int = 1
    pcp: int = 1
    dcp: int = 1
    expert_parallel: bool = False

    def __post_init__(self) -> None:
        for name in ("dp", "pp", "tp", "pcp", "dcp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LayoutError(f"layout {name} = {value!r}; expected a whole number >= 1")
        if self.tp % self.dcp:
            raise LayoutError(f"layout dcp {self.dcp} does not divide tp {self.tp} "
                              f"(DCP lives inside the TP group, VLLMA context_parallel.md)")

    @property
    def world(self) -> int:
        """World size DP · PP · PCP · TP (ranks)."""
        return self.dp * self.pp * self.pcp * self.tp

    @property
    def ep_size(self) -> int:
        """Ranks of one EP group (1 with expert parallel off)."""
        return self.dp * self.pcp * self.tp if self.expert_parallel else 1

    @property
    def label(self) -> str:
        """``DP2 x TP8 + EP``: sizes above 1 (TP always), then EP when on."""
        parts = [f"{k.upper()}{v}" for k, v in (("dp", self.dp), ("pp", self.pp),
                                                  ("pcp", self.pcp)) if v > 1]
        parts.append(f"TP{self.tp}")
        if self.dcp > 1:
            parts.append(f"DCP{self.dcp}")
        return " x ".join(parts) + (" + EP" if self.expert_parallel else "")

    def sizes(self, moe: bool = True) -> ParallelSizes:
        """The :class:`~rtc.parallel.groups.ParallelSizes` of the layout."""
        return ParallelSizes(dp=self.dp, pp=self.pp, pcp=self.pcp, tp=self.tp,
                             expert_parallel=self.expert_parallel, moe=moe)



def layout_problems(layout: Layout, model: ModelSpec) -> list[str]:
    """Why ``model`` cannot run with ``layout`` (empty when it can): attention heads not
    divisible by TP; KV heads neither dividing nor divisible by TP (vLLM
    ``QKVParallelLinear``); routed experts not divisible by the EP size; EP on a dense
    model."""
    out = []
    tp = layout.tp
    if model.num_attention_heads % tp:
        out.append(f"{model.num_attention_heads} attention heads are not divisible by TP {tp}")
    kv = model.num_kv_heads
    if kv and kv % tp and tp % kv:
        out.append(f"{kv} KV heads neither divide nor are divisible by TP {tp}")
    if layout.expert_parallel:
        if not model.is_moe:
            out.append(f"{model.name} is dense: expert parallel does not apply")
        elif model.routed_experts % layout.ep_size:
            out.append(f"{model.routed_experts} routed experts are not divisible by EP "
                       f"{layout.ep_size}")
    return out
