"""Time `rtc lint` of a 1,000-document Kubernetes manifest (issue 33: <= 5 s).

usage: python benchmarks/bench_manifests.py [--docs N]

Writes one YAML file of N documents: the workload samples of tests/data/k8s_workloads
(every kind, clean and with one mistake) repeated with distinct names, and times one
`rtc lint` process over it (wall and CPU time of the child) and the in-process lint."""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def manifest(docs: int) -> str:
    """``docs`` YAML documents from the samples, names suffixed to keep them distinct."""
    samples = []
    for path in sorted((ROOT / "tests" / "data" / "k8s_workloads").glob("*.yaml")):
        samples += [d for d in path.read_text().split("\n---\n") if "kind:" in d]
    out = []
    for k in range(docs):
        doc = samples[k % len(samples)]
        out.append(re.sub(r"(?m)^(  name: )(\S+)", lambda m: f"{m.group(1)}{m.group(2)}-{k}",
                          doc, count=1))
    return "\n---\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1000)
    args = ap.parse_args(argv)
    from rtc.api.linting import lint_files

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bundle.yaml"
        path.write_text(manifest(args.docs), encoding="utf-8")
        t, cpu = time.perf_counter(), time.process_time()
        rep = lint_files([str(path)], hardware="hgx-h100")
        inproc, inproc_cpu = time.perf_counter() - t, time.process_time() - cpu
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "rtc", "lint", "--hardware", "hgx-h100",
                               str(path)], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{args.docs} documents: rtc lint {wall:.2f} s wall, {child_cpu:.2f} s CPU (exit "
          f"{proc.returncode}); in-process {inproc:.2f} s wall, {inproc_cpu:.2f} s CPU; "
          f"{len(rep.diagnostics)} findings, {len(rep.topology.jobs) if rep.topology else 0} jobs")
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
