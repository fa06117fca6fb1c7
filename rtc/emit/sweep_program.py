"""What the GPU and the Ascend preflight scripts share for their bandwidth measurement:
rtc's torch all_reduce sweep program (``templates/allreduce_sweep.py``, written into the
results folder where nccl-tests / HCCL Test is missing) and the shell function
``skipped`` that records a measurement not taken (``skipped.txt``: ``WHAT<TAB>WHY<TAB>
FALLBACK`` per line, ``-`` for no fallback)."""

from __future__ import annotations

import functools
import shlex
from pathlib import Path

SWEEP_PROGRAM = Path(__file__).resolve().parent / "templates" / "allreduce_sweep.py"


@functools.cache
def sweep_program() -> str:
    """The torch all_reduce sweep the scripts write when the vendor benchmark is missing
    (``templates/allreduce_sweep.py``, shipped in the package)."""
    return SWEEP_PROGRAM.read_text(encoding="utf-8")


def skipped_function(name: str) -> list[str]:
    """The shell function ``skipped WHAT WHY FALLBACK`` of server ``name``'s script: one
    line on stdout and one in ``$results/skipped.txt``."""
    return ["# skipped WHAT WHY FALLBACK: record a measurement not taken (FALLBACK - : none)",
            "skipped() {",
            f"  printf '%s\\n' {shlex.quote(f'rtc preflight {name}: skipped')}\" $1: $2; "
            "instead: $3\"",
            "  printf '%s\\t%s\\t%s\\n' \"$1\" \"$2\" \"$3\" >> \"$results/skipped.txt\"",
            "}", ""]
