"""Placement of a job's ranks on devices (rtc.parallel.placement) and the RTC3xx checks.

Expected values are written out from vLLM's rules, not recomputed with the module under
test: start rank = sum of the previous servers' local DP counts (``--data-parallel-start-rank``,
docs/serving/expert_parallel_deployment.md @13642f1e); local engine i uses devices [i*W, (i+1)*W)
(``vllm/v1/engine/utils.py`` ``get_device_indices``, vllm-project/vllm @5f25cfbe); with Ray
the driver node is PP stage 0 (``vllm/v1/executor/ray_executor.py``
``RayDistributedExecutor._init_workers_ray``, @ff583b3c); global rank layout as in
``vllm/distributed/parallel_state.py`` ``initialize_model_parallel`` (@0c175ae9).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import CASES, EXAMPLES, expectations, run_rtc
from rtc.api import compile_file, compile_text
from rtc.diagnostics import Severity
from rtc.emit.hccl_json import build_rank_table
from rtc.parallel.groups import Coords, ParallelSizes
from rtc.parallel.placement import NodeInput, place
from rtc.catalogue import RULES as ALL_RULES, get_rule

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
D2 = EXAMPLES / "a2-2node-pp2-tp8.rtc"
D5 = EXAMPLES / "pd-a3.rtc"


def _topo(path: Path):
    result = compile_file(str(path))
    assert result.ok, [d.message for d in result.diagnostics]
    return result.topology


def _nodes(pl):
    return [(n.name, n.dp_local, n.dp_start, n.first_rank, n.placed) for n in pl.nodes]


# ------------------------------------------------------------------ examples


def test_d1_dp2_tp8_one_replica_per_server():
    topo = _topo(D1)
    pl = topo.placement(topo.job("deepseek"))
    assert _nodes(pl) == [("atlas-01", 1, 0, 0, 8), ("atlas-02", 1, 1, 8, 8)]
    assert pl.mode == "vllm" and pl.aligned
    assert [pl.server_of(r) for r in range(16)] == ["atlas-01"] * 8 + ["atlas-02"] * 8
    assert [pl.device_of(r) for r in range(16)] == list(range(8)) * 2
    rec = pl.record(9)
    assert (rec.server, rec.device_id, rec.device_ip, rec.position) == ("atlas-02", 1, "6.0.2.19", 9)
    assert rec.coords == Coords(dp=1, pp=0, pcp=0, tp=1)
    # tp group 1 = [8..15]; dp groups are created iterating TP first: [1, 9] is dp group 1;
    # the single EP group holds every rank.
    assert rec.groups == {"tp": 1, "pcp": 9, "pp": 9, "dp": 1, "ep": 0}
    assert topo.placement(topo.job("deepseek")) is pl  # cached


def test_d5_decode_four_local_replicas_per_server():
    topo = _topo(D5)
    pl = topo.placement(topo.job("decode"))
    assert _nodes(pl) == [("d1", 4, 0, 0, 16), ("d2", 4, 4, 16, 16)]
    assert [n.dp_ranks for n in pl.nodes] == [range(0, 4), range(4, 8)]
    # local engine 1 of d1 (DP rank 1) uses d1 devices 4..7; DP rank 4 starts on d2 device 0
    assert [pl.device_of(r) for r in range(4, 8)] == [4, 5, 6, 7]
    assert (pl.server_of(16), pl.device_of(16), pl.device_ip_of(16)) == ("d2", 0, "10.20.12.1")
    assert pl.coords(17) == Coords(dp=4, pp=0, pcp=0, tp=1)
    prefill = topo.placement(topo.job("prefill"))
    assert _nodes(prefill) == [("p1", 1, 0, 0, 16), ("p2", 1, 1, 16, 16)]


def test_d2_replica_spans_servers_stage_p_on_server_p():
    topo = _topo(D2)
    pl = topo.placement(topo.job("deepseek"))
    assert [(n.name, n.replica[:3], n.dp_local, n.dp_start) for n in pl.nodes] == [
        ("atlas-01", (0, 0, 2), 1, 0), ("atlas-02", (0, 1, 2), 1, 0)]
    for r in range(16):
        stage = pl.coords(r).pp
        assert pl.server_of(r) == ["atlas-01", "atlas-02"][stage]
    assert pl.groups("pp") == [[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]
    assert pl.dims == ("tp", "pcp", "pp", "dp")
    assert "expert_parallel is off" in pl.why_absent("ep")


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.rtc")), ids=lambda p: p.stem)
def test_rank_r_is_rank_id_r_of_the_emitted_table(example: Path):
    """Global rank r runs on the device the emitted rank table gives rank_id r."""
    topo = _topo(example)
    for job in topo.jobs:
        pl = topo.placement(job)
        assert pl.aligned
        doc = build_rank_table(topo, job)
        if doc["version"] == "2.0":  # Ascend 950: no server_list; ranks in rank_list order
            ranks = doc["rank_list"]
            assert [r["rank_id"] for r in ranks] == list(range(pl.world))
            for r, rank in enumerate(ranks):
                ips = [a["addr"] for lv in rank["level_list"] for a in lv["rank_addr_list"]
                       if a["addr_type"] != "EID"]
                assert (pl.device_of(r), pl.device_ip_of(r)) == (rank["device_id"], ips[0]), r
            continue
        by_id = {s.server_id: s.name for s in topo.servers}
        table = {}
        for server in doc["server_list"]:
            for d in server["device"]:
                table[int(d["rank_id"])] = (by_id[server["server_id"]], int(d["device_id"]),
                                            d.get("device_ip"))
        assert sorted(table) == list(range(pl.world))
        for r in range(pl.world):
            assert (pl.server_of(r), pl.device_of(r), pl.device_ip_of(r)) == table[r], r


# ------------------------------------------------------------------ pure placement


def _a2(name, dp_local=None, count=8):
    return NodeInput(name, tuple(range(count)), dp_local, tuple(f"ip-{name}-{d}" for d in range(count)))


def test_idle_devices_shift_later_servers_and_break_alignment():
    # W = 4; a runs 1 replica on 8 devices (4 idle), b runs DP rank 1 on its devices 0..3
    pl = place([_a2("a", 1), _a2("b", 1)], ParallelSizes(dp=2, tp=4))
    a, b = pl.nodes
    assert (a.dp_start, a.idle_devices, b.dp_start, b.first_rank, b.first_position) == \
        (0, (4, 5, 6, 7), 1, 4, 8)
    assert pl.rank_position == [0, 1, 2, 3, 8, 9, 10, 11]
    assert (pl.server_of(4), pl.device_of(4), pl.device_ip_of(4)) == ("b", 0, "ip-b-0")
    assert not pl.aligned and pl.unplaced == []


def test_over_capacity_leaves_ranks_without_device():
    pl = place([_a2("a", 3), _a2("b", 1)], ParallelSizes(dp=4, tp=4))
    a, b = pl.nodes
    assert (a.wanted, a.placed, a.missing) == (12, 8, 4)
    assert pl.unplaced == [8, 9, 10, 11]
    assert (b.first_rank, pl.server_of(12)) == (12, "b")


def test_incomplete_spanning_replica():
    pl = place([_a2("a")], ParallelSizes(tp=16))
    (a,) = pl.nodes
    assert a.replica == (0, 0, 1, 0) and a.missing == 8
    assert pl.unplaced == list(range(8, 16))


def test_two_replicas_each_spanning_two_servers():
    pl = place([_a2(n) for n in "abcd"], ParallelSizes(dp=2, pp=2, tp=8))
    assert [(n.name, n.replica[:3], n.dp_start, n.first_rank) for n in pl.nodes] == [
        ("a", (0, 0, 2), 0, 0), ("b", (0, 1, 2), 0, 8), ("c", (1, 0, 2), 1, 16),
        ("d", (1, 1, 2), 1, 24)]
    assert pl.aligned


def test_dense_model_has_no_dp_or_ep_groups():
    pl = place([_a2("a"), _a2("b")], ParallelSizes(dp=2, tp=8, expert_parallel=True, moe=False),
               model_kind="dense")
    assert pl.dims == ("tp", "pcp", "pp")
    assert pl.independent_replicas
    assert pl.worlds == [range(0, 8), range(8, 16)]
    assert "dense model" in pl.why_absent("dp") and "dense model" in pl.why_absent("ep")
    with pytest.raises(ValueError):
        pl.groups("dp")


def test_megatron_order_and_positional_placement():
    nodes = [NodeInput("n0", (0, 1, 2, 3)), NodeInput("n1", (0, 1, 2, 3))]
    pl = place(nodes, ParallelSizes(dp=2, pp=2, tp=2), framework="megatron",
               order="tp-cp-ep-dp-pp")
    assert pl.mode == "positional" and pl.layout == "megatron" and pl.aligned
    assert [n.dp_local for n in pl.nodes] == [None, None]
    # rank = tp + 2*dp + 4*pp: PP outermost
    assert pl.coords(5) == Coords(dp=0, pp=1, pcp=0, tp=1)
    assert pl.groups("pp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert pl.groups("dp") == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert pl.group_index("dp", 6) == 2
    assert pl.crossing("pp") == (4, 4, [0, 4])
    bad = place(nodes, ParallelSizes(dp=2, pp=2, tp=2), framework="megatron", order="tp-xx")
    assert bad.problems and "tp-xx" in bad.problems[0] and bad.order == "tp-cp-ep-dp-pp"


def test_65536_ranks_place_linearly():
    nodes = [NodeInput(f"n{i:04}", tuple(range(16))) for i in range(4096)]
    pl = place(nodes, ParallelSizes(dp=4096, tp=16, expert_parallel=True))
    assert pl.world == 65536 and pl.aligned
    assert (pl.server_of(65535), pl.device_of(65535), pl.nodes[-1].dp_start) == ("n4095", 15, 4095)
    assert pl.crossing("tp") == (4096, 0, None)
    total, crossing, first = pl.crossing("dp")
    assert (total, crossing, first[:3]) == (16, 16, [0, 16, 32])


# ------------------------------------------------------------------ checks


def _codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


def _tp16_text(policy: str = "", where: str = "cluster") -> str:
    text = D1.read_text(encoding="utf-8").replace("  dp 2\n  tp 8\n", "  tp 16\n")
    assert "tp 16" in text
    if policy:
        anchor = "  cann 8.2.RC1\n" if where == "cluster" else "  tp 16\n"
        text = text.replace(anchor, anchor + f"  policy cross_node_tp {policy}\n")
    return text


def _placement_codes(result):
    return sorted(d.code for d in result.diagnostics if d.code.startswith("RTC3"))


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.rtc")), ids=lambda p: p.stem)
def test_examples_have_no_placement_findings(example: Path):
    # D1 (DP2 x TP8) and D2 (PP2 x TP8) included: TP stays inside each server.
    result = compile_file(str(example))
    assert result.ok
    assert _placement_codes(result) == []


def test_disjoint_jobs_on_one_server_do_not_clash():
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.1\n}\n"
            "job one {\n  on a devices 0..3\n  tp 4\n}\njob two {\n  on a devices 4..7\n  tp 4\n}\n")
    assert _placement_codes(compile_text(text, "two.rtc")) == []
    clash = text.replace("4..7", "3..6")
    (d,) = [d for d in compile_text(clash, "two.rtc").diagnostics if d.code == "RTC300"]
    assert d.message == ("server a device 3 is claimed by job one (rank 3) and by job two "
                         "(rank 0)")


def test_tp16_over_two_a2_servers_warns_with_servers_and_ranks():
    result = compile_text(_tp16_text(), "tp16.rtc")
    (d,) = _codes(result, "RTC310")
    assert d.severity is Severity.WARNING
    assert "ranks 0..7 on atlas-01, ranks 8..15 on atlas-02" in d.message
    assert "tp 16" in d.message
    assert d.subject == "job deepseek, servers atlas-01, atlas-02"
    assert "crosses roce-200ge" in d.hint and "tp 8 with dp 2 and expert_parallel on" in d.hint
    line = next(i for i, t in enumerate(_tp16_text().splitlines(), 1) if t.strip() == "tp 16")
    assert (d.span.line, d.span.column) == (line, 6)
    assert result.ok  # a warning only


def test_tp16_one_diagnostic_per_job_with_counts():
    # TP16 over four 8-NPU servers (DP2): two TP groups, both cross.
    text = _tp16_text().replace("  tp 16\n", "  dp 2\n  tp 16\n")
    text = text.replace("servers atlas-01, atlas-02", "servers atlas-01, atlas-02, atlas-03, atlas-04")
    extra = "".join(f"server atlas-0{k} {{\n  host 10.0.0.{k}\n  devices 0..7\n"
                    f"  device_ip 6.0.3.{16 * k + 1} step 2\n}}\n" for k in (3, 4))
    text = text.replace("job deepseek {", extra + "job deepseek {")
    result = compile_text(text, "tp16x2.rtc")
    (d,) = _codes(result, "RTC310")
    assert d.message.startswith("job deepseek: all 2 TP groups (tp 16) span servers; e.g. TP group 0")


def test_tp16_strict_and_policies_on_the_cli(tmp_path: Path):
    plain = tmp_path / "tp16.rtc"
    plain.write_text(_tp16_text(), encoding="utf-8")
    res = run_rtc("check", str(plain))
    assert res.returncode == 0 and "warning[RTC310]" in res.stderr
    res = run_rtc("check", "--strict", str(plain))
    assert res.returncode == 1 and "error[RTC310]" in res.stderr
    for where in ("cluster", "job"):
        err = tmp_path / f"tp16-error-{where}.rtc"
        err.write_text(_tp16_text("error", where), encoding="utf-8")
        res = run_rtc("check", str(err))
        assert res.returncode == 1 and "error[RTC310]" in res.stderr, res.stderr
    allow = tmp_path / "tp16-allow.rtc"
    allow.write_text(_tp16_text("allow"), encoding="utf-8")
    res = run_rtc("check", str(allow))
    assert res.returncode == 0 and "RTC310" not in res.stderr
    assert "[RTC3" not in res.stderr


def test_policy_by_dashed_name_too():
    text = _tp16_text().replace("  cann 8.2.RC1\n", "  cann 8.2.RC1\n  policy cross-node-tp error\n")
    (d,) = _codes(compile_text(text, "x.rtc"), "RTC310")
    assert d.severity is Severity.ERROR


def test_shared_device_names_both_jobs_and_ranks():
    result = compile_file(str(CASES / "checks" / "RTC300-device-shared-by-jobs.rtc"))
    (d,) = _codes(result, "RTC300")
    assert d.message == ("server a devices 2, 3 are claimed by job one (ranks 2, 3) and by "
                         "job two (ranks 0, 1)")
    assert [(r.span.line, r.span.column) for r in d.related] == [(11, 6)]


def test_server_claimed_twice_names_both_claims():
    result = compile_file(str(CASES / "checks" / "RTC301-server-claimed-twice.rtc"))
    (d,) = _codes(result, "RTC301")
    assert "names a twice (in `servers` at 16:11 and in `on` here)" in d.message
    assert "ranks 0..7" in d.message
    assert (d.related[0].span.line, d.related[0].span.column) == (16, 11)


def test_dp_gap_message():
    result = compile_file(str(CASES / "checks" / "RTC302-dp-rank-gap.rtc"))
    (d,) = _codes(result, "RTC302")
    assert d.message == ("job serve: DP rank 3 runs on no server: the servers' local DP counts "
                         "cover DP ranks 0..2 (dp_local: a 1, b 2) but dp is 4")


def test_dp_past_end_names_the_earlier_claimant():
    result = compile_file(str(CASES / "checks" / "RTC302-dp-rank-past-end.rtc"))
    (d,) = _codes(result, "RTC302")
    assert "b would run DP ranks 1..2 (data_parallel_start_rank 1, dp_local 2)" in d.message
    assert "DP rank 2 does not exist" in d.message
    assert [r.message for r in d.related] == ["a runs DP ranks 0"]


def test_world_size_mismatch_alone_does_not_repeat_as_placement_errors():
    text = (CASES / "checks" / "RTC210-world-size.rtc").read_text(encoding="utf-8")
    codes = sorted({d.code for d in compile_text(text, "w.rtc").diagnostics})
    assert codes == ["RTC210"]


def test_910a_cluster_without_job_checks_server_devices():
    text = "cluster c {\n  hardware atlas-800-910a\n}\nserver n {\n  host 10.0.0.1\n  devices 0..5\n}\n"
    (d,) = _codes(compile_text(text, "a.rtc"), "RTC320")
    assert (d.span.line, d.span.column) == (6, 11)
    assert "the cluster uses 6 devices of n (0..5)" in d.message


def test_a2_any_device_set_is_fine():
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\nserver n {\n  host 10.0.0.1\n}\n"
            "job j {\n  on n devices 0, 1, 4, 5\n  tp 4\n}\n")
    assert compile_text(text, "a.rtc").diagnostics == []


def test_ep_note_is_not_promoted_by_strict():
    text = (CASES / "checks" / "RTC330-ep-per-pp-stage.rtc").read_text(encoding="utf-8")
    result = compile_text(text, "ep.rtc", strict=True)
    (d,) = _codes(result, "RTC330")
    assert d.severity is Severity.NOTE and result.ok
    assert "stage 0: ranks 0..3, 8..11 (a, b); stage 1: ranks 4..7, 12..15 (a, b)" in d.message


# ------------------------------------------------------------------ rules and cases


def _placement_rules():
    return [r for r in ALL_RULES if re.fullmatch(r"RTC3[0-4]\d", r.code)]


def test_placement_rules_are_declared_and_explained():
    codes = {r.code: r.name for r in _placement_rules()}
    assert codes == {
        "RTC300": "device-claimed-by-two-jobs", "RTC301": "device-claimed-twice-in-job",
        "RTC302": "dp-start-rank-gap-or-overlap", "RTC303": "node-over-capacity",
        "RTC304": "idle-npus", "RTC305": "dcp-size", "RTC306": "megatron-order",
        "RTC310": "cross-node-tp", "RTC311": "cross-node-pcp",
        "RTC320": "hccs-device-set", "RTC321": "die-pair-split",
        "RTC330": "ep-groups-per-pp-stage", "RTC331": "ep-on-dense-model",
        "RTC332": "model-kind-assumed",
        "RTC340": "cost-parameter", "RTC341": "cost-model", "RTC342": "model-layout",
        "RTC343": "weights-exceed-hbm",
        "RTC344": "kv-cache-below-one-sequence",
        "RTC345": "kv-cache-may-not-hold-one-sequence",
        "RTC346": "kv-concurrency-below-max-num-seqs", "RTC347": "kv-check-skipped",
        "RTC348": "no-memory-for-kv-cache",
        "RTC312": "tp-crosses-nvlink-island", "RTC313": "gpu-set-straddles-islands"}
    for r in _placement_rules():
        for part in ("What:", "Why:", "Example:", "Fix:"):
            assert part in r.explanation, (r.code, part)
    assert "HCCS" in get_rule("RTC310").explanation and "RoCE" in get_rule("RTC310").explanation


def test_every_placement_rule_has_a_failing_case():
    cases = sorted((CASES / "checks").glob("RTC3*.rtc"))
    covered = {expectations(p)[0][0] for p in cases}
    assert covered == {r.code for r in _placement_rules()}
    for p in cases:
        assert p.name.startswith(expectations(p)[0][0] + "-"), p.name


def test_rules_and_explain_on_the_cli():
    res = run_rtc("rules")
    assert res.returncode == 0
    for r in _placement_rules():
        assert re.search(rf"^{r.code}\s+{r.severity.label}\s+{re.escape(r.name)}\s", res.stdout, re.M)
    res = run_rtc("explain", "RTC310")
    assert res.returncode == 0
    assert res.stdout.startswith("RTC310 cross-node-tp (warning)")
    assert "several-fold slower decoding" in res.stdout


def test_job_policy_applies_to_that_job_only():
    servers = "".join(f"server s{k} {{\n  host 10.0.0.{k + 1}\n  device_ip 6.0.{k}.1 step 1\n"
                      "  prefix 16\n}\n" for k in range(4))
    jobs = ("job quiet {\n  servers s0, s1\n  tp 16\n  policy cross_node_tp allow\n}\n"
            "job loud {\n  servers s2, s3\n  tp 16\n}\n")
    text = "cluster c {\n  hardware atlas-800t-a2\n}\n" + servers + jobs
    found = [d for d in compile_text(text, "two.rtc").diagnostics if d.code == "RTC310"]
    assert [d.subject.split(",")[0] for d in found] == ["job loud"]
    # the cluster block's policy still applies to every job
    text = text.replace("  hardware atlas-800t-a2\n", "  hardware atlas-800t-a2\n"
                        "  policy cross_node_tp error\n")
    found = [d for d in compile_text(text, "two.rtc").diagnostics if d.code == "RTC310"]
    assert [(d.subject.split(",")[0], d.severity) for d in found] == \
        [("job loud", Severity.ERROR)]
