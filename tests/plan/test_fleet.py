"""The fleet targets: ``--target slurm`` / ``--target ansible`` and the Kubernetes preflight
Job. Real engines where they can run here: ansible-playbook (ansible-core from PyPI) runs
preflight.yml, deploy.yml and stop.yml against several hosts that all connect locally,
with stubbed hccn_tool / sysctl / vllm on PATH, and ``rtc preflight report`` judges what it
fetched. Slurm has no controller here (Debian's slurm-client has no slurmctld, and
``sbatch --test-only`` needs one): the batch scripts pass ``bash -n`` and shellcheck, and
every ``#SBATCH`` option is one sbatch(1) documents (tests/data/slurm/sbatch-options.txt).

Goldens: tests/golden/fleet/<example>/ (RTC_UPDATE_GOLDEN=1 rewrites them); the 1,024-server
family's files are kept as their first lines and a SHA-256 of the whole.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES, GOLDEN, TESTS
from conftest import run_main

HERE = TESTS
STUBS = HERE / "bin-stubs"
FLEET_GOLDEN = GOLDEN / "fleet"
UPDATE = os.environ.get("RTC_UPDATE_GOLDEN") == "1"
OPTIONS = HERE / "data" / "slurm" / "sbatch-options.txt"
HAS_ANSIBLE = importlib.util.find_spec("ansible") is not None


def fleet_files(example: str) -> dict[str, str]:
    """name -> text of every fleet file of ``example`` (Slurm, Ansible, preflight Job)."""
    from rtc.api import compile_file
    from rtc.emit.bundle import build_bundle
    from rtc.emit.fleet import fleet_plan, k8s_preflight
    from rtc.emit import ansible, slurm

    result = compile_file(str(EXAMPLES / example))
    assert result.ok
    topo, plan = result.topology, result.plan
    tables = {} if topo.preset.is_gpu else {   # as `rtc compile --out-dir` names them
        j.name: "hccl.json" if len(topo.jobs) == 1 else f"hccl-{j.name}.json"
        for j in topo.jobs}
    b = build_bundle(topo, plan, topo.jobs, tables, with_plan_json=False)
    fp = fleet_plan(b, topo, plan, topo.jobs)
    resource = "nvidia.com/gpu" if topo.preset.is_gpu else "huawei.com/Ascend910"
    job, problems = k8s_preflight(topo, plan, topo.jobs, resource, "img:1")
    assert problems == []
    return dict(slurm.render_all(fp) + ansible.render_all(fp) + job)


def _compare(folder: Path, name: str, text: str) -> None:
    path = folder / name
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from {path}"


@pytest.mark.parametrize("example", ["a2-2node-dp2-tp8.rtc", "pd-a3.rtc", "gpu-pd-h100.rtc"])
def test_fleet_files_match_golden(example):
    files = fleet_files(example)
    folder = FLEET_GOLDEN / example.removesuffix(".rtc")
    for name, text in files.items():
        _compare(folder, name, text)
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)


def test_1024_server_family_heads_and_hashes():
    files = fleet_files("family-a3-1024.rtc")
    summary = "".join(f"== {name} sha256 {hashlib.sha256(text.encode()).hexdigest()} "
                      f"{text.count(chr(10))} lines\n" + "".join(text.splitlines(True)[:30])
                      for name, text in sorted(files.items()))
    _compare(FLEET_GOLDEN, "family-a3-1024.txt", summary)
    inv = yaml.safe_load(files["inventory.yml"])
    assert len(inv["all"]["hosts"]) == 1024
    assert "#SBATCH --nodes=1024" in files["slurm-preflight.sbatch"]


def test_the_nixl_proxy_starts_after_its_jobs_on_the_prefill_head():
    files = fleet_files("gpu-pd-h100.rtc")
    assert "    gpu-p1) ./proxy-pd.sh & exec ./gpu-p1.sh ;;" in files["slurm-prefill.sbatch"]
    plays = [p["name"] for p in yaml.safe_load(files["deploy.yml"])]
    assert plays[-2:] == ["rtc deploy proxy-pd: copy env, launch and shared files",
                          "rtc deploy proxy-pd: start the head (gpu-p1)"]
    assert [p["hosts"] for p in yaml.safe_load(files["stop.yml"])][0] == "rtc_job_proxy_pd_head"


def test_every_playbook_task_is_check_mode_safe():
    """--check changes nothing: only modules that support check mode, or that --check
    skips (shell), and the local deletes are of rtc's own results folder."""
    safe = {"ansible.builtin.file", "ansible.builtin.copy", "ansible.builtin.fetch",
            "ansible.builtin.unarchive", "ansible.builtin.shell"}
    files = fleet_files("pd-a3.rtc")
    for name in ("preflight.yml", "deploy.yml", "stop.yml"):
        for play in yaml.safe_load(files[name]):
            assert play["gather_facts"] is False
            for task in play["tasks"]:
                module = next(k for k in task if k.startswith("ansible.builtin."))
                assert module in safe, (name, task["name"])
                if module == "ansible.builtin.file" and task["ansible.builtin.file"].get(
                        "state") == "absent":
                    assert "preflight-results" in task["ansible.builtin.file"]["path"]


@pytest.mark.parametrize("example", ["a2-2node-dp2-tp8.rtc", "pd-a3.rtc"])
def test_sbatch_scripts_parse_and_use_only_documented_options(example, tmp_path):
    documented = {x for x in OPTIONS.read_text().split() if x.startswith("--")}
    for name, text in fleet_files(example).items():
        if not name.endswith(".sbatch"):
            continue
        path = tmp_path / name
        path.write_text(text)
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
        used = re.findall(r"^#SBATCH (--[a-z-]+)=", text, re.M) + \
            re.findall(r"^#SBATCH (--[a-z-]+)$", text, re.M)
        assert len(used) == sum(1 for x in text.splitlines() if x.startswith("#SBATCH"))
        assert set(used) <= documented, set(used) - documented
        if shutil.which("shellcheck"):
            r = subprocess.run(["shellcheck", "-s", "bash", str(path)], capture_output=True,
                               text=True)
            assert r.returncode == 0, r.stdout


def test_a_node_outside_the_plan_is_refused(tmp_path):
    text = fleet_files("a2-2node-dp2-tp8.rtc")["slurm-deepseek.sbatch"]
    (tmp_path / "s.sbatch").write_text(text)
    r = subprocess.run(["bash", "s.sbatch", "--node"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "SLURMD_NODENAME": "atlas-09",
                                       "SLURM_SUBMIT_DIR": str(tmp_path)})
    assert r.returncode == 2 and "node 'atlas-09' is not in the plan" in r.stderr


def _bin(tmp_path: Path) -> Path:
    """A PATH folder with the hccn_tool / sysctl stubs and a vllm that records and stays up."""
    b = tmp_path / "bin"
    b.mkdir()
    for name in ("hccn_tool", "sysctl"):
        (b / name).symlink_to(STUBS / name)
    (b / "npu-smi").symlink_to(STUBS / "stub")
    vllm = b / "vllm"
    vllm.write_text('#!/bin/sh\necho "vllm $*" >> "$RTC_STUB_LOG.vllm"\nexec sleep 60\n')
    vllm.chmod(0o755)
    ray = b / "ray"   # `ray start --head` returns; a worker's `ray start --block` stays up
    ray.write_text('#!/bin/sh\necho "ray $*" >> "$RTC_STUB_LOG.vllm"\n'
                   'case " $* " in *" --block "*) exec sleep 60 ;; esac\n')
    ray.chmod(0o755)
    return b


@pytest.mark.skipif(not HAS_ANSIBLE, reason="ansible-core is not installed "
                    "(pip install -e '.[test]' installs it)")
def test_ansible_playbooks_run_for_real_and_preflight_report_judges_the_fetch(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "build"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "a2-2node-pp2-tp8.rtc"),
                    "--target", "ansible", "--out-dir", str(out), "--no-diagrams") == 0
    capsys.readouterr()
    env = {**os.environ, "PATH": f"{_bin(tmp_path)}:{os.environ['PATH']}",
           "RTC_STUB_LOG": str(tmp_path / "stub.log"), "ANSIBLE_NOCOLOR": "1", "MODEL": "m",
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ans-tmp"), "ANSIBLE_PIPELINING": "1",
           "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ans-tmp")}
    play = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "inventory.yml",
            "-e", "ansible_connection=local", "-e", f"ansible_python_interpreter={sys.executable}",
            "-e", f"rtc_remote_dir={tmp_path}/remote/{{{{ inventory_hostname }}}}",
            "-e", "rtc_start_wait=0.3"]

    def run(*args):
        r = subprocess.run(play + list(args), cwd=out, env=env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        return r.stdout

    try:   # one ansible-playbook run of three playbooks: deploy twice, to see it idempotent
        run("preflight.yml", "deploy.yml", "deploy.yml")
        hosts = sorted(p.name for p in (out / "preflight-results").iterdir())
        assert hosts == ["atlas-01", "atlas-02"]
        assert run_main(monkeypatch, "preflight", "report", "--format", "json",
                        *[str(out / "preflight-results" / h) for h in hosts]) == 1
        doc = json.loads(capsys.readouterr().out)
        assert doc["servers"] == hosts
        assert doc["matrix"]  # every planned ping was fetched and judged
        wrong_ip = [d for d in doc["diagnostics"] if d["code"] == "RTC562"]
        assert {d["subject"].split(",")[0] for d in wrong_ip} == {"server atlas-01",
                                                                  "server atlas-02"}
        launched = (tmp_path / "stub.log.vllm").read_text().splitlines()
        # Ray: the head's `ray start --head` and `vllm serve` before the worker joins; the
        # second deploy left the running head and the worker that ended well alone
        assert [x.split()[:3] for x in launched] == [
            ["ray", "start", "--head"], ["vllm", "serve", "m"],
            ["ray", "start", "--address=10.0.0.6:6379"]]
    finally:
        run("stop.yml")
    assert not list((tmp_path / "remote").glob("*/*.pid"))


def test_pod_logs_and_slurm_output_are_read_back_naming_servers(tmp_path, monkeypatch,
                                                                capsys):
    """The preflight Job's pod script and the Slurm preflight's node command, run here on
    stubs; their output (with kubectl's / srun's prefixes) is what rtc preflight reads."""
    files = fleet_files("a2-2node-dp2-tp8.rtc")
    out = tmp_path / "b"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"),
                    "--out-dir", str(out), "--no-diagrams") == 0
    job = yaml.safe_load_all(files["preflight-job.yaml"])
    script = [d for d in job if d["kind"] == "Job"][0]["spec"]["template"]["spec"][
        "containers"][0]["command"][2].replace("/rtc/", f"{out}/")
    env = {**os.environ, "PATH": f"{_bin(tmp_path)}:{os.environ['PATH']}",
           "RTC_STUB_LOG": str(tmp_path / "stub.log")}
    log = []
    for server in ("atlas-01", "atlas-02"):
        r = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                           env={**env, "NODE_NAME": server})
        assert r.returncode == 0, r.stderr
        log += [f"[pod/rtc-preflight-{server}/preflight] {x}" for x in r.stdout.splitlines()]
    (tmp_path / "pods.log").write_text("\n".join(log) + "\n")
    (out / "slurm-preflight.sbatch").write_text(files["slurm-preflight.sbatch"])
    r = subprocess.run(["bash", "slurm-preflight.sbatch", "--node"], cwd=out, text=True,
                       capture_output=True, env={**env, "SLURMD_NODENAME": "atlas-02"})
    assert (out / "preflight-results" / "atlas-02" / "expect.json").is_file()
    (tmp_path / "atlas-02.out").write_text("".join(f"0: {x}\n" for x in r.stdout.splitlines()))
    capsys.readouterr()
    assert run_main(monkeypatch, "preflight", "report", "--format", "json",
                    str(tmp_path / "pods.log")) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["servers"] == ["atlas-01", "atlas-02"]
    assert all(d["span"]["file"].startswith(str(tmp_path / "pods.log") + "#atlas-0")
               for d in doc["diagnostics"])
    assert run_main(monkeypatch, "preflight", "report", "--format", "json",
                    str(tmp_path / "atlas-02.out")) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["servers"] == ["atlas-02"]
    assert {d["subject"].split(",")[0] for d in doc["diagnostics"]} == {"server atlas-02"}
