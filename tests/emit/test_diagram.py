"""`rtc diagram` and the diagrams of `rtc compile --out-dir`: formats, exit codes, errors
drawn and marked, Graphviz missing, collapsing, atomic writes; and the pieces the views
are built from (DOT quoting, where diagnostics belong, the collapse plan)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, GOLDEN, ROOT, rtc_command, run_rtc
from rtc.api import compile_text
from rtc.diagnostics import Span, error, warning
from rtc.emit.diagram import Options, diagram_dot
from rtc.emit.diagram import style as st
from rtc.emit.diagram.dot import Graph, Html, quote
from rtc.emit.diagram.model import Marks, plan

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz `dot` is not installed")

DUPLICATE_IP = """
cluster c {
  hardware atlas-800t-a2
}
server atlas-01 {
  host 10.0.0.6
  devices 0..7
  device_ip 6.0.2.1 step 2
}
server atlas-02 {
  host 10.0.0.5
  devices 0..7
  device_ip 6.0.2.1 step 2
}
"""

# 8 servers of 8 NPUs; node7 repeats node0's host IP (an error on node7 only).
FAMILY8 = """
cluster c {
  hardware atlas-800t-a2
}
family node[0..7] {
  host 10.0.0.{i%7}
  devices 0..7
  device_ip 6.{i}.0.{d+1}
}
job serve {
  servers all
  tp 8
  dp 8
  expert_parallel on
}
"""

UNREACHABLE = """
cluster c {
  hardware atlas-800t-a2
}
family node[0..3] {
  host 10.0.0.{i+1}
  devices 0..7
  device_ip 6.0.{i}.{2*d+1}
  prefix 31
}
"""


def no_dot_env(tmp_path: Path) -> dict:
    """An environment whose PATH has no Graphviz (the console script is called by its
    absolute path, so it still runs)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    return dict(os.environ, PATH=str(empty), NO_COLOR="1", COLUMNS="120")


def run_env(args: list[str], env: dict):
    return subprocess.run(rtc_command() + args, capture_output=True, text=True, env=env,
                          timeout=120)


# --------------------------------------------------------------------------- CLI


@needs_dot
def test_diagram_svg_png_pdf(tmp_path: Path):
    for name, magic in (("t.svg", b"<?xml"), ("t.png", b"\x89PNG"), ("t.pdf", b"%PDF")):
        out = tmp_path / name
        res = run_rtc("diagram", str(D1), "-o", str(out))
        assert res.returncode == 0, res.stderr
        assert out.read_bytes().startswith(magic), name
        assert f"wrote {out}" in res.stderr
    res = run_rtc("diagram", str(D1), "--view", "groups", "--format", "svg",
                  "-o", str(tmp_path / "groups.image"))
    assert res.returncode == 0, res.stderr
    assert b"<svg" in (tmp_path / "groups.image").read_bytes()


def test_diagram_dot_to_stdout_equals_golden():
    res = run_rtc("diagram", "examples/a2-2node-dp2-tp8.rtc", cwd=ROOT)
    assert res.returncode == 0, res.stderr
    golden = GOLDEN / "diagrams" / "a2-2node-dp2-tp8" / "topology.dot"
    assert res.stdout == golden.read_text(encoding="utf-8")


def test_diagram_dot_file_for_each_view(tmp_path: Path):
    for view in ("topology", "groups", "network"):
        out = tmp_path / f"{view}.dot"
        res = run_rtc("diagram", "examples/pd-a3.rtc", "--view", view, "-o", str(out), cwd=ROOT)
        assert res.returncode == 0, res.stderr
        golden = GOLDEN / "diagrams" / "pd-a3" / f"{view}.dot"
        assert out.read_bytes() == golden.read_bytes(), view


def test_diagram_with_errors_is_drawn_and_exits_1(tmp_path: Path):
    src = tmp_path / "dup.rtc"
    src.write_text(DUPLICATE_IP)
    out = tmp_path / "dup.dot"
    res = run_rtc("diagram", str(src), "-o", str(out))
    assert res.returncode == 1
    assert "error[RTC208]" in res.stderr
    text = out.read_text()
    # the second server is outlined red and each of its NPUs names the rule
    server = text.split('subgraph "cluster_srv:atlas-02" {', 1)[1].split("subgraph", 1)[0]
    assert f'color="{st.ERROR}"' in server
    npus = [line for line in text.splitlines()
            if line.lstrip().startswith('"npu:atlas-02:') and "->" not in line]
    assert len(npus) == 8 and all("error RTC208" in line for line in npus)
    assert all(f'color="{st.ERROR}"' in line for line in npus)
    assert not any("RTC208" in line for line in text.splitlines()
                   if line.lstrip().startswith('"npu:atlas-01:') and "->" not in line)
    assert "Diagnostics: 1 error" in text   # one RTC208 finding covers the 8 clashes


def test_diagram_of_unparsable_file_writes_nothing(tmp_path: Path):
    src = tmp_path / "bad.rtc"
    src.write_text("cluster c {\n  hardware\n")
    out = tmp_path / "bad.svg"
    res = run_rtc("diagram", str(src), "-o", str(out))
    assert res.returncode == 1
    assert not out.exists()
    res = run_rtc("diagram", str(tmp_path / "missing.rtc"), "-o", str(out))
    assert res.returncode == 2
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["--view", "wiring"], "--view must be one of"),
    (["--dim", "xy"], "--dim must be one of"),
    (["--format", "gif"], "--format must be one of"),
    (["-o", "picture.txt"], "cannot tell the format"),
    (["--format", "png"], "needs -o FILE"),
    (["--job", "nope", "--format", "dot"], "no job named 'nope'"),
])
def test_diagram_usage_errors(args, message, tmp_path: Path):
    res = run_rtc("diagram", str(D1), *args, cwd=tmp_path)
    assert res.returncode == 2
    assert message in res.stderr
    assert not (tmp_path / "picture.txt").exists()


def test_diagram_without_dot(tmp_path: Path):
    env = no_dot_env(tmp_path)
    out = tmp_path / "t.svg"
    out.write_text("old picture")
    res = run_env(["diagram", str(D1), "-o", str(out)], env)
    assert res.returncode == 2
    assert "apt-get install graphviz" in res.stderr
    assert "--format dot" in res.stderr
    assert out.read_text() == "old picture"          # left untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".t.svg")] == []
    res = run_env(["diagram", str(D1), "--format", "dot", "-o", str(tmp_path / "t.dot")], env)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "t.dot").read_text().startswith('digraph "topology" {')


@needs_dot
def test_compile_out_dir_writes_diagrams(tmp_path: Path):
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--out-dir", str(tmp_path / "a"))
    assert res.returncode == 0, res.stderr
    names = {p.name for p in (tmp_path / "a").iterdir()}
    assert {"groups.svg", "hccl-decode.json", "hccl-prefill.json", "topology.svg"} <= names
    assert b"prefill rank 31" in (tmp_path / "a" / "topology.svg").read_bytes()
    res = run_rtc("compile", str(EXAMPLES / "pd-a3.rtc"), "--out-dir", str(tmp_path / "b"),
                  "--no-diagrams")
    assert res.returncode == 0, res.stderr
    names = {p.name for p in (tmp_path / "b").iterdir()}
    assert {"hccl-decode.json", "hccl-prefill.json"} <= names
    assert not names & {"topology.svg", "groups.svg"}


def test_compile_out_dir_without_dot_warns_and_skips(tmp_path: Path):
    res = run_env(["compile", str(D1), "--out-dir", str(tmp_path / "o")], no_dot_env(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "warning[RTC005]: Graphviz `dot` not found; skipped topology.svg and groups.svg" in res.stderr
    names = {p.name for p in (tmp_path / "o").iterdir()}
    assert "hccl.json" in names and not names & {"topology.svg", "groups.svg"}


def test_collapse_above_draws_exceptions_in_full(tmp_path: Path):
    src = tmp_path / "fam.rtc"
    src.write_text(FAMILY8)
    res = run_rtc("diagram", str(src), "--collapse-above", "32")
    assert res.returncode == 1                       # RTC202 on node7
    text = res.stdout
    assert '"fam:node[0..7]"' in text
    drawn = sorted(line.split('"')[1] for line in text.splitlines()
                   if line.startswith('  subgraph "cluster_srv:'))
    assert drawn == ["cluster_srv:node0", "cluster_srv:node7"]
    assert "8 servers, 8 NPUs each, 64 NPUs; 6 not drawn" in text
    assert "node0 (first member), node7 (error RTC202)" in text
    res = run_rtc("diagram", str(src), "--collapse-above", "64")
    assert '"fam:' not in res.stdout
    assert res.stdout.count('  subgraph "cluster_srv:') == 8


def test_unreachable_pair_is_a_dashed_red_edge(tmp_path: Path):
    src = tmp_path / "unreach.rtc"
    src.write_text(UNREACHABLE)
    res = run_rtc("diagram", str(src), "--format", "dot")
    assert res.returncode == 1
    assert "error[RTC410]" in res.stderr
    edges = [line for line in res.stdout.splitlines()
             if "->" in line and f'color="{st.ERROR}"' in line]
    assert len(edges) == 1
    assert 'style="dashed"' in edges[0] and 'xlabel="unreachable"' in edges[0]


def test_readme_images_exist():
    for name in ("topology.png", "groups.png", "network.png"):
        data = (ROOT / "docs" / "images" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        assert f"](images/{name})" in (ROOT / "docs" / "diagrams.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- pieces


def test_dot_quoting():
    assert quote('say "hi"\\ now\nnext') == '"say \\"hi\\"\\\\ now\\nnext"'
    assert quote(Html("<b>x</b>")) == "<<b>x</b>>"
    g = Graph("g", graph={"rankdir": "LR"})
    g.edge(("a", "p1"), "b", {"style": "invis"})
    assert g.source() == ('digraph "g" {\n  graph [rankdir="LR"];\n'
                          '  "a":"p1" -> "b" [style="invis"];\n}\n')


def _topo(text: str):
    result = compile_text(text, "t.rtc")
    assert result.topology is not None
    return result.topology


def test_marks_find_the_element_a_diagnostic_concerns():
    topo = _topo(FAMILY8)
    fam_span = topo.servers[0].span_of("device_ip")
    one_span = Span("t.rtc", 99, 1)
    # family members share one spans dict (read-only): give node3 its own
    topo.servers[3].spans = dict(topo.servers[3].spans, inventory=one_span)
    diags = [
        error("RTC208", "dup", None, subject="server node2, device 3"),
        warning("RTC304", "idle", None, subject="job serve, server node5"),
        warning("RTC310", "tp", None, subject="job serve, servers node0, node1"),
        error("RTC205", "range", None, subject="server node4, device 42"),
        error("RTC999", "family-wide", fam_span),
        error("RTC998", "one server", one_span),
        error("RTC997", "nowhere", Span("t.rtc", 1, 1)),
    ]
    m = Marks.build(topo, diags)
    assert [d.code for d in m.device[("node2", 3)]] == ["RTC208"]
    assert [d.code for d in m.server["node5"]] == ["RTC304"]
    assert [d.code for d in m.server["node4"]] == ["RTC205"]   # no device 42: the server
    assert [d.code for d in m.server["node3"]] == ["RTC998"]
    assert [d.code for d in m.family["node[0..7]"]] == ["RTC999"]
    assert sorted(d.code for d in m.general) == ["RTC310", "RTC997"]
    assert len(m.listed) == 7


def test_plan_caps_the_servers_drawn_in_full():
    topo = _topo(FAMILY8)
    reasons = {s.name: (1, "warning") for s in topo.servers}
    reasons["node6"] = (0, "error")
    p = plan(topo, topo.servers, 10, reasons)
    (kind, block), *rest = p.items
    assert kind == "family" and p.collapsed
    assert len(block.shown) == 8 and block.left_out == []
    from rtc.emit.diagram import model

    old = model.MAX_SHOWN
    model.MAX_SHOWN = 3
    try:
        p = plan(topo, topo.servers, 10, reasons)
    finally:
        model.MAX_SHOWN = old
    block = p.items[0][1]
    # the error first, then warnings in declaration order; the rest are listed, not drawn
    assert [s.name for s, _ in block.shown] == ["node0", "node1", "node6"]
    assert [s.name for s, _ in block.left_out] == ["node2", "node3", "node4", "node5", "node7"]
    assert plan(topo, topo.servers, 64, reasons).collapsed is False


def test_group_colours_cycle_through_the_palette():
    topo = _topo((EXAMPLES / "pd-a3.rtc").read_text())
    text = diagram_dot(topo, [], Options())
    # prefill TP 0, 1 then decode TP 0..7: decode TP 4 is the 7th group -> colour 0 again
    block = text.split('subgraph "cluster_grp:decode:tp:4:d2" {', 1)[1].split("}", 1)[0]
    assert f'color="{st.GROUP_COLORS[6 % len(st.GROUP_COLORS)]}"' in block
    block = text.split('subgraph "cluster_grp:decode:tp:3:d1" {', 1)[1].split("}", 1)[0]
    assert f'color="{st.GROUP_COLORS[5]}"' in block


def test_dim_without_groups_is_explained():
    dense = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text().replace(
        "  expert_parallel on\n", "  model_kind dense\n")
    text = diagram_dot(_topo(dense), [], Options(dim="dp"))
    assert "; no DP groups: dense model: every DP replica is its own world of 8 ranks" in text
    assert "cluster_grp:" not in text
    text = diagram_dot(_topo((EXAMPLES / "a2-2node-pp2-tp8.rtc").read_text()), [],
                       Options(dim="dp"))
    assert "DP 1: every NPU is its own DP group" in text
    assert "cluster_grp:" not in text


def test_server_without_npus_is_still_drawn():
    topo = _topo((EXAMPLES / "doc-2x2.rtc").read_text())
    topo.servers[1].devices = []
    text = diagram_dot(topo, [], Options())
    body = text.split('subgraph "cluster_srv:node_1" {', 1)[1].split("\n  }", 1)[0]
    assert '"npu:node_1:none"' in body and 'label="no NPUs"' in body


def test_cross_server_edge_joins_members_of_one_group():
    """--dim dp on the two-server DP2 x TP8 example: every DP group is {r, r + 8}; the one
    dashed edge must join two members of one group (NPU 0 rank 0 and NPU 0 rank 8), not
    the corners of the servers (rank 3 and rank 8 share no DP group)."""
    result = compile_text((EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(), "d1.rtc")
    text = diagram_dot(result.topology, result.diagnostics, Options(dim="dp"))
    edges = [line for line in text.splitlines() if 'style="dashed,bold"' in line
             and "->" in line]
    assert len(edges) == 1
    assert edges[0].lstrip().startswith('"npu:atlas-01:0" -> "npu:atlas-02:0"')
    assert 'xlabel="DP 0 (+7 more groups)"' in edges[0]
    assert "None" not in text
    assert "8 cross servers" in text


def test_one_crossing_group_is_singular():
    src = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  devices 0..7
  device_ip 6.0.1.1 step 1
}
server b {
  host 10.0.0.2
  devices 0..7
  device_ip 6.0.2.1 step 1
}
job j {
  servers a, b
  tp 16
}
"""
    result = compile_text(src, "tp16.rtc")
    text = diagram_dot(result.topology, result.diagnostics, Options())
    assert "1 crosses servers" in text and "1 cross servers" not in text
