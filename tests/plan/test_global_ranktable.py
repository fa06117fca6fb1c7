"""The MindCluster / MindIE global rank table (server_group_list): emitted for PD plans with
--global-ranktable (golden, schema), recognised and checked by rtc validate."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, TESTS, run_rtc
from rtc.api import compile_file
from rtc.api.validating import validate_source
from rtc.emit.bundle import build_bundle
from rtc.resources import load_schema

CASES = TESTS / "data" / "ranktables" / "cases"


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
    # MindIE Motor's numbering: coordinator "0" and controller "1" (rtc starts neither:
    # no servers), then the prefill instance "2" and the decode instance "3"
    assert [(g["group_id"], g["server_count"]) for g in groups] == [
        ("0", "0"), ("1", "0"), ("2", "2"), ("3", "2")]
    assert groups[0]["server_list"] == groups[1]["server_list"] == []
    assert [s["server_id"] for s in groups[2]["server_list"]] == ["10.0.1.1", "10.0.1.2"]
    for g in groups[2:]:  # each instance group: ranks 0..n-1 of its own table
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
        ("RTC633", 10, 61), ("RTC653", 10, 18), ("RTC654", 7, 21), ("RTC655", 11, 34)]


def test_validate_names_the_consumers_that_refuse_the_old_group_numbering():
    # rtc's earlier numbering (prefill "1", decode "2", no coordinator group "0"): MindIE
    # Motor's RankTableLoader and MindCluster's ClusterD would not read it
    old = validate_source((CASES / "global_ranktable_old_numbering.json").read_bytes(), "o.json")
    assert [(d.code, d.severity.name, d.span.line) for d in old.diagnostics] == [
        ("RTC678", "WARNING", 4)] * 2
    assert sorted(d.message.split(" would reject")[0] for d in old.diagnostics) == [
        "MindCluster ClusterD (global rank table)", "MindIE Motor (RankTableLoader)"]
    assert all('no coordinator group "0"' in d.message for d in old.diagnostics)
    # the same instances numbered from "0" with no coordinator: omniinfer's numbering
    doc = json.loads((CASES / "global_ranktable_old_numbering.json").read_text())
    for n, g in enumerate(doc["server_group_list"]):
        g["group_id"] = str(n)
    assert validate_source(json.dumps(doc), "omni.json").diagnostics == []


@pytest.mark.parametrize("args,needle", [
    (["examples/a2-2node-dp2-tp8.rtc"], "no prefill/decode pair"),
    (["examples/a5-2node-dp2-tp8.rtc"], "no documented Ascend 950"),
])
def test_global_table_refusals(args, needle, tmp_path):
    res = run_rtc("compile", *args, "--out-dir", str(tmp_path), "--global-ranktable",
                  cwd=EXAMPLES.parent)
    assert res.returncode == 2 and needle in res.stderr, res.stderr
