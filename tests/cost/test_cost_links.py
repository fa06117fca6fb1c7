"""rtc.cost link classes per rank pair and the span / bottleneck of a group."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtc.api import compile_file, compile_text
from rtc.cost.links import Hardware, Site, env_value, hardware_of, pair_class
from rtc.cost.params import apply_overrides, load_params
from rtc.cost.spans import SPAN_CLASSES, bottleneck, group_span, job_sites, slowest
from rtc.model.presets import presets
from conftest import ROOT

EXAMPLES = ROOT / "examples"
NOMINAL = load_params("nominal")


def hw(name: str, **kw) -> Hardware:
    return hardware_of(presets()[name], **kw)


def test_a2_pairs_are_hccs_inside_and_roce_between_servers():
    a2 = hw("atlas-800t-a2")
    assert pair_class(a2, Site(0, 0), Site(0, 7)) == "hccs-910b"
    assert pair_class(a2, Site(0, 3), Site(1, 3)) == "roce-200ge"
    assert pair_class(a2, Site(1, 2), Site(1, 2)) == "local"
    assert pair_class(hw("atlas-800t-a2", nic="400ge"), Site(0, 0), Site(1, 0)) == "roce-400ge"


def test_910a_in_ring_and_cross_ring():
    a = hw("atlas-800-910a")
    assert pair_class(a, Site(0, 0), Site(0, 3)) == "hccs-910a"
    assert pair_class(a, Site(0, 5), Site(0, 7)) == "hccs-910a"
    assert pair_class(a, Site(0, 0), Site(0, 4)) == "xring-910a"
    assert pair_class(a, Site(0, 0), Site(1, 0)) == "roce-100ge"


def test_a3_die_pairs_packages_super_pods():
    a3 = hw("atlas-800-a3")
    assert pair_class(a3, Site(0, 4, "0"), Site(0, 5, "0")) == "sio-a3"
    assert pair_class(a3, Site(0, 5, "0"), Site(0, 6, "0")) == "hccs-a3"
    assert pair_class(a3, Site(0, 0, "0"), Site(1, 1, "0")) == "ub-a3"
    assert pair_class(a3, Site(0, 0, "0"), Site(1, 0, "1")) == "roce-200ge"
    assert pair_class(a3, Site(0, 0, None), Site(1, 0, None)) == "roce-200ge"


def test_hccs_inter_disable_forces_roce_inside_a_super_pod():
    off = hw("atlas-800-a3", env={"HCCL_INTER_HCCS_DISABLE": "TRUE"})
    assert off.hccs_inter_disabled
    assert pair_class(off, Site(0, 0, "0"), Site(1, 0, "0")) == "roce-200ge"
    assert pair_class(off, Site(0, 0, "0"), Site(0, 1, "0")) == "sio-a3"   # intra stays
    assert not hw("atlas-800-a3", env={"HCCL_INTER_HCCS_DISABLE": "FALSE"}).hccs_inter_disabled
    sites = [Site(r // 16, r % 16, "0") for r in range(32)]
    span = group_span(range(32), sites, off)
    assert span.span == "cross-server" and bottleneck(span, NOMINAL) == "roce-200ge"


def test_env_value_reads_job_env_lines():
    assert env_value([("A", "1"), ("B", "2"), ("A", "3")], "A") == "3"
    assert env_value({"A": 1}, "A") == "1" and env_value(None, "A") is None
    res = compile_text("""
cluster c {
  hardware atlas-800-a3
}
server n0 {
  devices 0..15
  device_ip 10.0.0.{d+1}
  super_pod 0
  super_device_id base 0
}
server n1 {
  devices 0..15
  device_ip 10.0.1.{d+1}
  super_pod 0
  super_device_id base 16
}
job j {
  servers n0, n1
  dp 2
  tp 16
  env HCCL_INTER_HCCS_DISABLE = TRUE
}
""", "c.rtc")
    assert res.ok, res.diagnostics
    job = res.topology.jobs[0]
    assert env_value(job.env, "HCCL_INTER_HCCS_DISABLE") == "TRUE"
    a3 = hardware_of(res.topology.preset, env=job.env)
    sites = job_sites(res.topology, job)
    dp = group_span([0, 16], sites, a3)
    assert dp.classes == ("roce-200ge",) and dp.span == "cross-server"


def test_spans_on_the_a2_example():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    job = topo.jobs[0]
    a2 = hardware_of(topo.preset, env=job.env)
    sites = job_sites(topo, job)
    assert sites[9] == Site(1, 1, None)
    tp = group_span(range(8), sites, a2)
    assert (tp.span, tp.classes, tp.per_server) == ("intra-server", ("hccs-910b",), (8,))
    assert [(lv.name, lv.size, lv.peers) for lv in tp.levels] == \
        [("server", 8, (("hccs-910b", 7),))]
    ep = group_span(range(16), sites, a2)
    assert ep.span == "cross-server" and ep.classes == ("hccs-910b", "roce-200ge")
    assert bottleneck(ep, NOMINAL) == "roce-200ge"
    assert [lv.hccl_level for lv in ep.levels] == [0, 1]
    assert ep.peers == (("hccs-910b", 7), ("roce-200ge", 8))
    assert not ep.asymmetric


def test_spans_on_a3_classes_and_levels():
    a3 = hw("atlas-800-a3")
    sites = [Site(r // 16, r % 16, str(r // 32)) for r in range(64)]
    assert group_span([2, 3], sites, a3).span == "intra-package"
    assert group_span([2, 3], sites, a3).classes == ("sio-a3",)
    one = group_span(range(16), sites, a3)
    assert one.span == "intra-server" and one.classes == ("sio-a3", "hccs-a3")
    assert one.levels[0].peers == (("hccs-a3", 14), ("sio-a3", 1))
    assert bottleneck(one, NOMINAL) == "hccs-a3"
    pod = group_span(range(32), sites, a3)
    assert pod.span == "intra-superpod" and [lv.name for lv in pod.levels] == \
        ["server", "super-pod"]
    both = group_span(range(64), sites, a3)
    assert both.span == "cross-superpod"
    assert [(lv.name, lv.size, lv.hccl_level) for lv in both.levels] == \
        [("server", 16, 0), ("super-pod", 2, 1), ("cluster", 2, 2)]
    assert bottleneck(both, NOMINAL) == "roce-200ge"
    assert both.peers == (("hccs-a3", 14), ("roce-200ge", 32), ("sio-a3", 1), ("ub-a3", 16))


def test_span_class_order_and_single_rank():
    assert SPAN_CLASSES[0] == "intra-die" and SPAN_CLASSES[-1] == "cross-superpod"
    a2 = hw("atlas-800t-a2")
    lone = group_span([5], [Site(0, r) for r in range(8)], a2)
    assert lone.span == "intra-die" and lone.levels == () and bottleneck(lone, NOMINAL) == "local"


def test_uneven_groups_are_flagged_and_unplaced_ranks_left_out():
    a2 = hw("atlas-800t-a2")
    sites = [Site(0, 0), Site(0, 1), Site(0, 2), Site(1, 0), None]
    span = group_span(range(5), sites, a2)
    assert span.ranks == (0, 1, 2, 3) and span.per_server == (3, 1) and span.asymmetric


def test_bottleneck_follows_the_parameters():
    a3 = hw("atlas-800-a3")
    sites = [Site(0, d, "0") for d in range(16)]
    span = group_span(range(16), sites, a3)
    slow_sio = apply_overrides(NOMINAL, ["sio.bandwidth=10GB/s"])
    assert bottleneck(span, slow_sio) == "sio-a3"
    same = apply_overrides(NOMINAL, ["sio.bandwidth=196GB/s", "sio.alpha=20us"])
    assert slowest(("hccs-a3", "sio-a3"), same) == "sio-a3"   # equal bandwidth: larger alpha


@pytest.mark.parametrize("example", ["a2-1node-tp8.rtc", "a2-2node-pp2-tp8.rtc",
                                     "a3-2node-dp2-tp16.rtc", "pd-a3.rtc"])
def test_every_rank_of_the_examples_has_a_site(example):
    topo = compile_file(str(EXAMPLES / example)).topology
    for job in topo.jobs:
        sites = job_sites(topo, job)
        assert len(sites) == job.world_size and all(s is not None for s in sites)


def test_pcie_class_between_modules_of_one_server():
    from dataclasses import replace
    box16 = replace(hw("atlas-800t-a2"), devices_per_server=16,
                    hccs_groups=(tuple(range(8)), tuple(range(8, 16))),
                    cross_group_link="pcie-gen5")
    assert pair_class(box16, Site(0, 1), Site(0, 9)) == "pcie-gen5"
    assert pair_class(box16, Site(0, 1), Site(0, 7)) == "hccs-910b"
    span = group_span(range(16), [Site(0, d) for d in range(16)], box16)
    assert span.classes == ("hccs-910b", "pcie-gen5") and bottleneck(span, NOMINAL) == "hccs-910b"
    plan = load_params("hccl-plan")
    assert plan.link("pcie-gen5").bandwidth == pytest.approx(54.4e9)
