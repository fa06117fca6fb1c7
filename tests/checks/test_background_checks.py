"""Checks in a forked child (issue 19): `rtc compile` and `rtc groups` of a large cluster
run the checks on a second CPU while they build the rank table or the groups. Forced on
every input here (rtc.forked.WORTH_NPUS = 0), each gives exactly what the serial run gives:
the same diagnostics, outputs, messages and exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CASES, EXAMPLES
from rtc import forked
from rtc.api import compile_file

needs_fork = pytest.mark.skipif(not forked.can_fork(), reason="this machine cannot fork here")
CHECK_CASES = sorted((CASES / "checks").glob("*.rtc"))
# The examples, without the two large A3 families (12-15 s here): what is forked and how
# does not depend on the cluster's size.
SMALL_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.rtc") if not p.name.startswith("family-a3-"))


@needs_fork
@pytest.mark.parametrize("path", CHECK_CASES[::3] + SMALL_EXAMPLES,
                         ids=lambda p: p.name)
def test_same_diagnostics_as_the_serial_checks(path: Path, monkeypatch):
    serial = compile_file(str(path))
    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    monkeypatch.setattr(forked, "worth_forking", lambda: True)   # whatever the load
    background = compile_file(str(path), background_checks=True)
    lowered_clean = background.checks_pending
    assert background.diagnostics == serial.diagnostics
    assert background.ok == serial.ok and not background.checks_pending
    if serial.topology is not None and serial.ok:
        assert lowered_clean   # a clean input did run its checks in the child


def test_small_clusters_check_in_this_process():
    result = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), background_checks=True)
    assert not result.checks_pending and result.ok


# Forced on, whatever the load; each child started leaves its pid in ../forked.txt.
_FORCED = """import os, rtc.forked as f
f.WORTH_NPUS = 0
f.worth_forking = lambda: True
def _logged(real):
    def started(*a, **k):
        p = real(*a, **k)
        with open(os.path.join('..', 'forked.txt'), 'a') as log:
            log.write(f'{p.pid}\\n')
        return p
    return started
f.start, f.share = _logged(f.start), _logged(f.share)
"""


def _rtc(args: list[str], cwd: Path, background: bool):
    code = ("import sys\nimport rtc.api.compiling as c\n"
            + (_FORCED if background else "")
            + f"sys.argv = ['rtc'] + {args!r}\nfrom rtc.cli import main\nmain()\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                         text=True, timeout=120, env={"NO_COLOR": "1", "COLUMNS": "120",
                                                      "PATH": "/usr/bin:/bin"})
    return res.returncode, res.stdout, res.stderr


PD = str(EXAMPLES / "pd-a3.rtc")
D1 = str(EXAMPLES / "a2-2node-dp2-tp8.rtc")
BAD = str(CASES / "checks" / "RTC301-server-claimed-twice.rtc")
RUNS = [
    ["compile", D1, "-o", "t.json"],
    ["compile", D1, "--stdout"],
    ["compile", PD, "-o", "t.json"],                     # two jobs: usage error
    ["compile", PD, "--job", "decode", "-o", "t.json"],
    ["compile", PD, "--job", "nope", "-o", "t.json"],    # unknown job
    ["compile", BAD, "-o", "t.json"],                    # a check error: exit 1
    ["compile", BAD, "--job", "nope", "-o", "t.json"],   # the check error comes first
    ["compile", D1, "--out-dir", "out", "--no-diagrams"],
    ["groups", D1, "--format", "json"],
    ["groups", PD, "--job", "decode"],
    ["groups", PD, "--job", "nope"],
    ["groups", BAD],
]


@needs_fork
@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(Path(x).name for x in a))
def test_the_cli_gives_what_the_serial_run_gives(args: list[str], tmp_path: Path):
    (tmp_path / "s").mkdir()
    (tmp_path / "b").mkdir()
    serial = _rtc(args, tmp_path / "s", background=False)
    background = _rtc(args, tmp_path / "b", background=True)
    assert background == serial
    pids = (tmp_path / "forked.txt").read_text().split()
    assert pids and pids[0] != "None"   # the checks did run in a child
    written = sorted(p.relative_to(tmp_path / "s") for p in (tmp_path / "s").rglob("*"))
    assert written == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    for rel in written:
        if (tmp_path / "s" / rel).is_file():
            assert (tmp_path / "b" / rel).read_bytes() == (tmp_path / "s" / rel).read_bytes()


def _bundle(path: Path):
    from rtc.emit import bundle

    r = compile_file(str(path))
    jobs = list(r.topology.jobs) or [None]
    return bundle.build_bundle(r.topology, r.plan, jobs, {j.name if j else None: "hccl.json"
                                                          for j in jobs})


@needs_fork
@pytest.mark.parametrize("path", SMALL_EXAMPLES, ids=lambda p: p.name)
def test_plan_json_built_in_a_child_is_the_same(path: Path, monkeypatch):
    """--out-dir of a large cluster builds plan.json in a forked child while the preflight
    scripts are rendered: the same files, in the same order, with the same texts."""
    serial = _bundle(path)
    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    monkeypatch.setattr(forked, "worth_forking", lambda: True)
    started = []
    real_start = forked.start
    monkeypatch.setattr(forked, "start", lambda *a, **k: started.append(real_start(*a, **k))
                        or started[-1])
    background = _bundle(path)
    assert background.outputs == serial.outputs
    assert background.diagnostics == serial.diagnostics
    if not compile_file(str(path)).topology.preset.is_gpu:
        assert [p.pid for p in started] == [None] and started[0].value is not None


@needs_fork
def test_a_plan_json_schema_failure_in_the_child_is_rtc003(monkeypatch):
    from rtc.emit import bundle

    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    monkeypatch.setattr(forked, "worth_forking", lambda: True)
    monkeypatch.setattr(bundle, "plan_problems", lambda doc: ["jobs/0: broken on purpose"])
    b = _bundle(EXAMPLES / "a2-2node-dp2-tp8.rtc")
    assert "plan.json" not in [n for n, _t, _m in b.outputs]
    assert [d.code for d in b.diagnostics] == ["RTC003"]
    assert "broken on purpose" in b.diagnostics[0].message


@needs_fork
@pytest.mark.parametrize("how", ["TERM", "INT"])
def test_an_interrupted_run_leaves_no_child(tmp_path: Path, how: str):
    """SIGTERM (or SIGINT sent to rtc alone) while the checks run in the child: rtc exits
    with its signal's code and stops and reaps the child on the way out."""
    import os
    import signal
    import time

    code = (_FORCED.replace("..", str(tmp_path)) + "import rtc.checks, time\n"
            "c.check_tasks = lambda topo, plan_of: [lambda: time.sleep(60) or (0, [])]\n"
            f"sys.argv = ['rtc', 'compile', {D1!r}, '-o', 't.json']\n"
            "from rtc.cli import entry\nentry()\n")
    # A shell starts background jobs with SIGINT ignored (`pytest &`), and rtc rightly
    # keeps it so: give the rtc process the default, as a terminal would.
    proc = subprocess.Popen([sys.executable, "-c", "import sys\nimport rtc.api.compiling as c\n"
                             + code], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        log = tmp_path / "forked.txt"
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(log.read_text().split()[0])
        proc.send_signal(getattr(signal, f"SIG{how}"))
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:   # the test failed: leave nothing sleeping behind
            proc.kill()
            proc.communicate()
    assert proc.returncode == (143 if how == "TERM" else 130), err
    assert not (tmp_path / "t.json").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)   # stopped and reaped, not left running or as a zombie
