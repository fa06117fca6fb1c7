"""rtc.forked: a function run in a forked child gives what it gives here, and every
way the child can fail falls back to running the function in this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from rtc import forked

needs_fork = pytest.mark.skipif(not forked.can_fork(), reason="this machine cannot fork here")


def _pid_and(value):
    return os.getpid(), value


@needs_fork
def test_the_value_comes_from_a_child():
    pending = forked.start(_pid_and, [1, 2, 3], fork=True)
    assert pending.pid is not None
    pid, value = pending.result()
    assert pid != os.getpid() and value == [1, 2, 3]
    assert pending.pid is None and pending.result() == (pid, value)   # reaped, kept


@needs_fork
def test_a_result_larger_than_the_pipe_buffer():
    big = list(range(300_000))   # ~1.5 MB pickled, far over a pipe's 64 KiB
    assert forked.start(_pid_and, big, fork=True).result()[1] == big


def test_without_fork_it_runs_at_once_here():
    pending = forked.start(_pid_and, "x", fork=False)
    assert pending.pid is None and pending.result() == (os.getpid(), "x")


def _fails_in_child(parent: int):
    if os.getpid() != parent:
        raise ValueError("only in the child")
    return "here"


def _killed_in_child(parent: int):
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return "here"


def _unpicklable_in_child(parent: int):
    if os.getpid() != parent:
        return lambda: None   # pickle refuses a lambda
    return "here"


@needs_fork
@pytest.mark.parametrize("fn", [_fails_in_child, _killed_in_child, _unpicklable_in_child])
def test_a_failed_child_falls_back_to_this_process(fn):
    assert forked.start(fn, os.getpid(), fork=True).result() == "here"


def _always_fails():
    raise KeyError("the real error")


@needs_fork
def test_an_error_is_raised_here_with_its_own_type():
    pending = forked.start(_always_fails, fork=True)
    with pytest.raises(KeyError, match="the real error"):
        pending.result()


def _sleeps():
    import time

    time.sleep(60)


@needs_fork
def test_cancel_stops_the_child_and_reaps_it():
    pending = forked.start(_sleeps, fork=True)
    pid = pending.pid
    pending.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)   # already reaped: no zombie left
    pending.cancel()                  # idempotent


def test_by_default_no_fork_with_one_cpu(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not forked.worth_forking()
    pending = forked.start(_pid_and, 1)
    assert pending.pid is None and pending.result() == (os.getpid(), 1)
    shared = forked.share([lambda: 2])
    assert shared.pid is None and shared.results() == [2]


@needs_fork
def test_by_default_a_second_cpu_is_enough_busy_or_not(monkeypatch):
    """The load is not asked: a starved child costs share at most its started task, and
    plan.json's child has the whole --out-dir writing to finish in."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert forked.worth_forking()
    pending = forked.start(_pid_and, 1)
    assert pending.pid is not None and pending.result()[1] == 1
    shared = forked.share([lambda: 2])
    assert shared.pid is not None and shared.results() == [2]


def test_no_fork_while_another_thread_runs():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not forked.can_fork()
        assert forked.start(_pid_and, 1, fork=True).result() == (os.getpid(), 1)
    finally:
        stop.set()
        t.join()


@needs_fork
def test_buffered_output_is_not_written_twice():
    """Text the parent buffered before the fork is printed once: the child leaves with
    os._exit and the buffers are flushed before forking."""
    code = ("import sys\nfrom rtc import forked\nsys.stdout.write('before ')\n"
            "print(forked.start(sum, [1, 2], fork=True).result())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "before 3\n"


# --- forked.share: tasks shared between a child (from the front) and here (from the back)

def _slow_task(k: int, seconds: float = 0.1):
    def task():
        import time

        time.sleep(seconds)
        return k, os.getpid()
    return task


@needs_fork
def test_shared_tasks_are_split_between_the_child_and_this_process():
    """Eight tasks of 0.1 s, asked for at once: the child takes the first ones, this
    process the last ones, and every result comes back in task order."""
    shared = forked.share([_slow_task(k) for k in range(8)], fork=True)
    child = shared.pid
    assert child is not None
    got = shared.results()
    assert [k for k, _pid in got] == list(range(8))
    pids = [pid for _k, pid in got]
    assert pids[0] == child and pids[-1] == os.getpid()
    assert pids == sorted(pids, key=lambda p: p != child)   # one run of each: no interleaving
    assert shared.pid is None and shared.results() == got   # reaped, kept


@needs_fork
def test_a_child_that_is_done_leaves_nothing_for_this_process():
    import time

    shared = forked.share([_slow_task(k, 0) for k in range(5)], fork=True)
    child = shared.pid
    time.sleep(0.5)   # the child runs all five meanwhile
    assert [pid for _k, pid in shared.results()] == [child] * 5


def test_without_fork_shared_tasks_run_here_when_asked():
    ran = []
    shared = forked.share([lambda k=k: ran.append(k) or k for k in range(3)], fork=False)
    assert shared.pid is None and ran == []
    assert shared.results() == [0, 1, 2] and ran == [0, 1, 2]
    assert forked.share([], fork=True).results() == []


def _task_failing_in_child(parent: int, k: int, how: str):
    def task():
        if os.getpid() != parent and k == 1:
            if how == "raise":
                raise ValueError("only in the child")
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            return lambda: None   # "unpicklable": pickle refuses a lambda
        return k
    return task


@needs_fork
@pytest.mark.parametrize("how", ["raise", "kill", "unpicklable"])
def test_what_a_failed_child_did_not_send_is_run_here(how):
    parent = os.getpid()
    shared = forked.share([_task_failing_in_child(parent, k, how) for k in range(4)], fork=True)
    import time

    time.sleep(0.3)   # let the child reach task 1 before this process takes any
    assert shared.results() == [0, 1, 2, 3]


@needs_fork
def test_a_task_error_is_raised_here_with_its_own_type():
    shared = forked.share([lambda: 1, _always_fails], fork=True)
    with pytest.raises(KeyError, match="the real error"):
        shared.results()


@needs_fork
def test_stop_all_cancels_a_shared_child():
    shared = forked.share([_sleeps], fork=True)
    pid = shared.pid
    forked.stop_all()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert shared.pid is None
    shared.cancel()   # idempotent


@needs_fork
@pytest.mark.parametrize("call", ["forked.start(sum, [1, 2], fork=True).result()",
                                  "forked.share([lambda: 3], fork=True).results()"])
def test_a_ctrl_c_during_the_fork_is_raised_after_it(call: str):
    """A Ctrl-C that lands while the process forks (sent here from an at-fork hook) is
    raised as KeyboardInterrupt once the child is registered, never swallowed inside the
    hook (Python drops exceptions raised there: the run used to go on and exit 0), and
    stop_all then stops the child."""
    code = ("import os, signal\nfrom rtc import forked\n"
            "os.register_at_fork(before=lambda: os.kill(os.getpid(), signal.SIGINT))\n"
            f"try:\n    print('went on', {call})\n"
            "except KeyboardInterrupt:\n    forked.stop_all()\n"
            "    print('interrupted', len(forked._children))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                      signal.SIG_DFL))
    assert res.stdout == "interrupted 0\n", res.stderr
    assert "Exception ignored" not in res.stderr
