"""Device sets the server hardware accepts: HCCS rings (910A, RTC320) and A3 die pairs
(RTC321). Everything comes from the preset data (``hccs_groups``,
``allowed_server_sizes``, ``die_pairs`` in rtc/model/presets.toml)."""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.textfmt import compact, plural
from rtc.diagnostics import error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

HCCS_SET = rule("RTC320", "hccs-device-set", "error",
                "A server's device set breaks the hardware's HCCS grouping rules.", """
    What: on hardware whose NPUs form separate HCCS groups (Atlas 800 training server,
    910A: rings 0-3 and 4-7) a job must use 1, 2, 4 or 8 devices of a server, and unless
    it uses all 8 they must lie inside one ring.
    Why: HCCL's intra-server algorithms need an HCCS path between the devices; HCCL rejects
    other sets when it parses the rank table (HCCL constraints; the parser accepts only a
    few 4-device sets) or the collective falls back to PCIe.
    Example: `on node1 devices 0, 1, 4, 5` or `devices 0..5` on atlas-800-910a.
    Fix: use 0..3 or 4..7 (or a 1/2-device subset of one ring), or all 8 devices.""")
DIE_PAIR = rule("RTC321", "die-pair-split", "warning",
                "A job uses one die of an A3 chip without the other.", """
    What: on Atlas A3 each NPU chip has two dies (devices 2k and 2k+1) joined by SIO; a job
    with more than one device uses one die of a chip but not its partner.
    Why: the chip's two dies share its HCCS/RoCE ports and the fast SIO link; a split
    chip gives the job slower intra-chip paths and lets another job compete for the same
    chip. MindCluster therefore allocates whole die pairs for jobs larger than one die.
    Example: `on a3-node0 devices 1..4` (splits chips 0 and 2).
    Fix: allocate whole pairs, e.g. `devices 0..3`.""")


def _tables(topo: Topology):
    """(job or None, server, device ids, span) for every server of every emitted table."""
    if topo.jobs:
        for job in topo.jobs:
            spans = {p.server.name: p.span for p in job.placements}
            for s, devs in topo.rank_table_members(job):
                yield job, s, tuple(d.device_id for d in devs), spans.get(s.name, job.span)
    else:
        for s, devs in topo.rank_table_members(None):
            yield None, s, tuple(d.device_id for d in devs), s.span_of("devices")


def check(topo: Topology, plan: Plan):
    preset = topo.preset
    groups = [frozenset(g) for g in preset.hccs_groups]
    allowed = set(preset.allowed_server_sizes)
    pairs = preset.die_pairs
    ring_rule = len(groups) > 1
    if not (ring_rule or allowed or pairs):
        return
    every = frozenset().union(*groups) if groups else frozenset()
    # One finding per source line (a family's `devices` is one line), the others counted.
    rings_broken, chips_split = Folded("servers"), Folded("servers")
    for job, server, ids, span in _tables(topo):
        who = f"job {job.name}" if job else "the cluster"
        subject = f"{who}, server {server.name}"
        if ring_rule or allowed:
            known = frozenset(ids) & every if every else frozenset(ids)
            bad_size = bool(allowed) and len(ids) not in allowed
            bad_ring = ring_rule and known != every and not any(known <= g for g in groups)
            if bad_size or bad_ring:
                rings = " or ".join(compact(sorted(g)) for g in groups)
                why = []
                if bad_size:
                    why.append("a server may use " + ", ".join(map(str, sorted(allowed)))
                               + " devices")
                if bad_ring:
                    why.append(f"they must lie within one HCCS group ({rings}) unless all "
                               f"{len(every)} are used")
                rings_broken.add((span, who), error(HCCS_SET, f"{who} uses {plural(len(ids), 'device')} of "
                            f"{server.name} ({compact(sorted(ids))}): on {preset.name} "
                            + " and ".join(why), span, subject=subject,
                            hint=f"use {rings} (or a subset of one of them with "
                                 f"{', '.join(str(n) for n in sorted(allowed) if n < len(every))}"
                                 f" devices), or all {len(every)}" if allowed else
                                 f"use devices within {rings}, or all of them"), server.name)
        if pairs and len(ids) > 1:
            have = set(ids)
            split = [(a, b) for a, b in pairs if (a in have) != (b in have)]
            if split:
                text = ", ".join(f"{a if a in have else b} without {b if a in have else a}"
                                 for a, b in split[:4]) + (" ..." if len(split) > 4 else "")
                chips_split.add((span, who), warning(DIE_PAIR, f"{who} splits {plural(len(split), 'chip')} of "
                              f"{server.name}: uses die {text}", span, subject=subject,
                              hint="allocate both dies of a chip (devices 2k and 2k+1) together, "
                                   "e.g. devices 0..3"), server.name)
    yield from rings_broken.emit()
    yield from chips_split.emit()

#: The rules this module reports (collected by rtc.catalogue).
RULES = (HCCS_SET, DIE_PAIR)
