"""nccl-tests reader over older real output (superbench's A100 logs in
tests/ecosystem/nccl-tests, sources in its SOURCES.md): the `#wrong` column named `error`,
alltoall rows with a blank redop, NCCL INFO log lines among the rows."""

from __future__ import annotations

from pathlib import Path

from rtc.inventory.nccl_tests import parse_nccl_tests
from conftest import TESTS

CORPUS = TESTS / "ecosystem" / "nccl-tests"


def _parse(name: str):
    return parse_nccl_tests((CORPUS / name).read_text(encoding="utf-8"), name)


def test_error_column_and_interleaved_nccl_info_line():
    run, diags = _parse("superbench-nccl_allreduce.log")
    assert diags == []
    assert run.gpus == 8 and len(run.rows) == 34
    last = run.rows[-1]
    assert last.size == 8589934592 and last.busbw == 235.26 and last.wrong is None
    assert run.avg_busbw == 68.4048


def test_alltoall_rows_without_redop():
    run, diags = _parse("superbench-nccl_alltoall.log")
    assert diags == [] and len(run.rows) == 34 and run.rows[-1].size == 8589934592


def test_a_row_still_short_by_two_is_reported():
    text = (CORPUS / "superbench-nccl_alltoall.log").read_text(encoding="utf-8")
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if l.split()[:1] == ["8589934592"])
    lines[at] = " ".join(lines[at].split()[2:])          # size and count lost
    cut = "\n".join(lines)
    run, diags = parse_nccl_tests(cut, "a.log")
    assert [d.code for d in diags][:1] == ["RTC575"] and "columns" in diags[0].message
