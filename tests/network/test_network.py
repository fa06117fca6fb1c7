"""The network model (rtc.network) and its checks RTC400-RTC479: inventory integration on the
real A2 capture and hand-made variants, reachability counting, the port plan, the
environment parsers, device numbering, rule coverage and the README language table.

Nothing here opens a socket: reachability and ports are modelled from the description.
"""

from __future__ import annotations

import time

import itertools
import random
import shutil
from pathlib import Path

import pytest

from conftest import CASES, EXAMPLES, ROOT, TESTS, expectations
from rtc.api import compile_file, compile_text, rank_table
from rtc.diagnostics import Severity
from rtc.network import env as netenv
from rtc.network.reachability import Model, communication_sets, unreachable_in
from rtc.catalogue import RULES as ALL_RULES
from rtc.scripts.rules import RULES as SCRIPT_RULES

CHECKS = CASES / "checks"
DATA = TESTS / "data" / "inventory"
ATLAS = DATA / "a2-atlas-01"
VARIANTS = DATA / "variants"


def codes(result, code=None):
    ds = result.diagnostics
    return [d for d in ds if d.code == code] if code else sorted({d.code for d in ds})


def a2(body: str, cann: str | None = "8.2.RC1") -> str:
    head = "cluster c {\n  hardware atlas-800t-a2\n" + (f"  cann {cann}\n" if cann else "") + "}\n"
    return head + body


# ---------------------------------------------------------------------------------------
# rule coverage

#: (the script front end's RTC461 has its cases in tests/cases/scripts, test_lint.py)
NETWORK_RULES = sorted(r.code for r in ALL_RULES if "RTC400" <= r.code < "RTC480"
                       and r.code not in {s.code for s in SCRIPT_RULES})

#: a passing case per rule: the same kind of input where the rule has nothing to say
PASS_FOR = {
    "RTC400": "pass-network-d1", "RTC401": "pass-network-d1", "RTC402": "pass-network-d1",
    "RTC403": "pass-network-d1", "RTC404": "pass-network-d1", "RTC405": "pass-network-d1",
    "RTC406": "pass-network-d1", "RTC407": "pass-network-d1", "RTC410": "pass-network-d1",
    "RTC411": "pass-network-d1", "RTC412": "pass-network-d1", "RTC420": "pass-inventory-agrees",
    "RTC421": "pass-inventory-a2", "RTC422": "pass-inventory-a2", "RTC423": "pass-inventory-a2",
    "RTC424": "pass-inventory-a2", "RTC430": "pass-visible-devices",
    "RTC431": "pass-visible-devices", "RTC432": "pass-visible-devices",
    "RTC433": "pass-visible-devices", "RTC434": "pass-visible-devices",
    "RTC435": "pass-visible-devices", "RTC440": "pass-shared-host-ports",
    "RTC441": "pass-network-d1", "RTC442": "pass-mooncake-ports",
    "RTC443": "pass-dp-groups-own-ports", "RTC444": "pass-shared-host-ports",
    "RTC445": "pass-network-d1", "RTC446": "pass-mooncake-ports",
    "RTC450": "pass-network-d1", "RTC451": "pass-network-d1", "RTC452": "pass-network-d1",
    "RTC453": "pass-network-d1", "RTC454": "pass-network-d1", "RTC455": "pass-hccl-variables-without-rules",
    "RTC456": "pass-network-d1", "RTC457": "pass-network-d1", "RTC458": "pass-network-d1",
    "RTC472": "pass-gpu-tp-inside-islands", "RTC473": "pass-gpu-captures-match",
    "RTC474": "pass-gpu-captures-match", "RTC476": "pass-gpu-nccl-topo-file",
    "RTC477": "pass-gpu-tp-inside-islands", "RTC479": "pass-gpu-captures-match",
    "RTC459": "pass-intra-link-env", "RTC460": "pass-intra-link-env",
}


def test_every_network_rule_has_a_failing_case_with_its_location():
    covered = {}
    for p in sorted(CHECKS.glob("RTC4*.rtc")):
        exp = expectations(p)
        assert exp, p.name
        covered.setdefault(exp[0][0], p.name)
        assert p.name.startswith(exp[0][0]), f"{p.name} expects {exp[0][0]}"
    assert set(NETWORK_RULES) <= set(covered), sorted(set(NETWORK_RULES) - set(covered))
    assert len(NETWORK_RULES) >= 30


@pytest.mark.parametrize("code", NETWORK_RULES)
def test_every_network_rule_has_a_passing_case(code):
    case = CHECKS / f"{PASS_FOR[code]}.rtc"
    assert expectations(case) == []
    result = compile_file(str(case))
    assert result.ok and codes(result, code) == []


@pytest.mark.parametrize("code", NETWORK_RULES)
def test_every_network_rule_is_explained(code, rtc):
    res = rtc("explain", code)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    for part in ("What:", "Why:", "Example:", "Fix:"):
        assert part in text, (code, part)


# ---------------------------------------------------------------------------------------
# inventory

def test_seed_capture_gives_the_a2_plan_and_the_table_uses_it():
    result = compile_file(str(CHECKS / "pass-inventory-a2.rtc"))
    assert result.ok and result.diagnostics == []
    atlas = result.topology.server("atlas-01")
    assert [str(d.device_ip) for d in atlas.devices] == [f"6.0.2.{2 * i + 1}" for i in range(8)]
    assert [str(d.gateway) for d in atlas.devices] == [f"6.0.2.{2 * i}" for i in range(8)]
    assert {d.prefix for d in atlas.devices} == {31}
    assert atlas.address_sources == {"device_ip": "inventory", "gateway": "inventory",
                                     "prefix": "dsl"}
    _text, doc, problems = rank_table(result.topology, result.topology.jobs[0])
    assert not problems
    assert [d["device_ip"] for d in doc["server_list"][0]["device"]] == \
        [f"6.0.2.{2 * i + 1}" for i in range(8)]


def test_inventory_fills_prefix_from_the_netmask(tmp_path):
    folder = tmp_path / "inv"
    folder.mkdir()
    shutil.copy(DATA / "handmade" / "hccn.conf", folder / "hccn.conf")
    text = a2(f'server a {{\n  host 10.0.0.6\n  inventory "{folder}"\n}}\n')
    result = compile_text(text, str(tmp_path / "x.rtc"))
    assert result.ok, [d.message for d in result.diagnostics]
    s = result.topology.server("a")
    assert [d.prefix for d in s.devices] == [31] * 8
    assert str(s.devices[3].device_ip) == "6.0.2.7" and str(s.devices[3].gateway) == "6.0.2.6"


def test_mismatch_shows_both_values_and_both_sources():
    result = compile_file(str(CHECKS / "RTC420-inventory-mismatch.rtc"))
    first = next(d for d in codes(result, "RTC420") if "device 0:" in d.message)
    assert "says device IP 6.0.2.3" in first.message
    assert "hccn_tool -i 0 -ip -g (ip.txt:1) says 6.0.2.1" in first.message
    assert first.span.file.endswith("RTC420-inventory-mismatch.rtc")
    (rel,) = first.related
    assert rel.span.file.endswith("ip.txt") and (rel.span.line, rel.span.column) == (1, 8)
    # eight devices disagree: three on their own, the rest folded into one
    assert len(codes(result, "RTC420")) == 4


def test_stale_hccn_conf_is_reported_through_the_compile():
    folder = VARIANTS / "stale-conf"
    text = a2(f'server a {{\n  host 10.0.0.6\n  inventory "{folder}"\n  device_ip inventory\n}}\n')
    result = compile_text(text, "stale.rtc")
    (conflict,) = codes(result, "RTC487")
    assert "6.0.2.19" in conflict.message and "6.0.2.7" in conflict.message
    # hccn_tool (running state) wins: the table gets the address the NPU has now
    assert str(result.topology.server("a").devices[3].device_ip) == "6.0.2.7"


def test_stale_plan_against_stale_conf_names_the_conf_value():
    folder = VARIANTS / "stale-conf"
    text = a2(f'server a {{\n  host 10.0.0.6\n  inventory "{folder}"\n'
              "  device_ip 6.0.2.1, 6.0.2.3, 6.0.2.5, 6.0.2.19, 6.0.2.9, 6.0.2.11, 6.0.2.13,"
              " 6.0.2.15\n}\n")
    result = compile_text(text, "stale.rtc")
    (d,) = codes(result, "RTC420")
    assert "device 3" in d.message and "6.0.2.19" in d.message and "6.0.2.7" in d.message


def test_link_down_only_matters_for_devices_in_use():
    folder = VARIANTS / "link-down"
    body = (f'server a {{\n  host 10.0.0.6\n  inventory "{folder}"\n  device_ip inventory\n}}\n'
            "job j {\n  on a devices DEVS\n  tp 4\n}\n")
    used = compile_text(a2(body.replace("DEVS", "4..7")), "x.rtc")
    (d,) = codes(used, "RTC421")
    assert "device 5" in d.message and "link.txt:6" in d.message
    assert d.related[0].span.line == 6
    spare = compile_text(a2(body.replace("DEVS", "0..3")), "x.rtc")
    assert codes(spare, "RTC421") == []


def test_device_without_ip_is_an_error_and_keeps_the_parser_warning():
    result = compile_file(str(CHECKS / "RTC423-inventory-missing-value.rtc"))
    (d,) = codes(result, "RTC423")
    assert d.message.endswith("has no device IP for device 2")
    assert [x.severity for x in codes(result, "RTC489")] == [Severity.WARNING]
    s = result.topology.server("atlas-01")
    assert s.devices[2].device_ip is None and str(s.devices[3].device_ip) == "6.0.2.7"


def test_inventory_plan_without_folder():
    result = compile_text(a2("server a {\n  host 10.0.0.6\n  device_ip inventory\n}\n"), "x.rtc")
    (d,) = codes(result, "RTC423")
    assert "no `inventory` folder" in d.message and (d.span.line, d.span.column) == (7, 13)


def test_each_folder_is_read_once_and_family_paths_are_templates(tmp_path, monkeypatch):
    import rtc.inventory as inventory

    for i in range(2):
        folder = tmp_path / f"inv{i}"
        folder.mkdir()
        (folder / "ip.txt").write_text("".join(f"ipaddr:6.0.{i}.{2 * d + 1}\n" for d in range(8)))
    calls = []
    real = inventory.load_inventory_dir
    monkeypatch.setattr(inventory, "load_inventory_dir",
                        lambda p: calls.append(str(p)) or real(p))
    text = a2('family n[0..1] {\n  host 10.0.0.{i+1}\n  inventory "inv{i}"\n}\n'
              'server again {\n  host 10.0.0.9\n  inventory "inv1"\n}\n')
    result = compile_text(text, str(tmp_path / "f.rtc"))
    assert len(calls) == 2
    assert [str(d.device_ip) for d in result.topology.server("n1").devices][:2] == \
        ["6.0.1.1", "6.0.1.3"]
    (shared,) = codes(result, "RTC424")
    assert "again" in shared.message and "n1" in shared.message


# ---------------------------------------------------------------------------------------
# reachability

def _random_cluster(rng: random.Random) -> str:
    """Servers with a mix of: shared /24s, per-NPU /31s, gateways or not, two fabrics."""
    lines = ["fabric f1 {\n  subnets 6.0.0.0/16\n}\n", "fabric f2 {\n  subnets 7.0.0.0/16\n}\n"]
    for s in range(rng.randint(2, 5)):
        n = rng.randint(1, 4)
        kind = rng.choice(["31gw", "31", "24", "24gw", "other"])
        first = rng.choice([6, 7, 8])
        if kind.startswith("31"):
            ips = [f"{first}.0.{s}.{2 * d + 1}" for d in range(n)]
            gws = [f"{first}.0.{s}.{2 * d}" for d in range(n)]
            prefix = 31
        else:
            net = rng.choice([0, 1])
            ips = [f"{first}.0.{100 + net}.{10 * s + d + 1}" for d in range(n)]
            gws = [f"{first}.0.{100 + net}.254"] * n
            prefix = 24
        gw = f"  gateway {', '.join(gws)}\n" if kind.endswith("gw") or kind == "other" else ""
        lines.append(f"server s{s} {{\n  host 10.0.0.{s + 1}\n  devices 0..{n - 1}\n"
                     f"  device_ip {', '.join(ips)}\n{gw}  prefix {prefix}\n}}\n")
    return a2("".join(lines))


def _brute(topo, model):
    """Unreachable cross-server pairs by brute force over device pairs."""
    ends = [e for e in (model.end(s, d, False) for s in topo.servers for d in s.devices) if e]
    count = 0
    for x, y in itertools.combinations(ends, 2):
        if x.server is y.server:
            continue
        same_subnet = x.subnet == y.subnet
        routed_together = x.domain == y.domain and x.domain[0] == "c"
        if not (same_subnet or routed_together):
            count += 1
    return count


@pytest.mark.parametrize("seed", range(40))
def test_class_counting_equals_brute_force(seed):
    rng = random.Random(seed)
    text = _random_cluster(rng)
    result = compile_text(text, "r.rtc")
    topo = result.topology
    model = Model(topo)
    ((_, ends),) = communication_sets(topo, model, None)
    counted = sum(unreachable_in(ends).values())
    assert counted == _brute(topo, model), text
    reported = sum(int(d.message.split(": ")[1].split(" device pair")[0])
                   for d in codes(result, "RTC410"))
    assert reported == counted


def test_no_fabric_assumes_routed_subnets_and_says_so():
    text = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text()
    start = text.index("fabric roce {")
    without = text[:start] + text[text.index("}", start) + 1:]
    result = compile_text(without, "d1.rtc")
    assert result.ok
    (d,) = codes(result, "RTC411")
    assert d.severity is Severity.NOTE and "16 device subnets" in d.message
    assert "a `fabric roce` block with the line `subnets 6.0.2.0/24`" in d.hint
    assert compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc")).diagnostics == []


def test_only_pairs_inside_groups_are_judged():
    # TP8 inside each server, DP2 dense: the two replicas never talk, so two unrouted
    # subnets are fine; with expert parallel (MoE) the EP group spans both servers.
    body = ("server a {\n  host 10.0.0.1\n  device_ip 6.0.1.1 step 1\n  prefix 24\n}\n"
            "server b {\n  host 10.0.0.2\n  device_ip 6.0.2.1 step 1\n  prefix 24\n}\n"
            "job j {\n  servers a, b\n  dp 2\n  tp 8\n  KIND\n}\n")
    dense = compile_text(a2(body.replace("KIND", "model_kind dense")), "x.rtc")
    assert codes(dense, "RTC410") == []
    moe = compile_text(a2(body.replace("KIND", "expert_parallel on")), "x.rtc")
    (d,) = codes(moe, "RTC410")
    assert d.message.startswith("job j: 64 device pairs") and "(EP group)" in d.message
    assert (d.span.line, d.span.column) == (12, 13)


def test_a3_servers_in_one_super_pod_are_not_judged():
    body = ("family n[0..1] {\n  host 10.0.0.{i+1}\n  device_ip 10.20.{i}.{d+1}\n  prefix 24\n"
            "  super_pod POD\n  super_device_id base {i*16}\n}\n")
    text = "cluster c {\n  hardware atlas-800-a3\n}\n" + body
    assert codes(compile_text(text.replace("POD", "0"), "x.rtc"), "RTC410") == []
    (d,) = codes(compile_text(text.replace("POD", "{i}"), "x.rtc"), "RTC410")
    assert d.message.startswith("the rank table: 256 device pairs")


def test_unreachable_findings_are_folded_per_class_pair():
    # 64 servers, /31 per NPU, no gateways: one error, not 2016 server pairs
    text = a2("family n[00..63] {\n  host 10.0.0.{i+1}\n  device_ip 6.0.{i}.{2*d+1}\n"
              "  prefix 31\n}\n")
    (d,) = codes(compile_text(text, "x.rtc"), "RTC410")
    assert f"{64 * 63 // 2 * 64} device pairs" in d.message


# ---------------------------------------------------------------------------------------
# ports

def _shared(extra_prefill="", extra_decode="", cann="8.2.RC1"):
    return a2("server a {\n  host 10.0.0.6\n  devices 0..7\n}\n"
              f"job prefill {{\n  on a devices 0..3\n  tp 4\n{extra_prefill}}}\n"
              f"job decode {{\n  on a devices 4..7\n  tp 4\n{extra_decode}}}\n",
              cann)


@pytest.mark.parametrize("cann,second", [("8.2.RC1", 60032), ("8.1.RC1", 60016), (None, 60032)])
def test_shared_host_gets_distinct_hccl_windows(cann, second):
    result = compile_text(_shared(cann=cann), "x.rtc")
    plan = result.plan.ports
    assert plan.jobs["prefill"].hccl_base == 60000 and plan.jobs["decode"].hccl_base == second
    assert plan.jobs["decode"].hccl_count == (16 if second == 60016 else 32)
    assert plan.jobs["decode"].settings() == {"HCCL_IF_BASE_PORT": second, "--port": 8001,
                                              "--data-parallel-address": "10.0.0.6"}
    (d,) = codes(result, "RTC444")
    assert f"env HCCL_IF_BASE_PORT {second}" in d.message and "port 8001" in d.message
    assert result.ok


def test_user_values_are_kept_and_defaults_move_around_them():
    result = compile_text(_shared(extra_prefill="  env HCCL_IF_BASE_PORT = 60032\n"), "x.rtc")
    plan = result.plan.ports
    assert plan.jobs["prefill"].hccl_base == 60032 and plan.jobs["decode"].hccl_base == 60000
    assert "HCCL_IF_BASE_PORT" not in plan.jobs["decode"].assigned


def test_hccl_window_overlap_is_reported_with_both_owners():
    result = compile_text(_shared("  env HCCL_IF_BASE_PORT = 60000\n",
                                  "  env HCCL_IF_BASE_PORT = 60020\n"), "x.rtc")
    (d,) = codes(result, "RTC440")
    assert "job decode's HCCL host ports 60020-60051" in d.message
    assert "job prefill's HCCL host ports 60000-60031" in d.message
    assert d.related and d.related[0].span.line == 12  # prefill's env line


def test_api_port_inside_the_hccl_window_is_a_conflict_in_one_job():
    text = a2("server a {\n  host 10.0.0.6\n}\njob j {\n  servers a\n  tp 8\n  port 60010\n"
              "  env HCCL_IF_BASE_PORT = 60000\n}\n")
    (d,) = codes(compile_text(text, "x.rtc"), "RTC440")
    assert "vLLM API server (--port) 60010" in d.message


def test_mooncake_ports_are_kv_port_plus_global_rank_per_host():
    text = a2("family p[1..2] {\n  host 10.0.0.{i}\n  device_ip 6.0.{i}.{d+1}\n}\n"
              "job prefill {\n  role prefill\n  servers p[1..2]\n  dp 2\n  tp 8\n"
              "  expert_parallel on\n  kv_connector mooncake\n  kv_port 36000\n}\n")
    plan = compile_text(text, "x.rtc").plan.ports
    kv = {c.server: (c.lo, c.hi) for cs in plan.claims.values() for c in cs if c.kind == "kv"}
    assert kv == {"p1": (36000, 36007), "p2": (36008, 36015)}
    adxl = {(c.lo, c.hi) for cs in plan.claims.values() for c in cs if c.kind == "adxl"}
    assert adxl == {(20000, 27999)}


def test_bad_hccl_port_values():
    for value, words in (("abc", "is not a port number"), ("1000", "outside 1024..65520"),
                         ("65520", "runs past 65535")):
        text = a2(f"server a {{\n  host 10.0.0.6\n}}\njob j {{\n  servers a\n  tp 8\n"
                  f"  env HCCL_IF_BASE_PORT = {value}\n}}\n")
        (d,) = codes(compile_text(text, "x.rtc"), "RTC441")
        assert words in d.message, value
    text = a2("server a {\n  host 10.0.0.6\n}\njob j {\n  servers a\n  tp 8\n"
              "  env HCCL_HOST_SOCKET_PORT_RANGE = \"60000-\"\n}\n")
    assert codes(compile_text(text, "x.rtc"), "RTC441")


def test_jobs_on_their_own_servers_keep_the_defaults():
    text = a2("family n[1..4] {\n  host 10.0.0.{i}\n  device_ip 6.0.{i}.{d+1}\n}\n"
              "job prefill {\n  servers n[1..2]\n  dp 2\n  tp 8\n"
              "  expert_parallel on\n}\n"
              "job decode {\n  servers n[3..4]\n  dp 4\n  tp 4\n"
              "  expert_parallel on\n}\n")
    result = compile_text(text, "x.rtc")
    plan = result.plan.ports
    assert plan.jobs["prefill"].settings() == {
        "HCCL_IF_BASE_PORT": 60000, "--port": 8000, "--data-parallel-rpc-port": 29550,
        "--data-parallel-address": "10.0.0.1"}
    assert plan.jobs["decode"].settings()["--data-parallel-address"] == "10.0.0.3"
    assert plan.jobs["decode"].settings()["--data-parallel-rpc-port"] == 29550
    assert codes(result, "RTC444") == []


def test_defaults_jump_out_of_the_transfer_engines_random_range():
    # 16 NPUs per A3 server: AscendDirectTransport takes 20000-35999, which holds vLLM's
    # default DP rpc port 29550; rtc moves it past the range and says so.
    text = ("cluster c {\n  hardware atlas-800-a3\n}\n"
            "family p[1..2] {\n  host 10.0.1.{i}\n  super_pod 0\n  super_device_id base {i*16}\n}\n"
            "job prefill {\n  role prefill\n  servers p[1..2]\n  dp 2\n  tp 16\n"
            "  expert_parallel on\n  kv_connector mooncake\n  kv_port 36000\n}\n")
    result = compile_text(text, "x.rtc")
    jp = result.plan.ports.jobs["prefill"]
    assert jp.dp_rpc_port == 36016 and jp.assigned == {"dp_rpc_port": 36016}
    (d,) = codes(result, "RTC444")
    assert "dp_rpc_port 36016" in d.message
    written = compile_text(text.replace("kv_port 36000", "kv_port 36000\n  dp_rpc_port 29550"),
                           "x.rtc")
    (d,) = codes(written, "RTC440")
    assert "DP RPC (--data-parallel-rpc-port) 29550" in d.message
    assert "AscendDirectTransport random ports 20000-35999" in d.message


# ---------------------------------------------------------------------------------------
# host addressing and environment

def test_hccl_if_ip_on_one_server_must_be_its_host():
    text = a2("server a {\n  host 10.0.0.6\n}\njob j {\n  servers a\n  tp 8\n"
              "  env HCCL_IF_IP = VALUE\n}\n")
    assert codes(compile_text(text.replace("VALUE", "10.0.0.6"), "x.rtc"), "RTC450") == []
    (d,) = codes(compile_text(text.replace("VALUE", "10.0.0.7"), "x.rtc"), "RTC450")
    assert "not the host IP of a (10.0.0.6)" in d.message
    (d,) = codes(compile_text(text.replace("VALUE", '"x.x.x.x"'), "x.rtc"), "RTC450")
    assert "placeholder" in d.message


def test_dp_address_of_no_server():
    text = (CHECKS / "RTC451-dp-address-worker.rtc").read_text().replace("10.0.0.5\n}", "10.0.0.9\n}")
    (d,) = codes(compile_text(text, "x.rtc"), "RTC451")
    assert "no server of the cluster" in d.message


@pytest.mark.parametrize("value,ok", [
    ("eth", True), ("=eth0", True), ("^docker,lo", True), ("^=eth0", True), ("eth0,enp1", True),
    ("=^eth0", False), ("eth0,^lo", False), ("eth0, eth1", False), ("eth0,,eth1", False),
    ("", False), ("eth*", False), ("^", False)])
def test_hccl_socket_ifname_syntax(value, ok):
    assert (netenv.parse_socket_ifname(value).problem is None) is ok


def test_hccl_socket_ifname_selection():
    assert netenv.parse_socket_ifname("en").selects("eno0")
    assert not netenv.parse_socket_ifname("=en").selects("eno0")
    assert not netenv.parse_socket_ifname("^en,lo").selects("eno0")
    assert netenv.parse_socket_ifname("^=eno1").selects("eno0")


@pytest.mark.parametrize("value,ids,problem", [
    ("0,1,2,3", (0, 1, 2, 3), None), ("1, 2", (1,), "space"), ("1,3,x", (1, 3), "whole number"),
    ("0,0", (0,), "twice"), ("", (), "empty")])
def test_ascend_rt_visible_devices_parsing(value, ids, problem):
    got = netenv.parse_visible_devices(value)
    assert got.ids == ids
    assert (got.problem is None) if problem is None else problem in got.problem


def test_gloo_accepts_a_literal_list_but_tp_does_not():
    assert netenv.single_ifname_problem("eno0,eno1", allow_list=True) is None
    assert "exactly one" in netenv.single_ifname_problem("eno0,eno1")
    assert "selection syntax" in netenv.single_ifname_problem("^lo", allow_list=True)


def test_nccl_variables_get_a_note_and_typos_a_suggestion():
    text = a2("server a {\n  host 10.0.0.6\n}\njob j {\n  servers a\n  tp 8\n"
              "  env NCCL_SOCKET_IFNAME = eno0\n  env HCCL_BUFSIZE = 200\n  env HCCL_BUFFSIZE = 200\n}\n")
    notes = codes(compile_text(text, "x.rtc"), "RTC455")
    assert len(notes) == 2
    assert "HCCL's is HCCL_SOCKET_IFNAME" in notes[0].message
    assert notes[0].severity is Severity.NOTE
    # fresh-user finding 16: HCCL ignores a misspelt name silently: a warning, not a note
    assert "a misspelling of HCCL_BUFFSIZE" in notes[1].message
    assert notes[1].severity is Severity.WARNING
    assert notes[1].hint.startswith("did you mean HCCL_BUFFSIZE?")


# ---------------------------------------------------------------------------------------
# device numbering

def test_reordered_visible_list_is_refused_as_cann_refuses_it():
    # issue 34: "3,2,1,0" was once shown device by device (4 -> 0 -> 3); CANN refuses a
    # list that is not ascending (EE1001, gpustack issue 2527), so it is RTC434 now
    text = a2("server a {\n  host 10.0.0.6\n  devices 4..7\n  visible_devices 4..7\n}\n"
              'job j {\n  servers a\n  tp 4\n  env ASCEND_RT_VISIBLE_DEVICES = "3,2,1,0"\n}\n')
    result = compile_text(text, "x.rtc")
    (d,) = codes(result, "RTC434")
    assert d.severity.name == "WARNING"   # rtc's env file replaces the line (a: 0,1,2,3)
    assert d.message.endswith("rtc writes each server's own list in its env file (a: 0,1,2,3)")
    assert codes(result, "RTC507") == []
    assert codes(result, "RTC433") == []


def test_identity_numbering_is_not_shown():
    result = compile_file(str(CHECKS / "pass-visible-devices.rtc"))
    assert codes(result, "RTC433") == []


# ---------------------------------------------------------------------------------------
# address checks in families fold into one finding

def test_family_gateway_mistake_is_one_finding():
    text = a2("family n[0000..0511] {\n  host 10.0.{i/256}.{i%256+1}\n"
              "  device_ip 6.{i/256}.{i%256}.{2*d+1}\n  gateway 6.{i/256}.{i%256}.{2*d+2}\n"
              "  prefix 31\n}\nfabric roce {\n  subnets 6.0.0.0/8\n}\n")
    (d,) = codes(compile_text(text, "x.rtc"), "RTC400")
    assert "(and 4095 more devices" in d.message


# ---------------------------------------------------------------------------------------
# documentation and the benchmark

def test_readme_documents_the_new_language():
    readme = (ROOT / "docs" / "describing.md").read_text(encoding="utf-8")
    from rtc.syntax.schema import BLOCK_SPECS

    table = readme[readme.index("## Blocks"):readme.index("## Families and templates")]
    for kind in ("network", "fabric"):
        assert f"| `{kind} NAME` |" in table
    for kind, attrs in (("network", BLOCK_SPECS["network"].attrs),
                        ("fabric", BLOCK_SPECS["fabric"].attrs),
                        ("server", ("visible_devices",)),
                        ("job", ("port", "dp_address", "dp_rpc_port", "kv_connector", "kv_port",
                                 "ray_port"))):
        for attr in attrs:
            assert f"`{attr}" in table, (kind, attr)


@pytest.mark.skipif(not (ROOT / "benchmarks" / "bench_network.py").is_file(),
                    reason="benchmarks/ is not shipped in the sdist")
def test_benchmark_runs_on_small_sizes(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_network",
                                                  ROOT / "benchmarks" / "bench_network.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def once(fn, repeat=5):
        # one timed run, no gc.collect(): with the suite's heap each collection takes
        # about a quarter of a second, and the benchmark would do 160 of them
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    mod.best_of = once
    mod.main(["32", "64"])
    out = capsys.readouterr().out
    assert "x/doubling" in out
    lines = [l for l in out.splitlines() if l.strip().startswith(("32 ", "64 "))]
    assert len(lines) == 4
    assert lines[-1].rstrip().endswith("RTC410")       # the broken variant is caught
    assert lines[0].rstrip().endswith("-")             # the clean one has no finding


# ---------------------------------------------------------------------------------------
# the new blocks and attributes

def test_network_and_fabric_blocks_are_lowered():
    result = compile_file(str(CHECKS / "pass-network-d1.rtc"))
    topo = result.topology
    (net,) = topo.networks
    assert (net.name, str(net.cidr), net.nics) == ("mgmt", "10.0.0.0/24", ("eno0",))
    (fab,) = topo.fabrics
    assert [str(n) for n, _span in fab.subnets] == ["6.0.0.0/16"]
    job = topo.jobs[0]
    assert (job.port, str(job.dp_address), job.dp_rpc_port) == (8077, "10.0.0.6", 12980)
    assert result.plan.ports.jobs["deepseek"].settings() == {
        "HCCL_IF_BASE_PORT": 60000, "--port": 8077, "--data-parallel-rpc-port": 12980,
        "--data-parallel-address": "10.0.0.6"}


@pytest.mark.parametrize("line,code,col,words", [
    ("  cidr 10.0.0.6/24", "RTC114", 8, "the network is 10.0.0.0/24"),
    ("  cidr 10.0.0.0", "RTC114", 8, "ADDRESS/PREFIX"),
    ("  cidr x.x.x.x/24", "RTC111", 8, "placeholder"),
    ("  nic eno0 eno1", "RTC114", 12, "commas"),
])
def test_network_block_values(line, code, col, words):
    text = a2(f"network mgmt {{\n{line}\n}}\n")
    (d,) = [d for d in compile_text(text, "x.rtc").diagnostics if d.code == code]
    assert (d.span.line, d.span.column) == (6, col)
    assert words in d.message + (d.hint or "")


def test_port_attributes_are_ports():
    text = a2("server a {\n  host 10.0.0.6\n}\njob j {\n  servers a\n  tp 8\n  port 70000\n}\n")
    (d,) = [d for d in compile_text(text, "x.rtc").diagnostics if d.code == "RTC114"]
    assert "out of range (1..65535)" in d.message and (d.span.line, d.span.column) == (11, 8)


# -- messages never print Python None; RTC209 fast path; env names -------------------------

def test_no_message_prints_none():
    """No diagnostic of any case file or example (message, hint, related notes) shows
    Python's None (e.g. RTC433 once printed "4 -> None -> None")."""
    import re
    files = sorted(CHECKS.glob("*.rtc")) + sorted(EXAMPLES.glob("*.rtc"))
    for path in files:
        result = compile_text(path.read_text(encoding="utf-8"), str(path))
        for d in result.diagnostics:
            texts = [d.message, d.hint or ""] + [getattr(r, "message", "") or ""
                                                  for r in (d.related or ())]
            for t in texts:
                assert not re.search(r"\bNone\b", t), (path.name, d.code, t)


def test_rtc433_names_devices_the_container_does_not_see():
    result = compile_text((CHECKS / "RTC433-not-visible-mapping.rtc").read_text(), "n.rtc")
    notes = [d.message for d in result.diagnostics if d.code == "RTC433"]
    assert notes and "physical 4..7 -> not visible in the container" in notes[0]


def test_rtc209_fast_path_agrees_with_ipaddress():
    import ipaddress
    from rtc.checks.addresses import _why
    samples = ["0.0.0.0", "127.0.0.1", "127.255.0.9", "224.0.0.1", "239.255.255.255",
               "240.0.0.1", "250.1.2.3", "255.255.255.254", "255.255.255.255", "169.254.0.1",
               "169.253.255.255", "10.0.0.1", "6.0.2.1", "192.168.1.1", "223.255.255.255"]
    for text in samples:
        ip = ipaddress.ip_address(text)
        flagged = (ip.is_loopback or ip.is_unspecified or ip.is_multicast or ip.is_link_local
                   or ip.is_reserved or text == "255.255.255.255")
        assert (_why(ip) is not None) == flagged, text
    assert _why(ipaddress.ip_address("255.255.255.255")) == "limited broadcast"
    assert _why(ipaddress.ip_address("100::1")) == "reserved"
    assert _why(ipaddress.ip_address("fd00::1")) is None


def test_rtc209_message_grammar():
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 0.0.0.0\n"
           "  devices 0\n}\n")
    msgs = [d.message for d in compile_text(src, "u.rtc").diagnostics if d.code == "RTC209"]
    assert msgs and "is an unspecified address" in msgs[0]


@pytest.mark.parametrize("name,ok", [("FOO", True), ("_x1", True), ("1FOO", False),
                                     ("FOO-BAR", False), ("A.B", False)])
def test_env_names_must_be_shell_identifiers(name, ok):
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.1\n"
           f"  devices 0..7\n}}\njob j {{\n  servers a\n  tp 8\n  env {name} = x\n}}\n")
    got = [d for d in compile_text(src, "e.rtc").diagnostics if d.code == "RTC457"]
    assert (not got) == ok, [d.message for d in got]
    if got:
        assert (got[0].span.line, got[0].span.column) == (11, 7)


# ---------------------------------------------------------------------------------------
# IPv6 devices: the int-key fast paths (Topology.address_keys) must judge them like IPv4

def _v6(device_ip: str, gateway: str, fabric: str = "fd00:6::/32", prefix: int = 64) -> str:
    return a2(f"""fabric roce {{
  subnets {fabric}
}}
family node[0..1] {{
  host 10.0.0.{{i+1}}
  devices 0..1
  device_ip {device_ip}
  gateway {gateway}
  prefix {prefix}
}}
job serve {{
  servers node[0..1]
  tp 2
  dp 2
}}
""")


def test_ipv6_routed_devices_in_one_fabric_reach_each_other():
    r = compile_text(_v6("fd00:6:{i}::{d+10}", "fd00:6:{i}::{d+1}"), "v6.rtc")
    assert r.ok, [d.message for d in r.diagnostics]
    assert codes(r, "RTC410") == [] and codes(r, "RTC400") == [] and codes(r, "RTC208") == []


def test_ipv6_devices_outside_the_fabric_are_unreachable():
    r = compile_text(_v6("fd00:{6+i}:{i}::{d+10}", "fd00:{6+i}:{i}::{d+1}"), "v6.rtc")
    assert len(codes(r, "RTC410")) == 1


def test_ipv6_gateway_outside_the_subnet():
    r = compile_text(_v6("fd00:6:{i}::{d+10}", "fd00:7:{i}::{d+1}"), "v6.rtc")
    assert codes(r, "RTC400")


def test_ipv4_gateway_for_ipv6_device_routes_nothing():
    r = compile_text(_v6("fd00:6:{i}::{d+10}", "10.9.{i}.{d+1}"), "v6.rtc")
    assert codes(r, "RTC400")          # the gateway is not in the device's subnet
    assert len(codes(r, "RTC410")) == 1  # and so the two servers cannot reach each other


def test_ipv6_duplicate_device_ip():
    r = compile_text(_v6("fd00:6::{d+10}", "fd00:6::{d+1}"), "v6.rtc")
    assert len(codes(r, "RTC208")) == 1


def test_fabric_suggestion_covers_every_routed_subnet():
    import ipaddress

    from rtc.checks.peer_reachability import _cover

    subs = [(4, int(ipaddress.IPv4Address(a)), 31) for a in ("6.0.0.0", "6.17.255.254")]
    net = ipaddress.ip_network(_cover(subs))
    assert str(net) == "6.0.0.0/8"
    assert all(ipaddress.ip_network(f"{ipaddress.IPv4Address(n)}/{p}").subnet_of(net)
               for _v, n, p in subs)


def test_no_unreachable_knock_on_after_a_failed_address_or_fabric_line():
    body = ("fabric roce {\n  subnets SUBNET\n}\nfamily node[0..299] {\n"
            "  host 10.0.{i/256}.{i%256}\n  devices 0..7\n  device_ip 6.{i}.0.{2*d+1}\n"
            "  gateway 6.{i}.0.{2*d}\n  prefix 31\n}\n")
    # the octet overflow for node256..299 is reported once per line, and nothing else
    result = compile_text(a2(body.replace("SUBNET", "6.0.0.0/8")), "ko.rtc")
    assert sorted(d.code for d in result.diagnostics if d.severity is Severity.ERROR) == \
        ["RTC207", "RTC207"]
    # a fabric line that did not parse: that error only, no guesses about routing
    result = compile_text(a2(body.replace("SUBNET", "6.0.0.1/16").replace(
        "6.{i}.0.", "6.{i/256}.{i%256}.")), "ko.rtc")
    assert [d.code for d in result.diagnostics if d.severity is Severity.ERROR] == ["RTC114"]


def test_moved_default_port_names_what_took_it():
    result = compile_file(str(EXAMPLES / "pd-a3.rtc"))
    notes = [d.message for d in result.diagnostics if d.code == "RTC444"]
    assert notes and all("the default dp_rpc_port 29550 lies in job" in m and
                         "AscendDirectTransport random ports 20000-35999" in m for m in notes)


def test_job_policy_covers_that_jobs_port_findings():
    body = ("server a1 {\n  host 10.0.0.6\n  device_ip 6.0.2.1 step 1\n}\n"
            "server a2 {\n  host 10.0.0.5\n  device_ip 6.0.3.1 step 1\n}\n"
            "job j {\n  servers a1, a2\n  dp 2\n  tp 8\n  port 29550\n  dp_rpc_port 29550\n"
            "POLICY}\n")
    plain = compile_text(a2(body.replace("POLICY", "")), "p.rtc")
    assert [d.severity for d in codes(plain, "RTC440")] == [Severity.ERROR]
    relaxed = compile_text(a2(body.replace("POLICY", "  policy RTC440 warn\n")), "p.rtc")
    assert [d.severity for d in codes(relaxed, "RTC440")] == [Severity.WARNING]


def test_port_clash_across_files_names_defaults_and_a_fix_that_works():
    """`rtc check prefill.rtc decode.rtc`, both jobs on one host with the defaults: the
    message says "the default" (rtc chose nothing), the hint names a value to write in one
    job (leaving it out cannot help: each file is planned on its own) and no "X or X"."""
    from rtc.api import compile_file
    from rtc.api.ports_across import cross_file_ports

    here = TESTS / "data" / "ports_across"
    pre, dec = (compile_file(str(here / n)) for n in ("prefill.rtc", "decode.rtc"))
    found = {d.message.split("'s ", 2)[1].split(" ")[0]: d for d in cross_file_ports([pre, dec])}
    hccl, api = found["HCCL"], found["vLLM"]
    assert "60000-60031 (32 ports, the default) overlaps" in hccl.message
    assert "chosen by rtc" not in hccl.message + api.message
    assert "8000 (the default) overlaps" in api.message
    assert "write `env HCCL_IF_BASE_PORT = 60032` in job prefill of " in hccl.hint
    assert "leave it out" not in hccl.hint + api.hint
    assert api.hint.startswith("give job prefill of ") and "prefill.rtc another port, e.g. `port 8001` (" in api.hint
    assert " or vLLM API server" not in api.hint


@pytest.mark.parametrize("seed", range(40))
def test_one_domain_shortcut_agrees_with_the_device_scan(seed):
    # Model answers single_domain() at once when the whole cluster is one routing domain;
    # the per-device scan must give the same answer for every job and for the cluster.
    topo = compile_text(_random_cluster(random.Random(seed)), "r.rtc").topology
    model = Model(topo)
    groups = [[d for _s, devs in topo.rank_table_members(j) for d in devs]
              for j in (topo.jobs or [None])] + [[d for s in topo.servers for d in s.devices]]
    fast = [model.single_domain(g) for g in groups]
    model._one_domain = False
    assert fast == [model.single_domain(g) for g in groups]


@pytest.mark.parametrize("fabric", ["", "fabric roce {\n  subnets 6.0.0.0/8\n}\n",
                                    "fabric roce {\n  subnets 6.0.0.0/26\n}\n"])
def test_one_domain_shortcut_on_routed_plans(fabric):
    # a /31 per NPU with gateways (the A2 plan): one assumed or declared fabric is one
    # domain; a fabric holding only some subnets is not
    text = a2("family n[0..7] {\n  host 10.0.0.{i+1}\n  device_ip 6.0.{i}.{2*d+1}\n"
              "  gateway 6.0.{i}.{2*d}\n  prefix 31\n}\n" + fabric)
    topo = compile_text(text, "x.rtc").topology
    model = Model(topo)
    devices = [d for s in topo.servers for d in s.devices]
    assert model._one_domain is ("/26" not in fabric)
    fast = model.single_domain(devices)
    model._one_domain = False
    assert fast == model.single_domain(devices) == ("/26" not in fabric)
