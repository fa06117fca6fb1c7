"""Benchmark: `rtc validate` on a version 1.0 rank table of 65,536 ranks.

Generates the table (8,192 Atlas 800T A2 servers x 8 devices, unique device IPs, ranks
0..65535, rtc's canonical layout) into a temporary folder, then runs the real command line
`rtc validate TABLE` in a subprocess three times and prints the median wall time. The
acceptance target is <= 3 s on the development machine (2 cores).

    python benchmarks/bench_validate.py [--ranks N] [--runs K] [--format FMT]

Exit status: 0 when the table validated cleanly (exit code 0 every run), 1 otherwise.
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


def make_table(ranks: int, per_server: int = 8) -> dict:
    servers = []
    rank = 0
    n_servers = (ranks + per_server - 1) // per_server
    for s in range(n_servers):
        devices = []
        for d in range(per_server):
            if rank >= ranks:
                break
            ip = 10 << 24 | (s * per_server + d + 1)  # 10.x.y.z, unique per device
            devices.append({"device_id": str(d),
                            "device_ip": f"{ip >> 24 & 255}.{ip >> 16 & 255}.{ip >> 8 & 255}.{ip & 255}",
                            "rank_id": str(rank)})
            rank += 1
        servers.append({"server_id": f"node{s:05d}", "device": devices})
    return {"status": "completed", "version": "1.0", "server_count": str(len(servers)),
            "server_list": servers}


def rtc_command() -> list[str]:
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--format", default="text")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "hccl.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(make_table(args.ranks), indent=2) + "\n")
        size = os.path.getsize(path)
        times = []
        ok = True
        for _ in range(args.runs):
            t0 = time.perf_counter()
            res = subprocess.run(rtc_command() + ["validate", "--format", args.format, path],
                                 capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if res.returncode != 0:
                ok = False
                sys.stderr.write(res.stdout[-2000:] + res.stderr[-2000:])
        med = statistics.median(times)
        print(f"rtc validate: {args.ranks} ranks, {size / 1e6:.1f} MB, runs "
              + ", ".join(f"{t:.2f}s" for t in times) + f"; median {med:.2f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
