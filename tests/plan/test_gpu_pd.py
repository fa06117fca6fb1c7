"""Prefill/decode on NVIDIA GPUs with vLLM's NixlConnector (the plan: --kv-transfer-config,
side-channel env and ports by vLLM release, the proxy), and NCCL's ring vs tree across
servers in the cost model. In process (compile_text), no subprocesses."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES
from rtc.api import compile_file, compile_text
from rtc.cost import nccl
from rtc.cost.links import Site, hardware_of
from rtc.cost.params import load_params
from rtc.cost.spans import group_span
from rtc.model.presets import presets
from rtc.plan.launch import kv_transfer_config
from rtc.plan.versions import FEATURES, SOURCES

PD = """cluster c {{
  hardware hgx-h100
  {version}
}}
server a {{
  host 10.0.0.1
  devices 0..7
  ib_hca mlx5_0, mlx5_1
}}
server b {{
  host 10.0.0.2
  devices 0..7
}}
job p {{
  role prefill
  kv_connector nixl
  servers a
  dp 2
  tp 4
  {extra}
}}
job d {{
  role decode
  kv_connector nixl
  servers b
  dp 4
  tp 2
  lb {lb}
}}
"""


def _compiled(version="vllm_version 0.11.1", extra="", lb="internal"):
    return compile_text(PD.format(version=version, extra=extra, lb=lb), "pd.rtc")


def _claims(result, kind):
    return sorted((c.server, c.lo, c.hi) for cs in result.plan.ports.claims.values()
                  for c in cs if c.kind == kind)


def test_example_kv_transfer_config_env_and_proxy():
    r = compile_file(str(EXAMPLES / "gpu-pd-h100.rtc"))
    assert r.ok, [d.message for d in r.diagnostics]
    words = r.plan.launches["decode"].nodes[0].procs[0].words()
    doc = json.loads(words[words.index("--kv-transfer-config") + 1])
    assert doc == {"kv_connector": "NixlConnector", "kv_role": "kv_consumer",
                   "engine_id": "decode-gpu-d1"}
    env = dict(r.plan.launches["prefill"].nodes[0].env)
    assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"] == "10.0.0.21"
    assert env["VLLM_NIXL_SIDE_CHANNEL_PORT"] == "5600"
    assert env["UCX_NET_DEVICES"].split(",")[:2] == ["mlx5_0:1", "mlx5_1:1"]
    (px,) = r.plan.proxies
    assert (px.name, px.server.name, px.port) == ("pd", "gpu-p1", 8192)
    assert px.prefill == [("10.0.0.21", 8000)] and px.decode == [("10.0.0.22", 8000)]


def test_side_channel_ports_follow_the_vllm_release():
    # 0.11.1+: one port per DP engine (+ DP rank); up to 0.11.0: one per worker
    # (+ DP rank x TP + TP rank); unknown: the range that holds both
    assert _claims(_compiled(), "nixl") == [("a", 5600, 5601), ("b", 5600, 5603)]
    assert _claims(_compiled("vllm_version 0.11.0"), "nixl") == [("a", 5600, 5607),
                                                                 ("b", 5600, 5607)]
    assert _claims(_compiled(""), "nixl") == [("a", 5600, 5607), ("b", 5600, 5607)]
    assert FEATURES["nixl_dp_port"].first == (0, 11, 1) and "26338" in SOURCES["nixl_dp_port"]


def test_kv_port_is_the_side_channel_base_and_moves_past_taken_ports():
    r = _compiled(extra="kv_port 6000")
    assert dict(r.plan.launches["p"].nodes[0].env)["VLLM_NIXL_SIDE_CHANNEL_PORT"] == "6000"
    moved = _compiled(extra="port 5601")     # the API port sits on the default's range
    assert dict(moved.plan.launches["p"].nodes[0].env)["VLLM_NIXL_SIDE_CHANNEL_PORT"] == "5602"
    assert "UCX_NET_DEVICES" not in dict(moved.plan.launches["d"].nodes[0].env)  # no ib_hca


def test_proxy_lists_every_api_server_of_external_lb():
    text = PD.format(version="vllm_version 0.11.1", extra="", lb="external")
    text = text.replace("servers b\n", "servers b, c\n").replace(
        "job p {", "server c {\n  host 10.0.0.3\n  devices 0..7\n}\njob p {")
    r = compile_text(text.replace("dp 4\n  tp 2", "dp 4\n  tp 4"), "pd.rtc")
    (px,) = r.plan.proxies
    assert px.decode == [("10.0.0.2", 8000), ("10.0.0.2", 8001), ("10.0.0.3", 8000),
                         ("10.0.0.3", 8001)]
    assert px.prefill == [("10.0.0.1", 8000)]
    assert _claims(r, "proxy") == [("a", 8192, 8192)]


def test_role_of_each_side_and_no_mooncake_fields():
    r = _compiled()
    pair = r.plan.pairs[0]
    job = r.topology.job("p")
    doc = kv_transfer_config(job, (pair, "prefill"), r.plan.ports.jobs["p"], "e")
    assert doc == {"kv_connector": "NixlConnector", "kv_role": "kv_producer", "engine_id": "e"}


@pytest.mark.parametrize("ptp,dtp,bad", [(4, 2, False), (2, 8, False), (8, 3, True)])
def test_tp_ratio_either_way_with_nixl(ptp, dtp, bad):
    text = PD.format(version="vllm_version 0.11.1", extra="", lb="internal")
    text = text.replace("dp 2\n  tp 4", f"dp 1\n  tp {ptp}").replace(
        "dp 4\n  tp 2", f"dp 1\n  tp {dtp}")
    codes = [d.code for d in compile_text(text, "pd.rtc").diagnostics]
    assert ("RTC520" in codes) is bad


# ---------------------------------------------------------------- NCCL ring vs tree

P = load_params("nominal")


def _span(preset: str, servers: int, per: int = 8):
    hw = hardware_of(presets()[preset])
    sites = [Site(s, d) for s in range(servers) for d in range(per)]
    return group_span(range(len(sites)), sites, hw)


def test_tree_and_ring_latency_and_crossover_on_two_h100_servers():
    # by hand: alpha NVLink 1.9 us, IB 4 us; p 16 on N 2 servers; busbw min(450 x 0.82,
    # 8 x 50 x 0.85) = 340 GB/s. ring alpha (30 - 2) x 1.9 + 2 x 4 = 61.2 us; tree alpha
    # 2 x (7 x 1.9 + 1 x 4) = 34.6 us; crossover 26.6 us / ((1/0.46 - 1.875) / 340 GB/s)
    span = _span("hgx-h100", 2)
    ring, tree = nccl.ring_and_tree(0.0, span, P)
    assert ring.alpha == pytest.approx(61.2e-6) and tree.alpha == pytest.approx(34.6e-6)
    cross = nccl.tree_crossover(span, P)
    assert cross == pytest.approx(26.6e-6 * 340e9 / (1 / 0.46 - 1.875))
    assert cross / 2**20 == pytest.approx(28.86, abs=0.01)
    at = nccl.ring_and_tree(cross, span, P)
    assert at[0].seconds == pytest.approx(at[1].seconds)
    assert nccl.nccl_choice(cross / 4, span, P).algorithm == "tree"
    assert nccl.nccl_choice(cross * 4, span, P).algorithm == "ring"


def test_v8_stays_a_ring_and_one_server_has_no_tree():
    big = nccl.nccl_choice(float(1 << 30), _span("hgx-a100", 3), P, nics=4)
    assert big.algorithm == "ring" and big.link == "ib-hdr"
    assert abs(big.measured_busbw / 1e9 - 84.8) / 84.8 < 0.05
    assert nccl.ring_and_tree(1e6, _span("hgx-h100", 1), P) is None
    assert nccl.nccl_choice(float(1 << 30), _span("hgx-h100", 1), P).algorithm == "nvls"


def test_rtc_cost_of_the_two_server_example_says_which_algorithm():
    from rtc.cost.jobs import cost_jobs
    from rtc.report.cost_report import cost_text

    topo = compile_file(str(EXAMPLES / "gpu-h100-2node-dp2-tp8.rtc")).topology
    text = cost_text(cost_jobs(topo, list(topo.jobs), ("decode",)))
    assert ("NCCL AllReduce across servers (the EP group 0..15: 16 GPUs on 2 servers, "
            "ib-ndr x 8 NICs per server): NCCL picks the tree below 28.9 MiB per rank, the "
            "ring above") in text
    assert "1 MiB tree 41 us vs ring 67 us, 256 MiB tree 1,751 us vs ring 1,542 us" in text


def test_global_ranktable_and_stdout_on_gpu_are_usage_errors(monkeypatch, capsys, tmp_path):
    # fresh user's findings 3 and 17: --global-ranktable gave RTC003 "internal error";
    # --stdout of a two-job file said "the file has 2 jobs" instead of "no rank table"
    from conftest import run_main

    path = str(EXAMPLES / "gpu-pd-h100.rtc")
    out = tmp_path / "d"
    assert run_main(monkeypatch, "compile", path, "--out-dir", str(out),
                    "--global-ranktable") == 2
    err = capsys.readouterr().err
    assert "error[RTC002]: --global-ranktable: hardware hgx-h100 is an NVIDIA GPU server" in err
    assert "RTC003" not in err and not out.exists()
    assert run_main(monkeypatch, "compile", path, "--stdout") == 2
    err = capsys.readouterr().err
    assert "NCCL has no rank table to write with -o / --stdout" in err and "2 jobs" not in err


def test_compile_summary_names_the_kinds_it_wrote(monkeypatch, capsys, tmp_path):
    # fresh user's finding 17: "env, launch, preflight, calibration, plan" on GPU, where
    # no calibrate.sh is written
    from conftest import run_main

    out = tmp_path / "d"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "gpu-pd-h100.rtc"), "--out-dir",
                    str(out), "--no-diagrams") == 0
    err = capsys.readouterr().err
    assert f"rtc: wrote 8 files to {out}: 2 env, 2 launch, 1 proxy, 2 preflight, 1 plan\n" in err
    assert not (out / "calibrate.sh").exists() and "calibration" not in err
    out = tmp_path / "m"
    assert run_main(monkeypatch, "compile", str(EXAMPLES / "pd-mindie-a2.rtc"), "--out-dir",
                    str(out), "--no-diagrams", "--global-ranktable") == 0
    assert (f"19 files to {out}: 4 env, 4 launch, 4 preflight, 1 calibration, 1 plan, "
            "1 global rank table, 4 MindIE config\n") in capsys.readouterr().err


_THREE = """cluster c {{
  hardware hgx-h100
}}
server a {{
  host 10.0.0.1
  devices 0..7
  ib_hca mlx5_0
}}
server b {{
  host 10.0.0.2
  devices 0..7
  ib_hca mlx5_0
}}
server c {{
  host 10.0.0.3
  devices 0..7
  ib_hca mlx5_0
}}
job j {{
  servers {servers}
  {sizes}
  cost_model qwen3-32b
}}
"""


@pytest.mark.parametrize("servers,sizes,want", [
    ("a, b, c", "tp 8\n  pp 3", None),
    ("a, b, c", "dp 3\n  tp 8", None),
    ("a, b", "tp 16", "the TP group 0..15: 16 GPUs on 2 servers, ib-ndr x 1 NIC per server"),
])
def test_nccl_note_only_for_a_cross_server_allreduce_with_the_declared_nics(servers, sizes,
                                                                          want):
    # fresh user's finding 12: "all 24 GPUs on 3 servers" for TP8 x PP3 and DP3 (no
    # AllReduce across servers), and "ib-ndr x 8 NICs" where each server has ib_hca mlx5_0
    from rtc.cost.jobs import cost_jobs
    from rtc.report.cost_report import cost_text

    r = compile_text(_THREE.format(servers=servers, sizes=sizes), "t.rtc")
    text = cost_text(cost_jobs(r.topology, list(r.topology.jobs), ("decode",)))
    notes = [line for line in text.splitlines() if "NCCL AllReduce across servers" in line]
    assert notes == ([] if want is None else [notes[0]]) and (want is None or want in notes[0])
    # finding 17: NCCL's words on GPUs, not HCCL's
    assert "hccl_test" not in text and "mesh" not in text and "nccl-tests" in text


def test_cost_json_on_gpu_names_nccl_tests():
    from rtc.cost.jobs import cost_jobs
    from rtc.report.cost_report import cost_document

    topo = compile_file(str(EXAMPLES / "gpu-h100-2node-dp2-tp8.rtc")).topology
    doc = cost_document(cost_jobs(topo, list(topo.jobs), ("decode",)), "x.rtc")
    assert "nccl-tests" in doc["limits"] and "hccl_test" not in json.dumps(doc)
    algos = {g["op"]: g["algorithm"] for g in doc["jobs"][0]["phases"][0]["groups"]}
    assert algos["AllReduce"] == "NCCL nvls" and algos["AllGather"] == "NCCL"


def test_rtc444_of_a_moved_proxy_port_reads_right_and_says_how_to_move_it():
    # fresh user's finding 15: "the default the prefill/decode proxy's port 8192 ..." and
    # a hint to "write them in the job", though no attribute sets the proxy's port
    text = (EXAMPLES / "gpu-pd-h100.rtc").read_text().replace("  tp 8\n", "  tp 8\n  port 8192\n", 1)
    [d] = [d for d in compile_text(text, "p.rtc").diagnostics if d.code == "RTC444"]
    assert d.message.startswith("job prefill: the prefill/decode proxy's default port 8192 "
                                "lies in job prefill's vLLM API server (--port) 8192; rtc "
                                "chose the prefill/decode proxy's port 8193")
    assert "the default the" not in d.message and "write" not in d.hint
    assert "the proxy's port has no attribute" in d.hint and "the job's `port`" in d.hint
