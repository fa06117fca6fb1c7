"""Weights per rank: does a layout fit the NPU's memory at all?

Parameter counts are **derived** from the model's shape (not read from a checkpoint):

* embeddings and LM head: ``2 · vocab · H`` (vocab-parallel over TP);
* attention per layer: GQA ``H·q + 2·H·kv + q·H`` with ``q = heads·head_dim`` and
  ``kv = kv_heads·head_dim``; MLA (DeepSeek) ``H·1536 + 1536·heads·qk + H·(kv_lora +
  rope) + kv_lora·heads·(qk_nope + v) + heads·v·H`` with ``qk = head_dim`` (q LoRA rank
  1536, reference §3.7 DeepSeek-V3);
* dense MLP ``3 · H · intermediate``; MoE layer ``3 · H · moe_intermediate`` per routed
  and per shared expert.

Derived totals match the published sizes: DeepSeek-V3 671 B, Qwen2.5-72B 72.7 B, Qwen3-235B-A22B
235 B, Qwen3-30B-A3B 30.5 B, Qwen3-32B 32.8 B (tests/cost/test_cost_models.py). Sharding (vLLM): attention, dense MLP and shared experts by TP;
routed experts by the EP group (DP·TP ranks) with expert parallel, else by TP; every
layer once per PP stage (``layers / PP`` each). Activations, KV cache and HCCL buffers are
not counted: a layout is rejected only when the weights alone exceed ``usable`` of HBM.
"""

from __future__ import annotations

from rtc.cost.layout import Layout
from rtc.cost.models import ModelSpec

#: Share of HBM the weights may take (vLLM's default ``gpu_memory_utilization`` 0.9 also
#: has to hold the KV cache: this is the weakest possible test, weights alone).
USABLE_SHARE = 0.9
_Q_LORA_RANK = 1536   # DeepSeek-V3 q_lora_rank (config.json), the only MLA model preset


def _attention_params(m: ModelSpec) -> float:
    h, heads = m.hidden_size, m.num_attention_heads
    if m.kv_lora_rank:
        rope = m.qk_rope_head_dim or 0
        v = m.v_head_dim or m.q_head_dim
        nope = m.q_head_dim - rope
        return (h * _Q_LORA_RANK + _Q_LORA_RANK * heads * m.q_head_dim
                + h * (m.kv_lora_rank + rope) + m.kv_lora_rank * heads * (nope + v)
                + heads * v * h)
    q = heads * m.q_head_dim
    kv = (m.num_kv_heads or heads) * m.q_head_dim
    return 2 * h * q + 2 * h * kv


def parameter_counts(m: ModelSpec) -> tuple[float, float, float]:
    """(parameters sharded by TP, routed-expert parameters, embedding parameters) of
    ``m``, derived as the module docstring says. Counts, not bytes."""
    h = m.hidden_size
    attention = _attention_params(m) * m.num_layers
    dense = 3 * h * (m.intermediate_size or 4 * h) * m.dense_layers
    moe_ffn = 3 * h * (m.moe_intermediate_size or m.intermediate_size or 4 * h)
    shared = moe_ffn * m.shared_experts * m.moe_layers
    routed = moe_ffn * m.routed_experts * m.moe_layers
    embed = 2 * (m.vocab_size or 0) * h
    return attention + dense + shared, routed, embed


def weights_per_rank(m: ModelSpec, layout: Layout, bytes_per_param: float) -> float:
    """Bytes of weights one rank holds in ``layout`` (the most loaded PP stage is
    ``ceil(layers / PP)`` layers; the embedding and head sit on the first and last
    stage, counted whole on one)."""
    sharded, routed, embed = parameter_counts(m)
    share = -(-m.num_layers // layout.pp) / m.num_layers
    expert_ways = layout.ep_size if layout.expert_parallel else layout.tp
    params = sharded * share / layout.tp + routed * share / expert_ways + embed / layout.tp
    return params * bytes_per_param


def memory_problem(m: ModelSpec, layout: Layout, bytes_per_param: float,
                   hbm: float) -> str | None:
    """Why the weights do not fit (None when they do, or when ``hbm`` is 0 = unknown)."""
    if hbm <= 0:
        return None
    need = weights_per_rank(m, layout, bytes_per_param)
    if need <= USABLE_SHARE * hbm:
        return None
    return (f"weights need {need / 1e9:.0f} GB per device at {bytes_per_param:g} "
            f"B/parameter, more than {USABLE_SHARE:.0%} of its {hbm / 1e9:.0f} GB HBM")
