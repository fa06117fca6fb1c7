"""`rtc lint` of the files engines run: Slurm batch scripts (``srun`` before the launch)
and Ansible playbooks (``environment`` + ``shell``), read by :mod:`rtc.scripts.engines`
and checked with the same rules as shell scripts, at the original line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtc.api.linting import lint_scripts
from rtc.scripts.engines import as_shell, sbatch_shell
from conftest import TESTS

DATA = TESTS / "data" / "engines"


def found(label: str, text: str):
    rep = lint_scripts([(label, text)])
    return [(d.code, d.span.line, d.span.column) for d in rep.diagnostics
            if d.severity.name != "NOTE"]


@pytest.mark.parametrize("name, where", [("dp2-srun.sbatch", (11, 28)), ("serve.yml", (12, 9))])
def test_engine_files_get_the_shell_rules_at_their_own_lines(name, where):
    text = (DATA / name).read_text()
    assert found(name, text) == [("RTC210", *where)]
    fixed = text.replace("--tensor-parallel-size 16", "--tensor-parallel-size 8")
    assert found(name, fixed) == []


def test_srun_options_and_their_values_are_blanked_keeping_columns():
    text = 'srun --nodes=1 -w "$head" -N 1 -- vllm serve m\nsrun ray start --block\necho srun\n'
    out = sbatch_shell(text)
    assert out.splitlines() == [" " * 34 + "vllm serve m", "     ray start --block", "echo srun"]


def test_a_playbook_keeps_only_env_and_commands_on_their_lines():
    text = (DATA / "serve.yml").read_text()
    out = as_shell("serve.yml", text).splitlines()
    assert len(out) == len(text.splitlines())
    assert out[8:12] == [" export HCCL_IF_IP=10.0.0.6",        # the name at its column
                         " export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "",
                         "        vllm serve /models/m --port 8000 \\"]
    assert as_shell("x.yml", "- hosts: a\n  tasks:\n    - shell: vllm serve {{ model }}\n"
                    ).splitlines()[2] == " " * 13 + "vllm serve ${model}"
    assert as_shell("notes.txt", "hello\n") == "hello\n"


# Fresh user 2, item 7: a task's `environment:` is the task's only (Ansible docs, "Setting
# the remote environment"; ansible-core lib/ansible/playbook/base.py: `environment` is a
# list attribute extended from the parents, play / block, never from a sibling task).
_LEAK = ("- hosts: all\n{play}  tasks:\n"
         "    - name: smoke test on NPU 0\n"
         "      environment:\n"
         "        ASCEND_RT_VISIBLE_DEVICES: \"0\"\n"
         "      command: python3 -c \"import torch_npu\"\n"
         "    - name: serve\n"
         "      shell: vllm serve /m --tensor-parallel-size 8\n")


def test_a_tasks_environment_does_not_reach_the_next_task():
    text = _LEAK.format(play="")
    assert found("leak2.yml", text) == []          # was RTC210 "... but is given 1"
    out = as_shell("leak2.yml", text).splitlines()
    assert out[4:7] == [" export ASCEND_RT_VISIBLE_DEVICES=0",
                        " " * 15 + 'python3 -c "import torch_npu"',
                        "unset ASCEND_RT_VISIBLE_DEVICES"]


def test_a_plays_environment_reaches_all_its_tasks():
    """The failing form: the same setting at play level is every task's, so the serve task
    gets 1 device for TP 8 (RTC210 at `vllm`, line 10 column 14)."""
    text = _LEAK.format(play="  environment:\n    ASCEND_RT_VISIBLE_DEVICES: \"0\"\n")
    rep = lint_scripts([("leak2.yml", text)])
    (err,) = [d for d in rep.diagnostics if d.severity.name == "ERROR"]
    assert (err.code, err.span.line, err.span.column) == ("RTC210", 10, 14)
    assert "needs 8 devices (dp 1 x pp 1 x pcp 1 x tp 8) but is given 1" in err.message


def test_a_blocks_environment_reaches_its_tasks_only():
    """A block's environment is its tasks' (RTC455 for both serves inside the block, not
    for the one after it); a task's own setting ends with the task."""
    text = ("- hosts: all\n  tasks:\n    - environment:\n        HCCL_P2P_DISABLE: \"1\"\n"
            "      block:\n"
            "        - environment:\n            HCCL_BUFFSIZ: \"256\"\n"
            "          shell: vllm serve /a --tensor-parallel-size 8\n"
            "        - name: in block\n"
            "          shell: vllm serve /b --tensor-parallel-size 8 --port 8001\n"
            "    - name: after\n"
            "      shell: vllm serve /c --tensor-parallel-size 8 --port 8002\n")
    out = as_shell("b.yml", text).splitlines()
    assert (out[8], out[10]) == ("unset HCCL_BUFFSIZ", "unset HCCL_P2P_DISABLE")
    rep = lint_scripts([("b.yml", text)])
    got = sorted((d.span.line, d.span.column, d.message.split(": ")[0])
                 for d in rep.diagnostics if d.code == "RTC455")
    assert got == [(4, 9, "job vllm@b:10"), (4, 9, "job vllm@b:8"), (7, 13, "job vllm@b:8")]


def test_a_rest_of_a_task_with_no_free_line_after_it_goes_after_its_command():
    text = ("- hosts: all\n  tasks:\n    - environment: {HCCL_BUFFSIZ: \"1\"}\n"
            "      shell: vllm serve /a --tensor-parallel-size 8 &\n"
            "    - shell: vllm serve /b --tensor-parallel-size 8 --port 8001\n")
    out = as_shell("c.yml", text).splitlines()
    assert out[3] == " " * 13 + "vllm serve /a --tensor-parallel-size 8 & unset HCCL_BUFFSIZ"


# Fresh user 2, item 8: Jinja statements in a `shell: >` (was RTC720 "'1{%' is not an
# integer"): a word holding one is a value the lint cannot know, and columns stay.
_JINJA_IF = ("- hosts: all\n  tasks:\n    - shell: >\n"
             "        vllm serve /m --data-parallel-size 2 --data-parallel-size-local 1\n"
             "        {% if inventory_hostname != groups['n'][0] %}--headless"
             " --data-parallel-start-rank {RANK}{% endif %}{# worker #}\n"
             "        --data-parallel-address 10.0.0.1 --port 8000\n")


def test_a_jinja_statement_makes_its_word_unknown_and_keeps_columns():
    text = _JINJA_IF.replace("{RANK}", "1")
    assert found("j.yml", text) == []
    line = as_shell("j.yml", text).splitlines()[4]
    assert len(line) == len(text.splitlines()[4]) + 2          # + the ` \` continuation
    stmt = "{% if inventory_hostname != groups['n'][0] %}"
    assert line.startswith("        ${" + "_" * (len(stmt) - 3) + "}--headless")
    assert line.endswith("1${________}${_________} \\")


def test_a_bad_value_beside_a_jinja_statement_keeps_its_column():
    """The failing form: a rank that is not a number before the statement is still
    RTC720, at its own column (92 on line 5, as in the playbook)."""
    text = _JINJA_IF.replace("{RANK}", "x ")
    rep = lint_scripts([("j.yml", text)])
    (err,) = [d for d in rep.diagnostics if d.code == "RTC720"]
    assert (err.span.line, err.span.column) == (5, 92)
    assert err.message == "--data-parallel-start-rank 'x' is not an integer"


def test_a_folded_block_keeps_its_columns_and_is_one_command():
    """Fresh user F18: a `shell: >` task (YAML joins its lines with spaces) is one command
    whose words keep their playbook line and column: RTC461 points at `vllm` on line 4,
    column 15 (past `nohup`), not at the indentation; each line but the last continues."""
    text = ("- hosts: all\n  tasks:\n    - ansible.builtin.shell: >\n"
            "        nohup vllm serve /m --port 8000\n"
            "        --data-parallel-size 2 --data-parallel-size-local 1\n"
            "        --data-parallel-address {{ head_ip }} > /var/log/v.log 2>&1 &\n")
    out = as_shell("d.yml", text).splitlines()
    assert out[3:6] == ["        nohup vllm serve /m --port 8000 \\",
                        "        --data-parallel-size 2 --data-parallel-size-local 1 \\",
                        "        --data-parallel-address ${head_ip} > /var/log/v.log 2>&1 &"]
    rep = lint_scripts([("d.yml", text)])
    assert [(d.code, d.span.line, d.span.column) for d in rep.diagnostics] == \
        [("RTC461", 4, 15)]


def test_an_inventory_is_one_node_per_host_with_its_env_and_launch():
    text = (DATA / "inventory.yml").read_text()
    assert found("inventory.yml", text) == [("RTC210", 17, 15)]
    rep = lint_scripts([("inventory.yml", text.replace("tensor-parallel-size 16",
                                                         "tensor-parallel-size 8"))])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    # both hosts were read as nodes with their own HCCL_IF_IP
    assert sorted(s.name for s in rep.topology.servers) == ["atlas-01", "atlas-02"]


@pytest.mark.parametrize("target, names", [
    ("slurm", ["slurm-deepseek.sbatch", "slurm-preflight.sbatch"]),
    ("ansible", ["deploy.yml", "inventory.yml", "preflight.yml", "stop.yml"])])
def test_rtcs_own_fleet_files_are_its_own_scripts_not_rtc703(target, names, tmp_path,
                                                             monkeypatch):
    """`rtc lint` of the Slurm / Ansible files rtc writes: an RTC701 note each (they run
    the launch and preflight scripts beside them), as for its preflight scripts; not the
    RTC703 warning "starts no process". The launch scripts beside them lint clean."""
    from conftest import EXAMPLES, run_main

    out = tmp_path / "o"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"),
                    "--target", target, "--out-dir", str(out), "--no-diagrams") == 0
    files = [(str(out / n), (out / n).read_text()) for n in names]
    rep = lint_scripts(files)
    assert [(d.code, d.severity.name, d.span.file) for d in rep.diagnostics] == [
        ("RTC701", "NOTE", label) for label, _t in files]
    assert rep.diagnostics[0].message == (
        f"{files[0][0]} is rtc's own {target.capitalize()} fleet file: it runs the scripts rtc "
        "compile wrote beside it (the nodes' launch or preflight scripts) and starts no "
        "process of its own: not linted")
    launches = [(str(p), p.read_text()) for p in sorted(out.glob("atlas-0?.sh"))]
    assert [d for d in lint_scripts(files + launches).diagnostics
            if d.severity.name != "NOTE"] == []
    # the failing form: the same file without rtc's header is a script that starts nothing
    label, text = files[0]
    bare = "\n".join(x for x in text.splitlines() if not x.startswith("# Generated by"))
    assert "RTC703" in {d.code for d in lint_scripts([(label, bare)]).diagnostics}


# ---- an sbatch script that starts each node's process with `srun -w NODE`

def test_srun_steps_naming_their_nodes_are_one_node_each():
    from rtc.scripts.engines import sbatch_nodes

    text = (DATA / "dp-head-worker.sbatch").read_text()
    (head, head_text), (worker, worker_text) = sbatch_nodes(text)
    assert (head, worker) == ("$head_node", "${nodes[1]}")
    # every line stays where it is; the other node's step is a no-op `:`
    assert len(head_text.splitlines()) == len(worker_text.splitlines()) == \
        len(text.splitlines())
    assert worker_text.splitlines()[15] == ": &"
    assert head_text.splitlines()[16].startswith("  vllm serve /models/Llama-3.1-405B")
    assert sbatch_nodes((DATA / "dp2-srun.sbatch").read_text()) is None   # one node named


def test_a_head_and_worker_batch_script_is_checked_across_its_nodes():
    text = (DATA / "dp-head-worker.sbatch").read_text()
    rep = lint_scripts([("dp.sbatch", text)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    assert sorted(s.name for s in rep.topology.servers) == \
        ["dp:$head_node", "dp:${nodes[1]}"]
    # the worker repeats DP rank 0 (was three notes and exit 0: both steps were one node)
    bad = text.replace("--data-parallel-start-rank 1", "--data-parallel-start-rank 0")
    assert found("dp.sbatch", bad) == [("RTC530", 23, 55)]


def test_rays_slurm_recipe_is_one_ray_cluster_of_head_and_workers():
    text = (DATA / "ray-srun-loop.sbatch").read_text()
    rep = lint_scripts([("serve.sbatch", text)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    assert "RTC461" not in {d.code for d in rep.diagnostics}     # both nodes are in the job
    (job,) = rep.topology.jobs
    assert sorted(p.server.name for p in job.placements) == \
        ["serve:$head_node", "serve:$node_i"]


# ---- srun options whose value is the next word; steps on nodes by position or on all

@pytest.mark.parametrize("opts", ["-r 0", "--relative 0", "--nodelist gpu-01",
                                  "--cpus-per-task 32", "--container-image nvcr.io/nvidia/vllm:25.01",
                                  "--mpi pmix", "--export ALL", "--gpus-per-node 8",
                                  "--container-mounts /a:/a -l --exclusive"])
def test_srun_long_options_take_the_next_word_as_their_value(opts):
    line = f"srun -N1 {opts} vllm serve m --tensor-parallel-size 16\n"
    assert sbatch_shell(line) == " " * (len(opts) + 10) + "vllm serve m --tensor-parallel-size 16\n"


def test_srun_options_go_on_over_continued_lines():
    text = "srun \\\n  --nodes 1 -w gpu-01 \\\n  vllm serve m\n"
    assert sbatch_shell(text) == "     \\\n" + " " * 22 + "\\\n  vllm serve m\n"


def test_steps_on_relative_nodes_are_one_node_each():
    text = (DATA / "dp-relative.sbatch").read_text()
    rep = lint_scripts([("dp.sbatch", text)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    assert sorted(s.name for s in rep.topology.servers) == ["dp:node0", "dp:node1"]
    # the failing form: the worker repeats DP rank 1 (was RTC703 twice and RTC702 on `0`)
    bad = text.replace("--data-parallel-start-rank 2", "--data-parallel-start-rank 1")
    rep = lint_scripts([("dp.sbatch", bad)])
    (d,) = [d for d in rep.diagnostics if d.severity.name != "NOTE"]
    assert (d.code, d.span.line, d.span.column) == ("RTC530", 15, 39)
    assert "DP rank 1 is started on both dp:node0 and dp:node1" in d.message


def test_a_nodelist_names_each_of_its_nodes():
    from rtc.scripts.engines import sbatch_nodes

    text = "#SBATCH -N 3\nsrun -N1 -r0 vllm serve a &\nsrun -w gpu-[02-03] vllm serve b\n"
    assert [n for n, _t in sbatch_nodes(text)] == ["node0", "gpu-02", "gpu-03"]
    assert sbatch_nodes(text)[2][1].splitlines()[1:] == [": &", " " * 20 + "vllm serve b"]


def test_one_srun_step_runs_on_every_node_of_the_allocation():
    from rtc.scripts.engines import sbatch_nodes

    text = (DATA / "torchrun-all-nodes.sbatch").read_text()
    nodes = sbatch_nodes(text)
    assert [n for n, _t in nodes] == ["node0", "node1"]
    assert nodes[1][1].splitlines()[4] == "export SLURM_NODEID=1 SLURM_PROCID=1 SLURM_LOCALID=0"
    rep = lint_scripts([("t.sbatch", text)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    assert "RTC461" not in {d.code for d in rep.diagnostics}     # was: one node of two
    # the failing form: a fixed node rank is given by both nodes
    bad = text.replace("--node_rank=$SLURM_NODEID", "--node_rank=0")
    rep = lint_scripts([("t.sbatch", bad)])
    (d,) = [d for d in rep.diagnostics if d.severity.name != "NOTE"]
    assert (d.code, d.span.line, d.span.column) == ("RTC723", 16, 5)
    assert "t:node1 and t:node0 both give --node_rank 0" in d.message


@pytest.mark.parametrize("ask", ["--gpus-per-task=8", "--gres=gpu:8", "--gpus-per-node 8"])
def test_sbatch_gpu_requests_make_the_nodes_nvidia_gpus(ask):
    text = (DATA / "ray-gpus-per-task.sbatch").read_text().replace("--gpus-per-task=8", ask)
    rep = lint_scripts([("ray.sbatch", text)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    (n,) = [d for d in rep.diagnostics if d.code == "RTC464"]
    assert n.message.startswith("the Slurm scripts or pods ask for GPUs")
    # the failing form: the same recipe asking for Ascend NPUs is vllm-ascend's Ray setup
    npu = text.replace(ask, "--gres=npu:8")
    assert found("ray.sbatch", npu) == [("RTC710", 13, 5), ("RTC710", 16, 5)]


def test_rays_worker_loop_stands_for_every_other_node_of_the_allocation():
    # --nodes=3: the loop starts workers on the two nodes after the head, so TP 8 x PP 3
    # fits 24 GPUs (was a false RTC210 "given 16": the loop was read as one worker)
    text = (DATA / "ray-srun-loop.sbatch").read_text().replace(
        "#SBATCH --nodes=2", "#SBATCH --nodes=3")
    fits = text.replace("--pipeline-parallel-size 2", "--pipeline-parallel-size 3")
    rep = lint_scripts([("serve.sbatch", fits)])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    (job,) = rep.topology.jobs
    assert sorted(p.server.name for p in job.placements) == \
        ["serve:$head_node", "serve:$node_i#1", "serve:$node_i#2"]
    too_big = text.replace("--pipeline-parallel-size 2", "--pipeline-parallel-size 4")
    rep = lint_scripts([("serve.sbatch", too_big)])
    (err,) = [d for d in rep.diagnostics if d.severity.name == "ERROR"]
    assert (err.code, err.span.line) == ("RTC210", 34)   # the vllm serve line
    assert "needs 32 devices (dp 1 x pp 4 x pcp 1 x tp 8) but is given 24" in err.message


def test_a_literal_dp_address_is_not_judged_when_the_heads_ip_is_unknown():
    # `--nodelist=gpu-01` names the head but not its IP: 10.1.0.1 may well be gpu-01's
    # (was RTC451 "the host of no server of the cluster", with a hint about .rtc files)
    line = ("srun --nodes=1 --ntasks=1 --nodelist={node} vllm serve m --tensor-parallel-size 8 "
            "--data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address "
            "10.1.0.1 --data-parallel-rpc-port 13345{extra} &\n")
    text = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\nexport NCCL_SOCKET_IFNAME=ib0\n"
            "export GLOO_SOCKET_IFNAME=ib0\n" + line.format(node="gpu-01", extra="")
            + line.format(node="gpu-02", extra=" --data-parallel-start-rank 1 --headless")
            + "wait\n")
    assert found("dp.sbatch", text) == []
    # a head whose IP is known still gets RTC451 for another address
    known = text.replace("export GLOO_SOCKET_IFNAME=ib0\n",
                         "export GLOO_SOCKET_IFNAME=ib0\nexport VLLM_HOST_IP=10.1.0.7\n")
    assert "RTC451" in {code for code, _l, _c in found("dp.sbatch", known)}


def test_an_empty_playbook_is_not_an_error():
    # `rtc compile --target ansible` of a plan without jobs writes deploy.yml / stop.yml as
    # `[]`: linting rtc's own output gave RTC790 "not a Kubernetes object (no kind)"
    text = ("# rtc: deployment of 0 jobs, from doc-2x2.rtc.\n"
            "# Run: ansible-playbook -i inventory.yml deploy.yml (stop: stop.yml)\n[]\n")
    rep = lint_scripts([("deploy.yml", text)])
    assert [d.code for d in rep.diagnostics if d.severity.name == "ERROR"] == []
    # a list holding something that is no object still is
    bad = lint_scripts([("deploy.yml", text.replace("[]", "[1]"))])
    assert "RTC790" in {d.code for d in bad.diagnostics}


def test_many_of_rtcs_own_preflight_scripts_are_one_note(tmp_path, monkeypatch):
    # rtc lint DIR/*.sh of a 4,096-server --out-dir printed 4,097 RTC701 notes
    from conftest import EXAMPLES, run_main

    out = tmp_path / "o"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "family-a5-64.rtc"),
                    "--out-dir", str(out), "--no-diagrams") == 0
    files = [(str(p), p.read_text()) for p in sorted(out.glob("preflight-*.sh"))]
    assert len(files) == 64
    notes = [d for d in lint_scripts(files).diagnostics if d.code == "RTC701"]
    assert [n.message.split(" (")[0] for n in notes] == \
        ["64 files are rtc's own preflight scripts"]
    assert "and 61 more), not nodes' launches: not linted" in notes[0].message
