"""The GPU preflight where users are: a host without nccl-tests measures with a
torch.distributed all_reduce sweep (stub torch, tests/stub-torch, through a stub `python3`
on PATH), records NCCL's topology dump and what it skipped; `rtc preflight nccl` and
`rtc calibrate` read the sweep's JSON lines (golden: tests/golden/preflight-torch/,
RTC_UPDATE_GOLDEN=1 rewrites it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, GOLDEN, TESTS
from rtc.api import compile_text
from rtc.emit.bundle import build_bundle
from rtc.inventory.allreduce_sweep import parse_allreduce_sweep
from rtc.preflight.bench_output import read_bench_output
from rtc.preflight.nccl import judge, table

SWEEP_GOLDEN = GOLDEN / "preflight-torch" / "all_reduce_sweep-8gpu.jsonl"
H200_DUMP = TESTS / "data" / "nccl-topo-dump" / "h200-vm-1gpu.xml"
UPDATE = os.environ.get("RTC_UPDATE_GOLDEN") == "1"


def _script(tmp: Path, example: str = "gpu-h100-2node-dp2-tp8.rtc", server: str = "gpu-01",
            text: str | None = None) -> Path:
    src = text if text is not None else (EXAMPLES / example).read_text()
    r = compile_text(src, example)
    assert r.ok, [d.message for d in r.diagnostics]
    b = build_bundle(r.topology, r.plan, r.topology.jobs, {})
    script = tmp / f"preflight-{server}.sh"
    script.write_text(next(t for n, t, _m in b.outputs if n == script.name))
    return script


def _bin(tmp: Path, *, python: bool) -> Path:
    """nvidia-smi (stub) and, when ``python``, a `python3` that imports tests/stub-torch."""
    out = tmp / "bin"
    out.mkdir()
    shutil.copy(TESTS / "bin-stubs" / "nvidia-smi", out / "nvidia-smi")
    if python:
        (out / "python3").write_text(f'#!/bin/sh\nPYTHONPATH="{TESTS / "stub-torch"}" '
                                     f'exec "{sys.executable}" "$@"\n')
    for p in out.iterdir():
        p.chmod(0o755)
    return out


def _run(script: Path, tmp: Path, *, python: bool = True, **more: str
         ) -> subprocess.CompletedProcess:
    env = {**more, "PATH": f"{_bin(tmp, python=python)}:/usr/bin:/bin",
           "RTC_STUB_GPU_DIR": str(TESTS / "data" / "inventory" / "nvidia" / "hgx-h100"),
           "RTC_STUB_NCCL_DUMP": str(H200_DUMP)}
    if not python:
        env["PYTHON"] = str(tmp / "no-python")
    return subprocess.run(["bash", str(script), str(tmp / "res")], env=env,
                          capture_output=True, text=True, timeout=60)


def test_without_nccl_tests_the_torch_sweep_measures_and_is_judged(tmp_path):
    out = _run(_script(tmp_path), tmp_path)
    assert out.returncode == 0, out.stderr
    assert "skipped all_reduce_perf: not found" in out.stdout
    assert "(0 command(s) failed)" in out.stdout
    res_dir = tmp_path / "res"
    produced = (res_dir / "all_reduce_sweep.jsonl").read_text()
    if UPDATE:
        SWEEP_GOLDEN.parent.mkdir(exist_ok=True)
        SWEEP_GOLDEN.write_text(produced)
    assert produced == SWEEP_GOLDEN.read_text()
    assert (res_dir / "skipped.txt").read_text() == (
        "all_reduce_perf\tnot found (install nccl-tests or set ALL_REDUCE_PERF)\t"
        "torch.distributed all_reduce sweep (all_reduce_sweep.jsonl)\n")
    assert (res_dir / "nccl-topo-dump.xml").read_bytes() == H200_DUMP.read_bytes()
    res, diags = judge(str(res_dir))
    got = sorted((d.code, d.severity.name) for d in diags)
    # the stub's dump is the one-GPU VM's: 1 GPU and eth0, the plan 8 GPUs and mlx5_0..7
    assert got == [("RTC573", "WARNING"), ("RTC577", "NOTE")]
    dump = next(d for d in diags if d.code == "RTC573")
    assert "1 GPU where the plan uses 8" in dump.message and "no mlx5_0" in dump.message
    assert res.run.tool == "torch.distributed" and res.run.gpus == 8
    assert res.run.peak().busbw == 398.3 and len(res.run.rows) == 28
    assert "all_reduce sweep (torch.distributed), 8 GPUs" in table(res)


def test_a_slow_sweep_is_rtc570_like_a_slow_nccl_tests_run(tmp_path):
    assert _run(_script(tmp_path), tmp_path, RTC_STUB_BUSBW="25").returncode == 0
    _res, diags = judge(str(tmp_path / "res"))
    [low] = [d for d in diags if d.code == "RTC570"]
    assert "the torch.distributed all_reduce sweep peaks at 24.99 GB/s" in low.message
    assert low.span.file.endswith("all_reduce_sweep.jsonl") and low.span.line == 28


def test_with_neither_tool_the_script_says_what_it_skipped_and_succeeds(tmp_path):
    out = _run(_script(tmp_path), tmp_path, python=False)
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "res" / "skipped.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        "all_reduce_perf", "torch all_reduce sweep", "nccl topology dump"]
    assert all(line.endswith("\t-") for line in lines)
    _res, diags = judge(str(tmp_path / "res"))
    assert [(d.code, d.severity.name) for d in diags] == [("RTC574", "WARNING")] * 3


def test_a_failed_sweep_is_rtc572_naming_the_sweep(tmp_path):
    out = _run(_script(tmp_path), tmp_path, RTC_STUB_NO_CUDA="1")
    assert out.returncode == 0 and "(1 command(s) failed)" in out.stdout
    assert "No CUDA GPUs are available" in (tmp_path / "res" / "torch_all_reduce.txt").read_text()
    _res, diags = judge(str(tmp_path / "res"))
    [failed] = [d for d in diags if d.code == "RTC572"]
    assert "torch all_reduce sweep exited with 1" in failed.message


def test_the_real_one_gpu_dump_agrees_with_a_one_gpu_plan(tmp_path):
    d = tmp_path / "gpu-01"
    d.mkdir()
    shutil.copy(H200_DUMP, d / "nccl-topo-dump.xml")
    shutil.copy(SWEEP_GOLDEN, d / "all_reduce_sweep.jsonl")
    (d / "topo.txt").write_text("$ nvidia-smi topo -m\n")
    (d / "exit-codes.txt").write_text("topo.txt 1\ntorch_all_reduce.txt 0\n")
    (d / "skipped.txt").write_text("all_reduce_perf\tnot found\ttorch sweep\n")
    (d / "expect.json").write_text(json.dumps({
        "kind": "nccl", "server": "gpu-01", "gpus": [0], "islands": [[0]],
        "expected_busbw_gbps": 0.0, "expected_link": "local", "ib_hca": None}))
    _res, diags = judge(str(d))
    # the topo.txt made to fail, the fallback noted, and no RTC573: the dump agrees
    assert sorted(d.code for d in diags) == ["RTC572", "RTC577"]


# ---------------------------------------------------------------- the format's parser


def test_sweep_golden_is_parsed_exactly():
    run, diags = parse_allreduce_sweep(SWEEP_GOLDEN.read_text(), "sweep.jsonl")
    assert diags == [] and run.gpus == 8 and run.tool == "torch.distributed"
    assert [r.size for r in run.rows] == [8 << i for i in range(28)]
    last = run.rows[-1]
    assert (last.time, last.algbw, last.busbw, last.wrong) == (4717.62, 227.6, 398.3, 0)
    # busbw = algbw * 2(n-1)/n (nccl-tests doc/PERFORMANCE.md), to the printed precision
    for r in run.rows:
        assert abs(r.busbw - r.algbw * 2 * 7 / 8) <= 0.005 * 1.75 + 0.005 + 1e-9
        assert r.algbw == pytest.approx(r.size / r.time / 1e3, rel=1e-3, abs=0.005)


@pytest.mark.parametrize("edit, line, words", [
    (lambda ls: ls[1:], 1, "no 'rtc-allreduce-sweep' header"),
    (lambda ls: ls[:-1], 29, "stopped after 1,073,741,824 bytes without its end line"),
    (lambda ls: ls[:1], 1, "without any size"),
    (lambda ls: ls[:3] + ["{\"size\": 32, \"time_us\": \"fast\"}"] + ls[4:], 4,
     "not a size row"),
    (lambda ls: ls[:2] + [ls[2].replace('"wrong": 0', '"wrong": 3')] + ls[3:], 3,
     "16 bytes gave wrong results (3 elements)"),
])
def test_damaged_sweeps_are_rtc576_at_the_line(edit, line, words):
    lines = edit(SWEEP_GOLDEN.read_text().splitlines())
    _run, diags = parse_allreduce_sweep("\n".join(lines) + "\n", "s.jsonl")
    assert [(d.code, d.span.line) for d in diags] == [("RTC576", line)]
    assert words in diags[0].message


def test_calibrate_reads_the_sweep():
    run = read_bench_output("all_reduce_sweep.jsonl", SWEEP_GOLDEN.read_text())
    assert run.tool == "torch.distributed" and run.op == "allreduce"
    assert len(run.samples) == 28 and run.samples[-1].seconds == pytest.approx(4717.62e-6)


def test_a_single_sweep_file_is_judged_like_an_all_reduce_perf_file():
    res, diags = judge(str(SWEEP_GOLDEN))
    assert diags == [] and res.run.tool == "torch.distributed"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_gpu_preflight_scripts_pass_shellcheck(tmp_path):
    files = [_script(tmp_path, "gpu-h100-2node-dp2-tp8.rtc"),
             _script(tmp_path, "gpu-pcie-4x2-dp4-tp2.rtc", "pcie-01")]
    res = subprocess.run(["shellcheck", "-s", "bash", *map(str, files)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout[:3000]
