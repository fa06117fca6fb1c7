"""Every LeaderWorkerSet rtc writes (the goldens of tests/golden/k8s: D1, D2, D5, the A3
super-pod example, H100 and GB200 NVL72) against the LeaderWorkerSet CRD's own published
schema (kubernetes-sigs/lws v0.10.0, tests/data/crds/README.md), besides the hand-written
schemas/lws.schema.json that rtc checks before writing; the pod templates are also checked
as v1 PodTemplates with kubernetes-validate (rtc.emit.kubernetes.manifest_problems)."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import GOLDEN, TESTS
from rtc.emit.kubernetes import manifest_problems

CRD = TESTS / "data" / "crds" / \
    "leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml.gz"
CD_CRD = TESTS / "data" / "crds" / "resource.nvidia.com_computedomains.v25.8.1.yaml.gz"
LWS_FILES = sorted((GOLDEN / "k8s").glob("*/lws-*.yaml"))


@pytest.fixture(scope="module")
def lws_schema() -> dict:
    crd = yaml.safe_load(gzip.decompress(CRD.read_bytes()))
    assert crd["spec"]["group"] == "leaderworkerset.x-k8s.io"
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return v1["schema"]["openAPIV3Schema"]


def _errors(doc: dict, schema: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.path))}: {e.message}"
            for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]


def test_the_goldens_cover_the_placement_examples():
    folders = {p.parent.name for p in LWS_FILES}
    assert {"a2-2node-dp2-tp8", "a3-2node-dp2-tp16", "pd-a3", "gpu-gb200-nvl72-tp8"} <= folders


@pytest.mark.parametrize("path", LWS_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_golden_leaderworkerset_passes_the_published_crd_schema(path, lws_schema):
    doc = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))[-1]
    assert doc["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert _errors(doc, lws_schema) == []
    assert manifest_problems(doc) == []


def test_the_published_schema_rejects_a_broken_leaderworkerset(lws_schema):
    doc = yaml.safe_load((GOLDEN / "k8s" / "a3-2node-dp2-tp16" / "lws-deepseek.yaml")
                         .read_text(encoding="utf-8"))
    bad = copy.deepcopy(doc)
    bad["spec"]["leaderWorkerTemplate"]["size"] = "two"
    assert any("leaderWorkerTemplate/size" in e for e in _errors(bad, lws_schema))
    bad = copy.deepcopy(doc)
    bad["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Always"
    assert any("restartPolicy" in e for e in _errors(bad, lws_schema))
    bad = copy.deepcopy(doc)
    del bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]
    assert any("containers" in e for e in _errors(bad, lws_schema))


@pytest.fixture(scope="module")
def compute_domain_schema() -> dict:
    crd = yaml.safe_load(gzip.decompress(CD_CRD.read_bytes()))
    assert crd["spec"]["group"] == "resource.nvidia.com"
    (v,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    return v["schema"]["openAPIV3Schema"]


def test_the_nvl72_compute_domain_passes_the_published_crd_schema(compute_domain_schema):
    """GB200 NVL72 over two trays: the ComputeDomain of NVIDIA's DRA driver (v25.8.1 CRD)
    before the LeaderWorkerSet, whose pods claim its channel template by name."""
    path = GOLDEN / "k8s" / "gpu-gb200-nvl72-tp8" / "lws-serve.yaml"
    cd, lws = yaml.safe_load_all(path.read_text(encoding="utf-8"))
    assert cd["kind"] == "ComputeDomain"
    assert _errors(cd, compute_domain_schema) == []
    assert manifest_problems(cd) == []
    name = cd["spec"]["channel"]["resourceClaimTemplate"]["name"]
    for role in ("leaderTemplate", "workerTemplate"):
        spec = lws["spec"]["leaderWorkerTemplate"][role]["spec"]
        assert [c["resourceClaimTemplateName"] for c in spec["resourceClaims"]] == [name]
    bad = copy.deepcopy(cd)
    del bad["spec"]["numNodes"]
    assert any("numNodes" in e for e in _errors(bad, compute_domain_schema))
    assert manifest_problems(bad) != []
    bad = copy.deepcopy(cd)
    bad["spec"]["channel"]["allocationMode"] = "Many"
    assert any("allocationMode" in e for e in _errors(bad, compute_domain_schema))
    assert manifest_problems(bad) != []
