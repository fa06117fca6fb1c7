"""`rtc compile --out-dir` into a folder that holds files rtc did not write there (a
hand-written hccl.json or launch script) refuses to replace them without --force, as
`rtc import -o` does; and --no-diagrams after another plan's diagrams removes them (they
would show the other plan). Found by a new user: both used to pass silently."""

from __future__ import annotations

import shutil

import pytest

from conftest import EXAMPLES, run_rtc
from rtc.outputs.files import MANIFEST

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
PD = EXAMPLES / "pd-a3.rtc"


def _own_files(folder):
    folder.mkdir()
    (folder / "hccl.json").write_text('{"mine": true}\n')
    (folder / "atlas-01.sh").write_text("# my launch\n")
    (folder / "notes.txt").write_text("not an output name\n")


def test_files_rtc_did_not_write_are_refused_and_nothing_is_written(tmp_path):
    out = tmp_path / "mine"
    _own_files(out)
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 2, res.stderr
    assert "error[RTC002]" in res.stderr
    assert f"--out-dir {out} holds atlas-01.sh, hccl.json, which rtc did not write" in res.stderr
    assert "--force replaces them" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["atlas-01.sh", "hccl.json", "notes.txt"]
    assert (out / "hccl.json").read_text() == '{"mine": true}\n'


def test_force_replaces_them_and_keeps_other_files(tmp_path):
    out = tmp_path / "mine"
    _own_files(out)
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams", "--force")
    assert res.returncode == 0, res.stderr
    assert '"server_count": "2"' in (out / "hccl.json").read_text()
    assert (out / "notes.txt").read_text() == "not an output name\n"
    listed = (out / MANIFEST).read_text().split()
    assert "hccl.json" in listed and "notes.txt" not in listed


def test_the_files_of_an_earlier_compile_are_rtc_s_own(tmp_path):
    out = tmp_path / "build"
    assert run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams").returncode == 0
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr


def test_k8s_manifests_are_refused_over_a_hand_written_one(tmp_path):
    pytest.importorskip("kubernetes_validate")
    out = tmp_path / "k8s"
    out.mkdir()
    (out / "lws-deepseek.yaml").write_text("# my own LeaderWorkerSet\n")
    res = run_rtc("compile", str(D1), "--target", "k8s", "--out-dir", str(out))
    assert res.returncode == 2 and "lws-deepseek.yaml, which rtc did not write" in res.stderr
    assert (out / "lws-deepseek.yaml").read_text() == "# my own LeaderWorkerSet\n"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
def test_no_diagrams_removes_the_diagrams_of_an_earlier_plan(tmp_path):
    out = tmp_path / "build"
    assert run_rtc("compile", str(PD), "--out-dir", str(out)).returncode == 0
    assert (out / "topology.svg").exists()
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    assert not (out / "topology.svg").exists() and not (out / "groups.svg").exists()
    assert "an earlier plan wrote" in res.stderr
    assert "topology.svg" not in (out / MANIFEST).read_text().split()
