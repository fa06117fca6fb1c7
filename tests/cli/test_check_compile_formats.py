"""`rtc check` and `rtc compile`: `--format text|json|github|sarif` (the same diagnostics
in each; text unchanged by default), `-` for standard input (named `<stdin>`), and
`rtc preflight report` of a folder that does not exist (exit 2, RTC001)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, TESTS, run_rtc

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
PD = EXAMPLES / "pd-a3.rtc"
SARIF_SCHEMA = TESTS / "data" / "sarif" / "sarif-schema-2.1.0.json"
PREFLIGHT = TESTS / "data" / "preflight"

DUPLICATE_IP = """\
cluster c {
  hardware atlas-800t-a2
}
server atlas-01 {
  host 10.0.0.6
  devices 0..7
  device_ip 6.0.2.1 step 2
}
server atlas-02 {
  host 10.0.0.5
  devices 0..7
  device_ip 6.0.2.1 step 2
}
"""


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    p = tmp_path / "dup.rtc"
    p.write_text(DUPLICATE_IP)
    return p


def codes_of_text(stderr: str) -> list[str]:
    return sorted(line.split("[", 1)[1].split("]", 1)[0] for line in stderr.splitlines()
                  if ": error[" in line or ": warning[" in line or ": note[" in line)


# --------------------------------------------------------------------------- --format


def test_check_text_is_the_default_and_unchanged(bad: Path):
    default = run_rtc("check", str(bad))
    text = run_rtc("check", str(bad), "--format", "text")
    assert default.returncode == text.returncode == 1
    assert default.stdout == text.stdout == ""
    assert default.stderr == text.stderr
    assert f"{bad}:12:13: error[RTC208]" in default.stderr


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_check_machine_formats_carry_the_same_diagnostics(bad: Path, fmt: str):
    text = run_rtc("check", str(bad))
    res = run_rtc("check", str(bad), "--format", fmt)
    assert res.returncode == text.returncode == 1
    want = codes_of_text(text.stderr)
    assert "RTC208" in want
    if fmt == "json":
        doc = json.loads(res.stdout)
        assert doc["tool"]["command"] == "check"
        assert sorted(d["code"] for d in doc["diagnostics"]) == want
        assert doc["files"][0]["file"] == str(bad) and doc["summary"]["ok"] is False
    elif fmt == "github":
        lines = res.stdout.splitlines()
        assert sorted(line.split("title=", 1)[1].split("::", 1)[0] for line in lines) == want
        assert any(line.startswith(f"::error file={bad},line=12,col=13,") for line in lines)
    else:
        doc = json.loads(res.stdout)
        schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
        jsonschema.Draft4Validator(schema).validate(doc)
        assert sorted(r["ruleId"] for r in doc["runs"][0]["results"]) == want
    assert res.stderr.strip().splitlines()[-1] == text.stderr.strip().splitlines()[-1]
    assert "error[RTC208]" not in res.stderr  # the findings are on stdout, once


def test_check_clean_file_json_and_exit_codes(tmp_path: Path):
    res = run_rtc("check", str(EXAMPLES / "a2-1node-tp8.rtc"), "--format", "json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["summary"]["errors"] == 0
    res = run_rtc("check", str(tmp_path / "nope.rtc"), "--format", "json")
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    assert doc["diagnostics"][0]["code"] == "RTC001"
    assert doc["files"][0]["errors"] == 1 == doc["summary"]["errors"]


def test_check_and_compile_refuse_an_unknown_format(tmp_path: Path):
    for cmd in (["check", str(D1)], ["compile", str(D1), "-o", str(tmp_path / "x.json")]):
        res = run_rtc(*cmd, "--format", "xml")
        assert res.returncode == 2
        assert "error[RTC002]: unknown --format 'xml'" in res.stderr
        assert "text, json, github, sarif" in res.stderr
    assert not (tmp_path / "x.json").exists()


def test_compile_json_report_on_stdout_with_o(tmp_path: Path):
    out = tmp_path / "p.json"
    res = run_rtc("compile", str(PD), "--job", "prefill", "-o", str(out), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["tool"]["command"] == "compile"
    assert [d["code"] for d in doc["diagnostics"]] == ["RTC444", "RTC444"]
    assert f"rtc: wrote {out}" in res.stderr
    assert out.read_bytes() == (GOLDEN / "pd-a3" / "hccl-prefill.json").read_bytes()


def test_compile_sarif_with_out_dir_writes_the_same_files(tmp_path: Path):
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "a"), "--no-diagrams",
                  "--format", "sarif")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["version"] == "2.1.0"
    ref = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "b"), "--no-diagrams")
    assert ref.stdout == ""
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n


def test_compile_errors_in_github_format_exit_1_and_write_nothing(bad: Path, tmp_path: Path):
    out = tmp_path / "h.json"
    res = run_rtc("compile", str(bad), "-o", str(out), "--format", "github")
    assert res.returncode == 1
    assert any(line.startswith("::error ") and "title=RTC208" in line
               for line in res.stdout.splitlines())
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_compile_stdout_with_a_machine_format_is_refused(fmt: str):
    res = run_rtc("compile", str(D1), "--stdout", "--format", fmt)
    assert res.returncode == 2 and res.stdout == ""
    assert "error[RTC002]: --stdout prints the rank table" in res.stderr


def test_compile_stdout_with_text_format_is_the_table():
    res = run_rtc("compile", str(D1), "--stdout", "--format", "text")
    assert res.returncode == 0
    assert res.stdout.encode() == (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_bytes()


# --------------------------------------------------------------------------- standard input


def test_check_reads_standard_input(bad: Path):
    res = run_rtc("check", "-", input=DUPLICATE_IP)
    assert res.returncode == 1
    assert "<stdin>:12:13: error[RTC208]" in res.stderr
    assert res.stderr.replace("<stdin>", str(bad)) == run_rtc("check", str(bad)).stderr
    res = run_rtc("check", "-", "--format", "json", input=DUPLICATE_IP)
    doc = json.loads(res.stdout)
    assert doc["files"][0]["file"] == "<stdin>"
    assert {d["span"]["file"] for d in doc["diagnostics"]} == {"<stdin>"}
    res = run_rtc("check", "-", input=D1.read_text())
    assert res.returncode == 0, res.stderr


def test_compile_reads_standard_input(tmp_path: Path):
    golden = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_bytes()
    res = run_rtc("compile", "-", "--stdout", input=D1.read_text())
    assert res.returncode == 0, res.stderr
    assert res.stdout.encode() == golden
    res = run_rtc("compile", "-", "-o", str(tmp_path / "h.json"), input=D1.read_text())
    assert res.returncode == 0 and (tmp_path / "h.json").read_bytes() == golden
    res = run_rtc("compile", "-", "--out-dir", str(tmp_path / "o"), "--no-diagrams",
                  input=D1.read_text())
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "o" / "hccl.json").read_bytes() == golden


def test_standard_input_that_is_not_utf8_or_empty(tmp_path: Path):
    import subprocess

    from conftest import rtc_command

    res = subprocess.run(rtc_command() + ["check", "-"], input=b"\xff\xfe c\x00",
                         capture_output=True, timeout=120)
    assert res.returncode == 2
    assert b"cannot read <stdin>: it is UTF-16, not UTF-8" in res.stderr
    res = run_rtc("compile", "-", "-o", str(tmp_path / "x.json"), input="")
    assert res.returncode == 1
    assert not (tmp_path / "x.json").exists()


# --------------------------------------------------------------------------- preflight report


def test_preflight_report_of_a_missing_path_is_an_io_error(tmp_path: Path):
    missing = tmp_path / "nothere"
    res = run_rtc("preflight", "report", str(missing))
    assert res.returncode == 2
    assert f"error[RTC001]: cannot read {missing}: it does not exist" in res.stderr
    assert "reachability" not in res.stdout
    res = run_rtc("preflight", "report", "--format", "json", str(missing))
    assert res.returncode == 2
    assert [d["code"] for d in json.loads(res.stdout)["diagnostics"]] == ["RTC001"]


def test_preflight_report_of_good_folders_and_a_missing_one(tmp_path: Path):
    folders = [str(PREFLIGHT / "all-good" / s) for s in ("a", "b")]
    res = run_rtc("preflight", "report", *folders, str(tmp_path / "c"))
    assert res.returncode == 2
    assert "reachability" in res.stdout  # the folders that exist are still judged
    assert "error[RTC001]" in res.stderr and "RTC568" not in res.stderr
    assert run_rtc("preflight", "report", *folders).returncode == 0


def test_preflight_report_of_a_file_is_still_rtc568(tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    res = run_rtc("preflight", "report", str(f))
    assert res.returncode == 1 and "RTC568" in res.stderr and "is not a folder" in res.stderr


@pytest.mark.parametrize("argv", [
    ("check", "{bad}", "--format", "json"),
    ("check", "{bad}", "--format", "sarif"),
    ("compile", "{bad}", "--format", "json", "-o", "{tmp}/rt.json"),
    ("validate", "{table}", "--format", "json"),
    ("validate", "{table}", "--format", "sarif"),
    ("lint", "{script}", "--format", "json"),
    ("lint", "{script}", "--format", "sarif"),
    ("preflight", "report", str(PREFLIGHT / "no-hccn-tool" / "a"), "--format", "json"),
    ("preflight", "nccl", str(PREFLIGHT / "no-hccn-tool" / "a"), "--format", "json"),
])
def test_machine_formats_print_only_the_summary_line_on_stderr(argv, bad: Path, tmp_path: Path):
    """With --format json/sarif the findings are in the document on stdout; stderr holds
    the one-line summary (`rtc preflight report` printed the whole text report there)."""
    table = tmp_path / "t.json"
    table.write_text('{"server_count": "1"}\n')
    script = tmp_path / "node.sh"
    script.write_text("export ASCEND_RT_VISIBLE_DEVICES=0,1\n"
                      "vllm serve /models/qwen --tensor-parallel-size 2 --port 70000\n")
    res = run_rtc(*(a.format(bad=bad, tmp=tmp_path, table=table, script=script)
                    for a in argv))
    assert res.returncode == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtc: 1 error"), res.stderr
    assert res.stdout.lstrip().startswith("{")


def test_preflight_report_json_stderr_is_exactly_the_summary():
    res = run_rtc("preflight", "report", str(PREFLIGHT / "no-hccn-tool" / "a"),
                  "--format", "json")
    assert res.stderr == "rtc: 1 error, 1 warning\n"
    assert [d["code"] for d in json.loads(res.stdout)["diagnostics"]] == ["RTC566", "RTC580"]
