"""Device ids against the hardware preset."""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.textfmt import format_ids as _ids
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

DEVICE_RANGE = rule("RTC205", "device-id-out-of-range", "error",
                    "A device id does not exist on the preset's hardware.", """
    What: e.g. `devices 0..15` on atlas-800t-a2 (8 NPUs, ids 0-7).
    Why: `device_id` is the physical id (/dev/davinciN); HCCL rejects ids beyond the
    server's device count, and a process bound to a missing device never starts.
    Example: `devices 8..15` on an A2 server.
    Fix: use ids 0..N-1 for the preset, or pick the right `hardware` preset.""")


def check(topo: Topology, plan: Plan):
    limit = topo.preset.devices_per_server
    for s in topo.servers:
        bad = sorted({d.device_id for d in s.devices if d.device_id >= limit})
        if bad:
            yield error(DEVICE_RANGE, f"{s.name} uses device id{'s' if len(bad) > 1 else ''} "
                        f"{_ids(bad)}, but {topo.preset.name} has devices 0..{limit - 1}",
                        s.span_of("devices"), subject=s.label,
                        hint=f"physical device ids on {topo.preset.name} are 0..{limit - 1}")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (DEVICE_RANGE,)
