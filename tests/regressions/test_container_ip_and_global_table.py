"""A fresh user's findings on MindIE, container_ip and the global rank table (each test
fails on the code before its fix): container_ip in 1.x tables is validated (RTC634,
RTC657, RTC665, RTC209) and never a traceback in rtc import."""

from __future__ import annotations

import json

from conftest import EXAMPLES
from rtc.api import compile_file
from rtc.api.importing import import_table
from rtc.api.validating import validate_source
from rtc.emit.hccl_json import build_rank_table

EXAMPLE = EXAMPLES / "pd-mindie-a2.rtc"


def _prefill_table() -> dict:
    res = compile_file(str(EXAMPLE))
    return build_rank_table(res.topology, res.topology.job("prefill"))


def _with(container_ips) -> str:
    doc = _prefill_table()
    for s, ip in zip(doc["server_list"], container_ips):
        if ip is None:
            s.pop("container_ip", None)
        else:
            s["container_ip"] = ip
    return json.dumps(doc, indent=2)


def _codes(text: str) -> list[tuple]:
    rep = validate_source(text, "t.json")
    return [(d.code, d.severity.name.lower(), d.span.line if d.span else None)
            for d in rep.diagnostics]


def test_the_shipped_table_validates_cleanly():
    assert _codes(_with(["172.16.2.1", "172.16.2.2"])) == []


def test_bad_container_ip_is_located_and_import_refuses_without_a_traceback():
    text = _with(["172.16.2.1", "not-an-ip"])
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "not-an-ip" in t)
    assert _codes(text) == [("RTC634", "error", line)]
    assert [c for c, *_ in _codes(_with(["172.16.2.1", " 172.16.2.2"]))] == ["RTC634"]
    assert [c for c, *_ in _codes(_with(["172.16.2.1", "172.16.2.2,172.16.2.3"]))] == ["RTC634"]
    result = import_table(text, "t.json")
    assert result.text is None
    assert [d.code for d in result.diagnostics] == ["RTC634", "RTC660"]


def test_container_ip_on_some_servers_only_is_a_warning():
    text = _with(["172.16.2.1", None])
    line = next(n for n, t in enumerate(text.splitlines(), 1) if '"10.0.2.2"' in t)
    # and the two consumers that read container_ip on every server say so (RTC678)
    assert sorted(_codes(text)) == [("RTC665", "warning", line),
                                    ("RTC678", "warning", line - 1),
                                    ("RTC678", "warning", line - 1)]
    assert _codes(_with([None, None])) == []


def test_repeated_or_reserved_container_ip_in_a_table():
    assert [c for c, *_ in _codes(_with(["172.16.2.1", "172.16.2.1"]))] == ["RTC657"]
    assert [c for c, *_ in _codes(_with(["172.16.2.1", "127.0.0.1"]))] == ["RTC209"]
    doc = json.loads(_with(["172.16.2.1", "172.16.2.2"]))
    doc["server_list"][1]["container_ip"] = doc["server_list"][0]["device"][3]["device_ip"]
    assert [c for c, *_ in _codes(json.dumps(doc, indent=2))] == ["RTC657"]


def test_mindie_hccl_if_ip_is_the_pod_ip_when_the_pod_has_one():
    from rtc.api.compiling import compile_text
    from conftest import mindie_files

    files = mindie_files(compile_file(str(EXAMPLE)))
    assert "export HCCL_IF_IP=172.16.2.1\n" in files["p1.env"]
    assert "export MIES_CONTAINER_IP=172.16.2.1\n" in files["p1.env"]
    text = EXAMPLE.read_text().replace("  container_ip 172.16.2.{10+i}\n", "")
    files = mindie_files(compile_text(text, "x.rtc"))
    assert "export HCCL_IF_IP=10.0.2.11\n" in files["d1.env"]


def _case_codes(name: str) -> list[str]:
    from conftest import CASES
    from rtc.api.compiling import compile_text

    case = CASES / "checks" / name
    return [d.code for d in compile_text(case.read_text(encoding="utf-8"), str(case)).diagnostics]


def test_a_mixed_mindie_vllm_pair_is_one_finding():
    assert _case_codes("RTC528-mindie-mixed-pair.rtc") == ["RTC528"]


def test_settings_mindie_does_not_use_are_reported_with_a_plain_hint():
    from rtc.api.compiling import compile_text

    text = EXAMPLE.read_text().replace(
        "  servers d[1..2]\n", "  servers d[1..2]\n  expert_parallel on\n  kv_connector nixl\n", 1)
    res = compile_text(text, "x.rtc")
    found = [(d.code, d.message.split(":")[1].strip(), d.hint) for d in res.diagnostics]
    assert sorted(found) == [
        ("RTC512", "`expert_parallel` has no effect", "remove `expert_parallel`"),
        ("RTC512", "`kv_connector` has no effect", "remove `kv_connector`")]


def test_inter_comm_port_is_the_shipped_config_json_value():
    from rtc.plan.mindie import FACTS
    from conftest import mindie_files

    frag = json.loads(mindie_files(compile_file(str(EXAMPLE)))["mindie-d1.json"])
    assert frag["ServerConfig"]["interCommPort"] == 1121
    fact = next(f for f in FACTS if f.name == "ServerConfig.interCommPort")
    assert fact.value.startswith("1121") and "src/server/conf/config.json" in fact.source


def _global() -> dict:
    from rtc.emit import global_ranktable

    res = compile_file(str(EXAMPLE))
    pair = next(p for p in res.plan.pairs if p.prefill and p.decode)
    return global_ranktable.build(res.topology, pair)


def _instances(doc: dict) -> list[dict]:
    """The instance groups of a global table (Motor's numbering: "0" coordinator and "1"
    controller hold no servers)."""
    return [g for g in doc["server_group_list"] if g["group_id"] not in ("0", "1")]


def _global_codes(doc: dict) -> list[str]:
    return [d.code for d in validate_source(json.dumps(doc, indent=2), "g.json").diagnostics]


def test_global_table_server_ip_on_two_servers_is_rtc667():
    doc = _global()
    groups = _instances(doc)
    groups[1]["server_list"][0]["server_ip"] = groups[0]["server_list"][0]["server_ip"]
    assert _global_codes(doc) == ["RTC667"]
    assert _global_codes(_global()) == []


def test_one_group_global_table_import_is_located_with_a_hint():
    doc = _global()
    doc["server_group_list"].remove(_instances(doc)[1])
    result = import_table(json.dumps(doc, indent=2), "g.json")
    [d] = [d for d in result.diagnostics if d.code == "RTC659"]
    assert result.text is None and "1 group" in d.message and d.hint
    assert (d.span.line, d.span.column) != (1, 1) and d.span.line > 0


def test_global_table_root_cause_comes_without_a_rank_echo():
    doc = _global()
    del _instances(doc)[0]["server_list"][0]["device"]
    assert _global_codes(doc) == ["RTC611"]
    doc = _global()
    _instances(doc)[0]["server_list"][0]["device"][0]["rank_id"] = 0
    assert _global_codes(doc) == ["RTC610"]
    doc = _global()
    _instances(doc)[0]["server_list"][0]["container_ip"] = 17216
    [d] = validate_source(json.dumps(doc, indent=2), "g.json").diagnostics
    assert d.code == "RTC610" and '"17216"' not in d.hint and "IP address" in d.message
    doc = _global()
    del doc["server_group_list"]
    [d] = validate_source(json.dumps(doc, indent=2), "g.json").diagnostics
    assert d.code == "RTC611" and "server_group_list" in d.hint
