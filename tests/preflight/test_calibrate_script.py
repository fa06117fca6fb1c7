"""`calibrate.sh` (rtc compile --out-dir): which HCCL Test runs it plans, and a run of the
script against a stub `mpirun` whose output `rtc calibrate` turns back into the link
parameters the stub was made with."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_rtc
from rtc.api import compile_file
from rtc.plan.calibration import plan_calibration

STUB = r'''#!/usr/bin/env python3
"""mpirun stand-in: prints HCCL Test output for -n RANKS made from alpha 20 us and
22 GB/s per ring step, and records its arguments and ASCEND_RT_VISIBLE_DEVICES."""
import os, sys
args = sys.argv[1:]
n = int(args[args.index("-n") + 1])
with open(os.environ["STUB_LOG"], "a") as log:
    log.write(" ".join(args) + " | " + os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "") + "\n")
print("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:")
size = 8192
while size <= 1 << 30:
    t = 2 * (n - 1) * 20e-6 + size * 2 * (n - 1) / n / 22e9
    print(f"{size} | {t * 1e6:.4f} | {size / t / 1e9:.5f} | success")
    size *= 2
'''


def test_runs_planned_per_link_class():
    a3 = compile_file(str(ROOT / "examples" / "a3-2node-dp2-tp16.rtc")).topology
    runs = {r.link: r for r in plan_calibration(a3, a3.jobs)}
    assert set(runs) == {"hccs-a3", "sio-a3", "ub-a3"}       # one super pod: no RoCE run
    assert (runs["sio-a3"].ranks, runs["sio-a3"].devices) == (2, (0, 1))
    assert (runs["ub-a3"].ranks, runs["ub-a3"].per_server) == (2, 1)
    a2 = compile_file(str(ROOT / "examples" / "a2-1node-tp8.rtc")).topology
    assert [r.link for r in plan_calibration(a2, a2.jobs)] == ["hccs-910b"]


def _run_script(tmp_path: Path, stub_text: str, example: str = "a2-2node-dp2-tp8.rtc"):
    out = tmp_path / "out"
    assert run_rtc("compile", str(ROOT / "examples" / example),
                   "--out-dir", str(out), "--no-diagrams").returncode == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "mpirun"
    stub.write_text(stub_text)
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               STUB_LOG=str(tmp_path / "mpirun.log"), HCCL_TEST_BIN="/opt/hccl_test/bin")
    return subprocess.run(["bash", str(out / "calibrate.sh"), str(tmp_path / "res")],
                          env=env, capture_output=True, text=True, timeout=60)


def test_failed_runs_make_the_script_fail_and_are_not_offered(tmp_path: Path):
    res = _run_script(tmp_path, "#!/bin/sh\necho 'HcclGetRootInfo failed'\nexit 3\n")
    assert res.returncode == 1
    assert res.stderr.count("failed (3)") == 2 and "rtc calibrate" not in res.stdout


def test_visible_devices_are_named_as_the_container_sees_them():
    text = (ROOT / "examples" / "a2-2node-dp2-tp8.rtc").read_text(encoding="utf-8")
    text = text.replace("  devices 0..7\n", "  devices 4..7\n  visible_devices 4..7\n")
    text = text.replace("  device_ip 6.0.2.1 step 2", "  device_ip 6.0.2.9 step 2")
    text = text.replace("  gateway 6.0.2.0 step 2", "  gateway 6.0.2.8 step 2")
    text = text.replace("  device_ip 6.0.2.17 step 2", "  device_ip 6.0.2.25 step 2")
    text = text.replace("  gateway 6.0.2.16 step 2", "  gateway 6.0.2.24 step 2")
    text = text.replace("  tp 8", "  tp 4")
    from rtc.api import compile_text
    result = compile_text(text, "vis.rtc")
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"], \
        [d.message for d in result.diagnostics]
    runs = plan_calibration(result.topology, result.topology.jobs)
    assert [r.devices for r in runs] == [(0, 1, 2, 3), (0,)]


def test_script_runs_and_its_output_calibrates(tmp_path: Path):
    res = _run_script(tmp_path, STUB)
    log = tmp_path / "mpirun.log"
    assert res.returncode == 0, res.stderr
    calls = log.read_text().splitlines()
    assert calls[0].startswith("-f ") and "-n 8 /opt/hccl_test/bin/all_reduce_test" in calls[0]
    assert calls[0].endswith("-p 8 | 0,1,2,3,4,5,6,7")
    assert "-n 2 /opt/hccl_test/bin/all_reduce_test -b 8K -e 1G -f 2 -p 1 | 0" in calls[1]
    hosts = (tmp_path / "res" / "hosts-roce-200ge").read_text().split()
    assert hosts == ["10.0.0.6:1", "10.0.0.5:1"]
    cmd = next(line.strip() for line in res.stdout.splitlines() if "roce-200ge" in line
               and line.strip().startswith("rtc calibrate"))
    argv = cmd.split()[1:]
    assert argv[1] == str(tmp_path / "res" / "all_reduce-roce-200ge-2p.txt")
    fit = run_rtc(*argv)
    assert fit.returncode == 0, fit.stderr
    assert "param roce-200ge.alpha = 20us" in fit.stdout
    assert "param roce-200ge.bandwidth = 22GB/s" in fit.stdout
