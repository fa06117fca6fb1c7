"""A finding that follows from another one already reported stands down: RTC530 (DP
start ranks) is not added when RTC210 (world size) fired for the job."""

from __future__ import annotations

from conftest import EXAMPLES
from rtc.api import compile_text

D1 = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(encoding="utf-8")


def _found(text: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in compile_text(text, "d1.rtc").diagnostics
            if d.severity.name == "ERROR"]


def test_tp3_is_rtc210_alone_without_start_rank_knock_on():
    assert "  tp 8\n" in D1
    got = _found(D1.replace("  tp 8\n", "  tp 3\n"))
    assert got == [("RTC210", "job deepseek needs 6 devices (dp 2 x pp 1 x pcp 1 x tp 3) but "
                              "is given 16")]


def test_start_ranks_are_still_checked_when_the_world_size_fits():
    """The passing side: D1 as written has neither; a start-rank gap alone is RTC530
    (tests/cases/checks/RTC530-worker-args-start-rank.rtc)."""
    assert _found(D1) == []
