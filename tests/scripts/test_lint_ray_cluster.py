"""`rtc lint` of a vLLM-over-Ray deployment given as a head and a worker script (the
shape of the D2 reference deployment): the worker's `ray start --address` against the
head's GCS address (RTC709), the devices the Ray cluster offers against TP x PP (RTC210),
and the addresses one node gives for itself (RTC450)."""

from __future__ import annotations

from pathlib import Path

from rtc.api.linting import lint_files

_ENV = """#!/bin/bash
# D2 Ray {role} ({name}): PP stage {stage}
export HCCL_IF_IP={ifip}
export HCCL_SOCKET_IFNAME=eno0
export GLOO_SOCKET_IFNAME=eno0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_IF_BASE_PORT=50000

"""


def ray_pair(tmp_path: Path, *, worker_address="10.0.0.6:6379", tp=8, head_gpus=8,
             worker_gpus=8, worker_node_ip="10.0.0.5", worker_ifip="10.0.0.5"):
    """The head (10.0.0.6, GCS port 6379) and worker scripts; returns their paths."""
    head = tmp_path / "head.sh"
    head.write_text(_ENV.format(role="head", name="atlas-01", stage=0, ifip="10.0.0.6") +
                    f"ray start --head --node-ip-address=10.0.0.6 --port=6379 "
                    f"--num-gpus={head_gpus}\n"
                    "vllm serve /models/Qwen2.5-72B --distributed-executor-backend ray \\\n"
                    f"  --pipeline-parallel-size 2 --tensor-parallel-size {tp}\n")
    worker = tmp_path / "worker.sh"
    worker.write_text(_ENV.format(role="worker", name="atlas-02", stage=1, ifip=worker_ifip) +
                      f"ray start --address={worker_address} "
                      f"--node-ip-address={worker_node_ip} --num-gpus={worker_gpus}\n")
    return [str(head), str(worker)]


def _found(rep):
    return [(d.code, d.severity.label, Path(d.span.file).name, d.span.line, d.span.column)
            for d in rep.diagnostics]


def test_a_correct_ray_pair_is_one_job_without_findings(tmp_path):
    rep = lint_files(ray_pair(tmp_path))
    assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]
    (job,) = rep.topology.jobs
    assert (job.name, job.tp, job.pp, job.device_count) == ("vllm@head", 8, 2, 16)


def test_a_ray_worker_on_another_port_is_an_error_at_its_address(tmp_path):
    """F4: the head serves the GCS on 6379, the worker dials 6380: one job, RTC709 at the
    worker's --address naming the head's address, never the RTC461 'not given' note."""
    rep = lint_files(ray_pair(tmp_path, worker_address="10.0.0.6:6380"))
    assert _found(rep) == [("RTC709", "error", "worker.sh", 10, 11)]
    d = rep.diagnostics[0]
    assert "`ray start --address=10.0.0.6:6380` is not the Ray head's address (port " \
        "differs)" in d.message
    assert "serves the GCS at 10.0.0.6:6379" in d.message
    (rel,) = d.related
    assert (Path(rel.span.file).name, rel.span.line, rel.span.column) == ("head.sh", 10, 45)
    assert "`ray start --address=10.0.0.6:6379`" in d.hint
    assert [j.name for j in rep.topology.jobs] == ["vllm@head"]
    assert not rep.ok


def test_a_ray_worker_at_another_host_is_an_error_at_its_address(tmp_path):
    rep = lint_files(ray_pair(tmp_path, worker_address="10.0.0.7:6379"))
    assert _found(rep) == [("RTC709", "error", "worker.sh", 10, 11)]
    assert "(host differs)" in rep.diagnostics[0].message
    assert "not given" not in rep.diagnostics[0].message


def test_a_ray_worker_alone_is_still_the_rtc461_note(tmp_path):
    files = ray_pair(tmp_path, worker_address="10.0.0.6:6380")
    rep = lint_files(files[:1])
    assert [(d.code, d.severity.label) for d in rep.diagnostics] == [("RTC461", "note")]
    assert rep.ok


def test_tp_times_pp_above_the_ray_cluster_is_an_rtc210_error(tmp_path):
    """F5: -tp 16 -pp 2 on a head and a worker with --num-gpus=8 each: the Ray cluster
    offers 16 of the 32 devices; an error, not an RTC461 note that the others are not given."""
    rep = lint_files(ray_pair(tmp_path, tp=16))
    found = _found(rep)
    assert ("RTC210", "error", "head.sh", 11, 1) in found
    assert not any(d.code == "RTC461" for d in rep.diagnostics)
    d = next(d for d in rep.diagnostics if d.code == "RTC210")
    assert d.message == ("job vllm@head needs 32 devices (dp 1 x pp 2 x pcp 1 x tp 16) but "
                         "is given 16")
    assert not rep.ok


def test_a_ray_worker_with_fewer_gpus_is_an_rtc210_error_naming_each_node(tmp_path):
    """F5: the worker's `ray start --num-gpus=4` (head 8): Ray offers 12 of the 16 devices
    TP 8 x PP 2 needs, although ASCEND_RT_VISIBLE_DEVICES lists 8."""
    rep = lint_files(ray_pair(tmp_path, worker_gpus=4))
    assert _found(rep) == [("RTC210", "error", "head.sh", 11, 1)]
    assert rep.diagnostics[0].message == (
        "job vllm@head needs 16 devices (dp 1 x pp 2 x pcp 1 x tp 8) but is given 12 "
        "(head 8, worker 4: its nodes offer different device counts)")
    (job,) = rep.topology.jobs
    assert [len(p.device_ids) for p in job.placements] == [8, 4]


def test_a_ray_head_alone_is_the_rtc461_note_saying_the_others_are_not_given(tmp_path):
    rep = lint_files(ray_pair(tmp_path, tp=16)[:1])
    assert [(d.code, d.severity.label) for d in rep.diagnostics][-1] == ("RTC461", "note")
    assert "no script given starts its other nodes" in rep.diagnostics[-1].message


def test_rtc461_never_says_scripts_given_were_not_given(tmp_path):
    """Two Ray heads given together (two clusters), one of them short of devices: the note
    says the other node given does not join it, not that no other script was given."""
    files = ray_pair(tmp_path, tp=16)
    other = tmp_path / "other.sh"
    other.write_text(_ENV.format(role="head", name="atlas-03", stage=0, ifip="10.0.0.9") +
                     "ray start --head --node-ip-address=10.0.0.9 --port=6379 --num-gpus=8\n"
                     "vllm serve /models/m --distributed-executor-backend ray -tp 8\n")
    rep = lint_files([files[0], str(other)])
    (n,) = [d for d in rep.diagnostics if d.code == "RTC461"]
    assert (Path(n.span.file).name, n.span.line) == ("head.sh", 11)
    assert "are not given" not in n.message
    assert "of the scripts given, 1 starts a node of it (head: 8 of the 32 devices" in n.message
    assert "no script given starts its other nodes" in n.message


def test_a_worker_whose_node_ip_address_is_the_heads_is_rtc450(tmp_path):
    """F6: the worker's `ray start --node-ip-address` is the head's IP while its
    HCCL_IF_IP is its own: one error at the flag naming both settings and the head."""
    rep = lint_files(ray_pair(tmp_path, worker_node_ip="10.0.0.6"))
    assert _found(rep) == [("RTC450", "error", "worker.sh", 10, 35)]
    d = rep.diagnostics[0]
    assert d.message.startswith("worker's own addresses disagree: --node-ip-address=10.0.0.6 "
                                "(head's host IP), but HCCL_IF_IP=10.0.0.5")
    assert "Ray registers this node under" in d.message and "HCCL's host NIC" in d.message
    (rel,) = d.related
    assert (Path(rel.span.file).name, rel.span.line, rel.span.column) == ("worker.sh", 3, 8)


_DP = """#!/bin/bash
export HCCL_IF_IP={ifip}
export VLLM_HOST_IP={host}
export GLOO_SOCKET_IFNAME=enp189s0f0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve /data/Qwen3-235B-A22B --port 8004 {extra}\\
  --data-parallel-size 4 --data-parallel-size-local 2 \\
  --data-parallel-address 192.168.1.10 --data-parallel-rpc-port 13389 \\
  --tensor-parallel-size 4 --enable-expert-parallel
"""


def _dp_pair(tmp_path, worker_ifip, worker_host):
    head = tmp_path / "head.sh"
    head.write_text(_DP.format(ifip="192.168.1.10", host="192.168.1.10", extra=""))
    worker = tmp_path / "worker.sh"
    worker.write_text(_DP.format(ifip=worker_ifip, host=worker_host,
                                 extra="--headless --data-parallel-start-rank 2 "))
    return [str(head), str(worker)]


def test_hccl_if_ip_and_vllm_host_ip_that_differ_on_one_node_are_rtc450(tmp_path):
    """F6 (fresh m3b): HCCL_IF_IP=192.168.1.111 but VLLM_HOST_IP=192.168.1.11 in one
    script: an error at VLLM_HOST_IP naming both variables and what reads each."""
    rep = lint_files(_dp_pair(tmp_path, "192.168.1.111", "192.168.1.11"))
    assert _found(rep) == [("RTC450", "error", "worker.sh", 3, 8)]
    d = rep.diagnostics[0]
    assert "VLLM_HOST_IP=192.168.1.11, but HCCL_IF_IP=192.168.1.111" in d.message
    assert "vllm/envs.py" in d.message and "root-info exchange" in d.message
    assert "VLLM_HOST_IP=192.168.1.111" in d.hint


def test_hccl_if_ip_and_vllm_host_ip_that_agree_pass(tmp_path):
    rep = lint_files(_dp_pair(tmp_path, "192.168.1.11", "192.168.1.11"))
    assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]


def test_rtc450_applies_to_rtc_generated_scripts_too(tmp_path):
    """One rule, many front ends: rtc's own out-dir lints clean; a VLLM_HOST_IP edited in
    atlas-02.env to atlas-01's IP is the same RTC450 at that line."""
    from typer.testing import CliRunner

    from conftest import EXAMPLES
    from rtc.cli import app

    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"),
                                   "--out-dir", str(out), "--no-diagrams"])
    assert res.exit_code == 0, res.output
    files = [str(out / "atlas-01.sh"), str(out / "atlas-02.sh")]
    assert not any(d.code == "RTC450" for d in lint_files(files).diagnostics)
    env = out / "atlas-02.env"
    text = env.read_text(encoding="utf-8")
    assert "export VLLM_HOST_IP=10.0.0.5\n" in text
    env.write_text(text.replace("VLLM_HOST_IP=10.0.0.5", "VLLM_HOST_IP=10.0.0.6"),
                   encoding="utf-8")
    rep = lint_files(files)
    (d,) = [d for d in rep.diagnostics if d.code == "RTC450"]
    line = text.splitlines().index("export VLLM_HOST_IP=10.0.0.5") + 1
    assert (Path(d.span.file).name, d.span.line, d.span.column) == ("atlas-02.env", line, 8)
    assert "VLLM_HOST_IP=10.0.0.6 (atlas-01's host IP), but HCCL_IF_IP=10.0.0.5" in d.message


# One sbatch that starts the Ray head and its workers with srun, as the Slurm examples of
# Ray's and vLLM's guides do: the head's IP is `srun ... hostname --ip-address`, text rtc
# leaves unresolved, and the worker repeats it in its --address.
_SBATCH = """#!/bin/bash
#SBATCH --job-name=ray-vllm
#SBATCH --nodes=2
#SBATCH --exclusive
#SBATCH --tasks-per-node=1
#SBATCH --gpus-per-task=8

nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
nodes_array=($nodes)
head_node=${nodes_array[0]}
worker_node=${nodes_array[1]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)

export NCCL_SOCKET_IFNAME=eth0
export GLOO_SOCKET_IFNAME=eth0
port=6379

srun --nodes=1 --ntasks=1 -w "$head_node" \\
    ray start --head --node-ip-address="$head_node_ip" --port=$port --num-gpus 8 --block &
sleep 10
srun --nodes=1 --ntasks=1 -w "$worker_node" \\
    ray start --address "{address}" --num-gpus 8 --block &
sleep 5

vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 8 \\
    --pipeline-parallel-size 2 --distributed-executor-backend ray
"""


def _sbatch(tmp_path: Path, address: str) -> list[str]:
    path = tmp_path / "ray.sbatch"
    path.write_text(_SBATCH.replace("{address}", address), encoding="utf-8")
    return [str(path)]


def test_a_slurm_ray_worker_on_another_port_is_rtc709_though_the_head_ip_is_unresolved(
        tmp_path):
    """The worker's host is the head's own unresolved `$head_node_ip`: the same host
    whatever it resolves to, so its port 6380 against the head's --port 6379 is RTC709."""
    rep = lint_files(_sbatch(tmp_path, "$head_node_ip:6380"))
    (d,) = [d for d in rep.diagnostics if d.code == "RTC709"]
    assert (d.severity.label, Path(d.span.file).name, d.span.line, d.span.column) == \
        ("error", "ray.sbatch", 22, 25)
    assert "`ray start --address` (the head's host, port 6380) is not the Ray head's " \
        "address (port differs)" in d.message
    # the head's IP is named by its variable, not by the command that sets it
    assert "serves the GCS at its --node-ip-address ($head_node_ip)" in d.message
    assert "port 6379;" in d.message
    (rel,) = d.related
    assert (rel.span.line, rel.span.column) == (19, 56)
    assert "`ray start --address=<the head's --node-ip-address>:6379`" in d.hint
    assert not any(d.code == "RTC461" for d in rep.diagnostics)
    assert not rep.ok


def test_a_slurm_ray_worker_at_the_heads_port_passes(tmp_path):
    for address in ("$head_node_ip:6379", "$head_node_ip:$port", "$head_node_ip"):
        rep = lint_files(_sbatch(tmp_path, address))
        assert not [d for d in rep.diagnostics if d.code in ("RTC709", "RTC461")], address
        (job,) = rep.topology.jobs
        assert (job.tp, job.pp, job.device_count) == (8, 2, 16), address


def test_a_slurm_ray_worker_at_another_unresolved_host_is_not_judged(tmp_path):
    """`$other_ip` is no text the head gives: rtc cannot tell whether it is the head."""
    rep = lint_files(_sbatch(tmp_path, "$other_ip:6380"))
    assert not any(d.code == "RTC709" for d in rep.diagnostics)


def test_rtc_compiled_d2_with_the_workers_port_edited_is_rtc709(tmp_path):
    """D2 (examples/a2-2node-pp2-tp8.rtc) as `rtc compile` writes it lints clean; with
    atlas-02's `ray start --address` port changed to 6380 it is RTC709 at that line."""
    from typer.testing import CliRunner

    from conftest import EXAMPLES
    from rtc.cli import app

    out = tmp_path / "d2"
    res = CliRunner().invoke(app, ["compile", str(EXAMPLES / "a2-2node-pp2-tp8.rtc"),
                                   "--out-dir", str(out), "--no-diagrams"])
    assert res.exit_code == 0, res.output
    files = [str(out / "atlas-01.sh"), str(out / "atlas-02.sh")]
    assert lint_files(files).diagnostics == []
    worker = out / "atlas-02.sh"
    text = worker.read_text(encoding="utf-8")
    assert text.count("--address=10.0.0.6:6379") == 1
    worker.write_text(text.replace("--address=10.0.0.6:6379", "--address=10.0.0.6:6380"),
                      encoding="utf-8")
    rep = lint_files(files)
    line = next(k for k, s in enumerate(text.splitlines(), 1) if "--address=10.0.0.6" in s)
    assert _found(rep) == [("RTC709", "error", "atlas-02.sh", line, 3)]
    d = rep.diagnostics[0]
    assert "atlas-02's `ray start --address=10.0.0.6:6380` is not the Ray head's address " \
        "(port differs): atlas-01's `ray start --head` serves the GCS at 10.0.0.6:6379" \
        in d.message
    assert "`ray start --address=10.0.0.6:6379`" in d.hint
    assert not rep.ok
