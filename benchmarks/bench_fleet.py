#!/usr/bin/env python3
"""Fleet-target benchmark (issue 37): writing the Slurm and Ansible files of an
8,192-server family (``--target slurm`` / ``--target ansible``: the fleet plan, the batch
scripts, the inventory and the playbooks, written to a folder), target <= 5 s.

The family is ``bench_scale.py``'s (A3: 16 NPUs a server, TP inside, DP across). What is
timed starts from the compiled plan and the ``--out-dir`` bundle (env files, launch and
preflight scripts: their own figures are in bench_scale.py), i.e. what the fleet targets
add. Wall and CPU time (process time) of each step, medians of ``--runs``.

    python benchmarks/bench_fleet.py [--servers 8192] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_scale import family_source  # noqa: E402

TARGET_S = 5.0


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", type=int, default=8192)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from rtc.api import compile_text
    from rtc.emit import ansible, slurm
    from rtc.emit.bundle import build_bundle
    from rtc.emit.fleet import fleet_plan

    result, w, c = _timed(lambda: compile_text(family_source("a3", args.servers * 16),
                                               "bench.rtc"))
    print(f"compile (not counted): {w:.2f} s wall, {c:.2f} s CPU")
    topo, plan = result.topology, result.plan
    b, w, c = _timed(lambda: build_bundle(topo, plan, topo.jobs, {}, with_plan_json=False))
    print(f"bundle (not counted): {w:.2f} s wall, {c:.2f} s CPU")

    def write() -> int:
        fp = fleet_plan(b, topo, plan, topo.jobs)
        files = slurm.render_all(fp) + ansible.render_all(fp)
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files:
                with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                    f.write(text)
            return sum(len(t) for _n, t in files)

    got = [_timed(write) for _ in range(args.runs)]
    row = {"servers": args.servers, "bytes": got[0][0],
           "median_s": statistics.median(g[1] for g in got),
           "cpu_s": statistics.median(g[2] for g in got), "target_s": TARGET_S}
    print(json.dumps(row))
    return 0 if row["median_s"] <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
