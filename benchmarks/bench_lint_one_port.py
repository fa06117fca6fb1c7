"""Time `rtc lint` of many launches that all use one port (the fuzzed playbook of
tests/test_fuzz_smoke.py: 1,500 launches of port 8000 took ~20 s, growing with N squared).

usage: python benchmarks/bench_lint_one_port.py [--sizes 250,500,1000,1500,3000]
                                                [--shapes playbook,scripts,inventory]
                                                [--json FILE]

Shapes, each of N launches alternating ``vllm serve /m --port 8000`` and
``torchrun --master-port 29500 ...``:

* ``playbook``: one Ansible playbook of N plays (hosts node-0 .. node-N-1), each a task
  with an ``environment`` block (HCCL_IF_IP 10.0.0.6) and a ``shell`` launch. A playbook is
  read as one node, so every launch binds the same ports on one host (RTC440 overlaps).
* ``scripts``: N shell scripts given together, each one node with the same HCCL_IF_IP and
  one launch (the same host N times over).
* ``inventory``: one YAML inventory of N hosts, each its own HCCL_IF_IP and launch line
  (N nodes, one launch each: the cross-node rules see them all).

Prints, per shape and N, the CPU and wall seconds of the in-process lint (read, lift,
plan, checks, report) and the number of findings by rule."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def launch(k: int) -> str:
    """Launch ``k``: vLLM's API server on port 8000, or torchrun's rendezvous on 29500."""
    if k % 2 == 0:
        return "vllm serve /models/m --port 8000 --tensor-parallel-size 8"
    return ("torchrun --nnodes 1 --nproc-per-node 8 --master-addr 10.0.0.6 "
            "--master-port 29500 train.py")


def playbook(n: int) -> str:
    """One playbook of ``n`` plays, each starting launch k on host node-k."""
    out = []
    for k in range(n):
        out += [f"- name: start {k}", f"  hosts: node-{k}", "  gather_facts: false",
                "  tasks:", f"    - name: launch {k}", "      environment:",
                "        HCCL_IF_IP: 10.0.0.6",
                '        ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"',
                f"      ansible.builtin.shell: {launch(k)}"]
    return "\n".join(out) + "\n"


def script(k: int) -> str:
    """Shell script ``k``: one launch on host 10.0.0.6."""
    return ("#!/bin/bash\nexport HCCL_IF_IP=10.0.0.6\n"
            "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n" + launch(k) + "\n")


def inventory(n: int) -> str:
    """One YAML inventory of ``n`` hosts, each its own address and launch line."""
    out = ["all:", "  hosts:"]
    for k in range(n):
        ip = f"10.{k // 65536}.{(k // 256) % 256}.{k % 256 + 1}"
        out += [f"    node-{k}:", f"      ansible_host: {ip}", "      env:",
                f"        HCCL_IF_IP: {ip}",
                '        ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"',
                f"      launch: {launch(k)}"]
    return "\n".join(out) + "\n"


def write(shape: str, n: int, tmp: str) -> list[str]:
    """The files of ``shape`` at size ``n`` under ``tmp``; their paths."""
    if shape == "scripts":
        paths = []
        for k in range(n):
            p = os.path.join(tmp, f"node-{k:05d}.sh")
            Path(p).write_text(script(k), encoding="utf-8")
            paths.append(p)
        return paths
    name, text = ("site.yml", playbook(n)) if shape == "playbook" \
        else ("inventory.yml", inventory(n))
    p = os.path.join(tmp, name)
    Path(p).write_text(text, encoding="utf-8")
    return [p]


def measure(shape: str, n: int) -> dict:
    """One in-process lint of ``shape`` at ``n`` launches: CPU and wall seconds, findings."""
    from rtc.api.linting import lint_files

    with tempfile.TemporaryDirectory() as tmp:
        paths = write(shape, n, tmp)
        w0, c0 = time.perf_counter(), time.process_time()
        rep = lint_files(paths)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    codes = Counter(d.code for d in rep.diagnostics)
    return {"shape": shape, "n": n, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "findings": len(rep.diagnostics), "by_rule": dict(sorted(codes.items()))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,500,1000,1500,3000")
    ap.add_argument("--shapes", default="playbook,scripts,inventory")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    rows = []
    for shape in args.shapes.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            row = measure(shape, n)
            rows.append(row)
            print(f"{shape:9s} N={n:5d}: CPU {row['cpu_s']:7.2f} s, wall {row['wall_s']:7.2f} s; "
                  f"{row['findings']} findings {row['by_rule']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
