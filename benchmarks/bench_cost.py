#!/usr/bin/env python3
"""Cost-model benchmark (issue 14): ``rtc cost`` of a whole cluster and ``rtc advise`` of
one job, as whole processes, with the targets on the 2-core development machine:

* ``rtc cost FILE --model deepseek-v3 --phase both`` at 65,536 NPUs <= 3 s;
* ``rtc advise FILE --model deepseek-v3`` for a 1,024-NPU A3 job <= 2 s (and with
  ``--max-pp 4``, which searches four times the layouts; and ``advise-kv``: the job's
  launch gives ``--max-model-len 32768``, so every layout's KV-cache budget decides
  whether it is scored, issue 36).

The clusters are the families of ``bench_scale.py`` (TP inside a server, DP across; EP
off for the 65,536-NPU cost row, where 256 experts cannot divide the EP group). Medians of ``--runs`` runs; wall and CPU time (the machine is noisy), peak RSS.

    python benchmarks/bench_cost.py [--runs 3] [--cost-npus 65536] [--advise-npus 1024]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import family_source, rtc_cmd, run_measured  # noqa: E402

TARGETS = {"cost": 3.0, "advise": 2.0, "advise-pp4": None, "advise-kv": 2.0}


def _row(name: str, argv: list[str], runs: int, cwd: Path) -> dict:
    got = [run_measured(argv, cwd) for _ in range(runs)]
    return {"name": name, "argv": argv[1:], "median_s": statistics.median(g[0] for g in got),
            "cpu_s": statistics.median(g[1] for g in got),
            "peak_rss_mb": max(g[2] for g in got) / 2 ** 20,
            "exit_codes": sorted({g[3] for g in got}), "target_s": TARGETS[name]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cost-npus", type=int, default=65536)
    ap.add_argument("--advise-npus", type=int, default=1024)
    ap.add_argument("--kind", choices=("a3", "a2"), default="a3")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.runs < 1 or args.cost_npus < 16 or args.advise_npus < 16:
        ap.error("need --runs >= 1 and at least 16 NPUs")
    rtc = rtc_cmd()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        big, small = work / "cost.rtc", work / "advise.rtc"
        # EP off: vLLM's EP group is DP x TP, and 256 experts do not divide 65,536 ranks;
        # the MoE layers then run vllm-ascend's ALLGATHER method over 4,096-rank DP groups
        big.write_text(family_source(args.kind, args.cost_npus).replace(
            "  expert_parallel on\n", ""), encoding="utf-8")
        small.write_text(family_source("a3", args.advise_npus), encoding="utf-8")
        kv = work / "advise-kv.rtc"
        kv.write_text(family_source("a3", args.advise_npus).replace(
            "  expert_parallel on\n", '  expert_parallel on\n  args "--max-model-len 32768"\n'),
            encoding="utf-8")
        rows.append(_row("cost", rtc + ["cost", str(big), "--model", "deepseek-v3", "--phase",
                                        "both"], args.runs, work))
        rows.append(_row("advise", rtc + ["advise", str(small), "--model", "deepseek-v3"],
                         args.runs, work))
        rows.append(_row("advise-pp4", rtc + ["advise", str(small), "--model", "deepseek-v3",
                                              "--max-pp", "4"], args.runs, work))
        rows.append(_row("advise-kv", rtc + ["advise", str(kv), "--model", "deepseek-v3"],
                         args.runs, work))
    print(f"{'row':12} {'NPUs':>7} {'median s':>9} {'cpu s':>7} {'peak MB':>8}  target")
    for r, npus in zip(rows, (args.cost_npus,) + (args.advise_npus,) * 3):
        target = f"<= {r['target_s']} s" if r["target_s"] else "-"
        ok = "" if r["exit_codes"] == [0] else f"  exit {r['exit_codes']}"
        print(f"{r['name']:12} {npus:>7} {r['median_s']:>9.2f} {r['cpu_s']:>7.2f} "
              f"{r['peak_rss_mb']:>8.0f}  {target}{ok}")
    if args.json:
        args.json.write_text(json.dumps({"kind": args.kind, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["exit_codes"] == [0] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
