"""`rtc validate`: corpus verdicts, the table rules (RTC630-652), the compile's checks on
lowered tables (with spans in the JSON), hardware inference, inventory, the CLI contract.

Tables are built here with :func:`make_table` (rtc's canonical layout, 2-space JSON) and
mutated; each finding's line is asserted against the line of the value it must point at.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, TESTS, dump, make_table, run_rtc
from rtc.diagnostics import Severity
from rtc.tables.lower_table import choose_preset
from rtc.api.validating import Inventory, validate_source

DATA = TESTS / "data" / "ranktables"
CORPUS = DATA / "corpus"
CASES = DATA / "cases"
VALIDATE = DATA / "validate"
INVENTORY = TESTS / "data" / "inventory"


# --------------------------------------------------------------------------- helpers



def check(doc, name: str = "t.json", **kw):
    text = doc if isinstance(doc, str) else dump(doc)
    return text, validate_source(text, name, **kw)


def codes(report, severity: Severity | None = Severity.ERROR) -> set[str]:
    return {d.code for d in report.diagnostics if severity is None or d.severity is severity}


def only(report, code):
    found = [d for d in report.diagnostics if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in report.diagnostics]
    return found[0]


def line_of(text: str, needle: str, nth: int = 0) -> int:
    """1-based line of the nth occurrence of ``needle``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    return text.count("\n", 0, pos) + 1


def col_of(text: str, needle: str, nth: int = 0) -> int:
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    return pos - text.rfind("\n", 0, pos)


# --------------------------------------------------------------------------- corpus

# file -> (error codes, other codes). The verdict of SOURCES.md: bad__ files fail.
CORPUS_VERDICTS = {
    "v1_0__hcomm_example__1srv_8dev.json": (set(), set()),
    "v1_0__hccl_tf_example__1srv_8dev_empty_device_ip.json": (set(), set()),
    "v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json": (set(), {"RTC618"}),
    "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc": ({"RTC601"}, set()),
    "bad__v1_0_masked_ips__mindspore_docs_rank_table_8pcs.json": ({"RTC615"}, set()),
    "bad__v1_0_dup_server_id_masked_ips__mindspore_docs_rank_table_16pcs.json": ({"RTC615", "RTC203"}, set()),
    "bad__v1_0_ext_cluster_list_masked_ips__mindspore_docs_cross_cluster_16pcs.json":
        ({"RTC615"}, {"RTC618"}),
    "bad__v2_0_obsolete_keys__hcomm_st__ranktable_2p_error.json": ({"RTC610", "RTC611", "RTC612",
                                                                    "RTC679"}, set()),
    "v2_0__hcomm_example__2rank_ipv4.json": (set(), set()),
    "v2_0__hcomm_st_1d_2p_mesh__ranktable_no_status.json": (set(), set()),
    "v2_0_topofile__hcomm_st_1d_2p_mesh__topo.json": (set(), set()),
}


def test_every_corpus_file_has_a_verdict():
    files = sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".json", ".jsonc"))
    assert files == sorted(CORPUS_VERDICTS)


@pytest.mark.parametrize("name", sorted(CORPUS_VERDICTS))
def test_corpus_verdict(name):
    errors, others = CORPUS_VERDICTS[name]
    rep = validate_source((CORPUS / name).read_bytes(), name)
    assert codes(rep) == errors, [(d.code, d.message) for d in rep.diagnostics]
    assert {d.code for d in rep.diagnostics if d.severity is not Severity.ERROR} == others
    assert rep.ok == (not name.startswith("bad__"))


def test_corpus_on_the_command_line():
    names = sorted(CORPUS_VERDICTS)
    res = run_rtc("validate", "--format", "json", *names, cwd=CORPUS)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    per_file = {f["file"]: f for f in doc["files"]}
    assert sorted(per_file) == names
    for name, (errors, _) in CORPUS_VERDICTS.items():
        assert (per_file[name]["errors"] > 0) == bool(errors), name
        got = {d["code"] for d in doc["diagnostics"] if d["span"] and d["span"]["file"] == name
               and d["severity"] == "error"}
        assert got == errors, name
    for name in names:
        if not name.startswith("bad__"):
            single = run_rtc("validate", name, cwd=CORPUS)
            assert single.returncode == 0, single.stdout


def test_duplicate_server_id_points_at_the_second_server_id():
    name = "bad__v1_0_dup_server_id_masked_ips__mindspore_docs_rank_table_16pcs.json"
    text = (CORPUS / name).read_text("utf-8")
    d = only(validate_source(text, name), "RTC203")
    assert (d.span.line, d.span.column) == (line_of(text, '"server_id"', 1), col_of(text, '"10.*.*.*"', 1))
    assert d.related and d.related[0].span.line == line_of(text, '"server_id"', 0)
    # the masked IPs are reported once, by the schema (RTC615), not again as missing or bad
    rep = validate_source(text, name)
    assert not codes(rep) & {"RTC211", "RTC634"}


def test_empty_device_ip_is_fine_on_one_server_only():
    doc = json.loads((CORPUS / "v1_0__hccl_tf_example__1srv_8dev_empty_device_ip.json").read_text("utf-8"))
    assert validate_source(dump(doc), "one.json").ok
    second = copy.deepcopy(doc["server_list"][0])
    second["server_id"] = "1"
    for d in second["device"]:
        d["rank_id"] = str(int(d["rank_id"]) + 8)
    doc["server_list"].append(second)
    doc["server_count"] = "2"
    text, rep = check(doc)
    assert codes(rep) == {"RTC211"}
    found = [d for d in rep.diagnostics if d.code == "RTC211"]
    assert len(found) == 2  # one per server
    assert all('"device_ip": ""' in text.splitlines()[d.span.line - 1] for d in found)


def test_jsonc_superpod_example_is_clean_once_comments_are_gone():
    from rtc.tables.jsonload import strip_comments_and_trailing_commas

    raw = (CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc").read_text("utf-8")
    stripped, _, _ = strip_comments_and_trailing_commas(raw)
    rep = validate_source(stripped, "doc_a3.json")
    assert rep.diagnostics == [] and rep.form == "hccl-v1.2"
    assert rep.lowered.topology.preset.name == "atlas-800-a3"
    assert [s.super_pod_id for s in rep.lowered.topology.servers] == ["0", "0", "1", "1"]


def test_recovered_jsonc_still_gets_semantic_checks():
    raw = (CORPUS / "bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc").read_text("utf-8")
    broken = raw.replace('"device_ip": "192.168.2.6"', '"device_ip": "192.168.1.6"')
    rep = validate_source(broken, "x.jsonc")
    # node_1 device 0 now repeats node_0 device 0's address, and device 1's backup no
    # longer names its partner's address
    assert codes(rep) == {"RTC601", "RTC208", "RTC641"}


def test_clean_canonical_tables():
    for doc in (make_table(), make_table(4, version="1.2", pods=2, host=True),
                make_table(1, devices=range(16), version="1.2")):
        _, rep = check(doc)
        assert rep.diagnostics == [], [(d.code, d.message) for d in rep.diagnostics]


# --------------------------------------------------------------------------- rank ids

def test_rank_id_duplicate_out_of_range_and_missing():
    doc = make_table()
    doc["server_list"][1]["device"][2]["rank_id"] = "3"
    doc["server_list"][1]["device"][3]["rank_id"] = "16"
    text, rep = check(doc)
    found = sorted((d.span.line, d.message) for d in rep.diagnostics if d.code == "RTC630")
    assert len(found) == 3
    dup = next(d for d in rep.diagnostics if "used twice" in d.message)
    assert dup.span.line == line_of(text, '"rank_id": "3"', 1)
    assert dup.related[0].span.line == line_of(text, '"rank_id": "3"', 0)
    oor = next(d for d in rep.diagnostics if "out of range" in d.message)
    assert oor.span.line == line_of(text, '"rank_id": "16"')
    missing = next(d for d in rep.diagnostics if "missing" in d.message)
    assert "missing: 10, 11" in missing.message
    assert missing.span.line == line_of(text, '"server_list"')
    assert "RTC631" not in codes(rep)  # block rules wait until the ids are right


def test_rank_ids_interleaved_across_servers_doc_example():
    text = (VALIDATE / "v1_0_interleaved.json").read_text("utf-8")
    rep = validate_source(text, "i.json")
    d = only(rep, "RTC631")
    assert "ranks 0..2, 7" in d.message and "3..6 are on server2" in d.message
    assert d.span.line == line_of(text, '"rank_id": "7"')


def test_rank_order_warnings():
    doc = make_table(3)
    doc["server_list"] = [doc["server_list"][1], doc["server_list"][0], doc["server_list"][2]]
    text, rep = check(doc)
    d = only(rep, "RTC632")
    assert d.severity is Severity.WARNING and "node_0 (first rank 0) comes after node_1" in d.message
    assert d.span.line == line_of(text, '"server_id": "node_0"')
    assert rep.ok
    doc = make_table(1)
    devs = doc["server_list"][0]["device"]
    devs[0]["rank_id"], devs[1]["rank_id"] = "1", "0"
    text, rep = check(doc)
    d = only(rep, "RTC632")
    assert "device 1 has rank 0 but device 0 has rank 1" in d.message
    assert rep.ok


def test_lowered_servers_follow_rank_order():
    doc = make_table(3)
    doc["server_list"].reverse()
    _, rep = check(doc)
    assert [s.server_id for s in rep.lowered.topology.servers] == ["node_0", "node_1", "node_2"]


def test_v2_rank_ids_and_rank_count():
    doc = json.loads((CORPUS / "v2_0__hcomm_example__2rank_ipv4.json").read_text("utf-8"))
    doc["rank_list"][1]["rank_id"] = 2
    doc["rank_count"] = 3
    text, rep = check(doc)
    assert codes(rep) == {"RTC630", "RTC633"}
    assert only(rep, "RTC633").span.line == line_of(text, '"rank_count"')


def test_v2_levels_address_counts_and_backup_ranks():
    base = json.loads((CORPUS / "v2_0__hcomm_example__2rank_ipv4.json").read_text("utf-8"))
    doc = copy.deepcopy(base)
    lvl = copy.deepcopy(doc["rank_list"][0]["level_list"][0])
    lvl["net_layer"] = 0
    doc["rank_list"][0]["level_list"].append(lvl)  # layer 0 twice
    doc["rank_list"][1]["level_list"][0]["rank_addr_list"].append(
        {"addr_type": "IPV4", "addr": "223.0.0.29", "ports": ["0/2"]})
    _, rep = check(doc)
    assert {"RTC650", "RTC651"} <= codes(rep)
    doc = copy.deepcopy(base)
    for r in doc["rank_list"]:
        r["local_id"] = 64
    _, rep = check(doc)
    assert [d.code for d in rep.diagnostics].count("RTC652") == 3  # two without replaced_local_id, one extra


# --------------------------------------------------------------------------- counts, addresses

def test_server_count_mismatch():
    doc = make_table(2)
    doc["server_count"] = "3"
    text, rep = check(doc)
    d = only(rep, "RTC633")
    assert d.span.line == line_of(text, '"server_count"') and '"server_count": "2"' in d.hint


def test_bad_addresses_the_schema_lets_through():
    doc = make_table(2, host=True, version="1.2", pods=1)
    doc["server_list"][0]["device"][3]["device_ip"] = "10.0.0.256"
    doc["server_list"][1]["host_ip"] = "192.0.2"
    text, rep = check(doc)
    found = sorted((d.span.line, d.span.column) for d in rep.diagnostics if d.code == "RTC634")
    assert found == [(line_of(text, "10.0.0.256"), col_of(text, "256\"")),
                     (line_of(text, '"192.0.2"'), col_of(text, '"192.0.2"') + 1)]
    assert not codes(rep) & {"RTC211", "RTC615"}


def test_address_list_counts_must_agree():
    doc = make_table(2)
    doc["server_list"][0]["device"][0]["device_ip"] = "10.0.0.1,10.9.0.1"
    text, rep = check(doc)
    d = only(rep, "RTC635")
    assert d.span.line == line_of(text, '"device_ip": "10.0.0.2"')  # the first that differs


def test_reserved_and_duplicate_addresses_use_the_compile_rules():
    doc = make_table(2)
    doc["server_list"][1]["device"][4]["device_ip"] = "10.0.0.2"
    doc["server_list"][0]["device"][7]["device_ip"] = "127.0.0.1"
    text, rep = check(doc)
    dup = only(rep, "RTC208")
    assert dup.span.line == line_of(text, '"device_ip": "10.0.0.2"', 1)
    assert dup.related[0].span.line == line_of(text, '"device_ip": "10.0.0.2"', 0)
    assert only(rep, "RTC209").span.line == line_of(text, "127.0.0.1")


# --------------------------------------------------------------------------- servers and devices

def test_duplicate_device_id_points_at_the_repeat():
    doc = make_table(1)
    doc["server_list"][0]["device"][5]["device_id"] = "2"
    text, rep = check(doc)
    d = only(rep, "RTC204")
    assert d.span.line == line_of(text, '"device_id": "2"', 1)


def test_device_id_range_depends_on_the_hardware():
    doc = make_table(1, devices=range(10))
    _, rep = check(doc)
    assert rep.ok and "typical networking" in rep.hardware  # ids above 7: A3, table 1.0
    text, rep = check(doc, hardware="atlas-800t-a2")
    d = only(rep, "RTC205")
    assert "8, 9" in d.message and d.span.line == line_of(text, '"device"')


def test_server_id_too_long_is_reported_once():
    doc = make_table(1)
    doc["server_list"][0]["server_id"] = "n" * 70
    _, rep = check(doc)
    assert codes(rep) == {"RTC617"}


def test_server_order_warning_from_the_compile_checks():
    doc = make_table(3, name="node{s}")
    for s, new in zip(doc["server_list"], ("node8", "node9", "node10")):
        s["server_id"] = new
    _, rep = check(doc)
    assert codes(rep, Severity.WARNING) == {"RTC216"} and rep.ok


def test_910a_device_sets_with_hardware_option():
    doc = make_table(1, devices=(0, 1, 4, 5))
    text, rep = check(doc)
    assert rep.ok
    text, rep = check(doc, hardware="atlas-800-910a")
    assert codes(rep) == {"RTC320"}
    legacy = json.loads((CASES / "legacy_cloud.json").read_text("utf-8"))
    _, rep = check(legacy)
    assert rep.hardware.startswith("atlas-800-910a") and rep.ok


def test_multi_server_a2_needs_device_ips():
    doc = make_table(2)
    del doc["server_list"][1]["device"][3]["device_ip"]
    text, rep = check(doc)
    d = only(rep, "RTC211")
    assert "device 3" in d.message
    assert d.span.line == line_of(text, '"device_id": "3"', 1) - 1  # the device object's "{"


# --------------------------------------------------------------------------- super pods

def test_v12_multi_server_without_super_pods():
    _, rep = check(make_table(2, version="1.2"))
    assert codes(rep) == {"RTC212"}


def test_super_pod_bookkeeping():
    doc = make_table(4, version="1.2", pods=2)
    pods = doc["super_pod_list"]
    pods[1]["server_list"].append({"server_id": "node_9"})       # unknown
    pods[1]["server_list"].append({"server_id": "node_0"})       # second pod
    pods.append({"super_pod_id": "0", "server_list": []})         # duplicate id
    text, rep = check(doc)
    assert {"RTC637", "RTC638", "RTC639"} <= codes(rep)
    assert "did you mean" in only(rep, "RTC637").hint
    # node_0: in server_list, in pod "0", then again in pod "1"
    assert only(rep, "RTC638").span.line == line_of(text, '"server_id": "node_0"', 2)


def test_server_in_no_super_pod_is_said_once():
    doc = make_table(3, version="1.2", pods=1)
    doc["super_pod_list"][0]["server_list"].pop()
    text, rep = check(doc)
    d = only(rep, "RTC638")
    assert "node_2 is in no super pod" in d.message
    assert "RTC212" not in codes(rep)  # the compile's rule at the same place is dropped
    single = make_table(1, version="1.2", pods=1)
    single["super_pod_list"][0]["server_list"] = [{"server_id": "other"}]
    _, rep = check(single)
    assert codes(rep) == {"RTC637", "RTC638"}


def test_super_pods_must_be_contiguous():
    doc = make_table(3, version="1.2", pods=1)
    doc["super_pod_list"] = [
        {"super_pod_id": "a", "server_list": [{"server_id": "node_0"}, {"server_id": "node_2"}]},
        {"super_pod_id": "b", "server_list": [{"server_id": "node_1"}]}]
    text, rep = check(doc)
    d = only(rep, "RTC640")
    assert d.span.line == line_of(text, '"server_id": "node_2"') and "by node_1" in d.message


def test_duplicate_sdid_within_a_pod_only():
    doc = make_table(2, version="1.2", pods=2)
    doc["server_list"][1]["device"][0]["super_device_id"] = "0"   # same as node_0 device 0
    _, rep = check(doc)
    assert rep.ok  # different pods may reuse SDIDs
    doc = make_table(2, version="1.2", pods=1)
    doc["server_list"][1]["device"][0]["super_device_id"] = "3"
    text, rep = check(doc)
    d = only(rep, "RTC213")
    assert d.span.line == line_of(text, '"super_device_id": "3"', 1)
    assert d.related[0].span.line == line_of(text, '"super_device_id": "3"', 0)


def test_backup_dies_and_ports():
    doc = make_table(1, devices=range(4), version="1.2", pods=1)
    devs = doc["server_list"][0]["device"]
    devs[0]["backup_device_ip"] = devs[1]["device_ip"]         # right
    devs[1]["backup_device_ip"] = devs[1]["device_ip"]         # its own
    devs[2]["backup_device_ip"] = devs[0]["device_ip"]         # not its partner
    devs[0]["backup_device_port"] = "16666"                    # partner's default port
    text, rep = check(doc)
    found = [d for d in rep.diagnostics if d.code == "RTC641"]
    assert len(found) == 2
    assert any("own device_ip" in d.message for d in found)
    assert only(rep, "RTC642").span.line == line_of(text, '"backup_device_port"')
    doc = make_table(1, devices=(0, 2), version="1.2", pods=1)
    doc["server_list"][0]["device"][0]["backup_device_ip"] = "10.0.0.9"
    _, rep = check(doc)
    assert "not in the table" in only(rep, "RTC641").message


def test_host_ports_unique_per_server():
    doc = make_table(2, version="1.2", pods=1)
    for s in doc["server_list"]:
        for d in s["device"]:
            d["host_port"] = "16665"  # same on both servers is fine, not within one
    doc["server_list"][0]["device"][1]["host_port"] = "16666"
    _, rep = check(doc)
    assert [d.code for d in rep.diagnostics].count("RTC643") == 6 + 7


def test_version_against_hardware_option():
    _, rep = check(make_table(1, version="1.2"), hardware="atlas-800t-a2")
    d = only(rep, "RTC636")
    assert d.severity is Severity.WARNING and rep.ok
    v2 = (CORPUS / "v2_0__hcomm_example__2rank_ipv4.json").read_text("utf-8")
    _, rep = check(v2, hardware="atlas-800-a3")
    assert codes(rep) == {"RTC636"}
    _, rep = check(make_table(1, devices=range(16)), hardware="atlas-800-a3")
    assert rep.ok and "typical networking" in rep.lowered.topology.preset.description


# --------------------------------------------------------------------------- other forms

def pd_table(a3: bool = True) -> dict:
    doc = json.loads((CASES / "pd_ranktable_a3.json").read_text("utf-8"))
    return doc


def test_pd_table_lowering_and_rules():
    doc = pd_table()
    text, rep = check(doc)
    assert rep.ok and rep.form == "pd-ranktable"
    first = doc["prefill_device_list"][0]
    dup = copy.deepcopy(first)
    dup["cluster_id"] = str(100)
    doc["decode_device_list"].append(dup)  # the same device in both lists
    doc["decode_device_list"][0]["cluster_id"] = first["cluster_id"]
    text, rep = check(doc)
    assert {"RTC204", "RTC208", "RTC644"} <= codes(rep)
    ip = only(rep, "RTC208")
    assert ip.span.line > line_of(text, '"decode_device_list"')


def test_legacy_forms():
    cloud = json.loads((CASES / "legacy_cloud.json").read_text("utf-8"))
    g = cloud["group_list"][0]
    g["instance_count"] = str(int(g["instance_count"]) + 1)
    g["instance_list"][0]["devices"][0]["device_id"] = "9"
    _, rep = check(cloud)
    assert {"RTC633", "RTC205"} <= codes(rep)
    lab = json.loads((CASES / "legacy_lab.json").read_text("utf-8"))
    lab["para_plane_nic_location"] = "device"
    _, rep = check(lab)
    assert rep.ok, [(d.code, d.message) for d in rep.diagnostics]
    lab["group_list"][0]["instance_list"][0]["rank_id"] = lab["group_list"][0]["instance_list"][1]["rank_id"]
    _, rep = check(lab)
    assert "RTC630" in codes(rep)


# --------------------------------------------------------------------------- hardware inference

@pytest.mark.parametrize("doc,form,want", [
    (make_table(1), "hccl-v1.0", "atlas-800t-a2"),
    (make_table(1, devices=range(16)), "hccl-v1.0", "atlas-800-a3"),
    (make_table(1, version="1.2"), "hccl-v1.2", "atlas-800-a3"),
])
def test_hardware_inference(doc, form, want):
    preset, how = choose_preset(doc, form)
    assert preset.name == want and "inferred" in how
    assert preset.super_pod == (form == "hccl-v1.2")


def test_generic_hardware_takes_the_device_count_from_the_table():
    _, rep = check(make_table(1, devices=range(12)), hardware="generic")
    assert rep.ok and rep.lowered.topology.preset.devices_per_server == 12


def test_no_placeholder_span_escapes():
    docs = [make_table(2), make_table(3, version="1.2", pods=2)]
    docs[0]["server_list"][1]["server_id"] = "node_0"
    docs[0]["server_list"][1]["device"][0]["device_ip"] = "10.0.0.1"
    docs[1]["server_list"][2]["device"][0]["super_device_id"] = "0"
    docs[1]["super_pod_list"][1]["server_list"].append({"server_id": "node_0"})
    for doc in docs:
        _, rep = check(doc)
        assert rep.diagnostics
        for d in rep.diagnostics:
            assert d.span is None or d.span.line >= 1, (d.code, d.span)
            assert all(r.span.line >= 1 for r in d.related), d.code


# --------------------------------------------------------------------------- inventory

def _inventory(tmp_path: Path, folders: dict[str, Path | None]) -> Path:
    root = tmp_path / "inv"
    root.mkdir()
    for name, src in folders.items():
        dst = root / name
        if src is None:
            dst.mkdir()
        else:
            shutil.copytree(src, dst)
    return root


def atlas_table() -> dict:
    doc = make_table(2, name="atlas-0{s}")
    for s, sid in zip(doc["server_list"], ("atlas-01", "atlas-02")):
        s["server_id"] = sid
    for d in doc["server_list"][0]["device"]:
        d["device_ip"] = f"6.0.2.{2 * int(d['device_id']) + 1}"  # the a2-atlas-01 captures
    return doc


def test_inventory_values_against_the_captures(tmp_path):
    root = _inventory(tmp_path, {"atlas-01": INVENTORY / "a2-atlas-01"})
    doc = atlas_table()
    _, rep = check(doc, inventory=Inventory(str(root)))
    assert codes(rep) == set() and only(rep, "RTC647").severity is Severity.WARNING
    doc["server_list"][0]["device"][3]["device_ip"] = "6.0.2.99"
    text, rep = check(doc, inventory=Inventory(str(root)))
    d = only(rep, "RTC420")
    assert d.span.line == line_of(text, "6.0.2.99") and "6.0.2.7" in d.message
    assert d.related[0].span.file.endswith("ip.txt")


def test_inventory_link_down_and_unknown_device(tmp_path):
    root = _inventory(tmp_path, {"atlas-01": INVENTORY / "variants" / "link-down", "atlas-02": None})
    (root / "atlas-02" / "ip_0.txt").write_text("ipaddr:10.1.0.1\nnetmask:255.255.255.0\n")
    text, rep = check(atlas_table(), inventory=Inventory(str(root)))
    link = only(rep, "RTC421")
    assert "device 5" in link.message and link.span.line == line_of(text, '"device_id": "5"')
    unknown = [d for d in rep.diagnostics if d.code == "RTC648"]
    assert len(unknown) == 7  # atlas-02's captures know device 0 only
    assert "RTC647" not in codes(rep, None)


def test_inventory_folder_for_a_single_server(tmp_path):
    doc = make_table(1, name="atlas-01")
    for d in doc["server_list"][0]["device"]:
        d["device_ip"] = f"6.0.2.{2 * int(d['device_id']) + 1}"
    _, rep = check(doc, inventory=Inventory(str(INVENTORY / "a2-atlas-01")))
    assert rep.diagnostics == []
    _, rep = check(make_table(2), inventory=Inventory(str(INVENTORY / "a2-atlas-01")))
    d = only(rep, "RTC647")
    assert d.severity is Severity.ERROR and "no subfolder" in d.message


# --------------------------------------------------------------------------- command line

def write(tmp_path: Path, name: str, doc) -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else dump(doc), encoding="utf-8")
    return p


def test_exit_codes(tmp_path):
    clean = write(tmp_path, "clean.json", make_table())
    warn_doc = make_table(3)
    warn_doc["server_list"].reverse()
    warn = write(tmp_path, "warn.json", warn_doc)
    bad_doc = make_table()
    bad_doc["server_count"] = "5"
    bad = write(tmp_path, "bad.json", bad_doc)
    assert run_rtc("validate", str(clean)).returncode == 0
    res = run_rtc("validate", str(warn))
    assert res.returncode == 0 and "warning[RTC632]" in res.stdout
    assert run_rtc("validate", "--strict", str(warn)).returncode == 1
    assert run_rtc("validate", str(bad)).returncode == 1
    assert run_rtc("validate", "--exit-zero", str(bad)).returncode == 0
    missing = run_rtc("validate", str(tmp_path / "nope.json"), str(clean))
    assert missing.returncode == 2 and "RTC001" in missing.stdout
    assert run_rtc("validate", "--exit-zero", str(tmp_path / "nope.json")).returncode == 0
    for args, text in ((("--format", "xml"), "formats: text, json, github, sarif"),
                       (("--hardware", "atlas-800-a2"), "did you mean 'atlas-800t-a2'"),
                       (("--schema", "hccl-v1.3"), "did you mean"),
                       (("--inventory", str(tmp_path / "none")), "not a folder")):
        res = run_rtc("validate", *args, "--exit-zero", str(clean))
        assert res.returncode == 2 and text in res.stderr, (args, res.stderr)
    assert run_rtc("validate").returncode == 2


def test_strict_turns_warnings_into_errors_in_the_report(tmp_path):
    doc = make_table(3)
    doc["server_list"].reverse()
    p = write(tmp_path, "w.json", doc)
    res = run_rtc("validate", "--strict", "--format", "json", str(p))
    assert json.loads(res.stdout)["diagnostics"][0]["severity"] == "error"


def test_multiple_files_are_all_reported_sorted(tmp_path):
    b = make_table()
    b["server_count"] = "9"
    a = make_table()
    a["server_list"][0]["device"][0]["rank_id"] = "1"
    pb, pa = write(tmp_path, "b.json", b), write(tmp_path, "a.json", a)
    res = run_rtc("validate", "--format", "json", "b.json", "a.json", cwd=tmp_path)
    doc = json.loads(res.stdout)
    files = [d["span"]["file"] for d in doc["diagnostics"]]
    assert files == sorted(files) and set(files) == {"a.json", "b.json"}
    assert [f["file"] for f in doc["files"]] == ["b.json", "a.json"]
    assert pb.exists() and pa.exists()


def test_schema_option_and_stdin(tmp_path):
    text = dump(make_table())
    res = run_rtc("validate", "-", input=text)
    assert res.returncode == 0 and "1 file checked" in res.stdout
    res = run_rtc("validate", "--schema", "hccl-v1.2", "--format", "json", "-", input=text)
    diags = json.loads(res.stdout)["diagnostics"]
    assert {d["code"] for d in diags} >= {"RTC609"}
    assert all(d["span"] is None or d["span"]["file"] == "<stdin>" for d in diags)


def test_syntax_error_with_line_and_column(tmp_path):
    p = write(tmp_path, "broken.json", '{\n  "version": "1.0",\n  "status": "completed"\n  "server_list": []\n}\n')
    res = run_rtc("validate", "--format", "github", str(p))
    assert res.returncode == 1
    assert res.stdout.startswith(f"::error file={p},line=3,col=24,title=RTC600::")


def test_rules_are_registered_and_explained():
    res = run_rtc("rules")
    for code in ("RTC600", "RTC615", "RTC630", "RTC641", "RTC652", "RTC664"):
        assert code in res.stdout
    res = run_rtc("explain", "RTC631")
    assert res.returncode == 0 and "Fix:" in res.stdout
    res = run_rtc("explain", "RTC601")
    assert res.returncode == 0 and "comments" in res.stdout and "Fix:" in res.stdout


# --------------------------------------------------------------------------- pre-commit, README



def _hook() -> dict:
    """The single hook of .pre-commit-hooks.yaml (a flat YAML list item; no YAML library needed)."""
    hook = {}
    for line in (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key, _, value = line.lstrip("- ").partition(":")
        value = value.strip()
        if value.startswith("'") and value.endswith("'"):
            value = value[1:-1].replace("''", "'")
        hook[key.strip()] = value
    return hook


def test_pre_commit_hook():
    import re

    hook = _hook()
    assert hook["id"] == "rtc-validate"
    assert hook["entry"] == "rtc validate" and hook["language"] == "python"
    files = re.compile(hook["files"])
    for path in ("hccl.json", "hccl-prefill.json", "cfg/hccl_8p.json", "rank_table.json",
                 "deploy/rank_table_2s.json"):
        assert files.search(path), path
    for path in ("hccl.json.bak", "myhccl.json", "cluster.rtc", "rank_tables/readme.md", "hccl.yaml"):
        assert not files.search(path), path


def test_readme_documents_ci_use():
    text = (ROOT / "docs" / "validate.md").read_text(encoding="utf-8")
    section = text.split("## In CI", 1)[1].split("\n## ", 1)[0]
    assert "rtc validate --format github hccl*.json" in section
    assert "pip install" in section and "id: rtc-validate" in section


def test_inventory_on_the_command_line(tmp_path):
    root = _inventory(tmp_path, {"atlas-01": INVENTORY / "variants" / "net-health"})
    p = write(tmp_path, "hccl.json", atlas_table())
    res = run_rtc("validate", "--inventory", str(root), "--format", "json", str(p))
    assert res.returncode == 1
    found = {(d["code"], d["severity"]) for d in json.loads(res.stdout)["diagnostics"]}
    assert found == {("RTC422", "error"), ("RTC647", "warning")}


# --------------------------------------------------------------------------- robustness

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ODD_VALUES = [None, 1, -3, 2.5, True, "", "x", "999.1.1.1", "0", "17", [], {}, [1], {"a": 1},
               "10.0.0.1,10.0.0.2", "1.1.1.1"]


def _mutate(node, rnd) -> None:
    if isinstance(node, dict) and node:
        k = rnd.choice(list(node))
        op = rnd.random()
        if op < 0.2:
            del node[k]
        elif op < 0.6:
            node[k] = copy.deepcopy(rnd.choice(_ODD_VALUES))
        else:
            _mutate(node[k], rnd)
    elif isinstance(node, list) and node:
        i = rnd.randrange(len(node))
        op = rnd.random()
        if op < 0.2:
            del node[i]
        elif op < 0.4:
            node[i] = copy.deepcopy(rnd.choice(_ODD_VALUES))
        elif op < 0.5:
            node.append(copy.deepcopy(node[i]))
        else:
            _mutate(node[i], rnd)


def _bases() -> list:
    return [make_table(3), make_table(3, version="1.2", pods=2, host=True),
            json.loads((CASES / "pd_ranktable_a3.json").read_text("utf-8")),
            json.loads((CASES / "legacy_cloud.json").read_text("utf-8")),
            json.loads((CASES / "legacy_lab.json").read_text("utf-8")),
            json.loads((CORPUS / "v2_0__hcomm_example__2rank_ipv4.json").read_text("utf-8"))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 5), st.integers(1, 4), st.randoms(use_true_random=False),
       st.sampled_from([None, "atlas-800-910a", "generic", "atlas-800-a3"]))
def test_broken_tables_never_crash_and_spans_stay_in_the_file(base, rounds, rnd, hardware):
    doc = copy.deepcopy(_bases()[base])
    for _ in range(rounds):
        _mutate(doc, rnd)
    _, rep = check(doc, hardware=hardware)
    for d in rep.diagnostics:
        assert d.span is None or (d.span.file == "t.json" and d.span.line >= 1), (d.code, d.span)
        assert all(r.span.line >= 1 for r in d.related)


def test_rank_order_warning_points_at_the_rank_id():
    doc = make_table(servers=1)
    devs = doc["server_list"][0]["device"]
    devs[0]["rank_id"], devs[1]["rank_id"] = devs[1]["rank_id"], devs[0]["rank_id"]
    text, rep = check(doc)
    d = only(rep, "RTC632")
    # the rank_id of the second listed device (device 1, rank 0), not 1:1
    assert (d.span.line, d.span.column) == (line_of(text, '"rank_id": "0"'), 22)


def test_huge_json_number_is_located():
    text = dump(make_table(servers=1)).replace('"server_count": "1"', '"server_count": ' + "9" * 5000)
    _, rep = check(text)
    d = only(rep, "RTC600")
    assert "5000 digits" in d.message and "sys.set_int_max_str_digits" not in d.message
    assert d.span.line == line_of(text, '"server_count"')


def test_a_mindie_config_fragment_is_a_note_not_an_error(tmp_path):
    """Fresh user 2, finding 21: `rtc validate` of the mindie-<server>.json rtc writes says
    it is a MindIE config.json fragment (RTC668 note, exit 0), not "not a rank table"."""
    from rtc.api.validating import validate_source

    text = json.dumps({"ServerConfig": {"ipAddress": "172.16.2.11", "port": 1025},
                       "BackendConfig": {"npuDeviceIds": [[0, 1]]}})
    rep = validate_source(text, "mindie-d1.json")
    assert [(d.code, d.severity.name) for d in rep.diagnostics] == [("RTC668", "NOTE")]
    assert "MindIE config.json fragment" in rep.diagnostics[0].message
    rep = validate_source('{"Other": 1}', "x.json")
    assert [d.code for d in rep.diagnostics] == ["RTC607"]


# --------------------------------------------------------------------------- hardware guess (RTC677)

def test_one_device_id_above_7_among_a2_servers_is_a_typo_not_a3():
    """A 1.0 table of 8-device servers where one server lists device 9 instead of 5: checked
    as A2 (device 9 is RTC205) and a note says which hardware and why."""
    doc = make_table(2)
    doc["server_list"][1]["device"][5]["device_id"] = "9"
    text, rep = check(doc)
    assert rep.hardware.startswith("atlas-800t-a2") and "typo" in rep.hardware
    assert "RTC205" in codes(rep) and "RTC321" not in codes(rep, None)
    d = only(rep, "RTC677")
    assert d.severity is Severity.NOTE and d.message.startswith("checked as atlas-800t-a2: ")
    assert "device id 9 on server node_1" in d.message and "--hardware atlas-800-a3" in d.hint
    assert d.span.line == line_of(text, '"device_id": "9"')
    _, rep = check(doc, hardware="atlas-800t-a2")
    assert "RTC677" not in codes(rep, None)      # no guess, no note


def test_a3_guess_from_device_ids_is_said():
    doc = make_table(2, devices=range(16))
    _, rep = check(doc)
    d = only(rep, "RTC677")
    assert d.message.startswith("checked as atlas-800-a3 in typical networking: ")
    assert "8 on node_0, 9 on node_0, 10 on node_0 and 13 more" in d.message
    assert "--hardware atlas-800t-a2" in d.hint
    _, rep = check(make_table(2))                # ids 0..7: the usual A2 guess, no note
    assert "RTC677" not in codes(rep, None)


# --------------------------------------------------------------------------- bare-number ids

def test_duplicate_and_missing_ranks_are_reported_when_rank_ids_are_numbers():
    """rank_id written as JSON numbers (RTC610) with rank 3 twice and 15 missing: RTC630
    says both in the same run, not only after the types are fixed."""
    doc = make_table(2)
    for s in doc["server_list"]:
        for d in s["device"]:
            d["rank_id"] = int(d["rank_id"])
    doc["server_list"][1]["device"][7]["rank_id"] = 3
    text, rep = check(doc, fold=True)
    assert "RTC610" in codes(rep)
    msgs = [d.message for d in rep.diagnostics if d.code == "RTC630"]
    assert any(m.endswith("rank_id 3 is used twice") for m in msgs), msgs
    assert any(m.endswith("missing: 15") for m in msgs), msgs


def test_duplicate_device_ids_are_reported_when_device_ids_are_numbers():
    doc = make_table(1)
    for d in doc["server_list"][0]["device"]:
        d["device_id"] = int(d["device_id"])
    doc["server_list"][0]["device"][5]["device_id"] = 2
    _, rep = check(doc)
    assert {"RTC610", "RTC204"} <= codes(rep)


def test_control_characters_in_json_are_escaped_and_named():
    """Fresh user 4, finding 7: a raw ESC never reaches the terminal through an RTC600
    message, and a control character in a string is named, not called a line break."""
    _, rep = check('{"version": "1.0", \x1b]0;pwned\x07 "x"}')
    d = only(rep, "RTC600")
    assert d.message == ("expected a key in double quotes, found the control character "
                         "U+001B (`\\x1b`)")
    assert (d.span.line, d.span.column) == (1, 20)
    d = only(check('{"version": "1.0\x1b"}')[1], "RTC600")
    assert d.message == "raw control character U+001B (`\\x1b`) inside a string"
    assert d.hint == "remove it, or escape it as \\u001b" and d.span.column == 17
    assert only(check('{"version": "1.0\t"}')[1], "RTC600").message == \
        "raw control character (a tab) inside a string"
    assert only(check('{"version": "1.0\n"}')[1], "RTC600").message == \
        "raw control character (a line break) inside a string"


def test_server_order_hint_fits_a_table_of_ip_addresses():
    """Fresh user 4, finding 8: in a table RTC216 says how to order server_list (IP
    addresses by text), not to zero-pad .rtc family indices."""
    doc = make_table(3, name="node{s}")
    for s, new in zip(doc["server_list"], ("10.1.0.8", "10.1.0.9", "10.1.0.10")):
        s["server_id"] = new
    text, rep = check(doc)
    d = only(rep, "RTC216")
    assert d.hint == ("list server_list in the text order of server_id (text order, not "
                      "address order), '10.1.0.10' before '10.1.0.9', and number the "
                      "rank_ids in that order")
    assert d.span.line == line_of(text, '"server_id": "10.1.0.10"')
    doc = make_table(3, name="node{s}")
    for s, new in zip(doc["server_list"], ("node8", "node9", "node10")):
        s["server_id"] = new
    assert only(check(doc)[1], "RTC216").hint == (
        "list server_list in the text order of server_id, 'node10' before 'node9', and "
        "number the rank_ids in that order")


def test_number_that_overflows_to_infinity_is_out_of_range():
    """Fresh user 4, finding 9: `1e99999` is a number too large to keep, not a hint to
    write "Infinity" as a string; located at the number (a string holding it is skipped)."""
    doc = make_table(1)
    text = dump(doc).replace('"server_count": "1"', '"server_count": 1e99999')
    text = text.replace('"version": "1.0"', '"version": "1.0", "note": "1e99999"')
    _, rep = check(text)
    d = only(rep, "RTC600")
    assert d.message == ("the number 1e99999 is too large for a JSON number: readers turn "
                         "it into infinity")
    assert d.hint == 'write the value you meant (in a rank table, a string such as "2")'
    line = line_of(text, '"server_count"')
    assert (d.span.line, d.span.column, d.span.end_line, d.span.end_column) == \
        (line, col_of(text, "1e99999", 1), line, col_of(text, "1e99999", 1) + 7)
    assert [x.code for x in rep.diagnostics] == ["RTC600"]
