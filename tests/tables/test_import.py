"""`rtc import`: rank table -> rtc description -> `rtc compile` gives the table back.

Byte for byte for tables in rtc's canonical layout (every example's golden table and
generated tables, regular and irregular); the same servers, devices, IPs and ranks for the
corpus tables in other layouts. Invalid or inexpressible tables are refused.
"""

from __future__ import annotations

import ipaddress
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import GOLDEN, make_table, run_rtc
from rtc.api import compile_text, rank_table
from rtc.diagnostics import Severity
from rtc.api.importing import import_table
from rtc.tables.importer import fit_grid, fit_int
from test_validate import CORPUS

GOLDEN_TABLES = sorted(p for p in GOLDEN.glob("*/hccl*.json"))


def compile_back(text: str) -> str:
    res = compile_text(text, "cluster.rtc")
    assert res.ok, [(d.code, d.message) for d in res.diagnostics]
    out, _, problems = rank_table(res.topology, None)
    assert not problems
    return out


def roundtrip(table_text: str, name: str = "hccl.json", **kw) -> tuple[str, str]:
    result = import_table(table_text, name, **kw)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    return result.text, compile_back(result.text)


# --------------------------------------------------------------------------- goldens

@pytest.mark.parametrize("path", GOLDEN_TABLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_tables_round_trip_byte_for_byte(path):
    original = path.read_text(encoding="utf-8")
    source, back = roundtrip(original, path.name)
    assert back == original


def test_round_trip_on_the_command_line(tmp_path):
    table = GOLDEN / "a2-2node-dp2-tp8" / "hccl.json"
    out = tmp_path / "cluster.rtc"
    res = run_rtc("import", str(table), "-o", str(out))
    assert res.returncode == 0, res.stderr
    back = tmp_path / "hccl.json"
    res = run_rtc("compile", str(out), "-o", str(back))
    assert res.returncode == 0, res.stderr
    assert back.read_bytes() == table.read_bytes()
    shown = run_rtc("import", str(table))
    assert shown.stdout == out.read_text(encoding="utf-8")


def test_the_1024_server_family_comes_back_as_one_family():
    text, _ = roundtrip((GOLDEN / "family-a3-1024" / "hccl.json").read_text("utf-8"))
    assert text.count("family ") == 1 and "server " not in text.split("}", 1)[1]
    assert "family node[0000..1023] {" in text
    for line in ("host 10.1.{i/256}.{i%256}", "super_pod {i/64}", "super_device_id base {(i%64)*16}",
                 "device_ip 172.{i/256 + 16}.{i%256}.1 step 1"):
        assert line in text


def test_server_id_equal_to_host_is_named_by_rank_and_not_written():
    table = json.loads((GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text("utf-8"))
    assert [s["server_id"] for s in table["server_list"]] == ["10.0.0.6", "10.0.0.5"]
    text, back = roundtrip(json.dumps(table, indent=2))
    assert "server node0 {\n  host 10.0.0.6\n" in text and "server node1 {\n  host 10.0.0.5\n" in text
    assert "server_id" not in text  # compile writes the host IP as server_id
    assert [s["server_id"] for s in json.loads(back)["server_list"]] == ["10.0.0.6", "10.0.0.5"]
    # a name server_id beside them keeps its name and its server_id; a clash with node<k>
    # moves the host-named servers to server<k>
    table["server_list"][1]["server_id"] = "node0"
    text, back = roundtrip(json.dumps(table, indent=2))
    assert "server server0 {\n  host 10.0.0.6\n" in text
    assert "server node0 {\n  server_id node0\n  host 10.0.0.5\n" in text
    assert [s["server_id"] for s in json.loads(back)["server_list"]] == ["10.0.0.6", "node0"]


def test_a3_die_planes_become_a_template():
    text, _ = roundtrip((GOLDEN / "a3-2node-dp2-tp16" / "hccl.json").read_text("utf-8"))
    assert "device_ip 10.20.{d%2}.{d/2 + 1}" in text


def test_no_job_is_written():
    text, _ = roundtrip((GOLDEN / "pd-a3" / "hccl-prefill.json").read_text("utf-8"))
    assert "job " not in text


# --------------------------------------------------------------------------- corpus

def _normal(doc: dict) -> list:
    out = []
    for s in doc["server_list"]:
        for d in s["device"]:
            out.append((int(d["rank_id"]), s["server_id"], int(d["device_id"]), d.get("device_ip") or None,
                        d.get("super_device_id") if doc["version"] == "1.2" else None))
    return sorted(out)


@pytest.mark.parametrize("name", ["v1_0__hcomm_example__1srv_8dev.json",
                                  "v1_0__hccl_tf_example__1srv_8dev_empty_device_ip.json",
                                  "v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json"])
def test_valid_corpus_tables_round_trip(name):
    original = (CORPUS / name).read_text(encoding="utf-8")
    result = import_table(original, name)
    assert result.ok
    back = json.loads(compile_back(result.text))
    assert _normal(back) == _normal(json.loads(original))
    dropped = {d.message.split("`")[1] for d in result.diagnostics if d.code == "RTC664"}
    extra = {"v1_0__hccl_tf_example__1srv_8dev_empty_device_ip.json": {"host_nic_ip"},
             "v1_2_operator_log__mindie_ep_job__1srv_16dev_a3.json": {"IsMindIEEPJob"}}  # container_ip is kept
    assert dropped == extra.get(name, set())


@pytest.mark.parametrize("name,code", [
    ("bad__v1_0_masked_ips__mindspore_docs_rank_table_8pcs.json", "RTC660"),
    ("bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc", "RTC660"),
    ("v2_0__hcomm_example__2rank_ipv4.json", "RTC662"),  # IPv4 at level 0: not the preset's UB
    ("v2_0_topofile__hcomm_st_1d_2p_mesh__topo.json", "RTC661"),
])
def test_refusals(name, code):
    result = import_table((CORPUS / name).read_bytes(), name)
    assert not result.ok and code in {d.code for d in result.diagnostics}
    res = run_rtc("import", name, cwd=CORPUS)
    assert res.returncode == 1 and f"error[{code}]" in res.stderr and res.stdout == ""


@pytest.mark.parametrize("mutate,needle", [
    (lambda t: t["server_list"][0]["device"].__setitem__(
        slice(0, 2), [dict(t["server_list"][0]["device"][0], rank_id="1"),
                      dict(t["server_list"][0]["device"][1], rank_id="0")]), "device id order"),
    (lambda t: t["server_list"][0]["device"][3].__setitem__("device_ip", ""), "some devices"),
    (lambda t: t["server_list"][0]["device"][3].__setitem__("device_ip", "10.0.0.4,10.7.0.4"), "several"),
])
def test_inexpressible_layouts(mutate, needle):
    doc = make_table(1)
    for d in doc["server_list"][0]["device"]:
        d["device_ip"] = d["device_ip"] + "," + d["device_ip"].replace("10.", "11.", 1) \
            if needle == "several" else d["device_ip"]
    mutate(doc)
    result = import_table(json.dumps(doc, indent=2), "t.json")
    assert not result.ok, result.text
    d = next(d for d in result.diagnostics if d.code == "RTC662")
    assert needle in d.message


def test_hardware_option_must_fit_the_version(tmp_path):
    text = json.dumps(make_table(2), indent=2) + "\n"
    result = import_table(text, "t.json", hardware="atlas-800-a3")
    assert not result.ok and "RTC662" in {d.code for d in result.diagnostics}
    src, back = roundtrip(text, "t.json", hardware="atlas-800-910a")
    assert "hardware atlas-800-910a" in src and back == text


def test_a3_typical_networking_table_imports_as_generic():
    text = json.dumps(make_table(2, devices=range(16)), indent=2) + "\n"
    src, back = roundtrip(text)
    assert "hardware generic" in src and "devices_per_server 16" in src
    assert back == text


def test_quoted_server_names():
    doc = make_table(2)
    doc["server_list"][0]["server_id"] = "rack 1/node \"a\""
    doc["server_list"][1]["server_id"] = "rack 1/node b"
    text = json.dumps(doc, indent=2) + "\n"
    src, back = roundtrip(text)
    # a server_id that cannot name files or nodes (RTC219) gets a block name that can
    # (letters, digits and -_. only), and stays the server_id
    assert 'server rack_1_node__a_ {\n  server_id "rack 1/node \\"a\\""' in src
    assert 'server rack_1_node_b {\n  server_id "rack 1/node b"' in src
    assert back == text


def test_dropped_keys_are_warned():
    doc = make_table(1)
    doc["server_list"][0]["host_ip"] = "192.0.2.1"
    for d in doc["server_list"][0]["device"]:
        d["device_port"] = "16666"
    result = import_table(json.dumps(doc, indent=2), "t.json")
    assert result.ok
    warned = {d.message.split("`")[1]: d for d in result.diagnostics if d.code == "RTC664"}
    # rtc writes host_ip in 1.0 tables too now (as Ascend Operator does): kept as `host`
    assert set(warned) == {"device_port"}
    assert "8 times" in warned["device_port"].message
    assert "host 192.0.2.1" in result.text


# --------------------------------------------------------------------------- fitting

@pytest.mark.parametrize("ys,expr", [
    ([5, 5, 5], "5"),
    ([3, 4, 5, 6], "i + 3"),
    ([1, 17, 33], "16*i - 15"),
    ([6, 5, 4], "6 - i"),
    ([0] * 4 + [1] * 4 + [2] * 2, "i/4"),
    ([0, 16, 32, 0, 16, 32, 0], "(i%3)*16"),
])
def test_fit_int(ys, expr):
    xs = list(range(len(ys))) if expr != "16*i - 15" else [1, 2, 3]
    assert fit_int(xs, ys) == expr


def test_fit_int_refuses_irregular_values():
    assert fit_int([0, 1, 2, 3], [1, 5, 2, 9]) is None


def test_fit_grid_die_planes():
    ds = list(range(16))
    assert fit_grid([0, 1], ds, [[d % 2 for d in ds], [d % 2 for d in ds]]) == "d%2"
    assert fit_grid([0, 1], ds, [[d // 2 + 1 + 16 * i for d in ds] for i in (0, 1)]) == "16*i + 1 + d/2"


# --------------------------------------------------------------------------- generated tables

SAFE_NAMES = ["alpha", "bravo", "gpu-a", "node_x", "rack2-n7", "10.0.9.9", "SERVER_ID_SV1", "b c", "z"]


@st.composite
def tables(draw):
    """A valid table in canonical layout: regular (families) or irregular, A2 or A3."""
    version = draw(st.sampled_from(["1.0", "1.2"]))
    a3 = version == "1.2"
    n = draw(st.integers(1, 9))
    naming = draw(st.sampled_from(["index", "padded", "mixed"]))
    first = draw(st.integers(0, 12))
    if naming == "index":
        names = [f"node{first + s}" for s in range(n)]
    elif naming == "padded":
        names = [f"n-{first + s:03d}" for s in range(n)]
    else:
        pool = draw(st.permutations(SAFE_NAMES))
        names = [f"{pool[s % len(pool)]}{'' if s < len(pool) else s}" for s in range(n)]
    ids = list(range(16 if a3 else 8))
    same = draw(st.booleans())
    base_set = sorted(draw(st.sets(st.sampled_from(ids), min_size=1, max_size=len(ids))))
    sets = [base_set if same else sorted(draw(st.sets(st.sampled_from(ids), min_size=1, max_size=len(ids))))
            for _ in range(n)]
    pods = 1
    if a3 and n > 1:
        pods = draw(st.integers(1, min(3, n)))
    per_pod = -(-n // pods)
    need_ips = n > 1 and (not a3 or pods > 1)
    plan = draw(st.sampled_from(["step", "octet", "dies", "random"] + ([] if need_ips else ["none"])))
    stride = draw(st.sampled_from([16, 32, 256, 4096]))
    step = draw(st.integers(1, 3))
    rnd = draw(st.randoms(use_true_random=False))
    used: set[int] = set()
    host_plan = draw(st.sampled_from(["none", "regular", "random"]))
    sdid_plan = draw(st.sampled_from(["base", "random"]))
    server_list = []
    rank = 0
    for s in range(n):
        entry = {"server_id": names[s]}
        if a3 and host_plan != "none":
            host = (192 << 24 | 168 << 16 | s + 1) if host_plan == "regular" else \
                (192 << 24 | 168 << 16 | rnd.randrange(1 << 16))
            while host in used:
                host += 1
            used.add(host)
            entry["host_ip"] = str(ipaddress.IPv4Address(host))
        devs = []
        for k, d in enumerate(sets[s]):
            item = {"device_id": str(d)}
            if a3:
                within = s % per_pod
                item["super_device_id"] = str(within * 16 + d if sdid_plan == "base"
                                              else 1000 * within + rnd.randrange(1000))
            if plan != "none":
                if plan == "step":
                    v = (100 << 24) + s * stride + k * step + 1
                elif plan == "octet":
                    v = (100 << 24) + (s << 16) + (d << 8) + 7
                elif plan == "dies":
                    v = (100 << 24) + ((d % 2) << 16) + (s << 8) + d // 2 + 1
                else:
                    v = (101 << 24) + rnd.randrange(1 << 20)
                while v in used:
                    v += 1
                used.add(v)
                item["device_ip"] = str(ipaddress.IPv4Address(v))
            item["rank_id"] = str(rank)
            rank += 1
            devs.append(item)
        entry["device"] = devs
        server_list.append(entry)
    # SDIDs must be unique within a pod
    if a3:
        for p in range(pods):
            seen: set[str] = set()
            for entry in server_list[p * per_pod:(p + 1) * per_pod]:
                for item in entry["device"]:
                    while item["super_device_id"] in seen:
                        item["super_device_id"] = str(int(item["super_device_id"]) + 100000)
                    seen.add(item["super_device_id"])
    doc = {"status": "completed", "version": version, "server_count": str(n), "server_list": server_list}
    if a3:
        doc["super_pod_list"] = [{"super_pod_id": str(p), "server_list": [
            {"server_id": e["server_id"]} for e in server_list[p * per_pod:(p + 1) * per_pod]]}
            for p in range(pods) if server_list[p * per_pod:(p + 1) * per_pod]]
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_generated_tables_round_trip_byte_for_byte(doc):
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    result = import_table(text, "gen.json")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.severity is Severity.ERROR]
    assert compile_back(result.text) == text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 40), st.sampled_from([1, 2, 4]), st.integers(0, 5))
def test_regular_clusters_become_families(n, step, first):
    doc = make_table(n, name="node{s}")
    for s, entry in enumerate(doc["server_list"]):
        entry["server_id"] = f"node{first + s}"
        for k, d in enumerate(entry["device"]):
            d["device_ip"] = str(ipaddress.IPv4Address((172 << 24) + s * 64 + k * step + 1))
    text = json.dumps(doc, indent=2) + "\n"
    src, back = roundtrip(text)
    assert back == text
    assert src.count("family ") == 1 and "\nserver " not in src, src


def test_irregular_servers_split_families():
    doc = make_table(7, name="node{s}")
    doc["server_list"][3]["device"][5]["device_ip"] = "10.99.0.6"  # breaks the pattern
    text = json.dumps(doc, indent=2) + "\n"
    src, back = roundtrip(text)
    assert back == text
    assert "family node[0..2]" in src and "family node[4..6]" in src and "server node3 {" in src


def test_import_usage_and_io_errors(tmp_path):
    res = run_rtc("import", str(tmp_path / "missing.json"))
    assert res.returncode == 2 and "RTC001" in res.stderr
    table = GOLDEN / "doc-2x2" / "hccl.json"
    res = run_rtc("import", str(table), "--hardware", "atlas-900")
    assert res.returncode == 2 and "unknown --hardware" in res.stderr
    res = run_rtc("import", str(table), "-o", str(tmp_path / "no" / "such" / "dir.rtc"))
    assert res.returncode == 2 and "cannot write" in res.stderr
    res = run_rtc("import", "-", "--name", "doc", input=table.read_text("utf-8"))
    assert res.returncode == 0 and "cluster doc {" in res.stdout


_UB_FORMS = [("  plane 1 a{k}, b{k}\n", "plane_id", "`plane`"),
             ("  level_ip 1 172.16.{i}.{d*2+5}, 172.16.{i}.{d*2+6}\n", "addr_type", "`level_ip`"),
             ("  port_eid 0 000000000000000000100000dfdf{i}{k}00\n", "rank_addr_list", "`port_eid`")]


@pytest.mark.parametrize("line, key, feature", _UB_FORMS)
def test_2_0_ub_forms_are_refused_located_and_named(line, key, feature):
    """fresh2 finding 7: a table rtc compiled with plane / level_ip / port_eid is refused
    with RTC662 at the JSON path, naming the language feature, no inner rule id."""
    from rtc.api import compile_text, rank_table

    src = ("cluster c {\n  hardware atlas-950-superpod\n}\nfamily n[0..1] {\n  devices 0..1\n"
           "  super_pod 0\n  device_ip 10.0.{i}.{d+1}\n  eid base 00000000000000000000000000{i}0000\n"
           + line + "}\n")
    res = compile_text(src, "x.rtc")
    assert res.ok, [(d.code, d.message) for d in res.diagnostics]
    text, _doc, _p = rank_table(res.topology)
    result = import_table(text, "hccl.json")
    (d,) = [d for d in result.diagnostics if d.code == "RTC662"]
    assert feature in d.message and "rtc import does not write yet" in d.message
    assert not re.search(r"RTC\d{3}", d.message)
    assert d.span is not None and f'"{key}"' in text.splitlines()[d.span.line - 1]


def test_2_0_difference_names_the_table_value_first():
    from rtc.tables.import_v2 import first_difference_at

    want = {"rank_list": [{"addr_type": "IPV4"}]}
    got = {"rank_list": [{"addr_type": "EID"}]}
    assert first_difference_at(want, got) == (
        ("rank_list", 0, "addr_type"), "the table has 'IPV4'; the description compiles to 'EID'")


def test_refused_import_folds_repeated_findings_and_counts_agree():
    """A table with 16 bare-number rank ids (RTC610) and a duplicate rank: rtc import folds
    the 16 findings into one "and 15 more" like rtc validate, and the refusal's count plus
    itself is the summary's count."""
    from rtc.report.text import summary

    doc = make_table(2)
    for s in doc["server_list"]:
        for d in s["device"]:
            d["rank_id"] = int(d["rank_id"])
    doc["server_list"][1]["device"][7]["rank_id"] = 3
    res = import_table(json.dumps(doc, indent=2), "numdup.json")
    assert not res.ok
    rtc610 = [d for d in res.diagnostics if d.code == "RTC610"]
    assert len(rtc610) == 1 and rtc610[0].repeats == 15
    refusal = next(d for d in res.diagnostics if d.code == "RTC660")
    n = int(re.search(r"the (\d+) errors below", refusal.message).group(1))
    assert n == 18 and summary(res.diagnostics) == f"{n + 1} errors"


# ---- a ConfigMap YAML, as `rtc validate` reads it (kubectl get cm rings-config-JOB -o yaml)

K8S = GOLDEN.parent / "data" / "k8s"


def test_configmap_yaml_imports_like_its_table():
    path = K8S / "kubectl-get-cm-completed.yaml"
    result = import_table(path.read_bytes(), "cm.yaml")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    assert result.form == "configmap:hccl-v1.0"
    import yaml
    embedded = yaml.safe_load(path.read_text())["items"][0]["data"]["hccl.json"]
    assert json.loads(compile_back(result.text)) == json.loads(embedded)


def test_configmap_findings_are_located_in_the_yaml():
    result = import_table((K8S / "kubectl-get-cm-dup-ip.yaml").read_bytes(), "cm.yaml")
    assert not result.ok
    found = [(d.code, d.span.file, d.span.line) for d in result.diagnostics if d.span]
    assert ("RTC208", "cm.yaml", 5) in found
    assert "RTC660" in {d.code for d in result.diagnostics}


@pytest.mark.parametrize("name, code", [("not-a-configmap.yaml", "RTC772"),
                                        ("configmap-no-hccl-json.yaml", "RTC773"),
                                        ("broken.yaml", "RTC771"),
                                        ("rings-config-initializing.yaml", "RTC774")])
def test_configmap_without_a_table_to_import_is_refused(name, code):
    result = import_table((K8S / name).read_bytes(), name)
    assert not result.ok
    assert [d.code for d in result.diagnostics if d.severity is Severity.ERROR] == [code]


def test_two_configmaps_with_tables_are_refused_naming_both():
    one = (K8S / "kubectl-get-cm-completed.yaml").read_text()
    two = one + "---\n" + one.replace("name: rings-config-deepseek", "name: rings-config-b")
    result = import_table(two, "two.yaml")
    assert not result.ok
    (err,) = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert err.code == "RTC661"
    assert "rings-config-deepseek, rings-config-b" in err.message


def test_binary_bytes_named_rtc_are_binary_not_a_description(tmp_path):
    """Fresh user F14: `rtc import x/garbage.rtc` (random bytes with NULs) said "is an rtc
    description, not a rank table" by its extension; validate and import now say the file
    is binary (RTC603), and a real description with that name is still RTC607."""
    import random

    from rtc.api.importing import import_table
    from rtc.api.validating import validate_source

    rng = random.Random(7)
    data = bytes(rng.randrange(256) for _ in range(4096))
    assert b"\0" in data
    for diags in (validate_source(data, "x/garbage.rtc").diagnostics,
                  import_table(data, "x/garbage.rtc").diagnostics):
        found = [(d.code, d.span.line, d.span.column) for d in diags if d.span]
        assert found == [("RTC603", 1, 1)]
        assert next(d.message for d in diags if d.code == "RTC603") == \
            "the file is binary (it holds NUL bytes and is not UTF-8 text), not a rank table"
    described = validate_source(b"cluster c {\n  hardware atlas-800t-a2\n}\n", "x/d.rtc")
    assert [(d.code, d.span.line, d.span.column) for d in described.diagnostics] == \
        [("RTC607", 1, 1)]


def _list(*cms: str) -> str:
    """A `kubectl get cm -o yaml` List of the ConfigMaps of kubectl-get-cm-completed.yaml,
    renamed ``cms`` (a name ending in ``-init`` holds a table still initializing)."""
    one = (K8S / "kubectl-get-cm-completed.yaml").read_text()
    item = one[one.index("- apiVersion: v1"):one.index("\nkind: List") + 1]
    out = "apiVersion: v1\nitems:\n"
    for name in cms:
        body = item.replace("name: rings-config-deepseek", f"name: {name}")
        if name.endswith("-init"):
            body = body.replace('"status":"completed"', '"status":"initializing"')
        out += body
    return out + "kind: List\nmetadata: {}\n"


def test_an_initializing_configmap_beside_a_completed_one_is_skipped_with_a_note():
    result = import_table(_list("rings-config-a", "rings-config-init"), "cms.yaml")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    (note,) = [d for d in result.diagnostics if d.code == "RTC774"]
    assert note.severity is Severity.NOTE
    assert note.message == "ConfigMap rings-config-init is still initializing: not imported"


def test_configmap_picks_one_of_several_tables():
    two = _list("rings-config-a", "rings-config-b")
    refused = import_table(two, "cms.yaml")
    (err,) = [d for d in refused.diagnostics if d.severity is Severity.ERROR]
    assert err.code == "RTC661" and "--configmap rings-config-a" in err.hint
    assert import_table(two, "cms.yaml", configmap="rings-config-b").ok
    missing = import_table(two, "cms.yaml", configmap="rings-config-c")
    assert [d.message for d in missing.diagnostics] == [
        "cms.yaml has no ConfigMap rings-config-c with a rank table (it has: rings-config-a, "
        "rings-config-b)"]
    on_json = import_table((GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text(),
                           "hccl.json", configmap="rings-config-a")
    assert not on_json.ok and on_json.diagnostics[0].code == "RTC661"
