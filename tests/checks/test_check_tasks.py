"""rtc.checks.check_tasks: the checks as tasks that two processes share (issue 19). The
plan readers come first and are the only tasks that ask for the plan; joined in any order,
the tasks' results are run_checks' diagnostics."""

from __future__ import annotations

import ast
import inspect
import random

import pytest

from conftest import CASES, EXAMPLES
from rtc import checks, forked
from rtc.api import compile_file
from rtc.plan import build_plan


def _reads_its_plan(module) -> bool:
    """Whether ``module.check``'s body uses its second parameter (the plan) at all."""
    tree = ast.parse(inspect.getsource(module))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    name = fn.args.args[1].arg
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(fn))


def test_plan_readers_are_exactly_the_checks_that_read_the_plan():
    readers = [m.__name__ for m in checks.CHECKS if _reads_its_plan(m)]
    assert sorted(readers) == sorted(m.__name__ for m in checks.PLAN_READERS)
    assert all(m in checks.CHECKS for m in checks.PLAN_READERS)


def test_plan_readers_come_first_and_only_they_ask_for_the_plan():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    asked = []
    tasks = checks.check_tasks(topo, lambda: asked.append(1) or build_plan(topo))
    assert len(tasks) == len(checks.CHECKS)
    n = len(checks.PLAN_READERS)
    for task in tasks[n:]:
        task()
    assert asked == []
    tasks[0]()
    assert asked == [1]


@pytest.mark.parametrize("path", sorted((CASES / "checks").glob("*.rtc"))[::4]
                         + [EXAMPLES / "pd-a3.rtc", EXAMPLES / "a2-2node-dp2-tp8.rtc"],
                         ids=lambda p: p.name)
def test_joined_in_any_order_the_tasks_give_run_checks(path):
    result = compile_file(str(path))
    if result.topology is None:
        pytest.skip("does not lower")
    plan = build_plan(result.topology)
    results = [task() for task in checks.check_tasks(result.topology, lambda: plan)]
    random.Random(19).shuffle(results)
    assert checks.joined(results) == checks.run_checks(result.topology, plan)


@pytest.mark.skipif(not forked.can_fork(), reason="this machine cannot fork here")
def test_with_the_checks_in_a_child_the_plan_is_made_here_on_first_use(monkeypatch):
    path = str(EXAMPLES / "pd-a3.rtc")
    serial = compile_file(path)
    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    background = compile_file(path, background_checks=True)
    assert background.checks_pending and background._plan is None
    plan = background.plan
    assert plan is background.plan   # made once
    assert sorted(plan.launches) == sorted(serial.plan.launches)
    assert plan.ports.claims == serial.plan.ports.claims
    assert background.diagnostics == serial.diagnostics


def test_every_check_is_one_task_plan_readers_then_heavy_ones_first():
    topo = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).topology
    positions = [task.args[0] for task in checks.check_tasks(topo, lambda: None)]
    assert sorted(positions) == list(range(len(checks.CHECKS)))
    modules = [checks.CHECKS[k] for k in positions]
    n, h = len(checks.PLAN_READERS), len(checks.HEAVY_CHECKS)
    assert set(modules[:n]) == set(checks.PLAN_READERS)
    assert modules[n:n + h] == list(checks.HEAVY_CHECKS)
    assert not set(checks.HEAVY_CHECKS) & set(checks.PLAN_READERS)
