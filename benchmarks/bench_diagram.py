#!/usr/bin/env python3
"""Diagram benchmark: the collapsed topology view of the 1,024- and 4,096-server A3
families (16,384 and 65,536 NPUs).

For each example it measures, over ``--runs`` runs (median):

  end-to-end  `rtc diagram FILE -o topo.svg` in a fresh process (interpreter start,
              compile with every check, DOT, Graphviz render, atomic write)
  compile     rtc.api.compile_file in this process
  dot         building the DOT text (rtc.emit.diagram.diagram_dot)
  render      Graphviz `dot -Tsvg` on that text

and prints the sizes of the DOT and SVG. The target is <= 5 s end to end for 65,536 NPUs;
``--check`` exits 1 when it is missed. Needs Graphviz (`apt-get install graphviz`).

Usage:  python benchmarks/bench_diagram.py [--runs 3] [--check] [--view topology]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EXAMPLES = [("family-a3-1024", 1024, 16384), ("family-a3-4096", 4096, 65536)]
TARGET_S = 5.0


def rtc_cmd() -> list[str]:
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def median_time(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--view", default="topology", choices=("topology", "groups", "network"))
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 if 65,536 NPUs take more than {TARGET_S:.0f} s end to end")
    args = ap.parse_args(argv)
    if shutil.which("dot") is None:
        print("Graphviz `dot` is not installed (apt-get install graphviz)", file=sys.stderr)
        return 2

    from rtc.api import compile_file
    from rtc.emit.diagram import Options, diagram_dot, render

    print(f"{'example':<16} {'servers':>7} {'NPUs':>7}  {'end-to-end':>10} {'compile':>8} "
          f"{'dot':>7} {'render':>7}  {'DOT':>8} {'SVG':>8}")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="rtc-bench-diagram-") as tmp:
        for stem, servers, npus in EXAMPLES:
            src = ROOT / "examples" / f"{stem}.rtc"
            out = Path(tmp) / f"{stem}.svg"
            argv_ = rtc_cmd() + ["diagram", str(src), "--view", args.view, "-o", str(out)]

            def end_to_end():
                res = subprocess.run(argv_, capture_output=True, text=True)
                if res.returncode != 0:
                    raise SystemExit(f"rtc diagram failed for {stem}:\n{res.stderr[-2000:]}")

            e2e, _ = median_time(end_to_end, args.runs)
            t_compile, result = median_time(lambda: compile_file(str(src)), args.runs)
            opts = Options(view=args.view)
            t_dot, source = median_time(
                lambda: diagram_dot(result.topology, result.diagnostics, opts), args.runs)
            t_render, svg = median_time(lambda: render(source, "svg"), args.runs)
            print(f"{stem:<16} {servers:>7,} {npus:>7,}  {e2e:>9.2f}s {t_compile:>7.2f}s "
                  f"{t_dot:>6.3f}s {t_render:>6.3f}s  {len(source) / 1024:>6.1f}KB "
                  f"{len(svg) / 1024:>6.1f}KB")
            if npus == 65536:
                worst = e2e
    verdict = "ok" if worst <= TARGET_S else "OVER TARGET"
    print(f"\n65,536 NPUs end to end: {worst:.2f} s (target <= {TARGET_S:.0f} s): {verdict}")
    return 1 if args.check and worst > TARGET_S else 0


if __name__ == "__main__":
    raise SystemExit(main())
