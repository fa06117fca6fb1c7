"""Preflight scripts under stub hccn_tool / sysctl, and `rtc preflight report` on result
sets: generated end to end, and recorded ones in tests/data/preflight/ (all good, one NPU
unreachable, one link down, one IP mismatch).

RTC_UPDATE_GOLDEN=1 rewrites the recorded sets from tests/data/preflight/plan.rtc (the
all-good run through the stubs, then one edit each)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES, TESTS, run_rtc
from stubs import run_script

DATA = TESTS / "data" / "preflight"
SETS = ("all-good", "unreachable", "link-down", "ip-mismatch")


def compile_to(tmp: Path, src: Path) -> Path:
    out = tmp / "build"
    res = run_rtc("compile", str(src), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    return out


def planned_answers(out: Path, tmp: Path) -> dict:
    """server -> folder of canned hccn_tool answers equal to the plan (ip, gateway)."""
    plan = json.loads((out / "plan.json").read_text())
    dirs = {}
    for s in plan["servers"]:
        d = tmp / f"canned-{s['name']}"
        d.mkdir(exist_ok=True)
        for dev in s["devices"]:
            i = dev["device_id"]
            (d / f"{i}_ip").write_text(f"ipaddr:{dev['device_ip']}\nnetmask:255.255.255.254\n")
            (d / f"{i}_gateway").write_text(f"default gateway:{dev['gateway']}, Iface:eth{i}\n")
        dirs[s["name"]] = d
    return dirs


#: HCCL Test built (stub all_reduce_test under stub mpirun, printing a 2-NPU sweep).
HCCL_TEST = {"HCCL_TEST_BIN": str(TESTS / "bin-stubs"),
             "RTC_STUB_HCCL_OUTPUT": str(DATA / "all_reduce_test-2p.txt")}


def run_preflight(out: Path, tmp: Path, servers, results: Path, env=None) -> dict:
    canned = planned_answers(out, tmp)
    calls = {}
    for s in servers:
        e = {"RTC_STUB_HCCN_DIR": str(canned[s]), **HCCL_TEST}
        e.update((env or {}).get(s, {}))
        proc, got = run_script(out / f"preflight-{s}.sh", str(results / s), tmp=tmp, env=e)
        assert proc.returncode == 0, proc.stderr
        calls[s] = got
    return calls


def test_d1_preflight_argv_and_clean_report(tmp_path: Path):
    out = compile_to(tmp_path, EXAMPLES / "a2-2node-dp2-tp8.rtc")
    results = tmp_path / "results"
    calls = run_preflight(out, tmp_path, ["atlas-01", "atlas-02"], results)
    hccn = [c.argv for c in calls["atlas-01"] if c.name == "hccn_tool"]
    want = []
    for flag in ("-link", "-net_health"):
        want += [["-i", str(d), flag, "-g"] for d in range(8)]
    want.sort()
    base = [a for a in hccn if a[2] in ("-link", "-net_health")]
    assert sorted(base) == want
    assert sorted(a for a in hccn if a[2] == "-ip") == [["-i", str(d), "-ip", "-g"] for d in range(8)]
    assert sorted(a for a in hccn if a[2] == "-gateway") == \
        [["-i", str(d), "-gateway", "-g"] for d in range(8)]
    pings = sorted(a for a in hccn if a[2] == "-ping")
    peers = [f"6.0.2.{17 + 2 * k}" for k in range(8)]
    assert pings == sorted(["-i", str(d), "-ping", "-g", "address", ip]
                           for d in range(8) for ip in peers)
    assert [c.argv for c in calls["atlas-01"] if c.name == "sysctl"] == \
        [["-n", "net.ipv4.ip_local_reserved_ports"]]
    files = sorted(p.name for p in (results / "atlas-01").iterdir())
    assert "npu3_link.txt" in files and "npu0_ping_6.0.2.17.txt" in files
    assert (results / "atlas-01" / "npu3_link.txt").read_text() == \
        "$ hccn_tool -i 3 -link -g\nlink status: UP\n"
    res = run_rtc("preflight", "report", str(results / "atlas-01"), str(results / "atlas-02"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "64/64" in res.stdout


def test_report_finds_link_down_unreserved_ports_and_failed_checks(tmp_path: Path):
    out = compile_to(tmp_path, DATA / "plan.rtc")
    results = tmp_path / "results"
    canned = tmp_path / "broken-b"
    canned.mkdir()
    (canned / "1_link").write_text("link status: DOWN\n")
    (canned / "0_net_health").write_text("exit 3\nhccn_tool: device 0 not found\n")
    run_preflight(out, tmp_path, ["a"], results,
                  env={"a": {"RTC_STUB_RESERVED_PORTS": "50000-50031"}})
    proc, _ = run_script(out / "preflight-b.sh", str(results / "b"), tmp=tmp_path,
                         env={"RTC_STUB_HCCN_DIR": str(canned), **HCCL_TEST})
    assert proc.returncode == 0
    res = run_rtc("preflight", "report", str(results / "a"), str(results / "b"),
                  "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    codes = sorted(d["code"] for d in doc["diagnostics"])
    # b: link of NPU 1 down, NPU 0 health unknown (exit 3), ip/gateway of the stub
    # defaults differ from the plan; a: HCCL ports not reserved
    assert "RTC560" in codes and "RTC565" in codes and "RTC566" in codes and "RTC562" in codes
    assert doc["matrix"]["servers"] == ["a", "b"]


def test_report_on_folder_without_expectations(tmp_path: Path):
    res = run_rtc("preflight", "report", str(tmp_path))
    assert res.returncode == 1
    assert "RTC568" in res.stderr


def make_sets(tmp: Path) -> None:
    """Write the recorded result sets (run this file as a script)."""
    out = compile_to(tmp, DATA / "plan.rtc")
    good = DATA / "all-good"
    shutil.rmtree(good, ignore_errors=True)
    run_preflight(out, tmp, ["a", "b"], good)
    edits = {
        "unreachable": ("a/npu1_ping_6.0.2.19.txt",
                        "$ hccn_tool -i 1 -ping -g address 6.0.2.19\ndevice 1 PING 6.0.2.19\n"
                        "3 packets transmitted, 0 received, 100.00% packet loss\n"),
        "link-down": ("b/npu1_link.txt", "$ hccn_tool -i 1 -link -g\nlink status: DOWN\n"),
        "ip-mismatch": ("a/npu0_ip.txt", "$ hccn_tool -i 0 -ip -g\nipaddr:6.0.2.101\n"
                        "netmask:255.255.255.254\n"),
    }
    for name, (rel, text) in edits.items():
        shutil.rmtree(DATA / name, ignore_errors=True)
        shutil.copytree(good, DATA / name)
        (DATA / name / rel).write_text(text)


if __name__ == "__main__":
    # Regenerate the recorded result sets: python tests/preflight/test_preflight.py
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        make_sets(Path(tmp))


@pytest.mark.parametrize("name,code,where", [
    ("all-good", None, None),
    ("unreachable", "RTC564", "npu1_ping_6.0.2.19.txt"),
    ("link-down", "RTC560", "npu1_link.txt"),
    ("ip-mismatch", "RTC562", "npu0_ip.txt"),
])
def test_recorded_result_sets(name: str, code: str | None, where: str | None):
    folders = [str(DATA / name / s) for s in ("a", "b")]
    res = run_rtc("preflight", "report", *folders, "--format", "json")
    doc = json.loads(res.stdout)
    got = [(d["code"], Path(d["span"]["file"]).name) for d in doc["diagnostics"]]
    if code is None:
        assert res.returncode == 0, res.stderr
        assert got == []
        assert {(p["from"], p["to"], p["ok"], p["planned"]) for p in doc["matrix"]["pairs"]} == \
            {("a", "b", 4, 4), ("b", "a", 4, 4)}
    else:
        assert res.returncode == 1
        assert got == [(code, where)]
    text = run_rtc("preflight", "report", *folders)
    assert "reachability" in text.stdout
    if name == "unreachable":
        assert "3/4" in text.stdout
        assert doc["diagnostics"][0]["span"]["line"] == 3   # the packet-loss line


def test_recorded_all_good_matches_a_fresh_run(tmp_path: Path):
    out = compile_to(tmp_path, DATA / "plan.rtc")
    results = tmp_path / "results"
    run_preflight(out, tmp_path, ["a", "b"], results)
    for s in ("a", "b"):
        want = sorted(p.name for p in (DATA / "all-good" / s).iterdir())
        assert sorted(p.name for p in (results / s).iterdir()) == want
        for n in want:
            assert (results / s / n).read_bytes() == (DATA / "all-good" / s / n).read_bytes(), n


@pytest.mark.parametrize("header", [False, True])
def test_empty_captures_give_one_finding_per_server_and_kind(tmp_path: Path, header: bool):
    """Empty captures (nothing, or only the `$ command` line): one RTC566 per server and
    kind with a count, no RTC489 per file, and empty pings are "did not run", not RTC564."""
    results = tmp_path / "r"
    shutil.copytree(DATA / "all-good", results)
    for f in results.glob("*/npu*.txt"):
        first = f.read_text().splitlines()[0] + "\n"
        f.write_text(first if header else "")
    res = run_rtc("preflight", "report", str(results / "a"), str(results / "b"),
                  "--format", "json")
    assert res.returncode == 1
    diags = json.loads(res.stdout)["diagnostics"]
    codes = sorted(d["code"] for d in diags)
    assert codes == ["RTC566"] * 4, [d["message"] for d in diags]
    msgs = sorted(d["message"] for d in diags)
    assert any(m.startswith("8 hccn_tool captures are empty on a: the preflight did not run")
               for m in msgs), msgs
    assert any(m.startswith("4 ping captures are empty on b: the pings did not run")
               for m in msgs), msgs
