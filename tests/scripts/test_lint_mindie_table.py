"""`rtc lint --table` of a two-node MindIE Server launch (tests/lint_cases/mindie: each node
exports MIES_CONTAINER_IP, its own address, and the table's server_ids are the host IPs
with 10.0.0.6 listed first, as a fresh user wrote them).

MindIE's rank table reader finds its own server by MIES_CONTAINER_IP (Ascend/MindIE-LLM
@8b4871ad src/config_manager/ranktable_config.cpp), so the nodes are matched to the
table by address, not by launch order (no RTC462). RTC216 follows `rtc validate`: a table
whose server_ids are its host IPs is not judged, and a table that is judged is reported
once, in the table, not again at a script's first line."""

from __future__ import annotations

import json

from rtc.api.commands import lint, validate
from conftest import TESTS

HERE = TESTS / "lint_cases" / "mindie"
NODES = [str(HERE / "node0.sh"), str(HERE / "node1.sh")]


def _codes(rep) -> list[tuple]:
    """Every finding but the notes that the sourced set_env.sh files cannot be read here
    (RTC701) and that MindIE's own launch is not checked (RTC463, RTC702)."""
    return [(d.code, d.span.file if d.span else None, d.span.line if d.span else None)
            for d in rep.diagnostics if d.code not in ("RTC701", "RTC463", "RTC702")]


def test_host_ip_server_ids_are_not_judged_and_nodes_match_by_address():
    rep = lint(NODES, table=str(HERE / "rank_table_file.json"))
    assert _codes(rep) == []
    assert [d.code for d in validate(str(HERE / "rank_table_file.json")).diagnostics] == []
    by_name = {s.name: str(s.host_ip) for s in rep.topology.servers}
    assert by_name == {"node0": "10.0.0.6", "node1": "10.0.0.5"}


def test_a_judged_table_is_reported_once_in_the_table(tmp_path):
    doc = json.loads((HERE / "rank_table_file.json").read_text(encoding="utf-8"))
    doc["server_list"][0]["server_id"] = "node2"
    doc["server_list"][1]["server_id"] = "node10"
    for s in doc["server_list"]:
        del s["host_ip"]
    table = tmp_path / "t.json"
    table.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    got = [d for d in lint(NODES, table=str(table)).diagnostics if d.code == "RTC216"]
    assert [(d.code, d.span.file, d.span.line, d.span.column) for d in got] == \
        [("RTC216", str(table), 52, 17)]
    assert "server_id 'node10' sorts before 'node2'" in got[0].message
