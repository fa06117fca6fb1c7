"""Worked examples and error cases for rtc.parallel.groups.

Expected values are written out literally, not recomputed with the module under test. They
follow the frameworks' own rank arithmetic and the examples in their docstrings and tests:
vLLM ``vllm/distributed/parallel_state.py`` ``initialize_model_parallel`` (vllm-project/vllm
@0c175ae9; TP fastest, the 8-GPU TP2 x PP4 docstring example); vllm-ascend
``tests/ut/distributed/test_parallel_state.py`` ``test_get_global_rank`` (@182b75ea);
Megatron-LM ``megatron/core/parallel_state.py`` ``generate_masked_orthogonal_rank_groups``,
``RankGenerator`` and ``initialize_model_parallel`` (NVIDIA/Megatron-LM @d98e8a64; first
token of the order string fastest).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from rtc.parallel import groups as G
from rtc.parallel.groups import (
    Coords,
    GroupSet,
    ParallelSizes,
    coords_of,
    dp_groups,
    ep_groups,
    global_rank,
    megatron_groups,
    megatron_masked_groups,
    pcp_groups,
    pp_groups,
    rank_of,
    tp_groups,
    vllm_groups,
)


def as_sets(groups):
    return {frozenset(g) for g in groups}


# --------------------------------------------------------------------------- vLLM


def test_dp2_pp2_tp2_moe_worked_example():
    gs = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, expert_parallel=True))
    assert list(gs.groups) == ["tp", "pcp", "pp", "dp", "ep"]
    assert gs.groups["tp"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert gs.groups["pcp"] == [[r] for r in range(8)]
    assert gs.groups["pp"] == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert gs.groups["dp"] == [[0, 4], [2, 6], [1, 5], [3, 7]]
    assert gs.groups["ep"] == [[0, 1, 4, 5], [2, 3, 6, 7]]
    assert gs.worlds == [list(range(8))]
    assert gs.independent_replicas is False
    assert gs.sizes.world_size == 8 and gs.sizes.replica_size == 4


def test_dp2_pp2_tp2_formula_per_rank():
    s = ParallelSizes(dp=2, pp=2, tp=2)
    # rank = dp*4 + pp*2 + tp
    assert [rank_of(s, Coords(dp=d, pp=p, pcp=0, tp=t)) for d in (0, 1) for p in (0, 1) for t in (0, 1)] == list(range(8))
    assert coords_of(s, 6) == Coords(dp=1, pp=1, pcp=0, tp=0)
    assert coords_of(s, 3) == Coords(dp=0, pp=1, pcp=0, tp=1)


def test_tp2_pp4_docstring_example():
    s = ParallelSizes(pp=4, tp=2)
    assert tp_groups(s) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert pp_groups(s) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_tp2_pcp2_example():
    s = ParallelSizes(pcp=2, tp=2)
    assert pcp_groups(s) == [[0, 2], [1, 3]]
    assert tp_groups(s) == [[0, 1], [2, 3]]
    # size-1 PP groups still follow vLLM's creation order (TP before PCP)
    assert pp_groups(s) == [[0], [2], [1], [3]]


def test_pp_groups_swap_pcp_and_tp_in_creation_order():
    # DP1 PP2 PCP2 TP2: PP groups iterate TP before PCP (PCP fastest).
    s = ParallelSizes(pp=2, pcp=2, tp=2)
    assert pp_groups(s) == [[0, 4], [2, 6], [1, 5], [3, 7]]
    assert pcp_groups(s) == [[0, 2], [1, 3], [4, 6], [5, 7]]


def test_dp_groups_iterate_tp_pp_pcp():
    # DP2 PP2 PCP2 TP2 (world 16): DP groups ordered by (tp, pp, pcp), pcp fastest.
    s = ParallelSizes(dp=2, pp=2, pcp=2, tp=2)
    assert dp_groups(s) == [
        [0, 8], [2, 10], [4, 12], [6, 14],
        [1, 9], [3, 11], [5, 13], [7, 15],
    ]
    assert ep_groups(s) == [[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]]


def test_vllm_ascend_get_global_rank_values():
    # tests/ut/distributed/test_parallel_state.py::test_get_global_rank
    assert global_rank(ParallelSizes(dp=2, tp=2, pp=2), 1, 1) == 5
    assert global_rank(ParallelSizes(dp=2, tp=2, pp=2, pcp=2), 1, 3) == 11
    # the same through the coordinate functions: local rank -> coords in a DP=1 replica
    local = coords_of(ParallelSizes(tp=2, pp=2, pcp=2), 3)
    assert local == Coords(dp=0, pp=0, pcp=1, tp=1)
    glob = Coords(dp=1, pp=local.pp, pcp=local.pcp, tp=local.tp)
    assert rank_of(ParallelSizes(dp=2, tp=2, pp=2, pcp=2), glob) == 11


def test_group_index_rank_in_group_and_group_of():
    gs = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, expert_parallel=True))
    assert gs.group_index("tp", 5) == 2
    assert gs.group_index("pp", 5) == 3
    assert gs.group_index("dp", 5) == 2
    assert gs.group_index("dp", 2) == 1
    assert gs.group_index("ep", 5) == 0
    assert gs.group_index("ep", 6) == 1
    assert gs.group_of("dp", 3) == [3, 7]
    assert gs.group_of("ep", 7) == [2, 3, 6, 7]
    assert gs.rank_in_group("ep", 4) == 2
    assert gs.rank_in_group("ep", 7) == 3
    assert gs.rank_in_group("dp", 7) == 1
    assert gs.rank_in_group("pp", 2) == 1


# --------------------------------------------------------------------------- dense vs MoE


def test_dense_replicas_are_independent_worlds():
    gs = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, moe=False, expert_parallel=True))
    assert list(gs.groups) == ["tp", "pcp", "pp"]
    assert gs.independent_replicas is True
    assert gs.worlds == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # per-replica groups in GLOBAL ranks, replica after replica
    assert gs.groups["tp"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert gs.groups["pp"] == [[0, 2], [1, 3], [4, 6], [5, 7]]
    for dim in ("dp", "ep"):
        with pytest.raises(ValueError, match="no '%s' groups" % dim):
            gs.group_index(dim, 0)


def test_dense_single_replica_is_not_independent():
    gs = vllm_groups(ParallelSizes(dp=1, tp=4, moe=False))
    assert gs.independent_replicas is False
    assert gs.worlds == [[0, 1, 2, 3]]
    assert list(gs.groups) == ["tp", "pcp", "pp"]


def test_moe_without_expert_parallel_has_dp_but_no_ep():
    gs = vllm_groups(ParallelSizes(dp=2, tp=2))
    assert list(gs.groups) == ["tp", "pcp", "pp", "dp"]
    assert gs.groups["dp"] == [[0, 2], [1, 3]]
    assert gs.independent_replicas is False
    assert gs.worlds == [[0, 1, 2, 3]]
    # the rank lists are still available directly
    assert ep_groups(gs.sizes) == [[0, 1, 2, 3]]


def test_moe_dp1_keeps_singleton_dp_groups():
    gs = vllm_groups(ParallelSizes(tp=2, expert_parallel=True))
    assert gs.groups["dp"] == [[0], [1]]
    assert gs.groups["ep"] == [[0, 1]]


# --------------------------------------------------------------------------- Megatron


def test_megatron_docstring_tp2_pp4_default_order():
    g = megatron_groups("tp-cp-ep-dp-pp", tp=2, pp=4, dp=2)
    assert g["dp"] == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9, 11], [12, 14], [13, 15]]
    assert g["tp"] == [[2 * i, 2 * i + 1] for i in range(8)]
    assert g["pp"] == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    assert g["cp"] == [[r] for r in range(16)]
    assert g["ep"] == [[r] for r in range(16)]
    assert list(g) == ["tp", "cp", "dp", "pp", "ep"]


def test_megatron_tp4_cp2_world8():
    g = megatron_groups("tp-cp-ep-dp-pp", tp=4, cp=2)
    assert g["cp"] == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert g["tp"] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_megatron_world16_tp2_pp2_dp_before_pp():
    kw = dict(tp=2, pp=2, dp=4)
    g = megatron_groups("tp-cp-ep-dp-pp", **kw)
    assert g["tp"] == [[2 * i, 2 * i + 1] for i in range(8)]
    assert g["dp"] == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
    assert g["pp"] == [[i, i + 8] for i in range(8)]
    assert megatron_masked_groups("tp-cp-ep-dp-pp", "tp-pp", **kw) == [
        [0, 1, 8, 9], [2, 3, 10, 11], [4, 5, 12, 13], [6, 7, 14, 15],
    ]


def test_megatron_world16_tp2_pp2_pp_before_dp():
    g = megatron_groups("tp-cp-ep-pp-dp", tp=2, pp=2, dp=4)
    assert g["pp"] == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9, 11], [12, 14], [13, 15]]
    assert g["dp"] == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    assert g["tp"] == megatron_groups("tp-cp-ep-dp-pp", tp=2, pp=2, dp=4)["tp"]


def test_megatron_world16_tp2_cp2_pp2():
    kw = dict(tp=2, cp=2, pp=2, dp=2)
    g = megatron_groups("tp-cp-ep-dp-pp", **kw)
    assert g["cp"][:4] == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert g["dp"] == [[0, 4], [1, 5], [2, 6], [3, 7], [8, 12], [9, 13], [10, 14], [11, 15]]
    dp_cp = megatron_masked_groups("tp-cp-ep-dp-pp", "dp-cp", **kw)
    assert dp_cp == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
    # mask token order does not matter
    assert megatron_masked_groups("tp-cp-ep-dp-pp", "cp-dp", **kw) == dp_cp


def test_megatron_expert_generator_examples():
    # expert generator: world 16, ETP1, EP4 -> EDP4
    g = megatron_groups("tp-cp-ep-dp-pp", tp=1, ep=4, dp=4)
    assert g["ep"] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert g["tp"] == [[r] for r in range(16)]
    assert g["dp"] == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    # dense generator of the same job: TP2 -> DP8
    dense = megatron_groups("tp-cp-ep-dp-pp", tp=2, dp=8)
    assert dense["dp"] == [list(range(0, 16, 2)), list(range(1, 16, 2))]
    # ETP = 2, EP2 -> EDP 4: EP strided by ETP
    g2 = megatron_groups("tp-cp-ep-dp-pp", tp=2, ep=2, dp=4)
    assert g2["ep"][:3] == [[0, 2], [1, 3], [4, 6]]
    assert megatron_masked_groups("tp-cp-ep-dp-pp", "tp-ep", tp=2, ep=2, dp=4)[:2] == [
        [0, 1, 2, 3], [4, 5, 6, 7],
    ]


def test_megatron_generate_masked_docstring_examples():
    g = megatron_groups("tp-dp-pp", tp=2, dp=3, pp=4)
    assert g["dp"][0] == [0, 2, 4]
    assert g["dp"][1] == [1, 3, 5]
    assert g["dp"][7] == [19, 21, 23]
    assert len(g["dp"]) == 8
    assert megatron_groups("tp-pp-dp", tp=2, pp=2, dp=2)["dp"] == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_megatron_missing_size1_axes_are_appended():
    assert megatron_groups("tp-dp", tp=2, dp=2) == megatron_groups("tp-cp-ep-dp-pp", tp=2, dp=2)
    assert megatron_groups("dp", dp=3)["dp"] == [[0, 1, 2]]
    assert megatron_groups("TP-DP", tp=2, dp=2)["dp"] == [[0, 2], [1, 3]]


def test_hypercommgrid_example_equals_vllm_layout():
    # HyperCommGrid([2,3,4,5], ["tp","cp","pp","dp"]) on 120 ranks
    mg = megatron_groups("tp-cp-pp-dp", tp=2, cp=3, pp=4, dp=5)
    gs = vllm_groups(ParallelSizes(dp=5, pp=4, pcp=3, tp=2, expert_parallel=True))
    assert as_sets(mg["tp"]) == as_sets(gs.groups["tp"])
    assert as_sets(mg["cp"]) == as_sets(gs.groups["pcp"])
    assert as_sets(mg["pp"]) == as_sets(gs.groups["pp"])
    assert as_sets(mg["dp"]) == as_sets(gs.groups["dp"])
    ep = megatron_masked_groups("tp-cp-pp-dp", "tp-cp-dp", tp=2, cp=3, pp=4, dp=5)
    assert ep == gs.groups["ep"]  # same order too: one group per PP stage, ascending
    # vLLM's creation order of PP groups differs from Megatron's enumeration
    assert mg["pp"] != gs.groups["pp"]


def test_vllm_layout_is_not_megatron_default_order():
    gs = vllm_groups(ParallelSizes(dp=4, pp=2, tp=2))
    default = megatron_groups("tp-cp-ep-dp-pp", tp=2, pp=2, dp=4)
    assert as_sets(default["pp"]) != as_sets(gs.groups["pp"])
    vllm_like = megatron_groups("tp-cp-pp-dp", tp=2, pp=2, dp=4)
    assert as_sets(vllm_like["pp"]) == as_sets(gs.groups["pp"])


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("field", ["dp", "pp", "pcp", "tp"])
@pytest.mark.parametrize("value", [0, -1])
def test_sizes_below_one_raise_naming_field(field, value):
    with pytest.raises(ValueError, match=rf"^{field} must be >= 1, got {value}$"):
        ParallelSizes(**{field: value})


@pytest.mark.parametrize("value", [2.0, "2", True, None])
def test_sizes_must_be_ints(value):
    with pytest.raises(TypeError, match="tp must be an int"):
        ParallelSizes(tp=value)


def test_flags_must_be_bools():
    with pytest.raises(TypeError, match="moe"):
        ParallelSizes(moe=1)
    with pytest.raises(TypeError, match="expert_parallel"):
        ParallelSizes(expert_parallel="yes")


@pytest.mark.parametrize("rank", [-1, 8, 100])
def test_rank_outside_world(rank):
    s = ParallelSizes(dp=2, pp=2, tp=2)
    with pytest.raises(ValueError, match=r"outside the world \[0, 8\)"):
        coords_of(s, rank)
    gs = vllm_groups(s)
    with pytest.raises(ValueError, match="outside the world"):
        gs.group_index("tp", rank)


def test_rank_of_rejects_out_of_range_coordinates():
    s = ParallelSizes(dp=2, pp=2, tp=2)
    with pytest.raises(ValueError, match=r"coordinate tp=2 is outside \[0, 2\)"):
        rank_of(s, Coords(dp=0, pp=0, pcp=0, tp=2))
    with pytest.raises(ValueError, match=r"coordinate pcp=1 is outside \[0, 1\)"):
        rank_of(s, Coords(dp=0, pp=0, pcp=1, tp=0))
    with pytest.raises(ValueError, match="coordinate dp=-1"):
        rank_of(s, Coords(dp=-1, pp=0, pcp=0, tp=0))


def test_global_rank_range_checks():
    s = ParallelSizes(dp=2, tp=2)
    with pytest.raises(ValueError, match="dp_index=2"):
        global_rank(s, 2, 0)
    with pytest.raises(ValueError, match="local_rank=2"):
        global_rank(s, 0, 2)


def test_group_index_unknown_dim():
    gs = vllm_groups(ParallelSizes(dp=2, tp=2))
    with pytest.raises(ValueError, match="unknown group kind 'cp'"):
        gs.group_index("cp", 0)
    with pytest.raises(ValueError, match="no 'ep' groups"):
        gs.group_index("ep", 0)


@pytest.mark.parametrize(
    "order, message",
    [
        ("tp-xx-dp", "unknown token 'xx'"),
        ("tp--dp", "empty token"),
        ("", "empty token"),
        ("tp-dp-tp", "repeats a token"),
        ("tp,dp,pp", "unknown token"),
    ],
)
def test_bad_order_strings(order, message):
    with pytest.raises(ValueError, match=message):
        megatron_groups(order, tp=2, dp=2)


def test_order_missing_axis_with_size_above_one():
    with pytest.raises(
        ValueError, match=r"the size of \(pp\) is \(2\), but you haven't specified the order"
    ):
        megatron_groups("tp-dp", tp=2, dp=2, pp=2)


def test_megatron_ep_and_cp_both_above_one():
    with pytest.raises(ValueError, match="ep and cp cannot both be > 1"):
        megatron_groups("tp-cp-ep-dp-pp", cp=2, ep=2)


def test_megatron_bad_sizes_and_masks():
    with pytest.raises(ValueError, match="dp must be >= 1"):
        megatron_groups("tp-dp", dp=0)
    with pytest.raises(TypeError, match="order must be a str"):
        megatron_groups(None, tp=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown token 'mp'"):
        megatron_masked_groups("tp-dp", "mp", tp=2)
    with pytest.raises(ValueError, match="repeats"):
        megatron_masked_groups("tp-dp", "tp-tp", tp=2)


# --------------------------------------------------------------------------- misc


def test_package_exports():
    import rtc.parallel as P

    for name in G.__all__:
        assert getattr(P, name) is getattr(G, name)
    assert isinstance(vllm_groups(ParallelSizes()), GroupSet)


def test_no_numpy_or_torch_import():
    code = (
        "import sys, rtc.parallel.groups; "
        "bad = [m for m in ('numpy', 'torch') if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_65536_rank_world_groups():
    # Speed is measured in benchmarks/, not asserted here.
    s = ParallelSizes(dp=4096, tp=16, expert_parallel=True)
    gs = vllm_groups(s)
    assert len(gs.groups["tp"]) == 4096 and len(gs.groups["dp"]) == 16
    assert gs.groups["ep"] == [list(range(65536))]
    assert gs.groups["dp"][3] == list(range(3, 65536, 16))
