"""Reporters: the registry, GitHub workflow commands (escaping, line by line), SARIF 2.1.0
validated against the pinned OASIS schema, the JSON report."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from conftest import TESTS, run_rtc
from rtc.diagnostics import Diagnostic, Related, Severity, Span, error, note, warning
from rtc.report.github import command_line, escape_data, escape_property
from rtc.report.formats import get_reporter, reporter_names
from rtc.report.registry import FileInfo, ReportContext
from rtc.catalogue import get_rule
from rtc.api.validating import validate_source

DATA = TESTS / "data"
SARIF_SCHEMA = DATA / "sarif" / "sarif-schema-2.1.0.json"
RANKTABLES = DATA / "ranktables"


def sarif_validator():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def sample_diagnostics() -> list[Diagnostic]:
    return [
        error("RTC208", "device IP 10.0.0.1 of b device 0 is also the IP of a device 0",
              Span("dir/hccl,1.json", 14, 24, 14, 35), hint="fix: 100% unique\r\nplease",
              related=[Related(Span("dir/hccl,1.json", 9, 24, 9, 35), "a device 0")],
              subject="server b, device 0"),
        warning("RTC632", "server_list is not in rank order", Span("other.json", 3, 5)),
        note("RTC618", "extension key", Span("/abs/path/x.json", 1, 2, 1, 17)),
        error("RTC001", "cannot read nope.json: No such file or directory", None),
    ]


def test_registry_has_the_four_formats():
    assert reporter_names()[:4] == ["text", "json", "github", "sarif"]
    assert get_reporter("xml") is None
    for name in reporter_names():
        assert get_reporter(name).description


# --------------------------------------------------------------------------- github

def test_github_escaping_rules():
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    # % is escaped first, so an existing %0A stays literal text
    assert escape_data("%0A") == "%250A"


def test_github_command_per_severity():
    d1, d2, d3, d4 = sample_diagnostics()
    assert command_line(d1) == (
        "::error file=dir/hccl%2C1.json,line=14,col=24,title=RTC208::device IP 10.0.0.1 of b device 0 "
        "is also the IP of a device 0%0Awhere: server b, device 0%0Anote: a device 0 "
        "(dir/hccl,1.json:9:24)%0Ahint: fix: 100%25 unique%0D%0Aplease")
    assert command_line(d2) == "::warning file=other.json,line=3,col=5,title=RTC632::server_list is not in rank order"
    assert command_line(d3).startswith("::notice file=/abs/path/x.json,line=1,col=2,title=RTC618::")
    assert command_line(d4) == "::error title=RTC001::cannot read nope.json: No such file or directory"


_LINE = re.compile(r"::(error|warning|notice) (?:file=([^,:]+),line=(\d+),col=(\d+),)?title=(RTC\d{3})::([^\r\n]*)\Z")


def test_github_output_line_by_line(tmp_path):
    case = RANKTABLES / "validate" / "v1_2_semantic.json"
    res = run_rtc("validate", "--format", "github", "validate/v1_2_semantic.json", cwd=RANKTABLES)
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    rep = validate_source(case.read_bytes(), "validate/v1_2_semantic.json")
    assert len(lines) == len(rep.diagnostics)
    for line, d in zip(lines, rep.diagnostics):
        m = _LINE.match(line)
        assert m, line
        level, file, ln, col, code, message = m.groups()
        assert level == {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}[d.severity]
        assert (file, int(ln), int(col), code) == (d.span.file, d.span.line, d.span.column, d.code)
        assert message.split("%0A")[0] == escape_data(d.message)
        if d.hint:
            assert message.endswith("%0Ahint: " + escape_data(d.hint))
    assert "rtc: 8 errors, 1 warning (1 file checked)" in res.stderr


# --------------------------------------------------------------------------- sarif

def test_pinned_sarif_schema_is_the_oasis_one():
    data = SARIF_SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == \
        "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    schema = json.loads(data)
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]


def test_sarif_of_sample_diagnostics_validates():
    ctx = ReportContext.make({}, [FileInfo("dir/hccl,1.json"), FileInfo("other.json")])
    text = get_reporter("sarif")(sample_diagnostics(), ctx)
    doc = json.loads(text)
    sarif_validator().validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["RTC001", "RTC208", "RTC618", "RTC632"]
    for r in rules:
        known = get_rule(r["id"])
        assert r["shortDescription"]["text"] == known.summary
        assert r["fullDescription"]["text"] == known.explanation
        assert r["help"]["text"]
    by_rule = {res["ruleId"]: res for res in run["results"]}
    dup = by_rule["RTC208"]
    assert rules[dup["ruleIndex"]]["id"] == "RTC208"
    loc = dup["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "dir/hccl%2C1.json", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 14, "startColumn": 24, "endLine": 14, "endColumn": 35}
    assert dup["relatedLocations"][0]["message"]["text"] == "a device 0"
    assert by_rule["RTC632"]["level"] == "warning" and by_rule["RTC618"]["level"] == "note"
    assert by_rule["RTC618"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "file:///abs/path/x.json"
    assert "locations" not in by_rule["RTC001"]


@pytest.mark.parametrize("files", [
    ["validate/v1_2_semantic.json"],
    ["validate/v1_0_interleaved.json", "corpus/bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc",
     "corpus/bad__v2_0_obsolete_keys__hcomm_st__ranktable_2p_error.json",
     "corpus/v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json", "cases/v1_0_missing_comma.json"],
    ["corpus/v1_0__hcomm_example__1srv_8dev.json"],
])
def test_cli_sarif_validates_against_the_pinned_schema(files):
    res = run_rtc("validate", "--format", "sarif", *files, cwd=RANKTABLES)
    doc = json.loads(res.stdout)
    sarif_validator().validate(doc)
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "rtc"
    assert {r["ruleId"] for r in run["results"]} == {r["id"] for r in run["tool"]["driver"]["rules"]}
    for r in run["results"]:
        region = r["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert [a["location"]["uri"] for a in run["artifacts"]] == files


def test_sarif_schema_rejects_a_broken_log():
    ctx = ReportContext.make({}, [])
    doc = json.loads(get_reporter("sarif")(sample_diagnostics()[:1], ctx))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        sarif_validator().validate(doc)


# --------------------------------------------------------------------------- json and text

def test_json_report_is_to_dict_plus_summary():
    case = RANKTABLES / "validate" / "v1_2_semantic.json"
    rep = validate_source(case.read_bytes(), "v.json")
    ctx = ReportContext.make({"v.json": rep.text}, [FileInfo("v.json", rep.form, rep.hardware)])
    doc = json.loads(get_reporter("json")(rep.diagnostics, ctx))
    assert doc["diagnostics"] == [d.to_dict() for d in rep.diagnostics]
    assert doc["summary"] == {"files": 1, "errors": 8, "warnings": 1, "notes": 0, "ok": False}
    assert doc["files"] == [{"file": "v.json", "form": "hccl-v1.2", "hardware": rep.hardware,
                             "errors": 8, "warnings": 1, "notes": 0}]
    assert doc["tool"]["name"] == "rtc"


def test_text_report_shows_the_json_line():
    case = RANKTABLES / "validate" / "v1_2_semantic.json"
    rep = validate_source(case.read_bytes(), "v.json")
    out = get_reporter("text")(rep.diagnostics, ReportContext.make({"v.json": rep.text}, [FileInfo("v.json")]))
    assert 'v.json:4:19: error[RTC633]: server_count is "4" but server_list has 3 servers' in out
    assert ' 4 |   "server_count": "4",\n   |                   ^^^\n' in out
    assert out.endswith("rtc: 8 errors, 1 warning (1 file checked)\n")


def test_summary_groups_thousands_like_the_folded_notes():
    from rtc.report.text import summary

    d1, d2, _d3, _d4 = sample_diagnostics()
    assert summary([d1._replace(repeats=9_999), d2]) == "10,000 errors, 1 warning"
    assert summary([d2._replace(repeats=999)]) == "1,000 warnings"
    assert summary([]) == "no problems found"
