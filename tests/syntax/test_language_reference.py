"""The language reference (docs/language.md) is generated from the parser's attribute table
and must be current; what it says (defaults, examples, rule ids) must be what rtc does;
`rtc explain` takes rule ids, rule names and attribute names."""

from __future__ import annotations

import re

import pytest

from conftest import EXAMPLES, ROOT, run_rtc
from rtc.report.language_reference import (REGENERATE, attribute_entries, attribute_names,
                                           render_attribute_entry, render_language_reference)
from rtc.syntax.schema import BLOCK_SPECS

DOC = ROOT / "docs" / "language.md"
ALL_ATTRS = [(kind, name) for kind, spec in BLOCK_SPECS.items() for name in spec.attrs]
LABELS = {"required": "x", "optional": "x", "family": "x[0..1]"}


def _sections(text: str) -> dict[str, str]:
    """block kind -> its section of the reference (from `## kind` to the next heading)."""
    parts = re.split(r"^## (\w+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def _elaborate(source: str):
    from rtc.syntax.parser import parse_text
    from rtc.syntax.schema import elaborate

    tree, diags = parse_text(source, "example.rtc")
    assert tree is not None, (source, [d.message for d in diags])
    return elaborate(tree)


def test_docs_language_md_is_the_generated_reference():
    assert DOC.exists(), f"docs/language.md is missing: run `{REGENERATE}`"
    assert DOC.read_text(encoding="utf-8") == render_language_reference(), (
        f"docs/language.md is out of date with rtc/syntax/schema.py: run `{REGENERATE}`")


def test_every_attribute_of_every_block_is_in_its_section():
    sections = _sections(render_language_reference())
    assert list(sections) == list(BLOCK_SPECS)
    for kind, name in ALL_ATTRS:
        assert f"\n| `{name}` | " in sections[kind], (kind, name)


@pytest.mark.parametrize("kind, name", ALL_ATTRS)
def test_every_attribute_has_a_full_entry(kind, name):
    a = BLOCK_SPECS[kind].attrs[name]
    for field in ("doc", "value", "default", "becomes", "example"):
        assert getattr(a, field).strip(), f"{kind}.{name} has no {field}"
    assert a.example.split()[0] == name, f"{kind}.{name}: the example writes another attribute"


@pytest.mark.parametrize("kind, name", ALL_ATTRS)
def test_every_attribute_example_is_read_without_a_problem(kind, name):
    example = BLOCK_SPECS[kind].attrs[name].example
    label = LABELS[BLOCK_SPECS[kind].label]
    decls, diags = _elaborate(f"{kind} {label} {{\n  {example}\n}}\n")
    assert diags == [], [d.message for d in diags]
    assert decls[0].given(name)


@pytest.mark.parametrize("kind", list(BLOCK_SPECS))
def test_every_block_example_is_read_without_a_problem(kind):
    spec = BLOCK_SPECS[kind]
    assert spec.doc and spec.example
    decls, diags = _elaborate(spec.example + "\n")
    assert diags == [] and [d.kind for d in decls] == [kind], [d.message for d in diags]


def test_rule_ids_the_reference_names_exist():
    from rtc.catalogue import get_rule

    cited = set(re.findall(r"RTC\d{3}", render_language_reference()))
    assert cited and {c for c in cited if get_rule(c) is None} == set()


def test_stated_constants_are_the_code_s():
    from rtc.model.presets import presets
    from rtc.parallel.placement import MEGATRON_DEFAULT_ORDER
    from rtc.plan.ports import (DEFAULT_API_PORT, DEFAULT_DP_RPC_PORT, DEFAULT_KV_PORT,
                                DEFAULT_MASTER_PORT, DEFAULT_RAY_PORT)
    from rtc.syntax.attribute_values import MAX_PARALLEL

    job = BLOCK_SPECS["job"].attrs
    assert job["port"].default.startswith(f"{DEFAULT_API_PORT} ")
    assert job["dp_rpc_port"].default.startswith(f"{DEFAULT_DP_RPC_PORT} ")
    assert job["kv_port"].default.startswith(f"{DEFAULT_KV_PORT} ")
    assert job["ray_port"].default.startswith(f"{DEFAULT_RAY_PORT} ")
    assert job["master_port"].default.startswith(
        f"{DEFAULT_MASTER_PORT['nnodes']} for vLLM --nnodes, "
        f"{DEFAULT_MASTER_PORT['torchrun']} for torchrun")
    assert job["order"].default.startswith(MEGATRON_DEFAULT_ORDER + " ")
    for key in ("dp", "tp", "pp", "pcp", "dcp"):
        assert job[key].value == f"integer 1..{MAX_PARALLEL}"
    named = re.findall(r"[\w-]+", BLOCK_SPECS["cluster"].attrs["hardware"].value.split(":")[1])
    assert sorted(named) == sorted(presets())


def test_stated_job_defaults_are_what_lowering_and_planning_use():
    from rtc.api import compile_text

    source = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(encoding="utf-8")
    source = source.split("job deepseek {")[0] + (
        "job j {\n  servers atlas-01, atlas-02\n  dp 2\n  tp 8\n}\n")
    result = compile_text(source, "defaults.rtc")
    assert result.ok, [d.message for d in result.diagnostics]
    job = result.topology.jobs[0]
    attrs = BLOCK_SPECS["job"].attrs
    for key in ("role", "framework"):
        assert attrs[key].default == getattr(job, key), key
    # no model named: the default of the default (RTC332 would say so for a DP job)
    assert attrs["model_kind"].default.endswith("else moe (RTC332 says so for a job with "
                                                "dp > 1)") and job.model_kind == "moe"
    for key in ("pp", "pcp", "dcp"):
        assert attrs[key].default == str(getattr(job, key)) == "1"
    assert attrs["expert_parallel"].default == "off" and job.expert_parallel is False
    assert attrs["lb"].default == "internal" and job.launch.lb is None
    assert result.plan.launches["j"].mode == "dp-internal"
    ports = result.plan.ports.jobs["j"]
    assert (ports.port, ports.dp_rpc_port) == (8000, 29550)
    assert str(ports.dp_address) == "10.0.0.6"           # the head's (atlas-01's) host
    servers = result.topology.servers
    assert [s.server_id for s in servers] == ["10.0.0.6", "10.0.0.5"]   # the host IPs


def test_attribute_entries_group_shared_specs():
    assert attribute_entries("device_ip")[0][0] == ("server", "family")
    assert [kinds for kinds, _ in attribute_entries("nic")] == [("server", "family"),
                                                                ("network",)]
    assert [kinds for kinds, _ in attribute_entries("policy")] == [("cluster",), ("job",)]
    assert attribute_entries("nope") == [] and render_attribute_entry("nope") is None
    assert set(attribute_names()) == {name for _, name in ALL_ATTRS}


def test_explain_prints_the_language_reference():
    res = run_rtc("explain", "--language-reference")
    assert res.returncode == 0, res.stderr
    assert res.stdout == render_language_reference()


@pytest.mark.parametrize("name", ["duplicate-device-ip", "duplicate_device_ip", "RTC208"])
def test_explain_a_rule_by_name_or_id(name):
    res = run_rtc("explain", name)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("RTC208 duplicate-device-ip (error)") and "Fix:" in res.stdout


def test_explain_an_attribute():
    res = run_rtc("explain", "device_ip")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("device_ip (attribute of blocks server, family)")
    a = BLOCK_SPECS["server"].attrs["device_ip"]
    for label in ("value", "default", "repeatable", "becomes", "example"):
        assert f"\n  {label} " in out, label
    assert "the rank table's device_ip" in out and a.example in out
    res = run_rtc("explain", "nic")
    assert "attribute of blocks server, family" in res.stdout
    assert "attribute of block network" in res.stdout


@pytest.mark.parametrize("word, suggestion", [("devce_ip", "device_ip"),
                                              ("duplicate-device-ipp", "duplicate-device-ip"),
                                              ("master-port", "master_port")])
def test_explain_an_unknown_word_suggests_the_closest(word, suggestion):
    res = run_rtc("explain", word)
    assert res.returncode == 2
    assert f"rtc: error[RTC002]: unknown rule, block or attribute '{word}'" in res.stderr
    assert f"did you mean '{suggestion}'?" in res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr


def test_explain_needs_one_name():
    res = run_rtc("explain")
    assert res.returncode == 2 and "rtc: error[RTC002]: explain needs" in res.stderr
    res = run_rtc("explain", "RTC208", "--language-reference")
    assert res.returncode == 2 and "not both" in res.stderr
