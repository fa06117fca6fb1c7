"""rtc.cost models: presets of reference §3.7, the Hugging Face config.json loader, the
workload knobs and vllm-ascend's MoE method selection."""

from __future__ import annotations

import pytest

from rtc.cost.errors import CostInputError, ModelConfigError
from rtc.cost.models import model_from_hf_config, model_preset, model_presets
from rtc.cost.moe import (combine_bytes, dispatch_bytes, mc2_capacity, select_moe_method,
                          tokens_per_ep_rank)
from rtc.cost.workload import Workload

DSV3_CONFIG = {  # the keys of deepseek-ai/DeepSeek-V3 config.json that matter here
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
    "moe_intermediate_size": 2048, "intermediate_size": 18432, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "vocab_size": 129280, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"}

QWEN3_MOE_CONFIG = {
    "model_type": "qwen3_moe", "hidden_size": 4096, "num_hidden_layers": 94,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
    "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "vocab_size": 151936, "torch_dtype": "bfloat16"}


def test_presets_hold_the_reference_table():
    ds = model_preset("DeepSeek-V3")
    assert (ds.hidden_size, ds.num_layers, ds.moe_layers, ds.routed_experts,
            ds.experts_per_token, ds.shared_experts) == (7168, 61, 58, 256, 8, 1)
    assert model_preset("deepseek-r1") is ds and model_preset("  DEEPSEEK-V3 ") is ds
    v4 = model_preset("DeepSeek-V4-Flash")
    assert (v4.hidden_size, v4.num_layers, v4.moe_layers, v4.experts_per_token) == (4096, 43, 43, 6)
    q = model_preset("Qwen3-235B-A22B")
    assert (q.hidden_size, q.num_layers, q.num_attention_heads, q.num_kv_heads) == (4096, 94, 64, 4)
    assert model_preset("qwen3-30b-a3b").moe_intermediate_size == 768
    d = model_preset("Qwen2.5-72B")
    assert (d.hidden_size, d.num_layers, d.is_moe, d.num_kv_heads) == (8192, 80, False, 8)
    assert len(model_presets()) == 6
    assert all(m.source for m in model_presets())
    with pytest.raises(ModelConfigError, match="known: DeepSeek-V3, DeepSeek-V4-Flash"):
        model_preset("llama-4")


def test_reference_per_token_bytes_table():
    """Reference §3.7, second table (BF16 activations, INT8 dispatch with a 4-byte scale)."""
    expect = {"DeepSeek-V3": (14336, 28672, 57376, 114688),
              "DeepSeek-V4-Flash": (8192, 16384, 24600, 49152),
              "Qwen3-235B-A22B": (8192, 16384, 32800, 65536),
              "Qwen3-30B-A3B": (4096, 8192, 16416, 32768)}
    for name, (tp, pp, disp, comb) in expect.items():
        m = model_preset(name)
        assert m.hidden_size * 2 == tp and 2 * m.hidden_size * 2 == pp
        assert dispatch_bytes(1, m.experts_per_token, m.hidden_size, 1, 4) == disp
        assert combine_bytes(1, m.experts_per_token, m.hidden_size, 2) == comb
    ds = model_preset("DeepSeek-V3")      # EP bytes per token per step: 9.98 MB
    per_step = ds.moe_layers * (57376 + 114688)
    assert per_step / 1e6 == pytest.approx(9.98, abs=0.005)
    assert 2 * 80 * 16384 / 1e6 == pytest.approx(2.62, abs=0.005)   # Qwen2.5-72B TP per step


def test_hf_config_of_deepseek_v3():
    m = model_from_hf_config(DSV3_CONFIG)
    assert m.name == "deepseek_v3"
    assert (m.moe_layers, m.dense_layers, m.routed_experts, m.experts_per_token) == (58, 3, 256, 8)
    assert (m.head_dim, m.kv_lora_rank, m.attention, m.mtp_layers) == (192, 512, "mla", 1)
    assert m.kv_bytes_per_token() == (512 + 64) * 2


def test_hf_config_of_qwen3_moe_and_dense():
    m = model_from_hf_config(QWEN3_MOE_CONFIG, name="Qwen3-235B-A22B")
    assert (m.name, m.moe_layers, m.num_kv_heads, m.kv_bytes_per_token()) == \
        ("Qwen3-235B-A22B", 94, 4, 2 * 4 * 128 * 2)
    sparse = model_from_hf_config({**QWEN3_MOE_CONFIG, "decoder_sparse_step": 2,
                                   "mlp_only_layers": [1]})
    assert sparse.moe_layers == 46                       # layers 3, 5, ..., 93
    dense = model_from_hf_config({"hidden_size": 8192, "num_hidden_layers": 80,
                                  "num_attention_heads": 64, "torch_dtype": "float32"})
    assert (dense.is_moe, dense.num_kv_heads, dense.dtype_bytes) == (False, 64, 4)
    vl = model_from_hf_config({"model_type": "qwen2_5_vl", "text_config": {
        "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28}})
    assert vl.hidden_size == 3584


def test_config_without_needed_keys_names_them():
    with pytest.raises(ModelConfigError) as e:
        model_from_hf_config({"model_type": "x", "hidden_size": 4096, "num_experts": 8})
    msg = str(e.value)
    assert ("config.json of x lacks num_hidden_layers, num_attention_heads, "
            "num_experts_per_tok") in msg
    with pytest.raises(ModelConfigError, match="num_attention_heads = '64'; expected a whole"):
        model_from_hf_config({"hidden_size": 1, "num_hidden_layers": 2,
                              "num_attention_heads": "64"})
    with pytest.raises(ModelConfigError, match="torch_dtype = 'float13'"):
        model_from_hf_config({**DSV3_CONFIG, "torch_dtype": "float13"})
    with pytest.raises(ModelConfigError, match="must be an object"):
        model_from_hf_config(["hidden_size"])


def test_workload_tokens_and_errors():
    w = Workload(decode_seqs=48, mtp_tokens=1, mtp_acceptance=0.7, prefill_tokens=2048)
    assert w.tokens("decode") == 96 and w.generated("decode") == pytest.approx(48 * 1.7)
    assert w.tokens("prefill") == 2048 and w.scale_bytes == 512
    assert Workload(dispatch_bytes=2).scale_bytes == 0
    assert w.per_rank("decode", 64, 3).decode_seqs == 22
    with pytest.raises(CostInputError, match="unknown phase 'train'"):
        w.tokens("train")
    with pytest.raises(CostInputError, match="decode_seqs = 0"):
        Workload(decode_seqs=0)
    with pytest.raises(CostInputError, match="imbalance must be >= 1"):
        Workload(imbalance=0.9)
    with pytest.raises(CostInputError, match="accepted: ALLGATHER, MC2, ALLTOALL, FUSED_MC2"):
        Workload(moe_method="DEEPEP")


def test_mc2_capacity_rule():
    assert mc2_capacity(8, 64) == 64              # min(ceil(64/8), 512) * 8
    assert mc2_capacity(4, 8192) == 512 * 4       # clamped at 512 per TP rank
    assert mc2_capacity(3, 10) == 4 * 3           # ceil(10/3) = 4
    assert mc2_capacity(1, 8192, fused=True, mega_moe=True) == 4096
    assert tokens_per_ep_rank(64, 8) == 8 and tokens_per_ep_rank(65, 8) == 9


def test_moe_method_selection_mirrors_vllm_ascend():
    pick = select_moe_method
    assert pick("910b", expert_parallel=False, ep_size=16, experts=256, tokens=8,
                capacity=64).method == "ALLGATHER"
    assert pick("910b", expert_parallel=True, ep_size=16, experts=256, tokens=64,
                capacity=64).method == "MC2"
    small = pick("910b", expert_parallel=True, ep_size=8, experts=256, tokens=8, capacity=64)
    assert small.method == "ALLGATHER" and "32 experts per device > 24" in small.reason
    assert "EP 8 < 16" in small.reason
    big = pick("910b", expert_parallel=True, ep_size=16, experts=256, tokens=4096, capacity=64)
    assert big.method == "ALLGATHER" and "4096 tokens > MC2 capacity 64" in big.reason
    assert pick("a3", expert_parallel=True, ep_size=32, experts=256, tokens=64,
                capacity=64).method == "MC2"
    assert pick("a3", expert_parallel=True, ep_size=32, experts=256, tokens=4096,
                capacity=64).method == "ALLTOALL"
    assert pick("a3", expert_parallel=True, ep_size=32, experts=256, tokens=64, capacity=64,
                fused_mc2=True).method == "FUSED_MC2"
    assert pick("a3", expert_parallel=True, ep_size=64, experts=256, tokens=64, capacity=64,
                fused_mc2=True).method == "MC2"
    assert pick("910b", expert_parallel=True, ep_size=16, experts=256, tokens=8, capacity=64,
                lora=True).method == "ALLTOALL"
