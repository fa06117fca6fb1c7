"""What a new user hit (issue 15): silent wrong results become findings, and a failed
value's own finding is not followed by knock-ons computed from a default."""

from __future__ import annotations

import json

from rtc.api import compile_text
from rtc.api.validate import validate_source

HEAD = "cluster c {\n  hardware atlas-800t-a2\n}\n"
TWO = HEAD + """server a {
  host HOST_A
  devices 0..7
  device_ip 6.0.0.1 step 1
  prefix 16
}
server b {
  host 10.0.0.2
  devices 0..7
  device_ip 6.0.0.9 step 1
  prefix 16
}
job j {
  servers a, b
  SIZE
  dp 2
}
"""


def _codes(text: str) -> list[str]:
    return sorted(d.code for d in compile_text(text, "x.rtc").diagnostics)


def test_a_bad_host_is_reported_once_not_as_a_missing_host():
    text = TWO.replace("HOST_A", "10.0.0.256").replace("SIZE", "tp 8")
    assert _codes(text) == ["RTC111"]        # no RTC456 "no host IP", no RTC509


def test_a_misspelt_size_is_not_judged_with_its_default():
    text = TWO.replace("HOST_A", "10.0.0.1").replace("SIZE", "TP 8")
    result = compile_text(text, "x.rtc")
    assert [d.code for d in result.diagnostics] == ["RTC110"]   # no RTC210 computed with tp 1
    assert "did you mean 'tp'?" in result.diagnostics[0].hint


def _table(status: str, sdid_on_second: bool) -> str:
    second = {"device_id": "1", "device_ip": "6.0.0.2", "rank_id": "1"}
    if sdid_on_second:
        second["super_device_id"] = "1"
    return json.dumps({
        "status": status, "version": "1.2", "server_count": "1",
        "server_list": [{"server_id": "node0", "host_ip": "10.0.0.1", "device": [
            {"device_id": "0", "device_ip": "6.0.0.1", "super_device_id": "0", "rank_id": "0"},
            second]}],
        "super_pod_list": [{"super_pod_id": "0", "server_list": [{"server_id": "node0"}]}]},
        indent=2)


def test_a_device_without_super_device_id_in_a_one_server_12_table_is_rtc212():
    rep = validate_source(_table("completed", False), "t.json")
    assert [(d.code, d.span.line) for d in rep.diagnostics] == [("RTC212", 16)]   # the device object that lacks it
    assert validate_source(_table("completed", True), "t.json").diagnostics == []


def test_an_initializing_table_is_rtc649():
    rep = validate_source(_table("initializing", True), "t.json")
    assert [(d.code, d.severity.label, d.span.line, d.span.column)
            for d in rep.diagnostics] == [("RTC649", "warning", 2, 13)]
