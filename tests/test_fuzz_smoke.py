"""The mutation fuzzer (tools/fuzz.py) runs on 150 inputs so it cannot rot.

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
                          "--seed", "1", "--subprocess", "0.02", "--timeout", "120",
                          "--out", str(tmp_path / "findings")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert "inputs per kind: rtc 50, tables 50, scripts 50" in res.stdout, res.stdout
    assert "subprocess runs: 3" in res.stdout, res.stdout
    assert "findings: 0 runs" in res.stdout, res.stdout
    for command in ("check", "compile", "validate", "import", "api:compile_text",
                    "api:validate_source", "api:import_table"):
        assert f" {command} " in res.stdout, (command, res.stdout)
    assert not (tmp_path / "findings").exists()
