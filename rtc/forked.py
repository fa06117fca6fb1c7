"""Run pure functions in a forked child process while this process goes on (issue 19).

The checks of a 65,536-NPU cluster take ~0.6 s; the rank table that follows them does not
need their result, only their verdict. :func:`start` runs such a function in a child made
with ``fork`` (the model is shared copy-on-write, nothing is sent to the child), and
:meth:`Pending.result` reads the child's pickled result back through a pipe. The caller
does its own work in between, so a second CPU does the work. :func:`share` does the same
for a list of tasks (the check modules), and :meth:`Shared.results` has this process run
the tasks the child has not reached yet, from the last one back, instead of waiting.

Where forking is not safe or not useful (not Linux; other threads running, which a fork
would not copy; one CPU), :func:`start` runs the function at once in this process. When
the child fails for any reason (an exception, a crash, a result that cannot be pickled, a
signal), :meth:`Pending.result` runs the function again here (:meth:`Shared.results`: the
tasks the child did not send), so a failure is raised here with its real traceback,
exactly as without the child.

The function must not print or change anything its caller reads afterwards: what it
changes in the child is lost (caches included), only its return value comes back.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from rtc import interrupts

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
    """True when at least two CPUs are ours (the child needs one of its own to gain time).

    Not asked: whether one is idle at this moment. A child that gets no CPU costs
    :meth:`Shared.results` at most the one task it has started (this process takes the
    rest), and plan.json's child has the whole writing of ``--out-dir`` to finish in;
    reading ``/proc/loadavg`` instead turned half of the forks away, for the kernel's
    moment of writing back the previous run's files."""
    return len(os.sched_getaffinity(0)) >= 2


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
        pipe, self.pipe = self.pipe, None   # closed by _read_all, even when interrupted
        data = _read_all(pipe)
        _reap(self.pid)
        _children.pop(self.pid, None)
        self.pid = None
        ok, value = _loaded(data)
        if ok:
            self.value = value
            return value
        self.value = self.fn(*self.args)
        return self.value

    def cancel(self) -> None:
        """Stop the child (if still running) and forget its result; idempotent."""
        if self.pid is None:
            return
        if self.pipe is not None:
            os.close(self.pipe)
        _stop(self.pid)
        self.pid = self.pipe = None


def start(fn, *args, fork: bool | None = None) -> Pending:
    """``fn(*args)`` started in a forked child, else run at once: ``fork`` None forks when
    :func:`can_fork` and :func:`worth_forking`, True whenever :func:`can_fork`, False
    never. Call :meth:`Pending.result` (or :meth:`Pending.cancel`) once."""
    if not (fork is not False and can_fork() and (fork or worth_forking())):
        return Pending(fn, args, None, None, fn(*args))
    _flush_streams()
    read_end, write_end = os.pipe()
    pid, mask = _fork()
    if pid == 0:   # the child: compute, send, and leave without any clean-up of the parent's
        os.close(read_end)
        _child(fn, args, write_end)
    os.close(write_end)
    pending = _children[pid] = Pending(fn, args, pid, read_end)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # a Ctrl-C meanwhile is raised now
    return pending


class Shared:
    """The results of ``tasks`` (zero-argument callables), shared between a forked child
    and this process: the child runs them from the first on; :meth:`results` runs them here
    from the last one back until the two meet, so this process, once it has nothing else
    to do, takes its part of what is left instead of waiting.

    Claims go through two pipes: this process writes the index it is about to run to
    ``claims`` and then reads how far the child has started (``progress``); the child reads
    the claims before it starts a task and stops at the first one claimed. Either side may
    run the task both start at the same moment (its result is the same); no task is left
    out. A task the child did not report is run here, so a failure is raised here."""

    def __init__(self, tasks: list, pid: int | None = None, fds: tuple | None = None,
                 values: list | None = None) -> None:
        self.tasks = tasks
        self.pid = pid
        self.fds = fds          # (result read end, progress read end, claims write end)
        self.values = values

    def results(self) -> list:
        """Each task's return value, in task order. Raises what a task raises."""
        if self.pid is None:
            if self.values is None:
                self.values = [task() for task in self.tasks]
            return self.values
        result_fd, progress_fd, claims_fd = self.fds
        mine: dict = {}
        try:
            self._from_the_back(mine, progress_fd, claims_fd)
        finally:
            os.close(progress_fd)
            os.close(claims_fd)
            self.fds = (result_fd,)
        self.fds = None   # the result's end is closed by _read_all, even when interrupted
        theirs = _loaded(_read_all(result_fd))[1] or {}
        _reap(self.pid)
        _children.pop(self.pid, None)
        self.pid = None
        self.values = [mine[i] if i in mine else theirs[i] if i in theirs else task()
                       for i, task in enumerate(self.tasks)]
        return self.values

    def _from_the_back(self, mine: dict, progress_fd: int, claims_fd: int) -> None:
        started = -1
        for k in range(len(self.tasks) - 1, -1, -1):
            try:
                os.write(claims_fd, k.to_bytes(4, "little"))
            except OSError:   # the child has left; what it did not send is run after
                return
            started = max(started, _newest(progress_fd))
            if started >= k:
                return
            mine[k] = self.tasks[k]()

    def cancel(self) -> None:
        """Stop the child (if still running) and forget its results; idempotent."""
        if self.pid is None:
            return
        for fd in self.fds or ():
            os.close(fd)
        _stop(self.pid)
        self.pid = self.fds = None


def share(tasks: list, fork: bool | None = None) -> Shared:
    """Start ``tasks`` (zero-argument callables) in a forked child, to be shared with this
    process when it calls :meth:`Shared.results`; without a child they run at that call,
    here. ``fork`` as in :func:`start`.

    A child that gets no CPU costs this process at most the task the child has started,
    since this process takes the rest itself."""
    if not (tasks and fork is not False and can_fork() and (fork or worth_forking())):
        return Shared(tasks)
    _flush_streams()
    result_r, result_w = os.pipe()
    progress_r, progress_w = os.pipe()
    claims_r, claims_w = os.pipe()
    pid, mask = _fork()
    if pid == 0:
        for fd in (result_r, progress_r, claims_w):
            os.close(fd)
        _share_child(tasks, result_w, progress_w, claims_r)
    for fd in (result_w, progress_w, claims_r):
        os.close(fd)
    os.set_blocking(progress_r, False)
    shared = _children[pid] = Shared(tasks, pid, (result_r, progress_r, claims_w))
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # a Ctrl-C meanwhile is raised now
    return shared


def _share_child(tasks: list, result_fd: int, progress_fd: int, claims_fd: int) -> None:
    """In the child of :func:`share`: run the tasks in order up to the first one the
    parent claimed, then send ``("ok", {index: value})`` pickled (what was done before a
    task raised, if one did) and leave with ``os._exit``."""
    code = 0
    try:
        import pickle

        os.set_blocking(claims_fd, False)
        done: dict = {}
        lowest = len(tasks)
        try:
            for k, task in enumerate(tasks):
                lowest = min(lowest, _lowest(claims_fd))
                if lowest <= k:
                    break
                os.write(progress_fd, k.to_bytes(4, "little"))
                done[k] = task()
        except BaseException:
            code = 1
        try:
            data = pickle.dumps(("ok", done), pickle.HIGHEST_PROTOCOL)
        except BaseException:
            data, code = pickle.dumps(("failed", None)), 1
        _write_all(result_fd, data)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _indices(fd: int) -> list[int]:
    """The 4-byte indices waiting in the non-blocking pipe ``fd`` (none when it is empty
    or closed). Each was written whole (4 bytes is under PIPE_BUF), so a read of a
    multiple of 4 bytes never splits one."""
    try:
        data = os.read(fd, 4096)
    except BlockingIOError:
        return []
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data) - 3, 4)]


def _newest(fd: int) -> int:
    return max(_indices(fd), default=-1)


def _lowest(fd: int) -> int:
    return min(_indices(fd), default=1 << 32)


def stop_all() -> None:
    """Cancel every child not yet read or cancelled (:meth:`Pending.cancel`,
    :meth:`Shared.cancel`): for a process that is leaving early (Ctrl-C, SIGTERM, an
    error) while a child still works. Without it the child would run on, its result
    unread, and stay a zombie wherever nothing reaps orphans (PID 1 of many containers)."""
    with interrupts.held():   # another Ctrl-C must not stop the reaping half-way
        for pending in list(_children.values()):
            pending.cancel()


def _child(fn, args: tuple, pipe: int) -> None:
    """In the child: send ``("ok", fn(*args))`` pickled (``("failed", None)`` when it
    raises) and exit with ``os._exit``, so no buffer, atexit hook or finally of the parent
    runs twice. Ctrl-C and SIGTERM end the child at once (their default actions, not the
    parent's handlers: :func:`_fork`)."""
    code = 0
    try:
        import pickle

        try:
            data = pickle.dumps(("ok", fn(*args)), pickle.HIGHEST_PROTOCOL)
        except BaseException:
            data, code = pickle.dumps(("failed", None)), 1
        _write_all(pipe, data)
    except BaseException:   # the parent went away (EPIPE), or anything else: just leave
        code = 1
    finally:
        os._exit(code)


def _fork() -> tuple[int, set]:
    """``os.fork()`` with Ctrl-C and SIGTERM held back: ``(pid, the signal mask before)``.
    Without that, a Ctrl-C landing in the fork is raised inside an at-fork hook (logging's),
    where Python reports and drops it, and the run went on to exit 0; or it unwinds the
    child through the parent's clean-up. The child takes the signals' default actions
    before letting them through; the parent lets them through (``SIG_SETMASK`` with the
    returned mask) once the child is registered for :func:`stop_all`."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, interrupts.HELD)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:
        _default_signals()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return pid, mask


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):   # the child must not write them out again
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _default_signals() -> None:
    """Ctrl-C and SIGTERM end a child at once: their default actions, not the parent's
    handlers."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _loaded(data: bytes) -> tuple[bool, object]:
    """``(True, value)`` for a child's ``("ok", value)`` message, ``(False, None)`` when
    there is none (the child failed, died, or sent something truncated or foreign). Pickle
    is imported here, not at import: a small compile never forks."""
    if not data:
        return False, None
    import pickle

    try:
        status, value = pickle.loads(data)
    except Exception:
        return False, None
    return (True, value) if status == "ok" else (False, None)


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


def _stop(pid: int) -> None:
    """Kill child ``pid`` (if it still runs), reap it, and forget it."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid)
    _children.pop(pid, None)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
