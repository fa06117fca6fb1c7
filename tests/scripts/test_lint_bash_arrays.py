"""Bash indexed arrays in launch scripts (fresh user: Megatron-LM's upstream form
`DISTRIBUTED_ARGS=( --nproc_per_node 8 ... )` then `torchrun ${DISTRIBUTED_ARGS[@]} ...`
made RTC702 list `--nproc_per_node` and `--nnodes` as commands and a false RTC210, and
missed a node's different master address and nproc 8 on 4 visible GPUs).
Data: tests/data/launchers/megatron-array-node{0,1}.sh (source in that folder's README)."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.scripts.shell import read_shell
from conftest import TESTS

DATA = TESTS / "data" / "launchers"
NODE0 = (DATA / "megatron-array-node0.sh").read_text(encoding="utf-8")
NODE1 = (DATA / "megatron-array-node1.sh").read_text(encoding="utf-8")


def _lint(node0: str = NODE0, node1: str = NODE1):
    rep = lint_scripts([("node0.sh", node0.encode()), ("node1.sh", node1.encode())])
    return [(d.code, d.span.file, d.span.line, d.span.column) for d in rep.diagnostics
            if d.severity.label in ("error", "warning")], rep


def test_array_words_reach_torchrun_one_word_per_element():
    run = read_shell("node0.sh", NODE0)
    (cmd,) = run.commands
    assert cmd.argv[:12] == ["torchrun", "--nproc_per_node", "8", "--nnodes", "2",
                             "--node_rank", "0", "--master_addr", "10.4.0.21",
                             "--master_port", "6100", "pretrain_gpt.py"]
    assert cmd.argv[-6:] == ["--data-path", "/data/corpus/web_text_document",
                             "--save", "/data/ckpt/gpt-small", "--load", "/data/ckpt/gpt-small"]
    assert "--attention-backend" in cmd.argv and "#" not in cmd.argv
    assert run.settings["PARALLEL_ARGS"].items == ("--tensor-model-parallel-size", "4",
                                                   "--pipeline-model-parallel-size", "2")
    assert run.settings["DISTRIBUTED_ARGS"].span.line == 20


def test_clean_pair_has_no_error_and_no_unknown_command():
    found, rep = _lint()
    assert found == []
    assert not [d for d in rep.diagnostics if d.code in ("RTC702", "RTC210")]


def test_node1_master_addr_differs_is_rtc730():
    found, rep = _lint(node1=NODE1.replace("MASTER_ADDR=10.4.0.21", "MASTER_ADDR=10.4.0.29"))
    assert found == [("RTC730", "node1.sh", 47, 10)]
    assert "node1 gives --master_addr 10.4.0.29" in next(
        d.message for d in rep.diagnostics if d.code == "RTC730")


def test_nproc_past_visible_gpus_is_rtc731():
    fewer = "export CUDA_VISIBLE_DEVICES=0,1,2,3\n"
    found, rep = _lint(NODE0.replace("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n", fewer),
                       NODE1.replace("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n", fewer))
    assert [f for f in found if f[0] == "RTC731"] == [("RTC731", "node0.sh", 47, 10),
                                                      ("RTC731", "node1.sh", 47, 10)]
    assert "starts 8 processes per node (--nproc_per_node 8) but the node exposes 4" in next(
        d.message for d in rep.diagnostics if d.code == "RTC731")


def test_two_nodes_with_rank_0_is_rtc723():
    found, _ = _lint(node1=NODE1.replace("NODE_RANK=1", "NODE_RANK=0"))
    assert [f[0] for f in found] == ["RTC723"]


SAMPLE = """A=(x "y z" $(hostname))  # a comment
B=( a # a comment (with parens)
  b )
echo ${#A[@]} ${A[1]} "${A[1]}" "${B[@]}" ${B[*]} "${B[*]}" $B ${B[0]}
B+=(c)
echo ${B[-1]} ${#B[@]} "pre${B[@]}post" "${C[@]}" "${E[@]}" ${B[5]}x
E=()
echo "${E[@]}" end
"""


def test_array_expansions():
    run = read_shell("a.sh", SAMPLE)
    first, second, third = (c.argv for c in run.commands)
    assert first == ["echo", "3", "y", "z", "y z", "a", "b", "a", "b", "a b", "a", "a"]
    assert second == ["echo", "c", "3", "prea", "b", "cpost", "${C[@]}", "${E[@]}", "x"]
    assert run.commands[1].words[6].unresolved == ("C",)
    assert third == ["echo", "end"]
    assert run.settings["A"].items[2] == "$(hostname)"
    assert "$(...)" in run.settings["A"].unresolved


def test_scontrol_hostnames_array_is_not_an_unknown_command():
    text = ('#!/bin/bash\nnodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))\n'
            'head=${nodes[0]}\nexport CUDA_VISIBLE_DEVICES=0,1\n'
            'torchrun --nnodes 1 --nproc_per_node 2 train.py --host $head\n')
    rep = lint_scripts([("job.sh", text.encode())])
    assert not [d for d in rep.diagnostics if d.code == "RTC702"]
    run = read_shell("job.sh", text)
    assert run.settings["head"].unresolved == ("$(...)",)
