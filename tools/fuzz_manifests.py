"""Fuzz `rtc lint` with Kubernetes manifests: every input must lint to exit 0 or 1
(findings), never a traceback.

usage: python tools/fuzz_manifests.py [--n 1000] [--seed 1]

Inputs are the workload samples of tests/data/k8s_workloads mutated (lines dropped,
duplicated or swapped, characters replaced, values swapped for odd ones: negative and huge
numbers, words, full-width digits, lists for maps), and random documents of the kinds the
front end reads. Prints the count per exit code and exits 1 when any input raised."""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rtc_deps import require_project_deps  # noqa: E402

require_project_deps(__file__)  # one line and exit 2 under a Python without rtc's deps

SAMPLES = sorted((ROOT / "tests" / "data" / "k8s_workloads").glob("*.yaml"))
KINDS = ["Pod", "Deployment", "StatefulSet", "Job", "LeaderWorkerSet", "ModelServing",
         "RayCluster", "RayService", "InferenceService", "LLMInferenceService",
         "InferencePool", "Service", "ConfigMap", "List"]
ODD = ["-1", "0", "99999999999999999999", "four", "１６", "[]", "{}", "null", "''", "$(X)",
       "$$(Y)", "\"\\t\"", "- a", "::", "&a", "*a", "!!binary x", "1e9", "0x10"]


def mutate(text: str, rnd: random.Random) -> str:
    """``text`` with 1-4 random edits (see the module docstring)."""
    lines = text.splitlines()
    for _ in range(rnd.randint(1, 4)):
        if not lines:
            break
        k = rnd.randrange(len(lines))
        op = rnd.randrange(5)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(k, lines[rnd.randrange(len(lines))])
        elif op == 2 and ":" in lines[k]:
            key = lines[k].split(":", 1)[0]
            lines[k] = f"{key}: {rnd.choice(ODD)}"
        elif op == 3:
            j = rnd.randrange(len(lines))
            lines[k], lines[j] = lines[j], lines[k]
        else:
            line = lines[k]
            if line:
                c = rnd.randrange(len(line))
                lines[k] = line[:c] + rnd.choice("\t{}[]:'\"-$( ") + line[c + 1:]
    return "\n".join(lines) + "\n"


def generated(rnd: random.Random) -> str:
    """A random document of a kind the front end reads, with random nested values."""
    def value(depth: int):
        r = rnd.random()
        if depth > 3 or r < 0.4:
            return rnd.choice(ODD + ["8", "vllm serve m --tensor-parallel-size 2",
                                     "python3 -m sglang.launch_server --tp 4"])
        if r < 0.7:
            return {rnd.choice(["spec", "template", "containers", "args", "command", "env",
                                "resources", "limits", "size", "replicas", "roles",
                                "workerTemplate", "leaderWorkerTemplate", "tasks",
                                "selector", "ports"]): value(depth + 1)
                    for _ in range(rnd.randint(1, 3))}
        return [value(depth + 1) for _ in range(rnd.randint(0, 3))]

    import yaml

    doc = {"apiVersion": rnd.choice(["v1", "apps/v1", "batch.volcano.sh/v1alpha1",
                                     "leaderworkerset.x-k8s.io/v1"]),
           "kind": rnd.choice(KINDS), "metadata": {"name": "f"}, "spec": value(0)}
    return yaml.safe_dump(doc)


def run(n: int, seed: int) -> int:
    from rtc.api.linting import lint_scripts

    rnd = random.Random(seed)
    texts = [s.read_text() for s in SAMPLES]
    codes = {0: 0, 1: 0}
    crashes = 0
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        text = mutate(rnd.choice(texts), rnd) if rnd.random() < 0.7 else generated(rnd)
        try:
            rep = lint_scripts([(f"fuzz-{i}.yaml", text)])
            codes[0 if rep.ok else 1] += 1
        except Exception:        # noqa: BLE001 - the finding this tool looks for
            crashes += 1
            print(f"--- input {i} raised:\n{text}\n{traceback.format_exc()}")
    print(f"{n} manifests: exit 0 {codes[0]}, exit 1 {codes[1]}, tracebacks {crashes} "
          f"({time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU)")
    return 1 if crashes else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    return run(args.n, args.seed)


if __name__ == "__main__":
    sys.exit(main())
