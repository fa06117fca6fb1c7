"""Bounded, safe reads of every input (issue 34): a device, a FIFO, a folder or a huge file
given to any command is a clear RTC001 at once, never an unbounded read or a hang; an
unreadable file is worded the same by every command; a Ctrl-C before any writing says so;
several missing inputs are reported in the order given."""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, GOLDEN, rtc_command

from rtc import readfile

SCRIPT = "vllm serve /models/m --tensor-parallel-size 8\n"
TABLE = GOLDEN / "a2-2node-dp2-tp8" / "hccl.json"

#: Every command that takes a file, with {F} where the refused input goes.
COMMANDS = [
    ("compile", "{F}", "-o", "{OUT}/h.json"), ("check", "{F}"), ("diagram", "{F}"),
    ("fmt", "{F}"), ("groups", "{F}"), ("cost", "{F}"), ("advise", "{F}"),
    ("validate", "{F}"), ("validate", "--pods", "{F}", str(TABLE)), ("lint", "{F}"),
    ("lint", "--table", "{F}", "{S}"), ("lint", "--against", "{F}", "{S}"),
    ("import", "{F}"), ("calibrate", "--link", "roce-200ge", "--ranks", "8", "{F}"),
    ("preflight", "report", "{F}"), ("preflight", "nccl", "{F}"),
]


@pytest.fixture(scope="module")
def inputs():
    """{kind: path}: a FIFO, /dev/zero, /dev/urandom and a 2 GiB sparse file (nothing of
    it on disk), plus a script and an output folder."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.mkfifo(folder / "pipe.rtc")
        with open(folder / "sparse.json", "wb") as f:
            f.truncate(2 << 30)
        (folder / "run.sh").write_text(SCRIPT, encoding="utf-8")
        (folder / "out").mkdir()
        yield {"fifo": folder / "pipe.rtc", "zero": Path("/dev/zero"),
               "urandom": Path("/dev/urandom"), "sparse": folder / "sparse.json",
               "script": folder / "run.sh", "out": folder / "out"}


# 1. the helper itself


def test_a_regular_file_is_read_whole(tmp_path: Path):
    p = tmp_path / "a.rtc"
    p.write_bytes(b"cluster x {}\n")
    assert readfile.read_bytes(p) == b"cluster x {}\n"
    assert readfile.read_text(str(p)) == "cluster x {}\n"


@pytest.mark.parametrize("kind, words", [("zero", "it is a character device, not a regular file"),
                                         ("fifo", "it is a FIFO (named pipe), not a regular file")])
def test_what_is_not_a_regular_file_is_refused_unopened(inputs, kind, words):
    with pytest.raises(readfile.InputRefused) as info:
        readfile.read_bytes(inputs[kind])    # a FIFO would block in open(): it is never opened
    assert info.value.strerror == words and "regular file" in info.value.hint


def test_a_folder_is_refused(tmp_path: Path):
    with pytest.raises(readfile.InputRefused) as info:
        readfile.read_bytes(tmp_path)
    assert info.value.errno == errno.EISDIR and info.value.strerror == "it is a folder"


def test_a_file_over_the_limit_is_refused_from_its_size(inputs, monkeypatch):
    monkeypatch.delenv(readfile.LIMIT_VAR, raising=False)
    with pytest.raises(readfile.InputRefused) as info:
        readfile.read_bytes(inputs["sparse"])
    assert info.value.strerror == ("it is 2.0 GiB (2,147,483,648 bytes), more than the 64.0 MiB "
                                   "(67,108,864 bytes) rtc reads from one input")
    assert info.value.hint.endswith(f"{readfile.LIMIT_VAR}=1G")
    monkeypatch.setenv(readfile.LIMIT_VAR, "3G")      # raised: the size check passes
    assert readfile.max_input_bytes() == 3 << 30
    assert readfile.check(inputs["sparse"]).st_size == 2 << 30


@pytest.mark.parametrize("raw, limit", [("", 64 << 20), ("1000", 1000), ("2k", 2048),
                                        ("5M", 5 << 20), (" 3G ", 3 << 30)])
def test_the_limit_comes_from_the_environment(monkeypatch, raw, limit):
    monkeypatch.setenv(readfile.LIMIT_VAR, raw)
    assert readfile.max_input_bytes() == limit


@pytest.mark.parametrize("raw", ["abc", "-1", "0", "0M", "1.5G", "64MiB", "１６"])
def test_a_limit_that_is_not_a_size_is_refused_not_ignored(monkeypatch, raw, tmp_path):
    """Such a value was silently replaced by the default (64 MiB)."""
    monkeypatch.setenv(readfile.LIMIT_VAR, raw)
    with pytest.raises(readfile.InputRefused) as info:
        readfile.max_input_bytes()
    assert info.value.strerror == f"RTC_MAX_INPUT_BYTES is {raw!r}, not a size rtc can use"
    assert info.value.hint == (
        "set RTC_MAX_INPUT_BYTES to a whole number of bytes above 0, optionally with a K, M "
        "or G suffix (powers of 1024), e.g. RTC_MAX_INPUT_BYTES=64M or RTC_MAX_INPUT_BYTES=3G; "
        "or unset it for the default 64.0 MiB")
    (tmp_path / "x.rtc").write_text("cluster c {}\n")
    with pytest.raises(readfile.InputRefused):
        readfile.read_bytes(tmp_path / "x.rtc")


def test_a_bad_limit_is_rtc001_and_exit_2_on_the_command_line():
    env = dict(os.environ, **{readfile.LIMIT_VAR: "abc"})
    res = subprocess.run(rtc_command() + ["check", str(EXAMPLES / "a2-2node-dp2-tp8.rtc")],
                         text=True, capture_output=True, timeout=60, env=env)
    assert res.returncode == 2
    assert ("error[RTC001]: cannot read " + str(EXAMPLES / "a2-2node-dp2-tp8.rtc")
            + ": RTC_MAX_INPUT_BYTES is 'abc', not a size rtc can use") in res.stderr
    assert "e.g. RTC_MAX_INPUT_BYTES=64M or RTC_MAX_INPUT_BYTES=3G" in res.stderr


def test_standard_input_is_capped_too():
    assert readfile.read_stream(io.BytesIO(b"x" * 10), limit=10) == b"x" * 10
    with pytest.raises(readfile.InputRefused) as info:
        readfile.read_stream(io.BytesIO(b"x" * 11), limit=10)
    assert info.value.strerror == "it holds more than the 10 bytes rtc reads from one input"
    with pytest.raises(readfile.InputRefused):
        readfile.read_stream(None)


def test_a_file_growing_past_the_limit_while_read_is_refused(tmp_path: Path, monkeypatch):
    p = tmp_path / "grows.json"
    p.write_bytes(b"{}")
    real = os.stat

    def smaller(path, *a, **kw):  # the size when it was looked at, before it grew
        st = real(path, *a, **kw)
        return os.stat_result((*st[:6], 1, *st[7:])) if str(path) == str(p) else st

    p.write_bytes(b"y" * 100)
    monkeypatch.setattr(readfile.os, "stat", smaller)
    with pytest.raises(readfile.InputRefused) as info:
        readfile.read_bytes(p, limit=10)
    assert info.value.strerror == "it holds more than the 10 bytes rtc reads from one input"


def test_every_command_words_an_unreadable_file_the_same(tmp_path: Path):
    """One rule, one wording: RTC001 ``cannot read FILE: REASON`` and a hint for the
    cause (the CLI no longer lets typer say "RTC002 ... is not readable")."""
    denied = OSError(errno.EACCES, "Permission denied")
    assert readfile.unreadable("in.rtc", denied) == (
        "cannot read in.rtc: Permission denied",
        "check the file's permissions (ls -l), or run rtc as a user who may read it")
    assert readfile.unreadable("x", FileNotFoundError(errno.ENOENT, "No such file or "
                                                       "directory"))[1] == "check the path"


# 2. every command, in this process (fast) and as the real console script (time, memory)


def _argv(cmd: tuple, path: Path, inputs) -> list[str]:
    return [a.format(F=path, S=inputs["script"], OUT=inputs["out"]) for a in cmd]


def _alarm(signum, frame):  # noqa: ARG001
    raise TimeoutError("rtc blocked on its input")


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom", "sparse"])
def test_every_command_refuses_the_input_at_once(inputs, kind, monkeypatch, capsys):
    """In this process (rtc.cli.main): exit 2, RTC001 naming the input and what it is,
    within a second or two each; a hang on a FIFO is cut by an alarm and fails."""
    from rtc.cli import main

    monkeypatch.delenv(readfile.LIMIT_VAR, raising=False)
    what = {"fifo": "it is a FIFO (named pipe), not a regular file",
            "zero": "it is a character device, not a regular file",
            "urandom": "it is a character device, not a regular file",
            "sparse": "it is 2.0 GiB (2,147,483,648 bytes), more than the 64.0 MiB"}[kind]
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for cmd in COMMANDS:
            monkeypatch.setattr(sys, "argv", ["rtc", *_argv(cmd, inputs[kind], inputs)])
            start = time.monotonic()
            signal.alarm(10)
            with pytest.raises(SystemExit) as info:
                main()
            signal.alarm(0)
            took = time.monotonic() - start
            out = capsys.readouterr()
            text = out.out + out.err
            assert info.value.code == 2, (cmd, text)
            assert f"RTC001]: cannot read {inputs[kind]}: {what}" in text or \
                f"RTC001]: --against {inputs[kind]}: cannot read {inputs[kind]}: {what}" \
                in text, (cmd, text)
            assert took < 3, (cmd, took)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


#: Runs argv[2:] and writes its peak RSS (ru_maxrss) to the file argv[1]. The console
#: script is started from this small process, not from pytest: a child started by vfork
#: (CPython's subprocess on Linux) inherits its parent's RSS high-water mark, so a child
#: of a pytest grown to 240 MB reported 240 MB although it used 25 MB.
_RSS_WRAPPER = """import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_pid, status, usage = os.wait4(proc.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _measured(args: list[str], timeout: float = 30):
    """(exit code, stdout + stderr, seconds, peak RSS in bytes) of the console script."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _RSS_WRAPPER, rss.name]
                                + rtc_command() + args, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        code = proc.wait()
        took = time.monotonic() - start
        timer.cancel()
        out.seek(0)
        kb = 1 if sys.platform == "darwin" else 1024   # ru_maxrss: KiB on Linux
        return code, out.read().decode(), took, int(rss.read() or 0) * kb


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom", "sparse"])
@pytest.mark.parametrize("cmd", [("check", "{F}"), ("validate", "{F}"), ("lint", "{F}"),
                                 ("import", "{F}")])
def test_the_console_script_refuses_it_quickly_and_small(inputs, kind, cmd):
    """The commands the issue saw read ~24 GB before the kernel killed them: now exit 2
    with RTC001, well inside 200 MB (and the run cut at 30 s if it blocks)."""
    code, text, took, rss = _measured(_argv(cmd, inputs[kind], inputs))
    assert code == 2 and "error[RTC001]: cannot read" in text, text
    assert rss < 200 << 20, rss
    assert took < 10, took


def test_a_script_that_sources_a_device_or_fifo_is_not_followed(inputs, tmp_path: Path):
    script = tmp_path / "run.sh"
    script.write_text(f". /dev/zero\nsource /dev/urandom\nsource {inputs['fifo']}\n" + SCRIPT,
                      encoding="utf-8")
    code, text, took, rss = _measured(["lint", str(script)])
    assert code == 0 and took < 10 and rss < 200 << 20, text
    assert "`source /dev/zero`: /dev/zero cannot be read (it is a character device, not a " \
           "regular file); the variables it sets are not known" in text
    assert f"{inputs['fifo']} cannot be read (it is a FIFO (named pipe), not a regular file)" \
        in text


def test_standard_input_stays_allowed_and_capped():
    example = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(encoding="utf-8")
    ok = subprocess.run(rtc_command() + ["check", "-"], input=example, text=True,
                        capture_output=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    env = dict(os.environ, **{readfile.LIMIT_VAR: "100"})
    big = subprocess.run(rtc_command() + ["check", "-"], input=example, text=True,
                         capture_output=True, timeout=60, env=env)
    assert big.returncode == 2
    assert "error[RTC001]: cannot read <stdin>: it holds more than the 100 bytes rtc reads " \
           "from one input\n" in big.stderr
    assert f"{readfile.LIMIT_VAR}=1G" in big.stderr


# 3. unreadable files, one wording; --format sarif names the file on stderr


def test_no_command_lets_typer_check_readability():
    """typer's ``readable=True`` default said "RTC002: Invalid value for 'FILE': path
    'in.rtc' is not readable" for compile/check/diagram/fmt; every Path parameter now
    leaves reading to rtc (RTC001, the same words as validate, lint and import)."""
    import typer.models

    from rtc.cli import app as _app  # noqa: F401  (registers the commands)
    from rtc.cli.app import app

    paths = []
    for command in app.registered_commands + [c for g in app.registered_groups
                                              for c in g.typer_instance.registered_commands]:
        import inspect

        for p in inspect.signature(command.callback).parameters.values():
            info = p.default
            if isinstance(info, typer.models.ParameterInfo) and "Path" in str(p.annotation):
                paths.append((command.callback.__name__, p.name, info.readable))
    assert paths and all(readable is False for *_names, readable in paths), paths


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
@pytest.mark.parametrize("cmd", [("compile", "{F}", "--stdout"), ("check", "{F}"),
                                 ("diagram", "{F}"), ("fmt", "{F}"), ("validate", "{F}"),
                                 ("lint", "{F}"), ("import", "{F}")])
def test_a_file_without_read_permission_is_the_same_rtc001(tmp_path: Path, cmd):
    f = tmp_path / "in.rtc"
    f.write_text("cluster x {}\n")
    f.chmod(0)
    res = subprocess.run(rtc_command() + [a.format(F=f) for a in cmd], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert f"error[RTC001]: cannot read {f}: Permission denied" in res.stdout + res.stderr
    assert "check the file's permissions" in res.stdout + res.stderr


def test_permission_denied_is_the_same_rtc001_in_process(tmp_path: Path, monkeypatch,
                                                         capsys):
    """As root (where chmod 0 does not stop a read) the refusal is simulated in
    rtc.readfile: compile, check, diagram, fmt, validate, lint and import all print the
    same RTC001 line and hint."""
    from rtc.cli import main

    f = tmp_path / "in.rtc"
    f.write_text("cluster x {}\n")
    real = os.open

    def denied(path, *a, **kw):
        if str(path) == str(f):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, *a, **kw)

    monkeypatch.setattr(readfile.os, "open", denied)
    for cmd in (["compile", str(f), "--stdout"], ["check", str(f)], ["diagram", str(f)],
                ["fmt", str(f)], ["validate", str(f)], ["lint", str(f)], ["import", str(f)]):
        monkeypatch.setattr(sys, "argv", ["rtc", *cmd])
        with pytest.raises(SystemExit) as info:
            main()
        out = capsys.readouterr()
        text = out.out + out.err
        assert info.value.code == 2, (cmd, text)
        assert f"error[RTC001]: cannot read {f}: Permission denied\n   = hint: check the " \
               "file's permissions (ls -l), or run rtc as a user who may read it" in text, \
            (cmd, text)


def test_sarif_report_names_the_unreadable_file_on_stderr(tmp_path: Path):
    res = subprocess.run(rtc_command() + ["validate", "--format", "sarif", "missing.json"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 2
    assert '"version": "2.1.0"' in res.stdout
    assert res.stderr.splitlines() == [
        "rtc: error[RTC001]: cannot read missing.json: No such file or directory",
        "   = hint: check the path",
        "rtc: 1 error (0 files checked, 1 could not be read)"]


# 4. the pods file is a rank table


def test_pods_given_a_rank_table_is_not_a_pods_list(tmp_path: Path):
    res = subprocess.run(rtc_command() + ["validate", "--pods", str(TABLE), str(TABLE)],
                         capture_output=True, text=True, timeout=60)
    assert "Traceback" not in res.stderr and res.returncode == 1, res.stderr
    assert f"error[RTC780]: {TABLE} is not a kubectl pods list (a Pod or a List of Pods); it " \
           "looks like a rank table: give that as the FILES argument" in res.stdout


@pytest.mark.parametrize("doc", ['{"version": "1.0", "status": "completed", "server_list": []}',
                                 '[1, 2]', '"pods"', '{"kind": "Pod", "status": "Running", '
                                 '"metadata": "x", "spec": {"containers": ["c", {"env": 3}]}}'])
def test_pods_of_odd_shapes_never_raise(doc):
    from rtc.tables.pods import load_pods

    pods, _smap, diags = load_pods(doc.encode(), "pods.json")
    assert pods or [d.code for d in diags] == ["RTC780"]


# 5. Ctrl-C before any writing; 6. missing inputs in argument order


def test_ctrl_c_while_compiling_says_what_stopped_and_that_nothing_was_written(tmp_path):
    code = ("import sys, time\n"
            "import rtc.api.compiling as c\n"
            "def slow(*a, **kw):\n"
            "    print('lowering', flush=True)\n"
            "    time.sleep(60)\n"
            "c.lower = slow\n"
            f"sys.argv = ['rtc', 'compile', {str(EXAMPLES / 'a2-2node-dp2-tp8.rtc')!r}, "
            "'-o', 'h.json']\n"
            "from rtc.cli import entry\nentry()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "lowering"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == ("rtc: interrupted (Ctrl-C) while compiling (the "
                                            "lower stage); nothing was written")
    assert not (tmp_path / "h.json").exists()


def test_missing_inputs_are_reported_in_argument_order(tmp_path: Path):
    res = subprocess.run(rtc_command() + ["check", "prefill.rtc", "decode.rtc"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 2
    lines = [x for x in res.stderr.splitlines() if "RTC001" in x]
    assert lines == ["rtc: error[RTC001]: cannot read prefill.rtc: No such file or directory",
                     "rtc: error[RTC001]: cannot read decode.rtc: No such file or directory"]


def test_an_out_dir_whose_file_list_is_a_fifo_does_not_block(tmp_path: Path):
    """``rtc compile --out-dir`` reads the folder's list of the files it wrote before; a
    FIFO in its place is read as no list (it is never opened)."""
    from rtc.outputs.files import MANIFEST, read_manifest

    os.mkfifo(tmp_path / MANIFEST)
    assert read_manifest(tmp_path) == set()
