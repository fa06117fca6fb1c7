"""`rtc validate` / `rtc import` of a ConfigMap written as JSON (`kubectl get cm NAME -o
json`, or a `List` of them): read by the ConfigMap reader like the same object in YAML,
not taken for a rank table without `version` (RTC607)."""

from __future__ import annotations

import json

from conftest import TESTS, run_main
from rtc.api.importing import import_table
from rtc.api.validate_k8s import validate_configmap
from rtc.tables.configmap import is_json_configmap, looks_like_yaml

DATA = TESTS / "data" / "k8s"


def test_a_json_configmap_list_is_routed_to_the_configmap_reader():
    data = (DATA / "kubectl-get-cm-completed.json").read_bytes()
    assert is_json_configmap(data) and looks_like_yaml(data, "cm.json")
    one = json.dumps(json.loads(data)["items"][0]).encode()
    assert looks_like_yaml(one, "cm.json") and looks_like_yaml(b"[" + one + b"]", "x")


def test_a_rank_table_or_other_json_stays_with_the_json_reader():
    table = json.loads(json.loads((DATA / "kubectl-get-cm-completed.json").read_text())
                       ["items"][0]["data"]["hccl.json"])
    assert not looks_like_yaml(json.dumps(table).encode(), "hccl.json")
    assert not looks_like_yaml(b'{"apiVersion": "v1", "kind": "ConfigMap"', "cut.json")


def test_a_json_list_of_other_kinds_is_rtc772_naming_them_not_rtc607():
    rep = validate_configmap((DATA / "pods-ok.json").read_bytes(), "pods.json")
    assert [(d.code, d.span.line, d.span.column, d.message) for d in rep.diagnostics] == [
        ("RTC772", 1, 1, "pods.json holds no ConfigMap (kinds: Pod, Pod)")]
    assert looks_like_yaml((DATA / "pods-ok.json").read_bytes(), "pods.json")


def test_validate_reads_a_json_configmap_and_locates_its_finding():
    assert validate_configmap((DATA / "kubectl-get-cm-completed.json").read_bytes(),
                              "cm.json").diagnostics == []
    text = (DATA / "kubectl-get-cm-dup-ip.json").read_text()
    rep = validate_configmap(text, "cm.json")
    (d,) = rep.diagnostics
    line = next(k for k, x in enumerate(text.splitlines(), 1) if '"hccl.json"' in x)
    assert (d.code, d.span.line, d.span.column) == \
        ("RTC208", line, text.splitlines()[line - 1].index('"{') + 2)     # the table's `{`
    assert d.subject.startswith("ConfigMap rings-config-deepseek")


def test_a_tab_indented_json_configmap_is_read():
    doc = json.loads((DATA / "kubectl-get-cm-completed.json").read_text())
    rep = validate_configmap(json.dumps(doc, indent="\t"), "cm.json")
    assert rep.diagnostics == [] and rep.form == "configmap:hccl-v1.0"


def test_cli_validate_and_import_of_json_configmap(monkeypatch, capsys, tmp_path):
    path = DATA / "kubectl-get-cm-completed.json"
    assert run_main(monkeypatch, "validate", str(path)) == 0
    assert "RTC607" not in capsys.readouterr().out
    out_json, out_yaml = tmp_path / "j.rtc", tmp_path / "y.rtc"
    assert run_main(monkeypatch, "import", str(path), "-o", str(out_json)) == 0
    assert run_main(monkeypatch, "import", str(DATA / "kubectl-get-cm-completed.yaml"),
                    "-o", str(out_yaml)) == 0
    strip = lambda p: p.read_text().split("\n", 1)[1]       # noqa: E731 (first line: the file)
    assert strip(out_json) == strip(out_yaml)


def test_import_api_of_json_configmap_gives_the_yaml_result():
    got = import_table((DATA / "kubectl-get-cm-completed.json").read_bytes(), "cm.json")
    want = import_table((DATA / "kubectl-get-cm-completed.yaml").read_bytes(), "cm.yaml")
    assert got.ok and got.form == want.form == "configmap:hccl-v1.0"
    assert got.text.split("\n", 1)[1] == want.text.split("\n", 1)[1]
