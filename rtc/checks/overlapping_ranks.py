"""Devices claimed twice: by two jobs, or twice by one job (RTC300, RTC301)."""

from __future__ import annotations

from rtc.textfmt import compact, span_range
from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

SHARED_DEVICE = rule("RTC300", "device-claimed-by-two-jobs", "error",
                     "Two jobs claim the same device.", """
    What: a device (NPU) is part of two jobs, e.g. the prefill job and the decode job both
    list server p1.
    Why: each rank is one process bound to its NPU; two jobs on one NPU fight for its
    memory and HCCL ports, and each job's rank table names a device the other job already
    initialised, so one of them fails at start or hangs in HCCL init until
    HCCL_CONNECT_TIMEOUT.
    Example: `job prefill { servers p1, p2 }` and `job decode { servers p2, d1 }`.
    Fix: give every job its own devices (`on p2 devices 0..7` and `on p2 devices 8..15`),
    or describe jobs that never run at the same time in separate files.""")
CLAIMED_TWICE = rule("RTC301", "device-claimed-twice-in-job", "error",
                     "A job names the same server or device twice.", """
    What: a job lists a server twice (e.g. in `servers` and again in an `on` line, or a
    family range that already contains it), or one `on` line lists a device twice.
    Why: only one of the claims can hold: rtc keeps the last `servers`/`on` reference of a
    server, so the rank table and the DP start ranks silently follow whichever came last,
    and a repeated device would be two ranks on one NPU.
    Example: `servers atlas-01, atlas-02` followed by `on atlas-01 devices 0..3 dp_local 1`.
    Fix: name every server once: either in `servers` (all its devices) or in one `on` line.""")


def _positions(topo: Topology, job) -> dict[str, tuple[int, int]]:
    """server name -> (first rank_id, device count) in the job's rank table."""
    out = {}
    pos = 0
    for s, devs in topo.rank_table_members(job):
        out[s.name] = (pos, len(devs))
        pos += len(devs)
    return out


def check(topo: Topology, plan: Plan):
    yield from _within_jobs(topo)
    yield from _across_jobs(topo)


def _within_jobs(topo: Topology):
    for job in topo.jobs:
        if not job.claims:
            continue
        positions = None
        seen: dict[str, tuple] = {}
        for claim in job.claims:
            name, ids, span, via, dev_span = claim
            if via == "on" and len(set(ids)) != len(ids):
                repeated = sorted({d for d in ids if ids.count(d) > 1})
                yield error(CLAIMED_TWICE, f"job {job.name} lists device"
                            f"{'s' if len(repeated) > 1 else ''} {compact(repeated)} of {name} "
                            "twice", dev_span or span, subject=f"job {job.name}, server {name}",
                            hint="list each device once, e.g. `devices 0..7`")
            first = seen.get(name)
            if first is None:
                seen[name] = claim
                continue
            if positions is None:
                positions = _positions(topo, job)
            f_name, f_ids, f_span, f_via, _ = first
            where = positions.get(name)
            ranks = f", ranks {span_range(*where)}" if where and where[1] else ""
            yield error(CLAIMED_TWICE, f"job {job.name} names {name} twice (in `{f_via}` at "
                        f"{f_span.line}:{f_span.column} and in `{via}` here); rtc keeps this one "
                        f"(devices {compact(sorted(set(ids)))}{ranks})", span,
                        subject=f"job {job.name}, server {name}",
                        related=[Related(f_span, f"first claim of {name} (devices "
                                         f"{compact(sorted(set(f_ids)))})")],
                        hint=f"name {name} once: drop it from `servers` or merge the `on` lines")
            seen[name] = claim


def _across_jobs(topo: Topology):
    if len(topo.jobs) < 2:
        return
    owners: dict[tuple[int, int], tuple] = {}
    clashes: dict[tuple, list] = {}
    for job in topo.jobs:
        pos = 0
        for s, devs in topo.rank_table_members(job):
            for d in devs:
                key = (s.index, d.device_id)
                prev = owners.get(key)
                if prev is None:
                    owners[key] = (job, pos)
                elif prev[0] is not job:
                    clashes.setdefault((id(prev[0]), id(job), s.index), []).append(
                        (prev[0], job, s, d.device_id, prev[1], pos))
                pos += 1
    for items in clashes.values():
        first_job, job, server, _, _, _ = items[0]
        devices = [it[3] for it in items]
        ranks_a = [it[4] for it in items]
        ranks_b = [it[5] for it in items]
        span = _placement_span(job, server)
        other = _placement_span(first_job, server)
        yield error(SHARED_DEVICE, f"{server.label} device{'s' if len(devices) > 1 else ''} "
                    f"{compact(devices)} {'are' if len(devices) > 1 else 'is'} claimed by job "
                    f"{first_job.name} (rank{'s' if len(devices) > 1 else ''} {compact(ranks_a)}) "
                    f"and by job {job.name} (rank{'s' if len(devices) > 1 else ''} "
                    f"{compact(ranks_b)})", span, subject=f"server {server.name}",
                    related=[Related(other, f"job {first_job.name} claims {server.name}")]
                    if other else (),
                    hint="give each job its own devices (`on SERVER devices ...`), or put jobs "
                         "that never run together in separate files")


def _placement_span(job, server):
    for p in job.placements:
        if p.server is server:
            return p.span
    return job.span

#: The rules this module reports (collected by rtc.catalogue).
RULES = (SHARED_DEVICE, CLAIMED_TWICE)
