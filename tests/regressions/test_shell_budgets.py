"""The bash reader bounds what one command and one script may expand to.

Seen by a fresh user: `A="a b c d e f g h "` doubled 16 times (just under the 1 MiB cap
per word, 524,288 words) and then written unquoted 200 times in one `vllm serve` line made
`rtc lint` grow to 10.6 GB and be killed; 2,000 `export Vi=$A` of a 512 KB value held
1 GB. Each command now has a budget of words and characters after splitting, and the
values stored at one time a total, past which values are unknown with one RTC701 note."""

from __future__ import annotations

import resource

from rtc.api.linting import lint_scripts
from rtc.scripts import shell
from rtc.scripts.shell import read_shell


def _doubled(times: int, start: str = "a b c d e f g h ") -> str:
    return f'A="{start}"\n' + 'A="$A$A"\n' * times


def test_many_unquoted_references_stop_at_the_command_budget():
    text = _doubled(16) + "vllm serve m " + " ".join(["$A"] * 200) + "\n"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = read_shell("run.sh", text)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    cmd = run.commands[-1]
    assert cmd.argv[:3] == ["vllm", "serve", "m"]
    assert len(cmd.words) == 203 and cmd.argv[3:5] == ["$A", "$A"]
    assert cmd.words[3].unresolved == ("A",)
    notes = [p for p in run.problems if p.kind == "value"]
    assert [(p.span.line, p.span.column) for p in notes] == [(18, 14)]
    assert "more than 100,000 words or 8 MiB" in notes[0].message
    assert grown_mb < 300


def test_references_under_the_budget_are_split_as_before():
    text = _doubled(3) + "vllm serve m $A $A\n"
    cmd = read_shell("run.sh", text).commands[-1]
    assert len(cmd.argv) == 3 + 2 * 64
    assert cmd.argv[3:6] == ["a", "b", "c"]
    assert not [p for p in read_shell("run.sh", text).problems if p.kind == "value"]


def test_the_budget_counts_characters_too(monkeypatch):
    monkeypatch.setattr(shell, "MAX_COMMAND_CHARS", 20)
    cmd = read_shell("run.sh", 'A=abcdefgh\nvllm serve "$A" "$A"\n')
    assert cmd.commands[-1].argv == ["vllm", "serve", "abcdefgh", "$A"]


def test_stored_values_past_the_total_are_unknown(monkeypatch):
    monkeypatch.setattr(shell, "MAX_STORED_CHARS", 20)
    text = "A=0123456789\nexport V1=$A\nexport V2=$A\nexport V3=$A\nvllm serve $V1 $V2 $V3\n"
    run = read_shell("run.sh", text)
    assert run.commands[-1].argv == ["vllm", "serve", "0123456789", "$V2", "$V3"]
    assert sorted(run.settings) == ["A", "V1"]
    notes = [p for p in run.problems if p.kind == "value"]
    assert [(p.span.line, p.span.column) for p in notes] == [(3, 8)]
    assert notes[0].message.startswith("$V2 and any variable set after it")


def test_unset_gives_its_characters_back(monkeypatch):
    monkeypatch.setattr(shell, "MAX_STORED_CHARS", 20)
    text = "A=0123456789\nB=0123456789\nunset A\nC=0123456789\n"
    run = read_shell("run.sh", text)
    assert sorted(run.settings) == ["B", "C"]
    assert not run.problems


def test_many_big_exports_lint_with_one_note():
    text = 'A=x\n' + 'A=$A$A\n' * 19 + "".join(f"export V{i}=$A\n" for i in range(1, 2001))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rep = lint_scripts([("run.sh", text.encode())])
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    notes = [d for d in rep.diagnostics if d.code == "RTC701" and "in all" in d.message]
    assert [(d.span.line, d.span.column) for d in notes] == [(148, 8)]
    assert "$V128 and any variable set after it" in notes[0].message
    assert grown_mb < 400


def test_doubling_note_does_not_quote_a_form_the_script_did_not_write():
    text = "A=x\n" + "A=${A}${A}\n" * 21 + "vllm serve $A\n"
    notes = [p for p in read_shell("run.sh", text).problems if p.kind == "value"]
    assert len(notes) == 1
    assert 'A="$A$A"' not in notes[0].message
    assert "each assignment of A that uses $A twice doubles it" in notes[0].message


def test_an_array_holding_an_operator_is_no_array_and_ends():
    # fuzz seed 1: `A=(` then lines holding `(`, `;`, `|` made the array reader append
    # the same empty word forever (a MemoryError)
    from rtc.scripts.shell import read_shell

    for text in ("A=(\nx ( y\n)\nvllm serve m\n", "A=( a ; b )\nvllm serve m\n",
                 "A=(\n| c\nvllm serve m\n"):
        run = read_shell("x.sh", text)
        assert run is not None
