"""`rtc validate` of Kubernetes inputs: rank tables inside ConfigMap YAML (a manifest, or
`kubectl get cm -o yaml` output with a List), located in the YAML; the initializing
status; and (below) `--pods` with `kubectl get pods -o json`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import GOLDEN, ROOT, TESTS
from rtc.api.validate_k8s import validate_configmap
from conftest import run_main

DATA = TESTS / "data" / "k8s"


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


# --------------------------------------------------------------------------- --pods

from rtc.tables.pods import check_pods, load_pods  # noqa: E402


def pod_findings(pods_doc, table_name: str):
    data = json.dumps(pods_doc, indent=2).encode() if not isinstance(pods_doc, bytes) \
        else pods_doc
    pods, smap, diags = load_pods(data, "pods.json")
    path = DATA / table_name
    if table_name.endswith(".yaml"):
        table = validate_configmap(path.read_bytes(), "t.yaml").doc
    else:
        table = json.loads(path.read_text())
    return diags + (check_pods(pods, smap, "pods.json", table, table_name) if pods else [])


def ok_pods():
    return json.loads((DATA / "pods-ok.json").read_text())


def test_pods_that_match_their_table():
    assert pod_findings(ok_pods(), "kubectl-get-cm-completed.yaml") == []


def test_two_pods_on_one_node_as_two_servers_and_physical_visible_devices():
    data = (DATA / "pods-two-on-one-node.json").read_bytes()
    found = pod_findings(data, "hccl-two-pods-one-node.json")
    assert sorted(d.code for d in found) == ["RTC782", "RTC785"]
    shared = next(d for d in found if d.code == "RTC782")
    assert "node atlas-01" in shared.message and "103900" in shared.message
    assert shared.related and shared.span.file == "pods.json"
    visible = next(d for d in found if d.code == "RTC785")
    assert "use 0,1,2,3" in visible.hint


def test_table_devices_that_are_not_the_pods():
    found = pod_findings(ok_pods(), "kubectl-get-cm-dup-ip.yaml")
    (d,) = found
    assert d.code == "RTC783"
    assert "device 3 has device_ip 192.0.2.1 in the table and 192.0.2.12 on the pod" in d.message


def test_recreated_pods_with_new_ips():
    doc = ok_pods()
    for i, item in enumerate(doc["items"]):
        item["spec"]["hostNetwork"] = False
        item["status"]["podIP"] = f"10.244.{i}.9"
    found = pod_findings(doc, "kubectl-get-cm-completed.yaml")
    assert [d.code for d in found] == ["RTC784", "RTC784"]
    assert "container_ip 198.51.100.11, but its pod deepseek-0 has IP 10.244.0.9" in \
        found[0].message


def test_pods_without_annotations_and_a_missing_pod():
    doc = ok_pods()
    for item in doc["items"]:
        del item["metadata"]["annotations"]
    assert [d.code for d in pod_findings(doc, "kubectl-get-cm-completed.yaml")] == [
        "RTC781", "RTC781"]
    doc = ok_pods()
    doc["items"] = doc["items"][:1]
    (d,) = pod_findings(doc, "kubectl-get-cm-completed.yaml")
    assert d.code == "RTC786" and "198.51.100.12" in d.message


@pytest.mark.parametrize("data", [b"NAME READY STATUS\n", b'{"kind": "Service"}'])
def test_not_a_pods_file(data):
    (d,) = pod_findings(data, "kubectl-get-cm-completed.yaml")
    assert d.code == "RTC780"


def test_cli_pods_option(monkeypatch, capsys, tmp_path: Path):
    table = str(DATA / "hccl-two-pods-one-node.json")
    pods = str(DATA / "pods-two-on-one-node.json")
    assert run_main(monkeypatch, "validate", "--pods", pods, table) == 1
    out = capsys.readouterr().out
    assert "error[RTC782]" in out and "error[RTC785]" in out
    doc = ok_pods()
    for item in doc["items"]:
        del item["metadata"]["annotations"]
    (tmp_path / "p.json").write_text(json.dumps(doc))
    cm = str(DATA / "kubectl-get-cm-completed.yaml")
    assert run_main(monkeypatch, "validate", "--pods", str(tmp_path / "p.json"), cm) == 0
    assert run_main(monkeypatch, "validate", "--pods", str(tmp_path / "none.json"), cm) == 2


def hypernode_pods():
    return json.loads((DATA / "pods-nodes-one-hypernode.json").read_text())


def test_a_group_on_nodes_of_one_hypernode_passes():
    """kubectl get pods,nodes -o json: both pods of the group on nodes labelled
    volcano.sh/hypernode=sp0, as their exclusive-topology / Kueue annotations require."""
    assert pod_findings(hypernode_pods(), "kubectl-get-cm-completed.yaml") == []


def test_a_group_split_over_two_hypernodes_names_pods_nodes_and_the_label():
    doc = hypernode_pods()
    doc["items"][3]["metadata"]["labels"]["volcano.sh/hypernode"] = "sp1"
    (d,) = pod_findings(doc, "kubectl-get-cm-completed.yaml")
    assert d.code == "RTC787"
    assert d.message == (
        "the pods of LeaderWorkerSet deepseek (group 0) must share one volcano.sh/hypernode "
        "domain (leaderworkerset.sigs.k8s.io/exclusive-topology), but they run in 2 (pod "
        "deepseek-0 on node atlas-01: volcano.sh/hypernode=sp0; pod deepseek-0-1 on node "
        "atlas-02: volcano.sh/hypernode=sp1)")
    assert d.span.file == "pods.json" and d.related[0].message == "pod deepseek-0"
    text = json.dumps(doc, indent=2).splitlines()
    assert '"nodeName": "atlas-02"' in text[d.span.line - 1]
    del doc["items"][3]["metadata"]["labels"]["volcano.sh/hypernode"]
    (d,) = pod_findings(doc, "kubectl-get-cm-completed.yaml")
    assert d.code == "RTC787" and "atlas-02: no label" in d.message


def test_a_domain_requirement_without_the_nodes_is_not_checked():
    doc = hypernode_pods()
    doc["items"] = doc["items"][:2]
    (d,) = pod_findings(doc, "kubectl-get-cm-completed.yaml")
    assert d.code == "RTC788" and "kubectl get pods,nodes -o json" in d.hint
    assert "has no Node atlas-01 of pod deepseek-0" in d.message


def test_cli_pods_and_nodes(monkeypatch, capsys, tmp_path: Path):
    cm = str(DATA / "kubectl-get-cm-completed.yaml")
    good = str(DATA / "pods-nodes-one-hypernode.json")
    assert run_main(monkeypatch, "validate", "--pods", good, cm) == 0
    doc = hypernode_pods()
    doc["items"][3]["metadata"]["labels"]["volcano.sh/hypernode"] = "sp1"
    (tmp_path / "p.json").write_text(json.dumps(doc, indent=2))
    assert run_main(monkeypatch, "validate", "--pods", str(tmp_path / "p.json"), cm) == 1
    out = capsys.readouterr().out
    assert "error[RTC787]" in out and "volcano.sh/hypernode=sp1" in out


# --------------------------------------------------------------------------- --wait

from rtc.api.validate_k8s import wait_until_completed  # noqa: E402


class FakeTime:
    """A clock that advances only when slept, and a hook run at each sleep."""

    def __init__(self, on_sleep=None):
        self.now, self.slept, self.on_sleep = 0.0, [], on_sleep

    def clock(self):
        return self.now

    def sleep(self, s):
        self.slept.append(s)
        self.now += s
        if self.on_sleep:
            self.on_sleep(self.now)


def test_wait_polls_every_second_until_completed(tmp_path: Path):
    path = tmp_path / "hccl.json"
    path.write_text('{"status":"initializing"}')
    done = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text()
    t = FakeTime(lambda now: path.write_text(done) if now >= 3 else None)
    assert wait_until_completed(str(path), 30, sleep=t.sleep, clock=t.clock) is True
    assert t.slept == [1.0, 1.0, 1.0]
    path.write_text('{"status":"initializing"}')
    t = FakeTime()
    assert wait_until_completed(str(path), 2.5, sleep=t.sleep, clock=t.clock) is False
    assert t.slept == [1.0, 1.0, 0.5]
    t = FakeTime()     # a volume not mounted yet is waited for too
    assert wait_until_completed(str(tmp_path / "absent.json"), 1, sleep=t.sleep,
                                clock=t.clock) is False


def test_wait_keeps_polling_a_missing_or_half_written_file(tmp_path: Path):
    """An operator writing the table: absent, then truncated, then complete."""
    from rtc.api.validate_k8s import wait_for_table

    path = tmp_path / "hccl.json"
    done = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text()
    steps = {1.0: '{"status":"initializing"}', 2.0: done[:len(done) // 2], 4.0: done}
    t = FakeTime(lambda now: path.write_text(steps[now]) if now in steps else None)
    assert wait_for_table(str(path), 30, sleep=t.sleep, clock=t.clock) is None
    assert t.slept == [1.0, 1.0, 1.0, 1.0]
    t = FakeTime()
    assert wait_for_table(str(tmp_path / "absent.json"), 2, sleep=t.sleep,
                          clock=t.clock) == "does not exist yet"
    assert t.slept == [1.0, 1.0]
    path.write_text(done[:100])
    t = FakeTime()
    assert wait_for_table(str(path), 1.5, sleep=t.sleep,
                          clock=t.clock) == "is not complete JSON yet"
    assert t.slept == [1.0, 0.5]


def test_cli_wait_runs_out_on_missing_and_truncated_files(tmp_path: Path, monkeypatch,
                                                          capsys):
    path = tmp_path / "hccl.json"
    path.write_text((GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text()[:200])
    assert run_main(monkeypatch, "validate", "--wait", "0.2", str(path)) == 1
    captured = capsys.readouterr()
    assert "is not complete JSON yet after 0.2 s; validating it as it is" in captured.err
    assert "error[RTC600]" in captured.out
    absent = str(tmp_path / "absent.json")
    assert run_main(monkeypatch, "validate", "--wait", "0.2", absent) == 2
    captured = capsys.readouterr()
    assert f"rtc: {absent} does not exist yet after 0.2 s" in captured.err
    assert "RTC001" in captured.out


def test_cli_wait_exit_codes(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "hccl.json"
    path.write_text('{"status":"initializing"}\n')
    assert run_main(monkeypatch, "validate", "--wait", "0", str(path)) == 1
    captured = capsys.readouterr()
    assert "hccl.json:1:2: error[RTC774]" in captured.out
    assert "still says initializing after 0 s" in captured.err
    path.write_text((GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text())
    assert run_main(monkeypatch, "validate", "--wait", "5", str(path)) == 0
    assert run_main(monkeypatch, "validate", "--wait", "5", "-") == 2


def test_readme_pods_output_is_a_real_run(monkeypatch, capsys):
    from conftest import ROOT

    readme = (ROOT / "docs" / "kubernetes.md").read_text(encoding="utf-8")
    block = readme.split("<!-- k8s-pods-output -->\n```console\n", 1)[1].split("```", 1)[0]
    command, expected = block.split("\n", 1)
    args = command.split("&& rtc ", 1)[1].split()
    monkeypatch.chdir(DATA)
    assert run_main(monkeypatch, *args) == 1
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("data, wanted", [
    ("  hccl.json:\n    status: completed\n", "data key hccl.json is not a string"),
    ("  hccl.json:\n", "data key hccl.json is not a string"),
    ("  other: x\n", "data key hccl.json is missing (its keys: other)"),
])
def test_configmap_data_messages_say_what_is_wrong(data, wanted):
    # a fresh user's finding: a mapping under hccl.json gave "has no data key hccl.json
    # (its keys: hccl.json)"
    from rtc.tables.configmap import embedded_tables
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rings-config-x\ndata:\n{data}"
    _, diags = embedded_tables(text, "cm.yaml")
    assert any(wanted in d.message for d in diags), [d.message for d in diags]


def test_the_api_servers_pod_list_kind_is_read():
    doc = {"kind": "PodList", "apiVersion": "v1", "items": [
        {"kind": "Pod", "metadata": {"name": "p0"}, "spec": {"nodeName": "n0"},
         "status": {"podIP": "10.0.0.6"}}]}
    pods, _smap, diags = load_pods(json.dumps(doc).encode(), "pods.json")
    assert len(pods) == 1 and not [d for d in diags if d.code == "RTC780"]


def lws_pods(*pods) -> dict:
    """A kubectl List of LWS pods: (name, worker index, nodeName, podIP[, hostIP]) each
    (hostIP defaults to the pod IP: host network)."""
    return {"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"name": p[0], "labels": {
            "leaderworkerset.sigs.k8s.io/worker-index": str(p[1])}},
         "spec": {"nodeName": p[2]}, "status": {"podIP": p[3], "hostIP": (p + (p[3],))[4]}}
        for p in pods]}


def rtc_table(example: str, cm: str) -> Path:
    return GOLDEN / "k8s" / example / cm


def test_pods_match_rtc_1_0_tables_by_host_ip_and_swaps_are_rtc777(tmp_path: Path):
    """rtc's 1.0 tables name each server by its host IP (as Ascend Operator does): a pod
    on the pod network matches by its node's IP (status.hostIP)."""
    table = validate_configmap(rtc_table("a2-2node-dp2-tp8", "rings-config-deepseek.yaml")
                               .read_bytes(), "t.yaml").doc
    ok = lws_pods(("deepseek-0", 0, "atlas-01", "10.244.0.5", "10.0.0.6"),
                  ("deepseek-0-1", 1, "atlas-02", "10.244.0.6", "10.0.0.5"))
    pods, smap, _ = load_pods(json.dumps(ok).encode(), "pods.json")
    assert check_pods(pods, smap, "pods.json", table, "t.yaml") == []
    swapped = lws_pods(("deepseek-0", 0, "atlas-02", "10.244.0.5", "10.0.0.5"),
                       ("deepseek-0-1", 1, "atlas-01", "10.244.0.6", "10.0.0.6"))
    pods, smap, _ = load_pods(json.dumps(swapped).encode(), "pods.json")
    found = check_pods(pods, smap, "pods.json", table, "t.yaml")
    assert [d.code for d in found] == ["RTC777", "RTC777"]
    lead = next(d for d in found if "pod deepseek-0 " in d.message)
    assert "pod deepseek-0 (LWS worker index 0) runs on atlas-02" in lead.message
    assert "server 0 of the table is 10.0.0.6" in lead.message


def test_swapped_leader_and_worker_on_a_1_2_table_by_ip():
    table = validate_configmap(rtc_table("pd-a3", "rings-config-decode.yaml").read_bytes(),
                               "t.yaml").doc
    swapped = lws_pods(("decode-0", 0, "d2", "10.0.1.12"), ("decode-0-1", 1, "d1", "10.0.1.11"))
    pods, smap, _ = load_pods(json.dumps(swapped).encode(), "pods.json")
    found = check_pods(pods, smap, "pods.json", table, "t.yaml")
    assert [d.code for d in found] == ["RTC777", "RTC777"]
    assert any("decode-0-1 (LWS worker index 1) runs on d1, which is server 0 (10.0.1.11)"
               in d.message for d in found)
    pods, smap, _ = load_pods(json.dumps(lws_pods(
        ("decode-0", 0, "d1", "10.0.1.11"), ("decode-0-1", 1, "d2", "10.0.1.12"))).encode(),
        "pods.json")
    assert check_pods(pods, smap, "pods.json", table, "t.yaml") == []
