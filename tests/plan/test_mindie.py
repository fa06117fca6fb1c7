"""MindIE as a launch target (framework mindie): the node's env and config.json keys, the
container_ip attribute in the tables, the global rank table written by --out-dir without
being asked, and rtc import of the global table (round trip)."""

from __future__ import annotations

import json

import jsonschema

from conftest import EXAMPLES, GOLDEN, mindie_files
from rtc.api import compile_file
from rtc.api.compiling import compile_text
from rtc.api.importing import import_table
from rtc.emit import global_ranktable
from rtc.emit.bundle import build_bundle
from rtc.emit.hccl_json import build_rank_table
from rtc.plan.mindie import FACTS
from rtc.resources import load_schema

EXAMPLE = EXAMPLES / "pd-mindie-a2.rtc"



def test_mindie_pd_writes_the_global_table_unasked_with_pod_ips():
    result = compile_file(str(EXAMPLE))
    assert result.ok
    files = mindie_files(result)
    text = files["global-ranktable.json"]
    assert text.encode() == (GOLDEN / "pd-mindie-a2" / "global-ranktable.json").read_bytes()
    doc = json.loads(text)
    jsonschema.Draft202012Validator(load_schema("mindie-global")).validate(doc)
    ips = [s["server_ip"] for g in doc["server_group_list"] for s in g["server_list"]]
    assert ips == ["172.16.2.1", "172.16.2.2", "172.16.2.11", "172.16.2.12"]
    frag = json.loads(files["mindie-p2.json"])
    assert frag["ServerConfig"]["ipAddress"] == "172.16.2.2"
    assert frag["ServerConfig"]["inferMode"] == "dmi"
    assert frag["BackendConfig"]["multiNodesInferEnabled"] is True
    assert frag["BackendConfig"]["npuDeviceIds"] == [list(range(8))]
    assert frag["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["worldSize"] == 8
    env = files["p2.env"]
    assert "export MIES_CONTAINER_IP=172.16.2.2\n" in env
    assert 'export RANK_TABLE_FILE="${RTC_DIR:-.}"/hccl-prefill.json\n' in env
    assert 'export RANKTABLEFILE="${RTC_DIR:-.}"/hccl-prefill.json\n' in env


def test_container_ip_in_hccl_json_and_host_ip_for_mindie_without_one():
    result = compile_file(str(EXAMPLE))
    table = build_rank_table(result.topology, result.topology.job("decode"))
    assert [s["container_ip"] for s in table["server_list"]] == ["172.16.2.11", "172.16.2.12"]
    text = EXAMPLE.read_text().replace("  container_ip 172.16.2.{10+i}\n", "")
    res = compile_text(text, "x.rtc")
    table = build_rank_table(res.topology, res.topology.job("decode"))
    assert [s["container_ip"] for s in table["server_list"]] == ["10.0.2.11", "10.0.2.12"]
    # a vLLM job's table gets container_ip only where it is declared
    res = compile_text((EXAMPLES / "pd-a3.rtc").read_text(), "pd-a3.rtc")
    assert "container_ip" not in build_rank_table(res.topology, res.topology.jobs[0])["server_list"][0]


def _round_trip(source: str, name: str):
    res = compile_text(source, name)
    pair = [p for p in res.plan.pairs if p.prefill and p.decode][0]
    doc = global_ranktable.build(res.topology, pair)
    text = json.dumps(doc, indent=2) + "\n"
    imp = import_table(text, "global-ranktable.json")
    assert imp.ok, [(d.code, d.message) for d in imp.diagnostics]
    back = compile_text(imp.text, "cluster.rtc")
    pair2 = [p for p in back.plan.pairs if p.prefill and p.decode][0]
    return doc, global_ranktable.build(back.topology, pair2), imp


def test_global_table_round_trip_compile_import_compile():
    for ex in ("pd-mindie-a2.rtc", "pd-a3.rtc"):
        doc, again, _imp = _round_trip((EXAMPLES / ex).read_text(), ex)
        assert again == doc, ex


def test_import_refuses_a_global_table_rtc_would_write_otherwise():
    doc = json.loads((GOLDEN / "pd-mindie-a2" / "global-ranktable.json").read_text())
    decode = [g for g in doc["server_group_list"] if g["group_id"] == "3"]  # 0, 1: Motor's
    decode[0]["deploy_server"] = "1"  # coordinator and controller; 2 prefill, 3 decode
    imp = import_table(json.dumps(doc), "g.json")
    assert not imp.ok
    assert [d.code for d in imp.diagnostics if d.code.startswith("RTC65")] == ["RTC659"]
    assert "deploy_server" in [d for d in imp.diagnostics if d.code == "RTC659"][0].message


def test_every_mindie_fact_has_a_source_and_the_written_names_are_listed():
    names = {f.name for f in FACTS}
    assert all(f.source and f.value for f in FACTS)
    for key in ("RANK_TABLE_FILE", "RANKTABLEFILE", "MIES_CONTAINER_IP",
                "MIES_CONTAINER_MANAGEMENT_IP", "BackendConfig.multiNodesInferEnabled",
                "BackendConfig.interNodeTLSEnabled", "ModelConfig.worldSize"):
        assert key in names
