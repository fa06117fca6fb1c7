"""rtc.cost collectives: every formula and algorithm against hand-computed values, HCCL's
algorithm choice, HCCL_ALGO, and properties (hypothesis).

Expected values are computed here from each formula's definition with round
parameters (HCCS α 10 µs, 10 GB/s; RoCE α 100 µs, 5 GB/s), not by calling the code
under test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtc.cost import formulas as f
from rtc.cost.collectives import (COLLECTIVES, allgather, allreduce, alltoall, broadcast,
                                  collective, mesh_beta, moe_exchange, reduce_scatter,
                                  send_recv)
from rtc.cost.errors import HcclAlgoError
from rtc.cost.hccl_algo import (choose_inter, cost_rule, count_rule, hccl_options,
                                parse_hccl_algo)
from rtc.cost.links import Site, hardware_of
from rtc.cost.params import apply_overrides, load_params
from rtc.cost.spans import group_span
from rtc.model.presets import presets

US = 1e-6
ROUND = apply_overrides(load_params("nominal"), [
    "hccs.alpha=10us", "hccs.bandwidth=10GB/s", "roce.alpha=100us", "roce.bandwidth=5GB/s",
    "sio.alpha=10us", "xring.alpha=10us", "xring.bandwidth=5GB/s"])
B_HCCS, B_ROCE = 1 / 10e9, 1 / 5e9          # seconds per byte
A_HCCS, A_ROCE = 10 * US, 100 * US

A2 = hardware_of(presets()["atlas-800t-a2"])
A3 = hardware_of(presets()["atlas-800-a3"])
A910 = hardware_of(presets()["atlas-800-910a"])


def grid(hw, servers: int, per_server: int, pod_size: int | None = None):
    pod = (lambda s: str(s // pod_size)) if pod_size else (lambda s: None)
    return [Site(r // per_server, r % per_server, pod(r // per_server))
            for r in range(servers * per_server)]


def span_of(hw, servers, per_server, pod_size=None, ranks=None):
    sites = grid(hw, servers, per_server, pod_size)
    return group_span(ranks if ranks is not None else range(len(sites)), sites, hw)


# --------------------------------------------------------------------------- formulas
# p = 4, n = 1000 B, α = 1 s, β = 0.01 s/B, γ = 0.001 s/B

def test_ring_and_log_formulas():
    assert f.ring_allgather(4, 1000, 1, 0.01) == f.Terms(3, 3, 7.5)
    t = f.ring_reduce_scatter(4, 1000, 1, 0.01, 0.001)
    assert (t.alpha, t.beta, t.gamma) == pytest.approx((3, 7.5, 0.75))
    t = f.ring_allreduce(4, 1000, 1, 0.01, 0.001)
    assert (t.steps, t.alpha, t.beta, t.gamma) == pytest.approx((6, 6, 15, 0.75))
    t = f.log_allgather(5, 1000, 1, 0.01)
    assert (t.steps, t.alpha, t.beta) == pytest.approx((3, 3, 8))
    t = f.log_reduce_scatter(4, 1000, 1, 0.01, 0.001)
    assert (t.alpha, t.beta, t.gamma) == pytest.approx((2, 7.5, 0.75))


def test_allreduce_formulas():
    t = f.rhd_allreduce(4, 1000, 1, 0.01, 0.001)
    assert (t.steps, t.alpha, t.beta, t.gamma) == pytest.approx((4, 4, 15, 0.75))
    # p = 6: p' = 4, (2*2+2) steps, (2*3/4 + 2) n beta, (3/4 + 1) n gamma
    t = f.rhd_allreduce(6, 1000, 1, 0.01, 0.001)
    assert (t.steps, t.alpha, t.beta, t.gamma) == pytest.approx((6, 6, 35, 1.75))
    t = f.nhr_allreduce(5, 1000, 1, 0.01, 0.001)
    assert (t.steps, t.alpha, t.beta, t.gamma) == pytest.approx((6, 6, 16, 0.8))
    t = f.mesh_allreduce(4, 1000, 1, 0.01, 0.001)
    assert (t.steps, t.alpha, t.beta, t.gamma) == pytest.approx((2, 2, 5, 0.75))
    assert f.mesh_allgather(4, 1000, 1, 0.01).seconds == pytest.approx(3.5)
    assert f.mesh_reduce_scatter(4, 1000, 1, 0.01, 0.001).seconds == pytest.approx(4.25)


def test_broadcast_alltoall_p2p_formulas():
    assert f.binomial_broadcast(5, 1000, 1, 0.01).seconds == pytest.approx(3 * (1 + 10))
    assert f.scatter_allgather_broadcast(4, 1000, 1, 0.01).seconds == pytest.approx(5 + 15)
    assert f.ring_broadcast(4, 1000, 1, 0.01).seconds == pytest.approx(3 * 11)
    assert f.mesh_broadcast(4, 1000, 1, 0.01).seconds == pytest.approx(2 + 5)
    assert f.pairwise_alltoall(4, 1000, 1, 0.01).seconds == pytest.approx(3 + 7.5)
    assert f.mesh_alltoall(4, 1000, 1, 0.01).seconds == pytest.approx(1 + 2.5)
    assert f.bruck_alltoall(4, 1000, 1, 0.01).seconds == pytest.approx(2 + 500 * 2 * 0.01)
    assert f.send_recv(1000, 1, 0.01).seconds == pytest.approx(11)


def test_pipeline_formula():
    # 4 cards x 2 servers, s = 8000 B: chunk 1000; inter 1000*0.02+5 = 25 > intra 11
    t = f.pipeline_reduce_scatter(4, 2, 8000, 1, 0.01, 5, 0.02)
    assert (t.alpha, t.beta, t.seconds) == pytest.approx((6, 30, 36))
    assert f.pipeline_allreduce(4, 2, 8000, 1, 0.01, 5, 0.02).seconds == pytest.approx(72)


# --------------------------------------------------------------------------- A2 (910B)

def test_a2_one_server_mesh():
    span = span_of(A2, 1, 8)
    n = 8e6
    ar = allreduce(n, span, ROUND)
    assert ar.algorithm == "mesh AR"
    assert ar.seconds == pytest.approx(2 * A_HCCS + 2 / 8 * n * B_HCCS)       # 220 us
    assert (ar.alpha, ar.beta) == pytest.approx((20 * US, 200 * US))
    assert allgather(n, span, ROUND).seconds == pytest.approx(A_HCCS + n / 8 * B_HCCS)
    assert reduce_scatter(n, span, ROUND).seconds == pytest.approx(A_HCCS + n / 8 * B_HCCS)
    assert broadcast(n, span, ROUND).seconds == pytest.approx(2 * A_HCCS + 2 / 8 * n * B_HCCS)
    assert alltoall(n, span, ROUND).seconds == pytest.approx(A_HCCS + n / 8 * B_HCCS)


def test_a2_two_servers_hierarchical_allreduce():
    span = span_of(A2, 2, 8)
    n = 8e6            # slice n/16 = 0.5 MB < 1 MiB: no Pipeline; m = 2: Ring
    ar = allreduce(n, span, ROUND)
    assert ar.algorithm == "mesh RS | ring AR | mesh AG"
    rs = A_HCCS + n / 8 * B_HCCS                                  # 110 us
    inter = 2 * (2 - 1) * A_ROCE + 2 * (1 / 2) * (n / 8) * B_ROCE   # 400 us
    assert [s.seconds for s in ar.stages] == pytest.approx([rs, inter, rs])
    assert [s.link for s in ar.stages] == ["hccs-910b", "roce-200ge", "hccs-910b"]
    assert ar.stages[1].nbytes == n / 8
    assert ar.seconds == pytest.approx(620 * US)


def test_a2_pipeline_for_large_messages_and_not_with_aiv():
    span = span_of(A2, 2, 8)
    n = 32e6           # slice 2 MB >= 1 MiB
    ar = allreduce(n, span, ROUND)
    assert ar.algorithm == "pipeline"
    chunk = n / 16
    rs = max(chunk * B_ROCE + A_ROCE, chunk * B_HCCS + A_HCCS) + chunk * B_HCCS + A_HCCS
    assert ar.seconds == pytest.approx(2 * rs)                 # 1420 us
    aiv = allreduce(n, span, ROUND, hccl_options({"HCCL_OP_EXPANSION_MODE": "AIV"}))
    assert aiv.algorithm == "mesh RS | ring AR | mesh AG"
    expect = 2 * (A_HCCS + n / 8 * B_HCCS) + 2 * A_ROCE + (n / 8) * B_ROCE
    assert aiv.seconds == pytest.approx(expect)                # 1820 us
    ag = allgather(n, span, ROUND)       # RS/AG Pipeline from 32 KB per rank
    assert ag.algorithm == "pipeline" and ag.seconds == pytest.approx(rs)


def test_a2_cost_rule_picks_nhr_on_four_servers():
    span = span_of(A2, 4, 8)
    n = 8e5
    ar = allreduce(n, span, ROUND)
    assert ar.algorithm == "mesh RS | nhr AR | mesh AG"
    inter = 2 * 2 * A_ROCE + 2 * (3 / 4) * (n / 8) * B_ROCE
    assert ar.seconds == pytest.approx(2 * (A_HCCS + n / 8 * B_HCCS) + inter)


def test_hccl_algo_forces_rhd_on_three_servers():
    span = span_of(A2, 3, 8)
    n = 24e6
    opts = hccl_options({"HCCL_ALGO": "level0:NA;level1:H-D_R"})
    ar = allreduce(n, span, ROUND, opts)
    assert ar.algorithm == "mesh RS | rhd AR | mesh AG"
    m = n / 8          # p = 3 is not a power of two: p' = 2
    inter = (2 * 1 + 2) * A_ROCE + (2 * (1 / 2) + 2) * m * B_ROCE
    assert ar.stages[1].seconds == pytest.approx(inter)
    assert ar.seconds == pytest.approx(2 * (A_HCCS + n / 8 * B_HCCS) + inter)
    assert any("HCCL_ALGO" in note for note in ar.notes)
    ring = allreduce(n, span, ROUND, hccl_options(algo="allreduce=level0:NA;level1:ring"))
    assert ring.stages[1].seconds == pytest.approx(4 * A_ROCE + 2 * (2 / 3) * m * B_ROCE)


def test_a2_alltoall_broadcast_send_recv_across_servers():
    span = span_of(A2, 2, 8)
    n = 16e6
    a2a = alltoall(n, span, ROUND)
    assert a2a.algorithm == "mesh A2A | pairwise A2A"
    assert a2a.seconds == pytest.approx(A_HCCS + n / 8 * B_HCCS + A_ROCE + n / 2 * B_ROCE)
    bc = broadcast(1e6, span, ROUND)
    assert bc.algorithm == "ring BC | mesh BC"
    assert bc.seconds == pytest.approx(A_ROCE + 1e6 * B_ROCE + 2 * A_HCCS + 2 / 8 * 1e6 * B_HCCS)
    pair = group_span([0, 8], grid(A2, 2, 8), A2)
    p2p = send_recv(1e6, pair, ROUND)
    assert p2p.seconds == pytest.approx(A_ROCE + 1e6 * B_ROCE) and p2p.link == "roce-200ge"


def test_gamma_part_of_reductions():
    p = apply_overrides(ROUND, ["reduce.bandwidth=1GB/s"])
    ar = allreduce(8e6, span_of(A2, 1, 8), p)
    assert ar.gamma == pytest.approx(7 / 8 * 8e6 * 1e-9)
    assert allgather(8e6, span_of(A2, 1, 8), p).gamma == 0.0


# --------------------------------------------------------------------------- 910A, A3

def test_910a_mesh_hd_and_four_rings():
    four = span_of(A910, 1, 8, ranks=range(4))
    big = allreduce(2e6, four, ROUND)
    assert big.algorithm == "mesh AR"
    assert big.seconds == pytest.approx(2 * A_HCCS + 2 / 4 * 2e6 * B_HCCS)
    small = allreduce(1e6, four, ROUND)                      # <= 1 MB: HD
    assert small.algorithm == "rhd AR"
    assert small.seconds == pytest.approx(4 * A_HCCS + 2 * 3 / 4 * 1e6 * B_HCCS)
    eight = allreduce(8e6, span_of(A910, 1, 8), ROUND)       # four rings, xring hop slowest
    assert eight.algorithm == "ring AR" and eight.stages[0].link == "xring-910a"
    assert eight.seconds == pytest.approx(14 * A_HCCS + 2 * 7 / 8 * (8e6 / 4) * (1 / 5e9))


def test_a3_double_ring_and_small_count_mesh():
    one = span_of(A3, 1, 16, pod_size=1)
    n = 16e6             # > 512 KB x 16: double ring, half the data per ring
    ar = allreduce(n, one, ROUND)
    assert ar.algorithm == "double-ring AR"
    assert ar.seconds == pytest.approx(30 * A_HCCS + 2 * 15 / 16 * (n / 2) * B_HCCS)
    small = allreduce(1e6, one, ROUND)
    # mesh: SIO peer on its own link, 14 peers share the die's UB port (nominal share=port)
    port = 14 * B_HCCS
    assert small.algorithm == "mesh AR"
    assert mesh_beta((("hccs-a3", 14), ("sio-a3", 1)), ROUND) == pytest.approx(port)
    assert small.seconds == pytest.approx(2 * A_HCCS + 2 / 16 * 1e6 * port)


def test_a3_aiv_mesh_across_a_super_pod_and_fullmesh_alltoall():
    pod = span_of(A3, 2, 16, pod_size=2)
    aiv = hccl_options({"HCCL_OP_EXPANSION_MODE": "AIV"})
    ar = allreduce(1e6, pod, ROUND, aiv)
    a_ub = 14 * US            # ub-a3 alpha (nominal), the largest of the peers
    port = 30 * B_HCCS        # 14 hccs-a3 + 16 ub-a3 peers on the die's UB port
    assert ar.algorithm == "mesh-aiv"
    assert ar.seconds == pytest.approx(2 * a_ub + 2 / 32 * 1e6 * port)
    a2a = alltoall(3.2e6, pod, ROUND)
    assert a2a.algorithm == "fullmesh"
    assert a2a.seconds == pytest.approx(a_ub + 3.2e6 / 32 * port)
    big = allreduce(16e6, pod, ROUND, aiv)       # >= 8 MB: hierarchical, A3 level 1 NHR
    assert big.algorithm == "double-ring RS | nhr AR | double-ring AG"


def test_moe_exchange_uses_nic_port_for_off_server_bytes():
    ep = span_of(A2, 2, 8)
    n = 1.6e6
    b = max(B_HCCS, 8 * B_ROCE)                  # 8 off-server peers share the NIC
    d = moe_exchange("dispatch", n, ep, ROUND)
    assert d.seconds == pytest.approx(A_ROCE + n / 16 * b)            # 260 us
    skew = moe_exchange("combine", n, ep, ROUND, imbalance=1.5)
    assert skew.seconds == pytest.approx(A_ROCE + 1.5 * n / 16 * b)
    with pytest.raises(ValueError, match="imbalance"):
        moe_exchange("combine", n, ep, ROUND, imbalance=0.5)


def test_single_rank_costs_nothing_and_unknown_ops_fail():
    lone = span_of(A2, 1, 8, ranks=[3])
    assert [name for name, _ in COLLECTIVES] == ["allreduce", "allgather", "reduce_scatter",
                                                 "broadcast", "alltoall", "send_recv"]
    for name, fn in COLLECTIVES:
        assert fn(1e6, lone, ROUND).seconds == 0.0, name
    with pytest.raises(ValueError, match="unknown collective 'gather'"):
        collective("gather", 1.0, lone, ROUND)


# --------------------------------------------------------------------------- HCCL's rules

def test_cost_rule_and_count_rule():
    a, bw = 60 * US, 20e9
    assert cost_rule("allreduce", 2, 8, 1e6, a, bw) == "ring"         # all tie: Ring
    assert cost_rule("allreduce", 4, 8, 1e6, a, bw) == "nhr"          # HD ties NHR: NHR
    assert cost_rule("allgather", 5, 8, 1e6, a, bw) == "nhr"
    assert cost_rule("broadcast", 4, 8, 1e3, a, bw) == "rhd"          # no NHR for Broadcast
    assert count_rule("910a", 3, 1) == "ring" and count_rule("910a", 4, 1) == "rhd"
    assert count_rule("a3", 3, 1) == "ring" and count_rule("a3", 4, 1) == "nhr"
    assert count_rule("a3", 9, 1) == "nhr" and count_rule("910b", 12, 1) == "rhd"
    assert count_rule("a3", 3, 2) == "ring" and count_rule("a3", 2, 2) == "rhd"
    assert count_rule("a3", 12, 2) == "rhd"
    assert choose_inter("alltoall", "910b", 1, 2, 8, 1e6, a, bw)[0] == "pairwise"
    assert choose_inter("alltoall", "a3", 1, 2, 8, 1e6, a, bw)[0] == "fullmesh"


def test_parse_hccl_algo():
    assert parse_hccl_algo("level0:NA;level1:NHR;level2:ring") == {"*": ("nhr", "ring")}
    got = parse_hccl_algo('"allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise"')
    assert got == {"allreduce": ("ring", None), "alltoall": ("pairwise", None)}
    assert parse_hccl_algo("") == {}
    opts = hccl_options({"HCCL_ALGO": "reducescatter=level0:NA;level1:NB"})
    assert opts.forced("reduce_scatter", 1) == "nb" and opts.forced("allreduce", 1) is None


@pytest.mark.parametrize("text, needle", [
    ("level0:NA;level1:fastest", "unknown level1 algorithm 'fastest'"),
    ("level0:ring;level1:ring", "level0 must be NA"),
    ("gather=level0:NA;level1:ring", "unknown operator 'gather'"),
    ("level1=ring", "unknown operator 'level1'"),
    ("level0:NA;level1", "'level1' is not levelN:<algo>"),
])
def test_bad_hccl_algo_values(text, needle):
    with pytest.raises(HcclAlgoError) as e:
        parse_hccl_algo(text)
    assert needle in str(e.value) and "level0:NA;level1:<algo>" in str(e.value)


# --------------------------------------------------------------------------- properties

OPS = ("allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast")
PARAMS = (load_params("nominal"), load_params("hccl-plan"))
GENERIC = hardware_of(presets()["generic"], devices_per_server=8)
# Known exceptions, not tested (reported): (1) under hccl-plan, RDMA plans 20 GB/s and one
# HCCS link 18.3 GB/s, so a 2-rank AllReduce of >= ~20 MB comes out faster across two
# servers than inside one; (2) on 910A (8P: four rings, 14 alpha steps) and A3 (double
# ring, 2(p-1) steps) a one-server ring has more alpha steps than the hierarchical form of
# the same group split over two servers, so small messages can come out cheaper split.


@settings(max_examples=50, deadline=None)
@given(op=st.sampled_from(OPS), per=st.sampled_from([2, 4, 8]), servers=st.sampled_from([1, 2, 4]),
       n=st.floats(1e3, 1e9), factor=st.floats(1.01, 10.0), which=st.sampled_from([0, 1]))
def test_time_grows_with_bytes(op, per, servers, n, factor, which):
    # for one algorithm; HCCL's size thresholds can switch to a faster one for the larger
    # message (e.g. Pipeline from 16 MiB on A2 servers of several cards, GetDefaultAlgoLevel1V2)
    span = span_of(A2, servers, per)
    p = PARAMS[which]
    small, large = collective(op, n, span, p), collective(op, n * factor, span, p)
    if small.algorithm == large.algorithm:
        assert large.seconds >= small.seconds


@settings(max_examples=50, deadline=None)
@given(op=st.sampled_from(OPS), half=st.sampled_from([1, 2, 3, 4]), n=st.floats(1e3, 1e9),
       hw=st.sampled_from([A2, GENERIC]))
def test_moving_a_group_from_one_server_to_two_never_lowers_its_time(op, half, n, hw):
    p = PARAMS[0]
    one = group_span(range(2 * half), grid(hw, 1, 8), hw)
    sites = grid(hw, 2, 8)
    two = group_span(list(range(half)) + list(range(8, 8 + half)), sites, hw)
    assert two.servers == 2
    assert collective(op, n, two, p).seconds >= collective(op, n, one, p).seconds


@settings(max_examples=50, deadline=None)
@given(servers=st.sampled_from([2, 3, 4, 8]), per=st.sampled_from([2, 4, 8]),
       n=st.floats(1e3, 1e9), algo=st.sampled_from(["ring", "NHR", "H-D_R", "NB"]))
def test_hierarchical_allreduce_is_the_sum_of_its_stages(servers, per, n, algo):
    opts = hccl_options(algo=f"level0:NA;level1:{algo}")
    sites = grid(A2, servers, per)
    whole = allreduce(n, group_span(range(servers * per), sites, A2), ROUND, opts)
    intra = group_span(range(per), sites, A2)
    inter = group_span(range(0, servers * per, per), sites, A2)
    parts = (reduce_scatter(n, intra, ROUND, opts).seconds
             + allreduce(n / per, inter, ROUND, opts).seconds
             + allgather(n, intra, ROUND, opts).seconds)
    assert whole.seconds == pytest.approx(parts, rel=1e-12)
    assert whole.seconds == pytest.approx(sum(s.seconds for s in whole.stages), rel=1e-12)
    assert len(whole.stages) == 3


def test_alltoallv_imbalance_scales_the_busiest_ranks_bytes():
    span = span_of(A2, 2, 8)
    n = 16e6
    even = alltoall(n, span, ROUND)
    skew = alltoall(n, span, ROUND, imbalance=1.25)
    assert skew.alpha == pytest.approx(even.alpha) == pytest.approx(A_HCCS + A_ROCE)
    assert skew.beta == pytest.approx(1.25 * (n / 8 * B_HCCS + n / 2 * B_ROCE))
    with pytest.raises(ValueError, match="imbalance must be >= 1"):
        alltoall(n, span, ROUND, imbalance=0.8)


@pytest.mark.parametrize("nbytes", [-1, float("nan"), float("inf"), "1MB", True])
def test_bad_message_sizes_are_cost_input_errors(nbytes):
    from rtc.cost.collectives import allreduce
    from rtc.cost.errors import CostInputError

    span = span_of(A2, 1, 8)
    with pytest.raises(CostInputError, match="message size"):
        allreduce(nbytes, span, load_params("nominal"))


def test_a_layout_larger_than_the_grid_is_a_layout_error():
    from rtc.cost.deployment import Layout, deployment_on_grid
    from rtc.cost.errors import LayoutError

    with pytest.raises(LayoutError, match="needs 16 NPUs but 1 x 8 = 8"):
        deployment_on_grid(Layout(tp=16), 1, 8, A2)
