"""`rtc lint` of Kubernetes workload manifests: every kind has a manifest that lints without
errors and one with one mistake, caught by its rule (tests/data/k8s_workloads/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TESTS
from rtc.api.linting import lint_files
from rtc.diagnostics import Severity

DATA = TESTS / "data" / "k8s_workloads"
#: kind file stem -> (hardware, the rule the -bad manifest breaks)
CASES = {
    "pod": ("hgx-h100", "RTC791"), "deployment": ("hgx-h100", "RTC793"),
    "statefulset": ("hgx-h100", "RTC795"), "job": ("hgx-h100", "RTC794"),
    "lws": (None, "RTC740"), "volcano": ("hgx-h100", "RTC741"),
    "modelserving": ("hgx-h100", "RTC791"), "raycluster": ("hgx-h100", "RTC794"),
    "rayservice": ("hgx-h100", "RTC795"), "inferenceservice": ("hgx-h100", "RTC794"),
    "llminferenceservice": ("hgx-h100", "RTC794"), "inferencepool": ("hgx-h100", "RTC797"),
    "compose": (None, "RTC431 RTC432"),
}


def _errors(path: Path, hardware):
    rep = lint_files([str(path)], hardware=hardware)
    return [d for d in rep.diagnostics if d.severity is Severity.ERROR], rep


@pytest.mark.parametrize("stem", sorted(CASES))
def test_clean_manifest_has_no_errors(stem):
    errors, rep = _errors(DATA / f"{stem}-ok.yaml", CASES[stem][0])
    assert errors == []
    assert rep.topology is not None and rep.topology.jobs     # a job was lifted


@pytest.mark.parametrize("stem", sorted(CASES))
def test_one_mistake_is_caught_by_its_rule(stem):
    errors, _rep = _errors(DATA / f"{stem}-bad.yaml", CASES[stem][0])
    assert [d.code for d in errors] == CASES[stem][1].split()
    assert errors[0].span.file.endswith(f"{stem}-bad.yaml") and errors[0].span.line > 1


def test_lws_pods_get_the_operator_env_and_group():
    rep = lint_files([str(DATA / "lws-ok.yaml")])
    (job,) = rep.topology.jobs
    assert (job.framework, job.tp, len(job.placements)) == ("sglang", 16, 2)
    assert [p.server.name for p in job.placements] == ["sgl-dsr1-0.sgl-dsr1.default",
                                                        "sgl-dsr1-0-1.sgl-dsr1.default"]
    assert [len(p.device_ids) for p in job.placements] == [8, 8]


def test_roce_mounts_missing_on_an_ascend_lws_is_a_warning():
    text = (DATA / "lws-ok.yaml").read_text()
    text = text.replace("hostPath: {path: /etc/hccn.conf}", "emptyDir: {}") \
               .replace("hostPath: {path: /usr/local/Ascend/driver}", "emptyDir: {}")
    from rtc.api.linting import lint_scripts

    rep = lint_scripts([("lws.yaml", text)])
    assert [d.code for d in rep.diagnostics if d.severity is Severity.WARNING
            and d.code == "RTC796"] == ["RTC796"]


def test_broken_yaml_is_an_error_not_a_traceback():
    from rtc.api.linting import lint_scripts

    rep = lint_scripts([("x.yaml", "kind: Pod\nspec:\n\tcontainers: []\n")])
    assert [d.code for d in rep.diagnostics] == ["RTC790"]
    assert rep.diagnostics[0].span.line == 3


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from conftest import TESTS

_KINDS = ["Pod", "Deployment", "StatefulSet", "Job", "LeaderWorkerSet", "ModelServing",
          "RayCluster", "RayService", "InferenceService", "LLMInferenceService",
          "InferencePool", "Service", "ConfigMap", "List"]
_KEYS = ["spec", "template", "containers", "args", "command", "env", "name", "value",
         "resources", "limits", "requests", "nvidia.com/gpu", "size", "replicas", "roles",
         "leaderWorkerTemplate", "workerTemplate", "tasks", "selector", "ports",
         "targetPort", "headGroupSpec", "predictor", "workerReplicas", "items"]
_LEAVES = st.one_of(st.integers(-2**70, 2**70), st.booleans(), st.none(),
                    st.sampled_from(["8", "four", "１６", "$(X)", "$$(Y)", "-1",
                                     "vllm serve m --tensor-parallel-size 2",
                                     "python3 -m sglang.launch_server --tp 4 --nnodes 2"]),
                    st.text(max_size=8))
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(_KINDS), spec=_VALUES)
def test_fuzzed_manifests_never_raise(kind, spec):
    """Any document of a kind the front end reads lints to findings, never a traceback
    (tools/fuzz_manifests.py runs 1,000 mutated and generated ones)."""
    import yaml

    from rtc.api.linting import lint_scripts

    text = yaml.safe_dump({"apiVersion": "v1", "kind": kind, "metadata": {"name": "f"},
                           "spec": spec})
    rep = lint_scripts([("f.yaml", text)])
    assert all(d.code.startswith("RTC") for d in rep.diagnostics)


def test_pod_template_schema_errors_are_rtc798_at_the_field():
    from rtc.api.linting import lint_scripts

    text = (DATA / "statefulset-ok.yaml").read_text()
    pad = " " * 12
    bad = text.replace(f"{pad}- name: POD_IP\n", f"{pad}- name: PORT\n{pad}  value: 8000\n"
                       f"{pad}- name: POD_IP\n", 1)
    assert bad != text
    rep = lint_scripts([("sts.yaml", bad)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC798"]
    assert "env/0/value" in d.message and "string" in d.message
    assert d.span.line == bad.splitlines().index(f"{pad}  value: 8000") + 1
    clean = lint_scripts([("sts.yaml", text)], hardware="hgx-h100")
    assert "RTC798" not in {d.code for d in clean.diagnostics}
