"""Rank-table loading, form detection and schema validation (rtc.tables, RTC600..RTC619).

Corpus files under tests/data/ranktables/corpus/ are byte-for-byte copies of
../shared/corpus/ranktables (provenance: tests/data/ranktables/corpus/SOURCES.md); hand-made
cases are under tests/data/ranktables/cases/.

Which corpus verdicts are decided here and which need the semantic checks (not in this module):

* #12 (.jsonc): decided here (RTC601 at 2:36; clean v1.2 after blanking the comments).
* #14/#15/#16 (masked IPs such as ``192.1.*.6``): decided here by the light character-set
  pattern on ``device_ip`` (RTC615). Whether a well-formed-looking address really parses
  (``999.1.1.1``), uniqueness of IPs, and #15's duplicate ``server_id`` are semantic checks.
* #16's extension keys: warned here (RTC618), not rejected.
* #18 (obsolete v2 keys): decided here (types, missing keys, unknown keys). Its ``local_id 9``
  is within the schema's 0..64; whether it matches the topology file is semantic.
* #2 (``device_ip: ""`` on one server): valid here; "invalid with >1 server" is semantic.
* #1, #11, #19, #20, #21: valid here (#11 gets an RTC618 note for ``IsMindIEEPJob``).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from rtc.diagnostics import Severity
from rtc.resources import load_schema
from rtc.schema import FORMS, check_schema, format_path, parse_path, schema_errors, validate_document
from rtc.tables import check_file
from rtc.tables.jsonload import load_json, strip_comments_and_trailing_commas
from rtc.tables.recognise import detect_form
from conftest import ROOT, TESTS

DATA = TESTS / "data" / "ranktables"
CORPUS = DATA / "corpus"
CASES = DATA / "cases"
SHARED = ROOT.parent / "shared" / "corpus" / "ranktables"


def errors(diags):
    return [d for d in diags if d.severity is Severity.ERROR]


def by_code(diags, code):
    return [d for d in diags if d.code == code]


def path_of(d) -> str:
    """The JSON path every schema message starts with (``path: ...``)."""
    return d.message.split(": ", 1)[0]


def fast_full_equal(doc, form_or_schema):
    fast = Counter((e.path, e.validator, e.message) for e in schema_errors(doc, form_or_schema))
    full = Counter((e.path, e.validator, e.message)
                   for e in schema_errors(doc, form_or_schema, fast=False))
    return fast, full


# =========================================================================== schemas

@pytest.mark.parametrize("form", FORMS)
def test_schema_is_valid_draft_2020_12_with_id(form):
    schema = load_schema(form)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://rtc.invalid/schemas/{form}.schema.json"


def _properties(node, where=""):
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            yield f"{where}.{name}", sub
        for k, v in node.items():
            yield from _properties(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _properties(v, f"{where}[{i}]")


@pytest.mark.parametrize("form", FORMS)
def test_every_property_is_described(form):
    schema = load_schema(form)
    missing = []
    for where, sub in _properties(schema):
        if sub is True or not isinstance(sub, dict):
            continue
        target = sub
        if "description" not in sub and "$ref" in sub:
            target = schema["$defs"][sub["$ref"].rsplit("/", 1)[1]]
        if re.search(r"/(if|then|else)\b", where):
            continue  # conditions restate a property already described
        if not target.get("description"):
            missing.append(where)
    assert not missing, missing


@pytest.mark.parametrize("form", ["hccl-v1.0", "hccl-v1.2", "hccl-v2.0"])
def test_hccl_descriptions_cite_the_docs(form):
    text = json.dumps(load_schema(form))
    assert text.count("HCCL rank table doc") >= 5


CANONICAL_V10 = {
    "version": "1.0", "status": "completed", "server_count": "2",
    "server_list": [
        {"server_id": "node_0", "host_ip": "10.0.0.6",
         "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"},
                    {"device_id": "1", "device_ip": "192.168.1.9", "rank_id": "1"}]},
        {"server_id": "node_1",
         "device": [{"device_id": "0", "device_ip": "192.168.2.8", "rank_id": "2"},
                    {"device_id": "1", "device_ip": "192.168.2.9", "rank_id": "3"}]},
    ],
}


def canonical_v12():
    doc = copy.deepcopy(CANONICAL_V10)
    doc["version"] = "1.2"
    for server in doc["server_list"]:
        for dev in server["device"]:
            dev["super_device_id"] = dev["rank_id"]
    doc["super_pod_list"] = [{"super_pod_id": "0",
                              "server_list": [{"server_id": "node_0"}, {"server_id": "node_1"}]}]
    return doc


@pytest.mark.parametrize("form,doc", [
    ("hccl-v1.0", CANONICAL_V10),
    ("hccl-v1.2", canonical_v12()),
    ("hccl-v1.0", {"version": "1.0", "status": "completed", "server_count": "1",
                   "server_list": [{"server_id": "node_0",
                                    "device": [{"device_id": "0", "rank_id": "0"}]}]}),
])
def test_canonical_compile_output_is_accepted(form, doc):
    # `rtc compile` validates its output with a plain Draft202012Validator
    assert list(Draft202012Validator(load_schema(form)).iter_errors(doc)) == []
    assert validate_document(doc, form) == []


@pytest.mark.parametrize("mutate,path", [
    (lambda d: d["server_list"][0]["device"][1].__setitem__("rank_id", 1),
     ["server_list", 0, "device", 1, "rank_id"]),
    (lambda d: d.__setitem__("server_count", 2), ["server_count"]),
    (lambda d: d["server_list"][1]["device"][0].pop("device_id"), ["server_list", 1, "device", 0]),
    (lambda d: d["server_list"][0].__setitem__("hostip", "1.2.3.4"), ["server_list", 0]),
])
def test_stock_validator_rejects_broken_compile_output(mutate, path):
    doc = copy.deepcopy(CANONICAL_V10)
    mutate(doc)
    errs = list(Draft202012Validator(load_schema("hccl-v1.0")).iter_errors(doc))
    assert [list(e.absolute_path) for e in errs] == [path]


# =========================================================================== corpus verdicts

CORPUS_VERDICTS = {
    # file: (form, error codes, non-error codes)
    "v1_0__hcomm_example__1srv_8dev.json": ("hccl-v1.0", set(), set()),
    "v1_0__hccl_tf_example__1srv_8dev_empty_device_ip.json": ("hccl-v1.0", set(), set()),
    "v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json": ("hccl-v1.2", set(), {"RTC618"}),
    "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc": ("hccl-v1.2", {"RTC601"}, set()),
    "bad__v1_0_masked_ips__mindspore_docs_rank_table_8pcs.json": ("hccl-v1.0", {"RTC615"}, set()),
    "bad__v1_0_dup_server_id_masked_ips__mindspore_docs_rank_table_16pcs.json": ("hccl-v1.0", {"RTC615"}, set()),
    "bad__v1_0_ext_cluster_list_masked_ips__mindspore_docs_cross_cluster_16pcs.json":
        ("hccl-v1.0", {"RTC615"}, {"RTC618"}),
    "bad__v2_0_obsolete_keys__hcomm_st__ranktable_2p_error.json":
        ("hccl-v2.0", {"RTC610", "RTC611", "RTC612"}, set()),
    "v2_0__hcomm_example__2rank_ipv4.json": ("hccl-v2.0", set(), set()),
    "v2_0__hcomm_st_1d_2p_mesh__ranktable_no_status.json": ("hccl-v2.0", set(), set()),
    "v2_0_topofile__hcomm_st_1d_2p_mesh__topo.json": ("topo-v2.0", set(), set()),
}


def test_corpus_copies_are_byte_identical():
    copies = sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".json", ".jsonc"))
    assert copies == sorted(CORPUS_VERDICTS)
    if SHARED.is_dir():
        for name in copies:
            assert (CORPUS / name).read_bytes() == (SHARED / name).read_bytes(), name


@pytest.mark.parametrize("name", sorted(CORPUS_VERDICTS))
def test_corpus_verdict(name):
    form, error_codes, other_codes = CORPUS_VERDICTS[name]
    result = check_file(CORPUS / name)
    assert result.form == form
    assert {d.code for d in errors(result.diagnostics)} == error_codes
    assert {d.code for d in result.diagnostics if d.severity is not Severity.ERROR} == other_codes
    assert result.ok == (not error_codes)
    assert name.startswith("bad__") == (not result.ok)


@pytest.mark.parametrize("name", sorted(CORPUS_VERDICTS))
def test_corpus_fast_validation_equals_full_validation(name):
    result = check_file(CORPUS / name)
    fast, full = fast_full_equal(result.doc, result.form)
    assert fast == full


def test_jsonc_fails_with_comment_rule_at_line_2():
    result = check_file(CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc")
    (d,) = result.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("RTC601", 2, 36)
    assert "and 8 more" in d.message
    assert result.source_map.recovered


def test_jsonc_passes_v12_schema_after_stripping_comments():
    raw = (CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc").read_text("utf-8")
    stripped, comments, commas = strip_comments_and_trailing_commas(raw)
    assert len(comments) == 9 and commas == []
    doc = json.loads(stripped)
    assert detect_form(doc) == ("hccl-v1.2", [])
    assert validate_document(doc, "hccl-v1.2") == []
    # same line structure: the super_pod_list key is still on line 48
    smap = load_json(stripped)[1]
    assert smap.locate("super_pod_list", key=True).line == raw[:raw.index('"super_pod_list"')].count("\n") + 1


def test_jsonc_without_recovery_returns_no_document():
    doc, smap, diags = load_json(CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc",
                                 recover=False)
    assert doc is None and [d.code for d in diags] == ["RTC601"]


def test_masked_ips_are_rejected_by_the_light_pattern():
    result = check_file(CORPUS / "bad__v1_0_masked_ips__mindspore_docs_rank_table_8pcs.json")
    found = by_code(result.diagnostics, "RTC615")
    assert [path_of(d) for d in found] == [f"server_list[0].device[{i}].device_ip" for i in range(8)]
    assert (found[0].span.line, found[0].span.column) == (8, 48)
    assert "masked documentation placeholder" in found[0].hint
    assert found[0].subject == "server 10.*.*.*, device 0, rank 0"


def test_duplicate_server_id_is_left_to_semantic_checks():
    result = check_file(CORPUS / "bad__v1_0_dup_server_id_masked_ips__mindspore_docs_rank_table_16pcs.json")
    assert len(result.diagnostics) == 16
    assert all(path_of(d).endswith(".device_ip") for d in result.diagnostics)


def test_cross_cluster_extension_keys_are_warned_not_rejected():
    result = check_file(CORPUS / "bad__v1_0_ext_cluster_list_masked_ips__mindspore_docs_cross_cluster_16pcs.json")
    ext = by_code(result.diagnostics, "RTC618")
    assert {path_of(d).rsplit(".", 1)[-1] for d in ext} == {"server_ip", "pod_ip", "dpu_ip", "numa_id", "cluster_list"}
    assert all(d.severity is Severity.WARNING for d in ext)
    dpu = next(d for d in ext if "dpu_ip" in d.message)
    assert "found 16 times" in dpu.message
    assert (dpu.span.line, dpu.span.column) == (9, 70)  # the first "dpu_ip" key
    cl = next(d for d in ext if path_of(d) == "cluster_list")
    assert (cl.span.line, cl.span.column) == (36, 3)
    assert not by_code(result.diagnostics, "RTC612")


def test_operator_log_key_is_only_a_note():
    result = check_file(CORPUS / "v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json")
    (d,) = result.diagnostics
    assert (d.code, d.severity, d.span.line, d.span.column) == ("RTC618", Severity.NOTE, 1, 2)
    assert path_of(d) == "IsMindIEEPJob"


def test_obsolete_v2_draft_fixture_findings():
    result = check_file(CORPUS / "bad__v2_0_obsolete_keys__hcomm_st__ranktable_2p_error.json")
    got = {(d.code, path_of(d)) for d in result.diagnostics}
    expected = {("RTC610", "rank_count"), ("RTC612", "replace_count"), ("RTC612", "replace_list")}
    for r in (0, 1):
        expected.add(("RTC611", f"rank_list[{r}]"))  # device_id
        lvl = f"rank_list[{r}].level_list[0]"
        expected |= {("RTC611", lvl)} | {("RTC612", f"{lvl}.{k}") for k in
                                          ("level", "id", "fabric_type", "rank_addr_type", "rank_addrs")}
    assert got == expected
    rank_count = by_code(result.diagnostics, "RTC610")[0]
    assert (rank_count.span.line, rank_count.span.column) == (3, 17)
    assert "JSON integer" in rank_count.message and 'write "rank_count": 2' in rank_count.hint
    missing = [d.message for d in result.diagnostics if d.code == "RTC611" and path_of(d) == "rank_list[0]"]
    assert missing == ["rank_list[0]: required key `device_id` is missing"]
    addr = next(d for d in result.diagnostics if d.code == "RTC611" and "rank_addr_list" in d.message
                and path_of(d) == "rank_list[0].level_list[0]")
    assert addr.hint.startswith("`rank_addrs` is present")


# =========================================================================== hand-made cases

CASE_FINDINGS = [
    # file, code, line, column, json path, text expected in message or hint
    ("v1_0_int_rank_id.json", "RTC610", 10, 67, "server_list[0].device[1].rank_id", 'write "rank_id": "1"'),
    ("v1_0_missing_device_id.json", "RTC611", 10, 9, "server_list[0].device[1]", "`device_id` is missing"),
    ("v1_0_misspelled_devcie_ip.json", "RTC612", 15, 28, "server_list[1].device[0].devcie_ip",
     "did you mean `device_ip`?"),
    ("v1_0_wrong_status.json", "RTC614", 3, 13, "status", 'did you mean "completed"?'),
    ("v1_0_server_count_number.json", "RTC610", 4, 19, "server_count", 'write "server_count": "1"'),
    ("v1_0_bad_values.json", "RTC615", 6, 72, "server_list[0].device[0].device_ip", "remove the spaces"),
    ("v1_0_bad_values.json", "RTC615", 6, 115, "server_list[0].device[0].device_port", "1..65535"),
    ("v1_0_bad_values.json", "RTC615", 6, 135, "server_list[0].device[0].rank_id", "decimal number"),
    ("v1_0_bad_values.json", "RTC617", 7, 19, "server_list[1].server_id", "at most 64"),
    ("v1_0_bad_values.json", "RTC616", 7, 104, "server_list[1].device", "`device` is empty"),
    ("v1_0_with_v12_keys.json", "RTC613", 9, 28, "server_list[0].device[0].super_device_id", "found 2 times"),
    ("v1_0_with_v12_keys.json", "RTC613", 14, 3, "super_pod_list", '"version": "1.2"'),
    ("v2_0_bad_values.json", "RTC610", 4, 13, "detour", '"true" or "false"'),
    ("v2_0_bad_values.json", "RTC610", 7, 18, "rank_list[0].rank_id", "JSON integer"),
    ("v2_0_bad_values.json", "RTC617", 8, 19, "rank_list[0].local_id", "<= 64"),
    ("v2_0_bad_values.json", "RTC617", 12, 24, "rank_list[0].level_list[0].net_layer", "<= 7"),
    ("v2_0_bad_values.json", "RTC615", 16, 43, "rank_list[0].level_list[0].rank_addr_list[0].addr",
     "dotted IPv4 address"),
    ("v2_0_bad_values.json", "RTC614", 17, 27, "rank_list[0].level_list[0].rank_addr_list[1].addr_type",
     "case-sensitive"),
    ("v2_0_bad_values.json", "RTC616", 17, 64, "rank_list[0].level_list[0].rank_addr_list[1].ports", "empty"),
    ("pd_ranktable_bad.json", "RTC610", 5, 44, "prefill_device_list[0].device_id", "JSON string"),
    ("pd_ranktable_bad.json", "RTC611", 8, 5, "decode_device_list[0]", "`cluster_id` is missing"),
    ("legacy_lab.json", "RTC614", 18, 30, "para_plane_nic_location", '"device"'),
    ("v2_0_with_server_list.json", "RTC612", 5, 3, "server_list", "is a key of HCCL rank table version \"1.0\""),
    ("v2_0_with_server_list.json", "RTC611", 1, 1, "the top level", "`rank_list` is missing"),
]


@pytest.mark.parametrize("name,code,line,col,path,text", CASE_FINDINGS)
def test_case_finding(name, code, line, col, path, text):
    result = check_file(CASES / name)
    matches = [d for d in result.diagnostics if d.code == code and path_of(d) == path]
    assert len(matches) == 1, [(d.code, d.message) for d in result.diagnostics]
    d = matches[0]
    assert (d.span.file, d.span.line, d.span.column) == (str(CASES / name), line, col)
    assert text in d.message + " " + (d.hint or "")


@pytest.mark.parametrize("name,count", [
    ("v1_0_int_rank_id.json", 1), ("v1_0_missing_device_id.json", 1), ("v1_0_misspelled_devcie_ip.json", 1),
    ("v1_0_wrong_status.json", 1), ("v1_0_server_count_number.json", 1), ("v1_0_bad_values.json", 5),
    ("v1_0_with_v12_keys.json", 2), ("v2_0_bad_values.json", 7), ("pd_ranktable_bad.json", 2),
    ("legacy_lab.json", 1), ("v2_0_with_server_list.json", 3),
])
def test_case_has_no_other_findings(name, count):
    result = check_file(CASES / name)
    assert len(result.diagnostics) == count, [(d.code, d.message) for d in result.diagnostics]
    fast, full = fast_full_equal(result.doc, result.form)
    assert fast == full


@pytest.mark.parametrize("name,form", [
    ("pd_ranktable_a3.json", "pd-ranktable"),
    ("legacy_cloud.json", "hccl-legacy-cloud"),
])
def test_valid_other_forms(name, form):
    result = check_file(CASES / name)
    assert result.form == form and result.diagnostics == []


def test_key_of_another_version_is_not_suggested_as_a_typo():
    result = check_file(CASES / "v2_0_with_server_list.json")
    assert [(d.code, d.severity, d.span.line, d.span.column) for d in by_code(result.diagnostics, "RTC608")] == [
        ("RTC608", Severity.WARNING, 2, 14)]
    unknown = by_code(result.diagnostics, "RTC612")[0]
    assert "did you mean" not in unknown.message
    missing = by_code(result.diagnostics, "RTC611")[0]
    assert "server_list" not in missing.hint


def test_did_you_mean_skips_keys_already_present_and_wrong_types():
    result = check_file(CORPUS / "bad__v2_0_obsolete_keys__hcomm_st__ranktable_2p_error.json")
    hints = {path_of(d): (d.message, d.hint) for d in result.diagnostics if d.code == "RTC612"}
    # rank_count / rank_list exist already, so replace_count / replace_list are not typos of them
    assert "did you mean" not in hints["replace_count"][0]
    # rank_addr_type holds a string, rank_addr_list is an array: no suggestion
    assert "did you mean" not in hints["rank_list[0].level_list[0].rank_addr_type"][0]
    assert "did you mean `rank_addr_list`" in hints["rank_list[0].level_list[0].rank_addrs"][0]


def test_v12_keys_in_v10_are_warnings_not_errors():
    result = check_file(CASES / "v1_0_with_v12_keys.json")
    assert result.ok and {d.severity for d in result.diagnostics} == {Severity.WARNING}


def test_trailing_comma_points_at_first_and_recovers():
    result = check_file(CASES / "v1_0_trailing_comma.json")
    (d,) = result.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("RTC602", 10, 71)
    assert "and 1 more" in d.message
    assert result.form == "hccl-v1.0" and result.doc["server_list"][0]["device"][1]["rank_id"] == "1"


def test_block_comment():
    result = check_file(CASES / "v1_2_block_comment.json")
    (d,) = result.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("RTC601", 2, 21)
    assert "/* */" in d.message


def test_comment_and_trailing_comma_both_reported():
    text = '{\n  "a": 1, // one\n  "b": [1, 2,],\n}\n'
    doc, smap, diags = load_json(text, filename="t.json")
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("RTC601", 2, 11), ("RTC602", 3, 13)]
    assert "and 1 more" in diags[1].message
    assert doc == {"a": 1, "b": [1, 2]}


def test_comment_markers_inside_strings_are_not_comments():
    text = '{"url": "http://x/*y*/", "ip": "1.2.3.4",}'
    doc, smap, diags = load_json(text)
    assert [d.code for d in diags] == ["RTC602"]
    assert doc == {"url": "http://x/*y*/", "ip": "1.2.3.4"}


def test_other_syntax_error_after_a_comment_is_still_reported():
    text = '{\n  // note\n  "a": 1\n  "b": 2\n}'
    doc, smap, diags = load_json(text)
    assert doc is None
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("RTC601", 2, 3), ("RTC600", 3, 9)]


def test_missing_comma_points_where_it_belongs():
    doc, smap, diags = load_json(CASES / "v1_0_missing_comma.json")
    (d,) = diags
    assert doc is None
    assert (d.code, d.span.line, d.span.column) == ("RTC600", 3, 24)
    assert "missing `,`" in d.message and "line 4, column 3" in d.message


@pytest.mark.parametrize("text,line,col,words", [
    ("", 1, 1, "empty"),
    ("   \n", 1, 1, "empty"),
    ("{'version': '1.0'}", 1, 2, "double quotes"),
    ('{"a": \'x\'}', 1, 7, "double quotes"),
    ('{"a": True}', 1, 7, "Python"),
    ('{"a": NaN}', 1, 7, "NaN"),
    ('{"a": [1, -Infinity]}', 1, 11, "Infinity"),
    ('{version: "1.0"}', 1, 2, "`version` is not in double quotes"),
    ('{"a": "x}', 1, 7, "never closed"),
    ('{"a": "x\ty"}', 1, 9, "control character"),
    ('{"a": "\\q"}', 1, 8, "escape"),
    ('{"a": 1}}', 1, 9, "after the end"),
    ('{"a" 1}', 1, 6, "`:`"),
    ('{"a": [1, 2}', 1, 12, "`,`"),
    ('{"a": ', 1, 7, "ends"),
])
def test_syntax_errors(text, line, col, words):
    doc, smap, diags = load_json(text, filename="x.json")
    assert doc is None
    (d,) = diags
    assert (d.code, d.span.file, d.span.line, d.span.column) == ("RTC600", "x.json", line, col)
    assert words in d.message + " " + (d.hint or "")


def test_encoding_problems(tmp_path):
    utf16 = tmp_path / "u16.json"
    utf16.write_bytes('{"version": "1.0"}'.encode("utf-16"))
    doc, smap, diags = load_json(utf16)
    assert doc is None and [(d.code, d.span.line) for d in diags] == [("RTC603", 1)]
    assert "UTF-16" in diags[0].message

    latin1 = tmp_path / "l1.json"
    latin1.write_bytes(b'{\n  "server_id": "caf\xe9"\n}')
    doc, smap, diags = load_json(latin1)
    assert doc is None and [(d.code, d.span.line, d.span.column) for d in diags] == [("RTC603", 2, 20)]

    bom = tmp_path / "bom.json"
    bom.write_bytes(b'\xef\xbb\xbf{"a": "1"}')
    doc, smap, diags = load_json(bom)
    assert doc == {"a": "1"} and diags == []
    assert smap.locate("a").column == 7  # columns do not count the BOM

    nul = load_json('{"a": "1"}\x00')
    assert nul[0] is None and nul[2][0].code == "RTC603"

    missing = load_json(tmp_path / "nope.json")
    assert missing[0] is None and missing[2][0].code == "RTC603"


def test_duplicate_key_warning_with_related_first_occurrence():
    result = check_file(CASES / "v1_0_duplicate_key.json")
    (d,) = result.diagnostics
    assert (d.code, d.severity, d.span.line, d.span.column) == ("RTC604", Severity.WARNING, 9, 56)
    assert path_of(d) == "server_list[0].device[0].device_ip"
    assert [(r.span.line, r.span.column) for r in d.related] == [(9, 28)]
    assert result.doc["server_list"][0]["device"][0]["device_ip"] == "192.168.1.9"  # last wins


def test_duplicate_top_level_key():
    doc, smap, diags = load_json('{"status": "initializing",\n "status": "completed"}')
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("RTC604", 2, 2)]
    assert smap.locate("status").column == 12  # the surviving (last) value


def test_every_rule_is_documented_and_exercised():
    from rtc.schema import explain
    from rtc.tables import jsonload, recognise

    modules = (jsonload, recognise, explain)
    owned = {f"RTC6{n:02d}" for n in range(20)} | {"RTC668"}   # RTC668: MindIE config
    for m in modules:
        for r in m.RULES:
            assert "What" in r.explanation and "Why" in r.explanation \
                and "Fix" in r.explanation, r.code
    all_codes = {r.code for m in modules for r in m.RULES}
    assert all_codes == owned

    seen = set()
    for folder in (CORPUS, CASES):
        for f in folder.iterdir():
            if f.suffix in (".json", ".jsonc"):
                seen |= {d.code for d in check_file(f).diagnostics}
    seen |= {d.code for d in detect_form({"version": "1.0"}, override="nope")[1]}
    custom = {"type": "object", "properties": {"t": {"type": "array", "uniqueItems": True}}}
    seen |= {d.code for d in validate_document({"t": [1, 1]}, "custom", schema=custom)}
    assert seen == owned


def test_latin1_bytes_are_reported_at_the_byte():
    doc, smap, diags = load_json(CASES / "v1_0_latin1_bytes.json")
    assert doc is None
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("RTC603", 4, 35)]
    assert "0xf6" in diags[0].message


def test_spans_without_a_source_map():
    doc = json.loads((CASES / "v1_0_int_rank_id.json").read_text())
    (d,) = validate_document(doc, "hccl-v1.0", filename="given.json")
    assert (d.span.file, d.span.line, d.span.column) == ("given.json", 1, 1)
    assert path_of(d) == "server_list[0].device[1].rank_id"
    (d,) = validate_document(doc, "hccl-v1.0")
    assert d.span is None


# =========================================================================== form detection

@pytest.mark.parametrize("doc,form", [
    ({"version": "1.0", "server_list": []}, "hccl-v1.0"),
    ({"version": "1.2", "server_list": []}, "hccl-v1.2"),
    ({"version": "2.0", "rank_list": []}, "hccl-v2.0"),
    ({"version": 1.0, "server_list": []}, "hccl-v1.0"),  # number: the schema reports the type
    ({"group_list": [], "status": "completed"}, "hccl-legacy-cloud"),
    ({"group_list": [], "deploy_mode": "lab"}, "hccl-legacy-lab"),
    ({"version": "1.2", "prefill_device_list": [], "decode_device_list": []}, "pd-ranktable"),
    ({"version": "2.0", "peer_list": [], "edge_list": []}, "topo-v2.0"),
    ({"server_list": []}, "hccl-v1.0"),
])
def test_detect_form(doc, form):
    assert detect_form(doc) == (form, [])


def test_version_as_number_is_a_type_error():
    diags = validate_document({"version": 1.0, "status": "completed",
                               "server_list": [{"server_id": "a", "device": [{"device_id": "0", "rank_id": "0"}]}]},
                              "hccl-v1.0")
    assert [(d.code, path_of(d)) for d in diags] == [("RTC610", "version")]
    assert 'write "version": "1.0"' in diags[0].hint


def test_missing_version_is_reported_by_the_schema_with_a_hint():
    result = check_file('{"status": "completed", "server_list": '
                        '[{"server_id": "a", "device": [{"device_id": "0", "rank_id": "0"}]}]}')
    (d,) = result.diagnostics
    assert (d.code, path_of(d), result.form) == ("RTC611", "the top level", "hccl-v1.0")
    assert "legacy group_list" in d.hint


@pytest.mark.parametrize("text,code,col", [
    ((CASES / "v1_0_unknown_version.json").read_text(), "RTC605", 13),
    ((CASES / "v1_1_heterogeneous.json").read_text(), "RTC606", 13),
    ("[1, 2]", "RTC607", 1),
    ('{"hello": "world"}', "RTC607", 1),
])
def test_undetectable_forms(text, code, col):
    doc, smap, _ = load_json(text, filename="f.json")
    form, diags = detect_form(doc, source_map=smap)
    assert form is None
    assert [(d.code, d.severity, d.span.line, d.span.column) for d in diags] == [(code, Severity.ERROR, 1, col)]


def test_unknown_version_suggests_by_content():
    form, diags = detect_form({"version": "2", "rank_list": []})
    assert form is None and 'did you mean "version": "2.0"' in diags[0].hint


def test_version_content_mismatch_warns():
    doc, smap, _ = load_json('{"version": "2.0",\n "server_list": []}', filename="m.json")
    form, diags = detect_form(doc, source_map=smap)
    assert form == "hccl-v2.0"
    assert [(d.code, d.severity, d.span.line) for d in diags] == [("RTC608", Severity.WARNING, 1)]


def test_schema_override():
    doc = json.loads((CORPUS / "v1_0__hcomm_example__1srv_8dev.json").read_text())
    form, diags = detect_form(doc, override="hccl-v1.2")
    assert form == "hccl-v1.2" and [(d.code, d.severity) for d in diags] == [("RTC609", Severity.NOTE)]
    # validating a 1.0 table as 1.2 reports the version value
    findings = validate_document(doc, form)
    assert [(d.code, path_of(d)) for d in findings] == [("RTC614", "version")]

    form, diags = detect_form(doc, override="hccl-v1.1")
    assert form is None and diags[0].code == "RTC609" and diags[0].severity is Severity.ERROR
    assert "did you mean 'hccl-v1." in diags[0].message

    assert detect_form(doc, override="hccl-v1.0") == ("hccl-v1.0", [])
    result = check_file(CORPUS / "v1_0__hcomm_example__1srv_8dev.json", schema="pd-ranktable")
    assert result.form == "pd-ranktable" and not result.ok


# =========================================================================== JSON paths / source map

@given(st.lists(st.one_of(st.integers(min_value=0, max_value=10 ** 6),
                          st.text(min_size=1, max_size=12)), max_size=6))
def test_path_format_parse_roundtrip(path):
    assert parse_path(format_path(path)) == tuple(path)


def test_path_format():
    assert format_path(("server_list", 1, "device", 3, "device_ip")) == "server_list[1].device[3].device_ip"
    assert format_path(()) == "$"
    assert format_path(("a b", 0)) == '["a b"][0]'
    assert parse_path("$.server_list[2]") == ("server_list", 2)
    with pytest.raises(ValueError):
        parse_path("server_list[x]")


SAMPLE = (
    '{\n'
    '\t"name": "节点-0", "n": 5,\n'
    '  "list": [ {"k": [10, {"deep": null}]}, "s" ],\n'
    '  "empty": {}, "e2": []\n'
    '}\n'
)


@pytest.mark.parametrize("path,key,expected", [
    ((), False, (1, 1, 0, 0)),
    (("name",), False, (2, 10, 2, 16)),  # CJK characters count as one column each
    (("name",), True, (2, 2, 2, 8)),
    (("n",), False, (2, 23, 2, 24)),
    ("list[0].k[1].deep", False, (3, 33, 3, 37)),
    ("list[0].k[1].deep", True, (3, 25, 3, 31)),
    ("list[1]", False, (3, 42, 3, 45)),
    ("list[0]", False, (3, 13, 0, 0)),
    ("empty", False, (4, 12, 0, 0)),
])
def test_locate(path, key, expected):
    doc, smap, diags = load_json(SAMPLE, filename="s.json")
    assert diags == []
    s = smap.locate(path, key=key)
    assert (s.line, s.column, s.end_line, s.end_column) == expected


def test_locate_missing_and_nearest():
    doc, smap, _ = load_json(SAMPLE, filename="s.json")
    assert smap.locate("list[5]") is None
    assert smap.locate("nope") is None
    assert smap.locate("n.x") is None  # scalar has no members
    assert smap.locate("list.x") is None  # array has no keys
    near = smap.locate_nearest("list[0].k[7]")
    assert (near.line, near.column) == (3, 19)  # the "k" array


def test_locate_agrees_with_the_parser_everywhere():
    text = (CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc").read_text("utf-8")
    doc, smap, _ = load_json(text)

    def walk(node, path):
        yield path, node
        if isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from walk(v, path + (i,))

    decoder = json.JSONDecoder()
    count = 0
    for path, value in walk(doc, ()):
        off = smap.value_offset(path)
        assert decoder.raw_decode(smap.text, off)[0] == value, path
        if path and isinstance(path[-1], str):
            k = smap.key_offset(path)
            assert smap.text[k:k + len(path[-1]) + 2] == json.dumps(path[-1], ensure_ascii=False)
        count += 1
    assert count == 180  # every value of the 16-rank A3 example


# =========================================================================== fast == full validation

BASES = {
    "hccl-v1.0": CANONICAL_V10,
    "hccl-v1.2": canonical_v12(),
    "hccl-v2.0": json.loads((CORPUS / "v2_0__hcomm_example__2rank_ipv4.json").read_text()),
    "topo-v2.0": json.loads((CORPUS / "v2_0_topofile__hcomm_st_1d_2p_mesh__topo.json").read_text()),
    "pd-ranktable": json.loads((CASES / "pd_ranktable_a3.json").read_text()),
}

VALUES = [0, 1, 70000, -1, 1.5, "", "0", "x*y", "192.168.1.1", "192.168.1.1, 10.0.0.1", "16666", "IPV4",
          "EID", "completed", "PEER2PEER", "0/1", True, None, [], {}, ["0/1"], [{}], {"server_id": "a"}]
KEYS = ["devcie_ip", "dpu_ip", "super_device_id", "foo", "server_ip", "rank_id", "device_id", "level",
        "addr", "net_layer", "local_b", "IsMindIEEPJob", "backup_device_ip"]


def _all_paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _all_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _all_paths(v, path + (i,))


def _apply(doc, op):
    kind, pick, arg = op
    paths = list(_all_paths(doc))
    path = paths[pick % len(paths)]
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if kind == "set" and path:
        parent[path[-1]] = copy.deepcopy(VALUES[arg % len(VALUES)])
    elif kind == "delete" and path:
        del parent[path[-1]]
    elif kind == "add":
        target = parent[path[-1]] if path else doc
        if isinstance(target, dict):
            target[KEYS[arg % len(KEYS)]] = copy.deepcopy(VALUES[(arg * 7) % len(VALUES)])
        elif isinstance(target, list):
            target.append(copy.deepcopy(target[0]) if target and arg % 2 else copy.deepcopy(VALUES[arg % len(VALUES)]))


OPS = st.lists(st.tuples(st.sampled_from(["set", "delete", "add"]), st.integers(0, 10 ** 6),
                         st.integers(0, 10 ** 6)), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(sorted(BASES)), ops=OPS)
def test_fast_validation_equals_full_validation(form, ops):
    doc = copy.deepcopy(BASES[form])
    for op in ops:
        _apply(doc, op)
    fast, full = fast_full_equal(doc, form)
    assert fast == full
    # and the explained findings are stable too
    def key(f):
        return (repr(f.path), f.code, f.message)
    assert sorted(check_schema(doc, form), key=key) == sorted(check_schema(doc, form, fast=False), key=key)


@pytest.mark.parametrize("form", ["hccl-v1.0", "hccl-v1.2"])
def test_type_errors_on_every_rank_equal_full_validation(form):
    # MindSpore's first merge_hccl.py wrote every rank_id as a number: the fast path
    # rebuilds the type error per value instead of asking jsonschema 65,536 times
    doc = make_table(servers=4, per_server=8)
    if form == "hccl-v1.2":
        doc["version"] = "1.2"
    values = [0, 1, 2.5, True, None, -3, 10 ** 12, False]
    for i, d in enumerate(dev for s in doc["server_list"] for dev in s["device"]):
        d["rank_id"] = values[i % len(values)]
        if i % 5 == 0:
            d["device_id"] = i  # a second schema, the same shortcut
    fast, full = fast_full_equal(doc, form)
    assert fast == full
    assert sum(n for (path, v, _), n in fast.items() if path[-1] == "rank_id" and v == "type") == 32


def test_fast_path_for_extension_keys_on_otherwise_valid_objects():
    doc = make_table(servers=64, per_server=8)
    for i, server in enumerate(doc["server_list"]):
        server["server_ip"] = "10.0.0.1"
        for dev in server["device"]:
            dev["dpu_ip"] = "8.2.17.60"
            if i % 3 == 0:
                dev["super_device_id"] = dev["rank_id"]
    doc["server_list"][5]["device"][2]["rank_id"] = 42  # one real error among them
    fast, full = fast_full_equal(doc, "hccl-v1.0")
    assert fast == full
    assert Counter(v for (_, v, _) in fast.elements()) == {
        "x-rtc-extension": 64 + 512, "x-rtc-other-version": 22 * 8, "type": 1}
    findings = validate_document(doc, "hccl-v1.0")
    assert sorted((d.code, d.message.rsplit("(", 1)[-1]) for d in findings if d.code != "RTC610") == [
        ("RTC613", "found 176 times; first here)"),
        ("RTC618", "found 512 times; first here)"),
        ("RTC618", "found 64 times; first here)"),
    ]


def test_best_match_and_fallback_rule_with_a_custom_schema():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "port": {"oneOf": [{"type": "string", "pattern": "^[0-9]+$"}, {"type": "integer", "minimum": 1}]},
            "addr": {"anyOf": [{"type": "object", "required": ["ip"], "properties": {"ip": {"type": "string"}}},
                               {"type": "array"}]},
            "tags": {"type": "array", "uniqueItems": True},
        },
    }
    doc = {"port": -3, "addr": {"ip": 5}, "tags": ["a", "a"]}
    fast, full = fast_full_equal(doc, schema)
    assert fast == full
    diags = validate_document(doc, "custom", schema=schema, filename="c.json")
    got = {(d.code, path_of(d)) for d in diags}
    # best_match descends into the anyOf to the deeper, more specific error ...
    assert ("RTC610", "addr.ip") in got
    # ... picks the minimum violation for the integer alternative of the oneOf ...
    assert ("RTC617", "port") in got
    # ... and uniqueItems has no dedicated rule
    assert ("RTC619", "tags") in got
    assert len(got) == 3


# =========================================================================== scale

def make_table(servers=8192, per_server=8):
    server_list = []
    rank = 0
    for s in range(servers):
        devices = []
        for d in range(per_server):
            devices.append({"device_id": str(d), "device_ip": f"10.{(s >> 8) & 255}.{s & 255}.{d + 1}",
                            "rank_id": str(rank)})
            rank += 1
        server_list.append({"server_id": f"node_{s:05d}", "host_ip": f"172.16.{(s >> 8) & 255}.{s & 255}",
                            "device": devices})
    return {"version": "1.0", "status": "completed", "server_count": str(servers), "server_list": server_list}


def test_65536_rank_table_loads_and_validates(record_property):
    doc = make_table()
    text = json.dumps(doc, indent=2)
    t0 = time.perf_counter()
    loaded, smap, diags = load_json(text, filename="big.json")
    t1 = time.perf_counter()
    form, more = detect_form(loaded, source_map=smap)
    findings = validate_document(loaded, form, source_map=smap)
    t2 = time.perf_counter()
    assert loaded == doc and diags == [] and more == [] and form == "hccl-v1.0" and findings == []
    last = smap.locate(("server_list", 8191, "device", 7, "device_ip"))
    assert last.line == text.count("\n", 0, text.rindex('"10.31.255.8"')) + 1
    record_property("load_s", round(t1 - t0, 3))
    record_property("detect_validate_s", round(t2 - t1, 3))
    print(f"\n65,536 ranks ({len(text) / 1e6:.1f} MB): load {t1 - t0:.3f}s, detect+validate {t2 - t1:.3f}s")

    # a few errors deep inside the big table are found and located exactly
    bad = copy.deepcopy(doc)
    bad["server_list"][8191]["device"][7]["rank_id"] = 65535
    bad["server_list"][4000]["device"][3]["devcie_ip"] = bad["server_list"][4000]["device"][3].pop("device_ip")
    bad["status"] = "done"
    bad_text = json.dumps(bad, indent=2)
    loaded, smap, _ = load_json(bad_text, filename="big.json")
    findings = validate_document(loaded, "hccl-v1.0", source_map=smap)

    def line_of(needle, start=0):
        return bad_text.count("\n", 0, bad_text.index(needle, start)) + 1

    got = [(d.code, path_of(d), d.span.line) for d in findings]
    assert got == [
        ("RTC614", "status", line_of('"done"')),
        ("RTC612", "server_list[4000].device[3].devcie_ip", line_of('"devcie_ip"')),
        ("RTC610", "server_list[8191].device[7].rank_id", line_of('"rank_id": 65535')),
    ]


PLAN_GOLDENS = [p for p in sorted((TESTS / "golden").glob("*/plan.json"))
                if any(j["nodes"] for j in json.loads(p.read_text(encoding="utf-8"))["jobs"])]


def _plan_mutations(doc):
    """The plan as written, and copies broken where prefixItems (a node's ``ranks``, a
    name/value pair) and propertyNames / additionalProperties (a job's ``groups``) apply."""
    yield doc
    job = doc["jobs"][0]
    node = job["nodes"][0]
    for change in (lambda n, j: n.__setitem__("ranks", [0]),
                   lambda n, j: n.__setitem__("ranks", [0, "8"]),
                   lambda n, j: n.__setitem__("ranks", [0, 8, 9]),
                   lambda n, j: n["env"].append(["HCCL_IF_IP"]) if n["env"] is not None else None,
                   lambda n, j: j["groups"].__setitem__("", [[0]]),
                   lambda n, j: j["groups"].__setitem__("tp", [[0, -1]]),
                   lambda n, j: j["groups"].__setitem__("tp", [["0"]])):
        broken = copy.deepcopy(doc)
        change(broken["jobs"][0]["nodes"][0], broken["jobs"][0])
        yield broken


@pytest.mark.parametrize("golden", PLAN_GOLDENS, ids=lambda p: p.parent.name)
def test_fast_validation_of_plans_equals_full_validation(golden):
    doc = json.loads(golden.read_text(encoding="utf-8"))
    schema = load_schema("plan")
    doc["jobs"] = [j for j in doc["jobs"] if j["nodes"]]
    for n, variant in enumerate(_plan_mutations(doc)):
        fast, full = fast_full_equal(variant, schema)
        assert fast == full, n
        assert (n == 0) == (not full), n  # the golden is valid, every mutation is not


@pytest.mark.parametrize("tail", ["\n", "\n\n  ", ""])
def test_a_table_cut_after_a_value_says_the_file_ends_early(tail):
    """Fresh user 2, finding 10: the closing `}` removed, the file ending in a newline: not
    "missing `,` (the next one starts at line N, column 1)", there is no next value."""
    text = '{\n  "version": "1.0",\n  "server_list": [\n    {"server_id": "a"}\n  ]' + tail
    doc, smap, diags = load_json(text)
    (d,) = diags
    assert doc is None and (d.code, d.span.line, d.span.column) == ("RTC600", 5, 4)
    assert "missing" not in d.message and "the file ends after this value" in d.message
    assert "1 bracket still open (the innermost `{` at line 1, column 1" in d.message
    cut = text[:text.index('{"server_id"')]         # cut at a line end inside the list
    (d,) = load_json(cut + '{"server_id": "a", "x": "[{"}\n')[2]
    assert "2 brackets still open (the innermost `[` at line 3, column 18; `]}`" in d.message
    (d,) = load_json('{\n  "version": "1.0",\n')[2]
    assert d.message == "the file ends where a key was expected (truncated file?)"


def test_a_duplicate_version_with_two_values_names_both_and_the_one_read():
    """Fresh user 2, finding 20: two top-level `version` keys ("2.0" then "1.0") decide the
    form every other key is checked against: RTC604 names both and which one is read."""
    text = '{\n  "version": "2.0",\n  "version": "1.0",\n  "server_list": []\n}'
    (d,) = [d for d in load_json(text)[2] if d.code == "RTC604"]
    assert (d.span.line, d.span.column) == (3, 3)
    assert d.message.endswith('"2.0" first, then "1.0", so the table is read as version "1.0" '
                              "and its other keys are checked against that form")
    same = load_json(text.replace('"2.0"', '"1.0"'))[2]
    assert [d.message.endswith("keep the last one)") for d in same] == [True]


def test_topofile_edge_without_topo_type_or_position_is_read_as_hccl_reads_it():
    """HCCL defaults an edge's ``topo_type`` to CLOS and ``position`` to DEVICE when absent
    (hcomm ``src/coll_communicator_mgr/rank_graph/topo_info/edge_info.cc``); hcomm's own test
    topology files (tests/ecosystem/ranktable/v2_0_topofile__hcomm_*) leave them out. A value
    outside the enum is still an error."""
    edge = {"net_layer": 0, "link_type": "PEER2PEER", "protocols": ["UB_CTP"], "local_a": 0,
            "local_a_ports": ["0/0"], "local_b": 1, "local_b_ports": ["0/0"]}
    doc = {"version": "2.0", "peer_count": 2, "peer_list": [{"local_id": 0}, {"local_id": 1}],
           "edge_count": 1, "edge_list": [edge]}
    assert not errors(validate_document(doc, "topo-v2.0"))
    bad = copy.deepcopy(doc)
    bad["edge_list"][0]["topo_type"] = "RING"
    found = errors(validate_document(bad, "topo-v2.0"))
    assert len(found) == 1 and "edge_list[0].topo_type" in found[0].message
