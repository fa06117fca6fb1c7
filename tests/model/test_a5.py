"""Ascend 950 (A5): presets, the language's eid / net_instance, rank table 2.0 and the
per-server topology file (goldens, schemas, JSON integers), and the A5 checks."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, run_rtc
from rtc.api import compile_file, compile_text, rank_table, topology_files
from rtc.api.validating import validate_source
from rtc.emit.hccl_v2 import mesh_port
from rtc.model.presets import presets
from rtc.resources import load_schema

TWO = EXAMPLES / "a5-2node-dp2-tp8.rtc"
FAMILY = EXAMPLES / "family-a5-64.rtc"


def _compiled(path: Path):
    result = compile_file(str(path))
    assert result.ok, [d.message for d in result.diagnostics]
    return result


def _ints_are_ints(doc) -> None:
    """Every number the 2.0 formats hold is a JSON integer, never a string."""
    for r in doc.get("rank_list", ()):
        for key in ("rank_id", "local_id", "device_id"):
            assert type(r[key]) is int
        for lv in r["level_list"]:
            assert type(lv["net_layer"]) is int
    for key in ("rank_count", "peer_count", "edge_count"):
        if key in doc:
            assert type(doc[key]) is int


def test_a5_presets_are_data():
    p = presets()["atlas-950-superpod"]
    assert (p.chip, p.devices_per_server, p.ranktable_version, p.dies_per_device,
            p.ports_per_die) == ("Ascend950", 8, "2.0", 2, 9)
    assert [(lv.net_layer, lv.net_type, lv.scope) for lv in p.levels] == [
        (0, "TOPO_FILE_DESC", "server"), (1, "CLOS", "super_pod"), (3, "CLOS", "cluster")]
    assert presets()["atlas-850"].topo_file == "server_8p.json"
    assert not presets()["atlas-800-a3"].is_a5 and p.is_a5
    # the mesh gives every peer of a device its own port, and the two ends agree on pairs
    for a in range(8):
        ports = [mesh_port(p, a, b) for b in range(8) if b != a]
        assert None not in ports and len(set(ports)) == 7


def test_two_node_example_matches_golden():
    result = _compiled(TWO)
    text, doc, problems = rank_table(result.topology, result.topology.jobs[0])
    assert problems == []
    golden = GOLDEN / "a5-2node-dp2-tp8"
    assert text.encode() == (golden / "hccl.json").read_bytes()
    files, problems = topology_files(result.topology, result.topology.jobs[0])
    assert problems == [] and [n for n, _t in files] == ["topo-a5-node0.json",
                                                         "topo-a5-node1.json"]
    for name, t in files:
        assert t.encode() == (golden / name).read_bytes(), name
        topo_doc = json.loads(t)
        jsonschema.Draft202012Validator(load_schema("topo-v2.0")).validate(topo_doc)
        _ints_are_ints(topo_doc)
        assert topo_doc["edge_count"] == len(topo_doc["edge_list"]) == 28 + 8 + 8
    jsonschema.Draft202012Validator(load_schema("hccl-v2.0")).validate(doc)
    _ints_are_ints(doc)
    assert doc["rank_count"] == 16 and [r["rank_id"] for r in doc["rank_list"]] == list(range(16))
    r9 = doc["rank_list"][9]  # a5-node1 device 1
    assert [lv["net_instance_id"] for lv in r9["level_list"]] == ["0_1", "0", "CLUSTER"]
    eids = [a["addr"] for a in r9["level_list"][0]["rank_addr_list"]]
    # eid base ...0100: die e of the device at position k is base + 2k + e
    assert eids == ["000000000000000000100000dfdf0102", "000000000000000000100000dfdf0103"]
    assert r9["level_list"][2]["rank_addr_list"] == [
        {"addr_type": "IPV4", "addr": "10.30.0.18", "ports": ["0/8"], "plane_id": "CLUSTER"}]


def test_emitted_table_and_topology_validate_clean():
    golden = GOLDEN / "a5-2node-dp2-tp8"
    for name in ("hccl.json", "topo-a5-node0.json"):
        report = validate_source((golden / name).read_bytes(), name)
        assert report.diagnostics == [], [d.message for d in report.diagnostics]


def test_family_example_matches_golden():
    result = _compiled(FAMILY)
    job = result.topology.jobs[0]
    text, doc, problems = rank_table(result.topology, job)
    assert problems == []
    golden = GOLDEN / "family-a5-64"
    digest = (golden / "hccl.json.sha256").read_text().split()[0]
    assert hashlib.sha256(text.encode()).hexdigest() == digest
    assert doc["rank_count"] == 512
    last = doc["rank_list"][-1]
    assert [lv["net_instance_id"] for lv in last["level_list"]] == ["sp1_31", "1", "CLUSTER"]
    files, problems = topology_files(result.topology, job)
    assert problems == [] and len(files) == 64
    by_name = dict(files)
    for name in ("topo-node00.json", "topo-node63.json"):
        assert by_name[name].encode() == (golden / name).read_bytes()


_CLUSTER = "cluster c {\n  hardware atlas-950-superpod\n}\n"


def _server(body: str) -> str:
    return _CLUSTER + "server a {\n  devices 0..1\n  super_pod 0\n" + body + "}\n"


def test_eid_list_needs_one_per_die():
    result = compile_text(_server("  eid 0a, 0b, 0c\n"), "x.rtc")
    (d,) = [d for d in result.diagnostics if d.code == "RTC206"]
    assert "2 devices x 2 dies but eid lists 3" in d.message and d.span.line == 7
    ok = compile_text(_server("  eid 0a, 0b, 0c, 0D\n"), "x.rtc")
    assert [d.eids for d in ok.topology.servers[0].devices] == [
        ("0" * 31 + "a", "0" * 31 + "b"), ("0" * 31 + "c", "0" * 31 + "d")]


def test_eid_past_128_bits_is_an_error():
    result = compile_text(_server("  eid base " + "f" * 32 + "\n"), "x.rtc")
    assert any(d.code == "RTC207" and "128 bits" in d.message for d in result.diagnostics)


def test_net_instance_layer_is_checked_and_used():
    bad = compile_text(_server("  eid base 10\n  net_instance 8 x\n"), "x.rtc")
    assert [(d.code, d.span.line, d.span.column) for d in bad.diagnostics] == [
        ("RTC114", 8, 16)]
    ok = compile_text(_server("  eid base 10\n  net_instance 0 rack7\n  net_instance 1 sp9\n"),
                      "x.rtc")
    assert ok.ok
    _text, doc, _p = rank_table(ok.topology)
    assert [lv["net_instance_id"] for lv in doc["rank_list"][0]["level_list"]] == [
        "rack7", "sp9", "CLUSTER"]


def test_server_outside_a_super_pod_has_no_super_pod_level():
    src = _CLUSTER.replace("atlas-950-superpod", "atlas-850") + \
        "server a {\n  devices 0..7\n  eid base 0\n}\n"
    result = compile_text(src, "x.rtc")
    assert result.ok
    _text, doc, _p = rank_table(result.topology)
    assert [(lv["net_layer"], lv["net_instance_id"]) for lv in doc["rank_list"][0]["level_list"]
            ] == [(0, "a"), (3, "CLUSTER")]
    files, _ = topology_files(result.topology)
    assert {e["net_layer"] for e in json.loads(files[0][1])["edge_list"]} == {0, 3}


def test_compile_o_writes_the_topology_files_beside_the_table(tmp_path: Path):
    out = tmp_path / "hccl.json"
    res = run_rtc("compile", str(TWO), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hccl.json", "topo-a5-node0.json", "topo-a5-node1.json"]
    assert (tmp_path / "topo-a5-node1.json").read_bytes() == \
        (GOLDEN / "a5-2node-dp2-tp8" / "topo-a5-node1.json").read_bytes()
    assert "2 topology files" in res.stderr


@pytest.mark.parametrize("hardware", ["atlas-800t-a2", "atlas-800-a3"])
def test_a2_a3_tables_stay_1x(hardware):
    src = f"cluster c {{\n  hardware {hardware}\n}}\nserver a {{\n  devices 0..1\n}}\n"
    result = compile_text(src, "x.rtc")
    _t, doc, _p = rank_table(result.topology)
    assert doc["version"] in ("1.0", "1.2")
    assert topology_files(result.topology) == ([], [])


def test_validate_1x_table_on_a5_hardware_names_the_version_and_the_mount():
    data = (GOLDEN / "a3-2node-dp2-tp16" / "hccl.json").read_bytes()
    report = validate_source(data, "hccl.json", hardware="atlas-950-superpod")
    (d,) = report.diagnostics  # the hardware checks are not run on an unreadable table
    assert (d.code, d.span.line, d.span.column) == ("RTC636", 3, 14)
    assert 'reads only rank table version "2.0"' in d.message and "EI0014" in d.message
    assert "/user/serverid/devindex/config" in d.hint and "RANK_TABLE_FILE" in d.hint


def test_validate_2_0_table_on_a3_hardware_is_the_same_rule():
    data = (GOLDEN / "a5-2node-dp2-tp8" / "hccl.json").read_bytes()
    report = validate_source(data, "hccl.json", hardware="atlas-800-a3")
    assert [(d.code, d.span.line) for d in report.diagnostics] == [("RTC636", 3)]
    assert "reads version 1.0 or 1.2" in report.diagnostics[0].message
    ok = validate_source(data, "hccl.json", hardware="atlas-950-superpod")
    assert ok.diagnostics == []


def test_chip_family_of_npu_smi_names():
    from rtc.checks.chip_version import chip_family

    assert [chip_family(n) for n in ("910B2", "950PR", "Ascend950DT", "910A", "Ascend910",
                                     "310P3")] == ["a2", "a5", "a5", "910a", None, None]
    assert chip_family("Ascend910", a3_columns=True) == "a3"


@pytest.mark.parametrize("golden", ["a5-2node-dp2-tp8", "family-a5-64"])
def test_rtc_import_round_trips_the_2_0_tables(golden):
    from rtc.api.importing import import_table

    if golden == "family-a5-64":  # the golden is a digest: rebuild the table in-process
        result = _compiled(FAMILY)
        text, doc, _p = rank_table(result.topology, result.topology.jobs[0])
    else:
        text = (GOLDEN / golden / "hccl.json").read_text()
        doc = json.loads(text)
    imported = import_table(text, "hccl.json")
    assert imported.ok, [d.message for d in imported.diagnostics]
    assert "hardware atlas-950-superpod" in imported.text
    back = compile_text(imported.text, "cluster.rtc")
    assert back.ok
    _t, again, _p = rank_table(back.topology)
    assert again == doc
    if golden == "family-a5-64":  # the given level-0 names are kept, the defaults left out
        assert "net_instance 0 sp1_31" in imported.text
    else:
        assert "net_instance" not in imported.text and "eid base 000000000000000000100000dfdf0100" \
            in imported.text


def test_stdout_says_the_topology_files_were_not_written():
    """fresh2 finding 13; and finding 15: rtc import --help names version 2.0."""
    r = run_rtc("compile", str(TWO), "--stdout")
    assert r.returncode == 0 and json.loads(r.stdout)["version"] == "2.0"
    assert "the 2 topology files (topo-<server>.json) it is paired with were not written" \
        in r.stderr
    from rtc.cli.import_cmd import import_command
    import inspect

    help_text = inspect.signature(import_command).parameters["table"].default.help
    assert "1.0, 1.2 or 2.0" in help_text
