"""The console script as a user runs it: version, help, outputs, usage errors."""

from __future__ import annotations

import json

import pytest
from pathlib import Path

from conftest import EXAMPLES, ROOT, TESTS, run_rtc


def test_version():
    from rtc import __version__

    res = run_rtc("--version")
    assert res.returncode == 0
    assert res.stdout.strip() == f"rtc {__version__}"


def test_help_has_examples():
    res = run_rtc("--help")
    assert res.returncode == 0
    assert "rtc compile examples/a2-2node-dp2-tp8.rtc -o hccl.json" in res.stdout
    res = run_rtc("compile", "--help")
    assert res.returncode == 0 and "--out-dir" in res.stdout


def test_compile_from_another_directory_uses_packaged_grammar(tmp_path: Path):
    res = run_rtc("compile", str(EXAMPLES / "doc-2x2.rtc"), "-o", "t.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "t.json").read_text())["server_count"] == "2"


def test_check_writes_nothing(tmp_path: Path):
    res = run_rtc("check", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert list(tmp_path.iterdir()) == []
    assert "no problems found" in res.stderr


def test_missing_input_is_exit_2():
    res = run_rtc("compile", "does-not-exist.rtc", "--stdout")
    assert res.returncode == 2
    assert "cannot read does-not-exist.rtc" in res.stderr


def test_output_flag_required():
    res = run_rtc("compile", str(EXAMPLES / "doc-2x2.rtc"))
    assert res.returncode == 2
    assert "-o FILE, --stdout, or --out-dir DIR" in res.stderr


def test_many_jobs_need_job_or_out_dir(tmp_path: Path):
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "-o", str(tmp_path / "x.json"))
    assert res.returncode == 2
    assert "--job" in res.stderr and not (tmp_path / "x.json").exists()
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--job", "decode", "--stdout")
    assert res.returncode == 0
    doc = json.loads(res.stdout)
    assert [s["server_id"] for s in doc["server_list"]] == ["10.0.1.11", "10.0.1.12"]  # d1, d2 hosts
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--job", "nope", "--stdout")
    assert res.returncode == 2 and "no job named 'nope'" in res.stderr


def test_unwritable_output_is_exit_2(tmp_path: Path):
    res = run_rtc("compile", str(EXAMPLES / "doc-2x2.rtc"), "-o", str(tmp_path / "no" / "x.json"))
    assert res.returncode == 2
    assert "cannot write" in res.stderr


def test_rules_and_explain():
    res = run_rtc("rules")
    assert res.returncode == 0
    codes = [line.split()[0] for line in res.stdout.splitlines()]
    assert "RTC208" in codes and "RTC101" in codes
    assert len(codes) == len(set(codes))
    res = run_rtc("explain", "RTC208")
    assert res.returncode == 0
    assert "duplicate-device-ip" in res.stdout and "Fix:" in res.stdout
    assert "Also reported as" not in res.stdout
    assert res.stdout.endswith("\n\nDeclared in rtc/checks/duplicates.py.\n")
    assert run_rtc("explain", "RTC999").returncode == 2


def test_explain_names_the_other_severities_a_rule_is_reported_at():
    res = run_rtc("explain", "RTC535")
    assert res.returncode == 0
    assert res.stdout.startswith("RTC535 nixl-tp-across-servers (error)")
    assert res.stdout.endswith("\nAlso reported as note: vllm_version is not set, so the "
                               "release is not known.\n")


def test_strict_turns_warnings_into_errors(tmp_path: Path):
    case = TESTS / "cases" / "checks" / "RTC216-server-id-order.rtc"
    assert run_rtc("check", str(case)).returncode == 0
    assert run_rtc("check", str(case), "--strict").returncode == 1


def test_every_emitted_code_is_a_declared_rule():
    """Every RTCnnn string in the package is declared, so `rtc explain` knows it."""
    import re

    from conftest import ROOT
    from rtc.catalogue import RULES as ALL_RULES

    declared = {r.code for r in ALL_RULES}
    used = set()
    for path in (ROOT / "rtc").rglob("*.py"):
        used |= set(re.findall(r'"(RTC\d{3})"', path.read_text(encoding="utf-8")))
    assert used - declared == set()


def test_utf16_source_gets_an_encoding_hint(tmp_path):
    src = tmp_path / "u16.rtc"
    src.write_text((EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(), encoding="utf-16")
    res = run_rtc("check", str(src))
    assert res.returncode == 2
    assert "save the file as UTF-8" in res.stderr


def test_latin1_source_names_the_byte(tmp_path):
    src = tmp_path / "l1.rtc"
    src.write_bytes(b"cluster c {\n  hardware atlas-800t-a2 # caf\xe9\n}\n")
    res = run_rtc("check", str(src))
    assert res.returncode == 2
    assert "byte 0xe9 at line 2, column 31 is not UTF-8" in res.stderr
    assert "iconv -f LATIN1" in res.stderr


def test_out_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "afile").write_text("keep")
    res = run_rtc("compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "--out-dir",
                  str(tmp_path / "afile"))
    assert res.returncode == 2 and "is a file, not a folder" in res.stderr
    assert (tmp_path / "afile").read_text() == "keep"


def test_preflight_report_of_a_missing_folder(tmp_path):
    res = run_rtc("preflight", "report", str(tmp_path / "nothere"))
    assert res.returncode == 2
    assert "does not exist" in res.stderr and "reachability" not in res.stdout


@pytest.mark.parametrize("args, rule, text", [
    (["compile", "--bogus"], "RTC002", "No such option: --bogus"),
    (["compile"], "RTC002", "Missing argument"),
    (["frob"], "RTC002", "No such command 'frob'"),
    (["compile", "x.rtc", "-o", "a.json", "--stdout"], "RTC002", "use only one of"),
    (["explain", "RTC999"], "RTC002", "unknown rule 'RTC999'"),
])
def test_command_line_problems_carry_a_rule_id(args, rule, text):
    res = run_rtc(*args)
    assert res.returncode == 2
    assert f"rtc: error[{rule}]: " in res.stderr and text in res.stderr
    assert "Traceback" not in res.stderr


def test_an_output_that_cannot_be_written_is_rtc001(tmp_path):
    target = tmp_path / "missing-folder" / "hccl.json"
    res = run_rtc("compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "-o", str(target))
    assert res.returncode == 2
    assert f"rtc: error[RTC001]: cannot write {target}" in res.stderr


def test_closed_stderr_pipe_keeps_the_exit_code():
    # `rtc check FILE 2>&1 | head -1`: the reader goes away after one line; rtc still
    # exits with the command's own code (0: notes only), not 1 from a BrokenPipeError
    import subprocess
    from conftest import ROOT, rtc_command
    for _ in range(3):
        res = subprocess.run(["bash", "-c", " ".join(rtc_command() + [
            "check", str(ROOT / "examples" / "pd-a3.rtc")]) + " 2>&1 | head -c 10 >/dev/null;"
            " echo ${PIPESTATUS[0]}"], capture_output=True, text=True, timeout=60)
        assert res.stdout.strip() == "0", res.stdout + res.stderr


def test_only_the_invoked_command_is_built():
    # start-up (issue 19): `rtc compile ...` builds one command's parameters, not all
    from rtc.cli import _app_for
    from rtc.cli.app import app
    one = _app_for(["rtc", "compile", "x.rtc"])
    assert [c.name for c in one.registered_commands] == ["compile"] and not one.registered_groups
    group = _app_for(["rtc", "preflight", "report"])
    assert [g.name for g in group.registered_groups] == ["preflight"]
    assert _app_for(["rtc", "--help"]) is app and _app_for(["rtc", "compil"]) is app
    assert len(app.registered_commands) > 10      # the shared app itself is unchanged


def test_writing_a_diagram_onto_a_folder_names_a_diagram_file(tmp_path):
    """`rtc diagram cluster.rtc -o DIR.svg` where DIR.svg is a folder: the hint names an
    .svg file in it, not `-o hccl.json` / --out-dir (which rtc diagram does not have)."""
    from typer.testing import CliRunner

    from rtc.cli import app

    folder = tmp_path / "d.svg"
    folder.mkdir()
    example = sorted(EXAMPLES.glob("*.rtc"))[0]
    res = CliRunner().invoke(app, ["diagram", str(example), "-o", str(folder)])
    assert res.exit_code == 2 and "it is a folder" in res.stderr, res.stderr
    assert f"e.g. -o {folder / 'cluster.svg'}" in res.stderr and "hccl.json" not in res.stderr
