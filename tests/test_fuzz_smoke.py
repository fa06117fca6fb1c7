"""The mutation fuzzer (tools/fuzz.py) runs on 150 inputs, 30 of each kind, so it cannot rot.

The seed is fixed; with it, the current code gives no finding. A failure here is a real
crash the fuzzer found: the report lists the command, the exception and the saved input
(rerun `rtc ... FILE` on it), and tools/fuzz.py with the same --seed reproduces it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_fuzz_smoke(tmp_path: Path):
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "fuzz.py"), "--n", "150",
                          "--seed", "1", "--subprocess", "0.04", "--timeout", "120",
                          "--out", str(tmp_path / "findings")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert "inputs per kind: rtc 30, tables 30, scripts 30, manifests 30, captures 30" \
        in res.stdout, res.stdout
    assert "subprocess runs: 5" in res.stdout, res.stdout
    assert "findings: 0 runs" in res.stdout, res.stdout
    for command in ("check", "compile", "validate", "import", "lint", "preflight",
                    "calibrate", "api:compile_text", "api:validate_source", "api:captures"):
        assert f" {command} " in res.stdout, (command, res.stdout)
    assert not (tmp_path / "findings").exists()


def test_deep_json_in_captures_and_flags_is_a_finding_not_a_crash():
    """The fuzzer's captures (seed 1, input 44: expect.json wrapped in 100,000 brackets)
    found json.loads's RecursionError escaping the all_reduce sweep parser; every
    json.loads of rtc now turns it into the same finding as other bad JSON."""
    from rtc.inventory.allreduce_sweep import parse_allreduce_sweep
    from rtc.scripts.values import json_problem

    deep = "[" * 100_000
    run, diags = parse_allreduce_sweep(deep + "\n")
    assert run is None and [d.code for d in diags] == ["RTC576"]
    assert json_problem(deep) == "is not JSON rtc can read (nested too deeply)"
