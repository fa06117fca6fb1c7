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


@pytest.mark.parametrize("name, where", [("dp2-srun.sbatch", (11, 28)), ("serve.yml", (12, 1))])
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
    assert out[8:12] == ["export HCCL_IF_IP=10.0.0.6",
                         "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "",
                         "vllm serve /models/m --port 8000 \\"]
    assert as_shell("x.yml", "- hosts: a\n  tasks:\n    - shell: vllm serve {{ model }}\n"
                    ).splitlines()[2] == " " * 13 + "vllm serve ${model}"
    assert as_shell("notes.txt", "hello\n") == "hello\n"


def test_an_inventory_is_one_node_per_host_with_its_env_and_launch():
    text = (DATA / "inventory.yml").read_text()
    assert found("inventory.yml", text) == [("RTC210", 17, 15)]
    rep = lint_scripts([("inventory.yml", text.replace("tensor-parallel-size 16",
                                                         "tensor-parallel-size 8"))])
    assert [d for d in rep.diagnostics if d.severity.name != "NOTE"] == []
    # both hosts were read as nodes with their own HCCL_IF_IP
    assert sorted(s.name for s in rep.topology.servers) == ["atlas-01", "atlas-02"]
