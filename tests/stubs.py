"""Running generated scripts under bash with stub executables first on PATH
(tests/bin-stubs): vllm, ray, torchrun, python3 (the generic recorder), hccn_tool,
sysctl and mpirun (HCCL Test's launcher; all_reduce_test is found through HCCL_TEST_BIN). Nothing real is started and no address is contacted."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

STUBS = Path(__file__).resolve().parent / "bin-stubs"
RECORDERS = ("vllm", "ray", "torchrun", "python3")


@dataclass
class Call:
    name: str
    argv: list
    env: dict


def make_bin(tmp: Path) -> Path:
    """A folder of stub executables (copies, so the names are right)."""
    out = tmp / "stub-bin"
    out.mkdir(exist_ok=True)
    for name in RECORDERS:
        shutil.copy(STUBS / "stub", out / name)
    for name in ("hccn_tool", "sysctl", "mpirun"):
        shutil.copy(STUBS / name, out / name)
    for p in out.iterdir():
        p.chmod(0o755)
    return out


def run_script(script: Path, *args: str, tmp: Path, env: dict | None = None,
               cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, list[Call]]:
    """Run ``bash script args`` with the stubs first on PATH; returns the process and the
    calls the stubs recorded, in order."""
    bin_dir = make_bin(tmp)
    log = tmp / f"calls-{script.stem}.log"
    if log.exists():
        log.unlink()
    full = {k: v for k, v in os.environ.items() if not k.startswith(("RTC_STUB", "MODEL",
                                                                      "ENTRY", "HCCN_TOOL"))}
    full.update({"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                 "RTC_STUB_LOG": str(log)})
    full.update(env or {})
    proc = subprocess.run(["bash", str(script), *args], capture_output=True, text=True,
                          env=full, cwd=cwd or tmp, timeout=120)
    return proc, read_calls(log)


def read_calls(log: Path) -> list[Call]:
    if not log.exists():
        return []
    out = []
    for rec in log.read_text(encoding="utf-8").split("\x1e"):
        if not rec:
            continue
        head, _, env = rec.partition("\x1d")
        parts = head.split("\x1f")
        pairs = [e.split("=", 1) for e in env.split("\x1f") if "=" in e]
        out.append(Call(parts[0], parts[1:], {k: v for k, v in pairs}))
    return out


def run_pod(script: str, *, tmp: Path, env: dict, ray_nodes: int = 0
            ) -> tuple[subprocess.CompletedProcess, list[Call]]:
    """Run a pod's ``/bin/sh -c script`` with the stubs first on PATH and ``env`` as the
    container's environment; ``ray status`` prints ``ray_nodes`` node lines (so a Ray
    leader's wait for its group ends) and is not recorded."""
    bin_dir = make_bin(tmp)
    ray = bin_dir / "ray"
    real = bin_dir / "rec" / "ray"   # the recorder, under its own name
    real.parent.mkdir(exist_ok=True)
    shutil.copy(STUBS / "stub", real)
    real.chmod(0o755)
    ray.write_text('#!/usr/bin/env bash\nif [ "${1:-}" = status ]; then\n'
                   '  for i in $(seq 1 "${RTC_STUB_RAY_NODES:-0}"); do echo " 1 node_$i"; done\n'
                   '  exit 0\nfi\nexec "$(dirname "$0")/rec/ray" "$@"\n')
    ray.chmod(0o755)
    log = tmp / "calls-pod.log"
    if log.exists():
        log.unlink()
    full = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "RTC_STUB_LOG": str(log), "RTC_STUB_RAY_NODES": str(ray_nodes)}
    full.update(env)
    proc = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                          env=full, cwd=tmp, timeout=60)
    return proc, read_calls(log)
