"""The scale benchmark runs (at 256 NPUs, one run) so it cannot rot. No timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_scale_benchmark_smoke(tmp_path: Path):
    out = tmp_path / "scale.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"),
                          "--min-npus", "256", "--max-npus", "256", "--runs", "1",
                          "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(out.read_text())
    kinds = [(r["kind"], r["npus"]) for r in data["rows"]]
    assert kinds == [("a3", 256), ("a2", 256)]
    for row in data["rows"]:
        assert row["floor"]["exit_codes"] == [0]
        assert row["compile"]["exit_codes"] == [0]
        assert row["compile"]["median_s"] > 0 and row["compile"]["peak_rss_mb"] > 0
    assert "compile" in res.stdout and "x floor" in res.stdout


def test_cost_benchmark_smoke(tmp_path: Path):
    out = tmp_path / "cost.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cost.py"),
                          "--runs", "1", "--cost-npus", "256", "--advise-npus", "64",
                          "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-2000:]
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"cost", "advise", "advise-pp4", "advise-kv"}
    assert all(r["exit_codes"] == [0] and r["cpu_s"] > 0 for r in rows.values())
