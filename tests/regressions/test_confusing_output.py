"""Issue 34, "Wrong or confusing output": the model kind rtc knows (RTC332 when it
assumed one), ties in `rtc advise`, and the other output items below; each with a
failing and a passing input."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, run_rtc
from rtc.api import compile_text
from rtc.cost.jobs import advise_job
from rtc.report.cost_report import advice_document, advice_rtc, advice_text
from rtc.report.groups import model_text

DP_JOB = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eno0
  devices 0..7
  device_ip 6.0.0.1 step 1
}
job serve {
  servers a
  dp 2
  tp 4
  KIND
}
"""


def _job(kind_lines: str):
    result = compile_text(DP_JOB.replace("KIND", kind_lines), "k.rtc")
    return result, result.topology.jobs[0]


# ---------------------------------------------------------------- 1. the model kind

def test_a_dense_model_rtc_knows_is_dense_everywhere(tmp_path: Path):
    # Qwen3-32B is dense in rtc/cost/models.toml; before, model_kind defaulted to moe
    result, job = _job('model "/models/Qwen3-32B"')
    assert (job.model_kind, job.model_kind_from) == (
        "dense", "model /models/Qwen3-32B (Qwen3-32B)")
    assert [d.code for d in result.diagnostics] == []
    pl = result.topology.placement(job)
    assert model_text(pl).startswith("dense model: every DP replica is its own world of 4")
    src = tmp_path / "k.rtc"
    src.write_text(DP_JOB.replace("KIND", 'model "/models/Qwen3-32B"'))
    run = run_rtc("compile", str(src), "--out-dir", str(tmp_path / "out"), "--no-diagrams")
    assert run.returncode == 0, run.stderr
    assert "RANK_TABLE_FILE" not in (tmp_path / "out" / "a.env").read_text()
    run = run_rtc("diagram", str(src), "--format", "dot")
    assert "vllm, dense" in run.stdout and "MoE" not in run.stdout


def test_cost_model_decides_the_kind_and_a_written_kind_wins():
    _, job = _job("cost_model qwen2.5-72b")
    assert (job.model_kind, job.model_kind_from) == (
        "dense", "cost_model qwen2.5-72b (Qwen2.5-72B)")
    _, job = _job('model "/models/DeepSeek-R1-W8A8"')
    assert job.model_kind == "moe" and "DeepSeek-V3" in job.model_kind_from
    _, job = _job('model "/models/Qwen3-32B"\n  model_kind moe')
    assert (job.model_kind, job.model_kind_from) == ("moe", "model_kind")


def test_an_unknown_model_gets_the_moe_default_and_a_note():
    result, job = _job('model "/models/my-finetune"')
    assert (job.model_kind, job.model_kind_from) == ("moe", "default")
    (d,) = result.diagnostics
    assert d.code == "RTC332" and (d.span.line, d.span.column) == (10, 5)
    assert d.message == ("job serve: no `model_kind` and model '/models/my-finetune' is not "
                         "one rtc knows; rtc assumed `model_kind moe` (its 2 DP replicas "
                         "share one world of 8 ranks)")
    # written: no note
    result, _ = _job('model "/models/my-finetune"\n  model_kind moe')
    assert result.diagnostics == []
    # expert_parallel on says MoE (only a MoE model has experts): no note either
    result, job = _job('model "/models/my-finetune"\n  expert_parallel on')
    assert (job.model_kind, job.model_kind_from) == ("moe", "expert_parallel on")
    assert "RTC332" not in {d.code for d in result.diagnostics}
    # a known dense model with expert_parallel on: RTC331 says where "dense" came from
    result, _ = _job('model "/models/Qwen3-32B"\n  expert_parallel on')
    (d,) = [d for d in result.diagnostics if d.code == "RTC331"]
    assert "model_kind is dense (model /models/Qwen3-32B (Qwen3-32B))" in d.message


# ---------------------------------------------------------------- 2. ties in rtc advise

def test_advise_shows_tied_layouts_as_ties():
    # Qwen3-32B on one A2 server: DP2 x TP4, DP4 x TP2 and TP8 all cost the same
    # alpha-bound HCCS AllReduce per token (the "ranks 1, 2, 3 ... 1.0x the best")
    result, job = _job('model "/models/Qwen3-32B"')
    advice = advise_job(result.topology, job)
    scores = advice.ranking.scores
    assert len({s.per_token for s in scores}) == 1 and len(scores) == 3
    assert [advice.ranking.rank(i) for i in range(3)] == [1, 1, 1]
    text = advice_text(advice, 10)
    rows = text.splitlines()[2:5]
    assert [r.split()[0] for r in rows] == ["=1", "=1", "=1"]
    assert ("verdict: your layout DP2 x TP4 is tied best of 3 with DP4 x TP2, TP8 "
            "(37.7 us per token each") in text
    doc = advice_document(advice, 10, "k.rtc")
    assert doc["current"]["rank"] == 1
    assert [(x["rank"], x["tied_with"]) for x in doc["layouts"]] == [
        (1, ["DP4 x TP2", "TP8"]), (1, ["DP2 x TP4", "TP8"]), (1, ["DP2 x TP4", "DP4 x TP2"])]
    assert advice_rtc(advice, 1).startswith("# rtc advise #=1: DP2 x TP4")


def test_advise_ranks_layouts_that_differ_one_two_three():
    # a MoE model over the same server: DP8 x TP1 + EP is alone best; EP on or off over
    # one server's TP group costs the same, so those pairs tie (1, 2, 2, 4, 4, 6, 6)
    result, job = _job('model "/models/Qwen3-30B-A3B"')
    advice = advise_job(result.topology, job)
    ranking = advice.ranking
    got = [(ranking.rank(i), s.layout.label) for i, s in enumerate(ranking.scores)]
    assert got == [(1, "DP8 x TP1 + EP"), (2, "TP8"), (2, "TP8 + EP"), (4, "DP4 x TP2"),
                   (4, "DP4 x TP2 + EP"), (6, "DP2 x TP4"), (6, "DP2 x TP4 + EP")]
    text = advice_text(advice, 10)
    assert [r.split()[0] for r in text.splitlines()[2:9]] == [
        "1", "=2", "=2", "=4", "=4", "=6", "=6"]
    assert ("verdict: your layout DP2 x TP4 (tied with DP2 x TP4 + EP) ranks =6 of 7: "
            "40.6 us per token, 2.9x the best, DP8 x TP1 + EP (13.8 us)") in text
    doc = advice_document(advice, 10, "k.rtc")
    assert doc["current"]["rank"] == 6 and doc["layouts"][0]["tied_with"] == []


# ---------------------------------------------------------------- 3. silent inputs

PREFIX_SERVER = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..7
  device_ip 6.0.0.1 step 1
  gateway 6.0.0.254
  prefix PREFIX
}
"""


def test_prefix_0_on_a_device_is_an_error_and_prefix_24_is_read():
    result = compile_text(PREFIX_SERVER.replace("PREFIX", "0"), "p.rtc")
    (d,) = result.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("RTC114", 9, 10)
    assert d.message.startswith("`prefix 0` is netmask 0.0.0.0: every address would be on "
                                "the NPU's own link")
    assert "`hccn_tool -i 0 -ip -g` prints its netmask" in d.hint
    result = compile_text(PREFIX_SERVER.replace("PREFIX", "24"), "p.rtc")
    assert result.ok and result.diagnostics == []
    assert {d.prefix for d in result.topology.servers[0].devices} == {24}


def test_no_diagrams_with_o_says_it_has_no_effect(tmp_path: Path):
    src = tmp_path / "k.rtc"
    src.write_text(DP_JOB.replace("KIND", "model_kind moe"))
    run = run_rtc("compile", str(src), "-o", str(tmp_path / "hccl.json"), "--no-diagrams")
    assert run.returncode == 0, run.stderr
    assert ("rtc: note: --no-diagrams has no effect with -o / --stdout (they write the rank "
            "table only); only --out-dir writes topology.svg and groups.svg") in run.stderr
    assert (tmp_path / "hccl.json").is_file()
    run = run_rtc("compile", str(src), "--out-dir", str(tmp_path / "out"), "--no-diagrams")
    assert run.returncode == 0 and "no effect" not in run.stderr
    assert not (tmp_path / "out" / "topology.svg").exists()


def test_explain_explains_every_block_keyword_of_the_grammar():
    from rtc.syntax.schema import BLOCK_SPECS

    grammar = (ROOT / "grammar" / "rtc.lark").read_text()
    kinds = grammar.split("!block_kind:")[1].split("label:")[0]
    words = [w.strip('" \n|') for w in kinds.split() if w.startswith('"')]
    assert sorted(words) == sorted(BLOCK_SPECS)
    for kind in words:
        run = run_rtc("explain", kind)
        assert run.returncode == 0, (kind, run.stderr)
        assert run.stdout.startswith(f"{kind} (block)\n"), run.stdout
    run = run_rtc("explain", "family")
    assert "  opens with  family PREFIX[FIRST..LAST] { ... }" in run.stdout
    assert "device_ip" in run.stdout and "    family node[0000..1023] {" in run.stdout
    run = run_rtc("explain", "disaggregation")
    assert "  attributes prefill, decode" in run.stdout
    # a near miss still gets the suggestion
    run = run_rtc("explain", "famly")
    assert run.returncode == 2
    assert "unknown rule, block or attribute 'famly'" in run.stderr
    assert "did you mean 'family'?" in run.stderr


# ---------------------------------------------------------------- 4. the KV link drawn

def _dot(example: str, *args: str) -> str:
    root = ROOT
    run = run_rtc("diagram", str(root / "examples" / example), "--format", "dot", *args)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_diagrams_of_a_disaggregated_deployment_draw_the_kv_link():
    topo = _dot("sglang-pd-a2.rtc")
    (edge,) = [x.strip() for x in topo.splitlines() if "KV cache" in x]
    assert edge.startswith('"npu:a2p:0" -> "npu:a2d:0" [color="#228833"')
    assert 'xlabel="KV cache prefill -> decode; servers linked by RoCE"' in edge
    assert 'ltail="cluster_srv:a2p", lhead="cluster_srv:a2d"' in edge
    groups = _dot("sglang-pd-a2.rtc", "--view", "groups")
    (edge,) = [x.strip() for x in groups.splitlines() if "KV cache" in x]
    assert edge.startswith('"job:prefill" -> "job:decode"')
    pd = _dot("pd-a3.rtc")
    assert "KV cache prefill -> decode (mooncake_layerwise); servers linked by HCCS within " \
           "super pod 0" in pd


def test_no_kv_link_without_both_sides():
    assert "KV cache" not in _dot("a2-2node-dp2-tp8.rtc")       # no prefill/decode jobs
    assert "KV cache" not in _dot("sglang-pd-a2.rtc", "--job", "prefill")  # one side drawn


# ---------------------------------------------------------------- 7. import --force

def test_import_does_not_replace_an_existing_file_without_force(tmp_path: Path):
    src = tmp_path / "k.rtc"
    src.write_text(DP_JOB.replace("KIND", "model_kind moe"))
    table = tmp_path / "hccl.json"
    assert run_rtc("compile", str(src), "-o", str(table)).returncode == 0
    mine = tmp_path / "cluster.rtc"
    mine.write_text(src.read_text())                 # the user's own description
    run = run_rtc("import", str(table), "-o", str(mine))
    assert run.returncode == 2 and mine.read_text() == src.read_text()
    assert f"rtc: error[RTC002]: {mine} exists; rtc import does not replace it without " \
           "--force" in run.stderr
    assert f"-o {tmp_path / 'cluster'}-imported.rtc), or pass --force" in run.stderr
    run = run_rtc("import", str(table), "-o", str(mine), "--force")
    assert run.returncode == 0, run.stderr
    assert mine.read_text().startswith("# Imported by `rtc import` from hccl.json")


def test_import_writes_a_new_file(tmp_path: Path):
    src = tmp_path / "k.rtc"
    src.write_text(DP_JOB.replace("KIND", "model_kind moe"))
    table = tmp_path / "hccl.json"
    assert run_rtc("compile", str(src), "-o", str(table)).returncode == 0
    run = run_rtc("import", str(table), "-o", str(tmp_path / "new.rtc"))
    assert run.returncode == 0 and (tmp_path / "new.rtc").is_file()


# ---------------------------------------------------------------- 5. ascending device lists

VISIBLE = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eno0
  visible_devices MOUNTED
  devices 3, 4
  device_ip 6.0.0.1 step 1
}
job serve {
  servers a
  tp 2
  model_kind dense
ENV}
"""


def _visible(tmp_path: Path, mounted: str, env: str = "") -> tuple[list, str]:
    src = tmp_path / "v.rtc"
    src.write_text(VISIBLE.replace("MOUNTED", mounted).replace("ENV", env))
    result = compile_text(src.read_text(), "v.rtc")
    out = tmp_path / "out"
    run = run_rtc("compile", str(src), "--out-dir", str(out), "--no-diagrams")
    written = ""
    if run.returncode == 0:
        written = next(x for x in (out / "a.env").read_text().splitlines()
                       if "ASCEND_RT_VISIBLE_DEVICES" in x)
    return result.diagnostics, written


def test_a_plugin_order_mount_gets_an_ascending_list_and_a_note(tmp_path: Path):
    # before: `visible_devices 4, 3` gave ASCEND_RT_VISIBLE_DEVICES=1,0 (EE1001 in CANN)
    diags, written = _visible(tmp_path, "4, 3")
    assert written == "export ASCEND_RT_VISIBLE_DEVICES=0,1"
    (n,) = [d for d in diags if d.code == "RTC435"]
    assert (n.span.line, n.span.column) == (7, 19)
    assert "the container numbers the NPUs it mounts by ascending physical id (physical -> " \
           "container: 3 -> 0, 4 -> 1)" in n.message
    assert not [d for d in diags if d.severity.name == "ERROR"]


def test_an_ascending_mount_gets_the_same_list_and_no_order_note(tmp_path: Path):
    diags, written = _visible(tmp_path, "3, 4")
    assert written == "export ASCEND_RT_VISIBLE_DEVICES=0,1"
    assert [d.code for d in diags] == ["RTC433"]       # the numbering note only


def test_a_non_ascending_ascend_rt_visible_devices_is_rtc434(tmp_path: Path):
    diags, _ = _visible(tmp_path, "3, 4", '  env ASCEND_RT_VISIBLE_DEVICES = "1,0"\n')
    (e,) = [d for d in diags if d.code == "RTC434"]
    assert (e.span.line, e.span.column) == (15, 35)
    assert e.severity.name == "WARNING" and "RTC507" not in {d.code for d in diags}
    assert e.hint == ("remove the line: rtc computes ASCEND_RT_VISIBLE_DEVICES per server from "
                      "the job's devices, in ascending order")
    diags, _ = _visible(tmp_path, "3, 4", '  env ASCEND_RT_VISIBLE_DEVICES = "0,1"\n')
    assert "RTC434" not in {d.code for d in diags}


def test_rtc_lint_flags_a_non_ascending_list_in_a_script():
    from conftest import two_node_scripts

    rep = two_node_scripts("10.0.0.5", "--data-parallel-address 10.0.0.6", "1,0,2,3,4,5,6,7")
    assert [(d.code, str(d.span)) for d in rep.diagnostics] == [("RTC434", "node2.sh:2:32")]
    rep = two_node_scripts("10.0.0.5", "--data-parallel-address 10.0.0.6")
    assert rep.diagnostics == []


# ---------------------------------------------------------------- 6. RTC228 where required

PD_ONE_A2 = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eno0
  devices 0..7
  device_ip 6.0.0.1 step 1
}
server b {
  host 10.0.0.2
  nic eno0
  devices 0..7
  device_ip 6.0.1.1 step 1
}
job prefill {
  role prefill
  on a devices 0..3
  tp 4
  kv_connector mooncake
  env HCCL_INTRA_ROCE_ENABLE = 1
  model_kind moe
}
job decode {
  role decode
  on DECODE_ON
  tp 4
  kv_connector mooncake
  env HCCL_INTRA_ROCE_ENABLE = 1
  model_kind moe
}
"""


def _rtc228(text: str) -> list:
    return [d for d in compile_text(text, "pd.rtc").diagnostics if d.code == "RTC228"]


def test_rtc228_is_a_note_for_prefill_and_decode_on_one_machine():
    # vllm-ascend issue 4866: P and D on one machine need HCCL_INTRA_ROCE_ENABLE=1
    found = _rtc228(PD_ONE_A2.replace("DECODE_ON", "a devices 4..7"))
    assert [d.severity.name for d in found] == ["NOTE", "NOTE"]
    assert "it is required here: prefill job prefill and decode job decode share a" in \
        found[0].message and "(vllm-ascend issue 4866)" in found[0].message


def test_rtc228_still_warns_for_prefill_and_decode_on_two_machines():
    found = _rtc228(PD_ONE_A2.replace("DECODE_ON", "b devices 0..3"))
    assert [d.severity.name for d in found] == ["WARNING", "WARNING"]
    assert "required" not in found[0].message
    assert found[0].hint.startswith("drop HCCL_INTRA_ROCE_ENABLE")


KV_POOL = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..7
  device_ip 6.0.0.1 step 1
}
job serve {
  servers a
  tp 8
  env HCCL_INTRA_ROCE_ENABLE = 1
  args --kv-transfer-config "{\\"kv_connector\\": \\"CONNECTOR\\", \\"kv_role\\": \\"kv_both\\"}"
}
"""


def test_rtc228_is_a_note_for_a_kv_pool_on_a2():
    # vllm-ascend kv_pool.md section 5.1: required by the direct transmission scheme on A2
    (d,) = _rtc228(KV_POOL.replace("CONNECTOR", "AscendStoreConnector"))
    assert d.severity.name == "NOTE"
    assert "the job uses a KV pool (AscendStoreConnector) on A2" in d.message
    assert "kv_pool.md, section 5.1" in d.message


def test_rtc228_warns_for_another_connector():
    (d,) = _rtc228(KV_POOL.replace("CONNECTOR", "MooncakeConnectorV1"))
    assert d.severity.name == "WARNING"


def test_the_top_level_help_names_nvidia_gpus_too():
    run = run_rtc("--help")
    assert run.returncode == 0
    assert "rank-table and topology compiler for Ascend NPU and NVIDIA GPU" in run.stdout
    assert "NPUs or GPUs" in run.stdout


def test_import_hint_suggests_a_free_name_not_imported_imported(tmp_path: Path):
    src = tmp_path / "k.rtc"
    src.write_text(DP_JOB.replace("KIND", "model_kind moe"))
    table = tmp_path / "hccl.json"
    assert run_rtc("compile", str(src), "-o", str(table)).returncode == 0
    taken = tmp_path / "imported.rtc"
    taken.write_text("# mine\n")
    run = run_rtc("import", str(table), "-o", str(taken))
    assert run.returncode == 2
    assert "imported-imported" not in run.stderr
    assert f"(-o {tmp_path / 'imported-2.rtc'}), or pass --force" in run.stderr
    (tmp_path / "cluster.rtc").write_text("# mine\n")
    (tmp_path / "cluster-imported.rtc").write_text("# mine too\n")
    run = run_rtc("import", str(table), "-o", str(tmp_path / "cluster.rtc"))
    assert f"(-o {tmp_path / 'cluster-imported-2.rtc'}), or pass --force" in run.stderr
