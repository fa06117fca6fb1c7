#!/usr/bin/env python3
"""Start-up benchmark: the small runs pre-commit and CI make once per changed file.

Each command runs as a whole process ``--runs`` times (interleaved, so machine noise hits
all alike); the table gives the median wall and CPU time, the time above a bare
``python -c pass``, and the targets of issue 19 (``rtc compile`` of the 2-server example
<= 0.15 s, ``rtc --help`` <= 0.06 s, on the 2-core development machine). Then one
``python -X importtime`` run of the compile is summed by package (rtc, typer, lark, the
standard library, and pydantic, which rtc's parameters no longer need), so a regression
names its importer.

Bytecode matters: with ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__`` (an
editable install in such an environment), every run compiles rtc from source; the report
says which case was measured.

    python benchmarks/bench_startup.py [--runs 15] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLE = ROOT / "examples" / "a2-2node-dp2-tp8.rtc"
TARGETS = {"compile": 0.15, "help": 0.06}


def rtc_cmd() -> list[str]:
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def measure(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NO_COLOR="1"))
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def import_breakdown(argv: list[str], cwd: Path) -> dict[str, float]:
    """Milliseconds of import time (self times from ``-X importtime``) by package."""
    exe = argv[0]
    cmd = ([sys.executable, "-X", "importtime", "-m", "rtc"] + argv[1:]
           if exe != sys.executable else [sys.executable, "-X", "importtime"] + argv[1:])
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    out: Counter = Counter()
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        top = name.strip().split(".")[0]
        group = top if top in ("rtc", "typer", "lark", "pydantic", "pydantic_core", "rich") \
            else "other"
        out[group] += int(own) / 1000
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rtc-startup-") as tmp:
        work = Path(tmp)
        cases = {
            "python": [sys.executable, "-c", "pass"],
            "help": rtc_cmd() + ["--help"],
            "compile": rtc_cmd() + ["compile", str(EXAMPLE), "-o", str(work / "x.json")],
            "check": rtc_cmd() + ["check", str(EXAMPLE)],
        }
        subprocess.run(cases["compile"], cwd=work, capture_output=True)  # warm caches
        cases["validate"] = rtc_cmd() + ["validate", str(work / "x.json")]
        wall: dict = {k: [] for k in cases}
        cpu: dict = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                w, c = measure(cmd, work)
                wall[name].append(w)
                cpu[name].append(c)
        imports = import_breakdown(cases["compile"], work)
    base = statistics.median(wall["python"])
    pyc = "cached bytecode" if not os.environ.get("PYTHONDONTWRITEBYTECODE") else \
        "PYTHONDONTWRITEBYTECODE set (bytecode only if already cached)"
    print(f"{args.runs} runs each, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {pyc}")
    print(f"{'command':<9} {'wall s':>8} {'cpu s':>8} {'above python':>13} {'target':>7}")
    rows = {}
    for name in cases:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        target = TARGETS.get(name)
        rows[name] = {"median_s": w, "cpu_median_s": c, "target_s": target}
        print(f"{name:<9} {w:8.3f} {c:8.3f} {w - base:13.3f} "
              f"{'' if target is None else f'{target:.2f}':>7}")
    print("import time of `rtc compile` (ms, self times by package): " +
          ", ".join(f"{k} {v:.1f}" for k, v in sorted(imports.items(), key=lambda kv: -kv[1])))
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "rows": rows,
                                               "imports_ms": imports}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
