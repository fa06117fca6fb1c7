"""`rtc preflight report|nccl` on inputs that hold nothing to judge: a log whose result lines
are all rejected (a SERVER or FILE of '.' / '..', which would leave the results folder) used
to print "no problems found" and exit 0; it is an I/O error (RTC001, exit 2) that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_rtc
from rtc.preflight.stream import scan


def test_dot_names_are_rejected_and_counted():
    found, rejected = scan("@rtc-preflight@ .. expect.json {}\n"
                           "@rtc-preflight@ a .. x\n"
                           "0: @rtc-preflight@ a expect.json {}\n"
                           "@rtc-preflight@ nofile\n"
                           "plain line\n")
    assert found == {"a": {"expect.json": ["{}"]}}
    assert rejected == 3


@pytest.mark.parametrize("command", ["report", "nccl"])
def test_a_log_of_rejected_lines_only_is_an_error_not_a_clean_report(tmp_path: Path, command):
    log = tmp_path / "slurm-7.out"
    log.write_text("@rtc-preflight@ .. expect.json {}\n@rtc-preflight@ atlas-01 .. x\n")
    res = run_rtc("preflight", command, str(log))
    assert res.returncode == 2, res.stderr
    assert "no problems found" not in res.stderr
    assert (f"{log}:1:1: error[RTC001]: cannot read {log}: it carries no usable preflight "
            "results: its 2 result lines (@rtc-preflight@ SERVER FILE TEXT) were rejected "
            "(no FILE, a slash in SERVER or FILE, or a name '.' or '..', which would leave "
            "the results folder)") in res.stderr


def test_one_folder_given_twice_is_judged_once():
    """`rtc preflight report DIR DIR/ ./DIR` used to report "server b appears twice"
    (RTC569) and every finding of DIR twice."""
    from conftest import ROOT, TESTS

    a, b = (TESTS / "data" / "preflight" / "link-down" / s for s in "ab")
    rel = f"./{b.relative_to(ROOT)}"
    res = run_rtc("preflight", "report", str(a), str(b), f"{b}/", rel, cwd=ROOT)
    assert res.returncode == 1, res.stderr
    assert "RTC569" not in res.stderr
    assert res.stderr.count("error[RTC560]: b NPU 1: link status DOWN") == 1
    assert res.stderr.rstrip().endswith("rtc: 1 error")


def test_distinct_keeps_the_first_spelling_in_order(tmp_path: Path):
    from rtc.api.preflighting import distinct

    (tmp_path / "x").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "x")
    got = distinct([str(tmp_path / "x"), str(tmp_path / "nope"), str(tmp_path / "link"),
                    f"{tmp_path}/x/", str(tmp_path / "nope")])
    assert got == [str(tmp_path / "x"), str(tmp_path / "nope")]
