"""`rtc groups`: text and JSON output (validated against schemas/groups.schema.json),
refusal on errors, usage errors."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import CASES, EXAMPLES, run_rtc
from rtc.api import compile_file
from rtc.report.groups import groups_document, render_json
from rtc.resources import load_schema

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
D2 = EXAMPLES / "a2-2node-pp2-tp8.rtc"
D5 = EXAMPLES / "pd-a3.rtc"

D2_PP_TEXT = """\
job deepseek (framework vllm): dp 1 x pp 2 x pcp 1 x tp 8 = 16 ranks on 2 servers
  MoE model: all DP replicas share one world of 16 ranks; dp groups apply; no ep group (expert_parallel off)
  atlas-01: ranks 0..7, devices 0..7, DP replica 0 spans 2 servers (this is server 1 of 2), data_parallel_start_rank 0
  atlas-02: ranks 8..15, devices 0..7, DP replica 0 spans 2 servers (this is server 2 of 2), data_parallel_start_rank 0

pp groups: 8 of 2 ranks, 8 cross servers
  pp 0: [0, 8]  crosses servers: atlas-01, atlas-02
    0 (atlas-01:0 6.0.2.1)
    8 (atlas-02:0 6.0.2.17)
  pp 1: [1, 9]  crosses servers: atlas-01, atlas-02
    1 (atlas-01:1 6.0.2.3)
    9 (atlas-02:1 6.0.2.19)
  pp 2: [2, 10]  crosses servers: atlas-01, atlas-02
    2 (atlas-01:2 6.0.2.5)
    10 (atlas-02:2 6.0.2.21)
  pp 3: [3, 11]  crosses servers: atlas-01, atlas-02
    3 (atlas-01:3 6.0.2.7)
    11 (atlas-02:3 6.0.2.23)
  pp 4: [4, 12]  crosses servers: atlas-01, atlas-02
    4 (atlas-01:4 6.0.2.9)
    12 (atlas-02:4 6.0.2.25)
  pp 5: [5, 13]  crosses servers: atlas-01, atlas-02
    5 (atlas-01:5 6.0.2.11)
    13 (atlas-02:5 6.0.2.27)
  pp 6: [6, 14]  crosses servers: atlas-01, atlas-02
    6 (atlas-01:6 6.0.2.13)
    14 (atlas-02:6 6.0.2.29)
  pp 7: [7, 15]  crosses servers: atlas-01, atlas-02
    7 (atlas-01:7 6.0.2.15)
    15 (atlas-02:7 6.0.2.31)
"""


def _validate(doc: dict) -> None:
    schema = load_schema("groups")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


def test_d2_pp_text():
    res = run_rtc("groups", str(D2), "--dim", "pp")
    assert res.returncode == 0, res.stderr
    assert res.stdout == D2_PP_TEXT


def test_d2_pp_json():
    res = run_rtc("groups", str(D2), "--dim", "pp", "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    _validate(doc)
    (job,) = doc["jobs"]
    assert list(job["groups"]) == ["pp"]
    pp = job["groups"]["pp"]
    assert (pp["count"], pp["size"], pp["crossing"]) == (8, 2, 8)
    assert [g["ranks"] for g in pp["groups"]] == [[i, i + 8] for i in range(8)]
    first = pp["groups"][0]
    assert first["cross_server"] is True and first["servers"] == ["atlas-01", "atlas-02"]
    assert first["members"] == [
        {"rank": 0, "rank_id": 0, "server": "atlas-01", "device_id": 0, "device_ip": "6.0.2.1"},
        {"rank": 8, "rank_id": 8, "server": "atlas-02", "device_id": 0, "device_ip": "6.0.2.17"}]
    assert [(n["server"], n["replica"]) for n in job["nodes"]] == [
        ("atlas-01", {"dp_rank": 0, "position": 0, "servers": 2}),
        ("atlas-02", {"dp_rank": 0, "position": 1, "servers": 2})]
    assert job["sizes"] == {"dp": 1, "pp": 2, "pcp": 1, "tp": 8, "replica": 16, "world": 16}
    # deterministic: the same bytes twice
    assert run_rtc("groups", str(D2), "--dim", "pp", "--format", "json").stdout == res.stdout


def test_d1_all_dims_json_and_tp_stays_inside_servers():
    res = run_rtc("groups", str(D1), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    _validate(doc)
    groups = doc["jobs"][0]["groups"]
    assert list(groups) == ["tp", "pcp", "pp", "dp", "ep"]
    assert [g["ranks"] for g in groups["tp"]["groups"]] == [list(range(8)), list(range(8, 16))]
    assert groups["tp"]["crossing"] == 0
    assert [g["ranks"] for g in groups["dp"]["groups"]][:3] == [[0, 8], [1, 9], [2, 10]]
    assert groups["dp"]["crossing"] == 8
    assert groups["ep"]["groups"][0]["ranks"] == list(range(16))
    nodes = doc["jobs"][0]["nodes"]
    assert [(n["server"], n["dp_local"], n["dp_start"]) for n in nodes] == [
        ("atlas-01", 1, 0), ("atlas-02", 1, 1)]


def test_d5_decode_json_nodes():
    res = run_rtc("groups", str(D5), "--job", "decode", "--dim", "tp", "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    _validate(doc)
    (job,) = doc["jobs"]
    assert job["job"] == "decode"
    assert [(n["server"], n["dp_local"], n["dp_start"], n["first_rank"]) for n in job["nodes"]] == [
        ("d1", 4, 0, 0), ("d2", 4, 4, 16)]
    tp = job["groups"]["tp"]
    assert (tp["count"], tp["size"], tp["crossing"]) == (8, 4, 0)
    assert tp["groups"][4]["members"][0] == {"rank": 16, "rank_id": 16, "server": "d2",
                                             "device_id": 0, "device_ip": "10.20.12.1"}


def test_all_jobs_by_default_in_declared_order():
    res = run_rtc("groups", str(D5), "--dim", "tp")
    assert res.returncode == 0
    heads = [line for line in res.stdout.splitlines() if line.startswith("job ")]
    assert heads == [
        "job prefill (framework vllm): dp 2 x pp 1 x pcp 1 x tp 16 = 32 ranks on 2 servers",
        "job decode (framework vllm): dp 8 x pp 1 x pcp 1 x tp 4 = 32 ranks on 2 servers"]


def test_absent_dims_are_explained():
    res = run_rtc("groups", str(D2), "--dim", "ep")
    assert res.returncode == 0
    assert res.stdout.splitlines()[-1].startswith("ep groups: none (expert_parallel is off")
    dense = CASES / "checks" / "pass-dense-dp2.rtc"
    res = run_rtc("groups", str(dense), "--dim", "dp", "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    _validate(doc)
    job = doc["jobs"][0]
    assert job["groups"]["dp"]["present"] is False
    assert job["groups"]["dp"]["reason"].startswith("dense model")
    assert job["independent_replicas"] is True
    assert job["worlds"] == [{"first_rank": 0, "size": 8}, {"first_rank": 8, "size": 8}]
    res = run_rtc("groups", str(dense), "--dim", "tp")
    assert "dense model: every DP replica is its own world of 8 ranks" in res.stdout


def test_cross_server_tp_marked():
    res = run_rtc("groups", str(CASES / "checks" / "RTC310-cross-node-tp.rtc"), "--dim", "tp")
    assert res.returncode == 0
    assert "  tp 0: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]  crosses servers: a, b" \
        in res.stdout
    assert "tp groups: 1 of 16 ranks, 1 cross servers" in res.stdout
    assert "warning[RTC310]" in res.stderr  # warnings are shown, output still printed


def test_refuses_on_errors():
    res = run_rtc("groups", str(CASES / "checks" / "RTC303-node-over-capacity.rtc"))
    assert res.returncode == 1
    assert res.stdout == ""
    assert "error[RTC303]" in res.stderr


@pytest.mark.parametrize("args, message", [
    (["--dim", "xx"], "--dim must be one of"),
    (["--format", "yaml"], "--format must be text or json"),
    (["--job", "nope"], "no job named 'nope'"),
])
def test_usage_errors(args, message):
    res = run_rtc("groups", str(D2), *args)
    assert res.returncode == 2 and message in res.stderr


def test_file_without_job_is_a_usage_error():
    res = run_rtc("groups", str(EXAMPLES / "doc-2x2.rtc"))
    assert res.returncode == 2 and "has no job" in res.stderr


def test_missing_file_is_exit_2():
    res = run_rtc("groups", "no-such-file.rtc")
    assert res.returncode == 2 and "cannot read no-such-file.rtc" in res.stderr


def test_megatron_document_validates():
    text = (EXAMPLES / "family-a3-1024.rtc").read_text(encoding="utf-8")
    text = text.replace("node[0000..1023]", "node[0000..0003]").replace("dp 1024", "dp 2\n  pp 2")
    from rtc.api import compile_text

    result = compile_text(text, "fam.rtc")
    assert result.ok, [d.message for d in result.diagnostics]
    doc = groups_document(result.topology, result.topology.jobs, ("pp", "dp", "ep"), "fam.rtc")
    _validate(doc)
    job = doc["jobs"][0]
    assert (job["layout"], job["order"]) == ("megatron", "tp-cp-ep-dp-pp")
    # Megatron's default order puts PP outermost: rank = tp + 16*dp + 32*pp
    assert job["groups"]["pp"]["groups"][0]["ranks"] == [0, 32]
    assert job["groups"]["dp"]["groups"][0]["ranks"] == [0, 16]
    assert job["groups"]["ep"]["present"] is False
    text_out = render_json(doc)
    assert json.loads(text_out) == doc and text_out.endswith("}\n")


def test_render_json_is_plain_json_with_one_line_groups():
    topo = compile_file(str(D1)).topology
    doc = groups_document(topo, topo.jobs, ("tp",), "d1.rtc")
    text = render_json(doc)
    assert json.loads(text) == doc
    lines = text.splitlines()
    assert sum(1 for line in lines if line.lstrip().startswith('{"index": ')) == 2



def test_groups_json_is_the_document_rendered():
    # `rtc groups --format json` joins each group's line from per-rank member texts
    # (issue 19); it must be exactly the rendered document, for every kind of group,
    # also with a rank without a device IP (null) and a non-ASCII server name.
    from rtc.api import compile_text
    from rtc.report.groups import _dim_document, _Labels, groups_json

    topo = compile_text(D5.read_text(encoding="utf-8"), "pd.rtc").topology
    dims = ("tp", "pcp", "pp", "dp", "ep")
    assert groups_json(topo, topo.jobs, dims, "pd.rtc") == \
        render_json(groups_document(topo, topo.jobs, dims, "pd.rtc"))
    for job in topo.jobs:
        pl = topo.placement(job)
        labels = _Labels(pl)
        labels.ip[0], labels.server[0] = None, "nœud-0"
        plain = _dim_document(pl, labels, "tp")
        encoded = _dim_document(pl, labels, "tp", encoded=True)
        assert [json.loads(g) for g in encoded["groups"]] == plain["groups"]
        assert '"nœud-0"' in encoded["groups"][0] and '"device_ip": null' in encoded["groups"][0]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_full_or_closed_stdout_is_rtc001_not_a_traceback(fmt: str):
    import subprocess

    from conftest import rtc_command

    args = rtc_command() + ["groups", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "--format", fmt]
    with open("/dev/full", "w") as full:
        res = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert res.returncode == 2 and "RTC001" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         timeout=60, close_fds=True, pass_fds=())
    assert res.returncode == 0
    closed = subprocess.run(["sh", "-c", " ".join(f"'{a}'" for a in args) + " >&-"],
                            stderr=subprocess.PIPE, text=True, timeout=60)
    assert closed.returncode == 2 and "RTC001" in closed.stderr
