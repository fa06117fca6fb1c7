"""`rtc compile --target k8s`: per job a LeaderWorkerSet and its rings-config ConfigMap.
Golden manifests for D1, D2 and D5 (tests/golden/k8s/), schema-valid (kubernetes-validate's
Kubernetes schemas, schemas/lws.schema.json), parsed back with PyYAML; every pod's argv and
env, run under sh with stub executables, equal the shell launch's for the same server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES, GOLDEN
from rtc.api import compile_file, compile_text, rank_table
from rtc.emit.bundle import build_bundle
from rtc.emit.kubernetes import build_k8s, manifest_problems
from stubs import run_pod, run_script
from conftest import run_main

K8S_GOLDEN = GOLDEN / "k8s"
EXAMPLES_K8S = ["a2-2node-dp2-tp8", "a2-2node-pp2-tp8", "pd-a3", "a3-2node-dp2-tp16",
                "gpu-h100-2node-dp2-tp8",
                "gpu-gb200-nvl72-tp8"]
UPDATE = os.environ.get("RTC_UPDATE_GOLDEN") == "1"
IMAGE = "quay.io/ascend/vllm-ascend:latest"
GPU_IMAGE = "vllm/vllm-openai:latest"


#: A replica over three servers without Ray (--nnodes): two worker pods from one template.
NNODES = """
cluster c {
  hardware atlas-800t-a2
  vllm_version 0.11.2
}
family n[1..3] {
  host 10.0.0.{i}
  nic eno0
  devices 0..7
  device_ip 6.0.{i}.1 step 1
}
job j {
  servers n[1..3]
  pp 3
  tp 8
  executor mp
  model "/m"
}
"""


def build(path: Path | str):
    res = compile_file(str(path)) if isinstance(path, Path) else compile_text(path, "n.rtc")
    assert res.ok, res.diagnostics
    tables = {} if res.topology.preset.is_gpu else \
        {j.name: rank_table(res.topology, j)[0] for j in res.topology.jobs}
    image = GPU_IMAGE if res.topology.preset.is_gpu else IMAGE
    return res, build_k8s(res.topology, res.plan, res.topology.jobs, tables, image,
                          getattr(path, "name", "n.rtc"))


@pytest.fixture(scope="module")
def bundles():
    out = {ex: build(EXAMPLES / f"{ex}.rtc") for ex in EXAMPLES_K8S}
    out["nnodes-3"] = build(NNODES)
    return out


@pytest.mark.parametrize("example", EXAMPLES_K8S)
def test_manifests_match_golden_and_parse_back(example, bundles):
    res, bundle = bundles[example]
    assert bundle.diagnostics == []
    folder = K8S_GOLDEN / example
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in bundle.outputs:
            (folder / name).write_text(text, encoding="utf-8")
    assert sorted(n for n, _t in bundle.outputs) == sorted(p.name for p in folder.iterdir())
    for name, text in bundle.outputs:
        assert text == (folder / name).read_text(encoding="utf-8"), f"{example}/{name}"
        *before, doc = list(yaml.safe_load_all(text))
        assert manifest_problems(doc) == []
        # a multi-tray NVLink group: its ComputeDomain first (tests/emit/test_k8s_crd_schemas)
        assert [d["kind"] for d in before] == (
            ["ComputeDomain"] if example == "gpu-gb200-nvl72-tp8" else [])
        assert all(manifest_problems(d) == [] for d in before)
        if doc["kind"] == "ConfigMap":
            job = name[len("rings-config-"):-len(".yaml")]
            assert doc["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
            table = json.loads(doc["data"]["hccl.json"])
            assert table["status"] == "completed"
            assert doc["data"]["hccl.json"] == rank_table(res.topology,
                                                          res.topology.job(job))[0]


def test_schema_checks_fail_on_bad_manifests(bundles):
    _res, bundle = bundles["a2-2node-dp2-tp8"]
    lws = yaml.safe_load(dict(bundle.outputs)["lws-deepseek.yaml"])
    lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Always"
    assert any("restartPolicy" in p for p in manifest_problems(lws))
    lws = yaml.safe_load(dict(bundle.outputs)["lws-deepseek.yaml"])
    lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["bogus"] = 1
    assert any("workerTemplate" in p and "bogus" in p for p in manifest_problems(lws))
    cm = yaml.safe_load(dict(bundle.outputs)["rings-config-deepseek.yaml"])
    cm["data"]["hccl.json"] = 1
    assert manifest_problems(cm)


def write_shell_launch(res, folder: Path) -> Path:
    """The shell launch of the same plan (env files and scripts), written in-process."""
    folder.mkdir()
    jobs = res.topology.jobs
    tables = {j.name: ("hccl.json" if len(jobs) == 1 else f"hccl-{j.name}.json") for j in jobs}
    for name, text, mode in build_bundle(res.topology, res.plan, jobs, tables,
                                         with_plan_json=False).outputs:
        (folder / name).write_text(text)
        (folder / name).chmod(mode)
    return folder


def _pod_env(container: dict, host: str, head: str, index: int, size: int) -> dict:
    env = {"LWS_LEADER_ADDRESS": head, "LWS_WORKER_INDEX": str(index),
           "LWS_GROUP_SIZE": str(size)}
    for e in container["env"]:
        if "valueFrom" in e:
            assert e["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
            env[e["name"]] = host      # hostNetwork: the pod IP is the node's host IP
        else:
            env[e["name"]] = e["value"]
    env.setdefault("MODEL", "/models/m")
    return env


def _calls(calls):
    return [c for c in calls if c.name in ("vllm", "ray")]


@pytest.mark.parametrize("example", EXAMPLES_K8S + ["nnodes-3"])
def test_every_pod_runs_what_the_shell_launch_runs(example, bundles, tmp_path: Path):
    res, bundle = bundles[example]
    shell_dir = write_shell_launch(res, tmp_path / "shell")
    texts = dict(bundle.outputs)
    for job in res.topology.jobs:
        lp = bundle.plans[job.name]
        lws = list(yaml.safe_load_all(texts[f"lws-{lp.name}.yaml"]))[-1]
        jl = res.plan.launches[job.name]
        assert lws["spec"]["leaderWorkerTemplate"]["size"] == len(jl.nodes)
        assert lp.leader.servers + (lp.worker.servers if lp.worker else []) == [
            nl.server.name for nl in jl.nodes]
        head = str(jl.nodes[0].server.host_ip)
        for k, nl in enumerate(jl.nodes):
            key = "leaderTemplate" if k == 0 else "workerTemplate"
            pod = lws["spec"]["leaderWorkerTemplate"][key]["spec"]
            assert pod["hostNetwork"] is True
            (container,) = pod["containers"]
            resource = "nvidia.com/gpu" if res.topology.preset.is_gpu else "huawei.com/Ascend910"
            npus = container["resources"]["limits"][resource]
            assert npus == str(nl.node.device_count)
            host = str(nl.server.host_ip)
            env = _pod_env(container, host, head, k, len(jl.nodes))
            proc, pod_calls = run_pod(container["command"][2], tmp=tmp_path, env=env,
                                      ray_nodes=len(jl.nodes))
            assert proc.returncode == 0, proc.stderr
            sh, sh_calls = run_script(shell_dir / f"{nl.stem}.sh", tmp=tmp_path,
                                      env={"MODEL": env["MODEL"]})
            assert sh.returncode == 0, sh.stderr
            expected = [(c.name, _pod_form(c.argv, job.name, nl.server.name, k, c.name))
                        for c in _calls(sh_calls)]
            assert expected and [(c.name, c.argv) for c in _calls(pod_calls)] == expected
            for got, want in zip(_calls(pod_calls), _calls(sh_calls)):
                if "RANK_TABLE_FILE" in want.env:
                    want = dict(want.env, RANK_TABLE_FILE=want.env["RANK_TABLE_FILE"]
                                and "/user/serverid/devindex/config/hccl.json")
                else:
                    want = dict(want.env)
                assert got.env == want


def _pod_form(argv: list, job: str, server: str, index: int, name: str) -> list:
    """The shell launch's argv as the pod runs it: the engine id from the pod index, and
    Ray workers' `ray start` blocking."""
    out = [a.replace(f'"engine_id": "{job}-{server}"', f'"engine_id": "{job}-{index}"')
           for a in argv]
    if name == "ray" and "--head" not in out and out[:1] == ["start"]:
        out.append("--block")
    return out


def test_cli_writes_manifests_and_the_kubectl_line(tmp_path: Path, monkeypatch, capsys):
    out = tmp_path / "k8s"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "pd-a3.rtc"), "--target", "k8s",
                    "--out-dir", str(out)) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".rtc-outputs", "lws-decode.yaml", "lws-prefill.yaml", "preflight-job.yaml",
        "rings-config-decode.yaml", "rings-config-prefill.yaml"]
    err = capsys.readouterr().err
    # not `kubectl apply -f DIR`: the preflight Job's pods take the same NPUs as the LWS
    assert f"kubectl apply -f {out}\n" not in err
    start = err.index("rtc: wrote 5 Kubernetes manifests")
    assert err[start:].splitlines()[1:] == [
        "rtc: first run the preflight and wait for it (its pods take the servers' NPUs/GPUs, "
        f"as the jobs' pods do): kubectl apply -f {out}/preflight-job.yaml && kubectl wait "
        "--for=condition=complete --timeout=30m job/rtc-preflight",
        "rtc: then judge it: kubectl logs -l job-name=rtc-preflight --tail=-1 --prefix "
        "--max-log-requests=4 > preflight.log; rtc preflight report preflight.log",
        f"rtc: then start the jobs: kubectl apply -f {out}/rings-config-decode.yaml -f "
        f"{out}/rings-config-prefill.yaml -f {out}/lws-decode.yaml -f {out}/lws-prefill.yaml"]
    for p in out.glob("*.yaml"):   # the preflight Job: tests/plan/test_fleet.py
        if p.name != "preflight-job.yaml":
            assert p.read_text() == (K8S_GOLDEN / "pd-a3" / p.name).read_text()


BLOCKED = """
cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..7
  device_ip 6.0.0.1 step 1
}
server b {
  host 10.0.0.2
  devices 0..3
  device_ip 6.0.1.1 step 1
}
job j {
  servers a, b
  dp 3
  tp 4
}
"""


def test_rtc770_workers_that_need_different_templates():
    res = compile_text(BLOCKED, "blocked.rtc")
    assert res.ok, res.diagnostics
    tables = {j.name: rank_table(res.topology, j)[0] for j in res.topology.jobs}
    bundle = build_k8s(res.topology, res.plan, res.topology.jobs, tables, IMAGE, "b.rtc")
    (d,) = bundle.diagnostics
    assert d.code == "RTC770" and bundle.outputs == []
    assert "server b starts at DP rank 2" in d.message
    assert (d.span.line, d.span.column) == (15, 5)
    # the same job with equal servers is one LeaderWorkerSet
    fixed = BLOCKED.replace("devices 0..3", "devices 0..7").replace("dp 3", "dp 4")
    res = compile_text(fixed, "fixed.rtc")
    tables = {j.name: rank_table(res.topology, j)[0] for j in res.topology.jobs}
    bundle = build_k8s(res.topology, res.plan, res.topology.jobs, tables, IMAGE, "f.rtc")
    assert bundle.diagnostics == [] and len(bundle.outputs) == 2


def test_cli_refuses_k8s_without_out_dir_and_blocked_jobs(tmp_path: Path, monkeypatch,
                                                          capsys):
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "pd-a3.rtc"), "--target", "k8s",
                    "--stdout") == 2
    assert "add --out-dir DIR" in capsys.readouterr().err
    src = tmp_path / "blocked.rtc"
    src.write_text(BLOCKED)
    assert run_main(monkeypatch, "compile", str(src), "--target", "k8s", "--out-dir",
                    str(tmp_path / "o")) == 1
    assert "RTC770" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_rtc770_two_jobs_with_one_kubernetes_name():
    text = BLOCKED.replace("devices 0..3", "devices 0..7").replace(
        "job j {\n  servers a, b\n  dp 3\n  tp 4\n}",
        "job a_b {\n  servers a\n  tp 8\n}\njob a-b {\n  servers b\n  tp 8\n}")
    res = compile_text(text, "two.rtc")
    assert res.ok, res.diagnostics
    tables = {j.name: rank_table(res.topology, j)[0] for j in res.topology.jobs}
    bundle = build_k8s(res.topology, res.plan, res.topology.jobs, tables, IMAGE, "t.rtc")
    (d,) = bundle.diagnostics
    assert d.code == "RTC770" and "name a-b is also job a_b's" in d.message


def test_rtc776_a_table_over_the_configmap_limit(monkeypatch):
    import rtc.plan.kubernetes as plan_k8s
    from rtc.emit.kubernetes import compact, fitting_table

    pretty = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text()
    small = compact(pretty)
    assert json.loads(small) == json.loads(pretty) and len(small) < len(pretty)
    limit = plan_k8s.FACTS["configmap_limit"]
    assert fitting_table(pretty) == pretty          # 1 MiB: the table as rtc writes it
    monkeypatch.setitem(plan_k8s.FACTS, "configmap_limit",
                        plan_k8s.Fact(str(len(small.encode())), limit.source))
    assert fitting_table(pretty) == small           # compact when only that fits
    monkeypatch.setitem(plan_k8s.FACTS, "configmap_limit",
                        plan_k8s.Fact(str(len(small.encode()) - 1), limit.source))
    assert fitting_table(pretty) is None
    _res, bundle = build(EXAMPLES / "a2-2node-dp2-tp8.rtc")
    (d,) = bundle.diagnostics
    assert d.code == "RTC776" and bundle.outputs == []
    assert f"is {len(small.encode()):,} bytes even without spaces, over the " \
        f"{len(small.encode()) - 1:,} bytes" in d.message


def test_an_empty_image_is_a_usage_error(tmp_path):
    from conftest import ROOT, run_rtc
    res = run_rtc("compile", str(ROOT / "examples" / "a2-2node-dp2-tp8.rtc"), "--target", "k8s",
                  "--out-dir", str(tmp_path / "k"), "--image", "")
    assert res.returncode == 2 and "--image is empty" in res.stderr
    assert not (tmp_path / "k").exists()


def test_pods_are_pinned_to_their_servers_by_node_affinity(bundles):
    import yaml

    text = dict(bundles["pd-a3"][1].outputs)["lws-decode.yaml"]
    tmpl = yaml.safe_load(text)["spec"]["leaderWorkerTemplate"]
    pins = {key: tmpl[key]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        for key in ("leaderTemplate", "workerTemplate")}
    assert pins == {"leaderTemplate": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["d1"]}]}],
        "workerTemplate": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["d2"]}]}]}


def test_gpu_job_is_one_leaderworkerset_requesting_nvidia_gpus(tmp_path: Path, monkeypatch,
                                                                 capsys):
    out = tmp_path / "k8s"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "gpu-h100-2node-dp2-tp8.rtc"),
                    "--target", "k8s", "--out-dir", str(out)) == 0
    assert sorted(p.name for p in out.iterdir()) == [".rtc-outputs", "lws-serve.yaml",
                                                     "preflight-job.yaml"]
    doc = yaml.safe_load((out / "lws-serve.yaml").read_text())
    worker = doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    (container,) = worker["containers"]
    assert container["image"] == GPU_IMAGE
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    assert [v["name"] for v in worker["volumes"]] == ["dshm"]


def test_a_group_over_trays_of_one_nvlink_domain_stays_in_that_domain(bundles):
    """GB200 NVL72: TP 8 over two trays of one NVLink domain. The LWS asks for one
    nvidia.com/gpu.clique domain per group (LWS exclusive topology, Kueue required
    topology); the D1 LWS (RoCE between servers, no domain) asks for nothing more."""
    _res, bundle = bundles["gpu-gb200-nvl72-tp8"]
    (text,) = [t for n, t in bundle.outputs if n.startswith("lws-")]
    (cd, lws) = list(yaml.safe_load_all(text))
    assert lws["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/exclusive-topology": "nvidia.com/gpu.clique"}
    tmpl = lws["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        assert tmpl[role]["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": "nvidia.com/gpu.clique"}
    # multi-node NVLink in pods: an IMEX channel from a ComputeDomain (NVIDIA's DRA driver)
    assert cd == {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
                  "metadata": {"name": "serve",
                               "labels": {"app.kubernetes.io/managed-by": "rtc"}},
                  "spec": {"numNodes": 2,
                           "channel": {"resourceClaimTemplate": {"name": "serve"}}}}
    for role in ("leaderTemplate", "workerTemplate"):
        spec = tmpl[role]["spec"]
        assert spec["resourceClaims"] == [{"name": "imex-channel",
                                           "resourceClaimTemplateName": "serve"}]
        assert spec["containers"][0]["resources"]["claims"] == [{"name": "imex-channel"}]
    assert "# Multi-node NVLink: the ComputeDomain serve above" in text
    assert "# Placement: TP 8 x EP off over 2 trays of NVLink domain nvl72-a" in text
    _res, d1 = bundles["a2-2node-dp2-tp8"]
    assert all("exclusive-topology" not in t for _n, t in d1.outputs)
    assert all("ComputeDomain" not in t for _n, t in d1.outputs)


def test_trays_of_two_domains_get_no_domain_constraint():
    text = (EXAMPLES / "gpu-gb200-nvl72-tp8.rtc").read_text()
    text = text.replace("super_pod nvl72-a\n  ib_hca mlx5_0, mlx5_1, mlx5_2, mlx5_3\n}\n\njob",
                        "super_pod nvl72-b\n  ib_hca mlx5_0, mlx5_1, mlx5_2, mlx5_3\n}\n\njob")
    res = compile_text(text, "two.rtc")
    bundle = build_k8s(res.topology, res.plan, res.topology.jobs, {}, GPU_IMAGE, "two.rtc")
    assert "nvl72-b" in text
    assert all("exclusive-topology" not in t for _n, t in bundle.outputs)
    # trays of two domains share no NVLink: no ComputeDomain, no IMEX claim
    assert all("ComputeDomain" not in t and "resourceClaims" not in t
               for _n, t in bundle.outputs)


def test_a_group_over_servers_of_one_a3_super_pod_stays_in_that_super_pod(bundles):
    """A3: DP2 x TP16 + EP over two servers of super pod 0. The LWS asks for one
    volcano.sh/hypernode domain per group (Volcano's label discovery names the A3 super pod
    a node belongs to with it); D1 (A2, no super pod) asks for nothing more than hostnames,
    and its header says that each TP group of 8 is one pod's NPUs."""
    from rtc.plan.kubernetes import FACTS

    assert "topologyA3" in FACTS["superpod_label"].source
    for example, name in (("a3-2node-dp2-tp16", "lws-deepseek.yaml"),
                          ("pd-a3", "lws-decode.yaml")):
        text = dict(bundles[example][1].outputs)[name]
        lws = yaml.safe_load(text)
        assert lws["metadata"]["annotations"] == {
            "leaderworkerset.sigs.k8s.io/exclusive-topology": "volcano.sh/hypernode"}
        tmpl = lws["spec"]["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            assert tmpl[role]["metadata"]["annotations"] == {
                "kueue.x-k8s.io/podset-required-topology": "volcano.sh/hypernode"}
        assert "servers of super pod 0" in text and "annotation superPodID" in text
    d1 = dict(bundles["a2-2node-dp2-tp8"][1].outputs)["lws-deepseek.yaml"]
    assert "# Placement: each TP group (8 NPUs) is inside one pod" in d1
    assert "annotations" not in yaml.safe_load(d1)["metadata"]
