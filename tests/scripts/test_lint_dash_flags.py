"""A flag typed with a dash look-alike (fresh user F15, tests/lint_cases/dash: a two-node
vllm-ascend DP launch whose worker has `—headless`, an em dash pasted from a document)
is RTC720 at the word, not only the knock-on RTC531 "without --headless"."""

from __future__ import annotations

import pytest

from rtc.api.linting import lint_scripts
from conftest import TESTS

HERE = TESTS / "lint_cases" / "dash"
HEAD = (HERE / "head.sh").read_text(encoding="utf-8")
WORKER = (HERE / "worker.sh").read_text(encoding="utf-8")


def _lint(worker: str):
    return lint_scripts([("head.sh", HEAD), ("worker.sh", worker)])


def test_em_dash_flag_is_found_at_its_word():
    rep = _lint(WORKER)
    (d,) = [d for d in rep.diagnostics if d.code == "RTC720"]
    assert (d.span.file, d.span.line, d.span.column, d.span.end_column) == \
        ("worker.sh", 11, 30, 39)
    assert d.message.startswith("`—headless` starts with an em dash (U+2014), not an ASCII "
                                "'-': the shell passes it to vllm as a positional argument")
    assert "unrecognized arguments" in d.message
    assert d.hint == "type it with ASCII hyphens: `--headless`"


@pytest.mark.parametrize("word, name, meant", [
    ("\u2013headless", "an en dash (U+2013)", "--headless"),
    ("\u2212p", "a minus sign (U+2212)", "-p"),
    ("\u2014port=8004", "an em dash (U+2014)", "--port=8004"),
])
def test_other_dash_lookalikes(word, name, meant):
    rep = _lint(WORKER.replace("—headless", word))
    (d,) = [d for d in rep.diagnostics if d.code == "RTC720"]
    assert name in d.message and d.hint.endswith(f"`{meant}`")


def test_ascii_hyphens_are_clean():
    rep = _lint(WORKER.replace("—headless", "--headless"))
    assert [d.code for d in rep.diagnostics if d.severity.label == "error"] == []


def test_ascii_hyphen_then_em_dash_is_found():
    """`-—headless` (fresh user: "no problems found"; argparse rejects it)."""
    rep = _lint(WORKER.replace("—headless", "-—headless"))
    (d,) = [d for d in rep.diagnostics if d.code == "RTC720"]
    assert (d.span.line, d.span.column, d.span.end_column) == (11, 30, 40)
    assert d.message.startswith("`-—headless` has, after its ASCII '-', an em dash (U+2014), "
                                "not an ASCII '-': vllm's parser does not read it as the flag "
                                "--headless")
    assert d.hint == "type it with ASCII hyphens: `--headless`"


def test_ascii_hyphens_then_a_word_are_clean():
    rep = _lint(WORKER.replace("—headless", "---headless"))
    assert [d.code for d in rep.diagnostics if d.code == "RTC720"] == []
