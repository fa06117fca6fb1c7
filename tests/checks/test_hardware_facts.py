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


# -- the links the plan needs, the captured topology, the HCCL link variables -------------

def _one_server(extra: str = "") -> str:
    text = CASE.read_text(encoding="utf-8")
    return text.replace("servers atlas-01, atlas-02\n  dp 2", "servers atlas-01\n  dp 1" + extra)


def test_link_down_with_roce_inside_the_server_is_an_error():
    result = compile_text(_one_server("\n  env HCCL_INTRA_ROCE_ENABLE = 1"), str(CASE))
    assert _severities(result, "RTC421") == [Severity.ERROR]


def test_link_down_on_a_prefill_job_whose_decode_runs_elsewhere_is_an_error():
    text = CASE.read_text(encoding="utf-8").replace(
        "job serve {\n  servers atlas-01, atlas-02\n  dp 2\n  tp 8\n}",
        "job p {\n  role prefill\n  servers atlas-01\n  tp 8\n  kv_connector mooncake\n}\n"
        "job d {\n  role decode\n  servers atlas-02\n  tp 8\n  kv_connector mooncake\n}")
    assert "role prefill" in text
    result = compile_text(text, str(CASE))
    assert Severity.ERROR in _severities(result, "RTC421")


def test_topo_islands_feed_the_cost_model():
    from rtc.cost.deployment import job_hardware
    from rtc.cost.links import PCIE_GEN4, Site, pair_class

    split = compile_file(str(CASES / "checks" / "RTC225-tp-without-hccs.rtc")).topology
    mesh = compile_file(str(CASES / "checks" / "pass-tp-inside-hccs.rtc")).topology
    hw_split = job_hardware(split, split.jobs[0])
    hw_mesh = job_hardware(mesh, mesh.jobs[0])
    assert hw_split.hccs_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert pair_class(hw_split, Site(0, 0), Site(0, 4)) == PCIE_GEN4
    assert pair_class(hw_split, Site(0, 0), Site(0, 3)) == "hccs-910b"
    assert pair_class(hw_mesh, Site(0, 0), Site(0, 4)) == "hccs-910b"


def test_topo_islands_of_the_handmade_captures():
    from rtc.inventory.npu_smi import load_npu_smi_topo

    inv = CASES.parent / "data" / "inventory" / "handmade"
    want = {"910a": [(0, 1, 2, 3), (4, 5, 6, 7)], "910b": [tuple(range(8))],
            "a3": [tuple(range(16))]}
    for name, islands in want.items():
        topo, _ = load_npu_smi_topo(inv / f"npu_smi_topo_{name}.txt")
        assert topo.hccs_islands() == islands, name


def test_tp_without_hccs_quotes_both_costs():
    result = compile_file(str(CASES / "checks" / "RTC225-tp-without-hccs.rtc"))
    (d,) = [d for d in result.diagnostics if d.code == "RTC225"]
    assert "islands 0..3, 4..7" in d.message and "pcie-gen4" in d.message
    slow, fast = [float(x) for x in __import__("re").findall(r"([0-9.]+) us", d.message)]
    assert slow > fast > 0


def test_intra_link_pairs_follow_hccl():
    from rtc.network.env import intra_link

    def link(pcie=None, roce=None):
        env = {k: v for k, v in (("HCCL_INTRA_PCIE_ENABLE", pcie),
                                 ("HCCL_INTRA_ROCE_ENABLE", roce)) if v is not None}
        got, problem = intra_link(env)
        return "refused" if problem else got

    assert [link(), link("1"), link("1", "0"), link("0", "0")] == ["pcie"] * 4
    assert [link("0", "1"), link(None, "1")] == ["roce", "roce"]
    assert [link("1", "1"), link("0"), link(None, "0")] == ["refused"] * 3


def test_every_known_hccl_variable_has_a_value_rule():
    from rtc.checks.socket_env import KNOWN_HCCL
    from rtc.network.env import ENV_VALUES, env_value_problem

    assert set(KNOWN_HCCL) <= set(ENV_VALUES), sorted(set(KNOWN_HCCL) - set(ENV_VALUES))
    for name, r in ENV_VALUES.items():
        assert r.meaning and r.default and r.source, name
    assert env_value_problem("HCCL_RDMA_TIMEOUT", "22", "Ascend910B") is not None
    assert env_value_problem("HCCL_RDMA_TIMEOUT", "22", "Ascend910") is None
    assert env_value_problem("HCCL_NPU_SOCKET_PORT_RANGE", "auto") is None
    assert env_value_problem("HCCL_OP_RETRY_ENABLE", "L1:1,L1:0") == "L1 is given twice"
    assert env_value_problem("HCCL_LOGIC_SUPERPOD_ID", "x" * 128) is not None


def test_explain_an_hccl_variable():
    from rtc.cli.rules_cmd import env_entry

    text = env_entry("HCCL_BUFFSIZE")
    for part in ("HCCL_BUFFSIZE", "unit: MB", "default: 200", "range: at least 1",
                 "source: hicann/hccl"):
        assert part in text, part
    assert env_entry("hccl_intra_roce_enable").startswith("HCCL_INTRA_ROCE_ENABLE")
    assert env_entry("NOT_A_VARIABLE") is None


def test_intra_link_messages_name_the_pair_and_agree_on_the_default():
    # fresh-user finding 15: RTC227 began "both are 1;" and its hint said "PCIe is the
    # default" while RTC228 said "HCCS is used by default" for the same A2 server
    (d227,) = [d for d in compile_file(str(CASES / "checks" / "RTC227-intra-link-env-refused.rtc"))
               .diagnostics if d.code == "RTC227"]
    (d228,) = [d for d in compile_file(str(CASES / "checks" / "RTC228-intra-roce-over-hccs.rtc"))
               .diagnostics if d.code == "RTC228"]
    assert "HCCL_INTRA_PCIE_ENABLE and HCCL_INTRA_ROCE_ENABLE are both 1" in d227.message
    for d in (d227, d228):
        assert "direct links inside the server (HCCS on atlas-800t-a2; HCCL's docs call " \
               "this mode PCIe)" in d.hint, d.hint
        assert "PCIe is the default" not in d.hint and "HCCS is used by default" not in d.hint
    text = CASES.joinpath("checks", "RTC227-intra-link-env-refused.rtc").read_text("utf-8")
    r910a = compile_text(text.replace("atlas-800t-a2", "atlas-800-910a"), "x.rtc")
    (d,) = [d for d in r910a.diagnostics if d.code == "RTC227"]
    assert "HCCS inside each HCCS group, PCIe between them, on atlas-800-910a" in d.hint


def test_explain_an_nccl_variable_or_say_rtc_has_no_data_on_it():
    # fresh-user finding 16: `rtc explain NCCL_ALGO` answered "did you mean 'nccl-busbw-low'?"
    from typer.testing import CliRunner

    from rtc.cli import app
    from rtc.cli.rules_cmd import nccl_entry

    text = nccl_entry("nccl_ib_hca")
    assert text.startswith("NCCL_IB_HCA (NCCL environment variable") and "RTC472" in text
    assert nccl_entry("NCCL_ALGO") is None
    res = CliRunner().invoke(app, ["explain", "NCCL_ALGO"])
    assert res.exit_code == 2
    assert "no data on the NCCL variable NCCL_ALGO" in res.output
    assert "nccl-busbw-low" not in res.output and "docs.nvidia.com" in res.output
    res = CliRunner().invoke(app, ["explain", "HCCL_BUFFSIZ"])
    assert res.exit_code == 2 and "did you mean HCCL_BUFFSIZE?" in res.output
