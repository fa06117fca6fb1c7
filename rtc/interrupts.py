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
