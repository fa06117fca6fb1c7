"""The MindCluster / MindIE global rank table (server_group_list): emitted for PD plans with
--global-ranktable (golden, schema), recognised and checked by rtc validate."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, run_rtc
from rtc.api import compile_file
from rtc.api.validate import validate_source
from rtc.emit.bundle import build_bundle
from rtc.resources import load_schema

CASES = Path(__file__).parent / "data" / "ranktables" / "cases"


def _bundle(example: str, **kw):
    result = compile_file(str(EXAMPLES / example))
    assert result.ok
    return build_bundle(result.topology, result.plan, list(result.topology.jobs), {}, **kw)


def test_pd_plan_global_table_matches_golden_and_schema():
    files = {name: text for name, text, _m in _bundle("pd-a3.rtc", global_table=True).outputs}
    text = files["global-ranktable.json"]
    assert text.encode() == (GOLDEN / "pd-a3" / "global-ranktable.json").read_bytes()
    doc = json.loads(text)
    jsonschema.Draft202012Validator(load_schema("mindie-global")).validate(doc)
    groups = doc["server_group_list"]
    assert [(g["group_id"], g["server_count"]) for g in groups] == [("1", "2"), ("2", "2")]
    for g in groups:  # each group is one instance: ranks 0..n-1 of its own table
        ranks = [d["rank_id"] for s in g["server_list"] for d in s["device"]]
        assert ranks == [str(r) for r in range(len(ranks))]
        assert all(s["server_ip"] for s in g["server_list"])
        assert g["super_pod_list"]  # A3: version 1.2 with super pods
    assert doc["version"] == "1.2"
    assert validate_source(text, "global-ranktable.json").diagnostics == []


def test_global_table_only_when_asked():
    names = [n for n, _t, _m in _bundle("pd-a3.rtc").outputs]
    assert "global-ranktable.json" not in names


def test_validate_recognises_and_checks_the_global_form():
    ok = validate_source((CASES / "global_ranktable_ok.json").read_bytes(), "ok.json")
    assert ok.form == "mindie-global" and ok.diagnostics == []
    bad = validate_source((CASES / "global_ranktable_bad.json").read_bytes(), "bad.json")
    assert sorted((d.code, d.span.line, d.span.column) for d in bad.diagnostics) == [
        ("RTC633", 9, 61), ("RTC653", 9, 18), ("RTC654", 6, 21), ("RTC655", 10, 34)]


@pytest.mark.parametrize("args,needle", [
    (["examples/a2-2node-dp2-tp8.rtc"], "no prefill/decode pair"),
    (["examples/a5-2node-dp2-tp8.rtc"], "no documented Ascend 950"),
])
def test_global_table_refusals(args, needle, tmp_path):
    res = run_rtc("compile", *args, "--out-dir", str(tmp_path), "--global-ranktable",
                  cwd=EXAMPLES.parent)
    assert res.returncode == 2 and needle in res.stderr, res.stderr
