"""The shape of the code: one pipeline in the imports, rules declared one way, registries
that are static tuples, typed declarations, and short functions."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rtc
from rtc.report.rule_catalogue import RULES, get_rule
from rtc.rules import Rule

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "rtc").rglob("*.py"))
CHECK_LAYERS = ROOT.parent / "shared" / "tools" / "check_layers.py"


def _modules():
    for info in pkgutil.walk_packages(rtc.__path__, "rtc."):
        if info.name != "rtc.__main__":      # importing it runs the command line
            yield importlib.import_module(info.name)


def test_pipeline_layers_have_no_upward_imports_cycles_or_dynamic_imports():
    if not CHECK_LAYERS.exists():
        pytest.skip("../shared/tools/check_layers.py is not beside the repository")
    res = subprocess.run([sys.executable, str(CHECK_LAYERS)], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stdout
    assert res.stdout.strip().endswith(
        "architecture: 0 upward imports, 0 package cycles, 0 dynamic imports")


def test_every_declared_rule_is_in_the_catalogue_once():
    declared = {value.code for module in _modules() for value in vars(module).values()
                if isinstance(value, Rule)}
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    assert declared == set(codes)
    for r in RULES:
        assert get_rule(r.code) is r and get_rule(r.code.lower()) is r
        assert re.fullmatch(r"RTC\d{3}", r.code) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        assert "What" in r.explanation and "Fix" in r.explanation, r.code


def test_each_module_lists_the_rules_it_declares():
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Call) and getattr(n.value.func, "id", "") == "rule"]
        if not names:
            continue
        listed = next((n.value for n in tree.body if isinstance(n, ast.Assign)
                       and getattr(n.targets[0], "id", "") == "RULES"), None)
        assert isinstance(listed, ast.Tuple), f"{path}: no RULES tuple"
        assert sorted(e.id for e in listed.elts) == sorted(names), path


def test_no_rule_id_is_written_as_a_bare_string():
    """Diagnostics are made from Rule constants: a literal "RTC208" in the code (outside a
    rule() declaration) would be a rule declared a second way, or none."""
    bare = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and getattr(n.func, "id", "") == "rule" and n.args}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and re.fullmatch(r"RTC\d{3}", n.value) and id(n) not in declared:
                bare.append(f"{path.relative_to(ROOT)}:{n.lineno} {n.value}")
    assert bare == []


def test_block_specs_and_declaration_classes_agree():
    from rtc.syntax.schema import BLOCK_SPECS

    for kind, spec in BLOCK_SPECS.items():
        assert set(spec.attrs) == set(spec.decl.fields()), kind


def test_registries_are_static_tuples():
    from rtc.checks import CHECKS
    from rtc.model.lower_decls import PASSES
    from rtc.report.formats import REPORTERS

    assert isinstance(CHECKS, tuple) and all(callable(m.check) for m in CHECKS)
    assert isinstance(PASSES, tuple) and all(callable(p) for p in PASSES)
    assert [r.name for r in REPORTERS] == ["text", "json", "github", "sarif"]


#: Functions allowed over 60 lines, each with the reason it stays whole.
LONG_OK = {
    "rtc/cli/diagram_cmd.py:diagram_command": "a typer command: its signature and --help text",
}


def _long_functions(limit: int) -> list[tuple[str, int]]:
    out = []
    for path in SOURCES:
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = n.end_lineno - n.lineno + 1
                if lines > limit:
                    out.append((f"{path.relative_to(ROOT)}:{n.name}", lines))
    return out


def test_no_function_is_over_100_lines():
    assert _long_functions(100) == []


def test_functions_over_60_lines_are_few_and_named():
    long = dict(_long_functions(60))
    assert set(long) <= set(LONG_OK), sorted(set(long) - set(LONG_OK))
    assert len(LONG_OK) <= 10
