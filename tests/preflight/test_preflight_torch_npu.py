"""The Ascend preflight where users are: a host without a built HCCL Test measures the
AllReduce bandwidth with rtc's torch all_reduce sweep on torch_npu + HCCL (stub torch and
torch_npu, tests/stub-torch, through a stub `python3` on PATH); with neither, it says what
it skipped and still succeeds. `rtc preflight report` and `rtc calibrate` read the result
(golden: tests/golden/preflight-torch-npu/, RTC_UPDATE_GOLDEN=1 rewrites it; the script
itself is in the example goldens, tests/golden/a2-1node-tp8/preflight-atlas-01.sh)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, GOLDEN, TESTS, run_rtc
from rtc.inventory.allreduce_sweep import parse_allreduce_sweep
from rtc.preflight.bench_output import read_bench_output
from stubs import run_script
from test_preflight import planned_answers

SWEEP_GOLDEN = GOLDEN / "preflight-torch-npu" / "all_reduce_sweep-2npu.jsonl"
HCCL_OUTPUT = TESTS / "data" / "preflight" / "all_reduce_test-2p.txt"
UPDATE = os.environ.get("RTC_UPDATE_GOLDEN") == "1"


def _compile(tmp: Path) -> Path:
    out = tmp / "build"
    res = run_rtc("compile", str(TESTS / "data" / "preflight" / "plan.rtc"), "--out-dir",
                  str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    return out


def _python(tmp: Path) -> Path:
    """A `python` that imports the stub torch and torch_npu."""
    py = tmp / "torch-python"
    py.write_text(f'#!/bin/sh\nPYTHONPATH="{TESTS / "stub-torch"}" exec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    return py


def _run(tmp: Path, server: str = "a", **env: str):
    """Run preflight-<server>.sh of tests/data/preflight/plan.rtc (2 NPUs): no HCCL Test
    (HCCL_TEST_BIN points nowhere), PYTHON the stub-torch Python unless given."""
    out = _compile(tmp)
    env = {"HCCL_TEST_BIN": str(tmp / "no-hccl-test"), "PYTHON": str(_python(tmp)),
           "RTC_STUB_HCCN_DIR": str(planned_answers(out, tmp)[server]), **env}
    proc, _calls = run_script(out / f"preflight-{server}.sh", str(tmp / "res" / server),
                              tmp=tmp, env=env)
    return proc, tmp / "res" / server


def _report(folder: Path):
    res = run_rtc("preflight", "report", str(folder), "--format", "json")
    return res, json.loads(res.stdout)


def test_without_hccl_test_the_torch_npu_sweep_measures_and_is_reported(tmp_path):
    proc, res = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "skipped hccl_test: no " in proc.stdout and "(0 command(s) failed)" in proc.stdout
    produced = (res / "all_reduce_sweep.jsonl").read_text()
    if UPDATE:
        SWEEP_GOLDEN.parent.mkdir(exist_ok=True)
        SWEEP_GOLDEN.write_text(produced)
    assert produced == SWEEP_GOLDEN.read_text()
    why = f"no {tmp_path}/no-hccl-test/all_reduce_test (build CANN tools/hccl_test or set " \
          "HCCL_TEST_BIN)"
    assert (res / "skipped.txt").read_text() == (
        f"hccl_test\t{why}\ttorch_npu all_reduce sweep (all_reduce_sweep.jsonl)\n")
    log = (res / "torch_all_reduce.txt").read_text().splitlines()
    assert log[0] == f"$ ASCEND_RT_VISIBLE_DEVICES=0,1 {tmp_path}/torch-python " \
                     "all_reduce_sweep.py 2 npu all_reduce_sweep.jsonl"
    out, doc = _report(res)
    assert out.returncode == 0, out.stderr
    assert [(d["code"], d["severity"]) for d in doc["diagnostics"]] == [("RTC581", "note")]
    [bw] = doc["bandwidth"]
    assert (bw["server"], bw["tool"], bw["npus"], len(bw["rows"])) == ("a", "torch_npu", 2, 28)
    assert bw["rows"][-1] == {"size": 1 << 30, "time_us": 2704.35, "algbw": 397.04,
                              "busbw": 397.04}
    text = run_rtc("preflight", "report", str(res)).stdout
    assert "a: torch_npu, 2 NPUs: peak busbw 397.04 GB/s (algbw 397.04) at 1,073,741,824 " \
           "bytes" in text


def test_with_neither_tool_the_script_says_what_it_skipped_and_succeeds(tmp_path):
    proc, res = _run(tmp_path, PYTHON=str(tmp_path / "no-python"))
    assert proc.returncode == 0, proc.stderr
    lines = (res / "skipped.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["hccl_test", "torch_npu all_reduce sweep"]
    assert lines[1] == f"torch_npu all_reduce sweep\t{tmp_path}/no-python cannot import " \
                       "torch_npu\t-"
    out, doc = _report(res)
    assert out.returncode == 0   # warnings only
    got = [(d["code"], d["severity"], d["span"]["line"]) for d in doc["diagnostics"]]
    assert got == [("RTC580", "warning", 1)]   # one measurement, both tools missing
    assert "hccl_test skipped: " in doc["diagnostics"][0]["message"]
    assert "; torch_npu all_reduce sweep skipped: " in doc["diagnostics"][0]["message"]
    assert "bandwidth" not in doc


def test_a_failed_sweep_is_rtc582_naming_the_sweep(tmp_path):
    proc, res = _run(tmp_path, RTC_STUB_NO_NPU="1")
    assert proc.returncode == 0 and "(1 command(s) failed)" in proc.stdout
    assert "no NPU found" in (res / "torch_all_reduce.txt").read_text()
    out, doc = _report(res)
    assert out.returncode == 1
    [failed] = [d for d in doc["diagnostics"] if d["code"] == "RTC582"]
    assert failed["message"] == "a: torch_npu all_reduce sweep exited with 1"
    assert failed["span"]["file"].endswith("torch_all_reduce.txt")


def test_a_damaged_sweep_is_rtc576_at_its_line(tmp_path):
    _proc, res = _run(tmp_path)
    lines = (res / "all_reduce_sweep.jsonl").read_text().splitlines()
    (res / "all_reduce_sweep.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    _out, doc = _report(res)
    [cut] = [d for d in doc["diagnostics"] if d["code"] == "RTC576"]
    assert "stopped after 1,073,741,824 bytes without its end line" in cut["message"]


def test_with_hccl_test_built_it_measures_and_nothing_is_skipped(tmp_path):
    proc, res = _run(tmp_path, HCCL_TEST_BIN=str(TESTS / "bin-stubs"),
                     RTC_STUB_HCCL_OUTPUT=str(HCCL_OUTPUT))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (res / "skipped.txt").exists() and not (res / "all_reduce_sweep.py").exists()
    assert (res / "all_reduce_test.txt").read_text().splitlines()[0] == (
        "$ ASCEND_RT_VISIBLE_DEVICES=0,1 mpirun -n 2 all_reduce_test -b 8 -e 1G -f 2 -p 2")
    out, doc = _report(res)
    assert out.returncode == 0 and doc["diagnostics"] == []
    [bw] = doc["bandwidth"]
    assert (bw["tool"], bw["npus"], len(bw["rows"])) == ("HCCL Test", 2, 28)
    # busbw = algbw * 2(n-1)/n = algbw for n = 2; algbw = data_size / aveg_time
    assert bw["rows"][-1] == {"size": 1 << 30, "time_us": 19187.96, "algbw": 55.96,
                              "busbw": 55.96}


def test_a_failed_hccl_test_is_rtc582(tmp_path):
    proc, res = _run(tmp_path, HCCL_TEST_BIN=str(TESTS / "bin-stubs"))   # no output set
    assert proc.returncode == 0 and "(1 command(s) failed)" in proc.stdout
    _out, doc = _report(res)
    [failed] = [d for d in doc["diagnostics"] if d["code"] == "RTC582"]
    assert failed["message"] == "a: all_reduce_test exited with 1"


def test_older_results_without_a_planned_sweep_get_no_bandwidth_finding(tmp_path):
    """A folder of an rtc before the sweep: no `bandwidth` in expect.json, no result."""
    import shutil

    shutil.copytree(TESTS / "data" / "preflight" / "link-down", tmp_path / "old")
    for s in ("a", "b"):
        folder = tmp_path / "old" / s
        (folder / "all_reduce_test.txt").unlink()
        doc = json.loads((folder / "expect.json").read_text())
        del doc["bandwidth"]
        (folder / "expect.json").write_text(json.dumps(doc))
        codes = (folder / "exit-codes.txt").read_text().replace("all_reduce_test.txt 0\n", "")
        (folder / "exit-codes.txt").write_text(codes)
    res = run_rtc("preflight", "report", *(str(tmp_path / "old" / s) for s in ("a", "b")),
                  "--format", "json")
    doc = json.loads(res.stdout)
    assert [d["code"] for d in doc["diagnostics"]] == ["RTC560"] and "bandwidth" not in doc


# ---------------------------------------------------------------- the format's parser


def test_npu_sweep_golden_is_parsed_exactly():
    run, diags = parse_allreduce_sweep(SWEEP_GOLDEN.read_text(), "sweep.jsonl")
    assert diags == [] and run.gpus == 2 and run.devices == ["Ascend910B3"] * 2
    head = json.loads(SWEEP_GOLDEN.read_text().splitlines()[0])
    assert (head["backend"], head["nccl"], head["torch_npu"]) == (
        "hccl", None, "2.5.1.post1+rtcstub")
    assert [r.size for r in run.rows] == [8 << i for i in range(28)]
    for r in run.rows:   # n = 2: busbw = algbw * 2(n-1)/n = algbw
        assert r.busbw == r.algbw and r.wrong == 0
        assert r.algbw == pytest.approx(r.size / r.time / 1e3, rel=1e-3, abs=0.005)


def test_calibrate_reads_the_npu_sweep_and_the_hccl_test_output():
    run = read_bench_output("all_reduce_sweep.jsonl", SWEEP_GOLDEN.read_text())
    assert (run.tool, run.op, len(run.samples)) == ("torch.distributed", "allreduce", 28)
    hccl = read_bench_output("all_reduce_test-2p.txt", HCCL_OUTPUT.read_text())
    assert (hccl.tool, hccl.op, len(hccl.samples)) == ("hccl_test", "allreduce", 28)
    assert hccl.samples[-1].seconds == pytest.approx(19187.96e-6)


def test_the_fallback_script_passes_shellcheck(tmp_path):
    import shutil
    import subprocess

    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    script = _compile(tmp_path) / "preflight-a.sh"
    res = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout[:3000]


def test_a_planned_sweep_without_result_or_skipped_line_is_rtc582(tmp_path):
    import shutil

    folder = tmp_path / "a"
    shutil.copytree(TESTS / "data" / "preflight" / "all-good" / "a", folder)
    (folder / "all_reduce_test.txt").unlink()
    codes = (folder / "exit-codes.txt").read_text().replace("all_reduce_test.txt 0\n", "")
    (folder / "exit-codes.txt").write_text(codes)
    _out, doc = _report(folder)
    assert [(d["code"], d["message"]) for d in doc["diagnostics"]] == [
        ("RTC582", "a: the AllReduce sweep left no result and no skipped.txt line")]
