"""rtc.cli.entry: the console script ends with os._exit after flushing its streams."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT
from rtc.cli import _flushed


class _Stream(io.StringIO):
    def __init__(self, error=None):
        super().__init__()
        self.error, self.flushed = error, 0

    def flush(self):
        self.flushed += 1
        if self.error is not None:
            raise self.error


def test_flushed_flushes_both_streams_and_keeps_the_code(monkeypatch):
    out, err = _Stream(), _Stream()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert _flushed(3) == 3
    assert (out.flushed, err.flushed) == (1, 1)


def test_flushed_stdout_that_cannot_be_written_is_exit_120(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Stream(OSError(28, "No space left on device")))
    monkeypatch.setattr(sys, "stderr", _Stream())
    assert _flushed(0) == 120
    assert _flushed(1) == 1          # a failure already reported keeps its own code


def test_flushed_reader_gone_is_quiet(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Stream(BrokenPipeError()))
    monkeypatch.setattr(sys, "stderr", _Stream(BrokenPipeError()))
    assert _flushed(0) == 0


def test_python_m_rtc_output_is_complete_through_a_pipe():
    """The whole table reaches a pipe (fully buffered) although the interpreter's teardown
    is skipped; the exit code is the command's."""
    res = subprocess.run([sys.executable, "-m", "rtc", "compile",
                          str(ROOT / "examples" / "a2-2node-dp2-tp8.rtc"), "--stdout"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert len(json.loads(res.stdout)["server_list"]) == 2
    bad = subprocess.run([sys.executable, "-m", "rtc", "compile", "no-such.rtc", "--stdout"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "RTC001" in bad.stderr


@pytest.mark.parametrize("redirect", ["2>&-", "2>/dev/full"])
def test_a_closed_or_full_stderr_changes_neither_outputs_nor_exit_code(tmp_path, redirect):
    """Diagnostics that cannot be shown are dropped; the command still writes its files
    and exits with its own code (a fresh user got exit 1 and nothing written)."""
    if redirect.endswith("full") and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    rtc = f"{shlex.quote(sys.executable)} -m rtc"
    pd = shlex.quote(str(ROOT / "examples" / "pd-a3.rtc"))
    script = (f"{rtc} compile {pd} --out-dir out {redirect}; echo $?; "
              f"{rtc} bogus {redirect}; echo $?; "
              f"{rtc} groups {pd} --format json {redirect} > groups.json; echo $?")
    res = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert res.stdout.split() == ["0", "2", "0"]
    assert (tmp_path / "out" / "plan.json").is_file()
    assert json.loads((tmp_path / "groups.json").read_text())


def test_a_ctrl_c_while_rtc_is_imported_is_exit_130_without_a_traceback():
    """The console script's own import is tiny (rtc.__main__); a Ctrl-C while it imports
    the CLI (the first ~0.1 s) ends the run like a later one: 130, nothing printed.
    Simulated by an import hook that raises KeyboardInterrupt on ``rtc.cli``."""
    code = ("import sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'rtc.cli':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Interrupt())\n"
            "from rtc.__main__ import run\nrun()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (130, "", "")


def test_the_console_script_is_rtc_main_run():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"rtc": "rtc.__main__:run"}
