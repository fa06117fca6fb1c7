"""RTC219 for server names that cannot name a node: `server "atlas 01"` was accepted and
`--target k8s` wrote the ConfigMap key `preflight-atlas 01.sh` and the hostname affinity
value `atlas 01`, `--target slurm` wrote `--nodelist=atlas 01,atlas-02`. Kubernetes
ConfigMap keys match `[-._a-zA-Z0-9]+` and label values `(([A-Za-z0-9][-A-Za-z0-9_.]*)?
[A-Za-z0-9])?` (apimachinery pkg/util/validation); Slurm splits a node list at commas."""

from __future__ import annotations

import pytest

from conftest import TESTS, run_main
from rtc.api import compile_text
from rtc.model.topology import host_name_problem

CASE = TESTS / "cases" / "checks" / "RTC219-server-name-with-space.rtc"


@pytest.mark.parametrize("name, why", [
    ("atlas 01", "holds a space"), ("a,b", "holds ','"), ("node:1", "holds ':'"),
    ("nœud", "holds 'œ'"), ("a b,c", "holds a space, ','"),
    ("atlas-01", None), ("rack1_node.0", None), ("10.0.0.1", None)])
def test_host_name_problem(name, why):
    assert host_name_problem(name) == why


def test_a_server_name_with_a_space_is_rtc219_at_the_name():
    res = compile_text(CASE.read_text(), "c.rtc")
    (d,) = [d for d in res.diagnostics if d.code == "RTC219"]
    assert (d.span.line, d.span.column) == (5, 8)
    assert d.severity.name == "ERROR"
    assert d.message.startswith("server name 'atlas 01' holds a space; rtc writes the name "
                                "as the node's name: --target k8s")
    assert d.hint == "use letters, digits and -_. only (server_id may keep any text)"
    fixed = compile_text(CASE.read_text().replace('"atlas 01"', "atlas-01"), "c.rtc")
    assert not [d for d in fixed.diagnostics if d.code == "RTC219"]


@pytest.mark.parametrize("target", ["k8s", "slurm"])
def test_no_manifest_or_batch_script_is_written(target, tmp_path, monkeypatch, capsys):
    out = tmp_path / "o"
    assert run_main(monkeypatch, "compile", str(CASE), "--target", target, "--out-dir",
                    str(out)) == 1
    assert "error[RTC219]" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())

