"""Judging the results of a GPU server's preflight (``rtc preflight nccl``): the nccl-tests
bus bandwidth per message size against the plan's expectation, the captured NVLink
islands against the plan's, and commands that failed (RTC570-RTC572).

A results folder is what ``preflight-<server>.sh`` of an NVIDIA GPU plan wrote
(:mod:`rtc.emit.gpu_preflight_script`): ``expect.json`` (``"kind": "nccl"``),
``exit-codes.txt``, ``topo.txt``, ``gpus.csv``, ``all_reduce_perf.txt``. A single
``all_reduce_perf`` output file may be given instead: then only its table and its own
problems are reported (there is no expectation to compare with).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span, error, warning
from rtc.inventory.nccl_tests import NcclTestRun, load_nccl_tests
from rtc.inventory.nvidia_smi import load_gpu_list, load_gpu_topo
from rtc.rules import rule

BUSBW_LOW = rule("RTC570", "nccl-busbw-low", "warning",
                 "nccl-tests measured a bus bandwidth well below what the plan expects.", """
    What: the highest busbw of `all_reduce_perf` on a server's GPUs is below 70 % of the
    cost model's estimate for them (expect.json `expected_busbw_gbps`; rtc/cost/nccl.py).
    Why: a missing or degraded NVLink, NCCL falling back to PCIe / SHM (NCCL_P2P_DISABLE,
    a VM without peer-to-peer), a GPU on the wrong PCIe switch or a throttled GPU: every
    TP AllReduce of the job will be that much slower.
    Example: 8 x H100 giving 25 GB/s instead of about 480.
    Fix: run the test with NCCL_DEBUG=INFO and look for the transport it picks (P2P/IPC,
    NVLS, SHM); check `nvidia-smi nvlink --status` and `nvidia-smi topo -m`.""")
ISLANDS = rule("RTC571", "nccl-islands-differ", "error",
               "A server's captured NVLink islands differ from the plan's.", """
    What: the `nvidia-smi topo -m` the preflight captured joins the GPUs in use into other
    NVLink islands (connected NV# pairs) than the plan assumed.
    Why: the TP placement was checked against islands the server does not have; groups
    that should stay on NVLink cross PCIe or the CPU.
    Example: a cloud VM of an HGX H100 without NVLink pass-through (every pair SYS).
    Fix: repair the NVLink, or describe the server as it is and compile again.""")
FAILED = rule("RTC572", "nccl-preflight-failed", "error",
              "A GPU preflight command failed or left no result.", """
    What: `nvidia-smi` or `all_reduce_perf` exited non-zero, or its result file is missing
    or empty, or expect.json is missing or not rtc's.
    Why: the server was not checked; the launch may fail the same way.
    Example: all_reduce_perf not installed (exit 127).
    Fix: build nccl-tests (`make` in NVIDIA/nccl-tests) and point ALL_REDUCE_PERF at it,
    then run the preflight script again.""")

#: RTC570 threshold: measured peak busbw / expected.
LOW_FRACTION = 0.7


@dataclass
class NcclResults:
    """One server's (or one file's) results: ``run`` the parsed nccl-tests output,
    ``expected`` GB/s and ``link`` (None for a bare file), ``label`` the server name or
    file name, ``texts`` file name -> text (for the report)."""

    label: str
    run: NcclTestRun | None = None
    expected: float | None = None
    link: str | None = None
    texts: dict = field(default_factory=dict)
    gpu_list: object = None


def _read(path: str, texts: dict) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    texts[path] = text
    return text


def _exit_codes(folder: str, texts: dict) -> dict[str, int]:
    text = _read(os.path.join(folder, "exit-codes.txt"), texts) or ""
    out = {}
    for line in text.splitlines():
        name, _, code = line.rpartition(" ")
        if name and code.lstrip("-").isdigit():
            out[name] = int(code)
    return out


def judge(path: str) -> tuple[NcclResults, list[Diagnostic]]:
    """Judge one results folder or one all_reduce_perf output file (module docstring)."""
    if os.path.isfile(path):
        res = NcclResults(os.path.basename(path))
        res.run, diags = load_nccl_tests(path)
        _read(path, res.texts)
        return res, diags
    res = NcclResults(os.path.basename(os.path.normpath(path)))
    diags: list[Diagnostic] = []
    expect = _expect(path, res, diags)
    if expect is None and not any(os.path.exists(os.path.join(path, n))
                                  for n in ("topo.txt", "all_reduce_perf.txt")):
        return res, diags    # not a results folder at all: one finding, not one per file
    codes = _exit_codes(path, res.texts)
    for name in ("topo.txt", "all_reduce_perf.txt"):
        file = os.path.join(path, name)
        if codes.get(name, 0) != 0 or not os.path.exists(file):
            why = (f"exited with {codes[name]}" if codes.get(name) else "left no result file")
            if codes.get(name) == 127:
                why += " (command not found: not installed, or not on PATH)"
            diags.append(error(FAILED, f"{res.label}: {name[:-4]} {why}", Span.whole_file(file),
                               subject=f"server {res.label}",
                               hint="see the file for the command's error output; install "
                                    "nccl-tests or set ALL_REDUCE_PERF"))
    perf = os.path.join(path, "all_reduce_perf.txt")
    if os.path.exists(perf) and not codes.get("all_reduce_perf.txt"):
        res.run, more = load_nccl_tests(perf)
        _read(perf, res.texts)
        diags += more
        diags += _low(res, perf)
    topo = os.path.join(path, "topo.txt")
    if expect is not None and os.path.exists(topo) and not codes.get("topo.txt"):
        diags += _islands(res, expect, topo)
    gpus = os.path.join(path, "gpus.csv")
    if expect is not None and os.path.exists(gpus) and not codes.get("gpus.csv"):
        diags += _gpu_list(res, expect, gpus)
    return res, diags


def _gpu_list(res: NcclResults, expect: dict, file: str) -> list[Diagnostic]:
    """gpus.csv (``--query-gpu``, read by the inventory's reader): every GPU of the plan is
    listed; RTC572 names the ones that are not."""
    listed, diags = load_gpu_list(file)
    res.gpu_list = listed
    if listed is None:
        return diags
    absent = sorted(set(expect.get("gpus") or ()) - set(listed.gpus))
    if absent:
        diags.append(error(FAILED, f"{res.label}: gpus.csv lists GPUs {sorted(listed.gpus)}, "
                           f"not the plan's {absent}", Span.whole_file(file),
                           subject=f"server {res.label}",
                           hint="check CUDA_VISIBLE_DEVICES and the server's `devices`"))
    return diags


def _expect(folder: str, res: NcclResults, diags: list) -> dict | None:
    file = os.path.join(folder, "expect.json")
    text = _read(file, res.texts)
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("kind") != "nccl":
        diags.append(error(FAILED, f"{res.label}: no expect.json of an rtc GPU preflight",
                           Span.whole_file(file), subject=f"server {res.label}",
                           hint="pass the folder preflight-<server>.sh wrote (from `rtc "
                                "compile --out-dir` of an NVIDIA GPU plan)"))
        return None
    res.label = str(doc.get("server") or res.label)
    value = doc.get("expected_busbw_gbps")
    res.expected = float(value) if isinstance(value, (int, float)) else None
    res.link = doc.get("expected_link")
    return doc


def _low(res: NcclResults, perf: str) -> list[Diagnostic]:
    peak = res.run.peak() if res.run is not None else None
    if peak is None or not res.expected or peak.best_busbw >= LOW_FRACTION * res.expected:
        return []
    return [warning(BUSBW_LOW, f"{res.label}: all_reduce_perf peaks at {peak.best_busbw:g} "
                    f"GB/s busbw ({peak.size:,} bytes), {peak.best_busbw / res.expected:.0%} "
                    f"of the {res.expected:g} GB/s rtc expects over {res.link}",
                    Span(perf, peak.line, 1), subject=f"server {res.label}",
                    hint="run it again with NCCL_DEBUG=INFO and check the transport NCCL "
                         "picks; `nvidia-smi nvlink --status`, `nvidia-smi topo -m`")]


def _islands(res: NcclResults, expect: dict, topo_file: str) -> list[Diagnostic]:
    topo, diags = load_gpu_topo(topo_file)
    if topo is None:
        return diags
    gpus = set(expect.get("gpus") or ())
    have = sorted(t for t in (tuple(d for d in isl if d in gpus) for isl in topo.islands()) if t)
    want = sorted(tuple(i) for i in expect.get("islands") or ())
    if have != want:
        diags.append(error(ISLANDS, f"{res.label}: nvidia-smi topo -m joins GPUs "
                           f"{sorted(gpus)} into NVLink islands {have}, the plan assumed "
                           f"{want}", Span.whole_file(topo_file), subject=f"server {res.label}",
                           hint="repair the NVLink or describe the server as it is"))
    return diags


def table(res: NcclResults) -> str:
    """The busbw per size of one result, as text (sizes in bytes, time µs, GB/s)."""
    head = f"{res.label}: all_reduce_perf"
    if res.run is None or not res.run.rows:
        return head + ": no results\n"
    gpus = f", {res.run.gpus} GPUs" if res.run.gpus else ""
    lines = [head + gpus,
             f"  {'size':>12}  {'time us':>9}  {'algbw':>7}  {'busbw':>7}  {'busbw in':>8}"]
    for r in res.run.rows:
        lines.append(f"  {r.size:>12,}  {r.time:>9.2f}  {r.algbw:>7.2f}  {r.busbw:>7.2f}  "
                     f"{r.in_busbw:>8.2f}")
    peak = res.run.peak()
    tail = f"  peak busbw {peak.best_busbw:g} GB/s at {peak.size:,} bytes"
    if res.expected:
        tail += f"; rtc expects {res.expected:g} GB/s over {res.link}"
    return "\n".join(lines + [tail]) + "\n"


#: The rules this module reports (collected by rtc.report.rule_catalogue).
RULES = (BUSBW_LOW, ISLANDS, FAILED)
