"""Values of environment variables rtc knows the meaning of (RTC458): each `env` line of a
job for a variable in :data:`rtc.network.env.ENV_VALUES` must hold a value HCCL accepts.
(``HCCL_IF_BASE_PORT`` and ``HCCL_HOST_SOCKET_PORT_RANGE`` are judged with the port plan,
RTC441; interface variables by RTC452-RTC454.) Ranges that differ by chip (HCCL_RDMA_TIMEOUT:
5..20 on A2 / A3, 5..24 on 910A) are taken for the preset's chip."""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.network.env import ENV_VALUES, JUDGED_ELSEWHERE, env_value_problem
from rtc.plan import Plan
from rtc.rules import rule

BAD_ENV_VALUE = rule("RTC458", "bad-env-value", "error",
                     "An HCCL environment variable has a value HCCL does not accept.", """
    What: e.g. `env HCCL_BUFFSIZE = lots`, `env HCCL_CONNECT_TIMEOUT = 60` (below its 120 s
    minimum), `env HCCL_RDMA_TC = 130` (not a multiple of 4), `env HCCL_INTER_HCCS_DISABLE
    = yes`.
    Why: HCCL checks these when the communicator is created and fails on a value out of
    range or of the wrong type, on every rank; the job dies at start-up with an
    environment-variable error in the plog.
    An HCCL_BUFFSIZE whose two buffers (2 x value MB) exceed the device's HBM is refused
    too: no communicator can allocate them.
    Example: `env HCCL_BUFFSIZE = 1GB` (the unit is MB: write 1024), or
    `env HCCL_BUFFSIZE = 99999999999999` on a 64 GB 910B.
    Fix: use a value in the documented range (the message gives it).""")


def check(topo: Topology, plan: Plan):
    chip = topo.preset.chip
    for job in topo.jobs:
        for line in job.env:
            if line.name in JUDGED_ELSEWHERE:
                continue
            problem = env_value_problem(line.name, line.value, chip) \
                if line.name != "HCCL_ALGO" else _algo_problem(line.value)
            if not problem and line.name == "HCCL_BUFFSIZE":
                problem = _buffsize_problem(line.value, topo.preset.hbm_gb)
            if problem:
                r = ENV_VALUES[line.name]
                yield error(BAD_ENV_VALUE, f"job {job.name}: env {line.name}={line.value}: "
                            f"{line.name} {problem}", line.span, subject=f"job {job.name}",
                            hint=f"see {r.source}" if r.source else None)


def _buffsize_problem(value: str, hbm_gb: float) -> str | None:
    """Why an ``HCCL_BUFFSIZE`` HCCL's range accepts (>= 1 MB) still cannot work: the two
    buffers of one communicator (2 x value MB) exceed the device's whole HBM (``hbm_gb``
    of the hardware preset; 0 = unknown, not judged), so HCCL cannot allocate them when
    the first communicator is created. None otherwise."""
    from rtc.network.env import whole_number

    mb = whole_number(value.strip())
    if mb is None or hbm_gb <= 0 or 2 * mb * 1024 ** 2 <= hbm_gb * 1e9:
        return None
    return (f"is {mb:,} MB per buffer: the 2 buffers of one communicator take "
            f"{2 * mb * 1024 ** 2 / 1e9:,.0f} GB, more than the device's {hbm_gb:g} GB HBM "
            "(HCCL cannot allocate them; the unit is MB, the default 200)")


def _algo_problem(value: str) -> str | None:
    """Why an ``HCCL_ALGO`` value is refused (rtc.cost.hccl_algo.parse_hccl_algo, which
    follows HCCL's ParseAlgoString), or None."""
    from rtc.cost.errors import HcclAlgoError
    from rtc.cost.hccl_algo import parse_hccl_algo

    try:
        parse_hccl_algo(value)
    except HcclAlgoError as exc:
        return "is not accepted: " + str(exc).split(": ", 1)[-1]
    return None


#: The rules this module reports (collected by rtc.catalogue).
RULES = (BAD_ENV_VALUE,)
