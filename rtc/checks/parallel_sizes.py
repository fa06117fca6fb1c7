"""Framework rules on parallel sizes (RTC305-RTC306) that the world size alone does not
show: vLLM's decode context parallel size, and Megatron-LM's order string.

* vLLM reuses the TP ranks for DCP: ``ParallelConfig`` requires ``tp % dcp == 0``
  (``vllm/config/parallel.py``, ``_validate_parallel_config``: "tp_size=... must be
  divisible by dcp_size=..."); the newer orthogonal PCP/DCP layout (vllm PR #46570,
  vllm-ascend RFC #12622) also accepts ``dcp == pcp`` and ``dcp == tp * pcp``. A DCP size
  that fits neither makes every ``vllm serve`` of the job exit at start-up.
* Megatron-LM's ``RankGenerator`` takes an order string such as ``tp-cp-ep-dp-pp``: every
  token known, none repeated, and every size above 1 named (``megatron/core/
  parallel_state.py``); rtc's placement records a bad order (and groups fall back to the
  default order) - here it becomes a finding at the ``order`` line.
"""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Job, Topology
from rtc.plan import Plan
from rtc.rules import rule

DCP_SIZE = rule("RTC305", "dcp-size", "error",
                "The decode context parallel size does not fit the tensor parallel size.", """
    What: `dcp` that does not divide `tp` (and, with `pcp` above 1, is neither `pcp` nor
    `tp x pcp`), e.g. `dcp 16` with `tp 8`.
    Why: vLLM reuses the TP ranks for decode context parallelism and rejects the size at
    start-up ("tp_size=8 must be divisible by dcp_size=16"): every server's vllm serve exits.
    Example: `tp 8` and `dcp 16` in one job.
    Fix: use a dcp that divides tp (1, 2, 4, 8 for tp 8).""")
MEGATRON_ORDER = rule("RTC306", "megatron-order", "error",
                      "A Megatron-LM order string is one Megatron rejects.", """
    What: `order` with an unknown token (`xp`), a repeated token, an empty token, or
    without a dimension whose size is above 1 (`order tp-dp` with `pp 2`).
    Why: Megatron's RankGenerator raises at start-up, so the job never starts; rtc's groups
    and placement would otherwise silently use the default order tp-cp-ep-dp-pp.
    Example: `order tp-cp-xp-dp-pp`.
    Fix: write each of tp, cp, ep, dp, pp at most once, every size above 1 included.""")


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        if not job.placements or job.incomplete & {"dp", "tp", "pp", "pcp", "dcp"}:
            continue
        if job.framework == "vllm" and job.dcp > 1 and not dcp_fits(job):
            yield error(DCP_SIZE, f"job {job.name}: dcp {job.dcp} does not divide tp {job.tp}"
                        + (f" and is neither pcp {job.pcp} nor tp x pcp {job.tp * job.pcp}"
                           if job.pcp > 1 else "")
                        + "; vLLM refuses to start", job.span_of("dcp"),
                        subject=f"job {job.name}", hint=_dcp_hint(job))
        if job.framework == "megatron" and "order" not in job.incomplete:
            yield from _order(topo, job)


def dcp_fits(job: Job) -> bool:
    """True when vLLM accepts the job's DCP size (see the module docstring)."""
    if job.tp % job.dcp == 0:
        return True
    return job.pcp > 1 and job.dcp in (job.pcp, job.tp * job.pcp)


def _dcp_hint(job: Job) -> str:
    fits = [d for d in range(1, job.tp + 1) if job.tp % d == 0]
    return "use a dcp that divides tp: " + ", ".join(map(str, fits))


def _order(topo: Topology, job: Job):
    """RTC306 from the placement's record of a bad ``order``."""
    try:
        problems = topo.placement(job).problems
    except ValueError:
        return  # the placement checks report why there is none
    for problem in problems:
        if problem.startswith("order "):
            reason = problem.split(": ", 1)[-1].rsplit("; using ", 1)[0]
            yield error(MEGATRON_ORDER, f"job {job.name}: Megatron-LM refuses order "
                        f"{job.order!r}: {reason}", job.span_of("order"),
                        subject=f"job {job.name}",
                        hint="write each of tp, cp, ep, dp, pp at most once, fastest first, "
                             "every size above 1 included (e.g. tp-cp-ep-dp-pp)")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (DCP_SIZE, MEGATRON_ORDER)
