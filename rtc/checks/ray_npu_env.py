"""Ray on Ascend NPUs as the scripts launch it (RTC710): a node that runs ``ray start``
for a vLLM job on an NPU preset without ``RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES``.

Ray's NPU accelerator manager (ray-project/ray python/ray/_private/accelerators/npu.py,
``NPUAcceleratorManager``, ``NOSET_ASCEND_RT_VISIBLE_DEVICES_ENV_VAR``) sets each actor's
``ASCEND_RT_VISIBLE_DEVICES`` to the one NPU Ray gave it unless that variable is set; the
vllm-ascend worker then selects device ``local_rank`` inside that one-device list and CANN
stops with "Set visible device failed, invalid device=1, input visible devices:1"
(vllm-ascend issues 167 and 168, 2025). vllm-ascend's multi-node Ray tutorial exports the
variable on every node before ``ray start``; rtc's own Ray launches do too
(:func:`rtc.plan.launch._ray`). Only lifted scripts are checked: rtc's plan always sets it.
"""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

NOSET = "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"

RAY_NPU = rule("RTC710", "ray-npu-visible-devices", "error",
               "A Ray node of an NPU job starts without RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES.", """
    What: a script runs `ray start` for a vLLM job on Ascend NPUs and does not export
    RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES (to 1) before it.
    Why: Ray then sets every worker actor's ASCEND_RT_VISIBLE_DEVICES to the single NPU it
    assigned (ray/_private/accelerators/npu.py); vllm-ascend picks device local_rank in
    that one-NPU list and the worker fails with "Set visible device failed, invalid
    device=1, input visible devices:1" (vllm-ascend issues 167, 168).
    Example: the head exports ASCEND_RT_VISIBLE_DEVICES=0,...,15 and runs `ray start
    --head --num-gpus=16` without the variable.
    Fix: `export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1` on every node before
    `ray start` (vllm-ascend's multi-node Ray tutorial does).""")


def _ray_start(nl):
    """The ``ray start`` process of a node launch, or None."""
    return next((p for p in nl.procs if p.words()[:2] == ["ray", "start"]), None)


def check(topo: Topology, plan: Plan):
    if topo.preset.is_gpu:
        return
    for jl in plan.launches.values():
        if jl.origin != "script" or jl.job.framework != "vllm":
            continue
        for nl in jl.nodes:
            proc = _ray_start(nl)
            env = dict(nl.env)
            if proc is None or str(env.get(NOSET, "")).strip() not in ("", "0", "false"):
                continue
            yield error(RAY_NPU, f"job {jl.job.name}: {nl.server.name} runs `ray start` "
                        f"without {NOSET}=1: Ray sets each worker's ASCEND_RT_VISIBLE_DEVICES "
                        "to one NPU and vllm-ascend's workers then open a device outside it",
                        proc.spans.get("") or jl.job.span,
                        subject=f"job {jl.job.name}, server {nl.server.name}",
                        hint=f"export {NOSET}=1 before `ray start` on every node")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (RAY_NPU,)
