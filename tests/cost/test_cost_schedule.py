"""rtc.cost per-layer schedule: the rows per group kind (reference §3), their byte counts
and times against hand-computed values, the explanation, and bad layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtc.api import compile_file
from rtc.cost.deployment import Layout, deployment_on_grid
from rtc.cost.errors import CostInputError, LayoutError
from rtc.cost.hccl_algo import hccl_options
from rtc.cost.links import hardware_of
from rtc.cost.models import ModelSpec, model_preset
from rtc.cost.params import load_params
from rtc.cost.schedule import LIMITS, explain, job_schedule, schedule, to_dict
from rtc.cost.workload import Workload
from rtc.model.presets import presets
from conftest import ROOT

EXAMPLES = ROOT / "examples"
US = 1e-6
NOM = load_params("nominal")
A2 = hardware_of(presets()["atlas-800t-a2"])
A3 = hardware_of(presets()["atlas-800-a3"])
QWEN72 = model_preset("Qwen2.5-72B")
DSV3 = model_preset("DeepSeek-V3")
A_HCCS, B_HCCS = 13 * US, 1 / 28e9         # nominal
A_ROCE, B_ROCE = 60 * US, 1 / 25e9


def rows_by(step):
    return {(r.kind, r.op): r for r in step.rows}


def test_dense_tp_two_allreduce_per_layer():
    dep = deployment_on_grid(Layout(tp=8), 1, 8, A2, moe=False)
    step = schedule(dep, QWEN72, Workload(decode_seqs=64), NOM)
    (row,) = step.rows
    n = 64 * 8192 * 2
    assert (row.kind, row.op, row.bytes_per_call, row.calls_per_layer, row.calls_per_step) == \
        ("tp", "AllReduce", n, 2.0, 160)
    per_call = 2 * A_HCCS + 2 / 8 * n * B_HCCS                     # 35.4 us
    assert row.time_per_call == pytest.approx(per_call)
    assert row.time_per_layer == pytest.approx(2 * per_call)
    assert step.total == pytest.approx(160 * per_call)
    assert step.per_token == pytest.approx(160 * per_call / 64)
    assert (row.span, row.bottleneck, row.cost.regime) == ("intra-server", "hccs-910b",
                                                           "alpha-bound")
    assert step.moe is None and LIMITS in step.notes


def test_deepseek_on_the_a2_example_decode_uses_mc2():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    step = job_schedule(topo, topo.jobs[0], DSV3, Workload(decode_seqs=32), NOM)
    assert step.moe.method == "MC2" and step.moe.capacity == 32
    rows = rows_by(step)
    assert set(rows) == {("tp", "AllReduce"), ("tp", "AllGather"), ("ep", "dispatch"),
                         ("ep", "combine"), ("dp", "host all_reduce")}
    assert rows["tp", "AllReduce"].calls_per_step == 61 + 3     # attention + dense MLP
    assert rows["tp", "AllGather"].calls_per_step == 58         # after each MoE combine
    t_r = 32 // 8                                               # tokens per EP rank
    disp, comb = rows["ep", "dispatch"], rows["ep", "combine"]
    assert disp.bytes_per_call == t_r * 8 * (7168 + 512)
    assert comb.bytes_per_call == t_r * 8 * 7168 * 2
    port = 8 * B_ROCE            # 8 peers on the other server share this rank's NIC
    assert disp.time_per_call == pytest.approx(A_ROCE + disp.bytes_per_call / 16 * port)
    assert (disp.span, disp.bottleneck, disp.groups) == ("cross-server", "roce-200ge", 1)
    host = rows["dp", "host all_reduce"]
    assert host.time_per_step == pytest.approx(2 * 50 * US) and host.cost.beta == 0
    assert step.total == pytest.approx(sum(r.time_per_step for r in step.rows))
    assert step.generated == 2 * 32


def test_deepseek_prefill_falls_back_to_allgather():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    step = job_schedule(topo, topo.jobs[0], DSV3, Workload(decode_seqs=32,
                                                           prefill_tokens=4096), NOM, "prefill")
    assert step.moe.method == "ALLGATHER" and "4096 tokens > MC2 capacity 32" in step.moe.reason
    rows = rows_by(step)
    assert rows["tp", "AllReduce"].calls_per_step == 61 + 3 + 58
    ag = rows["dp", "AllGather"]
    assert ag.bytes_per_call == 4096 * 7168 * 2 * 2 and ag.calls_per_step == 58
    # DP group = 2 ranks on two servers: ring over RoCE, output n
    assert ag.time_per_call == pytest.approx(A_ROCE + 0.5 * ag.bytes_per_call * B_ROCE)
    assert rows["dp", "ReduceScatter"].time_per_call == pytest.approx(ag.time_per_call)


def test_sequence_parallel_turns_allreduce_into_rs_and_ag():
    dep = deployment_on_grid(Layout(tp=8), 1, 8, A2, moe=False)
    step = schedule(dep, QWEN72, Workload(decode_seqs=64, sequence_parallel=True), NOM)
    rows = rows_by(step)
    n = 64 * 8192 * 2
    assert set(rows) == {("tp", "ReduceScatter"), ("tp", "AllGather")}
    assert rows["tp", "ReduceScatter"].time_per_call == pytest.approx(A_HCCS + n / 8 * B_HCCS)
    assert rows["tp", "AllGather"].calls_per_step == 160


def test_pp_boundary_send_allgather():
    dep = deployment_on_grid(Layout(pp=2, tp=8), 2, 8, A2, moe=False)
    step = schedule(dep, QWEN72, Workload(decode_seqs=64), NOM)
    rows = rows_by(step)
    boundary = 2 * 64 * 8192 * 2
    p2p, ag = rows["pp", "Send/Recv"], rows["pp", "AllGather"]
    assert p2p.bytes_per_call == boundary / 8 and p2p.calls_per_step == 1
    assert p2p.time_per_call == pytest.approx(A_ROCE + boundary / 8 * B_ROCE)     # 70.5 us
    assert ag.time_per_call == pytest.approx(A_HCCS + boundary / 8 * B_HCCS)      # 22.4 us
    assert p2p.calls_per_layer == 0 and p2p.time_per_layer == 0
    assert p2p.bottleneck == "roce-200ge" and p2p.groups == 8


def test_dcp_rows_inside_tp():
    dep = deployment_on_grid(Layout(tp=8, dcp=2), 1, 8, A2)
    step = schedule(dep, DSV3, Workload(decode_seqs=16), NOM)
    rows = rows_by(step)
    heads = 128 * 2 / 8
    q = rows["dcp", "AllGather"]
    assert q.bytes_per_call == 16 * heads * 192 * 2 and q.calls_per_step == 61
    assert q.ranks == (0, 1) and q.span == "intra-server"
    out = rows["dcp", "ReduceScatter"]
    assert out.bytes_per_call == 16 * heads * (128 * 2 + 4)
    pre = schedule(dep, DSV3, Workload(prefill_tokens=1024), NOM, "prefill")
    assert rows_by(pre)["dcp", "AllGather"].bytes_per_call == 1024 * (512 + 64) * 2


def test_a3_example_mc2_and_aiv_mesh():
    topo = compile_file(str(EXAMPLES / "a3-2node-dp2-tp16.rtc")).topology
    step = job_schedule(topo, topo.jobs[0], DSV3, Workload(decode_seqs=64), NOM)
    assert step.moe.method == "MC2"
    rows = rows_by(step)
    tp = rows["tp", "AllReduce"]
    assert tp.cost.algorithm == "mesh AR" and tp.span == "intra-server"
    assert rows["ep", "dispatch"].span == "intra-superpod"
    assert any("AIV" in n for n in tp.cost.notes)


def test_explain_names_the_bottleneck_and_the_regime():
    dep = deployment_on_grid(Layout(tp=16), 2, 8, A2, moe=False)
    step = schedule(dep, QWEN72, Workload(decode_seqs=64), NOM)
    text = explain(step)
    assert "TP group (0..15, cross-server) dominates over roce-200ge" in text
    assert "160 x 1.05 MB AllReduce per step" in text
    assert "alpha-bound" in text and "crossover" in text
    assert "number of slow steps" in text
    data = to_dict(step)
    json.dumps(data)
    assert data["groups"][0]["stages"][1]["link"] == "roce-200ge"
    assert data["total_s"] == pytest.approx(step.total)
    pre = schedule(dep, QWEN72, Workload(prefill_tokens=8192), NOM, "prefill")
    assert "beta-bound" in explain(pre)


def test_overlap_hides_part_of_the_moe_exchange():
    dep = deployment_on_grid(Layout(dp=2, tp=8, expert_parallel=True), 2, 8, A2)
    plain = rows_by(schedule(dep, DSV3, Workload(decode_seqs=32), NOM))
    half = rows_by(schedule(dep, DSV3, Workload(decode_seqs=32, overlap=0.5), NOM))
    assert half["ep", "combine"].time_per_step == pytest.approx(
        0.5 * plain["ep", "combine"].time_per_step)
    assert half["tp", "AllReduce"].time_per_step == plain["tp", "AllReduce"].time_per_step


def test_forced_alltoall_method_with_imbalance():
    dep = deployment_on_grid(Layout(dp=2, tp=8, expert_parallel=True), 2, 8, A2)
    w = Workload(decode_seqs=32, moe_method="ALLTOALL")
    even = rows_by(schedule(dep, DSV3, w, NOM))["ep", "dispatch"]
    skew = rows_by(schedule(dep, DSV3, Workload(decode_seqs=32, moe_method="ALLTOALL",
                                               imbalance=1.18), NOM))["ep", "dispatch"]
    assert even.cost.algorithm == "mesh A2A | pairwise A2A"
    assert skew.cost.beta == pytest.approx(1.18 * even.cost.beta)
    assert skew.cost.alpha == pytest.approx(even.cost.alpha)


def test_pcp_is_noted_not_costed():
    dep = deployment_on_grid(Layout(pcp=2, tp=8), 2, 8, A2, moe=False)
    step = schedule(dep, QWEN72, Workload(decode_seqs=8), NOM)
    assert any("PCP > 1 is not supported" in n for n in step.notes)
    assert {r.kind for r in step.rows} == {"tp"}


def test_heads_not_divisible_by_tp_is_a_layout_error():
    dep = deployment_on_grid(Layout(tp=3), 1, 3, A2, moe=False)
    with pytest.raises(LayoutError) as e:
        schedule(dep, QWEN72, Workload(), NOM)
    assert "TP3 cannot run Qwen2.5-72B: 64 attention heads are not divisible by TP 3" \
        in str(e.value)
    assert "8 KV heads neither divide nor are divisible by TP 3" in str(e.value)
    dep = deployment_on_grid(Layout(dp=3, tp=8, expert_parallel=True), 3, 8, A2)
    with pytest.raises(LayoutError, match="256 routed experts are not divisible by EP 24"):
        schedule(dep, DSV3, Workload(), NOM)
    dense_ep = deployment_on_grid(Layout(dp=2, tp=8, expert_parallel=True), 2, 8, A2)
    with pytest.raises(LayoutError, match="is dense: expert parallel does not apply"):
        schedule(dense_ep, QWEN72, Workload(), NOM)
    with pytest.raises(LayoutError, match="dcp 3 does not divide tp 8"):
        Layout(tp=8, dcp=3)
    with pytest.raises(LayoutError, match="tp = 0"):
        Layout(tp=0)
    with pytest.raises(CostInputError, match="unknown phase 'train'"):
        schedule(deployment_on_grid(Layout(tp=8), 1, 8, A2, moe=False), QWEN72, Workload(),
                 NOM, "train")


def test_hccl_algo_from_options_reaches_the_schedule():
    dep = deployment_on_grid(Layout(tp=16), 2, 8, A2, moe=False,
                             options=hccl_options(algo="level0:NA;level1:NHR"))
    row = schedule(dep, QWEN72, Workload(prefill_tokens=4096), NOM, "prefill").rows[0]
    assert row.cost.algorithm == "mesh RS | nhr AR | mesh AG"   # no Pipeline when forced


def test_toy_model_without_kv_heads():
    toy = ModelSpec(name="toy", hidden_size=1024, num_layers=2, num_attention_heads=16)
    dep = deployment_on_grid(Layout(tp=4), 1, 4, A3)
    step = schedule(dep, toy, Workload(decode_seqs=4), NOM)
    assert step.rows[0].calls_per_step == 4 and step.rows[0].cost.algorithm == "mesh AR"
