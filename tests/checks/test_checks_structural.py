"""One failing input per structural rule (rule id, line, column) and passing inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CASES, expectations
from rtc.api import compile_text

CHECK_CASES = sorted((CASES / "checks").glob("*.rtc"))


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda p: p.stem)
def test_check_case(case: Path):
    expected = expectations(case)
    assert expected is not None, f"{case.name} has no '# expect:' line"
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    got = sorted((d.code, d.span.line, d.span.column) for d in result.diagnostics if d.span)
    if expected == []:
        assert result.diagnostics == [], [d.message for d in result.diagnostics]
        assert result.ok
    else:
        for item in expected:
            assert item in got, f"expected {item}, got {got}: " + \
                "; ".join(d.message for d in result.diagnostics)


def test_every_structural_rule_has_a_failing_case():
    covered = {expectations(p)[0][0] for p in CHECK_CASES if expectations(p)}
    wanted = {f"RTC2{n:02d}" for n in range(0, 21)}
    assert wanted <= covered, sorted(wanted - covered)


def _codes(name: str) -> list[str]:
    case = CASES / "checks" / name
    return [d.code for d in compile_text(case.read_text(encoding="utf-8"), str(case)).diagnostics]


def test_one_template_failure_per_server_line():
    # eight devices divide by zero on one line: one finding, not eight
    assert _codes("RTC113-one-finding-per-server.rtc") == ["RTC113"]


def test_out_of_range_super_device_id_is_not_also_missing():
    # negative SDIDs are reported once (RTC207), not again as "no super_device_id" (RTC212)
    assert _codes("RTC207-super-device-id-range.rtc") == ["RTC207"]


def test_per_device_variable_in_step_start_explained():
    case = CASES / "checks" / "RTC113-per-device-variable-in-step.rtc"
    (d,) = compile_text(case.read_text(encoding="utf-8"), str(case)).diagnostics
    assert "uses d, which is known only per device" in d.message
    assert "not defined" not in d.message


def test_one_gateway_for_every_device_of_a_server():
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily node[0..1] {\n  host 10.0.0.{i+1}\n"
           "  devices 0..7\n  device_ip 6.0.{i}.{d+10}\n  gateway 6.0.{i}.1\n  prefix 24\n}\n")
    result = compile_text(src, "gw.rtc")
    assert [d.code for d in result.diagnostics] == ["RTC411"]  # the assumed fabric, a note
    assert [str(d.gateway) for s in result.topology.servers for d in s.devices] == \
        ["6.0.0.1"] * 8 + ["6.0.1.1"] * 8


def test_repeating_family_template_gives_one_duplicate_ip_finding():
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily node[0..99] {\n"
           "  host 10.0.0.{i+1}\n  devices 0..7\n  device_ip 6.0.{i%10}.{d+1}\n  prefix 24\n}\n")
    dups = [d for d in compile_text(src, "rep.rtc").diagnostics if d.code == "RTC208"]
    assert len(dups) == 1
    assert "node10 device 0 is also the IP of node0 device 0" in dups[0].message
    assert "the same line gives 89 more clashing server pairs" in dups[0].message


@pytest.mark.parametrize("body,code,tail", [
    # a family's shared host: one RTC202 for the line, the rest counted
    ("family node[0..3] {\n  host 10.0.0.9\n  devices 0..7\n  device_ip 6.0.{i}.{d+1}\n}\n",
     "RTC202", "(and 2 more servers: node2, node3)"),
    # a family's 910A device set off the rings: one RTC320 for the line
    ("family s[0..1] {\n  host 10.0.0.{i+1}\n  devices 0, 1, 4, 5\n"
     "  device_ip 192.168.{i}.{d+1}\n}\n", "RTC320", "(and 1 more server: s1)"),
])
def test_one_finding_per_family_line(body, code, tail):
    hardware = "atlas-800-910a" if code == "RTC320" else "atlas-800t-a2"
    src = f"cluster c {{\n  hardware {hardware}\n}}\n" + body
    found = [d for d in compile_text(src, "f.rtc").diagnostics if d.code == code]
    assert len(found) == 1 and found[0].message.endswith(tail), [d.message for d in found]


@pytest.mark.parametrize("line,words", [
    ("  env PATH = /opt/x\n", "replaces the whole PATH"),
    ("  env RTC_DIR = /x\n", "the folder the launch scripts find"),
])
def test_env_lines_that_shadow_the_launch_are_warned(line, words):
    case = CASES / "checks" / "RTC511-env-shadows-model.rtc"
    text = case.read_text(encoding="utf-8").replace("  env MODEL = /models/B\n", line)
    found = [d for d in compile_text(text, "p.rtc").diagnostics if d.code == "RTC511"]
    assert len(found) == 1 and words in found[0].message
