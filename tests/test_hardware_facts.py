"""Hardware facts from the captures that the checks use: a DOWN link or a failed net health
matters only where the plan needs that NPU's RoCE link (RTC421 / RTC422)."""

from __future__ import annotations

from conftest import CASES
from rtc.api import compile_file, compile_text
from rtc.diagnostics import Severity

CASE = CASES / "checks" / "RTC421-inventory-link-down.rtc"


def _severities(result, code: str):
    return [d.severity for d in result.diagnostics if d.code == code]


def test_link_down_in_a_job_across_servers_is_an_error():
    result = compile_file(str(CASE))
    assert _severities(result, "RTC421") == [Severity.ERROR]


def test_link_down_in_a_one_server_job_is_a_note():
    text = CASE.read_text(encoding="utf-8")
    text = text.replace("servers atlas-01, atlas-02\n  dp 2", "servers atlas-01\n  dp 1")
    result = compile_text(text, str(CASE))
    (d,) = [d for d in result.diagnostics if d.code == "RTC421"]
    assert d.severity is Severity.NOTE and "stay inside one server" in d.message
    assert result.ok


def test_net_health_counts_only_where_roce_is_used():
    case = CASES / "checks" / "RTC422-inventory-net-health.rtc"
    assert _severities(compile_file(str(case)), "RTC422") == [Severity.ERROR]
    text = case.read_text(encoding="utf-8").split("server atlas-02")[0]
    result = compile_text(text, str(case))  # no job: the table of the one server
    assert _severities(result, "RTC422") == [Severity.NOTE]


def test_two_captures_of_one_machine_are_one_machine_error():
    inv = CASES.parent / "data" / "inventory"
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\n"
            f'server a {{\n  host 10.0.0.6\n  inventory "{inv / "a2-atlas-01"}"\n}}\n'
            f'server b {{\n  host 10.0.0.7\n  inventory "{inv / "variants" / "stale-conf"}"\n}}\n')
    result = compile_text(text, "x.rtc")
    (d,) = [d for d in result.diagnostics if d.code == "RTC223"]
    assert "both show NPU address 6.0.2.1" in d.message and d.span.line == 10


def test_same_host_same_devices_stays_a_duplicate_host_ip():
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\n"
            "server a {\n  host 10.0.0.6\n}\nserver b {\n  host 10.0.0.6\n}\n")
    codes = [d.code for d in compile_text(text, "x.rtc").diagnostics]
    assert "RTC202" in codes and "RTC223" not in codes


VNIC = CASES.parent / "data" / "inventory" / "variants" / "a3-vnic"


def test_vnic_capture_is_parsed_apart_from_the_roce_ip():
    from rtc.inventory.hccn_tool import parse_hccn_tool

    out, diags = parse_hccn_tool((VNIC / "vnic.txt").read_text(), "vnic.txt")
    assert diags == []
    assert out.facts[3]["vnic_ip"].value == "192.1.1.11" and "ip" not in out.facts[3]
    assert out.facts[3]["vnic_ip"].span.line == 11


def test_headless_vnic_file_is_read_by_its_name(tmp_path):
    from rtc.inventory import load_inventory_dir

    (tmp_path / "vnic_2.txt").write_text("ipaddr:192.1.1.10\n")
    (tmp_path / "ip_2.txt").write_text("ipaddr:6.0.2.5\nnetmask:255.255.255.254\n")
    inv, diags = load_inventory_dir(str(tmp_path))
    dev = inv.devices[2]
    assert (dev.vnic_ip.value, dev.ip.value) == ("192.1.1.10", "6.0.2.5") and diags == []


def _a3(device_ip: str) -> str:
    return ("cluster c {\n  hardware atlas-800-a3\n}\n"
            f'server a {{\n  host 10.0.0.6\n  inventory "{VNIC}"\n  device_ip {device_ip}\n'
            "  super_pod 0\n  super_device_id base 0\n}\n")


def test_device_ip_inventory_vnic_takes_the_vnic_address():
    from rtc.api import rank_table

    result = compile_text(_a3("inventory vnic"), "x.rtc")
    assert result.ok, [d.message for d in result.diagnostics]
    _t, doc, _p = rank_table(result.topology)
    ips = [d["device_ip"] for d in doc["server_list"][0]["device"]]
    assert ips[:3] == ["192.1.0.10", "192.1.0.11", "192.1.1.10"] and len(ips) == 16
    bad = compile_text(_a3("inventory vnc"), "x.rtc")
    assert [(d.code, d.span.line, d.span.column) for d in bad.diagnostics][:1] == [
        ("RTC114", 7, 23)]
