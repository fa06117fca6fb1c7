"""Every example, every diagram view: the DOT text equals its golden file byte for byte
(tests/golden/diagrams/<example>/<view>.dot).

After an intended change, regenerate with `python tests/emit/test_diagram_golden.py` and
review the diff.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: tests/

from conftest import EXAMPLES, GOLDEN  # noqa: E402

from rtc.emit.diagram import VIEWS, Options, diagram_dot  # noqa: E402

DIAGRAMS = GOLDEN / "diagrams"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.rtc"))


@functools.lru_cache(maxsize=None)
def _compiled(path: str):
    from rtc.api import compile_file

    return compile_file(path)


def dot_of(example: Path, view: str) -> str:
    """The DOT of ``example`` (compiled once, by its path relative to the repository, so
    nothing depends on where the checkout lives)."""
    result = _compiled(str(example.relative_to(EXAMPLES.parent)))
    return diagram_dot(result.topology, result.diagnostics, Options(view=view))


def test_every_example_has_diagram_goldens():
    for ex in EXAMPLE_FILES:
        for view in VIEWS:
            assert (DIAGRAMS / ex.stem / f"{view}.dot").is_file(), f"no {view}.dot for {ex.name}"


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_diagram_matches_golden(example: Path, view: str, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)
    golden = DIAGRAMS / example.stem / f"{view}.dot"
    got = dot_of(example, view)
    assert got.encode("utf-8") == golden.read_bytes(), \
        f"{example.name} {view}: DOT differs from {golden} (regenerate: python {__file__})"


def test_family_examples_collapse():
    """The 16,384- and 65,536-NPU examples are drawn as one family box plus node0000."""
    for stem, fam in (("family-a3-1024", "node[0000..1023]"),
                      ("family-a3-4096", "node[0000..4095]")):
        text = (DIAGRAMS / stem / "topology.dot").read_text(encoding="utf-8")
        assert f'"fam:{fam}"' in text
        assert '"cluster_srv:node0000"' in text
        assert '"cluster_srv:node0001"' not in text
        assert len(text) < 20_000


def update() -> None:
    import os

    os.chdir(EXAMPLES.parent)
    for ex in EXAMPLE_FILES:
        folder = DIAGRAMS / ex.stem
        folder.mkdir(parents=True, exist_ok=True)
        for view in VIEWS:
            (folder / f"{view}.dot").write_bytes(dot_of(ex, view).encode("utf-8"))
            print(f"wrote {folder / f'{view}.dot'}")


if __name__ == "__main__":
    update()


def test_groups_view_with_costs_matches_golden(rtc):
    # `rtc diagram --view groups --cost`: one row per group kind and op under the grid
    run = rtc("diagram", "examples/a2-2node-dp2-tp8.rtc", "--view", "groups", "--cost",
              "--format", "dot", cwd=EXAMPLES.parent)
    assert run.returncode == 0, run.stderr
    golden = DIAGRAMS / "a2-2node-dp2-tp8" / "groups-cost.dot"
    assert run.stdout == golden.read_text(encoding="utf-8")
    assert "TP AllReduce: 34.2 us per call (918 KB over hccs-910b, intra-server)" in run.stdout
