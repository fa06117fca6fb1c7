"""`rtc cost` / `rtc advise` end to end: the language's cost inputs (`links` block,
`cost_model`, workload attributes), the JSON documents against their schemas, the
advisor's ranking on the D1 and A3 examples, RTC310's numbers, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from rtc.api import compile_file, compile_text
from rtc.cost.inputs import guess_model, job_model
from rtc.cost.jobs import CostOptions, advise_job, cost_jobs
from rtc.cost.memory import parameter_counts, weights_per_rank
from rtc.cost.deployment import Layout
from rtc.cost.models import model_preset
from rtc.report.cost_report import advice_document, advice_rtc, advice_text, cost_document
from rtc.resources import load_schema
from conftest import ROOT

D1 = ROOT / "examples" / "a2-2node-dp2-tp8.rtc"
A3 = ROOT / "examples" / "a3-2node-dp2-tp16.rtc"


def _topo(path: Path):
    result = compile_file(str(path))
    assert result.ok, [d.message for d in result.diagnostics]
    return result.topology


def test_cost_json_matches_schema_and_the_tp_bytes(rtc):
    run = rtc("cost", str(D1), "--phase", "both", "--format", "json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    jsonschema.validate(doc, load_schema("cost-report"))
    (job,) = doc["jobs"]
    assert job["model"] == "DeepSeek-V3" and job["model_source"].startswith("guessed from model")
    decode, prefill = job["phases"]
    tp = next(g for g in decode["groups"] if g["kind"] == "tp" and g["op"] == "AllReduce")
    assert tp["bytes_per_call"] == 64 * 7168 * 2          # T·H·b, 64 sequences per DP rank
    assert tp["span"] == "intra-server"
    assert prefill["tokens_per_dp_rank"] == 4096
    assert decode["total_s"] == pytest.approx(sum(g["time_per_step_s"] for g in decode["groups"]))


def test_advise_d1_keeps_tp_inside_servers_above_tp16():
    topo = _topo(D1)
    advice = advise_job(topo, topo.jobs[0])
    labels = [s.layout.label for s in advice.ranking.scores]
    tp16 = labels.index("TP16")
    assert labels.index("DP2 x TP8 + EP") < tp16
    assert all(s.layout.tp <= 8 for s in advice.ranking.scores[:tp16])
    assert advice.current_index == labels.index("DP2 x TP8 + EP")
    doc = advice_document(advice, 20, str(D1))
    jsonschema.validate(doc, load_schema("advice"))
    assert doc["current"]["rank"] == advice.current_index + 1
    # DP2 x TP8 without EP holds 1/8 of every expert per NPU: 84 GB of 64 GB
    reasons = {r["layout"]: r["reason"] for r in doc["rejected"]}
    assert "84 GB per device" in reasons["DP2 x TP8"]


def test_advise_a3_respects_die_pairs_and_explains(rtc):
    topo = _topo(A3)
    advice = advise_job(topo, topo.jobs[0], options=CostOptions(model="deepseek-v3"))
    assert advice.ranking.scores
    assert all(s.layout.tp == 1 or s.layout.tp % 2 == 0 for s in advice.ranking.scores)
    for s in advice.ranking.scores:       # TP 2 stays on one package's die pair (SIO)
        tp_rows = [r for r in s.step.rows if r.kind == "tp"]
        if s.layout.tp == 2:
            assert {r.span for r in tp_rows} == {"intra-package"}, s.layout.label
    run = rtc("advise", str(A3), "--model", "deepseek-v3", "--top", "3")
    assert run.returncode == 0, run.stderr
    assert "model DeepSeek-V3 (--model deepseek-v3)" in run.stdout
    assert "verdict:" in run.stdout and "limits:" in run.stdout


def test_advise_rtc_blocks_compile_in_place_of_the_job():
    topo = _topo(D1)
    advice = advise_job(topo, topo.jobs[0])
    text = D1.read_text(encoding="utf-8")
    head = text[: text.index("job deepseek {")]
    blocks = advice_rtc(advice, 2)
    first = blocks.split("\n\n")[0]
    result = compile_text(head + first + "\n", "advised.rtc")
    assert result.ok, [d.message for d in result.diagnostics]
    (job,) = result.topology.jobs
    best = advice.ranking.scores[0].layout
    assert (job.dp, job.pp, job.tp, job.expert_parallel) == (best.dp, best.pp, best.tp,
                                                             best.expert_parallel)


def test_links_block_and_cli_params_apply_in_order():
    src = D1.read_text(encoding="utf-8") + "\nlinks {\n  preset hccl-plan\n  param roce.alpha = 20us\n}\n"
    topo = compile_text(src, str(D1)).topology
    (jc,) = cost_jobs(topo, topo.jobs, ("decode",))
    assert jc.steps[0].params == "hccl-plan roce.alpha=20us"
    (jc2,) = cost_jobs(topo, topo.jobs, ("decode",), CostOptions(params=("roce.alpha=40us",)))
    assert jc2.steps[0].params == "hccl-plan roce.alpha=20us roce.alpha=40us"
    assert jc2.steps[0].total > jc.steps[0].total     # slower RoCE start-up, longer step
    doc = cost_document([jc], "x")
    jsonschema.validate(doc, load_schema("cost-report"))


def test_workload_attributes_and_cost_model_reach_the_schedule():
    text = D1.read_text(encoding="utf-8").replace(
        '  model "/models/DeepSeek-R1-W8A8"', "  cost_model qwen3-235b-a22b\n  decode_seqs 16")
    topo = compile_text(text, str(D1)).topology
    (jc,) = cost_jobs(topo, topo.jobs, ("decode",))
    assert jc.model.spec.name == "Qwen3-235B-A22B" and jc.model.source == "cost_model qwen3-235b-a22b"
    assert jc.steps[0].tokens == 16


@pytest.mark.parametrize("args, wanted", [
    (("--param", "roce.alpha=20"), "does not parse"),
    (("--param", "roce.latency=2us"), "is unknown"),
    (("--model", "gpt-9"), "unknown model preset"),
    (("--phase", "train"), "--phase must be"),
    (("--preset", "fast"), "--preset must be"),
    (("--job", "nope"), "no job named 'nope'"),
    (("--list-params", "--preset", "bogus"), "--preset must be"),
    (("--model", "qwen2.5-72b"), "job deepseek: DP2 x TP8 + EP cannot run Qwen2.5-72B"),
])
def test_cost_bad_command_line_is_a_usage_error(rtc, args, wanted):
    run = rtc("cost", str(D1), *args)
    assert run.returncode == 2
    assert wanted in run.stderr and run.stdout == ""


def test_cost_without_a_model_says_how_to_give_one(tmp_path, rtc):
    src = D1.read_text(encoding="utf-8").replace('  model "/models/DeepSeek-R1-W8A8"\n', "")
    path = tmp_path / "nomodel.rtc"
    path.write_text(src, encoding="utf-8")
    run = rtc("cost", str(path))
    assert run.returncode == 2 and "set `cost_model`" in run.stderr


def test_cost_lists_models_and_params(rtc):
    run = rtc("cost", "--list-models")
    assert run.returncode == 0 and "qwen2.5-72b" in run.stdout
    run = rtc("cost", "--list-params", "--preset", "hccl-plan")
    assert run.returncode == 0 and "roce.alpha" in run.stdout and "hccl-plan" in run.stdout


def test_rtc310_gives_the_cost_of_tp16_over_two_a2_servers():
    # reference cost-model.md 5.7 Example B: Qwen2.5-72B decode at 64 sequences, TP16
    # across two A2 servers against a layout with TP 8 inside each: several times slower
    text = D1.read_text(encoding="utf-8").replace("  dp 2\n", "").replace("  tp 8", "  tp 16")
    text = text.replace('  model "/models/DeepSeek-R1-W8A8"', "  cost_model qwen2.5-72b")
    text = text.replace("  expert_parallel on\n", "  model_kind dense\n")
    diags = [d for d in compile_text(text, str(D1)).diagnostics if d.code == "RTC310"]
    (d,) = diags
    ratio = float(d.message.split("about ")[1].split("x the communication")[0])
    assert 3.0 <= ratio <= 8.0, d.message
    assert "per generated token with" in d.message and "Qwen2.5-72B" in d.message
    assert "rtc advise" in d.hint


def test_rtc310_without_a_model_says_so():
    text = D1.read_text(encoding="utf-8").replace("  dp 2\n", "").replace("  tp 8", "  tp 16")
    text = text.replace('  model "/models/DeepSeek-R1-W8A8"\n', "")
    (d,) = [d for d in compile_text(text, str(D1)).diagnostics if d.code == "RTC310"]
    assert "set `cost_model`" in d.message


@pytest.mark.parametrize("name, published", [
    ("deepseek-v3", 671e9), ("qwen2.5-72b", 72.7e9), ("qwen3-235b-a22b", 235e9),
    ("qwen3-30b-a3b", 30.5e9), ("qwen3-32b", 32.8e9)])
def test_derived_parameter_counts_match_published_sizes(name, published):
    assert sum(parameter_counts(model_preset(name))) == pytest.approx(published, rel=0.01)


def test_weights_per_rank_shard_experts_by_ep_not_tp():
    m = model_preset("deepseek-v3")
    no_ep = weights_per_rank(m, Layout(dp=2, tp=8), 1.0)
    ep = weights_per_rank(m, Layout(dp=2, tp=8, expert_parallel=True), 1.0)
    _, routed, _ = parameter_counts(m)
    assert no_ep - ep == pytest.approx(routed / 8 - routed / 16)


@pytest.mark.parametrize("path, name", [
    ("/models/DeepSeek-R1-W8A8", "DeepSeek-V3"), ("/m/Qwen2.5-72B-Instruct/", "Qwen2.5-72B"),
    ("Qwen3-30B-A3B", "Qwen3-30B-A3B"), ("/models/llama-3-70b", None), (None, None)])
def test_model_guessed_from_the_served_path(path, name):
    got = guess_model(path)
    assert (got.name if got else None) == name


def test_eight_bit_checkpoints_count_one_byte_per_weight():
    topo = _topo(D1)
    assert job_model(topo.jobs[0]).bytes_per_param == 1.0
    assert job_model(topo.jobs[0], "qwen2.5-72b").bytes_per_param == 1.0  # served path says W8A8


def test_second_links_block_and_bad_param_line_are_located():
    base = "cluster c {\n  hardware atlas-800t-a2\n}\n"
    server = "server s {\n  devices 0..7\n  device_ip 10.0.0.1 step 1\n}\n"  # else RTC234
    got = compile_text(base + "links {\n  preset nominal\n}\nlinks {\n  preset nominal\n}\n" + server,
                       "x.rtc")
    assert [(d.code, d.span.line) for d in got.diagnostics] == [("RTC115", 7)]
    got = compile_text(base + "links {\n  param roce.alpha 20us\n}\n" + server, "x.rtc")
    assert [(d.code, d.span.line) for d in got.diagnostics][0][1] == 5
    assert "param LINK.FIELD = VALUE" in got.diagnostics[0].message


def test_too_large_durations_and_unknown_expansion_modes_are_rejected():
    from rtc.cost.errors import HcclAlgoError, ParamError
    from rtc.cost.hccl_algo import hccl_options
    from rtc.cost.units import parse_quantity

    with pytest.raises(ParamError, match="too large"):
        parse_quantity("1e400us", "duration")
    with pytest.raises(HcclAlgoError, match="HCCL_OP_EXPANSION_MODE 'GPU'"):
        hccl_options({"HCCL_OP_EXPANSION_MODE": "gpu"})
    assert hccl_options({"HCCL_OP_EXPANSION_MODE": "AIV"}).aiv


def test_rtc310_names_the_link_the_tp_group_crosses_on_a3():
    # TP 32 over two A3 servers of one super pod: the AllReduce crosses UB, not RoCE
    text = A3.read_text(encoding="utf-8").replace("  dp 2\n", "").replace("  tp 16", "  tp 32")
    text = text.replace("job deepseek {", "job deepseek {\n  cost_model deepseek-v3", 1)
    (d,) = [d for d in compile_text(text, str(A3)).diagnostics if d.code == "RTC310"]
    assert "crosses ub-a3 between servers" in d.hint, d.hint


def test_bottleneck_is_the_link_the_time_is_spent_on():
    # hccl-plan: HCCS's planning bandwidth (18.3 GB/s) is below RoCE's (20 GB/s), but the
    # cross-server MC2 exchange spends its time on RoCE (alpha 60 us)
    topo = _topo(D1)
    (jc,) = cost_jobs(topo, topo.jobs, ("decode",), CostOptions(preset="hccl-plan"))
    ep = [r for r in jc.steps[0].rows if r.kind == "ep"]
    assert {r.bottleneck for r in ep} == {"roce-200ge"}


def test_config_json_encodings_and_names(tmp_path):
    from rtc.cost.inputs import LocatedError, read_model

    bad = tmp_path / "m" / "config.json"
    bad.parent.mkdir()
    bad.write_bytes(b"\xff\xfe{")
    with pytest.raises(LocatedError, match="not UTF-8"):
        read_model(str(bad))
    bom = tmp_path / "Qwen-Local" / "config.json"
    bom.parent.mkdir()
    cfg = json.loads((ROOT / "tests" / "data" / "cost" / "config-qwen-like.json").read_text())
    cfg.pop("model_type")
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(cfg).encode())
    assert read_model(str(bom)).name == "Qwen-Local"            # the folder of config.json
    other = tmp_path / "qwen72.json"
    other.write_text(json.dumps(cfg))
    assert read_model(str(other)).name == "qwen72"              # the file's stem
    with pytest.raises(LocatedError, match="empty"):
        read_model(" ")


def test_links_block_spaces_duplicates_and_names():
    base = "cluster c {\n  hardware atlas-800t-a2\n}\n"
    server = "server s {\n  devices 0..7\n  device_ip 10.0.0.1 step 1\n}\n"  # else RTC234
    got = compile_text(base + "links {\n  param roce.alpha = 20 us\n  param roce.alpha = 30us\n"
                       "  preset nominal\n  preset nominal\n}\n" + server, "x.rtc")
    assert got.topology.links.params[0].value == "20 us"
    msgs = sorted((d.code, d.span.line, d.message) for d in got.diagnostics)
    assert msgs == [("RTC115", 8, "'preset' is given twice in the links block"),
                    ("RTC340", 6, "parameter 'roce.alpha' is given twice (first on line 5)")]


def test_expert_parallel_on_a_dense_model_points_at_expert_parallel():
    text = D1.read_text(encoding="utf-8").replace('  model "/models/DeepSeek-R1-W8A8"',
                                                  "  cost_model qwen3-32b")
    (d,) = [d for d in compile_text(text, str(D1)).diagnostics if d.code == "RTC342"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "expert_parallel" in t)
    assert d.span.line == line and "turn expert_parallel off" in d.hint


@pytest.mark.parametrize("cfg, wanted", [
    ({"num_key_value_heads": 0}, "num_key_value_heads must be above 0"),
    ({"head_dim": 0}, "head_dim must be above 0"),
    ({"num_experts": 4, "num_experts_per_tok": 8}, "num_experts_per_tok 8 is more than"),
])
def test_config_json_values_that_cannot_be(cfg, wanted):
    from rtc.cost.errors import ModelConfigError
    from rtc.cost.models import model_from_hf_config
    base = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8}
    with pytest.raises(ModelConfigError, match=wanted):
        model_from_hf_config({**base, **cfg})


def test_a_prefill_job_is_costed_in_prefill_by_default(rtc):
    run = rtc("cost", str(ROOT / "examples" / "pd-a3.rtc"), "--model", "deepseek-v3",
              "--format", "json")
    assert run.returncode == 0, run.stderr
    phases = {j["job"]: j["phases"][0]["phase"] for j in json.loads(run.stdout)["jobs"]}
    assert phases == {"prefill": "prefill", "decode": "decode"}


def test_advise_puts_tp_inside_an_nvlink_island():
    # issue 18: a PCIe server of 8 GPUs in two NVLink islands of four; TP 8 crosses PCIe
    topo = _topo(ROOT / "examples" / "gpu-pcie-2x4-dp2-tp4.rtc")
    advice = advise_job(topo, topo.jobs[0], options=CostOptions(model="qwen2.5-72b"))
    labels = [s.layout.label for s in advice.ranking.scores]
    assert labels[-1] == "TP8" and labels.index("DP2 x TP4") < labels.index("TP8")
    tp4 = advice.ranking.scores[labels.index("DP2 x TP4")]
    assert {r.bottleneck for r in tp4.step.rows if r.kind == "tp"} == {"nvlink-bridge"}
    tp8 = advice.ranking.scores[labels.index("TP8")]
    assert {r.bottleneck for r in tp8.step.rows if r.kind == "tp"} == {"pcie-gen4"}
    text = advice_text(advice, 10)
    assert "does not communicate at all" in text and "infx" not in text


def test_deepseek_weights_are_fp8_and_the_h100_example_fits():
    from rtc.cost.models import model_from_hf_config
    # the released DeepSeek-V3/R1 checkpoint is FP8: 671 B parameters on 16 x 80 GB fit
    topo = _topo(ROOT / "examples" / "gpu-h100-2node-dp2-tp8.rtc")
    assert job_model(topo.jobs[0]).bytes_per_param == 1.0
    assert not [d for d in compile_file(str(ROOT / "examples" / "gpu-h100-2node-dp2-tp8.rtc"))
                .diagnostics if d.code == "RTC343"]
    cfg = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
           "quantization_config": {"quant_method": "fp8"}}
    assert model_from_hf_config(cfg).weight_bytes == 1


def test_ascend_950_cost_and_advise_say_there_are_no_link_figures():
    """Fresh user 2, finding 11: `rtc cost` / `rtc advise` on Ascend 950 say what is missing
    (link figures for Ascend950), why (none published) and what to do, not "no link classes
    in links.toml"; usage-level exit 2 like every other cost input rtc cannot use."""
    from typer.testing import CliRunner

    from conftest import EXAMPLES
    from rtc.cli import app

    for cmd in ("cost", "advise"):
        res = CliRunner().invoke(app, [cmd, str(EXAMPLES / "a5-2node-dp2-tp8.rtc"),
                                       "--model", "deepseek-v3"])
        assert res.exit_code == 2
        out = res.output
        assert "no link figures for Ascend950 yet" in out and "links.toml" not in out
        assert "hint: `rtc check` still checks the layout" in out


def test_rtc310_on_ascend_950_names_ub_and_cites_no_absent_rules():
    """RTC310 over two A5 nodes of one super pod: no "see RTC340-RTC342" (none is emitted)
    and the hint names the super pod's UB, not "RoCE instead of HCCS"."""
    from conftest import EXAMPLES

    text = (EXAMPLES / "a5-2node-dp2-tp8.rtc").read_text(encoding="utf-8")
    text = text.replace("  dp 2\n", "  dp 1\n").replace("  tp 8\n",
                                                        "  tp 16\n  cost_model deepseek-v3\n")
    result = compile_text(text, "a5.rtc")
    (d,) = [d for d in result.diagnostics if d.code == "RTC310"]
    assert not {"RTC340", "RTC341", "RTC342"} & {x.code for x in result.diagnostics}
    assert "RTC34" not in d.message and "(not costed: rtc has no link figures for Ascend950 yet)" in d.message
    assert "the UB links between the servers of super pod 0 instead of the UB mesh" in d.hint
    assert "HCCS" not in d.hint


def test_rtc_help_names_preflight_nccl():
    """Fresh user 2, finding 19: `rtc --help` shows that `rtc preflight` has `nccl`."""
    from typer.testing import CliRunner

    from rtc.cli import app

    out = CliRunner().invoke(app, ["--help"]).output
    line = next(x for x in out.splitlines() if x.strip().startswith("preflight "))
    assert "`nccl` (GPUs)" in line and "`report` (NPUs)" in line


def test_advise_on_gpu_hardware_counts_gpus_not_npus():
    # a fresh user's finding: "2 servers x 8 NPUs (hgx-h100)"
    topo = compile_file(str(ROOT / "examples" / "gpu-h100-2node-dp2-tp8.rtc")).topology
    head = advice_text(advise_job(topo, topo.jobs[0]), 3).splitlines()[0]
    assert "2 servers x 8 GPUs (hgx-h100)" in head, head
