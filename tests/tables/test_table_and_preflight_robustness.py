"""Robustness of `rtc validate` / `rtc import` on schema-invalid and non-Unicode tables and
of `rtc preflight report` on damaged results folders; the JSON report's spans.

One test per problem found: a legacy "lab" instance without rank_id (a crash), a lone
surrogate escape (RTC001 on stdout), an exit-codes.txt that is not UTF-8 (a crash), a
malformed expect.json (silently ignored), RTC216 on the PD table rtc itself writes, RTC216
about servers without a usable server_id, and related spans whose end came before their
start."""

from __future__ import annotations

import copy
import io
import json
import shutil
import sys
from pathlib import Path

import pytest
import typer

from conftest import EXAMPLES, TESTS, run_rtc
from rtc.cli.common import write_stdout
from rtc.diagnostics import Diagnostic, Related, Severity, Span

DATA = TESTS / "data"
CASES = DATA / "ranktables" / "cases"
CORPUS = DATA / "ranktables" / "corpus"
PREFLIGHT = DATA / "preflight"


def _json_report(*args: str, cwd: Path | None = None):
    res = run_rtc(*args, "--format", "json", cwd=cwd)
    assert "Traceback" not in res.stderr, res.stderr
    return res, json.loads(res.stdout)


def _where(d: dict) -> tuple:
    s = d["span"]
    return d["code"], Path(s["file"]).name, s["line"], s["column"]


def _line_col(text: str, needle: str) -> tuple[int, int]:
    pos = text.index(needle)
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


# --------------------------------------------------------------------------- 1


def test_legacy_lab_instance_without_rank_id_is_reported_not_a_crash(tmp_path: Path):
    doc = json.loads((CASES / "legacy_lab.json").read_text(encoding="utf-8"))
    del doc["group_list"][0]["instance_list"][0]["rank_id"]
    text = json.dumps(doc, indent=2) + "\n"
    table = tmp_path / "lab.json"
    table.write_text(text, encoding="utf-8")
    # the instance object itself: RTC611 points at its `{`
    line, _ = _line_col(text, '"instance_list": [')
    col = text.split("\n")[line].index("{") + 1

    res, rep = _json_report("validate", str(table))
    assert res.returncode == 1, res.stderr
    assert ("RTC611", "lab.json", line + 1, col) in [_where(d) for d in rep["diagnostics"]]

    imp = run_rtc("import", str(table))
    assert "Traceback" not in imp.stderr and "KeyError" not in imp.stderr, imp.stderr
    assert imp.returncode == 1
    # a legacy table is not imported (RTC661), but it is validated first
    assert "error[RTC611]" in imp.stderr and "error[RTC661]" in imp.stderr


# --------------------------------------------------------------------------- 2


def test_lone_surrogate_escape_is_rtc603_at_the_string_and_reports_still_print(tmp_path: Path):
    text = (CORPUS / "v1_0__hcomm_example__1srv_8dev.json").read_text(encoding="utf-8")
    text = text.replace('"server_id": "SERVER_ID_SV1"', '"server_id": "\\ud800"')
    # a second lone surrogate in a key: the unknown-key finding (RTC612) quotes it
    text = text.replace('"device_id": "0",', '"device_id": "0", "x\\udc00": "1",', 1)
    table = tmp_path / "sur.json"
    table.write_text(text, encoding="utf-8")
    sid = _line_col(text, '"\\ud800"')
    key = _line_col(text, '"x\\udc00"')

    res, rep = _json_report("validate", str(table))
    assert res.returncode == 1, res.stderr  # not 2 (RTC001: cannot write to standard output)
    got = [_where(d) for d in rep["diagnostics"]]
    assert ("RTC603", "sur.json", *sid) in got
    assert ("RTC603", "sur.json", *key) in got
    assert "RTC612" in {d["code"] for d in rep["diagnostics"]}  # validation went on
    rtc603 = next(d for d in rep["diagnostics"] if d["code"] == "RTC603")
    assert rtc603["hint"] and "surrogate" in rtc603["message"]

    for fmt in ("text", "sarif", "github"):
        out = run_rtc("validate", "--format", fmt, str(table))
        assert out.returncode == 1 and "RTC001" not in out.stderr, (fmt, out.stderr)
    imp = run_rtc("import", str(table))
    assert imp.returncode == 1 and "RTC001" not in imp.stderr
    assert "error[RTC603]" in imp.stderr


def test_write_stdout_escapes_what_the_stream_cannot_encode(monkeypatch):
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        write_stdout("server \ud800 ok\n")
    except typer.Exit as e:  # before the fix: RTC001 and exit 2
        pytest.fail(f"write_stdout exited with {e.exit_code}")
    assert raw.getvalue() == b"server \\ud800 ok\n"


# --------------------------------------------------------------------------- 3


def test_exit_codes_that_are_not_utf8_are_read_like_captures(tmp_path: Path):
    results = tmp_path / "link-down"
    shutil.copytree(PREFLIGHT / "link-down", results)
    (results / "a" / "exit-codes.txt").write_bytes(b"\xff\xfe")      # UTF-16 BOM, nothing else
    (results / "b" / "exit-codes.txt").write_bytes(b"\xff\xfe\x00")  # no text at all
    res, rep = _json_report("preflight", "report", str(results / "a"), str(results / "b"))
    assert res.returncode == 1, res.stderr
    got = sorted(_where(d) for d in rep["diagnostics"])
    assert got == [("RTC560", "npu1_link.txt", 2, 14), ("RTC568", "exit-codes.txt", 1, 1)]
    bad = next(d for d in rep["diagnostics"] if d["code"] == "RTC568")
    assert Path(bad["span"]["file"]).parent.name == "b"


# --------------------------------------------------------------------------- 4


@pytest.mark.parametrize("damage", ["only-format", "devices-string"])
def test_malformed_expect_json_is_rtc568_and_the_captures_are_still_judged(tmp_path: Path,
                                                                          damage: str):
    results = tmp_path / "link-down"
    shutil.copytree(PREFLIGHT / "link-down", results)
    expect = results / "b" / "expect.json"
    if damage == "only-format":
        expect.write_text('{"rtc_preflight": 1}\n', encoding="utf-8")
        where = (1, 1)
    else:
        doc = json.loads(expect.read_text(encoding="utf-8"))
        doc["devices"] = "x"
        text = json.dumps(doc, indent=2) + "\n"
        expect.write_text(text, encoding="utf-8")
        where = _line_col(text, '"devices"')
    res, rep = _json_report("preflight", "report", str(results / "a"), str(results / "b"))
    assert res.returncode == 1, res.stderr
    got = sorted(_where(d) for d in rep["diagnostics"])
    assert got == [("RTC560", "npu1_link.txt", 2, 14), ("RTC568", "expect.json", *where)]
    assert rep["servers"] == ["a", "b"]  # not "?"
    assert rep["matrix"]["servers"] == ["a", "b"]
    bad = next(d for d in rep["diagnostics"] if d["code"] == "RTC568")
    assert "devices" in bad["message"]


# --------------------------------------------------------------------------- 5


def test_pd_ranktable_rtc_writes_validates_without_server_order_warning(tmp_path: Path):
    src = (EXAMPLES / "pd-a3.rtc").read_text(encoding="utf-8")
    src = src.replace("kv_connector mooncake_layerwise", "kv_connector llmdatadist")
    assert "llmdatadist" in src
    (tmp_path / "pd-a3.rtc").write_text(src, encoding="utf-8")
    out = tmp_path / "out"
    res = run_rtc("compile", str(tmp_path / "pd-a3.rtc"), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    table = json.loads((out / "pd-ranktable.json").read_text(encoding="utf-8"))
    # host IPs 10.0.1.1, .2 (prefill) then .11, .12 (decode): not in text order
    ids = list(dict.fromkeys(d["server_id"] for key in ("prefill_device_list",
                                                         "decode_device_list")
                             for d in table[key]))
    assert ids == ["10.0.1.1", "10.0.1.2", "10.0.1.11", "10.0.1.12"]
    res, rep = _json_report("validate", str(out / "pd-ranktable.json"))
    assert res.returncode == 0, res.stderr
    assert rep["diagnostics"] == []


# --------------------------------------------------------------------------- 6


def _three_servers(first_id) -> dict:
    doc = json.loads((CORPUS / "v1_0__hcomm_example__1srv_8dev.json").read_text(encoding="utf-8"))
    base = doc["server_list"][0]
    servers = []
    for s, sid in enumerate([first_id, "node2", "node10"]):
        srv = copy.deepcopy(base)
        if sid is None:
            del srv["server_id"]
        else:
            srv["server_id"] = sid
        for k, dev in enumerate(srv["device"]):
            dev["rank_id"] = str(8 * s + k)
            dev["device_ip"] = f"192.168.{s + 1}.{k + 8}"
        servers.append(srv)
    doc["server_list"], doc["server_count"] = servers, "3"
    return doc


@pytest.mark.parametrize("first_id,code", [(None, "RTC611"), (7, "RTC610")])
def test_server_order_does_not_judge_servers_without_a_usable_server_id(tmp_path: Path,
                                                                        first_id, code):
    text = json.dumps(_three_servers(first_id), indent=2) + "\n"
    table = tmp_path / "t.json"
    table.write_text(text, encoding="utf-8")
    res, rep = _json_report("validate", str(table))
    assert res.returncode == 1, res.stderr
    order = [d for d in rep["diagnostics"] if d["code"] == "RTC216"]
    assert all("server_list[" not in d["message"] for d in rep["diagnostics"]
               if d["code"] == "RTC216"), order
    # the usable ones are still judged: node10 after node2
    assert [_where(d) for d in order] == [("RTC216", "t.json",
                                           *_line_col(text, '"node10"'))]
    assert "'node10' sorts before 'node2'" in order[0]["message"]
    assert code in {d["code"] for d in rep["diagnostics"]}


# --------------------------------------------------------------------------- 7


def test_unknown_span_end_is_written_as_the_start():
    d = Diagnostic("RTC216", Severity.WARNING, "m", Span("t.json", 3, 5, 3, 9),
                   related=(Related(Span("t.json", 1, 1), "the cluster"),
                            Related(Span("t.json", 4, 7, 2, 1), "end before start")))
    got = d.to_dict()
    assert got["span"] == {"file": "t.json", "line": 3, "column": 5, "end_line": 3,
                           "end_column": 9}
    spans = [r["span"] for r in got["related"]]
    assert [(s["line"], s["column"], s["end_line"], s["end_column"]) for s in spans] == \
        [(1, 1, 1, 1), (4, 7, 4, 7)]


def test_validate_reports_never_end_a_span_before_it_starts():
    files = ["validate/v1_0_interleaved.json",
             "corpus/bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc"]
    cwd = DATA / "ranktables"
    _, rep = _json_report("validate", *files, cwd=cwd)
    spans = [d["span"] for d in rep["diagnostics"]]
    spans += [r["span"] for d in rep["diagnostics"] for r in d["related"]]
    assert any(s["end_line"] == s["line"] == 1 and s["column"] == 1 for s in spans)
    for s in spans:
        assert (s["end_line"], s["end_column"]) >= (s["line"], s["column"]), s
    sarif = json.loads(run_rtc("validate", "--format", "sarif", *files, cwd=cwd).stdout)
    for res in sarif["runs"][0]["results"]:
        for loc in res.get("locations", []) + res.get("relatedLocations", []):
            region = loc["physicalLocation"]["region"]
            if "endLine" in region:
                assert (region["endLine"], region["endColumn"]) >= \
                    (region["startLine"], region["startColumn"]), region


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_escape_sequences_in_table_values_never_reach_the_terminal(tmp_path: Path, fmt: str):
    """A server_id holding terminal escape sequences (set the window title, clear the
    screen, a C1 control) is quoted by RTC216/RTC208's messages: the text and github
    reports show it as backslash escapes, never as the raw control characters."""
    doc = json.loads(run_rtc("compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "--stdout").stdout)
    evil = "\u001b]0;pwned\u0007\u001b[2Jnode\u0085x"
    doc["server_list"][1]["server_id"] = evil
    first = doc["server_list"][0]["device"][0]["device_ip"]
    doc["server_list"][1]["device"][0]["device_ip"] = first   # RTC208 names the server
    table = tmp_path / "esc.json"
    table.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    res = run_rtc("validate", "--format", fmt, str(table))
    assert res.returncode == 1, res.stderr
    shown = res.stdout + res.stderr
    assert "RTC208" in shown and "RTC216" in shown
    assert not any(c in shown for c in "\u001b\u0007\u0085")
    assert "\\x1b]0;pwned\\x07\\x1b[2Jnode\\x85x" in shown
    rep = json.loads(run_rtc("validate", "--format", "json", str(table)).stdout)
    assert any(evil in d["message"] for d in rep["diagnostics"])   # JSON keeps the value
