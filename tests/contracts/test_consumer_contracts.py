"""Every example's outputs (rank tables, PD tables, global tables in both numberings) meet
every consumer contract that applies to them (rtc/tables/contracts.py), and a mutation per
contract (wrong type, missing field, wrong group id) breaks it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtc.tables.contracts import CONTRACTS, applies, broken, form_of

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
PD_EXAMPLES = ("pd-a3", "pd-mindie-a2")


def _form(doc: dict) -> str:
    if "server_group_list" in doc:
        return "mindie-global"
    if "prefill_device_list" in doc:
        return "pd-ranktable"
    return form_of(f"hccl-v{doc.get('version')}")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list[tuple[str, dict]]:
    """(label, document) of every example's exact golden rank tables, and of the PD and
    global tables of the prefill/decode examples in both numberings."""
    docs = [(f"{p.parent.name}/{p.name}", json.loads(p.read_text()))
            for p in sorted(GOLDEN.glob("*/hccl*.json")) if p.parent.name != "a5-2node-dp2-tp8"]
    docs = [(n, d) for n, d in docs if d.get("version") in ("1.0", "1.2")]
    # pd-a3 with vllm-ascend's LLMDataDist connector writes a PD table too.
    llmdd = tmp_path_factory.mktemp("llmdd") / "pd-a3-llmdatadist.rtc"
    llmdd.write_text((ROOT / "examples" / "pd-a3.rtc").read_text()
                     .replace("kv_connector mooncake_layerwise", "kv_connector llmdatadist"))
    for source in [ROOT / "examples" / f"{s}.rtc" for s in PD_EXAMPLES] + [llmdd]:
        stem = source.stem
        for numbering in ("mindie-motor", "omniinfer"):
            out = tmp_path_factory.mktemp(f"{stem}-{numbering}")
            res = subprocess.run([sys.executable, "-m", "rtc", "compile", str(source),
                                  "--out-dir", str(out),
                                  "--no-diagrams", "--global-ranktable",
                                  "--global-ranktable-for", numbering],
                                 capture_output=True, text=True)
            assert res.returncode == 0, res.stderr
            for p in sorted(out.glob("*ranktable*.json")):
                docs.append((f"{stem}/{numbering}/{p.name}", json.loads(p.read_text())))
    return docs


def test_outputs_cover_every_form(outputs):
    forms = {_form(d) for _n, d in outputs}
    assert forms == {"hccl-v1", "pd-ranktable", "mindie-global"}


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.consumer)
def test_every_output_meets_the_contract(contract, outputs):
    judged = [(n, d) for n, d in outputs if _form(d) == contract.form and applies(contract, d)]
    assert judged, f"no example output is read by {contract.consumer}"
    for name, doc in judged:
        assert broken(contract, doc) == [], f"{name} breaks {contract.consumer}"


def _first(node, path):
    """(container, key) of the first place ``path`` names in ``node`` (list items tried in
    order), or None."""
    if len(path) == 1:
        return (node, path[0]) if isinstance(node, dict) and path[0] in node else None
    key, rest = path[0], path[1:]
    items = node if key == "*" and isinstance(node, list) else \
        [node[key]] if isinstance(node, dict) and key in node else []
    return next((hit for item in items if (hit := _first(item, rest))), None)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.consumer)
def test_a_mutation_breaks_the_contract(contract, outputs):
    name, doc = next((n, d) for n, d in outputs
                     if _form(d) == contract.form and applies(contract, d)
                     and all(_first(d, p) for p, _k in contract.requires))
    for path, kind in contract.requires:
        if kind.endswith("?"):
            continue
        wrong = copy.deepcopy(doc)
        node, key = _first(wrong, path)
        node[key] = 7 if kind != "list" else {}          # wrong type
        assert broken(contract, wrong), f"{contract.consumer}: {path} as a number passes"
        missing = copy.deepcopy(doc)
        node, key = _first(missing, path)
        del node[key]                                    # missing field
        assert broken(contract, missing), f"{contract.consumer}: without {path} passes"
    if contract.groups:
        wrong = copy.deepcopy(doc)
        wrong["server_group_list"][0]["group_id"] = "9"  # wrong group id
        assert broken(contract, wrong), f"{contract.consumer}: group id 9 passes ({name})"


def test_server_id_not_an_ip_names_mindie():
    doc = json.loads((GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text())
    doc["server_list"][0]["server_id"] = "atlas-01"
    mindie = next(c for c in CONTRACTS if c.consumer.startswith("MindIE-LLM Python"))
    assert broken(mindie, doc) == [(("server_list", 0, "server_id"),
                                    '"atlas-01" is not an IP address')]
    hccl = next(c for c in CONTRACTS if c.consumer == "HCCL")
    assert broken(hccl, doc) == []
