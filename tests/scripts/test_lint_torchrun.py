"""torchrun / torch.distributed.launch launches across nodes, as fresh users wrote them:
the launcher's flags in a variable (Megatron-LM / MindSpeed's ``torchrun $DISTRIBUTED_ARGS
pretrain_gpt.py``), a worker's wrong ``--master_addr``, more processes than NPUs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtc.api.linting import lint_files
from rtc.scripts.shell import read_shell

HEAD_ENV = """#!/bin/bash
export HCCL_IF_IP={ip}
export HCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
"""
VARIABLE = """MASTER_ADDR={master}
NODE_RANK={rank}
DISTRIBUTED_ARGS="--nproc_per_node {nproc} --nnodes 2 --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port 6000"
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \\
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2
"""
INLINE = """torchrun --nproc_per_node {nproc} --nnodes 2 --node_rank {rank} --master_addr {master} --master_port 6000 pretrain_gpt.py \\
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2
"""


def _nodes(tmp_path: Path, form: str, ranks=(0, 1), masters=("10.20.0.1", "10.20.0.1"),
           nprocs=(8, 8)) -> list[str]:
    paths = []
    for k in range(2):
        p = tmp_path / f"n{k}.sh"
        p.write_text(HEAD_ENV.format(ip=f"10.20.0.{k + 1}") + form.format(
            rank=ranks[k], master=masters[k], nproc=nprocs[k]))
        paths.append(str(p))
    return paths


def _found(paths: list[str]):
    return [(d.code, Path(d.span.file).name, d.span.line, d.span.column, d.message)
            for d in lint_files(paths).diagnostics]


# -- F3: an unquoted variable is split into words, as bash does -------------------------

def test_an_unquoted_variable_is_split_at_blanks_a_quoted_one_is_not():
    run = read_shell("x.sh", 'A="--nnodes 2  --node_rank 1"\nE=\n'
                     'torchrun $A "$A" pre${A}post $E "$E" \'$A\' "x $A" $UNSET\n')
    assert run.commands[0].argv == [
        "torchrun", "--nnodes", "2", "--node_rank", "1", "--nnodes 2  --node_rank 1",
        "pre--nnodes", "2", "--node_rank", "1post", "", "$A", "x --nnodes 2  --node_rank 1",
        "$UNSET"]
    assert {(w.span.line, w.span.column) for w in run.commands[0].words[1:5]} == {(3, 10)}


def test_a_multiline_variable_with_continuations_is_split_like_bash():
    run = read_shell("x.sh", 'N=8\nARGS="\n    --nproc_per_node $N \\\n    --nnodes 1\n"\n'
                     'python -m torch.distributed.launch $ARGS train.py\n')
    assert run.commands[0].argv == ["python", "-m", "torch.distributed.launch",
                                    "--nproc_per_node", "8", "--nnodes", "1", "train.py"]


def test_a_variable_holding_a_commands_output_stays_one_unknown_word_when_split():
    # COMMON="... --data-parallel-address $HEAD_IP ..." after HEAD_IP=$(srun ...): bash
    # splits $COMMON at its blanks; the unknown address stays the one word $HEAD_IP (the
    # command's text, `$(srun -N1 -r 0 hostname -I)`, is not cut into words)
    run = read_shell("x.sh", "HEAD_IP=$(srun -N1 -r 0 hostname -I)\n"
                     'COMMON="--data-parallel-size 4 --data-parallel-address $HEAD_IP"\n'
                     "vllm serve m $COMMON --headless\n")
    (cmd,) = [c for c in run.commands if c.argv[:1] == ["vllm"]]
    assert cmd.argv == ["vllm", "serve", "m", "--data-parallel-size", "4",
                        "--data-parallel-address", "$HEAD_IP", "--headless"]
    assert "HEAD_IP" in cmd.words[6].unresolved


def test_export_values_are_not_split():
    run = read_shell("x.sh", 'B="x y"\nexport C=$B\necho $C\n')
    assert run.settings["C"].value == "x y"
    assert run.commands[0].argv == ["echo", "x", "y"]


def test_torchrun_flags_in_a_variable_are_read_no_false_world_size(tmp_path):
    assert _found(_nodes(tmp_path, VARIABLE)) == []


def test_torchrun_flags_in_a_variable_duplicate_node_rank_is_rtc723(tmp_path):
    got = _found(_nodes(tmp_path, VARIABLE, ranks=(0, 0)))
    assert [g[:4] for g in got] == [("RTC723", "n1.sh", 9, 10)]
    assert "n1 and n0 both give --node_rank 0" in got[0][4]


# -- F4: a worker's other --master_addr is one job with an error, not two half jobs -------

@pytest.mark.parametrize("form, line, col", [(INLINE, 6, 68), (VARIABLE, 9, 10)])
def test_a_worker_master_addr_no_node_has_is_rtc730_at_its_value(tmp_path, form, line, col):
    got = _found(_nodes(tmp_path, form, masters=("10.20.0.1", "10.20.0.3")))
    assert [g[:4] for g in got] == [("RTC730", "n1.sh", line, col)]
    assert "n1 gives --master_addr 10.20.0.3, but node rank 0 (n0) gives --master_addr " \
        "10.20.0.1" in got[0][4] and "the host of no node given" in got[0][4]
    d = lint_files(_nodes(tmp_path, form, masters=("10.20.0.1", "10.20.0.3"))).diagnostics[0]
    assert [(Path(r.span.file).name, r.span.line) for r in d.related] == [("n0.sh", line)]


def test_the_same_master_addr_on_both_nodes_has_no_finding(tmp_path):
    assert _found(_nodes(tmp_path, INLINE)) == []


def test_rtc461_of_one_node_given_does_not_claim_more_than_it_knows(tmp_path):
    one = _nodes(tmp_path, INLINE)[:1]
    got = _found(one)
    assert [g[:3] for g in got] == [("RTC461", "n0.sh", 6)]
    assert "of the scripts given, 1 starts a node of it" in got[0][4]
    assert "no script given starts its other nodes" in got[0][4]


# -- F5: more processes per node than the node exposes devices ---------------------------

@pytest.mark.parametrize("form, line, col", [(INLINE, 6, 27), (VARIABLE, 9, 10)])
def test_nproc_16_with_8_visible_npus_is_rtc731(tmp_path, form, line, col):
    got = _found(_nodes(tmp_path, form, nprocs=(8, 16)))
    assert [g[:4] for g in got] == [("RTC731", "n1.sh", line, col)]
    assert "n1 starts 16 processes per node (--nproc_per_node 16) but the node exposes 8 " \
        "devices (ASCEND_RT_VISIBLE_DEVICES 0,1,2,3,4,5,6,7)" in got[0][4]


def test_nproc_equal_to_the_visible_npus_has_no_finding(tmp_path):
    for form in (INLINE, VARIABLE):
        assert _found(_nodes(tmp_path, form, nprocs=(8, 8))) == []
