"""The ecosystem corpus (tests/ecosystem/<kind>/, real public captures and tables with their
SOURCES.md): every file is read by rtc's reader for its kind, every fact a person reads from
it equals rtc's, and no reader raises. tools/ecosystem.py is the runner; this test fails
naming each file that stopped reading, each fact that differs and each traceback."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("rtc_ecosystem_runner", ROOT / "tools" / "ecosystem.py")
eco = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = eco     # dataclasses look their module up there
_spec.loader.exec_module(eco)


def test_every_corpus_file_reads_with_its_facts():
    results, problems = eco.run(eco.CORPUS)
    bad = [f"{r.kind}/{r.file}: {'; '.join(r.why)}" for r in results
           if r.traceback or not (r.read and r.facts_equal)]
    assert not problems, problems
    assert not bad, "\n".join(bad)
    kinds = {r.kind for r in results}
    assert len(results) >= 150 and len(kinds) >= 12, (len(results), sorted(kinds))  # grows with the corpus


def test_runner_catches_a_changed_fact_and_an_unread_file(tmp_path: Path):
    """The runner must fail when a SOURCES fact differs or a file stops reading."""
    kind = tmp_path / "npu-smi-info"
    src = eco.CORPUS / "npu-smi-info"
    kind.mkdir()
    good = next(p for p in sorted(src.iterdir()) if p.name != "SOURCES.md")
    shutil.copy(good, kind / "a.txt")
    (kind / "b.txt").write_text("npu-smi: command not found\n")
    (kind / "SOURCES.md").write_text("| file | source | facts |\n|---|---|---|\n"
                                     "| a.txt | x | npus=999 |\n| b.txt | x | npus=1 |\n")
    results, problems = eco.run(tmp_path)
    by = {r.file: r for r in results}
    assert not problems
    assert by["a.txt"].read and not by["a.txt"].facts_equal
    assert "npus: SOURCES '999'" in "; ".join(by["a.txt"].why)
    assert not by["b.txt"].read and by["b.txt"].traceback is None
    assert eco.failed(results, problems)


def test_summary_table_counts(tmp_path: Path):
    results, _ = eco.run(eco.CORPUS)
    rows = eco.summary(results)
    assert rows[-1]["files"] == len(results) == sum(r["files"] for r in rows[:-1])
    assert rows[-1]["tracebacks"] == 0
    assert eco.render(rows).splitlines()[0].startswith("| kind | files | read |")


def test_damaged_captures_of_every_kind_never_raise(tmp_path: Path):
    """40 damaged variants per kind (cut short, lines lost/doubled/swapped, CRLF, tabs <->
    spaces, tokens replaced by N/A / ERR! / escapes, stray bytes): a reader reads them or
    says why not, never raises. `tools/ecosystem.py --mutate 1000` is the long run."""
    stats = eco.mutation_run(eco.CORPUS, 40, seed=32, work=tmp_path)
    assert len(stats) >= 12
    for kind, st in stats.items():
        assert st["runs"] == 40 and st["tracebacks"] == 0, (kind, st["first"])
        assert st["read"] + st["unread"] == 40


def test_mutations_damage_the_text():
    import random

    rng = random.Random(1)
    text = "GPU0\t X \tNV18\nGPU1\tNV18\t X \n"
    variants = {eco.mutate(text, rng) for _ in range(50)}
    assert text not in variants or len(variants) > 5
    assert any("\r\n" in v for v in variants) and any(len(v) < len(text) for v in variants)
