"""Exit codes for a file that is not UTF-8 text: `rtc check` gave RTC001 and exit 2 while
`rtc validate` and `rtc import` gave RTC603 and exit 1. The documented meaning of exit 2 is
"usage / I-O error: the input could not be read" (README, docs/validate.md), so validate
and import exit 2 too (the finding stays RTC603, which points at the byte); a lone
surrogate escape inside a parsed table is a finding like any other (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_rtc

UNDECODABLE = {"latin1.json": b'{"server_id": "caf\xe9"}\n',
               "utf16.json": "{}".encode("utf-16"),
               "nul.json": b'{"a": 1}\x00\n'}


@pytest.mark.parametrize("name", sorted(UNDECODABLE))
def test_not_utf8_exits_2_for_every_command(tmp_path: Path, name):
    table = tmp_path / name
    table.write_bytes(UNDECODABLE[name])
    val = run_rtc("validate", str(table))
    assert val.returncode == 2, val.stdout + val.stderr
    assert "error[RTC603]" in val.stdout
    assert "(0 files checked, 1 could not be read)" in val.stdout + val.stderr
    imp = run_rtc("import", str(table), cwd=tmp_path)
    assert imp.returncode == 2, imp.stderr
    assert "error[RTC603]" in imp.stderr
    assert run_rtc("validate", "--exit-zero", str(table)).returncode == 0


def test_check_of_a_non_utf8_description_is_still_2(tmp_path: Path):
    src = tmp_path / "c.rtc"
    src.write_bytes(b"cluster c {\xff}\n")
    res = run_rtc("check", str(src))
    assert res.returncode == 2 and "error[RTC001]" in res.stderr


def test_a_lone_surrogate_in_a_read_table_is_exit_1(tmp_path: Path):
    table = tmp_path / "sur.json"
    table.write_text('{"a": "\\ud800"}', encoding="utf-8")
    res = run_rtc("validate", str(table))
    assert res.returncode == 1 and "error[RTC603]" in res.stdout
