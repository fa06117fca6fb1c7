"""Parser of rtc's own all_reduce sweep (``all_reduce_sweep.jsonl``), the measurement the
preflight script takes with ``torch.distributed`` when nccl-tests is not installed
(the program is ``rtc/emit/templates/allreduce_sweep.py``).

The format, JSON lines (one object per line, UTF-8):

* a header: ``{"format": "rtc-allreduce-sweep", "version": 1, "tool": "torch.distributed",
  "torch": "2.11.0", "backend": "nccl"|"hccl", "ranks": N, "devices": [names],
  "dtype": "float32", "op": "sum", "warmup": 5, "iters": 20}``;
* one row per size: ``{"size": BYTES, "count": ELEMENTS, "time_us": T, "algbw": GB/s,
  "busbw": GB/s, "wrong": K}``: ``time_us`` the average of one in-place all_reduce over the
  ranks, ``algbw = size / time``, ``busbw = algbw * 2(n-1)/n`` (NVIDIA/nccl-tests
  ``doc/PERFORMANCE.md``, AllReduce), ``wrong`` the elements off after a checked call;
* an end line ``{"end": true, "sizes": ROWS}``.

Sizes, time and bandwidths mean what nccl-tests' ``size``, ``time``, ``algbw`` and ``busbw``
mean, so the result is an :class:`~rtc.inventory.nccl_tests.NcclTestRun` (tool
``torch.distributed``); the sweep is in place only, so each row's out-of-place and in-place
fields hold the same measurement. Problems are ``RTC576`` errors at the line.
"""

from __future__ import annotations

import json
import math
import os

from rtc.diagnostics import Diagnostic, error
from rtc.rules import rule

from ._common import read_text, split_lines, value_span
from .nccl_tests import NcclRow, NcclTestRun

FORMAT = "rtc-allreduce-sweep"

SWEEP_UNREADABLE = rule("RTC576", "allreduce-sweep-unreadable", "error",
                        "rtc's torch all_reduce sweep output is unreadable, cut short or "
                        "reports wrong results.", """
    What: an `all_reduce_sweep.jsonl` (written by the preflight script's torch.distributed
    fallback) without its header line, with a line that is not a JSON object of the
    documented fields, without any size, without its end line (the program stopped: out of
    memory, killed, a rank failed), or with a size whose `wrong` is above 0.
    Why: the bus bandwidth per size is what `rtc preflight nccl` compares with the plan; a
    damaged file would hide a slow or broken link, and wrong values mean a GPU, NVLink or
    NIC corrupts data.
    Example: a sweep that ends at 512 MiB because 1 GiB did not fit beside another job.
    Fix: free the GPUs, run the preflight script again and keep the whole folder; for
    wrong values run `nvidia-smi -q -d ECC` and test the GPU pairs one by one.""")

_ROW_FIELDS = ("size", "count", "time_us", "algbw", "busbw", "wrong")


def is_sweep(text: str) -> bool:
    """True when ``text`` starts (after blank lines) with this format's header object."""
    first = next((line for line in split_lines(text) if line.strip()), "")
    return first.lstrip().startswith("{") and f'"{FORMAT}"' in first


def parse_allreduce_sweep(text: str, file: str = "<all_reduce_sweep.jsonl>"
                          ) -> tuple[NcclTestRun | None, list[Diagnostic]]:
    """Parse the sweep (module docstring). (None, [RTC576]) without the header; otherwise
    the run and RTC576 findings (bad lines, wrong values, no rows, no end line)."""
    lines = split_lines(text)
    run, diags, ended = None, [], False
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        obj = _object(line)
        if run is None:
            run = _head(obj, file)
            if run is None:
                return None, [_bad(file, no, line, f"no '{FORMAT}' header line: "
                                   "not an rtc all_reduce sweep")]
        elif isinstance(obj, dict) and obj.get("end") is True:
            ended = True
        elif (row := _row(obj, no)) is not None:
            run.rows.append(row)
            if row.wrong:
                diags.append(_bad(file, no, line, f"all_reduce sweep: {row.size:,} bytes gave "
                                  f"wrong results ({row.wrong} elements)"))
        else:
            diags.append(_bad(file, no, line, "all_reduce sweep line is not a size row ("
                              + ", ".join(_ROW_FIELDS) + ")"))
    if run is None:
        return None, [_bad(file, 1, "", "empty all_reduce sweep output")]
    if not run.rows or not ended:
        last = run.rows[-1].size if run.rows else None
        diags.append(_bad(file, max(len(lines), 1), "", "all_reduce sweep " + (
            f"stopped after {last:,} bytes without its end line" if last
            else "without any size")))
    return run, diags


def _object(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _head(obj: object, file: str) -> NcclTestRun | None:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        return None
    devices = obj.get("devices")
    ranks = obj.get("ranks")
    return NcclTestRun(file, gpus=ranks if isinstance(ranks, int) else 0, min_bytes=8,
                       max_bytes=1 << 30, tool=str(obj.get("tool") or "torch.distributed"),
                       devices=[str(d) for d in devices] if isinstance(devices, list) else [])


def _row(obj: object, no: int) -> NcclRow | None:
    if not isinstance(obj, dict) or any(k not in obj for k in _ROW_FIELDS):
        return None
    size, wrong = obj["size"], obj["wrong"]
    nums = [obj[k] for k in ("time_us", "algbw", "busbw")]
    if not (isinstance(size, int) and size > 0 and isinstance(wrong, int) and wrong >= 0
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) and v >= 0 for v in nums)):
        return None
    t, alg, bus = (float(v) for v in nums)
    return NcclRow(size, t, alg, bus, wrong, t, alg, bus, wrong, no)


def _bad(file: str, no: int, line: str, message: str) -> Diagnostic:
    return error(SWEEP_UNREADABLE, message, value_span(file, no, 0, max(len(line), 1)),
                 hint="run the preflight script again and keep its whole results folder")


def load_allreduce_sweep(path: str | os.PathLike, file: str | None = None
                         ) -> tuple[NcclTestRun | None, list[Diagnostic]]:
    """Read and parse a sweep file (RTC-level read errors as diagnostics)."""
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    run, more = parse_allreduce_sweep(text, file if file is not None else os.fspath(path))
    return run, diags + more


#: The rules this module reports (collected by rtc.catalogue).
RULES = (SWEEP_UNREADABLE,)
