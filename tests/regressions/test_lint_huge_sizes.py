"""`rtc lint` of a launch with an absurd size is one RTC720 at the value, found at once.

Seen by a fresh user: `vllm serve m --data-parallel-size 99999999 --tensor-parallel-size 8`
made lint list 800 million device ids per node (10 GB, no answer, Ctrl-C ignored); a
`torchrun --nproc_per_node 99999999` did the same."""

from __future__ import annotations

import resource
import time

import pytest

from rtc.api.linting import lint_scripts


def _lint(line: str):
    start = time.process_time()
    rep = lint_scripts([("run.sh", f"#!/bin/bash\n{line}\n".encode())])
    return rep, time.process_time() - start


def _found(rep):
    return [(d.code, d.span.line, d.span.column) for d in rep.diagnostics
            if d.severity.label in ("error", "warning")]


@pytest.mark.parametrize("line, col, words", [
    ("vllm serve m --data-parallel-size 99999999 --tensor-parallel-size 8 "
     "--data-parallel-address 10.0.0.1", 14, "world of 799999992 ranks"),
    ("torchrun --nproc_per_node 99999999 --nnodes 1 train.py", 10,
     "--nproc_per_node 99999999 starts 99999999 processes on one node"),
    ("torchrun --nproc-per-node=99999999 train.py", 10,
     "--nproc-per-node 99999999 starts 99999999 processes on one node"),
])
def test_absurd_size_is_one_rtc720_and_cheap(line, col, words):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rep, cpu = _lint(line)
    assert _found(rep) == [("RTC720", 2, col)], [d.message for d in rep.diagnostics]
    assert words in next(d.message for d in rep.diagnostics if d.code == "RTC720")
    assert cpu < 5          # was minutes and 10 GB; ~0.05 s now
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 500_000


def test_largest_per_node_count_is_not_rtc720():
    rep, _cpu = _lint("torchrun --nproc_per_node 1024 --nnodes 1 train.py")
    assert "RTC720" not in {d.code for d in rep.diagnostics}


def test_dash_spelling_of_nproc_per_node_is_read():
    # torchrun's argparse takes --nproc-per-node and --nproc_per_node as one option: 16
    # processes on the default 8-NPU server make lint guess a 16-NPU A3 (RTC465), as the
    # underscore spelling does
    for flag in ("--nproc-per-node 16", "--nproc_per_node 16"):
        rep, _cpu = _lint(f"torchrun {flag} --nnodes 1 train.py")
        assert [d.code for d in rep.diagnostics] == ["RTC465"], flag


def test_a_doubling_variable_is_capped_with_one_note():
    """Fresh user F2: `A=x` then 30 lines of `A="$A$A"` before `vllm serve` used 1.6 GB and
    5.2 s (each line doubles A). The reader stops expanding where a word's value would pass
    1 MiB: one RTC701 note at the line where it first would (line 23: 2**21 characters),
    and the launch after it is still read."""
    text = "#!/bin/bash\nA=x\n" + 'A="$A$A"\n' * 30 + "vllm serve m --port 8000\n"
    start = time.process_time()
    rep = lint_scripts([("dbl.sh", text.encode())])
    assert time.process_time() - start < 2.0
    notes = [d for d in rep.diagnostics if d.code == "RTC701"]
    assert [(d.span.line, d.span.column) for d in notes] == [(23, 1)]
    assert notes[0].message.startswith("$A is not expanded here: its value would make the "
                                       "word longer than 1 MiB")
    assert [j.name for j in rep.topology.jobs] == ["vllm@dbl:33"]
    assert rep.diagnostics == notes, [d.message for d in rep.diagnostics]


def test_a_long_but_bounded_variable_is_expanded():
    """The passing side: 19 doublings (512 KiB) are expanded in full, with no note."""
    from rtc.scripts.shell import read_shell

    run = read_shell("ok.sh", "A=x\n" + 'A="$A$A"\n' * 19 + "export A\n")
    assert len(run.settings["A"].value) == 2 ** 19 and run.settings["A"].unresolved == ()
    assert run.problems == []
