"""`rtc preflight report` on a server without hccn_tool (every hccn_tool call exited 127:
tests/data/preflight/no-hccn-tool/a, a real run of preflight-a.sh with no hccn_tool on
PATH), and on what skipped.txt says: one finding per cause, no knock-on findings made up
from output that is not there."""

from __future__ import annotations

import json
import shutil

from conftest import TESTS, run_rtc

DATA = TESTS / "data" / "preflight"
SET = DATA / "no-hccn-tool"


def _report(*folders, fmt="json"):
    res = run_rtc("preflight", "report", *map(str, folders), "--format", fmt)
    return res, (json.loads(res.stdout) if fmt == "json" else None)


def test_missing_hccn_tool_is_one_finding_per_server_and_no_knock_on():
    res, doc = _report(SET / "a", SET / "b")
    assert res.returncode == 1
    got = [(d["code"], d["severity"], d["span"]["file"].split("/")[-1], d["span"]["line"])
           for d in doc["diagnostics"]]
    assert got == [("RTC566", "error", "npu0_link.txt", 2),
                   ("RTC580", "warning", "skipped.txt", 1)]
    missing = doc["diagnostics"][0]
    assert missing["message"] == (
        "hccn_tool not found (exit 127) on a: the 12 checks that need it were skipped "
        "(link, net health, IP and gateway of NPUs 0, 1; 4 pings to peer NPUs); nothing is "
        "known about these NPUs' links, addresses or reachability")
    assert "HCCN_TOOL=/path/to/hccn_tool" in missing["hint"]
    assert "preflight-a.sh" in missing["hint"] and "-ip -s" not in missing["hint"]
    pairs = {(p["from"], p["to"]): p for p in doc["matrix"]["pairs"]}
    assert pairs[("a", "b")] == {"from": "a", "to": "b", "ok": 0, "planned": 4, "not_run": 4}
    assert pairs[("b", "a")] == {"from": "b", "to": "a", "ok": 4, "planned": 4}


def test_missing_hccn_tool_text_report_is_short_and_marks_pings_not_run():
    res, _ = _report(SET / "a", SET / "b", fmt="text")
    assert "a |    . 0/4?" in res.stdout
    assert "? = some pings did not run" in res.stdout
    assert res.stderr.count("error[") == 1 and res.stderr.count("warning[") == 1
    assert "RTC489" not in res.stderr and "RTC562" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == "rtc: 1 error, 1 warning"


def test_hccn_tool_present_judges_every_capture():
    """The passing side: the same plan with hccn_tool answering (all-good)."""
    res, doc = _report(DATA / "all-good" / "a", DATA / "all-good" / "b")
    assert res.returncode == 0 and doc["diagnostics"] == []
    assert all("not_run" not in p for p in doc["matrix"]["pairs"])


def test_both_sweeps_skipped_is_one_rtc580_naming_both():
    _res, doc = _report(SET / "a")
    [skipped] = [d for d in doc["diagnostics"] if d["code"] == "RTC580"]
    assert skipped["message"] == (
        "a: the AllReduce bandwidth was not measured (hccl_test skipped: no "
        "/usr/local/Ascend/ascend-toolkit/latest/tools/hccl_test/bin/all_reduce_test (build "
        "CANN tools/hccl_test or set HCCL_TEST_BIN); torch_npu all_reduce sweep skipped: "
        "/nonexistent/python cannot import torch_npu)")


def test_a_damaged_skipped_line_is_unreadable_at_its_line(tmp_path):
    folder = tmp_path / "a"
    shutil.copytree(SET / "a", folder)
    with open(folder / "skipped.txt", "a") as f:
        f.write("garbage line no tabs\n")
    res, doc = _report(folder)
    assert res.returncode == 1
    [bad] = [d for d in doc["diagnostics"] if d["code"] == "RTC568"]
    assert bad["message"] == ("a: skipped.txt line 3 cannot be read: 'garbage line no tabs' "
                              "is not WHAT<TAB>WHY<TAB>FALLBACK (1 tab-separated field); what "
                              "it says is not used")
    assert bad["span"]["line"] == 3
    assert not any("garbage" in d["message"] for d in doc["diagnostics"] if d["code"] == "RTC580")


def test_only_a_damaged_skipped_line_is_not_also_no_result(tmp_path):
    folder = tmp_path / "a"
    shutil.copytree(SET / "a", folder)
    (folder / "skipped.txt").write_text("garbage line no tabs\n")
    _res, doc = _report(folder)
    codes = [d["code"] for d in doc["diagnostics"]]
    assert codes == ["RTC566", "RTC568"]


def test_missing_hccn_tool_on_an_8_npu_server_of_d1(tmp_path):
    """The user's case: D1's atlas-01 (8 NPUs, 64 pings) without hccn_tool was 97 errors
    and 130 warnings; now one RTC566 naming the 96 skipped checks, nothing else from them."""
    from conftest import EXAMPLES
    from stubs import run_script
    from test_preflight import HCCL_TEST, compile_to

    out = compile_to(tmp_path, EXAMPLES / "a2-2node-dp2-tp8.rtc")
    res_dir = tmp_path / "results" / "atlas-01"
    proc, _ = run_script(out / "preflight-atlas-01.sh", str(res_dir), tmp=tmp_path,
                         env={"HCCN_TOOL": str(tmp_path / "no-such" / "hccn_tool"),
                              "RTC_STUB_RESERVED_PORTS": "60000-60031", **HCCL_TEST})
    assert proc.returncode == 0, proc.stderr
    res, doc = _report(res_dir)
    assert res.returncode == 1
    assert [d["code"] for d in doc["diagnostics"]] == ["RTC566"]
    assert doc["diagnostics"][0]["message"].startswith(
        "hccn_tool not found (exit 127) on atlas-01: the 96 checks that need it were skipped "
        "(link, net health, IP and gateway of NPUs 0..7; 64 pings to peer NPUs)")
