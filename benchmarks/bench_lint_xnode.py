"""Time `rtc lint` of one hand-written vLLM-Ascend DP deployment of 4,096 node scripts
(issue 33: <= 10 s), the shape of tests/lint_cases/xnode: every node sources nothing,
sets nic_name/local_ip, exports HCCL_IF_IP=$local_ip, and runs `vllm serve` with DP
2 x 4,096 = 8,192, TP 4, expert parallel; node 0 is the head, the others --headless with
their start ranks. The cross-node rules (RTC722 values every node gives alike, RTC530 start
ranks) see all 4,096 nodes.

usage: python benchmarks/bench_lint_xnode.py [--nodes N] [--mistake]

Prints wall and CPU seconds of the in-process lint (read, lift, plan, checks) and of one
`rtc lint` process over the files; ``--mistake`` gives the last node another TP size (one
RTC722 finding expected)."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def node_script(k: int, nodes: int, tp: int = 4) -> str:
    """Node ``k``'s script of an ``nodes``-node DP deployment (2 DP ranks per node)."""
    n = k + 1
    own = f"10.{20 + n // 65536}.{(n // 256) % 256}.{n % 256}"
    role = ["  --port 8004 \\"] if k == 0 else \
        ["  --headless \\", f"  --data-parallel-start-rank {2 * k} \\"]
    return "\n".join([
        "#!/bin/bash", 'nic_name="enp23s0f3"', f'local_ip="{own}"', 'head_ip="10.20.0.1"',
        "export HCCL_IF_IP=$local_ip", "export GLOO_SOCKET_IFNAME=$nic_name",
        "export HCCL_SOCKET_IFNAME=$nic_name",
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "vllm serve /models/moe-w8a8 \\", *role,
        f"  --data-parallel-size {2 * nodes} --data-parallel-size-local 2 \\",
        "  --data-parallel-address $head_ip --data-parallel-rpc-port 13389 \\",
        f"  --tensor-parallel-size {tp} --enable-expert-parallel \\",
        "  --max-model-len 8192 --max-num-seqs 16 --max-num-batched-tokens 4096", ""])


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=4096)
    ap.add_argument("--mistake", action="store_true")
    args = ap.parse_args(argv)
    from rtc.api.linting import lint_files

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k in range(args.nodes):
            tp = 8 if args.mistake and k == args.nodes - 1 else 4
            p = os.path.join(tmp, f"node-{k:05d}.sh")
            Path(p).write_text(node_script(k, args.nodes, tp), encoding="utf-8")
            paths.append(p)
        w0, c0 = time.perf_counter(), _cpu()
        rep = lint_files(paths)
        w1, c1 = time.perf_counter(), _cpu()
        codes = sorted({d.code for d in rep.diagnostics})
        print(f"in-process lint of {args.nodes} node scripts: wall {w1 - w0:.2f} s, "
              f"CPU {c1 - c0:.2f} s; findings {len(rep.diagnostics)} {codes}")
        exe = [sys.executable, "-m", "rtc", "lint", *paths]
        w0, c0 = time.perf_counter(), _cpu()
        res = subprocess.run(exe, capture_output=True, text=True)
        w1, c1 = time.perf_counter(), _cpu()
        print(f"`rtc lint` process: wall {w1 - w0:.2f} s, CPU {c1 - c0:.2f} s, exit "
              f"{res.returncode} (target <= 10 s wall)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
