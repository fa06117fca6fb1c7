"""Time `rtc lint` of many generated node scripts (issue 13: 4,096 in <= 10 s).

usage: python benchmarks/bench_lint.py [--servers N] [--example FILE]

Compiles the example (default examples/family-a3-4096.rtc: 4,096 servers, one torchrun
job) in memory, writes each server's launch script and env file to a temporary folder, and
times one `rtc lint` process over all the scripts (wall time, the figure of the issue) and
the in-process lint (parse, lift, plan, checks)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", default=str(ROOT / "examples" / "family-a3-4096.rtc"))
    ap.add_argument("--servers", type=int, default=0, help="lint only the first N scripts")
    args = ap.parse_args(argv)
    from rtc.api import compile_file
    from rtc.api.linting import lint_files
    from rtc.emit.bundle import build_bundle

    result = compile_file(args.example)
    jobs = list(result.topology.jobs)
    bundle = build_bundle(result.topology, result.plan, jobs,
                          {j.name: "hccl.json" for j in jobs}, with_plan_json=False)
    with tempfile.TemporaryDirectory() as tmp:
        scripts = []
        for name, text, _ in bundle.outputs:
            if name.startswith("preflight-"):
                continue
            (Path(tmp) / name).write_text(text, encoding="utf-8")
            if name.endswith(".sh"):
                scripts.append(name)
        if args.servers:
            scripts = scripts[:args.servers]
        t = time.perf_counter()
        rep = lint_files([os.path.join(tmp, s) for s in scripts],
                         hardware=result.topology.preset.name)
        inproc = time.perf_counter() - t
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "rtc", "lint", "--hardware",
                               result.topology.preset.name] + scripts, cwd=tmp,
                              capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        wall = time.perf_counter() - t
    print(f"{len(scripts)} scripts: rtc lint {wall:.2f} s wall (exit {proc.returncode}), "
          f"in-process {inproc:.2f} s, {len(rep.diagnostics)} findings")
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
