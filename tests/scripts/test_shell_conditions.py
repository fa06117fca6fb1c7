"""The shell reader follows only the branch a known condition takes: ``if`` / ``elif`` /
``else`` on ``[ ]`` / ``test`` / ``[[ ]]`` comparisons, ``case WORD in PATTERN)``, and
``&&`` / ``||`` after a known test; an unknown condition reads every branch (as before).
Manifests: tests/data/k8s_workloads (README.md, "Head/worker branches")."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtc.api.linting import lint_files
from rtc.diagnostics import Severity, Span
from rtc.scripts.conditions import mark_double_brackets
from rtc.scripts.shell import Setting, read_shell

DATA = Path(__file__).resolve().parents[1] / "data" / "k8s_workloads"


def _argv(text: str, **env) -> list[list[str]]:
    """The commands (tests left out) ``text`` runs with the variables ``env`` preset."""
    pre = {k: Setting(k, v, Span("env", 1, 1), True) for k, v in env.items()}
    run = read_shell("s.sh", text, None, env=pre)
    return [c.argv for c in run.commands if c.argv[0] not in ("[", "[@", "test")]


IF_ELSE = ('if [ "$R" = 0 ]; then\n  head\nelif [[ $R == 1* ]]; then\n  one\n'
           'else\n  other $R\nfi\nafter\n')


@pytest.mark.parametrize("rank, taken", [
    ("0", [["head"]]), ("12", [["one"]]), ("3", [["other", "3"]])])
def test_if_elif_else_with_a_known_value_reads_the_taken_branch_only(rank, taken):
    assert _argv(IF_ELSE, R=rank) == taken + [["after"]]


def test_if_with_an_unknown_value_reads_every_branch_in_order():
    assert _argv(IF_ELSE) == [["head"], ["one"], ["other", "$R"], ["after"]]


def test_command_substitution_and_script_arguments_are_unknown():
    text = 'if [[ $(hostname) == head ]]; then a; else b; fi\nS="${1:-all}"\n' \
           'if [ "$S" = x ]; then c; fi\n'
    assert _argv(text) == [["a"], ["b"], ["c"]]


@pytest.mark.parametrize("cond, value, taken", [
    ('[ "$N" -eq 0 ]', "0", True), ('[ "$N" -eq 0 ]', "1", False),
    ('[ "$N" -ne 0 ]', "1", True), ('[ "$N" -lt 2 ]', "3", False),
    ('[ "$N" -ge 2 ]', "2", True), ('[ "$N" != head ]', "head", False),
    ('[ -z "$N" ]', "", True), ('[ -n "$N" ]', "", False), ('! [ -n "$N" ]', "x", False),
    ('test "$N" == worker', "worker", True), ('[[ $N == w* ]]', "worker", True),
    ('[[ $N == "w*" ]]', "worker", False), ('[[ $N != w? ]]', "wx", False)])
def test_test_operators(cond, value, taken):
    assert _argv(f"if {cond}; then\n  yes\nelse\n  no\nfi\n", N=value) == \
        [["yes" if taken else "no"]]


def test_a_non_number_to_eq_and_an_unquoted_empty_word_are_unknown():
    assert _argv('if [ "$N" -eq 0 ]; then a; else b; fi\n', N="x") == [["a"], ["b"]]
    assert _argv('if [ $N = 0 ]; then a; else b; fi\n', N="") == [["a"], ["b"]]


CASE = ('case "$ROLE" in\n  head|leader) h ;;\n  w*)\n    w\n    ;;\n  *) d ;;\nesac\n'
        'after\n')


@pytest.mark.parametrize("role, taken", [
    ("leader", "h"), ("head", "h"), ("worker", "w"), ("other", "d")])
def test_case_with_a_known_word_reads_the_first_matching_branch(role, taken):
    assert _argv(CASE, ROLE=role) == [[taken], ["after"]]


def test_case_with_an_unknown_word_reads_every_branch():
    assert _argv(CASE) == [["h"], ["w"], ["d"], ["after"]]


def test_case_without_a_match_reads_no_branch():
    assert _argv('case "$X" in\n  a) one ;;\nesac\nafter\n', X="b") == [["after"]]


@pytest.mark.parametrize("n, taken", [("0", [["a"]]), ("1", [["b"]]), (None, [["a"], ["b"]])])
def test_and_or_after_a_known_test(n, taken):
    env = {} if n is None else {"N": n}
    assert _argv('[ "$N" -eq 0 ] && a || b\n', **env) == taken


def test_an_unknown_command_before_or_still_reads_the_fallback():
    assert _argv("mkdir -p /x || fallback\n") == [["mkdir", "-p", "/x"], ["fallback"]]


def test_variables_set_in_a_skipped_branch_are_not_set():
    text = 'if [ "$R" = 0 ]; then\n  ROLE=head\nelse\n  ROLE=worker\nfi\nrun $ROLE\n'
    assert _argv(text, R="1") == [["run", "worker"]]


def test_double_brackets_are_marked_in_place_and_only_at_a_command():
    text = 'if [[ $A == b ]]; then x; fi\necho "[[1, 2]]" \'[[ a ]]x\'\n'
    marked = mark_double_brackets(text)
    assert len(marked) == len(text)
    assert marked.startswith("if [@ $A == b @]; then")
    assert marked.splitlines()[1] == text.splitlines()[1]


def _lint(name: str):
    rep = lint_files([str(DATA / name)])
    return rep, [d for d in rep.diagnostics if d.severity is Severity.ERROR]


@pytest.mark.parametrize("name", ["sts-vllm-dp-if.yaml", "sts-vllm-dp-case.yaml"])
def test_statefulset_branching_head_and_worker_on_its_ordinal_is_clean(name):
    rep, errors = _lint(name)
    assert errors == []
    (job,) = rep.topology.jobs
    assert (job.framework, job.dp, len(job.placements)) == ("vllm", 2, 2)


def test_statefulset_worker_starting_at_rank_0_is_rtc530_at_its_start_rank():
    _rep, errors = _lint("sts-vllm-dp-worker-rank0.yaml")
    assert [d.code for d in errors] == ["RTC530"]
    (d,) = errors
    line = (DATA / "sts-vllm-dp-worker-rank0.yaml").read_text().splitlines()[d.span.line - 1]
    assert "--headless --data-parallel-start-rank 0" in line
    assert line[d.span.column - 1:].startswith("--data-parallel-start-rank")
    assert "DP rank 0 is started on both vllm-dp-0 and vllm-dp-1" in d.message
