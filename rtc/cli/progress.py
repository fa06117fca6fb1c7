"""A progress display for long compiles: shown on stderr only when it is a terminal and
only once the work has taken more than ``delay`` seconds (so quick runs print nothing).

The library reports stages through a plain callback (``progress(stage: str)``); this class
is the CLI's callback. Piped or redirected stderr never gets control sequences.
"""

from __future__ import annotations

import sys
import time


class StageProgress:
    """Callable ``progress(stage)``; use as a context manager around the work.

    ``stages`` is the expected sequence of stage names (for the bar's total). The rich
    display starts lazily at the first stage reported after ``delay`` seconds (default 1 s).
    """

    def __init__(self, stages: tuple[str, ...], *, delay: float = 1.0, stream=None):
        self.stages = stages
        self.delay = delay
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started_at = time.monotonic()
        self._progress = None
        self._task = None
        self._done = 0

    def __enter__(self) -> "StageProgress":
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, stage: str) -> None:
        from rtc import interrupts

        interrupts.doing(f"compiling (the {stage} stage)")
        self._done = self.stages.index(stage) if stage in self.stages else self._done + 1
        if not self.enabled:
            return
        if self._progress is None:
            if time.monotonic() - self.started_at < self.delay:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("rtc: {task.description:<10}"), BarColumn(),
                                      TimeElapsedColumn(), console=Console(file=self.stream),
                                      transient=True, auto_refresh=False)
            self._progress.start()
            self._task = self._progress.add_task(stage, total=len(self.stages))
        # Redrawn at each stage, not by a refresh thread: a thread would keep the compile
        # from running its checks in a forked child (rtc.forked.can_fork).
        self._progress.update(self._task, description=stage, completed=self._done,
                              refresh=True)
