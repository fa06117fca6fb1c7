"""Rank table 2.0 through the model: ``rtc validate`` of a 2.0 table runs the compile's
checks with the same rule ids (a failing and a passing table per rule), the Atlas 350
preset, and the memory-lean 2.0 writer (byte-identical text, shared topology files)."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import EXAMPLES, GOLDEN
from rtc.api import compile_file, compile_text, rank_table, topology_files
from rtc.api.validating import validate_source
from rtc.emit.hccl_v2 import render_v2

GOLD = json.loads((GOLDEN / "a5-2node-dp2-tp8" / "hccl.json").read_text())


def _validate(doc: dict, **kw):
    text = json.dumps(doc, indent=2) + "\n"
    return text, validate_source(text, "hccl.json", **kw)


def _line_of(text: str, needle: str, after: str, delta: int = 0) -> int:
    """1-based line of the first ``needle`` after the first ``after`` (plus ``delta``)."""
    start = text.index(after)
    return text[:text.index(needle, start)].count("\n") + 1 + delta


def _errors(report) -> list[str]:
    return sorted({d.code for d in report.diagnostics})


def _no_eids(doc: dict) -> dict:
    for r in doc["rank_list"][8:]:
        for lv in r["level_list"][:2]:
            lv["rank_addr_list"] = []
    return doc


def _dup_eid(doc: dict) -> dict:
    taken = doc["rank_list"][1]["level_list"][0]["rank_addr_list"][0]["addr"]
    for lv in doc["rank_list"][9]["level_list"][:2]:
        lv["rank_addr_list"][0]["addr"] = taken
    return doc


def _dup_ip(doc: dict) -> dict:
    doc["rank_list"][9]["level_list"][2]["rank_addr_list"][0]["addr"] = \
        doc["rank_list"][1]["level_list"][2]["rank_addr_list"][0]["addr"]
    return doc


def _dup_device(doc: dict) -> dict:
    doc["rank_list"][9]["device_id"] = doc["rank_list"][9]["local_id"] = 2
    return doc


def _shared_instance(doc: dict) -> dict:
    """The table of two servers given one level-0 name (fresh2 finding 1)."""
    for r in doc["rank_list"][:8]:
        r["level_list"][0]["net_instance_id"] = "0_1"
    return doc


def _device_99(doc: dict) -> dict:
    doc["rank_list"][1]["device_id"] = 99
    return doc


def _two_pods_no_ip(doc: dict) -> dict:
    for r in doc["rank_list"][8:]:
        r["level_list"][1]["net_instance_id"] = "1"
        del r["level_list"][2]
    return doc


def _two_pods(doc: dict) -> dict:
    for r in doc["rank_list"][8:]:
        r["level_list"][1]["net_instance_id"] = "1"
    return doc


@pytest.mark.parametrize("rule, broken, fixed, where", [
    ("RTC221", _no_eids, None, ('"net_instance_id": "0_1"', '"rank_id": 8,')),
    ("RTC224", _dup_eid, None, ('"addr"', '"rank_id": 9,')),
    ("RTC208", _dup_ip, None, ('"addr": "10.30.0.2"', '"rank_id": 9,')),
    ("RTC204", _dup_device, None, ('"device_id": 2', '"rank_id": 10,')),  # the repeat
    # the instance's device list starts again at rank 8: a second server, as compiled
    # at the rank's device_id, not at the server's first net_instance_id (fresh2 finding 9)
    ("RTC205", _device_99, None, ('"device_id": 99', '"rank_id": 1,')),
    ("RTC232", _shared_instance, None, ('"net_instance_id": "0_1"', '"rank_id": 8,')),
    # the first rank without an address: its object (the line above its rank_id)
    ("RTC211", _two_pods_no_ip, _two_pods, ('"rank_id": 8,', '"rank_id": 8,', -1)),
])
def test_validate_2_0_runs_the_model_rule(rule, broken, fixed, where):
    text, bad = _validate(broken(copy.deepcopy(GOLD)))
    found = [d for d in bad.diagnostics if d.code == rule]
    assert found, [(d.code, d.message) for d in bad.diagnostics]
    assert found[0].span.line == _line_of(text, *where), found[0].message
    _t, good = _validate((fixed or (lambda d: d))(copy.deepcopy(GOLD)))
    assert good.diagnostics == [], [(d.code, d.message) for d in good.diagnostics]


def test_rtc224_names_the_device_and_its_first_holder():
    text, rep = _validate(_dup_eid(copy.deepcopy(GOLD)))
    (d,) = rep.diagnostics
    assert d.subject == "server 0_1, device 1" and "already die 0 of 0_0 device 1" in d.message
    assert d.related[0].span.line == _line_of(text, '"addr"', '"rank_id": 1,')


def _per_port(doc: dict, rank: int, eids: list[str]) -> dict:
    """Level 0 of ``rank`` as MindCluster writes physical EIDs: one entry per port."""
    lv = doc["rank_list"][rank]["level_list"][0]
    lv["rank_addr_list"] = [{"addr_type": "EID", "addr": e, "ports": [f"0/{p}"],
                             "plane_id": "0"} for p, e in zip((4, 5, 6), eids)]
    return doc


def test_per_port_eids_are_lowered_and_checked():
    fresh = ["00000000000000000000000000aa00%02x" % n for n in (1, 2, 3)]
    doc = _per_port(copy.deepcopy(GOLD), 0, fresh)
    _t, rep = _validate(doc)
    assert not [d for d in rep.diagnostics if d.code in ("RTC221", "RTC224")]
    dev = rep.lowered.topology.servers[0].devices[0]
    assert dev.port_eids == tuple((0, p, e) for p, e in zip(("0/4", "0/5", "0/6"), fresh))
    # a port EID that is another device's die EID is RTC224
    other = GOLD["rank_list"][3]["level_list"][0]["rank_addr_list"][0]["addr"]
    _t, rep = _validate(_per_port(copy.deepcopy(GOLD), 0, fresh[:2] + [other]))
    assert [d.code for d in rep.diagnostics if d.code == "RTC224"] == ["RTC224"]


def test_ipv4_at_the_ub_levels_counts_as_an_address():
    doc = copy.deepcopy(GOLD)
    for k, r in enumerate(doc["rank_list"]):
        r["level_list"][0]["rank_addr_list"] = [
            {"addr_type": "IPV4", "addr": f"172.16.0.{k + 1}", "ports": ["1/0"], "plane_id": "0"}]
    _t, rep = _validate(doc)
    assert "RTC221" not in _errors(rep)
    assert rep.lowered.topology.servers[0].devices[0].port_ips[0][:2] == (0, 1)


def test_no_server_order_warning_on_2_0():
    """RTC216 is about 1.x server_list order: a 2.0 table has explicit rank ids."""
    doc = copy.deepcopy(GOLD)
    names = {"0_0": "0_10", "0_1": "0_9"}
    for r in doc["rank_list"]:
        r["level_list"][0]["net_instance_id"] = names[r["level_list"][0]["net_instance_id"]]
    _t, rep = _validate(doc)
    assert rep.diagnostics == []


_A350 = """cluster c {
  hardware atlas-350
}
server h1 {
  devices 0..1
  device_ip 10.0.0.{d+1}
}
server h2 {
  devices 0..1
  device_ip 10.0.1.{d+1}
}
"""


def test_atlas_350_needs_no_eid_and_validates_back():
    result = compile_text(_A350, "x.rtc")
    assert not [d for d in result.diagnostics if d.code in ("RTC221", "RTC211")]
    text, doc, problems = rank_table(result.topology)
    assert problems == []
    assert [lv["net_layer"] for lv in doc["rank_list"][0]["level_list"]] == [0, 3]
    assert doc["rank_list"][0]["level_list"][0]["rank_addr_list"] == []
    files, _ = topology_files(result.topology)
    assert {e["net_layer"] for e in json.loads(files[0][1])["edge_list"]} == {3}
    rep = validate_source(text, "hccl.json")
    assert rep.hardware.startswith("atlas-350") and rep.diagnostics == []
    bad = compile_text(_A350.replace("  device_ip 10.0.1.{d+1}\n", ""), "x.rtc")
    assert [d.code for d in bad.diagnostics if d.code == "RTC211"] == ["RTC211"]


def test_render_v2_is_the_json_module_text():
    for doc in (GOLD, {}, {"a": []}, {"a": [1, {"b": []}], "c": {}, "d": "x"}):
        assert render_v2(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_servers_alike_share_one_topology_text():
    result = compile_file(str(EXAMPLES / "a5-2node-dp2-tp8.rtc"))
    files, _ = topology_files(result.topology, result.topology.jobs[0])
    assert files[0][1] is files[1][1]


_UB = """cluster c {
  hardware atlas-950-superpod
}
family n[0..1] {
  devices 0..1
  super_pod 0
  device_ip 10.0.{i}.{d+1}
%s}
"""


def test_port_eid_level_ip_and_plane_reach_the_table_and_back():
    body = ("  port_eid 0 000000000000000000100000dfdf{i}{k}00\n"
            "  level_ip 1 172.16.{i}.{d*2+5}, 172.16.{i}.{d*2+6}\n"
            "  plane 1 plane{2*k}, plane{2*k+1}\n")
    result = compile_text(_UB % body, "x.rtc")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    text, doc, problems = rank_table(result.topology)
    assert problems == []
    l0, l1, l3 = doc["rank_list"][3]["level_list"]  # n1 device 1
    # port 1/0 (towards device 0) of die 1: the device's EID + 1 + 1*9 + 0
    assert l0["rank_addr_list"] == [{"addr_type": "EID", "addr": "0" * 18 + "100000dfdf110a",
                                     "ports": ["1/0"], "plane_id": "1"}]
    assert [(a["addr_type"], a["addr"], a["ports"], a["plane_id"]) for a in l1["rank_addr_list"]
            ] == [("IPV4", "172.16.1.7", ["0/4", "0/5", "0/6", "0/7"], "plane2"),
                  ("IPV4", "172.16.1.8", ["1/5", "1/6"], "plane3")]
    assert l3["rank_addr_list"][0]["plane_id"] == "CLUSTER"
    rep = validate_source(text, "hccl.json")
    assert rep.diagnostics == [], [(d.code, d.message) for d in rep.diagnostics]
    dev = rep.lowered.topology.servers[1].devices[1]
    # one port of die 1 at level 0 reads back as that die's EID (die 0 has none there)
    assert dev.eids == ("", "0" * 18 + "100000dfdf110a") and dev.port_eids is None
    assert [(lay, die, str(ip)) for lay, die, ip in dev.port_ips] == [
        (1, 0, "172.16.1.7"), (1, 1, "172.16.1.8")]


@pytest.mark.parametrize("body, code, line", [
    ("  eid base {i}00\n  plane 1 a, b, c\n", "RTC206", 9),
    ("  eid base {i}00\n  level_ip 1 172.16.{i}.{d*300}\n", "RTC207", 9),
    ("  eid base {i}00\n  port_eid 0 xyz\n", "RTC114", 9),
    # a templated EID of 33 hex digits is refused like the literal (fresh2 finding 2)
    ("  eid base {i}00\n  port_eid 0 000000000000000000100000dfdf{i:02}{k}00\n", "RTC207", 9),
    ("  eid base 000000000000000000100000dfdf00{1000+i}00\n", "RTC207", 8),
    # port EIDs at layer 0 only: the super pod layer (1) has no address
    ("  port_eid 0 000000000000000000100000dfdf{i}{k}00\n", "RTC221", 4),
])
def test_ub_layer_lines_are_checked(body, code, line):
    result = compile_text(_UB % body, "x.rtc")
    found = [d for d in result.diagnostics if d.code == code]
    assert found and found[0].span.line == line, [(d.code, d.message) for d in
                                                  result.diagnostics]
    assert not [d for d in result.diagnostics if d.code == "RTC224"]


def test_rank_table_2_attributes_on_a3_have_no_effect():
    src = ("cluster c {\n  hardware atlas-800-a3\n}\nserver a {\n  devices 0..1\n"
           "  super_pod 0\n  super_device_id base 0\n  eid base 0\n}\n")
    found = [d for d in compile_text(src, "x.rtc").diagnostics if d.code == "RTC512"]
    assert [(d.span.line, "`eid` has no effect" in d.message) for d in found] == [(8, True)]


def test_rtc670_a_port_bound_to_two_addresses():
    doc = copy.deepcopy(GOLD)
    addrs = doc["rank_list"][2]["level_list"][1]["rank_addr_list"]
    addrs[1]["ports"] = addrs[1]["ports"] + ["0/5"]
    text, rep = _validate(doc)
    (d,) = [d for d in rep.diagnostics if d.code == "RTC670"]
    assert "port 0/5 is already bound to rank_addr_list[0]" in d.message
    rank2 = text.index('"rank_id": 2,')
    at = text.index('"0/5"', text.index('"1/6"', rank2))
    assert d.span.line == text[:at].count("\n") + 1
    _t, ok = _validate(copy.deepcopy(GOLD))
    assert not [d for d in ok.diagnostics if d.code == "RTC670"]


def test_rtc230_from_a_table():
    doc = copy.deepcopy(GOLD)
    for k, r in enumerate(doc["rank_list"]):
        r["level_list"][1]["rank_addr_list"] = [
            {"addr_type": "IPV4", "addr": f"172.16.{k % 8}.{e}", "ports": p, "plane_id": str(e)}
            for e, p in ((0, ["0/4"]), (1, ["1/5"]))]
    _t, bad = _validate(doc)
    assert [d.subject for d in bad.diagnostics if d.code == "RTC230"] == ["server 0_1, device 0"]
    for k, r in enumerate(doc["rank_list"]):
        for a in r["level_list"][1]["rank_addr_list"]:
            a["addr"] = f"172.16.{k}.{a['plane_id']}"
    _t, good = _validate(doc)
    assert good.diagnostics == [], [(d.code, d.message) for d in good.diagnostics]


_BACKUP = """cluster c {
  hardware atlas-950-superpod
}
%s {
  devices 0..7
  super_pod 0
  device_ip 10.0.{i}.{d+1}
  eid base {i}00
  backup %s
}
"""


def test_backup_rank_is_emitted_validated_and_imported():
    from rtc.api.importing import import_table

    result = compile_text((_BACKUP % ("server n0", "7 replaces 3")).replace("{i}", "0"), "x.rtc")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    text, doc, _p = rank_table(result.topology)
    r7 = doc["rank_list"][7]
    assert (r7["local_id"], r7["device_id"], r7["replaced_local_id"]) == (64, 7, 3)
    assert [r["local_id"] for r in doc["rank_list"][:7]] == list(range(7))
    assert validate_source(text, "hccl.json").diagnostics == []
    imported = import_table(text, "hccl.json")
    assert imported.ok and "backup 7 replaces 3" in imported.text


@pytest.mark.parametrize("block, value, message, line", [
    ("family n[0..1]", "7 replaces 3", "has 2 backup ranks", 9),
    ("server n0", "9 replaces 3", "backup device 9 is not one of its devices", 9),
    ("server n0", "3 replaces 3", "replaces itself", 9),
    # fresh2 finding 6: the replaced local_id must be another device of the server
    ("server n0", "7 replaces 12", "replaces local_id 12, but atlas-950-superpod has "
     "devices 0..7", 9),
])
def test_rtc231_backup_rank(block, value, message, line):
    src = _BACKUP % (block, value)
    if block.startswith("server"):
        src = src.replace("{i}", "0")
    (d,) = [d for d in compile_text(src, "x.rtc").diagnostics if d.code == "RTC231"]
    assert message in d.message and d.span.line == line


def test_ub_layer_forms_match_golden():
    """port_eid, level_ip, plane and backup in one table (goldens/a5-ub-layers)."""
    folder = GOLDEN / "a5-ub-layers"
    result = compile_file(str(folder / "cluster.rtc"))
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    text, _doc, problems = rank_table(result.topology)
    assert problems == [] and text.encode() == (folder / "rank-table.json").read_bytes()
    assert validate_source(text, "rank-table.json").diagnostics == []


def test_readme_port_eid_example_gives_32_digit_eids():
    """The Ascend guide's port_eid line, in a 64-node family, compiles to full 32-digit
    EIDs with the server, device and port numbers in place (fresh2 finding 2)."""
    from conftest import ROOT

    readme = (ROOT / "docs" / "ascend.md").read_text()
    lines = [x.split("#")[0] + "\n" for x in readme.splitlines()
             if x.strip().startswith(("port_eid 0 ", "level_ip 1 "))]
    src = _UB.replace("n[0..1]", "n[00..63]").replace("super_pod 0", "super_pod {i/32}") % (
        "".join(lines))
    result = compile_text(src, "x.rtc")
    errs = [(d.code, d.message) for d in result.diagnostics if d.severity.name == "ERROR"]
    assert errs == []
    _t, doc, _p = rank_table(result.topology)
    eids = [a["addr"] for r in doc["rank_list"] for a in r["level_list"][0]["rank_addr_list"]]
    assert {len(e) for e in eids} == {32} and len(set(eids)) == len(eids)
    # n63 device 1 die 1 port 0: the device's EID (...dfdf 63 1 00) + 1 + 9
    assert "0" * 17 + "100000dfdf6310a" in eids


def test_shared_level0_instance_is_one_rule_in_both_front_ends():
    """compile refuses what validate would refuse, with the same rule (fresh2 finding 1)."""
    from conftest import CASES

    src = (CASES / "checks" / "RTC232-shared-net-instance.rtc").read_text()
    assert "RTC232" in [d.code for d in compile_text(src, "x.rtc").diagnostics]
    _t, rep = _validate(_shared_instance(copy.deepcopy(GOLD)))
    assert [d.code for d in rep.diagnostics] == ["RTC232"]


def test_rtc231_replaced_local_id_of_a_table():
    """A 2.0 table's backup rank replacing a local_id its instance does not have."""
    src = (_BACKUP % ("server n0", "7 replaces 3")).replace("{i}", "0")
    text, _doc, _p = rank_table(compile_text(src, "x.rtc").topology)
    assert validate_source(text, "hccl.json").diagnostics == []
    bad = text.replace('"replaced_local_id": 3', '"replaced_local_id": 12')
    (d,) = validate_source(bad, "hccl.json").diagnostics
    assert d.code == "RTC231" and "replaces local_id 12 (replaced_local_id)" in d.message
    assert d.span.line == _line_of(bad, '"replaced_local_id": 12', '"local_id": 64')


def test_rank_list_of_the_wrong_type_does_not_crash_the_hardware_inference():
    """A hypothesis-found crash: "rank_list": 1 reached preset_v2's loop."""
    rep = validate_source('{"version": "2.0", "rank_count": 2, "status": "completed", '
                          '"rank_list": 1}\n', "hccl.json")
    assert rep.diagnostics and all(d.span.line >= 1 for d in rep.diagnostics)


def test_rtc221_names_the_layer_and_port_eid():
    """port_eid at layer 0 only: RTC221 names layer 1 and the attributes that fill it
    (fresh2 finding 12)."""
    src = _UB % "  port_eid 0 000000000000000000100000dfdf{i}{k}00\n"
    (d,) = [d for d in compile_text(src, "x.rtc").diagnostics if d.code == "RTC221"]
    assert "no UB address (eid, port_eid or level_ip) at layer 1" in d.message
    assert "`port_eid 1 HEX` / `level_ip 1 ADDR`" in d.hint


def _set(path: tuple, value):
    """A mutation of GOLD: the value at ``path`` (a rank_list path) set to ``value``."""
    def mutate(doc: dict) -> dict:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value
        return doc
    return mutate


_L0 = ("level_list", 0, "rank_addr_list", 0)


@pytest.mark.parametrize("rule, mutate, where", [
    # fresh2 finding 4: addresses not of their addr_type
    ("RTC671", _set(("rank_list", 0) + _L0 + ("addr",), "xyz"), ('"xyz"', '"rank_id": 0,')),
    ("RTC671", _set(("rank_list", 0) + _L0 + ("addr",), "00" * 17),
     ('"' + "00" * 17, '"rank_id": 0,')),
    ("RTC671", _set(("rank_list", 0, "level_list", 2, "rank_addr_list", 0, "addr"),
                    "10.30.0.300"), ('"10.30.0.300"', '"rank_id": 0,')),
    ("RTC671", _set(("rank_list", 0, "level_list", 2, "rank_addr_list", 0, "addr_type"),
                    "IPV6"), ('"addr": "10.30.0.1"', '"rank_id": 0,')),
    # fresh2 finding 5: structure the schema cannot say
    ("RTC672", _set(("rank_list", 1, "local_id"), 0), ('"local_id": 0', '"rank_id": 1,')),
    ("RTC673", _set(("rank_list", 1, "local_id"), 1.0), ('"local_id": 1.0', '"rank_id": 1,')),
    # fresh-user F12: a local_id that is no NPU of the 8-NPU server
    ("RTC679", _set(("rank_list", 3, "local_id"), 9), ('"local_id": 9', '"rank_id": 3,')),
    ("RTC652", _set(("rank_list", 7, "replaced_local_id"), 3),
     ('"replaced_local_id"', '"rank_id": 7,')),
    ("RTC674", _set(("rank_list", 2, "level_list", 2, "net_layer"), 2),
     ('"net_layer": 2', '"rank_id": 2,')),
    ("RTC674", lambda doc: [lv.__setitem__("net_layer", 7) for r in doc["rank_list"]
                            for lv in r["level_list"][2:]] and doc,
     ('"net_layer": 7', '"rank_id": 0,')),
    # fresh2 finding 9: a port the NPU does not have, not a duplicate EID
    ("RTC675", _set(("rank_list", 0) + _L0 + ("ports", 0), "9/99"), ('"9/99"', '"rank_id": 0,')),
    ("RTC676", _set(("rank_list", 0, "level_list", 1, "rank_addr_list", 0, "ports", 0), "0/0"),
     ('"0/0"', '"net_layer": 1,')),
])
def test_2_0_field_rules(rule, mutate, where):
    text, rep = _validate(mutate(copy.deepcopy(GOLD)))
    assert [d.code for d in rep.diagnostics] == [rule], [(d.code, d.message)
                                                         for d in rep.diagnostics]
    assert rep.diagnostics[0].span.line == _line_of(text, *where), rep.diagnostics[0].message
    assert rep.diagnostics[0].hint


def test_2_0_local_id_out_of_the_server_is_located_and_named():
    """fresh-user F12: rank 3 with local_id 9 and device_id 3 on 8-NPU servers is RTC679 at
    the 9, naming the server's local_ids and suggesting the device_id; the backup rank's
    local_id 64 is no finding."""
    doc = copy.deepcopy(GOLD)
    doc["rank_list"][3]["local_id"] = 9
    text, rep = _validate(doc)
    (d,) = rep.diagnostics
    line = _line_of(text, '"local_id": 9', '"rank_id": 3,')
    assert (d.code, d.span.line, d.span.column) == \
        ("RTC679", line, text.splitlines()[line - 1].index("9") + 1)
    assert d.message.startswith("rank_list[3].local_id: local_id 9 (its device_id is 3) is no "
                                "NPU of its server")
    assert "lists local_ids 0..7 (64 only for the backup rank)" in d.message
    assert d.hint == "set local_id 3, the NPU's number in the server"
    backup = copy.deepcopy(GOLD)
    backup["rank_list"][7].update(local_id=64, replaced_local_id=7)
    assert "RTC679" not in [d.code for d in _validate(backup)[1].diagnostics]


def test_2_0_field_rules_pass_on_rtc_s_own_table():
    _t, rep = _validate(copy.deepcopy(GOLD))
    assert rep.diagnostics == []


def test_atlas_350_eid_and_super_pod_are_flagged_and_name_nothing():
    """fresh2 finding 8: `eid base` and `super_pod` on atlas-350 are RTC512 with a 950
    hint, and super_pod does not rename the level-0 instance."""
    src = _A350.replace("  device_ip 10.0.0.{d+1}\n", "  device_ip 10.0.0.{d+1}\n"
                        "  eid base 000000000000000000100000dfdf0000\n  super_pod 0\n")
    result = compile_text(src, "x.rtc")
    found = {d.message.split("`")[1]: d for d in result.diagnostics if d.code == "RTC512"}
    assert set(found) == {"eid", "super_pod"}
    assert "atlas-950-superpod" in found["super_pod"].hint
    _t, doc, _p = rank_table(result.topology)
    assert doc["rank_list"][0]["level_list"][0]["net_instance_id"] == "h1"


def test_import_infers_the_hardware_validate_infers():
    """fresh2 finding 8: rtc's own atlas-350 table imports without --hardware."""
    from rtc.api.importing import import_table

    text, _doc, _p = rank_table(compile_text(_A350, "x.rtc").topology)
    assert validate_source(text, "hccl.json").hardware.startswith("atlas-350")
    imported = import_table(text, "hccl.json")
    assert imported.ok and "hardware atlas-350" in imported.text


def test_validate_as_atlas_350_refuses_ub_addresses():
    """fresh2 finding 8: --hardware atlas-350 on a table with UB EIDs is RTC674."""
    text = json.dumps(GOLD, indent=2) + "\n"
    rep = validate_source(text, "hccl.json", hardware="atlas-350")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC674"]
    assert "atlas-350 has no UB ports at layer 0" in d.message
    assert validate_source(text, "hccl.json", hardware="atlas-950-superpod").diagnostics == []
