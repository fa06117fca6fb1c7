"""A server_id holding a bidi override (U+202E) or a NUL: `rtc validate` gave only the
RTC216 sort-order warning (or nothing, exit 0, for the NUL) while `rtc import` refused the
NUL with RTC662 and wrote the bidi override raw into the description. All front ends now
report one rule, RTC235 (rtc.checks.ranktable_rules), as an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_table, run_rtc
from rtc.api.importing import import_table
from rtc.api.validating import validate_source


def _table(server_id: str) -> str:
    doc = make_table(servers=2)
    doc["server_list"][0]["server_id"] = server_id
    return json.dumps(doc, indent=2)


CASES = [("node\u202e1", "invisible character U+202E (\\u202e)", "node\\u202e1"),
         ("node\x001", "control character U+0000 (\\x00)", "node\\x001"),
         ("node\u200b1", "invisible character U+200B (\\u200b)", "node\\u200b1")]


@pytest.mark.parametrize("server_id, what, shown", CASES)
def test_validate_and_import_report_the_same_rule(server_id, what, shown):
    text = _table(server_id)
    message = f"server_id '{shown}' holds the {what}, which is shown as something else or " \
              "not at all"
    val = [d for d in validate_source(text, "t.json").diagnostics if d.code == "RTC235"]
    assert [(d.message, d.span.line, d.span.column) for d in val] == [(message, 7, 20)]
    imp = import_table(text, "t.json")
    assert imp.text is None
    errors = sorted(d.code for d in imp.diagnostics if d.severity.label == "error")
    assert errors == ["RTC235", "RTC660"]


def test_the_cli_exits_1_for_both(tmp_path: Path):
    table = tmp_path / "t.json"
    table.write_text(_table("node\u202e1"), encoding="utf-8")
    for command in ("validate", "import"):
        res = run_rtc(command, str(table), cwd=tmp_path)
        assert res.returncode == 1, (command, res.stderr)
        out = res.stdout + res.stderr     # validate reports on stdout, import on stderr
        assert f"{table}:7:20: error[RTC235]: server_id 'node\\u202e1'" in out, command
    assert not (tmp_path / "t.rtc").exists()


@pytest.mark.parametrize("server_id", ["node_1", "rack1/node0", "a\tb", "节点1", "10.0.0.1"])
def test_plain_and_other_unicode_ids_pass(server_id):
    diags = validate_source(_table(server_id), "t.json").diagnostics
    assert "RTC235" not in [d.code for d in diags]
