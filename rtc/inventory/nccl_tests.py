"""Parser of nccl-tests output (``all_reduce_perf -b 8 -e 1G -f 2 -g N`` and the other
``*_perf`` binaries of NVIDIA/nccl-tests).

The output (nccl-tests ``src/common.cu``, ``print_header`` / ``print_line_header``): ``#``
comment lines with the parameters (``# nThread 1 nGpus 8 minBytes 8 maxBytes 1073741824
...``) and the devices (``#  Rank  0 Group  0 Pid 123 on host device  0 [0x18] NVIDIA
H100 ...``); a header naming the columns ``size count type redop [root] time algbw busbw
#wrong`` twice (out-of-place, then in-place) and a units line; one row per message size;
then ``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth : X``. Times are µs,
bandwidths GB/s (10^9 bytes/s), measured one way (``NCCLT-PERF``). ``root`` exists in
newer releases only, so columns are taken from the header. -> :class:`NcclTestRun`.
Problems are ``RTC575`` diagnostics at the line and column.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, error, warning
from rtc.rules import rule

from ._common import read_text, split_lines, value_span

NCCL_TESTS_UNREADABLE = rule("RTC575", "nccl-tests-unreadable", "error",
                             "nccl-tests output is missing, cut short or reports wrong results.", """
    What: an `all_reduce_perf` capture without its column header or without any result
    row, a row whose numbers do not parse (error); a size with `#wrong` above 0 (error:
    the collective computed wrong values) or a run that ended before its last size or
    without `# Avg bus bandwidth` (warning).
    Why: the bus bandwidth per size is what `rtc preflight nccl` compares with the plan;
    a damaged capture would hide a slow or broken link.
    Example: a capture cut off after 64 MB because the job was killed.
    Fix: run the preflight script again and keep the whole output.""", also={"warning": "a run that ended before its last size or without its average"})


_NUM = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")


@dataclass(frozen=True)
class NcclRow:
    """One message size: ``size`` bytes, the out-of-place and in-place ``time`` (µs),
    ``algbw`` / ``busbw`` (GB/s) and ``wrong`` counts (None when not validated: N/A),
    and the capture line."""

    size: int
    time: float
    algbw: float
    busbw: float
    wrong: int | None
    in_time: float
    in_algbw: float
    in_busbw: float
    in_wrong: int | None
    line: int

    @property
    def best_busbw(self) -> float:
        """The larger of the out-of-place and in-place busbw, GB/s."""
        return max(self.busbw, self.in_busbw)


@dataclass
class NcclTestRun:
    """One nccl-tests run: ``gpus`` (nGpus x ranks from the device list), ``min_bytes`` /
    ``max_bytes`` and ``step`` (``(3, "factor")`` or ``(1048576, "bytes")``, None when the
    line has none) from the parameter line, ``rows`` per size, ``avg_busbw`` (GB/s, the
    tool's own average; None when absent), the devices' product names, ``file``, and
    the ``tool`` that measured (``nccl-tests``, or ``torch.distributed`` for rtc's own
    sweep, :mod:`rtc.inventory.allreduce_sweep`)."""

    file: str
    gpus: int = 0
    min_bytes: int | None = None
    max_bytes: int | None = None
    step: tuple[int, str] | None = None
    rows: list[NcclRow] = field(default_factory=list)
    avg_busbw: float | None = None
    devices: list[str] = field(default_factory=list)
    tool: str = "nccl-tests"

    def peak(self) -> NcclRow | None:
        """The row with the highest busbw (None without rows)."""
        return max(self.rows, key=lambda r: r.best_busbw, default=None)


_PARAMS = re.compile(r"#\s*nThread\s+(?P<t>\d+)\s+nGpus\s+(?P<g>\d+)\s+minBytes\s+(?P<lo>\d+)"
                     r"\s+maxBytes\s+(?P<hi>\d+)(?:\s+step:\s*(?P<step>\d+)\((?P<unit>factor|bytes)\))?")
_DEVICE = re.compile(r"#\s+Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+"
                     r"\[[^\]]*\]\s+(?P<name>.+?)\s*$")
# NCCL's own log lines (NCCL_DEBUG=INFO), interleaved with the rows: `host:pid:tid [dev] NCCL INFO`
_NCCL_LOG = re.compile(r"^\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)\b")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*(?P<v>\S+)")


def _header(line: str) -> list[str] | None:
    """The column names; older nccl-tests (superbench's A100 logs, ``validation: 0``) name
    the ``#wrong`` column ``error``, read here as ``#wrong``."""
    words = line.lstrip("#").split()
    if words[:2] == ["size", "count"] and words.count("busbw") == 2:
        return ["#wrong" if w == "error" else w for w in words]
    return None


def parse_nccl_tests(text: str, file: str = "<all_reduce_perf>") -> tuple[NcclTestRun | None, list[Diagnostic]]:
    """Parse nccl-tests output. (None, [RTC575]) without a column header; otherwise the
    run and RTC575 findings (unparsable rows, ``#wrong`` > 0, cut short)."""
    lines = split_lines(text)
    run = NcclTestRun(file)
    header, diags = None, []
    for no, line in enumerate(lines, 1):
        if m := _PARAMS.search(line):
            run.gpus = int(m.group("g"))
            run.min_bytes, run.max_bytes = int(m.group("lo")), int(m.group("hi"))
            run.step = (int(m.group("step")), m.group("unit")) if m.group("step") else None
        elif m := _DEVICE.match(line):
            run.devices.append(m.group("name"))
        elif m := _AVG.search(line):
            run.avg_busbw = float(m.group("v")) if _NUM.match(m.group("v")) else None
        elif header is None and line.lstrip().startswith("#"):
            header = _header(line)
        elif header is not None and line.strip() and not line.lstrip().startswith("#") \
                and not _NCCL_LOG.match(line):
            diags += _row(run, header, line, no)
    if header is None:
        return None, [error(NCCL_TESTS_UNREADABLE, f"no nccl-tests column header ('# size "
                            f"count type redop ... busbw #wrong') in {os.path.basename(file)}",
                            value_span(file, 1, 0, 1),
                            hint="save the whole output of all_reduce_perf")]
    if run.devices and not run.gpus:
        run.gpus = len(run.devices)
    elif run.devices:
        run.gpus = max(run.gpus, len(run.devices))
    return run, diags + _complete(run, file, len(lines))


def _row(run: NcclTestRun, header: list[str], line: str, no: int) -> list[Diagnostic]:
    cells = line.split()
    if len(cells) == len(header) - 1 and "redop" in header and "root" not in header:
        cells.insert(header.index("redop"), "")   # older alltoall rows leave redop blank
    if len(cells) != len(header):
        return [error(NCCL_TESTS_UNREADABLE, f"nccl-tests row has {len(cells)} columns, the "
                      f"header {len(header)}", value_span(run.file, no, 0, len(line)),
                      hint="the output was cut or mixed with other output; run it again")]
    first = {k: i for i, k in reversed(list(enumerate(header)))}
    second = {k: i for i, k in enumerate(header)}
    try:
        vals = [_val(cells[first[k]]) for k in ("time", "algbw", "busbw")] + \
               [_val(cells[second[k]]) for k in ("time", "algbw", "busbw")]
        size = int(cells[0])
    except ValueError:
        return [error(NCCL_TESTS_UNREADABLE, "nccl-tests row with a value that is not a "
                      "number", value_span(run.file, no, 0, len(line)),
                      hint="run the test again and keep its raw output")]
    wrong = [_wrong(cells[first["#wrong"]]), _wrong(cells[second["#wrong"]])]
    row = NcclRow(size, vals[0], vals[1], vals[2], wrong[0], vals[3], vals[4], vals[5],
                  wrong[1], no)
    run.rows.append(row)
    if any(w for w in wrong):
        return [error(NCCL_TESTS_UNREADABLE, f"nccl-tests: {size:,} bytes gave wrong results "
                      f"(#wrong {wrong[0]} out-of-place, {wrong[1]} in-place)",
                      value_span(run.file, no, 0, len(line)),
                      hint="a GPU, NVLink or NIC corrupts data: run `nvidia-smi -q -d ECC` and "
                           "the NCCL tests per GPU pair to find it")]
    return []


def _val(text: str) -> float:
    if not _NUM.match(text):
        raise ValueError(text)
    return float(text)


def _wrong(text: str) -> int | None:
    return int(text) if (text.isdigit() and len(text) <= 20) else None


def _complete(run: NcclTestRun, file: str, last: int) -> list[Diagnostic]:
    if not run.rows:
        return [error(NCCL_TESTS_UNREADABLE, "nccl-tests output without any result row",
                      value_span(file, max(last, 1), 0, 1),
                      hint="the test stopped before its first size; see its error output")]
    top = run.rows[-1].size
    if (run.max_bytes is not None and _next_size(run, top) <= run.max_bytes) \
            or run.avg_busbw is None:
        return [warning(NCCL_TESTS_UNREADABLE, f"nccl-tests output ends at {top:,} bytes"
                        + (f" of {run.max_bytes:,}" if run.max_bytes else "")
                        + (" without '# Avg bus bandwidth'" if run.avg_busbw is None else ""),
                        value_span(file, run.rows[-1].line, 0, 1),
                        hint="the run was cut short; run it again to its last size")]
    return []


def _next_size(run: NcclTestRun, size: int) -> int:
    """The size nccl-tests would measure after ``size`` (``common.cu``: ``size *= stepFactor``
    or ``size += stepBytes`` while ``size <= maxBytes``): a sweep from 1 GiB by factor 3 ends
    at 9 GiB of a 16 GiB maximum, complete (NVIDIA/nccl-tests issue 256). Without the step,
    ``size + 1`` (the run must reach ``maxBytes`` itself)."""
    if run.step is None or run.step[0] < 1:
        return size + 1
    amount, unit = run.step
    return size * amount if unit == "factor" and amount > 1 else size + amount


def load_nccl_tests(path: str | os.PathLike, file: str | None = None) -> tuple[NcclTestRun | None, list[Diagnostic]]:
    """Read and parse an nccl-tests capture file."""
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    run, more = parse_nccl_tests(text, file if file is not None else os.fspath(path))
    return run, diags + more


#: The rules this module reports (collected by rtc.catalogue).
RULES = (NCCL_TESTS_UNREADABLE,)
