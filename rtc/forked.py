"""Run a pure function in a forked child process while this process goes on (issue 19).

The checks of a 65,536-NPU cluster take ~0.5 s; the rank table that follows them does not
need their result, only their verdict. :func:`start` runs such a function in a child made
with ``fork`` (the model is shared copy-on-write, nothing is sent to the child), and
:meth:`Pending.result` reads the child's pickled result back through a pipe. The caller
does its own work in between, so a second CPU does the checks.

Where forking is not safe or not useful (not Linux; other threads running, which a fork
would not copy; one CPU, or no idle one), :func:`start` runs the function at once in this
process. When the child fails for any reason (an exception, a crash, a result that cannot
be pickled, a signal), :meth:`Pending.result` runs the function again here, so a failure
is raised here with its real traceback, exactly as without the child.

The function must not print or change anything its caller reads afterwards: what it
changes in the child is lost (caches included), only its return value comes back.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

_CHUNK = 1 << 20   # bytes per read of the child's pipe

#: Clusters from this many NPUs on fork their checks and their plan.json: below it each
#: takes under ~0.07 s, less than a fork and the pages it copies are worth.
WORTH_NPUS = 8192

_children: dict = {}   # pid -> Pending, for children not yet reaped (see stop_all)


def can_fork() -> bool:
    """True where a fork is safe for :func:`start`: Linux, and this thread the only one
    (a fork copies only the calling thread; a lock another one holds stays held)."""
    return sys.platform == "linux" and threading.active_count() == 1


def worth_forking() -> bool:
    """True when at least two CPUs are ours and one of them is idle now: the tasks running
    at this moment (``/proc/loadavg``'s fourth field, this process included; the fewest of
    three readings) leave one free. On a busy machine the child would only take turns with
    this process, and the fork and the pages it copies cost more than they save."""
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2:
        return False
    try:   # the fewest of three looks: a kernel thread waking up for a moment is no load
        running = min(_running_tasks() for _ in range(3))
    except (OSError, ValueError, IndexError):
        return False
    return running < cpus


def _running_tasks() -> int:
    with open("/proc/loadavg", "rb") as f:
        return int(f.read().split()[3].split(b"/")[0])


class Pending:
    """The result of ``fn(*args)``, computed in a child process (``pid``) or already here
    (``pid`` None)."""

    def __init__(self, fn, args: tuple, pid: int | None, pipe: int | None, value=None) -> None:
        self.fn = fn
        self.args = args
        self.pid = pid
        self.pipe = pipe
        self.value = value

    def result(self):
        """``fn(*args)``: the child's pickled return value, or (child failed) the function
        run here. Raises what the function raises."""
        if self.pid is None:
            return self.value
        import pickle   # here, not at import: a small compile never forks

        pipe, self.pipe = self.pipe, None   # closed by _read_all, even when interrupted
        data = _read_all(pipe)
        _reap(self.pid)
        _children.pop(self.pid, None)
        self.pid = None
        if data:
            try:
                status, value = pickle.loads(data)
            except Exception:   # a truncated or foreign result: do it again here
                status, value = "failed", None
            if status == "ok":
                self.value = value
                return value
        self.value = self.fn(*self.args)
        return self.value

    def cancel(self) -> None:
        """Stop the child (if still running) and forget its result; idempotent."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.pipe is not None:
            os.close(self.pipe)
        _reap(self.pid)
        _children.pop(self.pid, None)
        self.pid = self.pipe = None


def start(fn, *args, fork: bool | None = None) -> Pending:
    """``fn(*args)`` started in a forked child, else run at once: ``fork`` None forks when
    :func:`can_fork` and :func:`worth_forking`, True whenever :func:`can_fork`, False
    never. Call :meth:`Pending.result` (or :meth:`Pending.cancel`) once."""
    if not (fork is not False and can_fork() and (fork or worth_forking())):
        return Pending(fn, args, None, None, fn(*args))
    for stream in (sys.stdout, sys.stderr):   # the child must not write them out again
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: compute, send, and leave without any clean-up of the parent's
        os.close(read_end)
        _child(fn, args, write_end)
    os.close(write_end)
    pending = _children[pid] = Pending(fn, args, pid, read_end)
    return pending


def stop_all() -> None:
    """:meth:`Pending.cancel` every child not yet read or cancelled: for a process that
    is leaving early (Ctrl-C, SIGTERM, an error) while a child still works. Without it the
    child would run on, its result unread, and stay a zombie wherever nothing reaps
    orphans (PID 1 of many containers)."""
    for pending in list(_children.values()):
        pending.cancel()


def _child(fn, args: tuple, pipe: int) -> None:
    """In the child: send ``("ok", fn(*args))`` pickled (``("failed", None)`` when it
    raises) and exit with ``os._exit``, so no buffer, atexit hook or finally of the parent
    runs twice. Ctrl-C and SIGTERM end the child at once (their default actions, not the
    parent's handlers)."""
    code = 0
    try:
        import pickle

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            data = pickle.dumps(("ok", fn(*args)), pickle.HIGHEST_PROTOCOL)
        except BaseException:
            data, code = pickle.dumps(("failed", None)), 1
        view = memoryview(data)
        while view:
            view = view[os.write(pipe, view):]
    except BaseException:   # the parent went away (EPIPE), or anything else: just leave
        code = 1
    finally:
        os._exit(code)


def _read_all(pipe: int) -> bytes:
    chunks = []
    try:
        while True:
            chunk = os.read(pipe, _CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(pipe)
    return b"".join(chunks)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
