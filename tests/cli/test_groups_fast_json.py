"""`rtc groups --format json` builds its text from per-rank columns and pre-encoded member
texts (issue 19); these property tests hold every fast step to the plain form it replaces,
on placements hypothesis draws: idle devices, ranks without a device, missing IPs,
servers spread over one replica, dp_local, every framework, names JSON must escape."""

from __future__ import annotations

import json
from ipaddress import IPv4Address
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtc.parallel.groups import ParallelSizes
from rtc.parallel.placement import ALL_DIMS, NodeInput, place
from rtc.report.groups import (
    _dim_document,
    _dump,
    _Labels,
    _member,
    groups_document,
    groups_json,
    render_json,
)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

NAMES = st.sampled_from(["node0", "nœud", 'a"b', "x\\y", "tab\there", "n-7"])


@st.composite
def node_inputs(draw, index: int) -> NodeInput:
    devices = tuple(sorted(draw(st.sets(st.integers(0, 15), min_size=1, max_size=8))))
    ips = tuple(IPv4Address(f"10.{index}.0.{d + 1}") if draw(st.booleans()) or d % 3 else None
                for d in devices)
    ips = ips[:draw(st.integers(0, len(ips)))] if draw(st.booleans()) else ips
    dp_local = draw(st.one_of(st.none(), st.integers(1, 3)))
    return NodeInput(f"{draw(NAMES)}{index}", devices, dp_local, ips)


@st.composite
def placements(draw):
    count = draw(st.integers(1, 5))
    nodes = [draw(node_inputs(i)) for i in range(count)]
    tp, pp, pcp = (draw(st.sampled_from((1, 1, 2, 3, 4))) for _ in range(3))
    dp = draw(st.integers(1, max(1, 64 // (tp * pp * pcp))))
    moe = draw(st.booleans())
    sizes = ParallelSizes(dp=dp, pp=pp, pcp=pcp, tp=tp,
                          expert_parallel=draw(st.booleans()), moe=moe)
    framework = draw(st.sampled_from(("vllm", "vllm", "torch_npu", "megatron")))
    return place(nodes, sizes, framework=framework, model_kind="moe" if moe else "dense")


@SETTINGS
@given(placements())
def test_labels_are_the_placement_per_rank(pl):
    labels = _Labels(pl)
    ranks = range(pl.world)
    assert labels.server == [pl.server_of(r) for r in ranks]
    assert labels.device == [pl.device_of(r) for r in ranks]
    assert labels.ip == [pl.device_ip_of(r) for r in ranks]


@SETTINGS
@given(placements())
def test_member_texts_are_the_member_objects_encoded(pl):
    labels = _Labels(pl)
    assert labels.member_texts() == [_dump(_member(pl, labels, r)) for r in range(pl.world)]


@SETTINGS
@given(placements())
def test_group_lines_are_the_group_objects_encoded(pl):
    labels = _Labels(pl)
    for dim in pl.dims:
        plain = _dim_document(pl, labels, dim)
        encoded = _dim_document(pl, labels, dim, encoded=True)
        assert list(encoded.pop("groups")) == [_dump(g) for g in plain.pop("groups")]
        assert encoded == plain


@SETTINGS
@given(placements())
def test_groups_json_is_the_document_rendered(pl):
    job = SimpleNamespace(name="j", framework=pl.framework, expert_parallel=pl.sizes.expert_parallel,
                          dp=pl.sizes.dp, pp=pl.sizes.pp, pcp=pl.sizes.pcp, tp=pl.sizes.tp)
    topo = SimpleNamespace(placement=lambda _job: pl)
    text = groups_json(topo, [job], ALL_DIMS, "f.rtc")
    doc = groups_document(topo, [job], ALL_DIMS, "f.rtc")
    assert text == render_json(doc)
    assert json.loads(text) == doc
