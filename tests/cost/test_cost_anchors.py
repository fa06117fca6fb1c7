"""Validation anchors of reference cost-model.md §4 and the worked examples of §5.7, as
golden numbers. Where an anchor is not met with the reference's parameters, the test
pins the departure and says why (nothing is tuned to pass)."""

from __future__ import annotations

import pytest

from rtc.cost.collectives import allreduce, moe_exchange
from rtc.cost.hccl_algo import hccl_options
from rtc.cost.layouts import rank_layouts
from rtc.cost.links import Site, hardware_of
from rtc.cost.models import model_preset
from rtc.cost.moe import combine_bytes, dispatch_bytes
from rtc.cost.deployment import Layout
from rtc.cost.params import apply_overrides, load_params
from rtc.cost.spans import group_span
from rtc.cost.workload import Workload
from rtc.model.presets import presets

US = 1e-6
A2 = hardware_of(presets()["atlas-800t-a2"])
A3 = hardware_of(presets()["atlas-800-a3"])
SITES = [Site(r // 8, r % 8) for r in range(16)]
TP8 = group_span(range(8), SITES, A2)
TP16 = group_span(range(16), SITES, A2)
QWEN72 = model_preset("Qwen2.5-72B")


def rel(got: float, want: float) -> float:
    return abs(got - want) / want


# --------------------------------------------------------------------------- V1, V3

def test_v1_deepep_low_latency_bandwidths_from_the_byte_definition():
    """DEEPEP1: 128 tokens/rank, H 7,168, top-8; FP8 dispatch with 56 FP32 scales per token
    (7,392 B per copy), BF16 combine (14,336 B). Bandwidth = bytes per rank / latency."""
    disp = dispatch_bytes(128, 8, 7168, 1, 56 * 4)
    comb = combine_bytes(128, 8, 7168, 2)
    assert disp == 128 * 8 * 7392 and comb == 128 * 8 * 14336
    published = [(disp, 77, 98), (disp, 194, 39), (comb, 114, 127), (comb, 360, 40)]
    for nbytes, us, gbps in published:
        assert rel(nbytes / (us * US) / 1e9, gbps) < 0.02, (nbytes, us, gbps)


# CM384v2 Table 7 (EP size: latency us, bandwidth GB/s per die), 128 tokens/rank, INT8
V3_DISPATCH = {8: (116, 71), 16: (131, 63), 32: (133, 62), 64: (141, 58), 128: (152, 54),
               256: (152, 54)}
V3_COMBINE = {8: (118, 131), 16: (132, 117), 32: (146, 105), 64: (150, 103),
              128: (150, 103), 256: (150, 103)}


def test_v3_cloudmatrix_dispatch_combine_from_the_byte_definition():
    """CM384v2 §4.2.1: 7,168 B + 512 B padded scale per dispatched copy (7.5 KB), 14 KB per
    combined copy. 11 of the 12 rows are within 5 %; combine at EP8 is 5.03 % off (the
    paper's 131 GB/s implies 15.1 KB per copy, not 14 KiB; its byte accounting is not
    given). Pinned here, not tuned."""
    disp = dispatch_bytes(128, 8, 7168, 1, 512)
    comb = combine_bytes(128, 8, 7168, 2)
    errors = {}
    for name, table, nbytes in (("dispatch", V3_DISPATCH, disp), ("combine", V3_COMBINE, comb)):
        for ep, (us, gbps) in table.items():
            errors[name, ep] = rel(nbytes / (us * US) / 1e9, gbps)
    misses = {k: round(v, 4) for k, v in errors.items() if v >= 0.05}
    assert misses == {("combine", 8): 0.0503}
    assert max(v for k, v in errors.items() if k not in misses) < 0.05


def test_v3_nominal_model_is_optimistic_on_ub():
    """Known gap (reported): with the nominal UB figures the fused MC2 kernel's own
    start-up is not modelled, so an EP8 dispatch inside one A3 server comes out about
    2.7x faster than CM384v2 Table 7's 116 us -- outside the +-2x stated for absolute
    times. Calibrate ub-a3.alpha / hccs-a3.alpha before trusting absolute EP times."""
    sites = [Site(0, d, "0") for d in range(16)]
    ep8 = group_span(range(8), sites, A3)
    t = moe_exchange("dispatch", dispatch_bytes(128, 8, 7168, 1, 512), ep8,
                     load_params("nominal")).seconds
    assert 116 * US / t == pytest.approx(2.69, abs=0.05)


# --------------------------------------------------------------------------- §5.7 Example A

def test_example_a_deepseek_prefill_tp16_across_two_a2():
    n = 1024 * 7168 * 2                                   # 14.7 MB per AllReduce
    nom = load_params("nominal")
    tp16, tp8 = allreduce(n, TP16, nom), allreduce(n, TP8, nom)
    assert tp16.algorithm == "mesh RS | ring AR | mesh AG"       # slice 0.92 MB: no Pipeline
    stages = [(s.alpha / US, s.beta / US) for s in tp16.stages]
    for (a, b), (ra, rb) in zip(stages, [(13, 66), (120, 73), (13, 66)]):
        assert rel(a, ra) < 0.10 and rel(b, rb) < 0.10
    assert rel(tp16.seconds, 350 * US) < 0.10 and rel(tp8.seconds, 157 * US) < 0.10
    assert rel(2 * tp16.seconds, 0.70e-3) < 0.10 and rel(2 * tp8.seconds, 0.31e-3) < 0.10
    assert rel(61 * 2 * tp16.seconds, 42.8e-3) < 0.10
    plan = load_params("hccl-plan")
    p16, p8 = 2 * allreduce(n, TP16, plan).seconds, 2 * allreduce(n, TP8, plan).seconds
    assert rel(p16, 0.88e-3) < 0.10 and rel(p8, 0.45e-3) < 0.10
    assert rel(61 * p16, 53.5e-3) < 0.10 and rel(61 * p8, 27.6e-3) < 0.10


# --------------------------------------------------------------------------- §5.7 Example B

def test_example_b_qwen72b_decode_layouts_at_64_sequences():
    ranking = rank_layouts(2, 8, A2, QWEN72, Workload(decode_seqs=64), load_params("nominal"))
    by = {s.layout: s for s in ranking.scores}
    dp2 = by[Layout(dp=2, tp=8)].step
    pp2 = by[Layout(pp=2, tp=8)].step
    tp16 = by[Layout(tp=16)].step
    assert rel(dp2.rows[0].time_per_call, 30.7 * US) < 0.10
    assert rel(dp2.total, 4.9e-3) < 0.10
    assert rel(pp2.rows[0].time_per_call, 35.4 * US) < 0.10
    boundary = sum(r.time_per_step for r in pp2.rows if r.kind == "pp")
    assert rel(boundary, 93 * US) < 0.10 and rel(pp2.total, 5.75e-3) < 0.10
    call = tp16.rows[0].cost
    assert rel(call.seconds, 160.6 * US) < 0.10
    assert rel(call.stages[1].seconds, 125 * US) < 0.10
    assert rel(call.stages[1].alpha, 120 * US) < 0.10
    assert rel(tp16.total, 25.7e-3) < 0.10
    assert rel(tp16.per_token / dp2.per_token, 5.2) < 0.10                # "about 5x"
    assert rel(pp2.per_token / dp2.per_token, 1.2) < 0.10
    assert ranking.index(Layout(dp=2, tp=8)) < ranking.index(Layout(pp=2, tp=8)) \
        < ranking.index(Layout(tp=16))


@pytest.mark.parametrize("seqs, alphas, ratio", [
    (64, (2, 10), 3.0), (64, (5, 20), 3.4), (64, (13, 60), 4.6),
    (8, (2, 10), 5.0), (8, (5, 20), 4.7), (8, (13, 60), 5.5)])
def test_example_b_sensitivity_tp16_vs_tp8_same_batch(seqs, alphas, ratio):
    p = apply_overrides(load_params("nominal"),
                        [f"hccs.alpha={alphas[0]}us", f"roce.alpha={alphas[1]}us"])
    n = seqs * 8192 * 2
    assert rel(allreduce(n, TP16, p).seconds / allreduce(n, TP8, p).seconds, ratio) < 0.10


def test_example_b_prefill_chunks_ratio():
    """Reference: prefill chunks of 1K-8K tokens give only 1.7-2.3x (TP16 across two
    servers vs TP8, same chunk). That figure uses the hierarchical formula of §5.3, i.e.
    no Pipeline: reproduced with HCCL_ALGO=level1:ring (2.16 ... 1.65, within 10 % of the
    range ends). With HCCL's own choice, Pipeline takes chunks from 1K tokens (slice
    n/16 >= 1 MiB) and the ratio drops to 1.73 ... 1.16 -- outside the range for 2K-8K.
    Pinned, not tuned."""
    nom = load_params("nominal")
    ring = hccl_options(algo="level0:NA;level1:ring")
    chunks = (1024, 2048, 4096, 8192)
    forced = [allreduce(t * 16384, TP16, nom, ring).seconds / allreduce(t * 16384, TP8, nom).seconds
              for t in chunks]
    assert rel(max(forced), 2.3) < 0.10 and rel(min(forced), 1.7) < 0.10
    assert all(1.7 * 0.9 <= r <= 2.3 * 1.1 for r in forced)
    auto = [allreduce(t * 16384, TP16, nom).seconds / allreduce(t * 16384, TP8, nom).seconds
            for t in chunks]
    assert [round(r, 2) for r in auto] == [1.73, 1.42, 1.25, 1.16]
    assert allreduce(2048 * 16384, TP16, nom).algorithm == "pipeline"
