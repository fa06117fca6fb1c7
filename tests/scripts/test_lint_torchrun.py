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
