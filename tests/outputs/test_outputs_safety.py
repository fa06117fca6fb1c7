"""Outputs never destroy inputs or special files; interrupted writes leave no debris;
stdout failures, conflicting flags and huge source lines are reported sanely."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLES, rtc_command, run_rtc

EXAMPLE = EXAMPLES / "a2-2node-dp2-tp8.rtc"


@pytest.fixture
def src(tmp_path: Path) -> Path:
    p = tmp_path / "x.rtc"
    shutil.copy(EXAMPLE, p)
    return p


# 1. an output that is the input is refused


def test_compile_output_equal_to_input_is_refused(src: Path):
    before = src.read_text()
    res = run_rtc("compile", str(src), "-o", str(src))
    assert res.returncode == 2
    assert "is the input file" in res.stderr
    assert src.read_text() == before


def test_compile_output_via_symlink_to_input_is_refused(src: Path, tmp_path: Path):
    link = tmp_path / "alias.json"
    link.symlink_to(src)
    res = run_rtc("compile", str(src), "-o", str(link))
    assert res.returncode == 2 and "is the input file" in res.stderr
    assert src.read_text() == EXAMPLE.read_text()


def test_compile_out_dir_holding_input_under_output_name_is_refused(tmp_path: Path):
    inp = tmp_path / "hccl.json"
    shutil.copy(EXAMPLE, inp)
    res = run_rtc("compile", str(inp), "--out-dir", str(tmp_path), "--no-diagrams")
    assert res.returncode == 2 and "is the input file" in res.stderr
    assert inp.read_text() == EXAMPLE.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hccl.json"]


def test_diagram_and_import_output_equal_to_input_are_refused(src: Path, tmp_path: Path):
    before = src.read_text()
    res = run_rtc("diagram", str(src), "-o", str(src), "--format", "dot")
    assert res.returncode == 2 and "is the input file" in res.stderr
    assert src.read_text() == before
    table = tmp_path / "h.json"
    assert run_rtc("compile", str(src), "-o", str(table)).returncode == 0
    text = table.read_text()
    res = run_rtc("import", str(table), "-o", str(table))
    assert res.returncode == 2 and "is the input file" in res.stderr
    assert table.read_text() == text


# 2. special targets


def test_symlink_output_writes_the_target_and_keeps_the_link(src: Path, tmp_path: Path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    res = run_rtc("compile", str(src), "-o", str(link))
    assert res.returncode == 0, res.stderr
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert json.loads(real.read_text())["server_count"] == "2"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_fifo_output_is_written_not_replaced(src: Path, tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=reader)
    t.start()
    res = run_rtc("compile", str(src), "-o", str(fifo))
    t.join(60)
    assert res.returncode == 0, res.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0])["server_count"] == "2"


def test_directory_output_is_a_clear_error(src: Path, tmp_path: Path):
    d = tmp_path / "d"
    d.mkdir()
    res = run_rtc("compile", str(src), "-o", str(d))
    assert res.returncode == 2
    assert "it is a folder" in res.stderr and "--out-dir" in res.stderr
    assert d.is_dir() and list(d.iterdir()) == []


def test_write_atomic_bytes_and_mode(tmp_path: Path):
    from rtc.outputs.files import write_atomic

    p = tmp_path / "a.bin"
    write_atomic(p, b"\x00\x01", mode=0o600)
    assert p.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


# 3. SIGTERM mid-write removes the temporary file


def test_sigterm_during_write_leaves_no_temp_file(src: Path, tmp_path: Path):
    out = tmp_path / "out.json"
    code = (
        "import os, signal, sys\n"
        "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGTERM)\n"
        "from rtc.cli import main\n"
        f"sys.argv = ['rtc', 'compile', {str(src)!r}, '-o', {str(out)!r}]\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 143, res.stderr
    assert "Traceback" not in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.rtc"]


# 4. conflicting flags


@pytest.mark.parametrize("extra", [["--stdout"], ["--out-dir", "zz"]])
def test_conflicting_output_flags(src: Path, tmp_path: Path, extra: list[str]):
    res = run_rtc("compile", str(src), "-o", "y.json", *extra, cwd=tmp_path)
    assert res.returncode == 2
    assert "use only one of -o, --stdout, --out-dir" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.rtc"]


# 5. --format against the -o suffix


def test_diagram_format_contradicting_suffix_is_refused(src: Path, tmp_path: Path):
    res = run_rtc("diagram", str(src), "-o", "q.svg", "--format", "dot", cwd=tmp_path)
    assert res.returncode == 2
    assert "--format dot does not match the suffix of q.svg" in res.stderr
    assert not (tmp_path / "q.svg").exists()


def test_diagram_format_with_matching_or_unknown_suffix_is_written(src: Path, tmp_path: Path):
    res = run_rtc("diagram", str(src), "-o", "q.gv", "--format", "dot", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "q.gv").read_text().startswith(("digraph", "graph", "strict"))
    res = run_rtc("diagram", str(src), "-o", "q.txt", "--format", "dot", cwd=tmp_path)
    assert res.returncode == 0, res.stderr


# 6. / 7. validate: null, unreadable files


def test_validate_null_is_not_a_rank_table(tmp_path: Path):
    (tmp_path / "null.json").write_text("null\n")
    res = run_rtc("validate", "null.json", cwd=tmp_path)
    assert res.returncode == 1
    assert "RTC607" in res.stdout and "the top level is null" in res.stdout
    res = run_rtc("import", "null.json", cwd=tmp_path)
    assert res.returncode == 1
    assert "RTC607" in res.stderr and "(the error below)" in res.stderr


def test_validate_missing_file_counts_agree(tmp_path: Path):
    res = run_rtc("validate", "nope.json", cwd=tmp_path)
    assert res.returncode == 2
    assert "RTC001" in res.stdout
    assert "rtc: 1 error (0 files checked, 1 could not be read)" in res.stdout
    res = run_rtc("validate", "--format", "json", "nope.json", cwd=tmp_path)
    doc = json.loads(res.stdout)
    assert doc["files"][0]["file"] == "nope.json"
    assert doc["files"][0]["errors"] == 1 == doc["summary"]["errors"]
    assert "could not be read" in res.stderr


# 8. huge source lines are shown as a window


def test_text_reporter_windows_a_huge_source_line():
    from rtc.diagnostics import Diagnostic, Severity, Span
    from rtc.report.text import MAX_SOURCE, format_diagnostic

    line = "a" * 100_000 + "BAD" + "b" * 100_000
    col = 100_001
    d = Diagnostic("RTC900", Severity.ERROR, "m" * 10_000, Span("f.json", 1, col, 1, col + 3))
    lines = [t for t, _ in format_diagnostic(d, {"f.json": line})]
    src_line, caret_line = lines[1], lines[2]
    shown = src_line.split(" | ", 1)[1]
    carets = caret_line.split(" | ", 1)[1]
    assert len(shown) <= MAX_SOURCE
    assert shown.startswith("...") and shown.endswith("...")
    start = carets.index("^")
    assert shown[start:start + 3] == "BAD" and carets.count("^") == 3
    assert len(lines[0]) < 1_000


def test_text_reporter_short_line_unchanged():
    from rtc.diagnostics import Diagnostic, Severity, Span
    from rtc.report.text import format_diagnostic

    d = Diagnostic("RTC900", Severity.ERROR, "msg", Span("f", 1, 5, 1, 8))
    lines = [t for t, _ in format_diagnostic(d, {"f": "abc defghi"})]
    assert lines[1] == " 1 | abc defghi"
    assert lines[2] == "   |     ^^^"


# 9. stdout failures


def test_closed_stdout_is_exit_2(src: Path):
    res = subprocess.run(rtc_command() + ["compile", str(src), "--stdout"], stdout=None,
                         stderr=subprocess.PIPE, text=True, timeout=120,
                         pass_fds=(), close_fds=True,
                         preexec_fn=lambda: os.close(1))
    assert res.returncode == 2
    assert "cannot write to standard output" in res.stderr


def test_broken_pipe_is_quiet_exit_0(src: Path):
    r, w = os.pipe()
    os.close(r)  # nobody reads: the write fails with EPIPE
    try:
        res = subprocess.run(rtc_command() + ["compile", str(src), "--stdout"], stdout=w,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert res.returncode == 0
    assert "Traceback" not in res.stderr and "Exception ignored" not in res.stderr


# 10. readable metavars


@pytest.mark.parametrize("cmd", [["validate"], ["diagram"], ["preflight", "report"]])
def test_help_has_no_python_type_metavars(cmd: list[str]):
    res = run_rtc(*cmd, "--help")
    assert res.returncode == 0
    assert "<list[" not in res.stdout and "range>" not in res.stdout


def test_out_dir_removes_only_the_files_an_earlier_plan_wrote(tmp_path: Path):
    from conftest import EXAMPLES

    out = tmp_path / "build"
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    first = {p.name for p in out.iterdir()}
    assert any(n.startswith("hccl-") for n in first)
    (out / "notes.txt").write_text("mine")
    res = run_rtc("compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "--out-dir", str(out),
                  "--no-diagrams")
    assert res.returncode == 0 and "an earlier plan wrote" in res.stderr
    now = {p.name for p in out.iterdir()}
    assert (out / "notes.txt").read_text() == "mine"
    assert not any(n.startswith("hccl-") for n in now) and "hccl.json" in now
    listed = set((out / ".rtc-outputs").read_text().split())
    assert now - {"notes.txt", ".rtc-outputs"} <= listed


def test_out_dir_manifest_symlink_is_not_followed_and_job_prunes_nothing(tmp_path: Path):
    from conftest import EXAMPLES

    out = tmp_path / "build"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / ".rtc-outputs").symlink_to(victim)
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "keep" and not (out / ".rtc-outputs").is_symlink()
    before = {p.name for p in out.iterdir()}
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--job", "prefill", "--out-dir",
                  str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    assert {p.name for p in out.iterdir()} >= before  # the decode job's files stay


@pytest.mark.parametrize("flag, value", [("--out-dir", ""), ("-o", ""), ("--out-dir", "  ")])
def test_an_empty_output_name_is_refused(src: Path, tmp_path: Path, flag: str, value: str):
    """An unset ``$OUT`` in a script must not scatter the outputs into the current folder
    (`--out-dir ""` wrote 12 files there)."""
    res = run_rtc("compile", str(src), flag, value, cwd=tmp_path)
    assert res.returncode == 2
    assert f"{flag} is empty" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.rtc"]  # the input only


def test_dash_output_is_standard_output(src: Path, tmp_path: Path):
    """`-o -` prints the table, as `-` reads standard input (it wrote a file named `-`)."""
    res = run_rtc("compile", str(src), "-o", "-", cwd=tmp_path)
    assert res.returncode == 0
    assert json.loads(res.stdout)["server_list"]
    assert not (tmp_path / "-").exists()
    both = run_rtc("compile", str(src), "-o", "-", "--stdout", cwd=tmp_path)
    assert both.returncode == 2 and "use only one of -o - and --stdout" in both.stderr
