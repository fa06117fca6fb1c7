"""Judging the results of a GPU server's preflight (``rtc preflight nccl``): the bus
bandwidth per message size (nccl-tests, or rtc's torch sweep where nccl-tests is missing)
against the plan's expectation, the captured NVLink islands against the plan's, NCCL's own
topology dump against the plan's GPUs and HCAs, measurements skipped for a missing tool,
and commands that failed (RTC570-RTC574, RTC577).

A results folder is what ``preflight-<server>.sh`` of an NVIDIA GPU plan wrote
(:mod:`rtc.emit.gpu_preflight_script`): ``expect.json`` (``"kind": "nccl"``),
``exit-codes.txt``, ``topo.txt``, ``gpus.csv``, ``all_reduce_perf.txt`` or
``torch_all_reduce.txt`` + ``all_reduce_sweep.jsonl``, ``nccl-topo-dump.xml`` and
``skipped.txt`` (``WHAT<TAB>WHY<TAB>FALLBACK`` per measurement not taken). A single
``all_reduce_perf`` output file may be given instead: then only its table and its own
problems are reported (there is no expectation to compare with).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span, error, note, warning
from rtc.inventory.allreduce_sweep import is_sweep, load_allreduce_sweep
from rtc.inventory.nccl_tests import NcclTestRun, load_nccl_tests
from rtc.inventory.nccl_topo import load_nccl_topo_xml
from rtc.inventory.nvidia_smi import load_gpu_list, load_gpu_topo
from rtc.rules import rule
from rtc.textfmt import plural

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
DUMP_DIFFERS = rule("RTC573", "nccl-topo-dump-differs", "warning",
                    "NCCL's own topology dump shows other GPUs or NICs than the plan.", """
    What: `nccl-topo-dump.xml` (NCCL_TOPO_DUMP_FILE, written by NCCL during the preflight's
    all_reduce) holds another number of GPUs than the plan uses on the server, or lacks
    an HCA the plan names in `ib_hca`.
    Why: NCCL builds its rings and trees from this view: a GPU it does not see cannot be in
    the job, and an HCA it does not list is never used for inter-server traffic.
    Example: `ib_hca mlx5_0..mlx5_7` planned, the dump lists only `eth0` (a VM without the
    HCAs passed through, or the RDMA driver not loaded).
    Fix: compare with `ibv_devinfo` and `nvidia-smi -L`; pass the devices through, or
    describe the server as it is and compile again.""")
SKIPPED = rule("RTC574", "nccl-measurement-skipped", "warning",
               "A preflight measurement was skipped: its tool is missing and no fallback ran.", """
    What: a line of `skipped.txt` without a fallback: neither nccl-tests' all_reduce_perf
    nor a Python with torch.distributed was found, or no NCCL run wrote its topology dump.
    Why: the server's bus bandwidth (or NCCL's view of it) was not checked at all.
    Example: a container with neither nccl-tests nor torch.
    Fix: install nccl-tests (set ALL_REDUCE_PERF) or run the script with PYTHON pointing at
    the Python the job uses, then run it again.""")
FALLBACK = rule("RTC577", "nccl-measured-with-fallback", "note",
                "A preflight measurement used a fallback for a missing tool.", """
    What: a line of `skipped.txt` with a fallback, e.g. all_reduce_perf not found, measured
    with a torch.distributed all_reduce sweep instead.
    Why: the figures are comparable (same sizes, busbw as nccl-tests defines it) but come
    from another program: in-place only, through torch's process group.
    Example: a GPU host with torch and NCCL but no nccl-tests build.
    Fix: nothing is wrong; install nccl-tests for its full output (out-of-place too).""")

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
    from rtc.readfile import read_text

    try:
        text = read_text(path, errors="replace")
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
    """Judge one results folder, or one all_reduce_perf output or sweep file (module
    docstring)."""
    if os.path.isfile(path):
        res = NcclResults(os.path.basename(path))
        text = _read(path, res.texts)
        load = load_allreduce_sweep if is_sweep(text or "") else load_nccl_tests
        res.run, diags = load(path)
        return res, diags
    res = NcclResults(os.path.basename(os.path.normpath(path)))
    diags: list[Diagnostic] = []
    expect = _expect(path, res, diags)
    if expect is None and not any(os.path.exists(os.path.join(path, n))
                                  for n in ("topo.txt", "all_reduce_perf.txt")):
        return res, diags    # not a results folder at all: one finding, not one per file
    codes = _exit_codes(path, res.texts)
    skipped = _skipped(path, res, diags)
    for name in ("topo.txt", *(() if "all_reduce_perf" in skipped else ("all_reduce_perf.txt",))):
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
    elif "torch_all_reduce.txt" in codes:
        diags += _sweep(path, res, codes["torch_all_reduce.txt"])
    topo = os.path.join(path, "topo.txt")
    if expect is not None and os.path.exists(topo) and not codes.get("topo.txt"):
        diags += _islands(res, expect, topo)
    gpus = os.path.join(path, "gpus.csv")
    if expect is not None and os.path.exists(gpus) and not codes.get("gpus.csv"):
        diags += _gpu_list(res, expect, gpus)
    dump = os.path.join(path, "nccl-topo-dump.xml")
    if expect is not None and os.path.exists(dump):
        diags += _dump(res, expect, dump)
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


def _skipped(folder: str, res: NcclResults, diags: list) -> dict[str, str]:
    """``skipped.txt``: RTC577 (a fallback ran) or RTC574 (none) per line; returns what was
    skipped -> its fallback (``-``: none)."""
    file = os.path.join(folder, "skipped.txt")
    out: dict[str, str] = {}
    for no, line in enumerate((_read(file, res.texts) or "").splitlines(), 1):
        what, why, fallback = (line.split("\t") + ["", "", ""])[:3]
        if not what.strip():
            continue
        out[what] = fallback = fallback.strip() or "-"
        span, subject = Span(file, no, 1), f"server {res.label}"
        if fallback != "-":
            diags.append(note(FALLBACK, f"{res.label}: {what} {why}: measured with {fallback}",
                              span, subject=subject))
        else:
            diags.append(warning(SKIPPED, f"{res.label}: {what} skipped: {why}; nothing "
                                 "measured in its place", span, subject=subject,
                                 hint="install nccl-tests (ALL_REDUCE_PERF) or run the script "
                                      "with PYTHON set to a Python that has torch"))
    return out


def _sweep(folder: str, res: NcclResults, rc: int) -> list[Diagnostic]:
    """The torch sweep's result: RTC572 when it failed, else its rows (and RTC570)."""
    log = os.path.join(folder, "torch_all_reduce.txt")
    data = os.path.join(folder, "all_reduce_sweep.jsonl")
    if rc != 0 or not os.path.exists(data):
        _read(log, res.texts)
        why = f"exited with {rc}" if rc else "left no all_reduce_sweep.jsonl"
        return [error(FAILED, f"{res.label}: torch all_reduce sweep {why}",
                      Span.whole_file(log), subject=f"server {res.label}",
                      hint="see the file for Python's error output (CUDA not available, "
                           "out of memory, an NCCL error with NCCL_DEBUG=INFO)")]
    res.run, diags = load_allreduce_sweep(data)
    _read(data, res.texts)
    return diags + _low(res, data)


def _dump(res: NcclResults, expect: dict, file: str) -> list[Diagnostic]:
    """NCCL's topology dump (read by :func:`rtc.inventory.nccl_topo.load_nccl_topo_xml`, the
    reader every command uses) against the plan: the number of GPUs, the planned HCAs."""
    dump, diags = load_nccl_topo_xml(file)
    if dump is None:
        why = "; ".join(d.message for d in diags)
        return [warning(DUMP_DIFFERS, f"{res.label}: nccl-topo-dump.xml is not readable ({why})",
                        Span.whole_file(file), subject=f"server {res.label}",
                        hint="run the preflight again; NCCL writes the file whole")]
    gpus = len(dump.gpus)
    nets = sorted(set(dump.nets) - {""})
    want = len(expect.get("gpus") or ())
    hcas = [h.split(":")[0] for h in expect.get("ib_hca") or ()]
    lacking = [h for h in hcas if h not in nets]
    problems = ([f"{gpus} GPU{'s' if gpus != 1 else ''} where the plan uses {want}"]
                if gpus != want else [])
    if lacking:
        problems.append(f"no {', '.join(lacking)} among its NICs "
                        f"({', '.join(nets) or 'none'})")
    return [warning(DUMP_DIFFERS, f"{res.label}: NCCL's topology dump shows "
                    + "; ".join(problems), Span.whole_file(file), subject=f"server {res.label}",
                    hint="compare with `nvidia-smi -L` and `ibv_devinfo`; pass the devices "
                         "through or describe the server as it is")] if problems else []


def _expect(folder: str, res: NcclResults, diags: list) -> dict | None:
    file = os.path.join(folder, "expect.json")
    text = _read(file, res.texts)
    try:
        doc = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
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
    what = ("all_reduce_perf" if res.run.tool == "nccl-tests"
            else f"the {res.run.tool} all_reduce sweep")
    return [warning(BUSBW_LOW, f"{res.label}: {what} peaks at {peak.best_busbw:g} "
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
    head = f"{res.label}: " + ("all_reduce_perf" if res.run is None or res.run.tool ==
                               "nccl-tests" else f"all_reduce sweep ({res.run.tool})")
    if res.run is None or not res.run.rows:
        return head + ": no results\n"
    gpus = f", {plural(res.run.gpus, 'GPU')}" if res.run.gpus else ""
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


#: The rules this module reports (collected by rtc.catalogue).
RULES = (BUSBW_LOW, ISLANDS, FAILED, DUMP_DIFFERS, SKIPPED, FALLBACK)
