"""The memory model of one rank (rtc/cost/kv_cache.py) against what real vLLM start-ups
printed (tests/data/kv_anchors.toml, each row with its public source), and its
arithmetic as properties."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rtc.cost.kv_cache import (GIB, activation_peak, kv_budget, kv_bytes_per_token,
                               layers_per_rank, tokens_in)
from rtc.cost.layout import Layout
from rtc.cost.memory import weights_per_rank
from rtc.cost.models import model_from_hf_config, model_preset
from rtc.cost.serving import ServingArgs, human_int, serving_args
from conftest import TESTS

DATA = tomllib.loads((TESTS / "data" / "kv_anchors.toml").read_text())
MODELS = {k: model_from_hf_config(v["config"], k) for k, v in DATA["models"].items()}
ANCHORS = DATA["anchor"]


def _id(a):
    return f"{a['kind']}-{a.get('model', '')}-{a['printed']}"


def _estimate(a):
    m = MODELS.get(a.get("model"))
    layout = Layout(tp=a.get("tp", 1))
    kind = a["kind"]
    kv = a.get("kv_dtype_bytes", m.dtype_bytes if m else 2)   # --kv-cache-dtype fp8: 1
    if kind == "tokens":
        return tokens_in(a["available_gib"] * GIB, m, layout, kv, a["block_size"])
    if kind == "one_sequence":
        per = kv_bytes_per_token(m, layout.tp, kv) * layers_per_rank(m, 1)
        return per * a["max_model_len"] / GIB
    if kind == "largest_len":
        per = kv_bytes_per_token(m, layout.tp, kv) * layers_per_rank(m, 1)
        return a["available_gib"] * GIB // per
    if kind == "concurrency":
        return a["tokens"] / a["max_model_len"]
    if kind == "weights":
        return weights_per_rank(m, layout, m.dtype_bytes) / GIB
    if kind == "activation":
        return activation_peak(m, layout.tp, a["batched_tokens"], a["max_num_seqs"]) / GIB
    raise AssertionError(kind)


#: Relative tolerance per kind: the KV arithmetic is exact up to the printed rounding;
#: weights are derived from the shape (no checkpoint); the activation peak is an estimate.
TOLERANCE = {"tokens": 0.02, "one_sequence": 0.01, "largest_len": 0.001,
             "concurrency": 0.01, "weights": 0.02, "activation": 0.15}


@pytest.mark.parametrize("anchor", [a for a in ANCHORS if "explained" not in a
                                    or a["kind"] == "weights"], ids=_id)
def test_estimate_is_within_tolerance_of_what_vllm_printed(anchor):
    got = _estimate(anchor)
    assert got == pytest.approx(anchor["printed"], rel=TOLERANCE[anchor["kind"]]), anchor["source"]


def test_anchor_set_covers_every_kind_with_public_sources():
    assert {a["kind"] for a in ANCHORS} == set(TOLERANCE)
    assert all(a["source"].startswith("https://") for a in ANCHORS)
    assert len(ANCHORS) >= 15
    assert len({_source(a) for a in ANCHORS}) >= 16
    assert any("vllm-ascend" in a["source"] for a in ANCHORS)       # an NPU start-up
    assert any(a.get("kv_dtype_bytes") == 1 for a in ANCHORS)      # an fp8 KV cache


def _source(anchor):
    """The issue / pull request / page a row was read from (its URL before the note)."""
    return anchor["source"].split(" ")[0]


def test_r1_distill_row_is_explained_by_the_smallest_worker():
    """vllm#13061: the printed 8.69 GiB is one worker's; the cache of 81,536 tokens needs
    less than that at rtc's bytes per token (so another worker had less free)."""
    a = next(a for a in ANCHORS if a["printed"] == 81536)
    m = MODELS[a["model"]]
    need = 81536 * kv_bytes_per_token(m, 2, 2) * layers_per_rank(m, 1) / GIB
    assert need == pytest.approx(7.46, abs=0.01)
    assert need < a["available_gib"]
    assert _estimate(a) == pytest.approx(94912, rel=0.001)


def test_pre_mla_deepseek_v2_row_is_explained_by_the_padded_head_size():
    """vllm#10927 (before vLLM's MLA cache): K and V of 16 heads padded to head size 256
    over 27 layers; 35.42 GiB then holds exactly the printed 5,373 blocks of 16."""
    a = next(a for a in ANCHORS if a["kind"] == "tokens" and a["model"] == "deepseek-v2-lite")
    m = MODELS[a["model"]]
    padded = 2 * m.num_attention_heads * 256 * 2 * m.num_layers
    assert padded == 442368
    assert int(a["available_gib"] * GIB // (padded * 16)) * 16 == a["printed"] == 5373 * 16
    assert _estimate(a) == pytest.approx(1222720, rel=0.001)   # rtc: the MLA latent


def test_mla_cache_is_the_latent_on_every_tp_rank():
    """DeepSeek-V3: (kv_lora_rank 512 + rope 64) x 2 bytes per layer, whatever the TP."""
    m = model_preset("deepseek-v3")
    assert kv_bytes_per_token(m, 1, 2) == kv_bytes_per_token(m, 16, 2) == 1152


def test_gqa_heads_are_replicated_when_tp_exceeds_them():
    m = MODELS["qwen3-235b-a22b"]   # 4 KV heads
    assert kv_bytes_per_token(m, 4, 2) == kv_bytes_per_token(m, 8, 2) == 2 * 128 * 2


@settings(max_examples=60, deadline=None)
@given(avail=st.floats(min_value=0, max_value=200 * GIB), tp=st.sampled_from([1, 2, 4, 8]),
       block=st.sampled_from([16, 32, 128]), pp=st.sampled_from([1, 2, 4]))
def test_tokens_are_whole_blocks_that_fit(avail, tp, block, pp):
    m = MODELS["llama-3_1-8b"]
    layout = Layout(tp=tp, pp=pp)
    got = tokens_in(avail, m, layout, 2, block)
    per = kv_bytes_per_token(m, tp, 2) * layers_per_rank(m, pp)
    assert got % block == 0
    assert got * per <= avail
    assert (got + block) * per > avail - block * per


@pytest.mark.parametrize("words,expect", [
    (["--max-model-len", "32k"], 32000),
    (["--max-model-len=32K"], 32768),
    (["--max_model_len", "131072"], 131072),
    (["--max-model-len", "1.5m"], 1500000),
])
def test_max_model_len_takes_vllm_human_readable_integers(words, expect):
    assert serving_args(words).max_model_len == expect


@pytest.mark.parametrize("bad", ["four", "0", "-1", "32q", "", "1e5", "99999999999999"])
def test_unreadable_values_are_listed_not_raised(bad):
    args = serving_args(["--max-model-len", bad, "--gpu-memory-utilization", "1.5"])
    assert args.max_model_len is None and args.gpu_memory_utilization is None
    assert [f for f, _ in args.unreadable] == ["--max-model-len", "--gpu-memory-utilization"]


def test_human_int_rejects_fractions_of_a_token():
    with pytest.raises(ValueError):
        human_int("1.0001k")


def test_budget_of_d1_names_the_communicator_buffers():
    """D1 (DeepSeek-R1 W8A8 on 2 x A2, DP2 x TP8 + EP, HCCL_BUFFSIZE 1024): a rank joins
    TP, DP, EP and MC2 communicators of 2 x 1024 MB each, 8 GiB of its 64 GB."""
    m = model_preset("deepseek-v3")
    b = kv_budget(m, Layout(dp=2, tp=8, expert_parallel=True), ServingArgs(max_model_len=32768),
                  hbm=64e9, chip="Ascend910B", ascend=True, bytes_per_param=1,
                  buffsize="1024")
    assert b.groups == ("TP", "DP", "EP", "MC2")
    assert b.buffers == 4 * 2 * 1024 * 1024 ** 2
    assert b.block_size == 128 and b.max_num_seqs == 256
    assert b.defaults == ("gpu_memory_utilization", "max_num_seqs")
    assert b.per_token == 61 * 1152


def test_advise_ranks_only_layouts_whose_cache_holds_one_sequence(rtc):
    """D1's layout at --max-model-len 131072 with HCCL_BUFFSIZE 1024: RTC344 is reported,
    the advisor goes on, drops the layouts whose cache cannot hold one sequence and says
    which of them would have communicated less."""
    from conftest import CASES

    case = CASES / "checks" / "RTC344-kv-cache-below-one-sequence.rtc"
    res = rtc("advise", str(case))
    assert res.returncode == 0, res.stderr
    assert "error[RTC344]" in res.stderr
    out = res.stdout
    assert "KV tokens/rank" in out and "seqs at max len" in out
    assert "1  TP16 " in out and "1.39 x 131,072" in out
    assert "your layout DP2 x TP8 + EP is not scored: its KV cache holds 75,648 tokens" in out
    assert "dropped though cheaper: DP2 x TP8 + EP (92.8 us per token)" in out


def test_advise_json_carries_kv_capacity_and_validates(rtc):
    import json

    import jsonschema
    from conftest import CASES, ROOT

    case = CASES / "checks" / "RTC344-kv-cache-below-one-sequence.rtc"
    res = rtc("advise", str(case), "--format", "json")
    doc = json.loads(res.stdout)
    schema = json.loads((ROOT / "schemas" / "advice.schema.json").read_text())
    jsonschema.validate(doc, schema)
    best = doc["layouts"][0]
    assert (best["layout"], best["kv_tokens_per_rank"], best["max_model_len"]) == \
        ("TP16", 182784, 131072)
    mine = next(r for r in doc["rejected"] if r["layout"] == "DP2 x TP8 + EP")
    assert mine["per_token_s"] == pytest.approx(92.8e-6, rel=0.01)


def test_lint_reads_the_memory_flags_of_a_hand_written_launch(rtc, tmp_path):
    """The same rule from a script: the model is guessed from its path, so a warning."""
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1\n"
                      "vllm serve /models/Qwen3-32B --tensor-parallel-size 2 "
                      "--max-model-len 262144 --port 8000\n")
    out = rtc("lint", str(script)).stdout
    assert "warning[RTC345]" in out and "Qwen3-32B as TP2" in out
    # vLLM's own suggestion: whole blocks (1,404 x 128), not the 179,773 bytes-exact length.
    assert "--max-model-len 179712" in out
    script.write_text(script.read_text().replace("262144", "131072"))
    assert "RTC345" not in rtc("lint", str(script)).stdout


#: vllm-ascend's multi-node DeepSeek tutorial (docs/source/tutorials/multi_node.md at tags
#: v0.9.1 and v0.11.0: two Atlas 800 A2 64G x 8, DeepSeek-V3 / V3.1 W8A8, DP 4 with 2 per node
#: x TP 4 + expert parallel, HCCL_BUFFSIZE=1024, --max-num-seqs 16, --max-model-len 32768,
#: --max-num-batched-tokens 4096, --gpu-memory-utilization 0.9 on node 0, --quantization
#: ascend). Its later pages (tutorials/models/DeepSeek-R1.md, DeepSeek-V3.1.md: the same
#: pair at DP4 x TP4, --max-model-len 16384, HCCL_BUFFSIZE=200, 0.92) run shorter. No page
#: reports 131072 on two A2 servers.
TUTORIAL_FLAGS = ("--max-num-seqs 16 --max-num-batched-tokens 4096 "
                  "--gpu-memory-utilization 0.9 --quantization ascend")


def _tutorial_pair(dp: int, tp: int, max_len: int, buffsize: int = 1024) -> list:
    from conftest import CASES
    from rtc.api import compile_text

    text = (CASES / "checks" / "RTC344-kv-cache-below-one-sequence.rtc").read_text()
    text = text.replace("dp 2\n  tp 8", f"dp {dp}\n  tp {tp}")
    text = text.replace("HCCL_BUFFSIZE = 1024", f"HCCL_BUFFSIZE = {buffsize}")
    text = text.replace('args "--max-model-len 131072"',
                        f'args "--max-model-len {max_len} {TUTORIAL_FLAGS}"')
    res = compile_text(text, "tutorial.rtc")
    return [d for d in res.diagnostics if d.code in ("RTC344", "RTC345", "RTC346")]


def test_the_tutorials_two_a2_deepseek_layouts_fit_as_they_report():
    """What the tutorials ran: DP4 x TP4 + EP at 32768 (HCCL_BUFFSIZE 1024) and at 16384
    (HCCL_BUFFSIZE 200); and D1's DP2 x TP8 + EP with the same flags at 32768. Each starts
    (no RTC344 / RTC345: one sequence of max_model_len fits); only the RTC346 note says that
    fewer than --max-num-seqs 16 sequences of *full* length fit at once, which the tutorials'
    benchmark (3.5k in + 1.5k out per request) never asks for."""
    from rtc.diagnostics import Severity

    found = {(4, 4, 32768, 1024): "42,880 tokens per rank, 1.31 sequences of 32,768",
             (4, 4, 16384, 200): "141,184 tokens per rank, 8.62 sequences of 16,384",
             (2, 8, 32768, 1024): "73,856 tokens per rank, 2.25 sequences of 32,768"}
    for (dp, tp, max_len, buf), numbers in found.items():
        (d,) = _tutorial_pair(dp, tp, max_len, buffsize=buf)
        assert (d.code, d.severity) == ("RTC346", Severity.NOTE)
        assert numbers in d.message and "fewer than --max-num-seqs 16" in d.message


def test_d1_at_131072_with_the_tutorials_flags_does_not_fit():
    """DP2 x TP8 + EP, --max-model-len 131072, the tutorial's flags: weights 43.0 GB and
    HCCL_BUFFSIZE 1024 MB in 4 communicators (8.6 GB) leave 4.8 GiB of KV cache per rank,
    73,856 tokens of the 68.6 KiB MLA latent; one sequence needs 8.6 GiB. RTC344, with the
    largest length that fits and the buffer term that dominates what is left; no tutorial
    reports this length on two A2 servers (they stop at 32768)."""
    (d,) = _tutorial_pair(2, 8, 131072)
    assert d.code == "RTC344"
    assert "one sequence of 131,072 tokens needs 8.6 GiB of KV cache per rank, but 4.8 GiB " \
        "is left" in d.message
    assert "communicator buffers 8.6 GB (TP, DP, EP, MC2)" in d.message
    assert "--max-model-len 73856" in d.hint and "the default 200: 1.7 GB" in d.hint


def _d1_file(tmp_path, buffsize: str = "1024"):
    from conftest import ROOT

    text = (ROOT / "examples" / "a2-2node-dp2-tp8.rtc").read_text()
    path = tmp_path / "d1.rtc"
    path.write_text(text.replace("HCCL_BUFFSIZE = 1024", f"HCCL_BUFFSIZE = {buffsize}"))
    return path


def test_advise_drops_a_layout_with_no_room_for_any_kv_cache(rtc, tmp_path):
    """D1 as shipped (no --max-model-len in its args): DP8 x TP2 + EP holds 49.4 GB of
    weights and 8.6 GB of buffers, 58.8 GB with the reserve and activation peak, over the
    57.6 GB usable; vLLM refuses it ("No available memory for the cache blocks",
    kv_cache_utils.py ``available_memory <= 0``). Before: ranked 3rd with "0" KV tokens."""
    out = rtc("advise", str(_d1_file(tmp_path))).stdout
    assert "DP8 x TP2 + EP  94.3 us" not in out and " 0               0.00 x" not in out
    assert "  DP8 x TP2 + EP: no memory is left for its KV cache (weights 49.4 GB + " \
        "communicator buffers (TP, DP, EP, MC2) 8.6 GB + reserve 0.5 GB + activation peak " \
        "0.3 GB = 58.8 GB over 57.6 GB usable; vLLM refuses to start: \"No available memory " \
        "for the cache blocks\"); raise TP or PP (fewer weights per rank)" in out
    assert "your layout DP2 x TP8 + EP is the best of 4 (92.8 us per token)" in out


def test_advise_does_not_mark_the_own_layout_when_it_has_no_kv_cache(rtc, tmp_path):
    """HCCL_BUFFSIZE 20000 (2 x 20,000 MiB per communicator fits one 64 GB NPU, four of
    them do not): every expert-parallel layout is dropped, the job's own among them, with
    the buffers named first and the fix. Before (40000): ranked 1st, "<- your layout", 0
    KV tokens. RTC348 is reported and tolerated, as RTC344 is."""
    res = rtc("advise", str(_d1_file(tmp_path, "20000")))
    assert res.returncode == 0 and "error[RTC348]" in res.stderr
    assert "<- your layout" not in res.stdout
    assert "your layout DP2 x TP8 + EP: no memory is left for its KV cache (communicator " \
        "buffers (TP, DP, EP, MC2) 167.8 GB + weights 43.0 GB" in res.stdout
    assert "lower HCCL_BUFFSIZE (each of the 4 communicators holds 2 x the buffer size)" \
        in res.stdout


def test_one_sequence_and_the_suggested_length_count_whole_blocks():
    """vLLM: needed = cdiv(cdiv(len, cp), block) x page x layers; the suggested length is
    the largest whose blocks fit, = the rank's KV tokens (blocks x block_size x cp)."""
    m = model_preset("deepseek-v3")
    args = ServingArgs(max_model_len=75649)
    b = kv_budget(m, Layout(dp=2, tp=8, expert_parallel=True), args, hbm=64e9,
                  chip="Ascend910B", ascend=True, bytes_per_param=1, buffsize="1024")
    assert b.tokens == 591 * 128 == b.largest_len()
    assert b.one_sequence == 592 * 128 * b.per_token > b.available
    fits = kv_budget(m, Layout(dp=2, tp=8, expert_parallel=True),
                     ServingArgs(max_model_len=75648), hbm=64e9, chip="Ascend910B",
                     ascend=True, bytes_per_param=1, buffsize="1024")
    assert fits.one_sequence == 591 * 128 * b.per_token <= fits.available
    assert not fits.no_room


@pytest.mark.parametrize("raw,expect", [("1024", 1024), (" 200 ", 200), ("0", None),
                                        ("-5", None), ("²", None), ("１０", None),
                                        ("9" * 5000, None), (None, None), ("1e3", None)])
def test_buffsize_is_read_without_raising(raw, expect):
    from rtc.cost.kv_cache import buffer_bytes, buffsize_number

    assert buffsize_number(raw) == expect
    mb = expect or 200                                  # HCCL's default when unreadable
    assert buffer_bytes(4, True, raw) == 4 * 2 * mb * 1024 ** 2


def test_cost_warns_when_decode_seqs_is_more_than_the_job_can_run(rtc):
    """--decode-seqs 1000000 on D1: before, an 82 s step with no word. vLLM runs at most
    --max-num-seqs 256 (its default for a 64 GB 910B; D1's args do not set it) and the
    KV cache of 591 blocks cannot give even one block to more than 591 sequences."""
    from conftest import ROOT

    d1 = str(ROOT / "examples" / "a2-2node-dp2-tp8.rtc")
    out = rtc("cost", d1, "--decode-seqs", "1000000").stdout
    assert "note: outside what the job can hold: 1,000,000 decode sequences per DP rank of " \
        "DP2 x TP8 + EP is more than --max-num-seqs 256 (vLLM's default for this chip: the " \
        "job's args do not set it), the most vLLM runs at once; more than the 591 sequences " \
        "its KV cache holds even at one 128-token block each (75,648 tokens per rank; 0.46 " \
        "sequences at the full 163,840 tokens)" in out
    assert "outside what the job can hold" not in rtc("cost", d1).stdout          # 64
    assert "outside what the job can hold" not in rtc("cost", d1, "--decode-seqs",
                                                       "256").stdout
    assert "more than --max-num-seqs 256" in rtc("cost", d1, "--decode-seqs", "257").stdout
