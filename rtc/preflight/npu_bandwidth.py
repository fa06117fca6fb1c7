"""The AllReduce sweep of an Ascend server's preflight (``rtc preflight report``): HCCL
Test's ``all_reduce_test.txt`` or rtc's torch_npu sweep ``all_reduce_sweep.jsonl``
(:mod:`rtc.emit.npu_bandwidth_script`), and the measurements skipped for a missing tool
(``skipped.txt``). RTC580-RTC582; a damaged sweep file is RTC576 (its reader's rule).

Bandwidths are GB/s (1e9 bytes/s); sizes are bytes per NPU (HCCL Test's ``data_size``, the
sweep's ``size``); times µs. HCCL Test prints the algorithm bandwidth only; the bus
bandwidth is computed from it as nccl-tests defines it for AllReduce: busbw = algbw *
2(n-1)/n (NVIDIA/nccl-tests doc/PERFORMANCE.md), n the NPUs of the sweep. The sweep file
holds both already.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span, error, note, warning
from rtc.inventory.allreduce_sweep import load_allreduce_sweep
from rtc.preflight.bench_output import BenchOutputError, read_bench_output
from rtc.preflight.results import ServerResults, read_text
from rtc.rules import rule
from rtc.textfmt import plural

SKIPPED = rule("RTC580", "preflight-bandwidth-skipped", "warning",
               "Preflight: an NPU bandwidth measurement was skipped and nothing replaced it.", """
    What: the lines of the Ascend preflight's `skipped.txt` without a fallback (one
    finding for them all, each line's reason quoted): HCCL Test's all_reduce_test is not
    built (or mpirun is missing) and the Python of the script does not import torch_npu.
    Why: the NPUs' AllReduce bandwidth over HCCS / RoCE on the server was not measured: a
    degraded link shows only when the job runs.
    Example: a container with the CANN runtime but neither tools/hccl_test built nor
    torch_npu installed.
    Fix: build HCCL Test (`make` in $ASCEND_HOME_PATH/tools/hccl_test, MPICH installed) and
    set HCCL_TEST_BIN, or run the script with PYTHON set to the Python the job uses.""")
FALLBACK = rule("RTC581", "preflight-bandwidth-fallback", "note",
                "Preflight: NPU bandwidth measured with torch_npu instead of HCCL Test.", """
    What: a line of `skipped.txt` with a fallback: all_reduce_test was not found (or no
    mpirun), and rtc's torch.distributed all_reduce sweep (backend hccl, npu devices)
    measured instead.
    Why: the figures are comparable (same sizes, busbw as nccl-tests defines it) but come
    from another program: in place, float32, through torch_npu's process group.
    Example: an Atlas host with torch_npu installed and HCCL Test not built.
    Fix: nothing is wrong; build HCCL Test for HCCL's own figures.""")
FAILED = rule("RTC582", "preflight-bandwidth-failed", "error",
              "Preflight: the NPU bandwidth measurement failed or left no result.", """
    What: all_reduce_test (under mpirun) or rtc's torch_npu sweep exited non-zero, left no
    result, or printed no size row; or expect.json plans a sweep and the folder has
    neither its result nor a `skipped.txt` line for it.
    Why: an AllReduce over the server's NPUs does not complete: the job's first collective
    will fail (or hang) the same way.
    Example: torch_all_reduce.txt ends with an HCCL error: a link is down, or another job
    holds the NPUs.
    Fix: read the file for the error (set ASCEND_GLOBAL_LOG_LEVEL=1 and look at the plog);
    free the NPUs and run the preflight script again.""")


@dataclass
class Measured:
    """One server's AllReduce sweep: ``tool`` (``HCCL Test`` / ``torch_npu``), ``npus``,
    ``file``, and ``rows`` (size bytes, time µs, algbw GB/s, busbw GB/s)."""

    tool: str
    npus: int
    file: str
    rows: list = field(default_factory=list)

    def peak(self) -> tuple | None:
        """The row of the highest busbw (the first of equals), or None without rows."""
        return max(self.rows, key=lambda r: r[3], default=None)


def judge(r: ServerResults) -> list[Diagnostic]:
    """RTC580-RTC582 (and the sweep reader's RTC576) of folder ``r``; sets ``r.measured``.
    Nothing for a folder whose expect.json plans no sweep (one NPU, or an older rtc)."""
    if r.bandwidth is None:
        return []
    diags, skipped = _skipped(r)
    if _ran(r, "all_reduce_test.txt"):
        diags += _hccl_test(r)
    elif _ran(r, "torch_all_reduce.txt"):
        diags += _sweep(r)
    elif not skipped:
        diags.append(error(FAILED, f"{r.server}: the AllReduce sweep left no result and no "
                           "skipped.txt line", Span.whole_file(r.path("exit-codes.txt")),
                           subject=f"server {r.server}",
                           hint="run the preflight script again and copy the whole folder"))
    return diags


def _ran(r: ServerResults, name: str) -> bool:
    """True when the script ran the command of result file ``name`` (its exit code is
    recorded, or, with exit-codes.txt unreadable, its file is there)."""
    return name in r.exit_codes or os.path.exists(r.path(name))


def _skipped(r: ServerResults) -> tuple[list[Diagnostic], dict]:
    """``skipped.txt``: RTC581 per line with a fallback; one RTC580 for the lines without
    (HCCL Test and torch_npu both missing is one measurement not taken). A line that is
    not ``WHAT<TAB>WHY<TAB>FALLBACK`` is not used (:func:`rtc.preflight.results.load_results`
    reports it, RTC568). The dict maps each
    readable line's WHAT to its fallback (``-``: none), and holds the key None when a
    line was unreadable."""
    text, span = read_text(r, "skipped.txt")
    diags, out, none = [], {}, []
    subject = f"server {r.server}"
    for no, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[0].strip():
            out[None] = "-"   # unreadable: RTC568 from the folder's reader
            continue
        what, why, fallback = parts
        out[what] = fallback = fallback.strip() or "-"
        if fallback != "-":
            diags.append(note(FALLBACK, f"{r.server}: {what} skipped ({why}): measured with "
                              f"{fallback}", Span(span.file, no, 1), subject=subject))
        else:
            none.append((no, what, why))
    if none:
        said = "; ".join(f"{what} skipped: {why}" for _no, what, why in none)
        diags.append(warning(SKIPPED, f"{r.server}: the AllReduce bandwidth was not measured "
                             f"({said})", Span(span.file, none[0][0], 1), subject=subject,
                             hint="build HCCL Test (HCCL_TEST_BIN) or run the script with "
                                  "PYTHON set to a Python that has torch_npu"))
    return diags, out


def _failed(r: ServerResults, name: str, what: str, why: str, hint: str) -> Diagnostic:
    rc = r.exit_codes.get(name)
    if rc == 127:
        why += " (command not found: not installed, or not on PATH)"
    return error(FAILED, f"{r.server}: {what} {why}", Span.whole_file(r.path(name)),
                 subject=f"server {r.server}", hint=hint)


def _npus(r: ServerResults) -> int:
    n = r.bandwidth.get("npus")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def _hccl_test(r: ServerResults) -> list[Diagnostic]:
    """HCCL Test's output: RTC582 when it failed or holds no row, else ``r.measured``."""
    name, hint = "all_reduce_test.txt", ("see the file for HCCL Test's and mpirun's error "
                                          "output; check the NPUs with npu-smi info")
    text, _span = read_text(r, name)
    rc = r.exit_codes.get(name)
    if rc:
        return [_failed(r, name, "all_reduce_test", f"exited with {rc}", hint)]
    try:
        run = read_bench_output(r.path(name), text or "")
    except BenchOutputError as exc:
        return [_failed(r, name, "all_reduce_test", f"gave no result: {exc}", hint)]
    n = _npus(r)
    m = Measured("HCCL Test", n, r.path(name))
    for s in run.samples:
        algbw = s.nbytes / s.seconds / 1e9
        busbw = algbw * 2 * (n - 1) / n if n else 0.0
        m.rows.append((int(s.nbytes), s.seconds * 1e6, algbw, busbw))
    r.measured = m
    return [error(FAILED, f"{r.server}: all_reduce_test: {msg.removeprefix(r.path(name) + ':')}",
                  Span.whole_file(r.path(name)), subject=f"server {r.server}", hint=hint)
            for msg in run.notes]


def _sweep(r: ServerResults) -> list[Diagnostic]:
    """The torch_npu sweep: RTC582 when it failed, else its rows (and RTC576 findings)."""
    name, data = "torch_all_reduce.txt", "all_reduce_sweep.jsonl"
    rc = r.exit_codes.get(name)
    hint = ("see the file for Python's error output (torch_npu not matching the CANN "
            "version, NPUs busy, an HCCL error: set ASCEND_GLOBAL_LOG_LEVEL=1)")
    if rc or not os.path.exists(r.path(data)):
        read_text(r, name)
        why = f"exited with {rc}" if rc else f"left no {data}"
        return [_failed(r, name, "torch_npu all_reduce sweep", why, hint)]
    run, diags = load_allreduce_sweep(r.path(data))
    read_text(r, data)
    if run is not None:
        r.measured = Measured("torch_npu", run.gpus, r.path(data),
                              [(x.size, x.time, x.algbw, x.busbw) for x in run.rows])
    return diags


def text(results: list[ServerResults]) -> str:
    """One line per server with a measured sweep: tool, NPUs, peak busbw (and its algbw)
    and the size it was reached at; empty when none was measured."""
    lines = []
    for r in results:
        m = r.measured
        peak = m.peak() if m is not None else None
        if peak is None:
            continue
        size, _t, algbw, busbw = peak
        lines.append(f"  {r.server}: {m.tool}, {plural(m.npus, 'NPU')}: peak busbw {busbw:.2f} GB/s "
                     f"(algbw {algbw:.2f}) at {size:,} bytes")
    return "AllReduce bandwidth:\n" + "\n".join(lines) + "\n" if lines else ""


def to_dict(r: ServerResults) -> dict | None:
    """A server's sweep for ``--format json`` (None when none was measured)."""
    m = r.measured
    if m is None:
        return None
    return {"server": r.server, "tool": m.tool, "npus": m.npus, "file": m.file,
            "rows": [{"size": s, "time_us": round(t, 2), "algbw": round(a, 2),
                      "busbw": round(b, 2)} for s, t, a, b in m.rows]}


#: The rules this module reports (collected by rtc.catalogue).
RULES = (SKIPPED, FALLBACK, FAILED)
