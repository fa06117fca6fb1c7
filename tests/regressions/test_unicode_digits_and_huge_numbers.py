"""Fuzzer finds: numbers written with Unicode digits (superscript '²', fullwidth '８',
Arabic-Indic '٨') or with thousands of digits. ``str.isdigit()``, ``\\d`` and ``int()``
accept the first (and ``int('²')`` raises), ``int()`` refuses more than 4,300 digits; every
one used to escape as a traceback or be read silently. Each is now a located diagnostic
with a rule id (or, in captures, a line passed over like other malformed lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, TESTS, run_rtc
from rtc.api import compile_file, compile_text
from rtc.diagnostics import Span
from rtc.syntax.values import (ValueProblem, ascii_int, parse_family_name, parse_int,
                               parse_int_range, parse_ip)
from conftest import dump, make_table

BIG = "9" * 5000
ODD = ["²", "８", BIG]            # superscript two, fullwidth eight, 5,000 digits
IDS = ["superscript", "fullwidth", "5000-digits"]

HEAD = "cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.6\n" \
       "  device_ip 6.0.2.1 step 1\n}\nserver b {\n  host 10.0.0.7\n" \
       "  device_ip 6.0.3.1 step 1\n}\n"
# HEAD is 11 lines; a job starts on line 12, its first attribute on line 13.


def _job(*lines: str) -> str:
    return HEAD + "job j {\n" + "".join(f"  {ln}\n" for ln in lines) + "}\n"


def _family(rng: str, host: str = "10.0.0.{i+1}") -> str:
    return (f"cluster c {{\n  hardware atlas-800t-a2\n}}\nfamily node[{rng}] {{\n"
            f"  host {host}\n}}\njob j {{\n  servers node[0..1]\n}}\n")


def _found(text: str, code: str):
    """The diagnostics with ``code`` of compiling ``text`` (which must not raise)."""
    return [d for d in compile_text(text, "x.rtc").diagnostics if d.code == code]


def _at(diags):
    return [(d.code, d.span.line, d.span.column) for d in diags]


SPAN = Span("x.rtc", 1, 1)


# --------------------------------------------------------------------------- the helper

def test_ascii_int_takes_ascii_digits_only_and_bounds_the_length():
    assert ascii_int("8") == 8 and ascii_int("0042") == 42 and ascii_int("9" * 20) == 10 ** 20 - 1
    for text in ["", "²", "８", "٨", "-1", "+1", " 1", "1 ", "1_000", "9" * 21, BIG]:
        assert ascii_int(text) is None, text


# --------------------------------------------------------------------------- 1. rtc/syntax/values.py

@pytest.mark.parametrize("octet", ODD + ["0" + BIG], ids=IDS + ["leading-zero-5000"])
def test_ip_octet_is_rtc111_at_the_octet(octet):
    text = HEAD.replace("10.0.0.6", f"10.0.0.{octet}") + "job j {\n  servers a, b\n}\n"
    (d,) = _found(text, "RTC111")
    assert _at([d]) == [("RTC111", 5, 15)]            # `  host 10.0.0.` is 14 characters
    assert "is not a number from 0 to 255" in d.message and len(d.message) < 200
    with pytest.raises(ValueProblem):
        parse_ip(f"10.0.0.{octet}", SPAN)


def test_ip_with_a_fullwidth_digit_hints_at_ascii_digits():
    (d,) = _found(HEAD.replace("10.0.0.6", "10.0.0.８") + "job j {\n  servers a, b\n}\n",
                  "RTC111")
    assert "ASCII digits" in d.hint and "here 8" in d.hint


def test_rendered_template_with_a_superscript_octet_is_rtc207():
    text = "cluster c {\n  hardware atlas-800t-a2\n}\nfamily node[0..1] {\n  host 10.0.².{i}\n}\n"
    assert _at(_found(text, "RTC207"))[:1] == [("RTC207", 5, 8)]


@pytest.mark.parametrize("value", ODD + ["٨"], ids=IDS + ["arabic-indic"])
@pytest.mark.parametrize("key", ["tp", "dp", "pp"])
def test_size_in_unicode_or_huge_digits_is_rtc114(key, value):
    (d,) = _found(_job("servers a", f"{key} {value}"), "RTC114")
    assert _at([d]) == [("RTC114", 14, 3 + len(key) + 1)]
    if value != BIG:
        assert "ASCII digits" in d.hint


def test_tp_fullwidth_eight_is_not_read_as_eight():
    (d,) = _found(_job("servers a", "tp ８"), "RTC114")
    assert d.message == "'tp' must be a whole number, not '８'"
    assert d.hint == "'８' (U+FF18) is not an ASCII digit: write ASCII digits (0-9), here 8"
    with pytest.raises(ValueProblem) as exc:
        parse_int("８", SPAN, lo=1, hi=8, what="'tp'")
    assert exc.value.code.code == "RTC114"


@pytest.mark.parametrize("text, where", [
    (HEAD.replace("step 1", "step ８", 1) + "job j {\n  servers a, b\n}\n", (6, 26)),
    (_job("servers a", "port ８０８０"), (14, 8)),
])
def test_other_numbers_in_fullwidth_digits_are_rtc114(text, where):
    assert _at(_found(text, "RTC114")) == [("RTC114", *where)]


@pytest.mark.parametrize("devices", ["²", "８", "0..８", "0..²", BIG, f"0..{BIG}"])
def test_device_range_is_rtc112(devices):
    text = HEAD.replace("  host 10.0.0.6\n", f"  host 10.0.0.6\n  devices {devices}\n") + \
        "job j {\n  servers a\n}\n"
    assert _at(_found(text, "RTC112")) == [("RTC112", 6, 11)]
    with pytest.raises(ValueProblem):
        parse_int_range(devices, SPAN)


@pytest.mark.parametrize("rng", ["0..²", "0..８", f"0..{BIG}", "0" * 5000 + "..1"],
                         ids=["superscript", "fullwidth", "5000-digits", "5000-zeros"])
def test_family_range_is_rtc117_on_the_label(rng):
    found = _found(_family(rng), "RTC117")
    assert _at(found) == [("RTC117", 4, 8)]
    with pytest.raises(ValueProblem):
        parse_family_name(f"node[{rng}]", SPAN)
    if "８" in rng:
        assert "ASCII digits" in found[0].hint


@pytest.mark.parametrize("host, col", [
    ("10.0.0.{i+８}", 15), ("10.0.0.{i+²}", 15), ("10.0.0.{ｉ+1}", 15),  # fullwidth i
    ("h-{i:０８}", 10), ("h-{i:" + "9" * 150 + "}", 10),
])
def test_template_with_non_ascii_or_huge_numbers_is_rtc113(host, col):
    assert _at(_found(_family("0..1", host), "RTC113")) == [("RTC113", 5, col)]


def test_ordinary_values_still_work():
    assert ascii_int("8") == 8
    assert parse_int("8", SPAN, lo=1, hi=8) == 8
    assert str(parse_ip("10.0.0.6", SPAN)) == "10.0.0.6"
    assert str(parse_ip("fd00::6", SPAN)) == "fd00::6"
    assert parse_int_range("0..7", SPAN) == list(range(8)) and parse_int_range("3", SPAN) == [3]
    fam = parse_family_name("node[000..255]", SPAN)
    assert (fam.first, fam.last, fam.width, fam.name(7)) == (0, 255, 3, "node007")
    errors = [d for d in compile_text(_job("servers a", "tp 8"), "x.rtc").diagnostics
              if d.severity.label == "error"]
    assert errors == []
    ok = compile_text(_family("0..1", "10.0.{i}.{i+1}"), "x.rtc").diagnostics
    assert not [d for d in ok if d.code in ("RTC111", "RTC112", "RTC113", "RTC114", "RTC117")]
    result = compile_file(EXAMPLES / "a2-1node-tp8.rtc")
    assert [d for d in result.diagnostics if d.severity.label == "error"] == []


# --------------------------------------------------------------------------- 2. rtc/tables/lower_table.py

def test_decimal_reads_1_to_20_ascii_digits_only():
    from rtc.tables.lower_table import decimal

    assert decimal("12") == 12 and decimal(12) == 12 and decimal("9" * 20) == 10 ** 20 - 1
    for value in [BIG, "9" * 21, "²", "８", "", "-1", "1.0", 10 ** 20, -1, True, None, 1.0]:
        assert decimal(value) is None, value


@pytest.mark.parametrize("key, line, col", [("device_id", 10, 24), ("rank_id", 12, 22)])
@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_bad_decimal_in_a_table_is_rtc615_and_left_out(key, line, col, value):
    from rtc.api.validating import validate_source

    doc = make_table()
    doc["server_list"][0]["device"][0][key] = value
    report = validate_source(dump(doc), "t.json")
    found = [d for d in report.diagnostics if d.code == "RTC615"]
    assert _at(found) == [("RTC615", line, col)]


def test_validate_and_import_of_a_huge_device_id_do_not_crash(tmp_path):
    doc = make_table()
    doc["server_list"][0]["device"][0]["device_id"] = BIG
    path = tmp_path / "t.json"
    path.write_text(dump(doc))
    for args in (["validate", str(path)], ["import", str(path), "-o", str(tmp_path / "o.rtc")]):
        res = run_rtc(*args)
        assert res.returncode == 1, res.stderr
        assert "Traceback" not in res.stderr + res.stdout
        assert "t.json:10:24: error[RTC615]" in res.stderr + res.stdout


# --------------------------------------------------------------------------- 3. ports and env values

@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_hccl_if_base_port_is_rtc441_not_a_port_number(value):
    found = _found(_job("servers a", f"env HCCL_IF_BASE_PORT = {value}"), "RTC441")
    assert _at(found) == [("RTC441", 14, 27)]
    assert "is not a port number" in found[0].message and len(found[0].message) < 200


def test_hccl_if_base_port_huge_on_the_command_line(tmp_path):
    path = tmp_path / "x.rtc"
    path.write_text(_job("servers a", f"env HCCL_IF_BASE_PORT = {BIG}"))
    res = run_rtc("check", str(path))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "x.rtc:14:27: error[RTC441]" in res.stderr


@pytest.mark.parametrize("value", ODD + [f"60000-{BIG}", "６００００-６００５０"],
                         ids=IDS + ["huge-high", "fullwidth-range"])
def test_host_socket_port_range_is_rtc441(value):
    found = _found(_job("servers a", f"env HCCL_HOST_SOCKET_PORT_RANGE = {value}"), "RTC441")
    assert _at(found) == [("RTC441", 14, 37)]
    assert len(found[0].message) < 300


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_env_value_in_unicode_or_huge_digits_is_rtc458(value):
    found = _found(_job("servers a", f"env HCCL_BUFFSIZE = {value}"), "RTC458")
    assert _at(found) == [("RTC458", 14, 23)]


def test_env_parsers_take_ascii_digits_only():
    from rtc.network.env import (cann_version, env_value_problem, parse_port_ranges,
                                 parse_visible_devices, whole_number)

    assert whole_number("-12") == -12 and whole_number("８") is None and whole_number(BIG) is None
    assert parse_port_ranges("60000-60050,70") == ([(60000, 60050), (70, 70)], None)
    for text in ["²", "８", BIG, f"1-{BIG}"]:
        ranges, problem = parse_port_ranges(text)
        assert ranges is None and problem and len(problem) < 200
    assert "ASCII" in parse_port_ranges("６００００")[1]
    assert env_value_problem("HCCL_BUFFSIZE", "200") is None
    assert env_value_problem("HCCL_BUFFSIZE", "-200") == "must be at least 1 (MB per communicator buffer)"
    assert "ASCII" in env_value_problem("HCCL_BUFFSIZE", "２００")
    assert "5,000 digits" in env_value_problem("HCCL_BUFFSIZE", BIG)
    assert parse_visible_devices("0,1").ids == (0, 1)
    for text in ["0,８", f"0,{BIG}", "0,²"]:
        seen = parse_visible_devices(text)
        assert seen.ids == (0,) and seen.problem and seen.offset == 2
    assert cann_version("8.2.RC1") == (8, 2)
    assert cann_version("８.2.RC1") is None and cann_version(f"{BIG}.2") is None


# --------------------------------------------------------------------------- 4. inventory parsers

def _inv_at(diags):
    return [(d.code, d.severity.label, d.span.line, d.span.column) for d in diags]


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_prefix_length_is_rtc483(value):
    from rtc.inventory import parse_hccn_tool

    out, diags = parse_hccn_tool(f"ipv6_address:fd00::a\nprefix_length:{value}\n", "ipv6.txt")
    assert _inv_at(diags) == [("RTC483", "error", 2, 15)]
    assert out.get(0, "ipv6").value == "fd00::a" and out.get(0, "ipv6_prefix_len") is None
    assert len(diags[0].message) < 200


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_hccn_tool_dash_i_is_rtc483_and_output_is_numbered_by_position(value):
    from rtc.inventory import parse_hccn_tool

    out, diags = parse_hccn_tool(f"hccn_tool -i {value} -ip -g\nipaddr:6.0.2.1\n", "ip.txt")
    assert _inv_at(diags) == [("RTC483", "error", 1, 14)]
    assert out.get(0, "ip").value == "6.0.2.1"


def test_hccn_tool_dash_i_with_a_shell_variable_or_a_number_is_fine():
    from rtc.inventory import parse_hccn_tool

    for cmd, dev in [("hccn_tool -i $i -ip -g", 0), ("hccn_tool -i 3 -ip -g", 3)]:
        out, diags = parse_hccn_tool(f"{cmd}\nipaddr:6.0.2.1\n", "ip.txt")
        assert diags == [] and out.get(dev, "ip").value == "6.0.2.1"


@pytest.mark.parametrize("value", ODD, ids=IDS)
@pytest.mark.parametrize("text, line", [
    ("device {v} PING 6.0.2.1\n", 1),
    ("device 0 PING 6.0.2.1\nrecv seq={v},time=0.04ms\n", 2),
    ("device 0 PING 6.0.2.1\n{v} packets transmitted, 3 received, 0.00% packet loss\n", 2),
    ("device {v}\nipaddr:6.0.2.1\n", 1),
    ("==== {v} ====\nipaddr:6.0.2.1\n", 1),
])
def test_other_hccn_tool_lines_with_bad_numbers_are_unknown_lines(text, line, value):
    from rtc.inventory import parse_hccn_tool

    _, diags = parse_hccn_tool(text.format(v=value), "c.txt")
    assert ("RTC484", "warning", line, 1) in _inv_at(diags)


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_hccn_tool_loops_gateway_and_file_names_do_not_crash(value):
    from rtc.inventory import device_from_filename, parse_hccn_tool

    for text in (f"for i in {{{value}..7}}; do hccn_tool -i $i -ip -g; done\nipaddr:6.0.2.1\n",
                 f"for i in $(seq {value} 7); do hccn_tool -i $i -ip -g; done\nipaddr:6.0.2.1\n",
                 f"hccn_tool -i 3 -gateway -g\ndefault gateway:6.0.2.10, Iface:eth{value}\n"):
        out, diags = parse_hccn_tool(text, "c.txt")
        assert out.facts and not [d for d in diags if d.severity.label == "error"]
    for name in (f"ip_{value}.txt", f"dev{value}_ip.txt", f"{value}_ip.txt"):
        assert device_from_filename(name) is None
    assert device_from_filename("ip_3.txt") == 3


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_hccn_conf_bad_numbers(value):
    from rtc.inventory import parse_hccn_conf

    conf, diags = parse_hccn_conf(f"send_arp_status_0={value}\naddress_0=6.0.2.1\n")
    assert _inv_at(diags) == [("RTC483", "error", 1, 19)]
    assert conf.get(0, "address").value == "6.0.2.1" and conf.get(0, "send_arp_status") is None
    conf, diags = parse_hccn_conf(f"address_{value}=6.0.2.1\n")
    assert _inv_at(diags) == [("RTC481", "error", 1, 1)] and conf.devices == {}
    assert parse_hccn_conf("send_arp_status_0=1\n")[0].get(0, "send_arp_status").value == 1


HAND = TESTS / "data" / "inventory" / "handmade"


@pytest.mark.parametrize("value", ODD, ids=IDS)
@pytest.mark.parametrize("col, column", [(0, 2), (1, 33), (2, 64)])
def test_npu_smi_m_cell_is_rtc486_at_the_cell(col, column, value):
    from rtc.inventory import parse_npu_smi_chip_map

    lines = (HAND / "npu_smi_m_910b3.txt").read_text().splitlines()
    cell = list(re.finditer(r"\S+", lines[1]))[col]
    lines[1] = lines[1][:cell.start()] + value + lines[1][cell.end():]
    cmap, diags = parse_npu_smi_chip_map("\n".join(lines) + "\n", "m.txt")
    assert _inv_at(diags) == [("RTC486", "error", 2, column)]
    assert len(cmap.entries) == 15 and len(diags[0].message) < 250


@pytest.mark.parametrize("value", ODD, ids=IDS)
def test_npu_smi_info_and_topo_with_bad_numbers_do_not_crash(value):
    from rtc.inventory import parse_npu_smi_info, parse_npu_smi_topo

    lines = (HAND / "npu_smi_info_910b2.txt").read_text().splitlines()
    lines[6] = lines[6].replace("| 0     910B2", f"| {value}     910B2", 1)
    info, diags = parse_npu_smi_info("\n".join(lines) + "\n", "i.txt")
    assert _inv_at(diags) == [("RTC486", "warning", 8, 3)]     # its chip row is orphaned
    assert info.npu_ids == list(range(1, 8))
    topo = (HAND / "npu_smi_topo_910b.txt").read_text().replace("NPU1", "NPU" + value)
    none, diags = parse_npu_smi_topo(topo, "t.txt")
    assert none is None and _inv_at(diags) == [("RTC486", "error", 1, 1)]


# --------------------------------------------------------------------------- 5. preflight results

def test_preflight_exit_codes_pings_and_sysctl_with_bad_numbers(tmp_path):
    from rtc.preflight.results import load_results, parse_reserved_ports

    (tmp_path / "expect.json").write_text(json.dumps({
        "rtc_preflight": 1, "plan": "x.rtc", "server": "a", "host": None, "devices": [],
        "ports": [], "pings": 1}))
    (tmp_path / "pings.txt").write_text(
        f"0 6.0.2.3 b 1\n² 6.0.2.3 b 1\n{BIG} 6.0.2.3 b 1\n1 6.0.2.5 b ８\n")
    (tmp_path / "exit-codes.txt").write_text(
        f"npu0_link.txt 0\nnpu1_link.txt -1\nnpu2_link.txt ²\nnpu3_link.txt ８\n"
        f"npu4_link.txt {BIG}\n")
    r = load_results(str(tmp_path))
    assert r.problem is None
    assert [(p.device, p.peer_device) for p in r.pings] == [(0, 1), (1, None)]
    assert r.exit_codes == {"npu0_link.txt": 0, "npu1_link.txt": -1}
    text = f"$ sysctl -n net.ipv4.ip_local_reserved_ports\n60000-60031,²,８,{BIG},1-{BIG},50000\n"
    assert parse_reserved_ports(text) == ([(60000, 60031), (50000, 50000)], 2)


@pytest.mark.parametrize("version, words", [
    ("99999999999999999999.0.0", "is out of range (each part of a release has at most 6 "
                                 "digits)"),
    ("1234567.0", "is out of range"),
    ("latest", "is not a version number"),
])
def test_vllm_version_out_of_range_is_said_so(version, words):
    """Fresh user F17: `vllm_version 99999999999999999999.0.0` was "not a version number";
    it is a version number out of range (RTC502 at the cluster name, 1:9)."""
    src = (HEAD.replace("  hardware atlas-800t-a2\n",
                        f"  hardware atlas-800t-a2\n  vllm_version {version}\n")
           + "job j {\n  servers a, b\n  framework vllm\n  dp 2\n  tp 8\n}\n")
    (d,) = [d for d in compile_text(src, "v.rtc").diagnostics if d.code == "RTC502"]
    assert (d.span.line, d.span.column) == (1, 9)
    assert d.message.startswith(f"vllm_version '{version}' {words}")
    assert d.message.endswith("; the launch scripts use the conservative form")


def test_a_six_digit_version_part_is_read():
    src = (HEAD.replace("  hardware atlas-800t-a2\n",
                        "  hardware atlas-800t-a2\n  vllm_version 0.11.0\n")
           + "job j {\n  servers a, b\n  framework vllm\n  dp 2\n  tp 8\n}\n")
    assert [d for d in compile_text(src, "v.rtc").diagnostics if d.code == "RTC502"] == []
