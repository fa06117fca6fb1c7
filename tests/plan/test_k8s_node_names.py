"""`--target k8s` pins pods with node affinity on `kubernetes.io/hostname` = the server
name, so a server name must be a node's label value: at most 63 characters with
alphanumerics at both ends (apimachinery IsValidLabelValue), and lower case (kubelet labels
a node with its lower-cased host name). Else RTC770 says why, at the job."""

from __future__ import annotations

import pytest

from conftest import run_main
from rtc.plan.kubernetes import node_name_problem

SRC = """
cluster c {
  hardware atlas-800t-a2
}
server NAME {
  host 10.0.0.6
  devices 0..7
  device_ip 6.0.2.1 step 1
}
job j {
  role serve
  framework vllm
  servers NAME
  tp 8
  model "/models/m"
}
"""


@pytest.mark.parametrize("name, bad", [
    ("atlas-01", False), ("node_1.rack", False), ("a" * 63, False),
    ("a" * 64, True), ("atlas-01.", True), ("_atlas", True), ("Atlas-01", True)])
def test_node_name_problem(name, bad):
    assert (node_name_problem(name) is not None) == bad


def test_an_upper_case_server_is_rtc770_and_nothing_is_written(tmp_path, monkeypatch,
                                                                capsys):
    src = tmp_path / "u.rtc"
    src.write_text(SRC.replace("NAME", "Atlas-01"))
    out = tmp_path / "k"
    assert run_main(monkeypatch, "compile", str(src), "--target", "k8s", "--out-dir",
                    str(out)) == 1
    err = capsys.readouterr().err
    assert "error[RTC770]: job j cannot be written as a LeaderWorkerSet: server name " \
           "'Atlas-01' has upper-case letters, and kubelet labels each node with its " \
           "lower-case name" in err
    assert not out.exists()
    src.write_text(SRC.replace("NAME", "atlas-01"))
    assert run_main(monkeypatch, "compile", str(src), "--target", "k8s", "--out-dir",
                    str(out)) == 0
