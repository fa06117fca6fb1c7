"""Shared test helpers: case discovery and running the installed `rtc` console script."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "cases"
GOLDEN = Path(__file__).resolve().parent / "golden"
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"

_EXPECT = re.compile(r"#\s*expect:\s*(.+)")


def expectations(path: Path) -> list[tuple[str, int, int]] | None:
    """Read `# expect: RTC208 14:13` header lines: [(code, line, col)]; [] for `none`."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line.strip())
        if not m:
            continue
        spec = m.group(1).strip()
        if spec == "none":
            return []
        code, pos = spec.split()
        ln, col = pos.split(":")
        out.append((code, int(ln), int(col)))
    return out or None


def rtc_command() -> list[str]:
    """The installed console script (falls back to `python -m rtc`)."""
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def run_rtc(*args: str, cwd: Path | None = None, input: str | None = None):
    """Run the real `rtc` CLI in a subprocess; returns CompletedProcess (text)."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    return subprocess.run(rtc_command() + list(args), cwd=cwd, capture_output=True, text=True,
                          env=env, input=input, timeout=120)


@pytest.fixture
def rtc():
    return run_rtc


@pytest.fixture(autouse=True)
def _restore_process_state():
    """Tests that call ``rtc.cli.main()`` in this process leave what it changes for a
    short-lived command behind: the cyclic collector off and rtc's SIGTERM handler (which
    made the pytest run itself ignore ``timeout``'s SIGTERM). Put both back after every
    test."""
    import gc
    import signal

    handler = signal.getsignal(signal.SIGTERM)
    enabled = gc.isenabled()
    yield
    if signal.getsignal(signal.SIGTERM) is not handler:
        signal.signal(signal.SIGTERM, handler)
    if enabled and not gc.isenabled():
        gc.enable()

