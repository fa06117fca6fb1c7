"""The syntax-error corpus: each case is a one-screen message with location and caret,
exit 1, and no output file created or modified."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CASES, expectations, run_rtc
from rtc.api import compile_text

SYNTAX_CASES = sorted((CASES / "syntax").glob("*.rtc"))


def test_corpus_has_many_kinds():
    codes = {expectations(p)[0][0] for p in SYNTAX_CASES}
    assert len(codes) >= 12, codes


@pytest.mark.parametrize("case", SYNTAX_CASES, ids=lambda p: p.stem)
def test_syntax_case_reports_rule_and_location(case: Path):
    (code, line, col), = expectations(case)
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    errors = [d for d in result.diagnostics if d.severity.label == "error"]
    assert errors, "expected an error"
    found = [d for d in errors if (d.code, d.span.line, d.span.column) == (code, line, col)]
    assert found, [(d.code, d.span.line, d.span.column, d.message) for d in errors]
    assert found[0].hint, "every syntax diagnostic carries a hint"


@pytest.mark.parametrize("case", SYNTAX_CASES, ids=lambda p: p.stem)
def test_syntax_case_cli_exit_1_and_no_file(case: Path, tmp_path: Path):
    out = tmp_path / "hccl.json"
    res = run_rtc("compile", str(case), "-o", str(out))
    assert res.returncode == 1, res.stderr
    assert not out.exists()
    (code, line, col), = expectations(case)
    assert f"{case}:{line}:{col}: error[{code}]" in res.stderr
    # caret line under the source line, and the whole message fits one screen
    assert "^" in res.stderr
    assert len(res.stderr.splitlines()) <= 24
    assert "Traceback" not in res.stderr and "lark" not in res.stderr.lower()


def test_existing_output_untouched_on_error(tmp_path: Path):
    out = tmp_path / "hccl.json"
    out.write_text("OLD\n")
    case = CASES / "syntax" / "missing-close.rtc"
    res = run_rtc("compile", str(case), "-o", str(out))
    assert res.returncode == 1
    assert out.read_text() == "OLD\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hccl.json"]


@pytest.mark.parametrize("name,words", [
    ("space-in-template.rtc", "cannot start with a space"),
    ("empty-template.rtc", "empty template group"),
    ("leading-zero-octet.rtc", "'000' has a leading zero"),
])
def test_template_mistakes_are_named(name, words):
    case = CASES / "syntax" / name
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    assert any(words in d.message for d in result.diagnostics), \
        [d.message for d in result.diagnostics]


def test_bad_fabric_subnet_is_not_also_missing():
    case = CASES / "syntax" / "network-prefix-too-long.rtc"
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    assert [d.code for d in result.diagnostics] == ["RTC111"]  # no RTC406 "no subnets"
    assert "prefix /33 is longer than the 32 bits" in result.diagnostics[0].message


def test_ipv6_group_out_of_range_is_named():
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily n[9999..10000] {\n"
           "  host 10.0.{i/256}.{i%256}\n  devices 0..7\n  device_ip fd00:6:{i}::{d+10}\n}\n")
    (d,) = [d for d in compile_text(src, "v6.rtc").diagnostics if d.code == "RTC207"]
    assert "'10000' is not a group of 1 to 4 hex digits" in d.message


@pytest.mark.parametrize("value,words", [
    ("10.1.0.{i:10000}", "pad width 10000"),
    ("10.1.0.{i+0x10}", "numbers are plain decimals"),
    ("10.1.0.{i+010}", "numbers are plain decimals"),
    ("10.1.0.{i+1_000}", "numbers are plain decimals"),
    ("fd00::{i}:{d+1}%eth0", "has a zone id"),
])
def test_template_and_address_forms_rejected_with_reason(value, words):
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily n[0..1] {\n  host 10.0.0.{i+1}\n"
           f"  devices 0..7\n  device_ip {value}\n}}\n")
    result = compile_text(src, "t.rtc")
    assert len(result.diagnostics) == 1 and words in result.diagnostics[0].message, \
        [d.message for d in result.diagnostics]


def test_single_quotes_around_a_space_in_env_are_named():
    # fresh-user finding 16: `env HCCL_BUFFSIZE = ' 5'` said only "write `env NAME = value`"
    case = CASES / "syntax" / "env-single-quotes-with-space.rtc"
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    (d,) = [d for d in result.diagnostics if d.code == "RTC114"]
    assert "single quotes, which are not string delimiters in .rtc" in d.message
    assert "`'` and `5'`" in d.message and (d.span.column, d.span.end_column) == (23, 27)
    assert d.hint == 'write " 5" (or 5 without quotes)'
    fixed = case.read_text(encoding="utf-8").replace("' 5'", '"5"')
    assert compile_text(fixed, str(case)).ok


@pytest.mark.parametrize("text", ['{\n  "version": "1.0"\n}\n', '{"version": "1.0"}\n', "[1, 2]\n"])
def test_a_json_file_given_to_check_points_at_rtc_validate(text):
    """`rtc check hand.json`: not "unknown block keyword" with the list of blocks, but that
    the file is JSON and which commands read rank tables."""
    d = compile_text(text, "hand.json").diagnostics[0]
    assert d.code == "RTC104" and "looks like a JSON file" in d.message
    assert "rtc validate" in d.hint and "rtc import" in d.hint


def test_a_binary_file_given_to_check_is_called_binary():
    from rtc.api.compiling import compile_bytes

    d = compile_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\x80", "ls").diagnostics[0]
    assert d.code == "RTC001" and "binary file" in d.message and "iconv" not in d.hint
    d = compile_bytes(b"server a {\n  host \xe9\n}\n", "latin.rtc").diagnostics[0]
    assert "iconv -f LATIN1" in d.hint      # text in another encoding keeps its hint
