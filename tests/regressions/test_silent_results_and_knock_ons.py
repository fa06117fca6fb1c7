"""What a new user hit (issue 15): silent wrong results become findings, and a failed
value's own finding is not followed by knock-ons computed from a default."""

from __future__ import annotations

import json

from rtc.api import compile_text
from rtc.api.validating import validate_source

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
  model_kind moe
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


def _diags(text: str):
    return [(d.code, d.span.line if d.span else None, d.span.column if d.span else None)
            for d in compile_text(text, "x.rtc").diagnostics]


def test_a_huge_device_id_is_rtc205_not_a_memory_error():
    text = HEAD + "server a {\n  devices 99999999999\n}\n"
    assert _diags(text) == [("RTC205", 5, 11)]


def test_a_backwards_or_huge_family_range_in_a_job_is_rtc112():
    text = HEAD + "family p[0..3] {\n  devices 0..7\n}\njob j {\n  servers p[3..2]\n}\n" \
        "job k {\n  servers p[0..1048576]\n}\n"
    assert [d for d in _diags(text) if d[0] == "RTC112"] == [("RTC112", 8, 11), ("RTC112", 11, 11)]


def test_an_empty_or_unreadable_inventory_folder_is_rtc480(tmp_path):
    empty = tmp_path / "captures"
    empty.mkdir()
    result = compile_text(HEAD + f'server a {{\n  devices 0..7\n  inventory "{empty}"\n}}\n', "x.rtc")
    (d,) = result.diagnostics
    assert (d.code, d.severity.label) == ("RTC480", "warning") and "no capture files" in d.message
    long_path = "x" * 5000
    result = compile_text(HEAD + f'server a {{\n  devices 0..7\n  inventory "{long_path}"\n}}\n',
                          "x.rtc")
    assert [d.code for d in result.diagnostics] == ["RTC480"]


def test_a_backslash_at_the_end_of_a_line_continues_it():
    text = HEAD + "server a {\n  devices 0..3, \\\n    4..7\n  host 10.0.0.1 \\\n\n}\n"
    result = compile_text(text, "x.rtc")
    assert result.ok and [d.device_id for d in result.topology.servers[0].devices] == list(range(8))


def test_repeated_device_ids_are_named_once():
    result = compile_text(HEAD + "server a {\n  devices 0..4, 3..7\n}\n", "x.rtc")
    (d,) = result.diagnostics
    assert d.code == "RTC204" and d.message == "a lists devices 3, 4 twice"


def test_explain_takes_a_bare_number_and_rules_survive_a_closed_pipe():
    import subprocess
    import sys

    from conftest import run_rtc

    res = run_rtc("explain", "208")
    assert res.returncode == 0 and res.stdout.startswith("RTC208 duplicate-device-ip")
    exe = [sys.executable, "-m", "rtc", "rules"]
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {' '.join(exe)} | head -1"],
                       capture_output=True, text=True)   # pipefail: rtc's own exit code
    assert p.returncode == 0 and p.stdout.startswith("RTC001") and "Traceback" not in p.stderr
