"""The preflight Job of ``--target k8s`` numbers devices as its pods see them.

The device plugin mounts the n NPUs / GPUs it allocates and the container numbers them from
0, so the AllReduce sweep in a pod must use ``ASCEND_RT_VISIBLE_DEVICES`` /
``CUDA_VISIBLE_DEVICES`` ``0..n-1`` (as the LeaderWorkerSet's pods do), while
``hccn_tool -i`` keeps the physical ids the plugin's ``ASCEND_VISIBLE_DEVICES`` names.
Before: a server with ``devices 3, 4`` swept with ``ASCEND_RT_VISIBLE_DEVICES=3,4`` in a pod
that holds two NPUs, numbered 0 and 1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import run_main

SUBSET = """
cluster c {
  hardware atlas-800t-a2
}
server atlas-01 {
  host 10.0.0.6
  nic eno0
  devices 3, 4
  device_ip 6.0.2.7 step 2
  gateway 6.0.2.6 step 2
  prefix 31
}
job j {
  role serve
  framework vllm
  servers atlas-01
  tp 2
  model "/models/m"
}
"""


def _compile(tmp_path: Path, monkeypatch, text: str) -> dict[str, list]:
    src = tmp_path / "sub.rtc"
    src.write_text(text)
    out = tmp_path / "k"
    assert run_main(monkeypatch, "compile", str(src), "--target", "k8s", "--out-dir",
                    str(out)) == 0
    return {p.name: list(yaml.safe_load_all(p.read_text())) for p in out.glob("*.yaml")}


def _pod_script(docs: list, server: str) -> str:
    return next(d["data"][f"preflight-{server}.sh"] for d in docs if d["kind"] == "ConfigMap")


@pytest.mark.parametrize("text", [SUBSET, SUBSET.replace(
    "devices 3, 4\n", "devices 3, 4\n  visible_devices 3, 4\n")], ids=["plain", "visible"])
def test_the_sweep_in_a_pod_uses_container_numbering(text, tmp_path, monkeypatch):
    docs = _compile(tmp_path, monkeypatch, text)
    lws = docs["lws-j.yaml"][0]
    env = {e["name"]: e.get("value") for e in
           lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["env"]}
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1"
    job = next(d for d in docs["preflight-job.yaml"] if d["kind"] == "Job")
    limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"huawei.com/Ascend910": "2"}
    script = _pod_script(docs["preflight-job.yaml"], "atlas-01")
    assert "env ASCEND_RT_VISIBLE_DEVICES=0,1 mpirun -n 2" in script
    assert 'env ASCEND_RT_VISIBLE_DEVICES=0,1 "$python"' in script
    assert "ASCEND_RT_VISIBLE_DEVICES=3,4" not in script
    assert '"visible_devices": "0,1"' in script
    # hccn_tool keeps the physical ids the plugin's ASCEND_VISIBLE_DEVICES names
    assert "for d in 3 4; do" in script


def test_the_shell_preflight_keeps_the_planned_ids(tmp_path, monkeypatch):
    src = tmp_path / "sub.rtc"
    src.write_text(SUBSET)
    assert run_main(monkeypatch, "compile", str(src), "--out-dir", str(tmp_path / "o"),
                    "--no-diagrams") == 0
    script = (tmp_path / "o" / "preflight-atlas-01.sh").read_text()
    assert "env ASCEND_RT_VISIBLE_DEVICES=3,4 mpirun -n 2" in script
    assert "ASCEND_VISIBLE_DEVICES:-" not in script


def _plugin_check(script: str, visible: str | None) -> str:
    """stderr of the pod script's device-plugin check with ``ASCEND_VISIBLE_DEVICES``."""
    lines = script.splitlines()
    start = next(i for i, x in enumerate(lines) if "ASCEND_VISIBLE_DEVICES:-" in x)
    snippet = "\n".join(lines[start:start + 5])
    env = {"PATH": "/usr/bin:/bin"} | ({"ASCEND_VISIBLE_DEVICES": visible} if visible else {})
    r = subprocess.run(["bash", "-c", snippet], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_a_pod_given_other_npus_than_planned_says_so(tmp_path, monkeypatch):
    script = _pod_script(_compile(tmp_path, monkeypatch, SUBSET)["preflight-job.yaml"],
                         "atlas-01")
    err = _plugin_check(script, "0,1")
    assert "rtc preflight atlas-01: the device plugin gave this pod NPUs 0,1, the plan " \
           "uses 3,4" in err
    assert _plugin_check(script, "3,4") == ""
    assert _plugin_check(script, "Ascend910-3,Ascend910-4") == ""
    assert _plugin_check(script, None) == ""


def test_gpu_pods_sweep_gpus_numbered_from_0():
    from rtc.api import compile_file
    from rtc.emit.bundle import build_bundle
    from rtc.emit.fleet import pod_scripts
    from conftest import EXAMPLES

    res = compile_file(str(EXAMPLES / "gpu-pd-h100.rtc"))
    topo = res.topology
    b = build_bundle(topo, res.plan, topo.jobs, {}, with_plan_json=False)
    scripts = dict(pod_scripts(b, topo, topo.jobs))
    assert "env CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 " in scripts["preflight-gpu-d1.sh"]


HALF_GPU_BOX = """cluster two-islands {
  hardware generic-gpu
  devices_per_server 8
  nvlink_island 0..3
  nvlink_island 4..7
  vllm_version 0.11.0
}

server box-01 {
  host 10.0.2.31
  nic enp65s0
}

job chat {
  on box-01 devices 4..7
  tp 4
  model_kind dense
  model "/models/Llama-3.1-70B-Instruct"
}
"""


def _expect(script: str) -> dict:
    import json

    body = script.split("<<'RTC_EXPECT'\n", 1)[1].split("\nRTC_EXPECT\n", 1)[0]
    return json.loads(body)


def test_gpu_pod_expects_the_gpus_the_pod_sees():
    # the plan uses GPUs 4..7 (one NVLink island); the pod gets 4 GPUs, which nvidia-smi
    # in the container lists as GPU0..GPU3: expect.json must say 0..3, one island of them,
    # or `rtc preflight nccl` reports the pod's own GPUs as missing (RTC572/RTC573)
    from rtc.api import compile_text
    from rtc.emit.bundle import build_bundle
    from rtc.emit.fleet import pod_scripts
    from rtc.emit.gpu_preflight_script import render
    from rtc.plan.gpu_preflight import plan_gpu_preflight

    res = compile_text(HALF_GPU_BOX, "half.rtc")
    assert res.ok, [(d.code, d.message) for d in res.diagnostics]
    topo = res.topology
    b = build_bundle(topo, res.plan, topo.jobs, {}, with_plan_json=False)
    pod = _expect(dict(pod_scripts(b, topo, topo.jobs))["preflight-box-01.sh"])
    assert (pod["gpus"], pod["islands"], pod["cuda_visible_devices"]) == \
        ([0, 1, 2, 3], [[0, 1, 2, 3]], "0,1,2,3")
    (gp,) = plan_gpu_preflight(topo, topo.jobs)
    host = _expect(render(gp, "half.rtc"))      # on the host: the physical ids
    assert (host["gpus"], host["islands"], host["cuda_visible_devices"]) == \
        ([4, 5, 6, 7], [[4, 5, 6, 7]], "4,5,6,7")
