"""tools/*.py run by a Python without rtc's dependencies (a system ``python3``) used to stop in
a ``ModuleNotFoundError: bashlex`` traceback; each now prints one line telling the user to run
it with the project's venv and exits 2 (tools/_rtc_deps.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

TOOLS = ["public_cases.py", "fuzz.py", "fuzz_manifests.py", "ecosystem.py",
         "rules_reference.py"]


@pytest.mark.parametrize("tool", TOOLS)
def test_a_python_without_the_dependencies_gets_one_line_and_exit_2(tool):
    # -I -S: no site-packages, no PYTHONPATH -- the interpreter sees only the standard library
    res = subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / tool)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"{tool}: rtc's dependency 'lark' is not installed for ")
    assert f"run it with the project's venv: .venv/bin/python tools/{tool}" in lines[0]
    assert res.stdout == ""


def test_the_venv_python_passes_the_check():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "rules_reference.py")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("<!-- Generated from the rule catalogue")
