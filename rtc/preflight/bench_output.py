"""Readers of collective benchmark output: HCCL Test (``all_reduce_test`` and friends,
CANN ``tools/hccl_test``) and NVIDIA nccl-tests (``all_reduce_perf`` ...), as the
measurements ``rtc calibrate`` fits link parameters to.

HCCL Test prints a header ``data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): |
check_result:`` (the binary spells ``aveg``; its docs say ``avg``: both are read) and one
row per size; ``data_size`` is **per NPU** (reference ``cost-model.md`` §2.3). nccl-tests
prints ``#``-comment headers and rows ``size count type redop root time algbw busbw
#wrong`` twice (out-of-place, in-place), read by :mod:`rtc.inventory.nccl_tests`; the
out-of-place time is taken. rtc's own torch all_reduce sweep (JSON lines,
:mod:`rtc.inventory.allreduce_sweep`, written by the GPU preflight where nccl-tests is
missing) is read too, its in-place time taken. Rows whose check
failed (``check_result`` not ``success``, ``#wrong`` not 0) are dropped with a note.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

#: Benchmark binary name (without ``_test`` / ``_perf``) -> collective.
OPS = {"all_reduce": "allreduce", "allreduce": "allreduce", "all_gather": "allgather",
       "allgather": "allgather", "reduce_scatter": "reduce_scatter",
       "reducescatter": "reduce_scatter", "alltoall": "alltoall", "alltoallv": "alltoall",
       "broadcast": "broadcast"}


class BenchOutputError(ValueError):
    """The text is not HCCL Test or nccl-tests output (message says what was expected)."""


@dataclass(frozen=True)
class Sample:
    """One measured size: ``nbytes`` per rank, ``seconds`` average time, ``line`` in the
    file (1-based)."""

    nbytes: float
    seconds: float
    line: int


@dataclass(frozen=True)
class BenchRun:
    """One file's samples, the tool (``hccl_test`` / ``nccl-tests``), the collective
    (None when neither the file name nor the text says), and notes on dropped rows."""

    path: str
    tool: str
    op: str | None
    samples: tuple[Sample, ...]
    notes: tuple[str, ...] = ()


def op_from_name(name: str) -> str | None:
    """The collective a benchmark's name says (``all_reduce_test``, ``alltoall_perf``,
    ``results/all_gather-16p.txt``), or None."""
    base = os.path.basename(name).lower()
    for key in sorted(OPS, key=len, reverse=True):
        if key in base:
            return OPS[key]
    return None


_HCCL_HEAD = re.compile(r"data_size\(Bytes\):?\s*\|\s*a?v(?:e)?g_time\(us\)", re.I)
_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_HCCL_ROW = re.compile(rf"^\s*(\d+)\s*\|\s*({_NUM})\s*\|\s*({_NUM})\s*\|\s*(\S+)\s*$")


def _sample(path: str, n: int, size: str, time_us: str, notes: list) -> Sample | None:
    """A row's sample, or None with a note when its numbers are not a measurement."""
    nbytes, t = float(size), float(time_us) * 1e-6
    if not (0 < nbytes < 1e15 and 0 < t < 1e6):
        notes.append(f"{path}:{n}: {size} bytes in {time_us} us is not a measurement: "
                     "row dropped")
        return None
    return Sample(nbytes, t, n)


def _unread(path: str, n: int, line: str, notes: list) -> None:
    """A note for a line that looks like a data row (starts with a digit) but is not one."""
    if line.strip()[:1].isdigit() or line.strip()[:1] == "-":
        notes.append(f"{path}:{n}: not a result row: {line.strip()[:60]!r}")


def _hccl(path: str, lines: list[str]) -> BenchRun:
    samples, notes = [], []
    for n, line in enumerate(lines, 1):
        m = _HCCL_ROW.match(line)
        if not m:
            if "|" in line:
                _unread(path, n, line, notes)
            continue
        if m.group(4).lower() not in ("success", "null"):
            notes.append(f"{path}:{n}: check_result {m.group(4)}: row dropped")
            continue
        got = _sample(path, n, m.group(1), m.group(2), notes)
        if got is not None:
            samples.append(got)
    text = "\n".join(lines[:5])
    return BenchRun(path, "hccl_test", op_from_name(path) or op_from_name(text),
                    tuple(samples), tuple(notes))


def _nccl(path: str, lines: list[str]) -> BenchRun:
    """nccl-tests output through :func:`rtc.inventory.nccl_tests.parse_nccl_tests` (the
    reader ``rtc preflight nccl`` uses): the out-of-place time of every row that computed
    right; the reader's findings (wrong results, unreadable rows, a cut run) as notes."""
    from rtc.inventory.nccl_tests import parse_nccl_tests

    run, diags = parse_nccl_tests("\n".join(lines), path)
    notes = [f"{path}:{d.span.line}: {d.message}" if d.span else f"{path}: {d.message}"
             for d in diags]
    samples = []
    for row in run.rows if run is not None else ():
        if row.wrong or row.in_wrong:
            continue            # noted by the reader: the collective computed wrong values
        got = _sample(path, row.line, str(row.size), str(row.time), notes)
        if got is not None:
            samples.append(got)
    cmd = next((l for l in lines if "_perf" in l), "")
    return BenchRun(path, "nccl-tests", op_from_name(path) or op_from_name(cmd),
                    tuple(samples), tuple(notes))


def _sweep(path: str, text: str) -> BenchRun:
    """rtc's torch all_reduce sweep (:mod:`rtc.inventory.allreduce_sweep`): every row that
    computed right, as nccl-tests rows are taken; the reader's findings as notes."""
    from rtc.inventory.allreduce_sweep import parse_allreduce_sweep

    run, diags = parse_allreduce_sweep(text, path)
    notes = [f"{path}:{d.span.line}: {d.message}" for d in diags]
    samples = [s for row in (run.rows if run is not None else ()) if not row.wrong
               for s in [_sample(path, row.line, str(row.size), str(row.time), notes)] if s]
    return BenchRun(path, "torch.distributed", "allreduce", tuple(samples), tuple(notes))


def read_bench_output(path: str, text: str) -> BenchRun:
    """Parse ``text`` (the content of ``path``). Raises :class:`BenchOutputError` when it
    holds none of the formats' headers, or no usable row."""
    from rtc.inventory.allreduce_sweep import is_sweep

    lines = text.splitlines()
    if is_sweep(text):
        run = _sweep(path, text)
    elif any(_HCCL_HEAD.search(l) for l in lines):
        run = _hccl(path, lines)
    elif any(l.lstrip().startswith("#") and "algbw" in l and "busbw" in l for l in lines):
        run = _nccl(path, lines)
    else:
        raise BenchOutputError(f"{path}: neither HCCL Test output (a 'data_size(Bytes): | "
                               "aveg_time(us): | ...' header), nccl-tests output (a "
                               "'# size count type ... algbw busbw' header) nor rtc's "
                               "all_reduce sweep (an 'rtc-allreduce-sweep' first line)")
    if not run.samples:
        raise BenchOutputError(f"{path}: {run.tool} output without a usable row"
                               + (f" ({len(run.notes)} failed their check)" if run.notes else ""))
    return run
