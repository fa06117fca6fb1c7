"""Property tests for rtc.parallel.groups.

Expected groups are derived here independently of the module: from the coordinate
formula ``rank = ((dp*PP + pp)*PCP + pcp)*TP + tp`` with explicit nested loops in
vLLM's creation order, and from a small pure-Python model of
``arange(world).reshape(shape).transpose(a, b).reshape(-1, size)``.
"""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rtc.parallel.groups import (
    Coords,
    ParallelSizes,
    coords_of,
    ep_groups,
    megatron_groups,
    megatron_masked_groups,
    rank_of,
    vllm_groups,
)

MAX_WORLD = 4096
AXES = ("dp", "pp", "pcp", "tp")

SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def parallel_sizes(draw, max_world: int = MAX_WORLD):
    """DP, PP, PCP, TP with product <= max_world; axes filled in a random order so no
    axis is favoured, each drawn small (1..8) or anywhere up to the remaining budget."""
    values = {}
    budget = max_world
    for axis in draw(st.permutations(AXES)):
        value = draw(st.one_of(st.integers(1, min(8, budget)), st.integers(1, budget)))
        values[axis] = value
        budget //= value
    world = values["dp"] * values["pp"] * values["pcp"] * values["tp"]
    assume(world <= max_world)
    return ParallelSizes(
        **values,
        expert_parallel=draw(st.booleans()),
        moe=draw(st.booleans()),
    )


def moe_ep(s: ParallelSizes) -> ParallelSizes:
    return ParallelSizes(dp=s.dp, pp=s.pp, pcp=s.pcp, tp=s.tp, expert_parallel=True, moe=True)


def formula(s: ParallelSizes, dp: int, pp: int, pcp: int, tp: int) -> int:
    return dp * s.pp * s.pcp * s.tp + pp * s.pcp * s.tp + pcp * s.tp + tp


def expected_by_formula(s: ParallelSizes) -> dict:
    """vLLM's groups, member by member and in creation order, from nested loops."""
    DP, PP, PCP, TP = s.dp, s.pp, s.pcp, s.tp
    f = lambda d, p, c, t: formula(s, d, p, c, t)  # noqa: E731
    return {
        "tp": [
            [f(d, p, c, t) for t in range(TP)]
            for d in range(DP) for p in range(PP) for c in range(PCP)
        ],
        "pcp": [
            [f(d, p, c, t) for c in range(PCP)]
            for d in range(DP) for p in range(PP) for t in range(TP)
        ],
        "pp": [
            [f(d, p, c, t) for p in range(PP)]
            for d in range(DP) for t in range(TP) for c in range(PCP)
        ],
        "dp": [
            [f(d, p, c, t) for d in range(DP)]
            for t in range(TP) for p in range(PP) for c in range(PCP)
        ],
        "ep": [
            [f(d, p, c, t) for d in range(DP) for c in range(PCP) for t in range(TP)]
            for p in range(PP)
        ],
    }


def transpose_reshape(shape, a, b, size):
    """Model of torch ``arange(n).reshape(shape).transpose(a, b).reshape(-1, size)``."""
    n = len(shape)
    strides = [1] * n
    for i in range(n - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    perm = list(range(n))
    perm[a], perm[b] = perm[b], perm[a]
    new_shape = [shape[p] for p in perm]
    flat = [
        sum(idx[i] * strides[perm[i]] for i in range(n))
        for idx in itertools.product(*(range(x) for x in new_shape))
    ]
    return [flat[i:i + size] for i in range(0, len(flat), size)]


def expected_by_torch_model(s: ParallelSizes) -> dict:
    # 5-D [ExtDP=1, DP, PP, PCP, TP] exactly as initialize_model_parallel
    shape = (1, s.dp, s.pp, s.pcp, s.tp)
    return {
        "tp": transpose_reshape(shape, 4, 4, s.tp),
        "pcp": transpose_reshape(shape, 3, 4, s.pcp),
        "pp": transpose_reshape(shape, 2, 4, s.pp),
        "dp": transpose_reshape(shape, 1, 4, s.dp),
        "ep": transpose_reshape(shape, 1, 2, s.dp * s.pcp * s.tp),
    }


# --------------------------------------------------------------------------- vLLM


@SETTINGS
@given(parallel_sizes())
def test_each_kind_partitions_the_world(s):
    gs = vllm_groups(s)
    world = s.world_size
    expected_sizes = {"tp": s.tp, "pcp": s.pcp, "pp": s.pp, "dp": s.dp, "ep": s.dp * s.pcp * s.tp}
    for dim, groups in gs.groups.items():
        counts = Counter(r for g in groups for r in g)
        assert set(counts) == set(range(world)), dim
        assert set(counts.values()) == {1}, dim
        assert all(len(g) == expected_sizes[dim] for g in groups), dim
        assert len(groups) == world // expected_sizes[dim], dim
    # worlds partition the job too
    counts = Counter(r for w in gs.worlds for r in w)
    assert sorted(counts) == list(range(world)) and set(counts.values()) == {1}


@SETTINGS
@given(parallel_sizes())
def test_groups_match_closed_form_in_order(s):
    gs = vllm_groups(s)
    expected = expected_by_formula(s)
    if s.moe:
        wanted = ["tp", "pcp", "pp", "dp"] + (["ep"] if s.expert_parallel else [])
    else:
        wanted = ["tp", "pcp", "pp"]
    assert list(gs.groups) == wanted
    for dim in wanted:
        assert gs.groups[dim] == expected[dim], dim
    assert ep_groups(s) == expected["ep"]


@SETTINGS
@given(parallel_sizes(max_world=1024))
def test_groups_match_transpose_reshape_model(s):
    gs = vllm_groups(moe_ep(s))
    model = expected_by_torch_model(s)
    for dim in ("tp", "pcp", "pp", "dp", "ep"):
        assert gs.groups[dim] == model[dim], dim


@SETTINGS
@given(parallel_sizes())
def test_ep_is_union_of_dp_pcp_tp_per_pp_stage(s):
    ep = vllm_groups(moe_ep(s)).groups["ep"]
    assert len(ep) == s.pp
    for stage, group in enumerate(ep):
        union = sorted(
            formula(s, d, stage, c, t)
            for d in range(s.dp) for c in range(s.pcp) for t in range(s.tp)
        )
        assert group == union
        assert len(group) == s.dp * s.pcp * s.tp


@SETTINGS
@given(parallel_sizes(max_world=2048), st.data())
def test_group_index_and_rank_in_group_agree_with_membership(s, data):
    gs = vllm_groups(moe_ep(s))
    for dim, groups in gs.groups.items():
        where = {}
        for gi, g in enumerate(groups):
            for pos, r in enumerate(g):
                where[r] = (gi, pos)
        for r in range(s.world_size):
            assert (gs.group_index(dim, r), gs.rank_in_group(dim, r)) == where[r], (dim, r)
    # dense: same arithmetic on the per-replica groups (sampled ranks)
    dense = vllm_groups(ParallelSizes(dp=s.dp, pp=s.pp, pcp=s.pcp, tp=s.tp, moe=False))
    ranks = data.draw(st.lists(st.integers(0, s.world_size - 1), min_size=1, max_size=20))
    for r in ranks:
        for dim, groups in dense.groups.items():
            g = dense.group_of(dim, r)
            assert g is groups[dense.group_index(dim, r)]
            assert g[dense.rank_in_group(dim, r)] == r


@SETTINGS
@given(parallel_sizes(), st.data())
def test_rank_of_coords_of_round_trip(s, data):
    for r in range(s.world_size):
        c = coords_of(s, r)
        assert 0 <= c.dp < s.dp and 0 <= c.pp < s.pp and 0 <= c.pcp < s.pcp and 0 <= c.tp < s.tp
        assert formula(s, c.dp, c.pp, c.pcp, c.tp) == r
        assert rank_of(s, c) == r
    c = Coords(
        dp=data.draw(st.integers(0, s.dp - 1)),
        pp=data.draw(st.integers(0, s.pp - 1)),
        pcp=data.draw(st.integers(0, s.pcp - 1)),
        tp=data.draw(st.integers(0, s.tp - 1)),
    )
    assert coords_of(s, rank_of(s, c)) == c


@SETTINGS
@given(parallel_sizes())
def test_dense_groups_stay_inside_one_replica(s):
    dense = ParallelSizes(dp=s.dp, pp=s.pp, pcp=s.pcp, tp=s.tp, moe=False, expert_parallel=s.expert_parallel)
    gs = vllm_groups(dense)
    R = s.tp * s.pp * s.pcp
    assert gs.worlds == [list(range(d * R, d * R + R)) for d in range(s.dp)]
    assert gs.independent_replicas == (s.dp > 1)
    assert "dp" not in gs.groups and "ep" not in gs.groups
    for dim, groups in gs.groups.items():
        for g in groups:
            assert len({r // R for r in g}) == 1, (dim, g)
    # a dense replica d has exactly the groups of a DP=1 job, shifted by d*R
    single = vllm_groups(ParallelSizes(pp=s.pp, pcp=s.pcp, tp=s.tp, moe=False))
    for dim in ("tp", "pcp", "pp"):
        shifted = [[d * R + r for r in g] for d in range(s.dp) for g in single.groups[dim]]
        assert gs.groups[dim] == shifted, dim


@SETTINGS
@given(parallel_sizes())
def test_vllm_layout_equals_megatron_tp_cp_pp_dp(s):
    gs = vllm_groups(moe_ep(s))
    mg = megatron_groups("tp-cp-pp-dp", tp=s.tp, cp=s.pcp, pp=s.pp, dp=s.dp)

    def sets(groups):
        return {frozenset(g) for g in groups}

    assert sets(gs.groups["tp"]) == sets(mg["tp"])
    assert sets(gs.groups["pcp"]) == sets(mg["cp"])
    assert sets(gs.groups["pp"]) == sets(mg["pp"])
    assert sets(gs.groups["dp"]) == sets(mg["dp"])
    ep = megatron_masked_groups("tp-cp-pp-dp", "tp-cp-dp", tp=s.tp, cp=s.pcp, pp=s.pp, dp=s.dp)
    assert sets(gs.groups["ep"]) == sets(ep)


# --------------------------------------------------------------------------- Megatron


@st.composite
def megatron_job(draw, max_world: int = MAX_WORLD):
    """An order string (a permutation of a subset of the tokens that contains every
    axis of size > 1) plus sizes with ep == 1 or cp == 1."""
    names = ["tp", "cp", "ep", "dp", "pp"]
    excluded = draw(st.sampled_from(["ep", "cp"]))
    sizes = {n: 1 for n in names}
    budget = max_world
    for n in draw(st.permutations([n for n in names if n != excluded])):
        v = draw(st.one_of(st.integers(1, min(6, budget)), st.integers(1, budget)))
        sizes[n] = v
        budget //= v
    required = [n for n in names if sizes[n] > 1]
    optional = [n for n in names if sizes[n] == 1]
    present = required + draw(st.lists(st.sampled_from(optional), unique=True)) if optional else required
    if not present:
        present = [draw(st.sampled_from(names))]
    order = draw(st.permutations(present))
    return list(order), sizes


@SETTINGS
@given(megatron_job(max_world=2048))
def test_megatron_groups_are_ranks_sharing_other_coordinates(job):
    order_list, sizes = job
    full = order_list + [n for n in ("tp", "cp", "ep", "dp", "pp") if n not in order_list]
    world = 1
    for n in full:
        world *= sizes[n]

    def decode(rank):
        coords = {}
        for n in full:  # first token fastest
            rank, coords[n] = divmod(rank, sizes[n])
        return coords

    decoded = [decode(r) for r in range(world)]
    groups = megatron_groups("-".join(order_list), **sizes)
    assert list(groups) == ["tp", "cp", "dp", "pp", "ep"]
    for key, gl in groups.items():
        others = [n for n in full if n != key]
        assert len(gl) == world // sizes[key]
        seen = Counter()
        for index, g in enumerate(gl):
            seen.update(g)
            assert g == sorted(g) and len(g) == sizes[key]
            assert [decoded[r][key] for r in g] == list(range(sizes[key]))
            shared = {tuple(decoded[r][n] for n in others) for r in g}
            assert len(shared) == 1
            # group number = mixed radix of the other axes, first one fastest
            (other_coords,) = shared
            number, scale = 0, 1
            for n, c in zip(others, other_coords):
                number += c * scale
                scale *= sizes[n]
            assert number == index
        assert set(seen) == set(range(world)) and set(seen.values()) == {1}


@SETTINGS
@given(megatron_job(), st.data())
def test_megatron_masked_groups_partition_and_ascend(job, data):
    order_list, sizes = job
    mask = data.draw(st.lists(st.sampled_from(["tp", "cp", "ep", "dp", "pp"]), min_size=1, unique=True))
    groups = megatron_masked_groups("-".join(order_list), "-".join(mask), **sizes)
    world = 1
    for v in sizes.values():
        world *= v
    group_size = 1
    for n in mask:
        group_size *= sizes[n]
    assert all(len(g) == group_size and g == sorted(g) for g in groups)
    flat = [r for g in groups for r in g]
    assert sorted(flat) == list(range(world))
