#!/usr/bin/env python3
"""Scale benchmark: rtc on A3, A2 and Ascend 950 (rank table 2.0) clusters from 256 to
65,536 NPUs.

For each size it generates the cluster as a server family in the rtc language (a few lines)
and measures, each in a fresh process, the median wall time and CPU time (user + system,
steadier than wall time on a noisy machine) over ``--runs`` runs and the peak RSS of:

  floor     a fresh Python process that json.load()s the rank table rtc wrote, then
            json.dumps(indent=2)s and writes it: the least any tool that reads and
            writes this table must do
  compile   rtc compile FILE -o hccl.json   (every check on)
  validate  rtc validate hccl.json
  broken    rtc validate of the same ranks as MindSpore's hccl_tools.py + merge_hccl.py
            wrote them before commit af53274: every rank_id a JSON number, so there is a
            finding (RTC610) on every rank (text output)
  groups    rtc groups FILE --format json --dim all
  diagram   rtc diagram FILE -o topo.svg    (collapsed topology view)
  out-dir   rtc compile FILE --out-dir DIR --no-diagrams  (every per-node file), into a
            folder name not used before in the run
  out-dir-again
            the same into the folder the round's out-dir step wrote (every file replaced)
  broken-json, broken-github, broken-sarif
            the broken table's validate in the other report formats (--format FMT)

It prints a table with each time's ratio to the floor and the growth factor per doubling
of NPUs (from wall and from CPU time), and writes the figures as JSON (``--json``, default
``benchmarks/results/scale.json``) for comparison across commits. Start-up (small runs)
is measured by ``benchmarks/bench_startup.py``.

Usage:  python benchmarks/bench_scale.py [--max-npus 65536] [--runs 3] [--kinds a3,a2,a5]
            [--steps floor,compile,...]
Commands that this rtc does not have are reported as n/a.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = ("floor", "compile", "validate", "broken", "groups", "diagram", "out-dir",
         "out-dir-again", "broken-json", "broken-github", "broken-sarif")


def rtc_cmd() -> list[str]:
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def family_source(kind: str, npus: int) -> str:
    """The cluster as rtc source: one family, one job (TP inside a server, DP across)."""
    if kind == "a3":
        servers = npus // 16
        return f"""cluster bench-a3 {{
  hardware atlas-800-a3
  cann 8.3.RC1
}}
family node[0000..{servers - 1:04d}] {{
  host 10.{{i/256}}.{{i%256}}.1
  nic eth0
  devices 0..15
  device_ip 172.{{16 + i/256}}.{{i%256}}.{{d+1}}
  super_pod {{i/64}}
  super_device_id base {{(i%64)*16}}
}}
job serve {{
  servers node[0000..{servers - 1:04d}]
  tp 16
  dp {servers}
  expert_parallel on
}}
"""
    if kind == "a5":
        servers = npus // 8
        return f"""cluster bench-a5 {{
  hardware atlas-950-superpod
  cann 9.0.0
}}
family node[0000..{servers - 1:04d}] {{
  host 10.{{i/256}}.{{i%256}}.1
  nic eth0
  devices 0..7
  device_ip 172.{{16 + i/256}}.{{i%256}}.{{d+1}}
  eid base 000000000000000000100000{{i:04}}0000
  super_pod {{i/1024}}
}}
job serve {{
  servers node[0000..{servers - 1:04d}]
  tp 8
  dp {servers}
  expert_parallel on
}}
"""
    servers = npus // 8
    return f"""cluster bench-a2 {{
  hardware atlas-800t-a2
  cann 8.2.RC1
}}
family node[0000..{servers - 1:04d}] {{
  host 10.{{i/256}}.{{i%256}}.1
  nic eno0
  devices 0..7
  # a /31 per NPU, gateway on the switch side (the real A2 plan)
  device_ip 6.{{i/4096}}.{{(i/16)%256}}.{{(i%16)*16 + 2*d + 1}}
  gateway 6.{{i/4096}}.{{(i/16)%256}}.{{(i%16)*16 + 2*d}}
  prefix 31
}}
job serve {{
  servers node[0000..{servers - 1:04d}]
  tp 8
  dp {servers}
  expert_parallel on
}}
"""


def run_measured(argv: list[str], cwd: Path) -> tuple[float, float, int, int]:
    """Run argv; return (wall seconds, CPU seconds (user + system), peak RSS in bytes,
    exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NO_COLOR="1"))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, code


FLOOR = ("import json, sys\n"
         "with open(sys.argv[1], encoding='utf-8') as f:\n"
         "    doc = json.load(f)\n"
         "with open(sys.argv[2], 'w', encoding='utf-8') as f:\n"
         "    f.write(json.dumps(doc, indent=2) + '\\n')\n")


def broken_table(table: Path, out: Path) -> None:
    """``table`` as merge_hccl.py first wrote it: every rank_id a JSON number, server_id
    the host IP, host_nic_ip "reserve", 4-space indent (MS-MODELS merge_hccl.py 3a2f16b)."""
    doc = json.loads(table.read_text(encoding="utf-8"))
    if doc.get("version") == "2.0":  # the 1.x habit in a 2.0 table: every rank_id a string
        for rank in doc["rank_list"]:
            rank["rank_id"] = str(rank["rank_id"])
        out.write_text(json.dumps(doc, indent=4), encoding="utf-8")
        return
    for server in doc["server_list"]:
        server["host_nic_ip"] = "reserve"
        for device in server["device"]:
            device["rank_id"] = int(device["rank_id"])
            device.pop("super_device_id", None)
    doc.pop("super_pod_list", None)
    doc["version"] = "1.0"
    out.write_text(json.dumps(doc, indent=4), encoding="utf-8")


def has_command(name: str) -> bool:
    res = subprocess.run(rtc_cmd() + [name, "--help"], capture_output=True, text=True)
    return res.returncode == 0


def bench_size(kind: str, npus: int, runs: int, work: Path, commands: dict,
               wanted: tuple[str, ...] = STEPS) -> dict:
    src = work / f"{kind}-{npus}.rtc"
    src.write_text(family_source(kind, npus))
    table = work / f"{kind}-{npus}.json"
    out = {"kind": kind, "npus": npus}
    # Produce the table once (also checks the source compiles).
    res = subprocess.run(rtc_cmd() + ["compile", str(src), "-o", str(table)], capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise SystemExit(f"compile failed for {kind} {npus}:\n{res.stderr[-2000:]}")
    broken = work / f"{kind}-{npus}-merged.json"
    broken_table(table, broken)
    floor_py = work / "floor.py"
    floor_py.write_text(FLOOR)
    steps = {
        "floor": [sys.executable, str(floor_py), str(table), str(work / "floor.json")],
        "compile": rtc_cmd() + ["compile", str(src), "-o", str(work / "out.json")],
        "validate": rtc_cmd() + ["validate", str(table)],
        "broken": rtc_cmd() + ["validate", str(broken)],
        "groups": rtc_cmd() + ["groups", str(src), "--format", "json", "--dim", "all"],
        "diagram": rtc_cmd() + ["diagram", str(src), "-o", str(work / "topo.svg")],
        # {dir} is a new folder name each round, and no round's folder is removed before the
        # last round: on this project's ext4 (mounted with `discard`), creating files soon
        # after 24,000 were removed costs up to ~0.5 ms each of kernel time (14 s in all,
        # against 0.8-1.5 s on a quiet disk), which measures the kernel, not rtc. Before each
        # run the disk is synced (outside the timing), so no run pays for the previous
        # run's writes. "out-dir-again" writes over the files of the round's first run, as
        # a user re-running into build/ does.
        "out-dir": rtc_cmd() + ["compile", str(src), "--out-dir", "{dir}", "--no-diagrams"],
        "out-dir-again": rtc_cmd() + ["compile", str(src), "--out-dir", "{dir}",
                                      "--no-diagrams"],
    }
    for fmt in ("json", "github", "sarif"):  # the broken table in the other report formats
        steps[f"broken-{fmt}"] = rtc_cmd() + ["validate", "--format", fmt, str(broken)]
    steps = {name: argv for name, argv in steps.items()
             if commands.get(name, True) and name in wanted}
    times: dict = {name: [] for name in steps}
    cpu: dict = {name: [] for name in steps}
    rss: dict = {name: [] for name in steps}
    codes: dict = {name: set() for name in steps}
    # Rounds of every step in turn, so a burst of machine noise hits all steps of a round
    # alike instead of one step's every run (the ratios to the floor stay meaningful).
    for round_no in range(runs):
        folder = work / f"out-{round_no}"
        for name, argv in steps.items():
            argv = [str(folder) if a == "{dir}" else a for a in argv]
            os.sync()
            wall, cpu_s, peak, code = run_measured(argv, work)
            times[name].append(wall)
            cpu[name].append(cpu_s)
            rss[name].append(peak)
            codes[name].add(code)
    for name in STEPS:
        out[name] = None if name not in steps else {
            "median_s": statistics.median(times[name]), "min_s": min(times[name]),
            "cpu_median_s": statistics.median(cpu[name]),
            "peak_rss_mb": max(rss[name]) / 2**20, "exit_codes": sorted(codes[name])}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-npus", type=int, default=256)
    ap.add_argument("--max-npus", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--kinds", default="a3,a2")
    ap.add_argument("--json", default=str(HERE / "results" / "scale.json"))
    ap.add_argument("--steps", default=",".join(STEPS),
                    help="which steps to run (floor always runs): " + ",".join(STEPS))
    args = ap.parse_args(argv)
    wanted = tuple(s for s in STEPS if s in args.steps.split(",") or s == "floor")
    unknown = sorted(set(args.steps.split(",")) - set(STEPS))
    kinds = args.kinds.split(",")
    if args.runs < 1 or unknown or set(kinds) - {"a3", "a2", "a5"} or args.max_npus < args.min_npus:
        ap.error(f"need --runs >= 1, --kinds from a3,a2,a5, --steps from {','.join(STEPS)} and "
                 f"--max-npus >= --min-npus (unknown steps: {', '.join(unknown) or 'none'})")

    commands = {name: has_command(name) for name in ("validate", "groups", "diagram")}
    for name in ("broken", "broken-json", "broken-github", "broken-sarif"):
        commands[name] = commands["validate"]
    sizes = []
    n = args.min_npus
    while n <= args.max_npus:
        sizes.append(n)
        n *= 2
    rows = []
    load_before = os.getloadavg()  # the machine is shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="rtc-bench-") as tmp:
        work = Path(tmp)
        for kind in args.kinds.split(","):
            for npus in sizes:
                row = bench_size(kind, npus, args.runs, work, commands, wanted)
                rows.append(row)
                print_row(row, rows)
    result = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "runs": args.runs,
              "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 0


def print_row(row: dict, rows: list[dict]) -> None:
    """One line per step: kind, NPUs, step, median wall and CPU seconds, their ratios to
    the floor, growth against the previous (half as large) size from wall and from CPU
    time, peak RSS."""
    if len(rows) == 1:
        print(f"{'kind':<4} {'NPUs':>6}  {'step':<13} {'wall s':>8} {'x floor':>8} {'cpu s':>8} "
              f"{'x floor':>8} {'x/2x wall':>9} {'x/2x cpu':>9} {'peak RSS':>9}  exit")
    prev = rows[-2] if len(rows) > 1 and rows[-2]["kind"] == row["kind"] else None
    floor, floor_cpu = row["floor"]["median_s"], row["floor"]["cpu_median_s"]
    for s in STEPS:
        m = row.get(s)
        if not m:
            continue
        p = prev.get(s) if prev else None
        growth = f"{m['median_s'] / p['median_s']:.2f}" if p else "-"
        growth_cpu = f"{m['cpu_median_s'] / p['cpu_median_s']:.2f}" if p and p['cpu_median_s'] else "-"
        print(f"{row['kind']:<4} {row['npus']:>6}  {s:<13} {m['median_s']:8.3f} "
              f"{m['median_s'] / floor:8.2f} {m['cpu_median_s']:8.3f} "
              f"{m['cpu_median_s'] / floor_cpu:8.2f} {growth:>9} {growth_cpu:>9} "
              f"{m['peak_rss_mb']:7.0f}MB  {','.join(map(str, m['exit_codes']))}")


if __name__ == "__main__":
    raise SystemExit(main())
