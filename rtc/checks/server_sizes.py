"""Servers of one rank table with different device counts (RTC217), on hardware where
HCCL requires equal counts (the preset's ``equal_server_sizes``: 910A and generic)."""

from __future__ import annotations

from collections import Counter

from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

UNEQUAL_SERVER_SIZES = rule("RTC217", "unequal-devices-per-server", "error",
                            "Servers of one rank table use different numbers of devices.", """
    What: on hardware where HCCL requires it (Atlas 800 training server with 910A, and the
    generic preset), the servers of one rank table do not all contribute the same number
    of devices, e.g. 8 on atlas-01 and 4 on atlas-02.
    Why: HCCL checks that every server of the table has the same device count
    (CheckDeviceNumValid; skipped only on 910B and A3) and fails communicator init with a
    parameter error otherwise.
    Example: `job train { servers atlas-01 on atlas-02 devices 0..3 }` with
    `hardware atlas-800-910a`.
    Fix: give every server of the job the same number of devices (e.g. 4 each, one HCCS
    ring), or split the job.""")


def _tables(topo: Topology):
    """(job or None, [(server, device count)]) for every emitted rank table."""
    for job in topo.jobs or [None]:
        members = topo.rank_table_members(job)
        yield job, [(s, len(devs)) for s, devs in members]


def check(topo: Topology, plan: Plan):
    if not topo.preset.equal_server_sizes:
        return
    for job, sizes in _tables(topo):
        counts = Counter(n for _s, n in sizes)
        if len(counts) < 2:
            continue
        usual, _ = counts.most_common(1)[0]
        odd = [(s, n) for s, n in sizes if n != usual]
        first_usual = next(s for s, n in sizes if n == usual)
        s, n = odd[0]
        where = f"job {job.name}" if job else "the rank table"
        others = f" and {len(odd) - 1} more server{'s' if len(odd) > 2 else ''}" \
            if len(odd) > 1 else ""
        span = None
        if job is not None:
            span = next((p.span for p in job.placements if p.server is s), job.span)
        yield error(UNEQUAL_SERVER_SIZES,
                    f"{where}: {s.name} uses {n} device{'s' if n != 1 else ''} but "
                    f"{first_usual.name} uses {usual}{others}; on {topo.preset.name} every "
                    "server of a rank table must have the same number of devices",
                    span or s.span_of("devices"), subject=f"server {s.name}",
                    related=[Related(first_usual.span, f"{first_usual.name} ({usual} devices)")],
                    hint=f"give every server of the table {usual} devices, or split the job")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNEQUAL_SERVER_SIZES,)
