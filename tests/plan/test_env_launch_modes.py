"""Env files (quoting, container numbering, several jobs on one server), the other launch
modes (hybrid LB, --nnodes, version comments), the LLMDataDist PD rank table, and the
RTC5xx rule cases."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema

from conftest import CASES, expectations, run_rtc
from rtc.resources import load_schema
from rtc.schema import validate_document
from stubs import run_script

A2 = """
cluster c {
  hardware atlas-800t-a2
  %s
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
"""


def build(tmp: Path, text: str, name: str = "t.rtc") -> Path:
    src = tmp / name
    src.write_text(text)
    out = tmp / "out"
    res = run_rtc("compile", str(src), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    return out


def sourced(env_file: Path, name: str) -> str:
    res = subprocess.run(["bash", "-c", f'set -eu; . "$1"; printf %s "${name}"', "x",
                          str(env_file)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_env_values_are_quoted_for_sh_and_header_names_the_plan(tmp_path: Path):
    text = A2 % "" + """
job j {
  servers a, b
  dp 2
  tp 8
  env WEIRD = "it's $HOME `x` \\"q\\" ; rm -rf /"
  env HCCL_SOCKET_IFNAME = "=eno0"
}
"""
    out = build(tmp_path, text, "weird.rtc")
    env = out / "a.env"
    assert sourced(env, "WEIRD") == "it's $HOME `x` \"q\" ; rm -rf /"
    assert sourced(env, "HCCL_SOCKET_IFNAME") == "=eno0"      # the job's value replaces nic
    assert sourced(env, "GLOO_SOCKET_IFNAME") == "eno0"
    first = env.read_text().splitlines()[0]
    assert "weird.rtc" in first and "job j" in first and str(tmp_path) not in first
    assert sourced(env, "RANK_TABLE_FILE") == "./hccl.json"
    # and the files pass shellcheck as they are (no SC1097 for ==, no SC2016 for a literal $)
    res = subprocess.run(["shellcheck", str(env), str(out / "a.sh")], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stdout


def test_model_path_with_quotes_parses_and_keeps_its_value(tmp_path: Path):
    text = A2 % "" + """
job j {
  servers a
  tp 8
  model "/models/Qwen's \\"7B\\" $HOME"
}
"""
    out = build(tmp_path, text, "q.rtc")
    script = out / "a.sh"
    assert subprocess.run(["bash", "-n", str(script)], timeout=60).returncode == 0
    assert subprocess.run(["shellcheck", str(script)], capture_output=True,
                          timeout=120).returncode == 0
    line = next(x for x in script.read_text().splitlines() if "MODEL=" in x and "||" in x)
    res = subprocess.run(["bash", "-c", f'unset MODEL; {line}\nprintf %s "$MODEL"'],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout == "/models/Qwen's \"7B\" $HOME"


def test_container_numbering_and_shared_servers(tmp_path: Path):
    text = """
cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eno0
  devices 4..7
  visible_devices 4..7
}
job x {
  on a devices 4..5
  tp 2
}
job y {
  on a devices 6..7
  tp 2
}
"""
    out = build(tmp_path, text)
    names = sorted(p.name for p in out.iterdir())
    assert "a.x.env" in names and "a.y.sh" in names and "hccl-x.json" in names
    assert sourced(out / "a.x.env", "ASCEND_RT_VISIBLE_DEVICES") == "0,1"
    assert sourced(out / "a.y.env", "ASCEND_RT_VISIBLE_DEVICES") == "2,3"
    assert sourced(out / "a.y.env", "RANK_TABLE_FILE") == "./hccl-y.json"
    # the second job's ports were moved off the first's (port plan): the env and argv follow
    plan = json.loads((out / "plan.json").read_text())
    y = next(j for j in plan["jobs"] if j["name"] == "y")
    assert sourced(out / "a.y.env", "HCCL_IF_BASE_PORT") == "60032"
    assert "--port" in y["nodes"][0]["processes"][0]["argv"]
    assert y["nodes"][0]["processes"][0]["argv"][y["nodes"][0]["processes"][0]["argv"]
                                                 .index("--port") + 1] == "8001"


def test_hybrid_lb_and_version_comment(tmp_path: Path):
    text = A2 % "vllm_version 0.11.0" + """
job j {
  servers a, b
  dp 4
  tp 4
  lb hybrid
  model "/m"
}
"""
    out = build(tmp_path, text)
    assert "# Flags for vLLM 0.11.0 (cluster vllm_version)." in (out / "a.sh").read_text()
    for server, start in (("a", "0"), ("b", "2")):
        proc, calls = run_script(out / f"{server}.sh", tmp=tmp_path)
        assert proc.returncode == 0, proc.stderr
        (c,) = calls
        assert "--data-parallel-hybrid-lb" in c.argv and "--headless" not in c.argv
        assert c.argv[c.argv.index("--data-parallel-start-rank") + 1] == start
        assert c.argv[c.argv.index("--data-parallel-address") + 1] == "10.0.0.1"


def test_nnodes_form_without_ray(tmp_path: Path):
    text = A2 % "" + """
job j {
  servers a, b
  pp 2
  tp 8
  executor mp
  master_port 29600
  model "/m"
}
"""
    out = build(tmp_path, text)
    assert "needs vLLM 0.11.1 or later" in (out / "a.sh").read_text()
    argv = {}
    for server in ("a", "b"):
        proc, calls = run_script(out / f"{server}.sh", tmp=tmp_path)
        assert proc.returncode == 0, proc.stderr
        argv[server] = calls[0].argv
    assert argv["a"] == ["serve", "/m", "--port", "8000", "--nnodes", "2", "--node-rank", "0",
                         "--master-addr", "10.0.0.1", "--master-port", "29600",
                         "--pipeline-parallel-size", "2", "--tensor-parallel-size", "8",
                         "--distributed-executor-backend", "mp"]
    assert argv["b"][:6] == ["serve", "/m", "--headless", "--nnodes", "2", "--node-rank"]
    assert argv["b"][6] == "1"


def test_llmdatadist_pd_rank_table(tmp_path: Path):
    src = CASES / "checks" / "pass-launch-settings.rtc"
    out = tmp_path / "out"
    res = run_rtc("compile", str(src), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "pd-ranktable.json").read_text())
    jsonschema.Draft202012Validator(load_schema("pd-ranktable")).validate(doc)
    assert validate_document(doc, "pd-ranktable", filename="pd") == []
    assert doc["version"] == "1.2" and doc["server_count"] == "4"
    pre, dec = doc["prefill_device_list"], doc["decode_device_list"]
    assert [d["cluster_id"] for d in pre + dec] == [str(i) for i in range(1, 65)]
    assert pre[0] == {"server_id": "10.0.1.1", "device_id": "0", "device_ip": "10.20.1.1",
                      "super_pod_id": "0", "super_device_id": "0", "cluster_id": "1"}
    assert dec[-1]["server_id"] == "10.0.1.12" and dec[-1]["super_device_id"] == "63"
    for s in ("p1", "d2"):
        assert sourced(out / f"{s}.env", "DISAGGREGATED_PREFILL_RANK_TABLE_PATH") == \
            "./pd-ranktable.json"
    # external LB decode: one process per DP rank, consumer role, no extra config
    text = (out / "d2.sh").read_text()
    assert text.count("--data-parallel-rank") == 4 and "kv_consumer" in text
    assert "LLMDataDistCMgrConnector" in text and "kv_connector_extra_config" not in text


def test_every_launch_rule_has_a_failing_case():
    from rtc.catalogue import RULES as ALL_RULES

    cases = sorted((CASES / "checks").glob("RTC5*.rtc"))
    # rules of launched processes only scripts can break (RTC532) have their case as a
    # script (rtc lint, tests/cases/scripts)
    cases += sorted((CASES / "scripts").glob("RTC5*.sh"))
    covered = {expectations(p)[0][0] for p in cases}
    wanted = {r.code for r in ALL_RULES if "RTC500" <= r.code <= "RTC559"}
    assert wanted and wanted <= covered, sorted(wanted - covered)


def test_two_jobs_on_shared_servers_get_their_own_ray_and_master_ports(tmp_path: Path):
    jobs = """
job x {
  on a devices 0..3
  on b devices 0..3
  pp 2
  tp 4
  model "/m"
  EXTRA
}
job y {
  on a devices 4..7
  on b devices 4..7
  pp 2
  tp 4
  model "/m"
  EXTRA
}
"""
    out = build(tmp_path, A2 % "" + jobs.replace("EXTRA", ""), "ray.rtc")
    heads = [(out / f"a.{j}.sh").read_text() for j in ("x", "y")]
    assert "--port=6379" in heads[0] and "--port=6380" in heads[1]
    assert "--address=10.0.0.1:6380" in (out / "b.y.sh").read_text()
    mp = tmp_path / "mp"
    mp.mkdir()
    out = build(mp, A2 % "" + jobs.replace("EXTRA", "executor mp"), "mp.rtc")
    x, y = ((out / f"{s}.{j}.sh").read_text() for s, j in (("b", "x"), ("b", "y")))
    assert "--master-port 29501" in x and "--master-port 29502" in y
    plan = json.loads((out / "plan.json").read_text())
    assert sorted((p["job"], p["lo"]) for p in plan["ports"] if p["kind"] == "master") == \
        [("x", 29501), ("y", 29502)]


def test_independent_dense_replicas_get_no_rank_table_file(tmp_path: Path):
    job = """
job j {
  servers a, b
  dp 4
  tp 4
  model_kind KIND
  lb external
  model "/m"
}
"""
    dense = build(tmp_path, A2 % "" + job.replace("KIND", "dense"), "dense.rtc")
    assert "RANK_TABLE_FILE" not in (dense / "a.env").read_text()
    moe_dir = tmp_path / "moe"
    moe_dir.mkdir()
    moe = build(moe_dir, A2 % "" + job.replace("KIND", "moe").replace("  lb external\n", ""),
                "moe.rtc")
    assert sourced(moe / "a.env", "RANK_TABLE_FILE") == "./hccl.json"


def test_context_parallel_flags_are_not_promised_for_old_vllm(tmp_path: Path):
    out = build(tmp_path, A2 % "" + "job j {\n  servers a, b\n  dp 2\n  dcp 2\n  tp 8\n"
                "  model \"/m\"\n}\n", "dcp.rtc")
    script = (out / "a.sh").read_text()
    assert "--decode-context-parallel-size" in script
    assert "# --decode-context-parallel-size is newer than vLLM 0.9" in script


def test_per_process_env_override_is_named_as_such():
    from rtc.api import compile_text

    text = A2 % "" + ("job j {\n  framework torch_npu\n  servers a\n  tp 8\n"
                      "  entry \"train.py\"\n  env RANK_ID = 3\n}\n")
    found = [d for d in compile_text(text, "r.rtc").diagnostics if d.code == "RTC507"]
    assert len(found) == 1 and "rtc sets it per process" in found[0].message
