"""The bandwidth part of an Ascend server's ``preflight-<server>.sh``
(:mod:`rtc.emit.preflight_script`): one AllReduce sweep, 8 B .. 1 GiB doubling, over the
NPUs the plan uses on the server, measured with what the host has.

1. HCCL Test (CANN ``tools/hccl_test``, built): ``$HCCL_TEST_BIN/all_reduce_test`` (default
   ``$ASCEND_HOME_PATH/tools/hccl_test/bin``) under MPICH's ``mpirun``, as its docs run it on
   one server: ``mpirun -n N all_reduce_test -b 8 -e 1G -f 2 -p N``; output
   ``all_reduce_test.txt`` (``data_size`` per NPU, ``aveg_time`` us, ``alg_bandwidth``
   GB/s: hiascend.com CANN docs, "HCCL Performance Tester", Result Description).
2. Else, where ``$PYTHON`` (default ``python3``) imports ``torch_npu``: rtc's torch all_reduce
   sweep with the ``hccl`` backend on ``npu`` devices (``all_reduce_sweep.py N npu``; log
   ``torch_all_reduce.txt``, result ``all_reduce_sweep.jsonl``, read by
   :mod:`rtc.inventory.allreduce_sweep`; busbw = algbw * 2(n-1)/n as nccl-tests defines it).
3. Else nothing is measured.

Both runs see the planned NPUs through ``ASCEND_RT_VISIBLE_DEVICES``. A tool that is missing
is a ``skipped.txt`` line (``WHAT<TAB>WHY<TAB>FALLBACK``, ``-`` for none) and a line on
stdout, never a failure of the script. Servers with one NPU in use have no sweep (an
AllReduce of one rank crosses no link).
"""

from __future__ import annotations

import shlex

from rtc.emit.sweep_program import sweep_program
from rtc.plan.gpu_preflight import SWEEP
from rtc.plan.preflight import ServerPreflight

#: The default HCCL Test folder (as in :mod:`rtc.emit.calibrate_script`).
HCCL_TEST_BIN = ("${HCCL_TEST_BIN:-${ASCEND_HOME_PATH:-/usr/local/Ascend/ascend-toolkit/latest}"
                 "/tools/hccl_test/bin}")
#: Result files of an earlier run that this run may not write again (removed first).
STALE = ("skipped.txt", "all_reduce_test.txt", "torch_all_reduce.txt",
         "all_reduce_sweep.jsonl", "all_reduce_sweep.py")


def measured(sp: ServerPreflight) -> bool:
    """True when the server's script measures bandwidth (two NPUs or more in use)."""
    return len(sp.devices) >= 2


def expectation(sp: ServerPreflight, pod: bool = False) -> dict:
    """expect.json's ``bandwidth``: ``npus`` (ranks of the sweep), ``visible_devices`` (the
    ``ASCEND_RT_VISIBLE_DEVICES`` value), ``sizes`` ([smallest, largest] bytes)."""
    return {"npus": len(sp.devices), "visible_devices": _visible(sp, pod),
            "sizes": [8, 1 << 30]}


def _visible(sp: ServerPreflight, pod: bool = False) -> str:
    """The ``ASCEND_RT_VISIBLE_DEVICES`` value of the sweep: the planned device ids on the
    host; ``0..n-1`` in a Kubernetes pod (``pod``), where the device plugin mounts the n
    NPUs it allocated and the runtime numbers them from 0 (the LeaderWorkerSet's pods use
    the same numbering, :mod:`rtc.plan.kubernetes`)."""
    if pod:
        return ",".join(str(i) for i in range(len(sp.devices)))
    return ",".join(str(d.device_id) for d in sp.devices)


def setup_lines() -> list[str]:
    """Variables of the bandwidth part, set with the others at the top of the script."""
    return [f'hccl_test_bin="{HCCL_TEST_BIN}"', 'python="${PYTHON:-python3}"',
            "rm -f " + " ".join(f'"$results/{f}"' for f in STALE)]


def bandwidth_lines(sp: ServerPreflight, pod: bool = False) -> list[str]:
    """HCCL Test when built and ``mpirun`` is there, else the torch_npu sweep when torch_npu
    imports, else ``skipped`` lines (module docstring); ``pod``: container numbering."""
    n, visible = len(sp.devices), _visible(sp, pod)
    args = " ".join([*SWEEP, "-p", str(n)])
    env = f"env ASCEND_RT_VISIBLE_DEVICES={shlex.quote(visible)}"
    label = f"ASCEND_RT_VISIBLE_DEVICES={visible} mpirun -n {n} all_reduce_test {args}"
    torch_label = (f"ASCEND_RT_VISIBLE_DEVICES={visible} $python all_reduce_sweep.py {n} npu "
                   "all_reduce_sweep.jsonl")
    fallback = "torch_npu all_reduce sweep (all_reduce_sweep.jsonl)"
    return ["# AllReduce bandwidth: HCCL Test, else torch_npu, else skipped (skipped.txt)",
            'if [ ! -x "$hccl_test_bin/all_reduce_test" ]; then',
            '  hccl_why="no $hccl_test_bin/all_reduce_test (build CANN tools/hccl_test or '
            'set HCCL_TEST_BIN)"',
            "elif ! command -v mpirun >/dev/null 2>&1; then",
            "  hccl_why='mpirun not found (HCCL Test runs under MPICH mpirun)'",
            "else",
            "  hccl_why=''",
            "fi",
            'if [ -z "$hccl_why" ]; then',
            f"  capture all_reduce_test.txt {shlex.quote(label)} {env} mpirun -n {n} "
            f'"$hccl_test_bin/all_reduce_test" {args}',
            "elif \"$python\" -c 'import torch_npu, torch.distributed' >/dev/null 2>&1; then",
            f'  skipped hccl_test "$hccl_why" {shlex.quote(fallback)}',
            "  cat > \"$results/all_reduce_sweep.py\" <<'RTC_SWEEP'",
            sweep_program().rstrip("\n"), "RTC_SWEEP",
            f'  capture torch_all_reduce.txt "{torch_label}" {env} "$python" '
            f'"$results/all_reduce_sweep.py" {n} npu "$results/all_reduce_sweep.jsonl"',
            "else",
            '  skipped hccl_test "$hccl_why" -',
            "  skipped 'torch_npu all_reduce sweep' \"$python cannot import torch_npu\" -",
            "fi", ""]
