"""kubernetes-validate is the `k8s` extra (docs/performance-k8s-extra.md): without it the
Kubernetes manifest features write nothing and say how to install it (RTC006, an error),
and everything else works."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import rtc.api as api
from rtc.api.writing import OutputsRefused
from rtc.extras import K8S_INSTALL
from conftest import EXAMPLES, ROOT, run_main

EXAMPLE = EXAMPLES / "a2-2node-dp2-tp8.rtc"
WORKLOADS = ROOT / "tests" / "data" / "k8s_workloads"


@pytest.fixture
def without_k8s_extra(monkeypatch):
    """As if kubernetes-validate were not installed: importing it raises ImportError."""
    monkeypatch.setitem(sys.modules, "kubernetes_validate", None)


def test_the_package_declares_the_extra_and_the_tests_install_it():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "kubernetes-validate" not in dependencies
    assert 'k8s = ["kubernetes-validate>=1.30"]' in text
    assert "kubernetes-validate>=1.30" in text.split("test = [", 1)[1].split("]", 1)[0]


def test_compile_target_k8s_without_the_extra_names_the_install_command(
        without_k8s_extra, monkeypatch, tmp_path: Path, capsys):
    out = tmp_path / "k8s"
    assert run_main(monkeypatch, "compile", str(EXAMPLE), "--target", "k8s",
                    "--out-dir", str(out)) == 2
    err = capsys.readouterr().err
    assert "error[RTC006]: --target k8s needs the Python package kubernetes-validate" in err
    assert "hint: install the Kubernetes extra: " + K8S_INSTALL in err
    assert "rtc[k8s]" not in err          # PyPI's package named rtc is not this one
    assert "Traceback" not in err and not out.exists()


def test_the_api_refuses_k8s_outputs_without_the_extra(without_k8s_extra, tmp_path: Path):
    with pytest.raises(OutputsRefused) as refused:
        api.write_outputs(api.compile(EXAMPLE), out_dir=tmp_path / "k8s", target="k8s")
    [d] = refused.value.diagnostics
    assert d.code == "RTC006" and d.severity.label == "error"
    assert d.hint == ("install the Kubernetes extra: pip install '.[k8s]' from the rtc "
                      "checkout (.venv/bin/pip install -e '.[k8s]' into its venv)")


def _bad_statefulset() -> str:
    """statefulset-ok.yaml with an env value that is a number: RTC798 (a schema error)."""
    text = (WORKLOADS / "statefulset-ok.yaml").read_text(encoding="utf-8")
    pad = " " * 12
    return text.replace(f"{pad}- name: POD_IP\n", f"{pad}- name: PORT\n{pad}  value: 8000\n"
                        f"{pad}- name: POD_IP\n", 1)


def test_lint_of_manifests_without_the_extra_is_one_rtc005_error(without_k8s_extra):
    from rtc.api.linting import lint_scripts

    report = lint_scripts([("sts.yaml", _bad_statefulset())], hardware="hgx-h100")
    found = [d for d in report.diagnostics if d.code == "RTC006"]
    assert len(found) == 1 and found[0].severity.label == "error"
    assert found[0].message.startswith("checking Kubernetes pod templates (rtc lint) needs")
    assert "RTC798" not in [d.code for d in report.diagnostics]


def test_with_the_extra_the_same_lint_finds_the_schema_error():
    from rtc.api.linting import lint_scripts

    report = lint_scripts([("sts.yaml", _bad_statefulset())], hardware="hgx-h100")
    codes = [d.code for d in report.diagnostics]
    assert "RTC798" in codes and "RTC006" not in codes


def test_the_shell_target_needs_no_extra(without_k8s_extra, tmp_path: Path):
    written = api.write_outputs(api.compile(EXAMPLE), out_dir=tmp_path / "b", diagrams=False)
    assert "hccl.json" in written.names
