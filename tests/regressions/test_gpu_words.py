"""Findings about GPU clusters speak of GPUs: RTC304 said "leaves 4 NPUs idle" for a job
on an 8-GPU server (seen by a fresh user on a Slurm script), and added the rank table's
numbering, which GPU clusters do not have."""

from __future__ import annotations

from rtc.api import compile_text

TEXT = """cluster c {
  hardware %s
}
server a {
  host 10.0.0.1
}
server b {
  host 10.0.0.2
}
job serve {
  on a devices 0..7 dp_local 1
  on b devices 0..7 dp_local 1
  tp 4
}
"""


def _idle(hardware: str):
    res = compile_text(TEXT % hardware, "c.rtc")
    return [d.message for d in res.diagnostics if d.code == "RTC304"]


def test_idle_devices_are_gpus_on_gpu_servers():
    gpu = _idle("hgx-h100")
    assert gpu[0].startswith("job serve leaves 4 GPUs of a idle (devices 4..7): dp_local 1 x 4")
    assert all("rank table" not in m for m in gpu)


def test_idle_devices_are_npus_on_ascend_servers():
    npu = _idle("atlas-800t-a2")
    assert npu[0].startswith("job serve leaves 4 NPUs of a idle (devices 4..7)")
    assert "the rank table still numbers them" in npu[0]
