"""Tests for rtc.inventory: hccn.conf, hccn_tool and npu-smi parsers and the merged loader.

Real captures are copies under tests/data/inventory/ (see its README); hand-made samples are in
tests/data/inventory/handmade/; small variants are written inline below.
"""

from __future__ import annotations

import filecmp
import ipaddress
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtc.diagnostics import Severity, Span
from rtc.inventory import (RULES, detect_kinds, device_from_filename, load_hccn_conf, load_hccn_tool,
                           load_inventory_dir, load_inventory_files, load_npu_smi_chip_map,
                           load_npu_smi_info, load_npu_smi_topo, parse_hccn_conf, parse_hccn_tool,
                           parse_npu_smi_chip_map, parse_npu_smi_info, parse_npu_smi_topo)
from conftest import ROOT, TESTS

DATA = TESTS / "data" / "inventory"
ATLAS = DATA / "a2-atlas-01"
HAND = DATA / "handmade"
MIXED_910A = DATA / "tool_output__mindcluster_faultdiag__npu_info_before_910a.txt"
SHARED = ROOT.parent / "shared" / "corpus"


def where(diags):
    """(code, severity, line, column) of each diagnostic, in order."""
    return [(d.code, d.severity.label, d.span.line if d.span else None,
             d.span.column if d.span else None) for d in diags]


def write(tmp_path: Path, name: str, text: str, newline: str = "\n") -> Path:
    p = tmp_path / name
    p.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return p


# ----------------------------------------------------------------------------------------------
# real captures
# ----------------------------------------------------------------------------------------------

@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared corpus not beside the clone")
def test_copied_captures_are_byte_identical_to_the_corpus():
    for f in sorted(ATLAS.glob("*.txt")):
        assert filecmp.cmp(f, SHARED / "inventory" / "a2-atlas-01" / f.name, shallow=False), f.name
    assert filecmp.cmp(MIXED_910A, SHARED / "ranktables" / MIXED_910A.name, shallow=False)
    assert len(list(ATLAS.glob("*.txt"))) == 7


def _assert_atlas01(inv):
    assert sorted(inv.devices) == list(range(8))
    for i in range(8):
        d = inv.devices[i]
        assert d.ip.value == f"6.0.2.{2 * i + 1}"
        assert d.gateway.value == f"6.0.2.{2 * i}"
        assert d.netdetect.value == f"6.0.2.{2 * i}"
        assert d.link.value == "UP"
        assert d.net_health.value == "Success"
        assert d.gateway_iface.value == f"eth{i}"
        assert d.netmask is None          # the capture grepped only ipaddr lines
    ifnames = [inv.devices[i].lldp_ifname.value for i in range(8)]
    assert ifnames == ["400GE1/4/1:1", "400GE1/4/1:2", "400GE1/4/2:1", "400GE1/4/2:2",
                       "400GE1/4/3:1", "400GE1/4/3:2", "400GE1/4/4:1", "400GE1/4/4:2"]


def test_acceptance_atlas01_copied_dir():
    inv, diags = load_inventory_dir(ATLAS)
    assert diags == []
    _assert_atlas01(inv)
    assert set(inv.files.values()) == {("hccn_tool",)}
    assert inv.device_ips() == {i: f"6.0.2.{2 * i + 1}" for i in range(8)}


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared corpus not beside the clone")
def test_acceptance_atlas01_shared_dir_with_its_readme():
    inv, diags = load_inventory_dir(SHARED / "inventory" / "a2-atlas-01")
    assert diags == []                    # README.md is skipped silently
    _assert_atlas01(inv)
    assert not any(f.endswith("README.md") for f in inv.files)


def test_atlas01_spans_and_sources():
    inv, _ = load_inventory_dir(ATLAS)
    ip3 = inv.devices[3].ip
    assert ip3.span == Span(str(ATLAS / "ip.txt"), 4, 8, 4, 15)
    assert ip3.source == "hccn_tool -i 3 -ip -g (ip.txt:4)"
    gw5 = inv.devices[5].gateway
    assert (gw5.span.line, gw5.span.column, gw5.span.end_column) == (6, 17, 25)
    assert gw5.source == "hccn_tool -i 5 -gateway -g (gateway.txt:6)"
    assert (inv.devices[5].gateway_iface.span.line, inv.devices[5].gateway_iface.span.column) == (6, 33)
    lk = inv.devices[7].link
    assert (lk.span.line, lk.span.column) == (8, 14)
    nh = inv.devices[0].net_health
    assert (nh.span.line, nh.span.column, nh.span.end_column) == (1, 20, 27)
    nd = inv.devices[2].netdetect
    assert (nd.span.line, nd.span.column) == (3, 20)
    lldp = inv.devices[1].lldp_ifname     # tab-indented line: the tab is column 1
    assert (lldp.span.line, lldp.span.column, lldp.span.end_column) == (2, 10, 22)
    assert lldp.source == "hccn_tool -i 1 -lldp -g (lldp_ifname.txt:2)"


def test_atlas01_ping():
    inv, _ = load_inventory_dir(ATLAS)
    assert [len(inv.devices[i].ping) for i in range(8)] == [1, 0, 0, 0, 0, 0, 0, 0]
    p = inv.devices[0].ping[0]
    assert p.device_id == 0
    assert p.target.value == "6.0.2.1"
    assert (p.target.span.line, p.target.span.column) == (1, 15)
    assert [(r.seq, r.time_ms) for r in p.replies] == [(0, 0.042), (1, 0.012), (2, 0.009)]
    assert [r.span.line for r in p.replies] == [2, 3, 4]
    assert (p.transmitted, p.received, p.loss_percent) == (3, 3, 0.0)
    assert p.summary_span.line == 5
    assert p.ok


def test_atlas01_loop_files_are_positional():
    out, diags = load_hccn_tool(ATLAS / "link.txt")
    assert diags == []
    assert out.positional
    assert out.device_order == list(range(8))
    gw, _ = load_hccn_tool(ATLAS / "gateway.txt")
    assert not gw.positional             # every line names its device (Iface:ethN)


def test_910a_mixed_capture_hccn_tool_sections():
    out, diags = load_hccn_tool(MIXED_910A)
    assert out.get(0, "net_health").value == "Socket failed"
    assert (out.get(0, "net_health").span.line, out.get(0, "net_health").span.column) == (33, 20)
    assert out.get(0, "ip").value == "192.161.200.10"
    assert out.get(0, "ip").span.line == 143
    assert out.get(0, "netmask").value == "255.255.255.0"
    assert out.get(0, "prefix_len").value == 24
    assert out.get(1, "ip").value == "192.161.201.10"
    assert out.get(1, "ip").source.startswith("hccn_tool -i 1 -ip -g (")
    assert out.get(2, "ip") is None
    assert out.empty == {2: {"ip"}}
    # -stat, -link_stat, -fec, -optical, npu-smi, lspci sections are skipped without noise
    assert where(diags) == [("RTC489", "warning", 152, 1)]
    assert "hccn_tool -i 2 -ip -g" in diags[0].message and diags[0].hint


def test_910a_mixed_capture_chip_map():
    cmap, diags = load_npu_smi_chip_map(MIXED_910A)
    assert diags == []
    assert [(e.npu_id, e.chip_id, e.logic_id, e.name) for e in cmap.entries] == \
        [(i, 0, i, "Ascend 910A") for i in range(8)]
    assert (cmap.entries[0].span.line, cmap.entries[0].span.column) == (5, 2)
    assert cmap.lines == range(4, 13)      # header line 4, rows 5-12


def test_910a_mixed_capture_through_loader(tmp_path):
    shutil.copy(MIXED_910A, tmp_path / MIXED_910A.name)
    inv, diags = load_inventory_dir(tmp_path)
    assert list(inv.files.values()) == [("npu_smi_chips", "npu_smi_board", "hccn_tool")]
    assert where(diags) == [("RTC489", "warning", 152, 1)]
    assert [(b.npu_id, b.chip_id, b.chip_name) for b in inv.board.boards] == [(0, 0, "910A"), (0, None, None)]
    assert sorted(inv.devices) == [0, 1, 2]
    assert inv.devices[2].ip is None
    assert inv.devices[0].net_health.value == "Socket failed"
    assert len(inv.chips.accelerators) == 8
    assert inv.topo is None and inv.npu_info is None


# ----------------------------------------------------------------------------------------------
# hccn.conf
# ----------------------------------------------------------------------------------------------

def test_hccn_conf_sample():
    conf, diags = load_hccn_conf(HAND / "hccn.conf")
    assert diags == []
    assert sorted(conf.devices) == list(range(8))
    d3 = conf.devices[3]
    assert d3["address"].value == "6.0.2.7"
    assert d3["netmask"].value == "255.255.255.254"
    assert d3["prefix_len"].value == 31
    assert d3["gateway"].value == "6.0.2.6"
    assert d3["netdetect"].value == "6.0.2.6"
    assert d3["send_arp_status"].value == 1
    assert d3["tls_enable"].value == 0
    assert d3["address"].span == Span(str(HAND / "hccn.conf"), 21, 11, 21, 18)
    assert d3["address"].source == "hccn.conf address_3 (hccn.conf:21)"
    assert len(conf.entries) == 48


def test_hccn_conf_tolerates_blank_comment_crlf_and_spaces(tmp_path):
    text = "# comment\n\n   # indented comment\n  address_0 = 10.0.0.1  \nnetmask_0=255.255.0.0\n"
    conf, diags = load_hccn_conf(write(tmp_path, "hccn.conf", text, "\r\n"))
    assert diags == []
    assert conf.get(0, "address").value == "10.0.0.1"
    assert (conf.get(0, "address").span.line, conf.get(0, "address").span.column,
            conf.get(0, "address").span.end_column) == (4, 15, 23)
    assert conf.get(0, "prefix_len").value == 16


def test_hccn_conf_keeps_unknown_keys():
    conf, diags = parse_hccn_conf("address_0=1.1.1.1\nvnic_mode_0=on\nlog_level=3\n", "/etc/hccn.conf")
    assert diags == []
    assert conf.get(0, "vnic_mode").value == "on"
    assert conf.globals["log_level"].value == "3"
    assert conf.globals["log_level"].span == Span("/etc/hccn.conf", 3, 11, 3, 12)


def test_hccn_conf_malformed_lines():
    text = ("address_0=1.1.1.1\n"
            "address_1 1.1.1.3\n"          # no '='
            "=1.1.1.5\n"                   # empty key
            "address=1.1.1.7\n"            # known key without device
            "   gateway1=1.1.1.0\n"        # known key, digits without '_'
            "addr-ess_2=1.1.1.9\n")        # bad characters
    conf, diags = parse_hccn_conf(text, "hccn.conf")
    assert where(diags) == [("RTC481", "error", 2, 1), ("RTC481", "error", 3, 1),
                            ("RTC481", "error", 4, 1), ("RTC481", "error", 5, 4),
                            ("RTC481", "error", 6, 1)]
    assert diags[3].hint.endswith("gateway_1=1.1.1.0")
    assert diags[2].hint.endswith("address_0=1.1.1.7")
    assert list(conf.devices) == [0]
    for d in diags:
        assert d.hint and d.span.file == "hccn.conf"


def test_hccn_conf_duplicate_key_warns_and_last_wins():
    text = "address_0=1.1.1.1\nnetmask_0=255.255.255.0\naddress_0=1.1.1.2\n"
    conf, diags = parse_hccn_conf(text, "hccn.conf")
    assert where(diags) == [("RTC482", "warning", 3, 1)]
    assert diags[0].related[0].span.line == 1
    assert conf.get(0, "address").value == "1.1.1.2"
    assert diags[0].subject == "device 0"


def test_hccn_conf_bad_values():
    text = ("address_0=192.168.1.300\n"
            "netmask_0=255.0.255.0\n"
            "gateway_0=192.168.001.1\n"
            "tls_enable_0=yes\n"
            "address_1=\n"
            "address_2=fd00::2\n")
    conf, diags = parse_hccn_conf(text, "hccn.conf")
    assert where(diags) == [("RTC483", "error", 1, 11), ("RTC483", "error", 2, 11),
                            ("RTC483", "error", 3, 11), ("RTC483", "error", 4, 14),
                            ("RTC489", "warning", 5, 11)]
    assert "not a contiguous netmask" in diags[1].message
    assert conf.get(0, "address") is None
    assert conf.get(2, "address").value == "fd00::2"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.ip_addresses(v=4), st.integers(0, 32)), min_size=1, max_size=16),
       st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["", " ", "\t"]))
def test_hccn_conf_roundtrip_property(entries, newline, pad):
    lines = []
    for i, (addr, plen) in enumerate(entries):
        mask = str(ipaddress.IPv4Network(f"0.0.0.0/{plen}").netmask)
        lines.append(f"{pad}address_{i}{pad}={pad}{addr}")
        lines.append(f"netmask_{i}={mask}")
    conf, diags = parse_hccn_conf(newline.join(lines) + newline, "h.conf")
    assert diags == []
    for i, (addr, plen) in enumerate(entries):
        f = conf.get(i, "address")
        assert f.value == str(addr)
        assert f.span.line == 2 * i + 1
        assert f.span.column == len(f"{pad}address_{i}{pad}={pad}") + 1
        assert conf.get(i, "prefix_len").value == plen


# ----------------------------------------------------------------------------------------------
# hccn_tool
# ----------------------------------------------------------------------------------------------

def test_full_ip_loop_with_empty_ipaddr_device():
    text = ("ipaddr:6.0.2.1\nnetmask:255.255.255.254\n"
            "ipaddr:6.0.2.3\nnetmask:255.255.255.254\n"
            "ipaddr:\nnetmask:\n"
            "ipaddr:6.0.2.7\nnetmask:255.255.255.254\n")
    out, diags = parse_hccn_tool(text, "ip.txt")
    assert out.positional
    assert [out.get(i, "ip") and out.get(i, "ip").value for i in range(4)] == \
        ["6.0.2.1", "6.0.2.3", None, "6.0.2.7"]
    assert out.get(3, "netmask").span.line == 8
    assert out.get(3, "prefix_len").value == 31
    assert where(diags) == [("RTC489", "warning", 5, 8), ("RTC489", "warning", 6, 9)]
    assert diags[0].subject == "device 2"
    assert "hccn_tool -i 2 -ip -s address" in diags[0].hint
    assert out.empty == {2: {"ip", "netmask"}}


def test_ip_loop_with_and_without_netmask_lines():
    text = "ipaddr:10.0.0.1\nnetmask:255.255.255.0\nipaddr:10.0.1.1\nipaddr:10.0.2.1\nnetmask:255.255.0.0\n"
    out, diags = parse_hccn_tool(text, "ip.txt")
    assert diags == []
    assert out.get(1, "netmask") is None
    assert out.get(2, "ip").value == "10.0.2.1"
    assert out.get(2, "netmask").value == "255.255.0.0"
    assert out.get(2, "netmask").span.line == 5


def test_crlf_and_extra_whitespace_variant_of_real_capture(tmp_path):
    real = (ATLAS / "ip.txt").read_text().splitlines()
    text = "\r\n".join("  ipaddr :   " + l.split(":", 1)[1] + "   " for l in real) + "\r\n\r\n"
    out, diags = load_hccn_tool(write(tmp_path, "ip.txt", text))
    assert diags == []
    assert [out.get(i, "ip").value for i in range(8)] == [f"6.0.2.{2 * i + 1}" for i in range(8)]
    assert (out.get(4, "ip").span.line, out.get(4, "ip").span.column, out.get(4, "ip").span.end_column) \
        == (5, 14, 21)


def test_lone_cr_line_endings(tmp_path):
    out, diags = load_hccn_tool(write(tmp_path, "link.txt", "link status: UP\nlink status: DOWN\n", "\r"))
    assert diags == []
    assert out.get(1, "link").value == "DOWN"
    assert out.get(1, "link").span.line == 2


def test_per_device_files_by_name_and_by_caller(tmp_path):
    ip = write(tmp_path, "ip_3.txt", "ipaddr:6.0.2.7\nnetmask:255.255.255.254\n")
    out, diags = load_hccn_tool(ip)
    assert diags == []
    assert list(out.facts) == [3]
    assert out.get(3, "ip").source == "hccn_tool -i 3 -ip -g (ip_3.txt:1)"
    assert not out.positional
    link = write(tmp_path, "dev5_link.txt", "link status: DOWN\n")
    out, _ = load_hccn_tool(link)
    assert out.get(5, "link").value == "DOWN"
    out, _ = parse_hccn_tool("net health status: Fault\n", "health.txt", device=6)
    assert out.get(6, "net_health").value == "Fault"


@pytest.mark.parametrize("name,device", [
    ("ip_3.txt", 3), ("dev3_link.txt", 3), ("link-npu12.log", 12), ("7_gateway.txt", 7),
    ("net_health_device4.txt", 4), ("ping_dev0_self.txt", 0), ("/x/y/ip_15.out", 15),
    ("ip.txt", None), ("ping_6.0.2.1.txt", None), ("npu_smi_910b.txt", None), ("ipv6.txt", None),
    ("npu_smi_topo.txt", None), ("gateway.txt", None),
])
def test_device_from_filename(name, device):
    assert device_from_filename(name) == device


def test_second_value_for_a_per_device_file_warns(tmp_path):
    out, diags = load_hccn_tool(write(tmp_path, "ip_1.txt", "ipaddr:1.1.1.1\nipaddr:1.1.1.2\n"))
    assert where(diags) == [("RTC485", "warning", 2, 8)]
    assert out.get(1, "ip").value == "1.1.1.2"
    assert diags[0].related[0].span.line == 1


def test_loop_with_printed_headers_down_link_fault_health_and_silent_device():
    text = ("== device 0 ==\nlink status: UP\nnet health status: Success\n"
            "== device 1 ==\nlink status: DOWN\nnet health status: Fault\n"
            "== device 2 ==\n"
            "== device 3 ==\nlink status:  up \nnet health status:   Receive   timeout\n")
    out, diags = parse_hccn_tool(text, "status.txt")
    assert not out.positional
    assert out.get(1, "link").value == "DOWN"
    assert out.get(1, "net_health").value == "Fault"
    assert out.get(3, "link").value == "UP"
    assert out.get(3, "net_health").value == "Receive timeout"
    assert out.get(2, "link") is None
    assert where(diags) == [("RTC489", "warning", 7, 1)]
    assert out.device_order == [0, 1, 2, 3]


@pytest.mark.parametrize("header", ["device 5", "Device: 5", "NPU 5", "[5]", "5", "---- 5 ----", "dev5:",
                                    "# device 5", "i=5"])
def test_loop_header_styles(header):
    out, diags = parse_hccn_tool(f"{header}\nipaddr:1.2.3.4\n", "x.txt")
    assert diags == []
    assert list(out.facts) == [5]


def test_command_echo_headers():
    text = ("[root@atlas-01 ~]# hccn_tool -i 4 -link -g\nlink status: UP\n"
            "$ /usr/local/Ascend/driver/tools/hccn_tool -i 6 -link -g\nlink status: DOWN\n"
            "+ hccn_tool -i 7 -net_health -g\nnet health status: Unreachable\n"
            "$ echo done\ndone\n")
    out, diags = parse_hccn_tool(text, "cap.txt")
    assert diags == []
    assert out.get(4, "link").value == "UP"
    assert out.get(6, "link").value == "DOWN"
    assert out.get(7, "net_health").value == "Unreachable"
    assert sorted(out.facts) == [4, 6, 7]


def test_for_loop_header_sets_first_device():
    text = "for i in {4..7}; do hccn_tool -i $i -link -g; done\n" + "link status: UP\n" * 4
    out, diags = parse_hccn_tool(text, "link.txt")
    assert diags == []
    assert sorted(out.facts) == [4, 5, 6, 7]
    assert out.positional


def test_gateway_iface_decides_device_and_reveals_shift():
    text = "default gateway:6.0.2.0, Iface:eth0\ndefault gateway:6.0.2.4, Iface:eth2\n" \
           "default gateway:6.0.2.6, Iface:eth3\n"
    out, diags = parse_hccn_tool(text, "gateway.txt")
    assert sorted(out.facts) == [0, 2, 3]
    assert out.get(2, "gateway").value == "6.0.2.4"
    assert where(diags) == [("RTC485", "warning", 2, 17)]
    assert "printed nothing" in diags[0].message


def test_gateway_iface_disagreeing_with_file_name(tmp_path):
    out, diags = load_hccn_tool(write(tmp_path, "gateway_3.txt", "default gateway:6.0.2.10, Iface:eth5\n"))
    assert where(diags) == [("RTC485", "warning", 1, 17)]
    assert out.get(5, "gateway").value == "6.0.2.10"


def test_gateway_iface_disagreeing_with_command_header():
    out, diags = parse_hccn_tool("hccn_tool -i 3 -gateway -g\ndefault gateway:6.0.2.10, Iface:eth5\n", "g.txt")
    assert where(diags) == [("RTC485", "warning", 2, 17)]
    assert out.get(3, "gateway").value == "6.0.2.10"
    assert diags[0].related[0].span.line == 1


def test_bad_and_unknown_values():
    text = ("ipaddr:6.0.2.300\n"
            "link status: FLAPPING\n"
            "net health status: Exploded\n"
            "netdetect address: nowhere\n"
            "prefix_length:200\n")
    out, diags = parse_hccn_tool(text, "mix.txt", device=0)
    assert where(diags) == [("RTC483", "error", 1, 8), ("RTC483", "warning", 2, 14),
                            ("RTC483", "warning", 3, 20), ("RTC483", "error", 4, 20),
                            ("RTC483", "error", 5, 15)]
    assert out.get(0, "ip") is None
    assert out.get(0, "link").value == "FLAPPING"
    assert out.get(0, "net_health").value == "Exploded"


def test_unrecognised_lines_warn_and_are_capped():
    text = "ipaddr:1.1.1.1\nhello world\n" + "".join(f"noise {i}\n" for i in range(12))
    out, diags = parse_hccn_tool(text, "ip.txt")
    assert out.get(0, "ip").value == "1.1.1.1"
    assert where(diags)[:2] == [("RTC484", "warning", 2, 1), ("RTC484", "warning", 3, 1)]
    assert len(diags) == 11
    assert diags[-1].severity is Severity.NOTE and "3 more" in diags[-1].message


def test_ipv6_output():
    text = "ipv6_address:FD00:0:0::0A\nprefix_length:64\nipv6_address:fd00::b\nprefix_length:64\n"
    out, diags = parse_hccn_tool(text, "ipv6.txt")
    assert diags == []
    assert out.get(0, "ipv6").value == "fd00::a"
    assert out.get(1, "ipv6").value == "fd00::b"
    assert out.get(1, "ipv6_prefix_len").value == 64
    assert out.get(0, "ipv6").source == "hccn_tool -i 0 -ip -inet6 -g (ipv6.txt:1)"


def test_full_lldp_dump_two_devices():
    out, diags = load_hccn_tool(HAND / "lldp_full.txt")
    assert diags == []
    assert sorted(out.facts) == [0, 1]
    assert out.get(0, "lldp_ifname").value == "400GE1/4/1:1"
    assert out.get(1, "lldp_ifname").value == "400GE1/4/1:2"
    assert (out.get(1, "lldp_ifname").span.line, out.get(1, "lldp_ifname").span.column) == (25, 10)
    assert out.get(0, "lldp_system_name").value == "LEAF-A01"
    assert out.get(0, "lldp_chassis_id").value == "3c:c7:86:2d:3a:00"
    assert out.get(0, "lldp_chassis_id").span.column == 7


def test_ping_with_loss():
    text = ("device 4 PING 6.0.2.1\nrecv seq=0,time=0.050000ms\n"
            "3 packets transmitted, 1 received, 66.67% packet loss\n"
            "device 4 PING 6.0.2.3\n3 packets transmitted, 0 received, 100.00% packet loss\n")
    out, diags = parse_hccn_tool(text, "ping.txt")
    assert diags == []
    assert [(p.device_id, p.target.value, p.received, p.loss_percent, p.ok) for p in out.pings] == \
        [(4, "6.0.2.1", 1, 66.67, False), (4, "6.0.2.3", 0, 100.0, False)]


def test_empty_file_and_silent_command(tmp_path):
    out, diags = load_hccn_tool(write(tmp_path, "ip_2.txt", "\n\n"))
    assert where(diags) == [("RTC489", "warning", 1, 1)]
    assert diags[0].subject == "device 2"
    out, diags = parse_hccn_tool("hccn_tool -i 5 -link -g\nhccn_tool -i 6 -link -g\nlink status: UP\n", "c.txt")
    assert where(diags) == [("RTC489", "warning", 1, 1)]
    assert out.empty == {5: {"link"}}


def test_unreadable_inputs(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"ipaddr:\x00\x01\x02")
    out, diags = load_hccn_tool(tmp_path / "bin.txt")
    assert where(diags) == [("RTC480", "error", 1, 1)]
    out, diags = load_hccn_tool(tmp_path / "missing.txt")
    assert where(diags) == [("RTC480", "error", 1, 1)]
    (tmp_path / "link_1.txt").write_bytes("link status: DOWN\r\n".encode("utf-16"))
    out, diags = load_hccn_tool(tmp_path / "link_1.txt")
    assert diags == [] and out.get(1, "link").value == "DOWN"
    (tmp_path / "ip_0.txt").write_bytes(b"ipaddr:1.1.1.1\nxx \xff\n")
    out, diags = load_hccn_tool(tmp_path / "ip_0.txt")
    assert where(diags)[0] == ("RTC480", "warning", 2, 4)
    assert out.get(0, "ip").value == "1.1.1.1"


# ----------------------------------------------------------------------------------------------
# npu-smi
# ----------------------------------------------------------------------------------------------

def test_npu_smi_info_910b2():
    info, diags = load_npu_smi_info(HAND / "npu_smi_info_910b2.txt")
    assert diags == []
    assert info.version == "23.0.6"
    assert info.npu_ids == list(range(8))
    assert [c.name.value for c in info.chips] == ["910B2"] * 8
    assert [c.health.value for c in info.chips] == ["OK"] * 5 + ["Warning"] + ["OK"] * 2
    assert [c.chip_id for c in info.chips] == [0] * 8
    assert info.chips[1].bus_id.value == "0000:01:00.0"
    c0 = info.chips[0]
    assert (c0.name.span.line, c0.name.span.column, c0.name.span.end_column) == (7, 9, 14)
    assert (c0.health.span.line, c0.health.span.column) == (7, 31)
    assert (c0.bus_id.span.line, c0.bus_id.span.column) == (8, 31)
    assert c0.phy_id is None


def test_npu_smi_info_a3_two_chips_per_npu():
    info, diags = load_npu_smi_info(HAND / "npu_smi_info_a3.txt")
    assert diags == []
    assert len(info.chips) == 16
    assert [(c.npu_id, c.chip_id, c.phy_id) for c in info.chips[:4]] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert [c.phy_id for c in info.chips] == list(range(16))
    assert info.chips[15].name.value == "Ascend910"


def test_npu_smi_info_missing_chip_row_and_missing_table():
    text = (HAND / "npu_smi_info_910b2.txt").read_text().splitlines()
    del text[7]                                           # chip row of NPU 0
    info, diags = parse_npu_smi_info("\n".join(text), "i.txt")
    assert where(diags) == [("RTC486", "warning", 7, 3)]
    assert info.chips[0].chip_id is None and info.chips[1].chip_id == 0
    none, diags = parse_npu_smi_info("nothing here\n", "i.txt")
    assert none is None and where(diags) == [("RTC486", "error", 1, 1)]


def test_npu_smi_topo_910b_full_mesh():
    topo, diags = load_npu_smi_topo(HAND / "npu_smi_topo_910b.txt")
    assert diags == []
    assert topo.ids == list(range(8))
    assert all(topo.link(a, b) == ("X" if a == b else "HCCS") for a in range(8) for b in range(8))
    assert topo.cpu_affinity[0] == "144-167" and topo.cpu_affinity[7] == "48-71"
    f = topo.links[(2, 5)]
    assert (f.span.line, f.span.column, f.span.end_column) == (4, 67, 71)
    assert f.source.startswith("npu-smi info -t topo (npu_smi_topo_910b.txt:4)")
    assert topo.lines == range(1, 10)      # header line 1, rows 2-9


def test_npu_smi_topo_910a_two_hccs_groups():
    topo, diags = load_npu_smi_topo(HAND / "npu_smi_topo_910a.txt")
    assert diags == []
    assert topo.peers(0, "HCCS") == [1, 2, 3]
    assert topo.peers(5, "HCCS") == [4, 6, 7]
    assert topo.link(0, 4) == "SYS"
    assert topo.cpu_affinity[4] == "24-47"


def test_npu_smi_topo_a3_phy_id_labels():
    topo, diags = load_npu_smi_topo(HAND / "npu_smi_topo_a3.txt")
    assert diags == []
    assert topo.labels[0] == "Phy-ID0" and topo.ids == list(range(16))
    assert topo.link(0, 1) == "SIO" and topo.link(14, 15) == "SIO"
    assert topo.link(1, 2) == "HCCS_SW"
    assert topo.peers(6, "SIO") == [7]
    assert topo.cpu_affinity[15] == "80-119"


def test_npu_smi_topo_problems():
    text = ("      NPU0   NPU1   NPU2   CPU Affinity\n"
            "NPU0   X      HCCS   FOO    0-23\n"
            "NPU1   HCCS   HCCS   SYS    0-23\n"
            "NPU2   SYS    PIX\n")
    topo, diags = parse_npu_smi_topo(text, "t.txt")
    assert where(diags) == [("RTC486", "warning", 2, 22), ("RTC486", "error", 4, 1),
                            ("RTC486", "warning", 3, 15)]
    assert "'FOO'" in diags[0].message
    assert "2 entries for 3 columns" in diags[1].message
    assert "not 'X'" in diags[2].message
    assert topo.link(0, 2) == "FOO"
    assert topo.link(2, 0) is None
    square, diags = parse_npu_smi_topo(text.rsplit("NPU2", 1)[0], "t.txt")
    assert where(diags) == [("RTC486", "warning", 2, 22), ("RTC486", "warning", 1, 1),
                            ("RTC486", "warning", 3, 15)]
    assert "rows [0, 1] but columns [0, 1, 2]" in diags[1].message
    none, diags = parse_npu_smi_topo("", "t.txt")
    assert none is None and where(diags) == [("RTC486", "error", 1, 1)]


def test_npu_smi_topo_asymmetric():
    text = "      NPU0   NPU1   CPU Affinity\nNPU0   X      HCCS   0-23\nNPU1   SYS    X      0-23\n"
    topo, diags = parse_npu_smi_topo(text, "t.txt")
    assert where(diags) == [("RTC486", "warning", 2, 15)]
    assert diags[0].related[0].span.line == 3


def test_npu_smi_chip_map_910b3_with_mcu():
    cmap, diags = load_npu_smi_chip_map(HAND / "npu_smi_m_910b3.txt")
    assert diags == []
    assert len(cmap.entries) == 16
    assert [(e.npu_id, e.chip_id, e.logic_id, e.name) for e in cmap.entries[:2]] == \
        [(0, 0, 0, "Ascend 910B3"), (0, 1, None, "Mcu")]
    assert sorted(cmap.by_logic_id()) == list(range(8))
    none, diags = parse_npu_smi_chip_map("x\n", "m.txt")
    assert none is None and where(diags) == [("RTC486", "error", 1, 1)]


# ----------------------------------------------------------------------------------------------
# merged inventory
# ----------------------------------------------------------------------------------------------

def _atlas_with(tmp_path, extra: dict[str, str]) -> Path:
    for f in ATLAS.glob("*.txt"):
        shutil.copy(f, tmp_path / f.name)
    for name, text in extra.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_conflict_hccn_conf_vs_hccn_tool(tmp_path):
    conf = (HAND / "hccn.conf").read_text().replace("address_3=6.0.2.7", "address_3=6.0.2.9")
    d = _atlas_with(tmp_path, {"hccn.conf": conf})
    inv, diags = load_inventory_dir(d)
    assert where(diags) == [("RTC487", "error", 21, 11)]
    e = diags[0]
    assert e.span.file == str(d / "hccn.conf")
    assert "'6.0.2.9'" in e.message and "'6.0.2.7'" in e.message
    assert "hccn.conf address_3 (hccn.conf:21)" in e.message
    assert "hccn_tool -i 3 -ip -g (ip.txt:4)" in e.message
    assert e.related[0].span == Span(str(d / "ip.txt"), 4, 8, 4, 15)
    assert e.subject == "device 3" and e.hint
    assert inv.devices[3].ip.value == "6.0.2.7"          # the running state wins


def test_agreeing_hccn_conf_adds_netmask_and_extra_keys(tmp_path):
    d = _atlas_with(tmp_path, {"hccn.conf": (HAND / "hccn.conf").read_text()})
    inv, diags = load_inventory_dir(d)
    assert diags == []
    _assert_atlas01(type(inv)(devices={k: _drop_netmask(v) for k, v in inv.devices.items()}))
    assert inv.devices[6].netmask.value == "255.255.255.254"
    assert inv.devices[6].prefix_len.value == 31
    assert inv.devices[6].extra["send_arp_status"].value == 1
    assert inv.devices[6].ip.source == "hccn_tool -i 6 -ip -g (ip.txt:7)"
    assert inv.conf is not None and len(inv.conf.entries) == 48


def _drop_netmask(dev):
    import dataclasses
    return dataclasses.replace(dev, netmask=None)


def test_conflict_between_two_hccn_tool_captures(tmp_path):
    d = _atlas_with(tmp_path, {"link_dev2.txt": "link status: DOWN\n"})
    inv, diags = load_inventory_dir(d)
    assert where(diags) == [("RTC487", "error", 1, 14)]
    assert diags[0].span.file == str(d / "link_dev2.txt")
    assert inv.devices[2].link.value == "UP"


def test_positional_loop_files_with_different_counts_warn(tmp_path):
    d = _atlas_with(tmp_path, {"link.txt": "link status: UP\n" * 7})
    inv, diags = load_inventory_dir(d)
    assert where(diags) == [("RTC485", "warning", 1, 1)]
    assert diags[0].span.file == str(d / "link.txt")
    assert "7 devices" in diags[0].message and "8" in diags[0].message
    assert inv.devices[7].link is None


def test_hand_made_server_dir(tmp_path):
    for name in ("npu_smi_info_910b2.txt", "npu_smi_topo_910b.txt", "npu_smi_m_910b3.txt", "hccn.conf"):
        shutil.copy(HAND / name, tmp_path / name)
    write(tmp_path, "ip_0.txt", "ipaddr:6.0.2.1\nnetmask:255.255.255.254\n", "\r\n")
    write(tmp_path, "notes.txt", "bought in 2024\n")
    write(tmp_path, "README.md", "# docs\n")
    inv, diags = load_inventory_dir(tmp_path)
    assert where(diags) == [("RTC488", "warning", 1, 1)]
    assert diags[0].span.file.endswith("notes.txt")
    assert inv.files[str(tmp_path / "npu_smi_topo_910b.txt")] == ("npu_smi_topo",)
    assert inv.files[str(tmp_path / "hccn.conf")] == ("hccn_conf",)
    assert inv.topo.link(3, 4) == "HCCS"
    assert len(inv.chips.accelerators) == 8
    assert inv.npu_info.chips[5].health.value == "Warning"
    assert sorted(inv.devices) == list(range(8))
    assert inv.devices[0].ip.source == "hccn_tool -i 0 -ip -g (ip_0.txt:1)"
    assert inv.devices[1].ip.source == "hccn.conf address_1 (hccn.conf:9)"


def test_content_sniffing_with_unhelpful_names(tmp_path):
    shutil.copy(HAND / "npu_smi_topo_a3.txt", tmp_path / "capture1.log")
    write(tmp_path, "a", "link status: UP\nlink status: DOWN\n")
    write(tmp_path, "b", "address_0=1.1.1.1\naddress_1=1.1.1.3\n")
    inv, diags = load_inventory_dir(tmp_path)
    assert diags == []
    assert inv.topo.link(0, 1) == "SIO"
    assert inv.devices[1].link.value == "DOWN"
    assert inv.devices[1].ip.value == "1.1.1.3"


def test_npu_smi_table_and_hccn_tool_lines_in_one_headerless_file(tmp_path):
    text = (HAND / "npu_smi_topo_910b.txt").read_text().split("\nLegend")[0] + "\n\nipaddr:6.0.2.1\n"
    p = write(tmp_path, "mixed.txt", text)
    assert detect_kinds(str(p), text) == ["npu_smi_topo", "hccn_tool"]
    inv, diags = load_inventory_files([p])
    assert diags == []
    assert inv.devices[0].ip.value == "6.0.2.1"
    assert inv.topo.link(0, 1) == "HCCS"


@pytest.mark.parametrize("name,kinds", [
    ("ip_2.txt", ["hccn_tool"]), ("hccn.conf", ["hccn_conf"]), ("npu_smi_topo.txt", ["npu_smi_topo"]),
    ("npu_smi_info.txt", ["npu_smi_info"]), ("npu_smi_m.txt", ["npu_smi_chips"]), ("random.txt", []),
])
def test_detect_kinds_of_empty_files_by_name(name, kinds):
    assert detect_kinds(name, "") == kinds


def test_empty_named_capture_reports_missing_device(tmp_path):
    write(tmp_path, "ip_2.txt", "")
    inv, diags = load_inventory_dir(tmp_path)
    assert where(diags) == [("RTC489", "warning", 1, 1)]
    assert 2 in inv.devices and inv.devices[2].ip is None


def test_missing_directory():
    inv, diags = load_inventory_dir("/nonexistent/inventory")
    assert where(diags) == [("RTC480", "error", 1, 1)]
    assert inv.devices == {}


def test_two_different_topo_captures_conflict(tmp_path):
    shutil.copy(HAND / "npu_smi_topo_910a.txt", tmp_path / "npu_smi_topo_a.txt")
    shutil.copy(HAND / "npu_smi_topo_910b.txt", tmp_path / "npu_smi_topo_b.txt")
    inv, diags = load_inventory_dir(tmp_path)
    assert where(diags) == [("RTC487", "error", 1, 1)]
    assert inv.topo.link(0, 4) == "SYS"                  # the first by name is kept


def test_every_rule_id_is_documented_and_in_range():
    import rtc.inventory as inv_pkg
    assert sorted(r.code for r in RULES) == [f"RTC48{i}" for i in range(10)]
    for r in RULES:
        assert r.code in inv_pkg.__doc__


def test_all_diagnostics_have_span_hint_and_subject_where_a_device_is_known(tmp_path):
    """Every finding says where (file:line:col) and how to fix it (hint)."""
    bad = [
        ("hccn.conf", "address_0\n=1\naddress=1.1.1.1\naddress_0=x\naddress_0=1.1.1.1\naddress_0=1.1.1.2\n"
                      "netmask_1=\n"),
        ("ip.txt", "ipaddr:\nipaddr:300.1.1.1\nnoise\n" + "x\n" * 12),
        ("gateway.txt", "default gateway:1.1.1.1, Iface:eth3\ndefault gateway:zz, Iface:eth3\n"),
        ("h.txt", "== device 1 ==\n== device 2 ==\nlink status: SIDEWAYS\nnet health status: meh\n"),
        ("npu_smi_topo.txt", "  NPU0  NPU1  CPU Affinity\nNPU0  X  QQQ  0\nNPU1  SYS\n"),
        ("npu_smi_info.txt", "| NPU   Name | Health |\n| 0  910B2 | OK |\n"),
        ("npu_smi_m.txt", "NPU ID   Chip ID   Chip Logic ID   Chip Name\n0   x   0   Ascend 910B\n"),
        ("ip_4.txt", ""),
        ("link.txt", "link status: UP\n"),
        ("zzz.txt", "hello\n"),
    ]
    for name, text in bad:
        write(tmp_path, name, text)
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01")
    inv, diags = load_inventory_dir(tmp_path)
    codes = {d.code for d in diags}
    assert codes == {"RTC480", "RTC481", "RTC482", "RTC483", "RTC484", "RTC485", "RTC486",
                     "RTC488", "RTC489"}
    for d in diags:
        assert d.span is not None and d.span.line >= 1 and d.span.column >= 1, d
        assert d.hint, d
        assert len(d.message) > 30, d
        if d.code in ("RTC483", "RTC489") and d.span.file.endswith(".txt") and "device" in d.message:
            assert d.subject and d.subject.startswith("device "), d
