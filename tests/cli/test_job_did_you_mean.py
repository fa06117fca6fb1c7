"""`--job NAME` that names no job suggests the closest job name (difflib)."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, run_rtc

PD = str(EXAMPLES / "pd-a3.rtc")


@pytest.mark.parametrize("argv", [("groups", PD), ("cost", PD), ("diagram", PD)])
def test_misspelt_job_gets_did_you_mean(argv):
    res = run_rtc(*argv, "--job", "prefil")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == (
        "rtc: error[RTC002]: no job named 'prefil' (jobs: prefill, decode); did you mean "
        "'prefill'?")


def test_far_name_gets_the_list_only_and_the_right_name_works():
    res = run_rtc("groups", PD, "--job", "zzz")
    assert res.stderr.strip().splitlines()[-1] == \
        "rtc: error[RTC002]: no job named 'zzz' (jobs: prefill, decode)"
    assert run_rtc("groups", PD, "--job", "prefill").returncode == 0
