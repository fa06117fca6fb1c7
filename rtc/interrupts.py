"""Ctrl-C and SIGTERM held back while rtc cleans up.

A second Ctrl-C (or SIGTERM) that lands in the middle of a rollback would stop it there:
a fresh user left 1,500-2,900 temporary files in an ``--out-dir`` with two signals 10-50 ms
apart, and five quick ones crashed the child's reaping with a traceback. Clean-up runs
inside :func:`held`; the signal is raised once it is done.
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: What rtc holds back: Ctrl-C and SIGTERM (whose handler, ``rtc.cli._on_sigterm``,
#: unwinds like Ctrl-C does).
HELD = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def held():
    """Run the block with SIGINT and SIGTERM blocked for this thread, then let them
    through: one that arrived meanwhile is raised right after the block (KeyboardInterrupt,
    or rtc's SIGTERM exit). Outside the main thread (where Python runs no signal handler)
    the block just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


#: What the run is doing, for the message of a Ctrl-C (:func:`doing`, :func:`writing`).
_ACTIVITY = {"doing": None, "writing": None}


def begin(what: str) -> None:
    """A new run starts: it is doing ``what`` (``running rtc check``) and has written
    nothing yet."""
    _ACTIVITY.update(doing=what, writing=None)


def doing(what: str) -> None:
    """The run is now doing ``what`` (``compiling: the check stage``)."""
    _ACTIVITY["doing"] = what


def writing(what: str) -> None:
    """The run has started writing ``what`` (a file, a folder, standard output): from
    here a Ctrl-C is reported by the writer, or as output that may be incomplete."""
    _ACTIVITY["writing"] = what


def interrupted_message() -> str | None:
    """What to say on a Ctrl-C, None when the writer says it itself (a file or an
    --out-dir: old or new, nothing half-written). Before any writing: what was
    interrupted and that nothing was written."""
    if _ACTIVITY["writing"] == "standard output":
        return ("rtc: interrupted (Ctrl-C) while printing to standard output: what was "
                "printed may be incomplete")
    if _ACTIVITY["writing"] is not None:
        return None
    return (f"rtc: interrupted (Ctrl-C) while {_ACTIVITY['doing'] or 'starting'}; nothing "
            "was written")
