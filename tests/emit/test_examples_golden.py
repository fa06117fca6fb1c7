"""Every example compiles, byte for byte equal to its golden rank table(s), and each
table validates against the schema in schemas/."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, run_rtc
from rtc.resources import load_schema
from rtc.schema import validate_document

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.rtc"))


def test_every_example_has_a_golden():
    for ex in EXAMPLE_FILES:
        assert (GOLDEN / ex.stem).is_dir(), f"no golden folder for {ex.name}"


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_matches_golden(example: Path, tmp_path: Path):
    res = run_rtc("compile", str(example), "--out-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    golden_dir = GOLDEN / example.stem
    # Very large outputs are kept as a SHA-256 of the exact bytes (hccl.json.sha256).
    for digest_file in sorted(golden_dir.glob("hccl*.json.sha256")):
        produced = (tmp_path / digest_file.name[:-len(".sha256")]).read_bytes()
        assert hashlib.sha256(produced).hexdigest() == digest_file.read_text().split()[0]
        doc = json.loads(produced)
        assert validate_document(doc, f"hccl-v{doc['version']}", filename="big") == []
    exact = sorted(p.name for p in golden_dir.glob("hccl*.json"))
    hashed = [p.name[:-len(".sha256")] for p in golden_dir.glob("hccl*.json.sha256")]
    got = sorted(p.name for p in tmp_path.glob("hccl*.json"))  # diagrams etc. may sit beside
    assert got == sorted(exact + hashed)
    for name in exact:
        produced = (tmp_path / name).read_bytes()
        assert produced == (golden_dir / name).read_bytes(), f"{example.name}: {name} differs"
        doc = json.loads(produced)
        jsonschema.Draft202012Validator(load_schema(f"hccl-v{doc['version']}")).validate(doc)
        # rtc's own validator also knows which keys belong to which version
        assert validate_document(doc, f"hccl-v{doc['version']}", filename=name) == []


def test_d1_readme_command_output(tmp_path: Path):
    out = tmp_path / "hccl.json"
    res = run_rtc("compile", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_bytes()
    doc = json.loads(out.read_text())
    # atlas-01's captured plan: device i -> 6.0.2.(2i+1)
    first = doc["server_list"][0]
    assert first["server_id"] == "10.0.0.6"  # atlas-01's host IP
    assert first["host_ip"] == "10.0.0.6"
    assert [d["device_ip"] for d in first["device"]] == [f"6.0.2.{2 * i + 1}" for i in range(8)]
    assert [d["rank_id"] for d in doc["server_list"][1]["device"]] == [str(r) for r in range(8, 16)]


def test_d6_equals_the_documented_table():
    documented = {"status": "completed", "version": "1.0", "server_count": "2",
                  "server_list": [
                      {"server_id": "node_0", "device": [
                          {"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"},
                          {"device_id": "1", "device_ip": "192.168.1.9", "rank_id": "1"}]},
                      {"server_id": "node_1", "device": [
                          {"device_id": "0", "device_ip": "192.168.2.8", "rank_id": "2"},
                          {"device_id": "1", "device_ip": "192.168.2.9", "rank_id": "3"}]}]}
    res = run_rtc("compile", str(EXAMPLES / "doc-2x2.rtc"), "--stdout")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == documented
    assert res.stdout == json.dumps(documented, indent=2) + "\n"


def test_a3_table_is_version_1_2_with_one_super_pod():
    res = run_rtc("compile", str(EXAMPLES / "a3-2node-dp2-tp16.rtc"), "--stdout")
    doc = json.loads(res.stdout)
    assert doc["version"] == "1.2"
    assert doc["super_pod_list"] == [{"super_pod_id": "0", "server_list": [
        {"server_id": "10.0.1.10"}, {"server_id": "10.0.1.11"}]}]
    sdids = [d["super_device_id"] for s in doc["server_list"] for d in s["device"]]
    assert sdids == [str(i) for i in range(32)]
    assert doc["server_list"][0]["host_ip"] == "10.0.1.10"


def test_family_1024_compiles_to_16384_ranks():
    from rtc.api import compile_file, rank_table

    result = compile_file(str(EXAMPLES / "family-a3-1024.rtc"))
    assert result.ok, result.diagnostics[:3]
    text, doc, problems = rank_table(result.topology, result.topology.jobs[0])
    assert not problems
    assert doc["server_count"] == "1024"
    ranks = [int(d["rank_id"]) for s in doc["server_list"] for d in s["device"]]
    assert ranks == list(range(16384))
    assert len(doc["super_pod_list"]) == 16
    assert doc["server_list"][1023]["server_id"] == "10.1.3.255"  # node1023's host IP
    assert doc["server_list"][1023]["device"][15]["device_ip"] == "172.19.255.16"
