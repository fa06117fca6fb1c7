"""Render every example with Graphviz and read the SVG back: every rank is drawn exactly
once, collapsed families show their summary and exceptions, and cross-server groups (and
only those) are in the warning colour. Skipped only when Graphviz `dot` is missing (CI
installs it)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXAMPLES
from rtc.api import compile_file, compile_text
from rtc.emit.diagram import Options, diagram_dot, render
from rtc.emit.diagram import style as st

pytestmark = pytest.mark.skipif(shutil.which("dot") is None,
                                reason="Graphviz `dot` is not installed")

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.rtc"))
RANK = re.compile(r"^(?:(\S+) )?rank (\d+)$")
WARNING = st.WARNING.lower()

TP16_OVER_TWO_A2 = """
cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..7
  device_ip 6.0.2.1 step 2
}
server b {
  host 10.0.0.2
  devices 0..7
  device_ip 6.0.2.17 step 2
}
job serve {
  servers a, b
  tp 16
}
"""


def svg_of(result, view: str, **kw) -> ET.Element:
    data = render(diagram_dot(result.topology, result.diagnostics, Options(view=view, **kw)),
                  "svg")
    return ET.fromstring(data)


def groups_of(root: ET.Element, cls: str) -> dict[str, ET.Element]:
    """title -> <g class=cls> (node, cluster or edge)."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == cls:
            out[g.findtext(f"{SVG}title")] = g
    return out


def texts(g: ET.Element) -> list[str]:
    return [t.text.strip() for t in g.iter(f"{SVG}text") if t.text and t.text.strip()]


def strokes(g: ET.Element) -> set[str]:
    return {e.get("stroke").lower() for e in g.iter() if e.get("stroke")}


def expected_ranks(topo) -> Counter:
    """(job label or None, rank_id) for every device of every job's rank table (the whole
    cluster without jobs)."""
    want = Counter()
    jobs = [j for j in topo.jobs if j.placements]
    if not jobs:
        for r, _s, _d in topo.iter_ranks(None):
            want[(None, r)] += 1
    for j in jobs:
        for r, _s, _d in topo.iter_ranks(j):
            want[(j.name if len(jobs) > 1 else None, r)] += 1
    return want


@pytest.fixture(scope="module")
def compiled():
    cache = {}

    def get(path: Path):
        if path not in cache:
            cache[path] = compile_file(str(path))
        return cache[path]
    return get


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_topology_svg_draws_every_rank_once(example: Path, compiled):
    result = compiled(example)
    topo = result.topology
    root = svg_of(result, "topology")
    nodes = groups_of(root, "node")
    npus = {t: g for t, g in nodes.items() if t.startswith("npu:")}
    seen = Counter()
    for g in npus.values():
        for line in texts(g):
            m = RANK.match(line)
            if m:
                seen[(m.group(1), int(m.group(2)))] += 1
    families = [t for t in nodes if t.startswith("fam:")]
    if not families:
        assert seen == expected_ranks(topo), example.name
        assert len(npus) == sum(len(s.devices) for s in topo.servers)
        return
    # collapsed: one family box with its summary, node0000 drawn in full with its ranks
    fam = families[0]
    members = [s for s in topo.servers if s.family is not None]
    summary = texts(nodes[fam])
    assert fam[4:] in summary
    first, n = members[0].name, len(members[0].devices)   # node0000 x 16 on the A3 examples
    assert any(line.startswith(f"{len(members):,} servers, {n} NPUs each") for line in summary)
    assert any(f"drawn in full: {first} (first member)" in line for line in summary)
    assert set(npus) == {f"npu:{first}:{d}" for d in range(n)}
    assert seen == Counter({(None, r): 1 for r in range(n)})


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_groups_svg_draws_every_rank_once(example: Path, compiled):
    result = compiled(example)
    topo = result.topology
    root = svg_of(result, "groups")
    nodes = groups_of(root, "node")
    jobs = [j for j in topo.jobs if j.placements]
    assert sorted(t for t in nodes if t.startswith("job:")) == sorted(f"job:{j.name}"
                                                                     for j in jobs)
    for j in jobs:
        lines = texts(nodes[f"job:{j.name}"])
        seen = Counter(int(m.group(2)) for line in lines if (m := RANK.match(line)))
        world = j.world_size
        if world <= 256:
            assert seen == Counter(range(world)), (example.name, j.name)
        else:   # collapsed: DP 0, 1 and the last replica, and the ellipsis row
            tp = j.tp
            shown = list(range(2 * tp)) + list(range(world - tp, world))
            assert seen == Counter(shown)
            assert any(line.startswith(f"... DP 2 .. {j.dp - 2}: {j.dp - 3:,} more replicas")
                       for line in lines)


def test_cross_server_tp_group_is_in_the_warning_colour():
    result = compile_text(TP16_OVER_TWO_A2, "tp16.rtc")
    assert result.ok
    root = svg_of(result, "topology")
    clusters = groups_of(root, "cluster")
    parts = {t: g for t, g in clusters.items() if t.startswith("cluster_grp:")}
    assert set(parts) == {"cluster_grp:serve:tp:0:a", "cluster_grp:serve:tp:0:b"}
    for g in parts.values():
        assert WARNING in strokes(g)
    edges = groups_of(root, "edge")
    joins = [g for g in edges.values() if WARNING in strokes(g)]
    assert len(joins) == 1
    assert any("via RoCE" in line for g in parts.values() for line in texts(g))


def test_d1_groups_are_not_in_the_warning_colour(compiled):
    result = compiled(EXAMPLES / "a2-2node-dp2-tp8.rtc")
    root = svg_of(result, "topology")
    clusters = groups_of(root, "cluster")
    parts = {t: g for t, g in clusters.items() if t.startswith("cluster_grp:")}
    assert set(parts) == {"cluster_grp:deepseek:tp:0:atlas-01",
                          "cluster_grp:deepseek:tp:1:atlas-02"}
    for g in parts.values():
        assert WARNING not in strokes(g)
    assert strokes(parts["cluster_grp:deepseek:tp:0:atlas-01"]) == {st.GROUP_COLORS[0].lower()}
    assert strokes(parts["cluster_grp:deepseek:tp:1:atlas-02"]) == {st.GROUP_COLORS[1].lower()}
    for g in groups_of(root, "edge").values():
        assert WARNING not in strokes(g)


def test_d1_dp_groups_do_cross_servers(compiled):
    """The same job with --dim dp: all 8 DP groups span both servers (warning colour)."""
    result = compiled(EXAMPLES / "a2-2node-dp2-tp8.rtc")
    root = svg_of(result, "topology", dim="dp")
    parts = {t: g for t, g in groups_of(root, "cluster").items()
             if t.startswith("cluster_grp:")}
    assert len(parts) == 16
    assert all(WARNING in strokes(g) for g in parts.values())


def test_network_svg_names_every_server(compiled):
    for example in EXAMPLE_FILES:
        result = compiled(example)
        root = svg_of(result, "network")
        clusters = groups_of(root, "cluster")
        drawn = {t[len("cluster_srv:"):] for t in clusters if t.startswith("cluster_srv:")}
        nodes = groups_of(root, "node")
        if any(t.startswith("fam:") for t in nodes):
            assert drawn == {next(s.name for s in result.topology.servers if s.family)}
        else:
            assert drawn == {s.name for s in result.topology.servers}, example.name

