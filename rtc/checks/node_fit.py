"""vLLM's per-server DP placement: start ranks that leave a gap or run past `dp`
(RTC302), servers given more replicas than devices (RTC303) or idle NPUs (RTC304).

The placement itself is :mod:`rtc.parallel.placement` (``Topology.placement(job)``).
These checks apply to ``framework vllm`` jobs; when the device count already differs from
TP*PP*PCP*DP and no ``dp_local`` is given, RTC210 says it all and they stay quiet.
"""

from __future__ import annotations

from rtc.textfmt import compact, plural, span_range
from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

DP_COVERAGE = rule("RTC302", "dp-start-rank-gap-or-overlap", "error",
                   "The servers' DP ranges leave DP ranks unplaced or run past dp.", """
    What: each server runs `dp_local` DP replicas starting at
    `--data-parallel-start-rank` = the sum of the local counts of the servers before it.
    Those ranges must tile 0..dp-1 exactly; here they leave a gap at the end or a server's
    range runs past dp-1.
    Why: with a gap, vLLM's head waits for the missing DP engines forever ("Waiting for N
    local, M remote core engine proc(s) to connect", no timeout). A range past dp-1 makes
    the head reject the engine ("Message from engine with unexpected data parallel rank")
    or fails at start ("data_parallel_rank (x) must be in the range [0, DP)").
    Example: `dp 4` with `on atlas-01 dp_local 2` and `on atlas-02 dp_local 1`.
    Fix: make the `dp_local` values add up to `dp` (by default a server runs
    devices / (TP*PP*PCP) replicas), or change `dp`.""")
OVER_CAPACITY = rule("RTC303", "node-over-capacity", "error",
                     "A server is given more DP replicas than its devices can hold.", """
    What: on some server local DP * TP*PP*PCP is larger than the number of devices the job
    has there (or a replica larger than one server spans servers whose devices do not add
    up to TP*PP*PCP).
    Why: vLLM gives local engine i the devices [i*W, (i+1)*W) of the server (W =
    TP*PP*PCP); an engine past the end fails with "Error setting
    ASCEND_RT_VISIBLE_DEVICES: local range: [a, b) base value ...".
    Example: `on atlas-02 dp_local 2` with `tp 8` on an 8-NPU server.
    Fix: lower `dp_local` on that server, give the job more of its devices, or lower TP.""")
IDLE_NPUS = rule("RTC304", "idle-npus", "warning",
                 "A server has devices in the job that no rank uses.", """
    What: local DP * TP*PP*PCP is smaller than the devices the job has on a server, so
    some NPUs run nothing.
    Why: they still appear in the rank table with a rank_id; HCCL expects a process for
    every rank_id, and every rank_id after them no longer equals the rank vLLM gives
    that device. At best the NPUs are wasted.
    Example: `on atlas-01 devices 0..7 dp_local 1` with `tp 4`.
    Fix: give the job only the devices it uses (`on atlas-01 devices 0..3`), or raise
    `dp_local`.""")


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        if job.framework != "vllm" or not job.placements:
            continue
        if job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue   # an error about the unreadable attribute was reported already
        given = any(p.dp_local is not None for p in job.placements)
        if job.device_count != job.world_size and not given:
            continue  # RTC210 reports it
        pl = topo.placement(job)
        if not pl.nodes:
            continue
        spans = {p.server.name: p.span for p in job.placements}
        yield from _coverage(job, pl, spans)
        yield from _fit(job, pl, spans, topo.preset.is_gpu)


def _replica_text(job) -> str:
    parts = [f"{k} {getattr(job, k)}" for k in ("pp", "pcp", "tp") if getattr(job, k) > 1]
    return f"{job.tp * job.pp * job.pcp} (" + (" x ".join(parts) or "tp 1") + ")"


def _coverage(job, pl, spans):
    dp = job.dp
    end = 0
    for n in pl.nodes:
        r = n.dp_ranks
        if r is not None:
            end = max(end, r.stop)
    if end < dp:
        shares = ", ".join(f"{n.name} {n.dp_local}" for n in pl.nodes if n.replica is None) \
            or "none"
        yield error(DP_COVERAGE, f"job {job.name}: DP rank{'s' if dp - end > 1 else ''} "
                    f"{span_range(end, dp - end)} run{'' if dp - end > 1 else 's'} on no server: "
                    f"the servers' local DP counts cover DP ranks 0..{end - 1} "
                    f"(dp_local: {shares}) but dp is {dp}" if end else
                    f"job {job.name}: no server runs a DP replica but dp is {dp}",
                    job.span_of("dp"), subject=f"job {job.name}",
                    hint=f"make the dp_local values add up to {dp}, or set dp {end}"
                    if end else f"give the job servers for {dp} replicas")
        return
    if end > dp:
        for n in pl.nodes:
            r = n.dp_ranks
            if r is None or r.stop <= dp:
                continue
            before = [m for m in pl.nodes if m.index < n.index and m.dp_ranks and len(m.dp_ranks)]
            related = [Related(spans.get(m.name, job.span), f"{m.name} runs DP ranks "
                               f"{span_range(m.dp_ranks.start, len(m.dp_ranks))}")
                       for m in before[-3:]]
            yield error(DP_COVERAGE, f"job {job.name}: {n.name} would run DP ranks "
                        f"{span_range(r.start, len(r))} (data_parallel_start_rank {r.start}, "
                        f"dp_local {n.dp_local}) but dp is {dp}: DP rank"
                        f"{'s' if r.stop - max(r.start, dp) > 1 else ''} "
                        f"{span_range(max(r.start, dp), r.stop - max(r.start, dp))} "
                        f"{'do' if r.stop - max(r.start, dp) > 1 else 'does'} not exist",
                        spans.get(n.name, job.span), subject=f"job {job.name}, server {n.name}",
                        related=related,
                        hint=f"make the dp_local values add up to dp ({dp}), or set dp {end}")
            return


def _fit(job, pl, spans, gpu: bool = False):
    """RTC303 / RTC304 of ``job``'s placement ``pl`` (devices are GPUs when ``gpu``)."""
    replica = _replica_text(job)
    w = job.tp * job.pp * job.pcp
    last_index = pl.nodes[-1].index
    aligned = None
    for n in pl.nodes:
        span = spans.get(n.name, job.span)
        if n.missing:
            if n.replica is None:
                yield error(OVER_CAPACITY, f"job {job.name} has {plural(n.device_count, 'device')} "
                            f"on {n.name}, but dp_local {n.dp_local} x {replica} ranks per "
                            f"replica needs {n.wanted}", span,
                            subject=f"job {job.name}, server {n.name}",
                            hint=f"use dp_local {n.device_count // w} on {n.name}, or give the "
                                 f"job {n.wanted} devices there")
            else:
                run = [m for m in pl.nodes if m.replica and m.replica[3] == n.replica[3]]
                have = sum(m.device_count for m in run)
                names = ", ".join(m.name for m in run)
                yield error(OVER_CAPACITY, f"job {job.name}: DP replica {n.replica[0]} needs "
                            f"{replica} devices and spans {names}, which "
                            f"{'has' if len(run) == 1 else 'have'} only {have}", span,
                            subject=f"job {job.name}, server {n.name}",
                            hint=f"a replica larger than one server takes whole consecutive "
                                 f"servers whose devices add up to {w}; add servers or lower "
                                 "TP*PP*PCP")
        idle = n.idle_devices
        if idle:
            if aligned is None:
                aligned = pl.aligned
            used = n.placed
            tail = ""
            if not aligned and n.index != last_index and not gpu:     # no rank table on GPUs
                tail = "; the rank table still numbers them, so rank_id of the servers after " \
                       f"{n.name} no longer equals vLLM's rank"
            how = (f"dp_local {n.dp_local} x {replica}" if n.replica is None else
                   f"DP replica {n.replica[0]} of {replica}")
            unit = "GPU" if gpu else "NPU"
            yield warning(IDLE_NPUS, f"job {job.name} leaves {plural(len(idle), unit)} of "
                          f"{n.name} idle (device{'s' if len(idle) > 1 else ''} {compact(idle)}): "
                          f"{how} uses {used} of {n.device_count}{tail}", span,
                          subject=f"job {job.name}, server {n.name}",
                          hint=f"give the job only the devices it uses (`on {n.name} devices "
                               f"{compact(n.device_ids[:used]) or '...'}`), or raise dp_local")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (DP_COVERAGE, OVER_CAPACITY, IDLE_NPUS)
