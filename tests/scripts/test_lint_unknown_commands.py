"""RTC702 names each command rtc does not check as the user would type it (fresh user F16:
`nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )` in an sbatch script was
named "`$(scontrol`"), and echoed command text is at most 80 characters."""

from __future__ import annotations

from rtc.api.linting import lint_scripts

LAUNCH = "vllm serve m --tensor-parallel-size 8\n"


def _unknown(script: str):
    rep = lint_scripts([("job.sbatch", "#!/bin/bash\n" + script + LAUNCH)])
    return [d for d in rep.diagnostics if d.code == "RTC702"]


def test_an_array_of_a_command_substitution_is_an_assignment():
    """`nodes=( $(scontrol ...) )` is read as an array assignment (it was split by line and
    its words taken for commands): no RTC702, like `nodes=$(scontrol ...)`."""
    assert _unknown('nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )\n') == []
    assert _unknown('nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")\n') == []
    assert _unknown('nodes=(\n  $(scontrol show hostnames "$SLURM_JOB_NODELIST")\n)\n') == []


def test_known_tools_in_a_substitution_and_plain_commands():
    assert _unknown("ips=( $(hostname -I) )\n") == []
    (d,) = _unknown("mytool --go\n")
    assert d.message == "commands rtc does not check: `mytool` (job.sbatch:2:1)"


def test_a_long_command_name_is_cut_at_80_characters():
    name = "x" * 200
    (d,) = _unknown(f"{name} --go\n")
    shown = d.message.split("`")[1]
    assert len(shown) == 80 and shown == "x" * 79 + "…"
