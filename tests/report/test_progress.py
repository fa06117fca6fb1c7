"""The progress display: nothing when stderr is not a terminal or the work is quick; a bar
on a terminal once the delay has passed."""

from __future__ import annotations

import io

from rtc.api import STAGES, compile_file
from rtc.cli.progress import StageProgress
from conftest import EXAMPLES, run_rtc


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_output_when_piped():
    stream = io.StringIO()
    with StageProgress(STAGES, delay=0.0, stream=stream) as p:
        compile_file(str(EXAMPLES / "doc-2x2.rtc"), progress=p)
    assert stream.getvalue() == ""


def test_no_output_before_the_delay():
    stream = FakeTTY()
    with StageProgress(STAGES, delay=3600.0, stream=stream) as p:
        compile_file(str(EXAMPLES / "doc-2x2.rtc"), progress=p)
    assert stream.getvalue() == ""


def test_bar_on_a_terminal_after_the_delay():
    stream = FakeTTY()
    seen = []

    def spy(stage):
        seen.append(stage)
        p(stage)

    with StageProgress(STAGES, delay=0.0, stream=stream) as p:
        compile_file(str(EXAMPLES / "doc-2x2.rtc"), progress=spy)
    assert seen == ["parse", "lower", "check"]
    assert "rtc:" in stream.getvalue()


def test_cli_piped_stderr_has_no_control_sequences():
    res = run_rtc("check", str(EXAMPLES / "family-a3-1024.rtc"))
    assert "\x1b[" not in res.stderr
