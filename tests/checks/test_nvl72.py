"""NVL72-class NVLink domains: TP across the trays of one domain (`super_pod` on a
gb200-nvl72 preset) is not cross-server traffic; across two domains it is, with the cost."""

from __future__ import annotations

from conftest import EXAMPLES
from rtc.api import compile_text
from rtc.model.presets import presets

EXAMPLE = EXAMPLES / "gpu-gb200-nvl72-tp8.rtc"


def _codes(text: str) -> list:
    return [d for d in compile_text(text, "nvl72.rtc").diagnostics]


def test_tp_across_trays_of_one_nvlink_domain_is_no_finding():
    assert _codes(EXAMPLE.read_text()) == []


def test_tp_across_two_nvlink_domains_is_cross_server_with_its_cost():
    text = EXAMPLE.read_text()
    at = text.rindex("super_pod nvl72-a")
    diags = _codes(text[:at] + "super_pod nvl72-b" + text[at + len("super_pod nvl72-a"):])
    assert sorted(d.code for d in diags) == ["RTC310", "RTC312"]
    cost = next(d for d in diags if d.code == "RTC312").message
    assert "67 us over ib-ndr" in cost and "14 us over nvlink5" in cost


def test_a_tray_without_a_domain_is_cross_server():
    text = EXAMPLE.read_text().replace("  super_pod nvl72-a\n", "", 1)
    assert "RTC310" in [d.code for d in _codes(text)]


def test_new_gpu_presets_name_their_source():
    for name in ("gb200-nvl72", "gb300-nvl72", "l40s-pcie", "gpu-vm-1"):
        p = presets()[name]
        assert p.is_gpu and p.source
    assert presets()["gb200-nvl72"].super_pod and presets()["gb200-nvl72"].devices_per_server == 4


# ------------------------------------------------------------ rtc lint of the compiled scripts


def _scripts(tmp_path, text: str) -> list[str]:
    """`rtc compile` of ``text`` into tmp_path/out; the launch scripts (tray-*.sh) a user
    lints (their env files are read through the `.` line)."""
    from rtc.api import compile_text
    from rtc.emit.bundle import build_bundle

    r = compile_text(text, "nvl72.rtc")
    assert r.ok, [d.message for d in r.diagnostics]
    out = tmp_path / "out"
    out.mkdir(parents=True)
    b = build_bundle(r.topology, r.plan, r.topology.jobs, {})
    for name, body, _mode in b.outputs:
        (out / name).write_text(body)
    return sorted(str(p) for p in out.glob("tray-*.sh"))


def _two_domains(text: str) -> str:
    at = text.rindex("super_pod nvl72-a")
    return text[:at] + "super_pod nvl72-b" + text[at + len("super_pod nvl72-a"):]


def test_the_env_files_name_the_nvlink_domain(tmp_path):
    _scripts(tmp_path, EXAMPLE.read_text())
    env = (tmp_path / "out" / "tray-02.env").read_text().splitlines()
    assert env[-1] == "export RTC_NVLINK_DOMAIN=nvl72-a"
    assert env[-2].startswith("# NVLink domain of tray-02 (its super_pod; the nodes' "
                              "nvidia.com/gpu.clique)")


def test_lint_tp_across_trays_of_one_domain_is_no_cross_server_finding(tmp_path):
    from rtc.api.linting import lint_files

    rep = lint_files(_scripts(tmp_path, EXAMPLE.read_text()))
    got = sorted((d.code, d.severity.name) for d in rep.diagnostics)
    # no RTC472 "add ib_hca to the servers": the scripts' NCCL_IB_HCA is what there is
    assert got == [("RTC464", "NOTE")]
    guessed = next(d for d in rep.diagnostics if d.code == "RTC464")
    assert guessed.message == (
        "the scripts export CUDA_VISIBLE_DEVICES / NCCL variables and RTC_NVLINK_DOMAIN: "
        "checked as GB200 NVL72 compute trays (gb200-nvl72, inferred from RTC_NVLINK_DOMAIN; "
        "4 GPUs each as the scripts use them) in NVLink domain nvl72-a, with the HCAs their "
        "NCCL_IB_HCA names (mlx5_0, mlx5_1, mlx5_2, mlx5_3); RTC313 (islands inside a tray) "
        "is skipped")
    assert rep.topology.preset.name == "gb200-nvl72"
    assert {s.super_pod_id for s in rep.topology.servers} == {"nvl72-a"}


def test_lint_tp_across_two_domains_is_the_finding_with_its_cost(tmp_path):
    from rtc.api.linting import lint_files

    rep = lint_files(_scripts(tmp_path, _two_domains(EXAMPLE.read_text())))
    found = {d.code: d for d in rep.diagnostics if d.code in ("RTC310", "RTC312")}
    assert sorted(found) == ["RTC310", "RTC312"]
    where = "in NVLink domains nvl72-a (tray-01), nvl72-b (tray-02)"
    assert where in found["RTC310"].message and where in found["RTC312"].message
    assert found["RTC310"].hint.startswith("keep each TP group inside one NVLink domain;")
    assert found["RTC312"].span.file.endswith("tray-01.sh")
    # without --hardware: the tray rtc infers from RTC_NVLINK_DOMAIN gives rtc check's cost
    # (it was 240 us over eth-100g vs 19 us over nvlink-bridge with the generic GPU tray)
    [check312] = [d for d in _codes(_two_domains(EXAMPLE.read_text())) if d.code == "RTC312"]
    cost = "67 us over ib-ndr (busbw 170 GB/s); tp 4 inside one island would take 14 us " \
           "over nvlink5"
    assert cost in found["RTC312"].message and cost in check312.message
    # RTC312 names RTC310 (which shows the ranks and the layout) instead of repeating it
    assert "(RTC310)" in found["RTC312"].message and " ranks " not in found["RTC312"].message
    assert found["RTC312"].hint.startswith("the fix is RTC310's (keep each TP group inside "
                                           "one NVLink domain)")
    assert "`policy cross-node-tp allow`" in found["RTC310"].hint
    assert "cross_node_tp" not in found["RTC310"].hint + found["RTC312"].hint


def test_lint_with_the_hardware_gives_the_cost_rtc_check_gives(tmp_path):
    from rtc.api.linting import lint_files

    text = _two_domains(EXAMPLE.read_text())
    rep = lint_files(_scripts(tmp_path, text), hardware="gb200-nvl72")
    [lint312] = [d for d in rep.diagnostics if d.code == "RTC312"]
    [check312] = [d for d in _codes(text) if d.code == "RTC312"]
    cost = "67 us over ib-ndr (busbw 170 GB/s); tp 4 inside one island would take 14 us " \
           "over nvlink5"
    assert cost in lint312.message and cost in check312.message
    assert lint312.hint == check312.hint and "NVLink domain" in lint312.hint
    one = lint_files(_scripts(tmp_path / "one", EXAMPLE.read_text()), hardware="gb200-nvl72")
    assert not [d for d in one.diagnostics if d.code in ("RTC310", "RTC312", "RTC313")]


def test_lint_with_a_prefix_nccl_ib_hca_names_no_hcas_and_asks_for_no_ib_hca(tmp_path):
    from rtc.api.linting import lint_files

    scripts = _scripts(tmp_path, EXAMPLE.read_text())
    for env in (tmp_path / "out").glob("*.env"):
        env.write_text(env.read_text().replace("'=mlx5_0,mlx5_1,mlx5_2,mlx5_3'", "mlx5"))
    rep = lint_files(scripts)
    assert [d.code for d in rep.diagnostics] == ["RTC464"]
    assert "NCCL_IB_HCA names" not in rep.diagnostics[0].message
    assert {s.ib_hca for s in rep.topology.servers} == {None}


def test_lint_of_scripts_with_a_tray_without_domain_keeps_rtc312_skipped(tmp_path):
    from rtc.api.linting import lint_files

    scripts = _scripts(tmp_path, EXAMPLE.read_text())
    env = tmp_path / "out" / "tray-02.env"
    env.write_text(env.read_text().replace("export RTC_NVLINK_DOMAIN=nvl72-a\n", ""))
    rep = lint_files(scripts)
    codes = [d.code for d in rep.diagnostics]
    assert "RTC310" in codes and "RTC312" not in codes   # islands unknown: RTC464 says so
