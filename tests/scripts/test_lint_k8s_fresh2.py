"""`rtc lint` of Kubernetes manifests, from a fresh user's report: JSON arrays of objects,
headless Services and RTC789's suggestion."""

from __future__ import annotations

import json

import yaml

from rtc.api.linting import lint_scripts
from rtc.diagnostics import Severity
from test_lint_k8s_identity import STS as IDENTITY_STS, _codes

#: An SGLang server over the two pods of a StatefulSet (test_lint_k8s_identity's) under a
#: Service sglang-svc that sends its port 30000 on to the engine (our own text).
STS = """\
apiVersion: v1
kind: Service
metadata:
  name: sglang-svc
spec:
  selector: {app: sglang}
  ports:
  - {name: http, port: 30000, targetPort: 30000}
---
""" + IDENTITY_STS


def _array(yaml_text: str, indent=None) -> str:
    """The documents of ``yaml_text`` as one JSON array ``[{...}, {...}]`` (the shape a user
    wrote by hand; ``kubectl`` itself writes a ``kind: List``)."""
    return json.dumps(list(yaml.safe_load_all(yaml_text)), indent=indent) + "\n"


def test_a_json_array_of_objects_is_read_and_its_wrong_port_is_rtc797():
    bad = STS.replace("port: 30000, targetPort: 30000", "port: 30000, targetPort: 8000")
    text = _array(bad, indent=2)
    rep = lint_scripts([("sts.json", text)], hardware="hgx-h100")
    assert "RTC790" not in _codes(rep)
    (d,) = [d for d in rep.diagnostics if d.code == "RTC797"]
    assert d.message == ("Service sglang-svc sends to port 8000 of pod sglang-0, whose engine "
                         "serves 30000")
    line = next(k for k, x in enumerate(text.splitlines(), 1) if '"targetPort": 8000' in x)
    assert (d.span.line, d.span.column) == (line, text.splitlines()[line - 1].index("8000") + 1)


def test_a_json_array_of_objects_on_one_line_is_clean_when_consistent():
    rep = lint_scripts([("sts.json", _array(STS))], hardware="hgx-h100")
    assert _codes(rep, Severity.ERROR) == []
    (job,) = rep.topology.jobs
    assert (job.framework, job.tp, [p.server.name for p in job.placements]) == \
        ("sglang", 16, ["sglang-0", "sglang-1"])


def test_a_json_array_holding_a_non_object_is_not_linted():
    rep = lint_scripts([("x.json", '[{"apiVersion": "v1", "kind": "Service"}, 3]\n')])
    assert [(d.code, d.message) for d in rep.diagnostics] == [
        ("RTC700", "x.json is JSON but not a Kubernetes object (no apiVersion and kind at its "
                   "top), nor a shell script: not linted")]


#: A headless Service over the StatefulSet's pods listing the dist-init port 5000 (the
#: shape of the fresh user's sts-sglang.yaml; our own text).
HEADLESS = """\
apiVersion: v1
kind: Service
metadata:
  name: sglang
spec:
  clusterIP: None
  selector: {app: sglang}
  ports:
  - {name: dist, port: 5000}
---
""" + STS


def test_a_headless_service_listing_the_dist_init_port_is_not_rtc797():
    rep = lint_scripts([("sts.yaml", HEADLESS)], hardware="hgx-h100")
    assert "RTC797" not in _codes(rep)
    assert _codes(rep, Severity.ERROR) == []


def test_the_same_service_with_a_cluster_ip_is_rtc797_at_its_port():
    proxied = HEADLESS.replace("  clusterIP: None\n", "")
    rep = lint_scripts([("sts.yaml", proxied)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC797"]
    assert d.message == ("Service sglang sends to port 5000 of pod sglang-0, whose engine "
                         "serves 30000")
    line = proxied.splitlines().index("  - {name: dist, port: 5000}") + 1
    assert (d.span.line, d.span.column) == (line, len("  - {name: dist, port: ") + 1)


def test_rtc789_suggests_node_rank_0s_pod_among_equally_close_names():
    typo = STS.replace("sglang-0.sglang:5000", "sglang-O.sglang:5000")
    rep = lint_scripts([("sts.yaml", typo)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC789"]
    assert d.message == ("--dist-init-addr sglang-O.sglang:5000: sglang-O is no pod of sglang "
                         "(its pods: sglang-0, sglang-1); did you mean sglang-0.sglang?")
    line = next(k for k, x in enumerate(typo.splitlines(), 1) if "sglang-O" in x)
    assert d.span.line == line


def test_rtc789_with_ordinals_start_1_suggests_the_first_ordinal():
    text = STS.replace("  replicas: 2\n", "  replicas: 2\n  ordinals: {start: 1}\n")
    rep = lint_scripts([("sts.yaml", text)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC789"]
    assert d.message.endswith("(its pods: sglang-1, sglang-2); did you mean sglang-1.sglang?")
    fixed = text.replace("sglang-0.sglang:5000", "sglang-1.sglang:5000")
    assert "RTC789" not in _codes(lint_scripts([("sts.yaml", fixed)], hardware="hgx-h100"))
