"""Shared test helpers: case discovery and running the installed `rtc` console script."""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

#: the tests folder and the repository root: tests find their data through these, never
#: through their own location (they live one folder down, by package).
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CASES = TESTS / "cases"
GOLDEN = TESTS / "golden"
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"

_EXPECT = re.compile(r"#\s*expect:\s*(.+)")


def expectations(path: Path) -> list[tuple[str, int, int]] | None:
    """Read `# expect: RTC208 14:13` header lines: [(code, line, col)]; [] for `none`."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line.strip())
        if not m:
            continue
        spec = m.group(1).strip()
        if spec == "none":
            return []
        code, pos = spec.split()
        ln, col = pos.split(":")
        out.append((code, int(ln), int(col)))
    return out or None


def rtc_command() -> list[str]:
    """The installed console script (falls back to `python -m rtc`)."""
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def run_rtc(*args: str, cwd: Path | None = None, input: str | None = None):
    """Run the real `rtc` CLI in a subprocess; returns CompletedProcess (text)."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    return subprocess.run(rtc_command() + list(args), cwd=cwd, capture_output=True, text=True,
                          env=env, input=input, timeout=120)


@pytest.fixture
def rtc():
    return run_rtc


@pytest.fixture(autouse=True)
def _restore_process_state():
    """Tests that call ``rtc.cli.main()`` in this process leave what it changes for a
    short-lived command behind: the cyclic collector off and rtc's SIGTERM handler (which
    made the pytest run itself ignore ``timeout``'s SIGTERM). Put both back after every
    test."""
    import gc
    import signal

    handler = signal.getsignal(signal.SIGTERM)
    enabled = gc.isenabled()
    yield
    if signal.getsignal(signal.SIGTERM) is not handler:
        signal.signal(signal.SIGTERM, handler)
    if enabled and not gc.isenabled():
        gc.enable()


# ----- helpers several test folders share

def run_main(monkeypatch, *argv: str) -> int:
    """Run ``rtc.cli.main`` in this process with ``argv``; its exit code. The collector
    and the SIGTERM handler main() changes are put back."""
    from rtc.cli import main

    monkeypatch.setattr(sys, "argv", ["rtc", *argv])
    old_handler = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as info:
            main()
    finally:
        gc.enable()
        signal.signal(signal.SIGTERM, old_handler)
    return info.value.code


def make_table(servers: int = 2, devices=range(8), version: str = "1.0", *, pods: int = 0,
               host: bool = False, name: str = "node_{s}") -> dict:
    """A valid table in rtc's canonical key order: device IPs 10.<s>.0.<d+1>, ranks in
    order, (1.2) SDIDs s*16+d and ``pods`` super pods of consecutive servers."""
    server_list = []
    rank = 0
    for s in range(servers):
        entry = {"server_id": name.format(s=s)}
        if host:
            entry["host_ip"] = f"192.0.2.{s + 1}"
        devs = []
        for d in devices:
            item = {"device_id": str(d)}
            if version == "1.2":
                item["super_device_id"] = str(s * 16 + d)
            item["device_ip"] = f"10.{s}.0.{d + 1}"
            item["rank_id"] = str(rank)
            rank += 1
            devs.append(item)
        entry["device"] = devs
        server_list.append(entry)
    doc = {"status": "completed", "version": version, "server_count": str(servers),
           "server_list": server_list}
    if version == "1.2" and pods:
        per = -(-servers // pods)
        doc["super_pod_list"] = [
            {"super_pod_id": str(p), "server_list": [{"server_id": server_list[s]["server_id"]}
                                                     for s in range(p * per, min(servers, (p + 1) * per))]}
            for p in range(pods)]
    return doc


def dump(doc) -> str:
    return json.dumps(doc, indent=2) + "\n"


def mindie_files(result) -> dict:
    """The files rtc writes for every job of a compiled MindIE result: {name: text}."""
    from rtc.emit.bundle import build_bundle

    b = build_bundle(result.topology, result.plan, list(result.topology.jobs),
                     {j.name: f"hccl-{j.name}.json" for j in result.topology.jobs})
    assert b.diagnostics == []
    return {name: text for name, text, _m in b.outputs}


def two_node_scripts(worker_ip: str, worker_flags: str, visible: str = "0,1,2,3,4,5,6,7"):
    """`rtc lint` of a vLLM DP head (node1.sh, TP 8, DP 2) and a worker with ``worker_flags``."""
    from rtc.api.linting import lint_scripts

    head = ("export HCCL_IF_IP=10.0.0.6\nexport GLOO_SOCKET_IFNAME=eno0 ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
            "vllm serve /m --port 8004 -dp 2 -dpl 1 --data-parallel-address 10.0.0.6 "
            "--data-parallel-rpc-port 13389 -tp 8\n")
    worker = (f"export HCCL_IF_IP={worker_ip}\nexport GLOO_SOCKET_IFNAME=eno0 ASCEND_RT_VISIBLE_DEVICES={visible}\n"
              f"vllm serve /m --port 8004 --headless -dp 2 -dpl 1 -dpr 1 {worker_flags} "
              "--data-parallel-rpc-port 13389 -tp 8\n")
    return lint_scripts([("node1.sh", head), ("node2.sh", worker)])
