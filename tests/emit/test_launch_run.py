"""The generated launch scripts run under bash with stub executables first on PATH
(tests/bin-stubs) and start exactly the argv the plan says; every generated script and
env file passes shellcheck."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, run_rtc
from stubs import run_script

SMALL = ["a2-1node-tp8", "a2-2node-dp2-tp8", "a2-2node-pp2-tp8", "a3-2node-dp2-tp16",
         "doc-2x2", "pd-a3"]


def compile_to(tmp: Path, example: str | Path) -> Path:
    src = example if isinstance(example, Path) else EXAMPLES / f"{example}.rtc"
    out = tmp / "build"
    res = run_rtc("compile", str(src), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    return out


def only(calls, name):
    return [c for c in calls if c.name == name]


def test_d1_head_and_worker_argv(tmp_path: Path):
    out = compile_to(tmp_path, "a2-2node-dp2-tp8")
    proc, calls = run_script(out / "atlas-01.sh", tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (head,) = only(calls, "vllm")
    assert head.argv == [
        "serve", "/models/DeepSeek-R1-W8A8", "--port", "8077",
        "--data-parallel-size", "2", "--data-parallel-size-local", "1",
        "--data-parallel-address", "10.0.0.6",
        "--data-parallel-rpc-port", "12980", "--tensor-parallel-size", "8",
        "--enable-expert-parallel", "--api-server-count", "1"]
    # issue 13: the internal-LB head passes no start rank (an explicit 0 selects
    # hybrid/external LB from vLLM 0.28, which rejects the headless worker)
    assert "--data-parallel-start-rank" not in head.argv
    assert "--headless" not in head.argv
    assert head.env["HCCL_IF_IP"] == "10.0.0.6"
    assert head.env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert head.env["HCCL_BUFFSIZE"] == "1024"
    assert head.env["RANK_TABLE_FILE"] == str(out / "hccl.json")
    # the script says what it starts
    assert "rtc atlas-01: vllm serve /models/DeepSeek-R1-W8A8 --port 8077" in proc.stdout

    proc, calls = run_script(out / "atlas-02.sh", tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (worker,) = only(calls, "vllm")
    assert worker.argv == [
        "serve", "/models/DeepSeek-R1-W8A8", "--headless",
        "--data-parallel-size", "2", "--data-parallel-size-local", "1",
        "--data-parallel-start-rank", "1", "--data-parallel-address", "10.0.0.6",
        "--data-parallel-rpc-port", "12980", "--tensor-parallel-size", "8",
        "--enable-expert-parallel", "--api-server-count", "0", "--port", "8078"]
    assert worker.env["HCCL_IF_IP"] == "10.0.0.5"
    # the expected flag run, in this order (without the head's start rank 0)
    want = ["--data-parallel-size", "2", "--data-parallel-size-local", "1",
            "--data-parallel-address", "10.0.0.6",
            "--data-parallel-rpc-port", "12980", "--tensor-parallel-size", "8",
            "--enable-expert-parallel"]
    i = head.argv.index("--data-parallel-size")
    assert head.argv[i:i + len(want)] == want


def test_model_can_be_overridden_and_is_required_when_absent(tmp_path: Path):
    out = compile_to(tmp_path, "a2-2node-dp2-tp8")
    _, calls = run_script(out / "atlas-01.sh", tmp=tmp_path, env={"MODEL": "/other"})
    assert only(calls, "vllm")[0].argv[1] == "/other"
    out3 = compile_to(tmp_path / "d3", "a2-1node-tp8")
    proc, calls = run_script(out3 / "atlas-01.sh", tmp=tmp_path)
    assert proc.returncode != 0 and "set MODEL" in proc.stderr
    assert calls == []
    proc, calls = run_script(out3 / "atlas-01.sh", tmp=tmp_path, env={"MODEL": "/m"})
    assert proc.returncode == 0, proc.stderr
    assert only(calls, "vllm")[0].argv == ["serve", "/m", "--port", "8000",
                                           "--tensor-parallel-size", "8",
                                           "--enable-expert-parallel"]


def test_d2_ray_form(tmp_path: Path):
    out = compile_to(tmp_path, "a2-2node-pp2-tp8")
    env = {"MODEL": "/m"}
    proc, calls = run_script(out / "atlas-01.sh", "ray", tmp=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [(c.name, c.argv) for c in calls] == [
        ("ray", ["start", "--head", "--node-ip-address=10.0.0.6", "--port=6379", "--num-gpus=8"])]
    ray_env = calls[0].env
    assert ray_env["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"] == "1"
    assert ray_env["HCCL_IF_IP"] == "10.0.0.6"
    assert ray_env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert ray_env["HCCL_IF_BASE_PORT"] == "50000"

    proc, calls = run_script(out / "atlas-02.sh", tmp=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [(c.name, c.argv) for c in calls] == [
        ("ray", ["start", "--address=10.0.0.6:6379", "--node-ip-address=10.0.0.5",
                 "--num-gpus=8"])]
    assert calls[0].env["HCCL_IF_IP"] == "10.0.0.5"

    proc, calls = run_script(out / "atlas-01.sh", "serve", tmp=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [(c.name, c.argv) for c in calls] == [
        ("vllm", ["serve", "/m", "--port", "8000", "--distributed-executor-backend", "ray",
                  "--pipeline-parallel-size", "2", "--tensor-parallel-size", "8"])]
    # no step: Ray first, then vllm serve
    _, calls = run_script(out / "atlas-01.sh", tmp=tmp_path, env=env)
    assert [c.name for c in calls] == ["ray", "vllm"]
    proc, _ = run_script(out / "atlas-01.sh", "bogus", tmp=tmp_path, env=env)
    assert proc.returncode == 2


def test_d5_prefill_decode_kv_transfer_config(tmp_path: Path):
    out = compile_to(tmp_path, "pd-a3")
    configs = {}
    for server, role in (("p1", "kv_producer"), ("p2", "kv_producer"),
                         ("d1", "kv_consumer"), ("d2", "kv_consumer")):
        proc, calls = run_script(out / f"{server}.sh", tmp=tmp_path, env={"MODEL": "/m"})
        assert proc.returncode == 0, proc.stderr
        (call,) = only(calls, "vllm")
        cfg = json.loads(call.argv[call.argv.index("--kv-transfer-config") + 1])
        assert cfg["kv_role"] == role
        assert cfg["kv_connector"] == "MooncakeLayerwiseConnector"
        assert cfg["kv_connector_module_path"] == \
            "vllm_ascend.distributed.mooncake_layerwise_connector"
        assert cfg["kv_port"] == "14579"
        configs[server] = (call.argv, cfg)
    extras = {json.dumps(c["kv_connector_extra_config"], sort_keys=True)
              for _, c in configs.values()}
    assert extras == {json.dumps({"decode": {"dp_size": 8, "tp_size": 4},
                                  "prefill": {"dp_size": 2, "tp_size": 16}}, sort_keys=True)}
    assert len({c["engine_id"] for _, c in configs.values()}) == 4
    p1, d2 = configs["p1"][0], configs["d2"][0]
    # each side is its own DP group with its own head and rpc port
    assert p1[p1.index("--data-parallel-address") + 1] == "10.0.1.1"
    assert d2[d2.index("--data-parallel-address") + 1] == "10.0.1.11"
    assert d2[d2.index("--data-parallel-start-rank") + 1] == "4"
    assert d2[d2.index("--data-parallel-size-local") + 1] == "4"
    assert "--headless" in d2 and "--headless" not in p1


EXTERNAL = """
cluster ext {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eth0
  devices 0..7
  device_ip 6.0.0.1 step 1
}
server b {
  host 10.0.0.2
  nic eth0
  devices 0..7
  device_ip 6.0.1.1 step 1
}
job serve {
  servers a, b
  dp 4
  tp 4
  lb external
  port 9000
  model "/m/x y"
  args "--max-model-len 8192"
}
"""


def test_external_lb_one_process_per_dp_rank(tmp_path: Path):
    src = tmp_path / "ext.rtc"
    src.write_text(EXTERNAL)
    out = compile_to(tmp_path, src)
    proc, calls = run_script(out / "b.sh", tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    vllm = only(calls, "vllm")
    assert sorted((c.env["ASCEND_RT_VISIBLE_DEVICES"], c.argv[c.argv.index("--port") + 1],
                   c.argv[c.argv.index("--data-parallel-rank") + 1]) for c in vllm) == [
        ("0,1,2,3", "9000", "2"), ("4,5,6,7", "9001", "3")]
    for c in vllm:
        assert c.argv[1] == "/m/x y"
        assert c.argv[-2:] == ["--max-model-len", "8192"]
        assert "--headless" not in c.argv


MINDSPORE = """
cluster ms {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..1
  device_ip 6.0.0.1, 6.0.0.2
}
server b {
  host 10.0.0.2
  devices 0..1
  device_ip 6.0.0.3, 6.0.0.4
}
job train {
  role train
  framework mindspore
  servers a, b
  dp 2
  tp 2
  entry "train.py"
  args "--epochs 1"
}
"""


def test_rank_table_launch_sets_rank_id_and_device_id(tmp_path: Path):
    src = tmp_path / "ms.rtc"
    src.write_text(MINDSPORE)
    out = compile_to(tmp_path, src)
    proc, calls = run_script(out / "b.sh", tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = sorted((c.env["RANK_ID"], c.env["DEVICE_ID"], c.env["RANK_SIZE"], c.argv)
                 for c in only(calls, "python3"))
    assert got == [("2", "0", "4", ["train.py", "--epochs", "1"]),
                   ("3", "1", "4", ["train.py", "--epochs", "1"])]
    assert all(c.env["RANK_TABLE_FILE"] == str(out / "hccl.json") for c in calls)


def generated_scripts(tmp: Path) -> list[Path]:
    files = []
    for ex in SMALL:
        out = tmp / ex
        res = run_rtc("compile", str(EXAMPLES / f"{ex}.rtc"), "--out-dir", str(out),
                      "--no-diagrams")
        assert res.returncode == 0, res.stderr
        files += sorted(out.glob("*.sh")) + sorted(out.glob("*.env"))
    return files


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_passes_on_every_generated_script(tmp_path: Path):
    files = generated_scripts(tmp_path)
    for name in ("ext", "ms"):
        src = tmp_path / f"{name}.rtc"
        src.write_text(EXTERNAL if name == "ext" else MINDSPORE)
        out = tmp_path / f"out-{name}"
        assert run_rtc("compile", str(src), "--out-dir", str(out)).returncode == 0
        files += sorted(out.glob("*.sh")) + sorted(out.glob("*.env"))
    assert len(files) > 20
    res = subprocess.run(["shellcheck", "-s", "bash", *map(str, files)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stdout[:3000]
