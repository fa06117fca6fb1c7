"""`rtc validate` of Kubernetes inputs: rank tables inside ConfigMap YAML (a manifest, or
`kubectl get cm -o yaml` output with a List), located in the YAML; the initializing
status; and (below) `--pods` with `kubectl get pods -o json`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import GOLDEN
from rtc.api.validate_k8s import validate_configmap
from test_out_dir_transaction import run_main

DATA = Path(__file__).resolve().parent / "data" / "k8s"


def codes(rep):
    return [(d.code, d.span.line, d.span.column) for d in rep.diagnostics]


def check(name: str, **kw):
    path = DATA / name
    return validate_configmap(path.read_bytes(), str(path), **kw)


def test_rtc_written_configmap_passes_and_a_broken_one_is_located_in_the_yaml():
    cm = GOLDEN / "k8s" / "a2-2node-dp2-tp8" / "rings-config-deepseek.yaml"
    text = cm.read_text()
    rep = validate_configmap(text, "cm.yaml")
    assert rep.diagnostics == [] and rep.form == "configmap:hccl-v1.0"
    bad = text.replace('"device_ip": "6.0.2.3"', '"device_ip": "6.0.2.1"')
    rep = validate_configmap(bad, "cm.yaml")
    (d,) = rep.diagnostics
    lines = [i + 1 for i, x in enumerate(bad.splitlines())
             if x == '              "device_ip": "6.0.2.1",']
    assert len(lines) == 2      # device 0's own line and the copy on device 1
    assert (d.code, d.span.line, d.span.column) == ("RTC208", lines[1], 28)
    assert d.related[0].span.line == lines[0]
    assert d.subject.startswith("ConfigMap rings-config-deepseek")


def test_kubectl_list_with_one_line_table():
    assert check("kubectl-get-cm-completed.yaml").diagnostics == []
    rep = check("kubectl-get-cm-dup-ip.yaml")
    (d,) = rep.diagnostics
    text = (DATA / "kubectl-get-cm-dup-ip.yaml").read_text().splitlines()[d.span.line - 1]
    # the column is the duplicated IP inside the single-quoted one-line value
    assert d.code == "RTC208" and text[d.span.column - 1:].startswith('"192.0.2.1","rank_id":"11"')


def test_initializing_is_a_note_or_an_error_with_require_completed():
    rep = check("rings-config-initializing.yaml")
    assert codes(rep) == [("RTC774", 11, 9)] and rep.ok
    rep = check("rings-config-initializing.yaml", require_completed=True)
    assert codes(rep) == [("RTC774", 11, 9)] and not rep.ok


@pytest.mark.parametrize("name, expected", [
    ("not-a-configmap.yaml", [("RTC772", 1, 1)]),
    ("configmap-no-hccl-json.yaml", [("RTC773", 8, 3)]),
    ("broken.yaml", [("RTC771", 8, 1)]),
])
def test_bad_yaml_inputs(name, expected):
    rep = check(name)
    assert codes(rep) == expected and not rep.ok


def test_other_kinds_beside_a_configmap_are_noted():
    text = (DATA / "not-a-configmap.yaml").read_text() + "---\n" + \
        (DATA / "rings-config-initializing.yaml").read_text()
    assert [d.code for d in validate_configmap(text, "two.yaml").diagnostics] == [
        "RTC775", "RTC774"]


def test_cli_reads_kubectl_output_from_stdin(monkeypatch, capsys):
    data = (DATA / "kubectl-get-cm-dup-ip.yaml").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run_main(monkeypatch, "validate", "-") == 1
    assert "<stdin>:5:811: error[RTC208]" in capsys.readouterr().out
    path = str(DATA / "rings-config-initializing.yaml")
    assert run_main(monkeypatch, "validate", path) == 0
    assert run_main(monkeypatch, "validate", "--require-completed", path) == 1
    assert "error[RTC774]" in capsys.readouterr().out
