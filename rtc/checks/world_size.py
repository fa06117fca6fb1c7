"""A job's parallel sizes against the devices it is given."""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule
from rtc.textfmt import plural

WORLD_SIZE = rule("RTC210", "world-size-mismatch", "error",
                  "TP*PP*PCP*DP differs from the number of devices given to the job.", """
    What: e.g. `dp 2`, `tp 8` (world 16) on a job with 8 devices.
    Why: vLLM slices ASCEND_RT_VISIBLE_DEVICES per DP engine; too few devices fail with
    "Error setting ASCEND_RT_VISIBLE_DEVICES: local range ...", too many leave NPUs idle
    and the rank table names ranks that never join, so HCCL init waits until
    HCCL_CONNECT_TIMEOUT.
    Example: `servers atlas-01` with `dp 2` and `tp 8`.
    Fix: give the job dp*pp*pcp*tp devices, or change the sizes.""")


#: Attributes the world size and the device count depend on.
SIZE_INPUTS = frozenset({"dp", "tp", "pp", "pcp", "servers", "on"})


def mismatched(job) -> bool:
    """True when RTC210 fires for ``job`` (its world size differs from its devices): the
    checks that walk its ranks stand down then instead of adding knock-on errors."""
    return bool(job.placements) and not job.incomplete & SIZE_INPUTS \
        and job.device_count != job.world_size


def check(topo: Topology, plan: Plan):
    """RTC210 for each job whose dp*pp*pcp*tp differs from its device count (a job with
    a size or server reference that did not parse or resolve is not judged: that was
    reported already, and judging the defaults would give wrong advice such as "tp 1")."""
    for job in topo.jobs:
        if mismatched(job):
            n = job.device_count
            world = job.world_size
            sizes = f"dp {job.dp} x pp {job.pp} x pcp {job.pcp} x tp {job.tp}"
            replica = job.tp * job.pp * job.pcp
            if n % replica == 0:
                hint = (f"with {plural(n, 'device')} use dp {n // replica} (replica of "
                        f"{replica} = tp {job.tp} x pp {job.pp} x pcp {job.pcp}), or change "
                        "the devices")
            else:
                hint = (f"{plural(n, 'device')} {'is' if n == 1 else 'are'} not a whole "
                        f"number of replicas of {replica}; give the job a multiple of "
                        f"{replica} devices")
            yield error(WORLD_SIZE, f"job {job.name} needs {plural(world, 'device')} "
                        f"({sizes}) but is given {n}{_uneven(job)}", job.span,
                        subject=f"job {job.name}",
                        hint=hint)


def _uneven(job) -> str:
    """`` (atlas-01 8, atlas-02 4: ...)`` when the job's servers give it different device
    counts (a Ray worker started with a smaller ``--num-gpus``), else ""."""
    counts = [(p.server.name, len(p.device_ids)) for p in job.placements]
    if len({c for _, c in counts}) < 2:
        return ""
    shown = ", ".join(f"{name} {c}" for name, c in counts[:4])
    more = f" and {len(counts) - 4} more" if len(counts) > 4 else ""
    return f" ({shown}{more}: its nodes offer different device counts)"

#: The rules this module reports (collected by rtc.catalogue).
RULES = (WORLD_SIZE,)
