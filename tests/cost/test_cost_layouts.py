"""rtc.cost layout search: enumeration, constraints, ranking on the A2 and A3 examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtc.api import compile_file
from rtc.cost.deployment import Layout, deployment_on_grid
from rtc.cost.errors import LayoutError
from rtc.cost.layouts import cluster_of, enumerate_layouts, layout_rejection, rank_layouts
from rtc.cost.links import hardware_of
from rtc.cost.models import ModelSpec, model_preset
from rtc.cost.params import load_params
from rtc.cost.spans import group_span
from rtc.cost.workload import Workload
from rtc.model.presets import presets
from conftest import ROOT

EXAMPLES = ROOT / "examples"
NOM = load_params("nominal")
DSV3 = model_preset("DeepSeek-V3")
A2 = hardware_of(presets()["atlas-800t-a2"])
A3 = hardware_of(presets()["atlas-800-a3"])


def test_enumeration_counts_and_ep_choices():
    layouts = enumerate_layouts(16, DSV3)
    # ordered (tp, pp, dp) factorisations of 2^4: C(6, 2) = 15; EP on/off except world 1
    # EP group (PP16 x TP1)
    assert len(layouts) == 15 * 2 - 1
    assert Layout(dp=2, tp=8, expert_parallel=True) in layouts
    assert Layout(pp=16, tp=1, expert_parallel=True) not in layouts
    dense = enumerate_layouts(16, model_preset("Qwen2.5-72B"))
    assert len(dense) == 15 and not any(lay.expert_parallel for lay in dense)
    assert len(enumerate_layouts(16, DSV3, max_pp=1)) == 5 * 2
    with pytest.raises(LayoutError, match="world size must be >= 1"):
        enumerate_layouts(0, DSV3)


def test_the_a2_example_keeps_tp8_inside_each_server_above_tp16():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    job = topo.jobs[0]
    c = cluster_of(topo, job)
    assert (c.servers, c.npus_per_server, c.super_pod_servers) == (2, 8, None)
    ranking = rank_layouts(c.servers, c.npus_per_server, c.hardware, DSV3,
                           Workload(decode_seqs=64), NOM, options=c.options)
    current = Layout(dp=job.dp, tp=job.tp, expert_parallel=job.expert_parallel)
    assert current == Layout(dp=2, tp=8, expert_parallel=True)
    cur, tp16 = ranking.index(current), ranking.index(Layout(tp=16, expert_parallel=True))
    assert cur is not None and tp16 is not None and cur < tp16
    assert ranking.index(Layout(tp=16)) > cur
    worst = ranking.scores[tp16]
    assert worst.dominant.startswith("TP AllReduce over roce-200ge (cross-server")
    best = ranking.scores[cur]
    assert best.moe_method == "MC2" and best.step.tokens == 32         # 64 split over DP2
    assert worst.per_token > 1.5 * best.per_token
    scores = [s.per_token for s in ranking.scores]
    assert scores == sorted(scores)


def test_a2_rejections_are_explained():
    ranking = rank_layouts(2, 8, A2, DSV3, Workload(decode_seqs=64), NOM)
    reasons = {r.layout: r.reason for r in ranking.rejected}
    assert "MoeDistributeDispatch" in reasons[Layout(dp=2, pp=2, tp=4, expert_parallel=True)]
    assert layout_rejection(Layout(pcp=2, tp=8), DSV3, A2, 8, 2).startswith("PCP > 1")
    assert layout_rejection(Layout(tp=16), DSV3, A2, 8, 2) is None
    three = layout_rejection(Layout(dp=3, tp=8, expert_parallel=True), DSV3, A2, 8, 3)
    assert three == "256 routed experts are not divisible by EP 24"
    with_pcp = rank_layouts(2, 8, A2, DSV3, Workload(decode_seqs=64), NOM, pcps=(1, 2))
    assert any(r.reason.startswith("PCP > 1") for r in with_pcp.rejected)
    odd = rank_layouts(1, 6, A2, ModelSpec("toy", 1024, 4, 48), Workload(), NOM)
    assert {s.layout.tp for s in odd.scores} == {1, 2, 3, 6}


def _tp_groups_keep_die_pairs(score, servers: int, per: int) -> bool:
    dep = deployment_on_grid(score.layout, servers, per, A3, moe=True)
    for g in dep.groups["tp"]:
        devices = {(dep.sites[r].server, dep.sites[r].device) for r in g}
        for s, d in devices:
            if (s, d ^ 1) not in devices and len(g) > 1:
                return False
    return True


def test_a3_layouts_respect_die_pairs():
    topo = compile_file(str(EXAMPLES / "a3-2node-dp2-tp16.rtc")).topology
    c = cluster_of(topo, topo.jobs[0])
    assert (c.servers, c.npus_per_server, c.super_pod_servers) == (2, 16, 2)
    ranking = rank_layouts(c.servers, c.npus_per_server, c.hardware, DSV3,
                           Workload(decode_seqs=64), NOM, options=c.options, max_pp=2)
    assert ranking.scores and all(_tp_groups_keep_die_pairs(s, 2, 16) for s in ranking.scores)
    tp2 = next(s for s in ranking.scores if s.layout.tp == 2)
    assert tp2.step.rows[0].span == "intra-package" and tp2.step.rows[0].bottleneck == "sio-a3"
    toy = ModelSpec("toy", 3072, 4, 48, num_kv_heads=48)
    odd = rank_layouts(3, 16, A3, toy, Workload(decode_seqs=48), NOM, max_pp=1)
    reasons = {r.layout.tp: r.reason for r in odd.rejected}
    assert reasons[3] == "TP 3 is odd: its groups would split A3 die pairs"
    assert reasons[6] == ("a DP replica of 6 ranks neither fills whole servers of 16 NPUs "
                          "nor divides one")
    assert {s.layout.tp for s in odd.scores} == {1, 2, 4, 8, 16, 48}


def test_a3_tp_inside_a_super_pod_ranks_above_tp_across_pods():
    ranking = rank_layouts(4, 16, A3, DSV3, Workload(decode_seqs=64), NOM,
                           super_pod_servers=2, max_pp=1)
    inside = ranking.index(Layout(dp=2, tp=32, expert_parallel=True))
    server = ranking.index(Layout(dp=4, tp=16, expert_parallel=True))
    across = ranking.index(Layout(tp=64, expert_parallel=True))
    assert server < inside < across
    row = ranking.scores[across].step.rows[0]
    assert row.span == "cross-superpod"
    assert [st.link for st in row.cost.stages if st.label.startswith("cluster")] == ["roce-200ge"]
    # most of the call is the 16-die rings inside each server (15 alpha steps each way)
    assert row.bottleneck == "hccs-a3"
    assert ranking.scores[inside].step.rows[0].span == "intra-superpod"


def test_hccs_inter_disable_moves_cross_server_tp_down():
    off = hardware_of(presets()["atlas-800-a3"], env={"HCCL_INTER_HCCS_DISABLE": "TRUE"})
    on_ub = rank_layouts(2, 16, A3, DSV3, Workload(decode_seqs=64), NOM, max_pp=1)
    on_roce = rank_layouts(2, 16, off, DSV3, Workload(decode_seqs=64), NOM, max_pp=1)
    lay = Layout(tp=32, expert_parallel=True)
    ub, roce = on_ub.scores[on_ub.index(lay)], on_roce.scores[on_roce.index(lay)]
    assert roce.per_token > ub.per_token
    def cross(score):
        return {st.link for st in score.step.rows[0].cost.stages} - {"hccs-a3", "sio-a3"}
    assert cross(roce) == {"roce-200ge"} and cross(ub) == {"ub-a3"}


def test_ranking_is_a_pure_function_of_its_inputs():
    a = rank_layouts(2, 8, A2, DSV3, Workload(decode_seqs=64), NOM, phase="prefill",
                     total_load=4096)
    b = rank_layouts(2, 8, A2, DSV3, Workload(decode_seqs=64, prefill_tokens=4096), NOM,
                     phase="prefill")
    assert [(s.layout, s.per_token) for s in a.scores] == \
        [(s.layout, s.per_token) for s in b.scores]
    dp2 = a.scores[a.index(Layout(dp=2, tp=8, expert_parallel=True))]
    assert dp2.step.tokens == 2048 and dp2.step.phase == "prefill"
    assert group_span(range(8), deployment_on_grid(Layout(tp=8), 2, 8, A2).sites,
                      A2).span == "intra-server"


def test_text_tables():
    from rtc.cost.schedule import schedule
    from rtc.report.cost_tables import ranking_table, step_table
    dep = deployment_on_grid(Layout(dp=2, tp=8, expert_parallel=True), 2, 8, A2)
    text = step_table(schedule(dep, DSV3, Workload(decode_seqs=32), NOM))
    lines = text.splitlines()
    assert lines[0] == ("rtc cost (decode, DeepSeek-V3, DP2 x TP8 + EP, MoE MC2, params "
                        "nominal, 32 tokens per DP rank)")
    assert lines[1].split()[:4] == ["kind", "op", "groups", "ranks"]
    assert "30.1 us (26 us + 4.1 us)" in lines[2] and lines[2].startswith("tp    AllReduce")
    assert "total per step 10.7 ms; per generated token 167 us (64 tokens per step)" in lines
    assert lines[-1].startswith("limits: communication only")
    ranking = rank_layouts(2, 8, A2, DSV3, Workload(decode_seqs=64), NOM)
    table = ranking_table(ranking, limit=3).splitlines()
    assert table[0].split()[:3] == ["#", "layout", "per"] and table[1].split()[:4] == ["1", "PP16", "x", "TP1"]
    assert "94%" in table[1] and table[4] == f"... {len(ranking.scores) - 3} more"
    assert ranking.scores[0].bubble == pytest.approx(15 / 16)
