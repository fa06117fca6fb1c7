"""The shape of the code: one pipeline in the imports, rules declared one way, registries
that are static tuples, typed declarations, and short functions."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import rtc
from rtc.catalogue import RULES, get_rule
from rtc.rules import Rule
from conftest import ROOT

SOURCES = sorted((ROOT / "rtc").rglob("*.py"))
_spec = importlib.util.spec_from_file_location("rtc_check_layers", ROOT / "tools" / "check_layers.py")
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)


def _modules():
    for info in pkgutil.walk_packages(rtc.__path__, "rtc."):
        if info.name != "rtc.__main__":      # importing it runs the command line
            yield importlib.import_module(info.name)


def test_pipeline_layers_have_no_upward_imports_cycles_or_dynamic_imports():
    imports = layers.Imports(ROOT / "rtc")
    edges = imports.package_edges()
    assert [(a, b, w[:3]) for a, b, w in layers.upward(edges)] == []
    assert layers.cycles(edges) == []
    assert imports.dynamic == []
    assert layers.cycles(imports.edges) == []      # no file-level import circle either
    assert imports.private == []                   # no `from m import _helper` across modules
    named = {p for row in layers.STAGES for p in row}
    assert {a for a, _ in edges} | {b for _, b in edges} <= named


def test_the_layer_check_finds_an_upward_import_and_a_cycle():
    edges = {("plan", "checks"): ["rtc/plan/x.py:1"], ("model", "syntax"): ["rtc/model/y.py:2"]}
    assert layers.upward(edges) == [("plan", "checks", ["rtc/plan/x.py:1"])]
    assert layers.cycles({("a", "b"): 1, ("b", "c"): 1, ("c", "a"): 1, ("c", "d"): 1}) == \
        [["a", "b", "c"]]


def test_the_layer_check_counts_private_names_imported_across_modules(tmp_path):
    pkg = tmp_path / "rtc"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("def _helper():\n    return 1\n\n\ndef __dir__():\n    return []\n")
    (pkg / "a" / "y.py").write_text("from __future__ import annotations\n"
                                    "from rtc.a.x import _helper, __dir__\nfrom .x import _helper as h\n")
    assert layers.Imports(pkg).private == ["rtc/a/y.py:2 _helper", "rtc/a/y.py:3 _helper"]


def test_the_layer_check_runs_from_the_command_line_and_passes():
    assert layers.main([]) == 0


def test_the_readme_layout_table_follows_the_stage_list():
    """The architecture page's package table has one row per stage, in order."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("| package |", 1)[1]
    rows = [line for line in table.splitlines()[2:]]
    rows = rows[: next(i for i, line in enumerate(rows) if not line.startswith("|"))]
    shown = [tuple(re.sub(r"^rtc/|/$|\.py$", "", name)
                   for name in re.findall(r"`([^`]+)`", row.split(" | ")[0]))
             for row in rows]
    assert shown == list(layers.STAGES)


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


def test_each_rule_names_the_module_that_declares_it():
    """From a rule id to its code in one step: the catalogue entry names the module whose
    RULES tuple lists the rule, and `rtc explain` prints its file."""
    for r in RULES:
        assert r in importlib.import_module(r.module).RULES, r.code
        assert (ROOT / r.path).is_file(), r.code
    assert get_rule("RTC472").path == "rtc/checks/nccl_env.py"
    assert get_rule("RTC001").path == "rtc/rules.py"


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


#: Calls that pass the rule in a variable, so the walk below cannot name it: each is read by
#: hand (the rules it can carry are declared at the severity used). A new one must be listed.
DYNAMIC_RULE_CALLS = {
    "rtc/checks/a5_addresses.py:error(found)",       # the address rules, all errors
    "rtc/checks/cross_node.py:warning(code)",        # TP / PCP across servers, warnings
    "rtc/checks/port_conflicts.py:error(code)",      # port conflicts, all errors
    "rtc/model/lower_jobs.py:error(p.code)",         # a ValueProblem: value rules, errors
    "rtc/model/lower_network.py:error(p.code)",
    "rtc/model/lower_servers.py:error(p.code)",
    "rtc/syntax/schema.py:error(p.code)",
    "rtc/scripts/values.py:error(rule)",             # RTC720 / RTC721, errors
    "rtc/tables/semantic/v2_fields.py:error(rule_)",  # NET_LAYER / V2_PORT, errors
}
_REPORTERS = ("error", "warning", "note")


def _file_namespace(path: Path, tree: ast.Module) -> dict:
    """The module's names plus every name a ``from x import y`` in the file brings in
    (imports inside functions too)."""
    mod = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    names = dict(vars(importlib.import_module(mod)))
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            source = importlib.import_module("." * n.level + (n.module or ""), package)
            for a in n.names:
                if hasattr(source, a.name):
                    names.setdefault(a.asname or a.name, getattr(source, a.name))
    return names


def _rules_of(node: ast.expr, names: dict) -> list | None:
    """The Rule constants an argument names (both arms of ``a if c else b``), or None."""
    if isinstance(node, ast.IfExp):
        arms = [_rules_of(node.body, names), _rules_of(node.orelse, names)]
        return None if None in arms else arms[0] + arms[1]
    if isinstance(node, ast.Name):
        value = names.get(node.id)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        value = getattr(names.get(node.value.id), node.attr, None)
    else:
        return None
    return [value] if isinstance(value, Rule) else None


def test_every_call_reports_its_rule_at_a_severity_the_catalogue_allows():
    """error()/warning()/note() on a rule declared otherwise must be a named exception of
    the rule (its ``also``), so `rtc rules`, `rtc explain` and SARIF say what users see."""
    wrong, dynamic = [], set()
    for path in SOURCES:
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args
                 and getattr(n.func, "id", getattr(n.func, "attr", "")) in _REPORTERS]
        if not calls:
            continue
        names = _file_namespace(path, tree)
        for n in calls:
            said = getattr(n.func, "id", getattr(n.func, "attr", ""))
            found = _rules_of(n.args[0], names)
            where = f"{path.relative_to(ROOT).as_posix()}:{said}({ast.unparse(n.args[0])})"
            if found is None:
                dynamic.add(where)
            for r in found or ():
                if said not in [s.label for s in r.severities]:
                    wrong.append(f"{where}:{n.lineno} {r.code} is declared "
                                 f"{'/'.join(s.label for s in r.severities)}")
    assert wrong == []
    assert dynamic == DYNAMIC_RULE_CALLS


def test_other_severities_of_a_rule_are_named_and_differ_from_the_declared_one():
    for r in RULES:
        assert len(set(r.severities)) == len(r.severities), r.code
        assert all(why and not why.endswith(".") for _, why in r.also), r.code
