"""Device numbering (RTC430-RTC433): physical ids, container ids, ASCEND_RT_VISIBLE_DEVICES
(CUDA_VISIBLE_DEVICES on NVIDIA GPU servers: the same three numberings, the CUDA runtime
renumbers the listed devices 0..n-1 in order).

Three numberings meet on an Ascend server:

* **physical** id -- ``/dev/davinciN``, ``hccn_tool -i N``, the rank table's ``device_id``
  (``devices`` in the description);
* **container** id -- a container started with some NPUs mounted (Ascend Docker Runtime
  ``ASCEND_VISIBLE_DEVICES=4-7``) sees them as 0..k-1 by ascending physical id (vllm-ascend
  PR 16256: host NPUs 3..7 are 0..4 in the container), whatever order a device plugin
  listed them in. The description says so with the server attribute ``visible_devices
  4..7`` (without it, container id = physical id); a list not in ascending order gets a
  note saying how the container numbers them (RTC435);
* **process** id -- ``ASCEND_RT_VISIBLE_DEVICES`` (job ``env``) lists *container* ids; the
  process renumbers them 0..n-1 in the listed order. CANN takes the list only in
  ascending order (RTC434: "EE1001 ... it must be configured in ascending order",
  gpustack issue 2527); CUDA_VISIBLE_DEVICES may be in any order.

So with ``visible_devices 4..7`` and ``ASCEND_RT_VISIBLE_DEVICES=2,3``, process device 0 is
container device 2 is physical device 6, and the rank table must say ``device_id 6``.
"""

from __future__ import annotations

from rtc.checks._net import Folded, ids_text
from rtc.diagnostics import Related, Span, error, note, warning
from rtc.model.topology import Topology, container_ids
from rtc.plan import Plan
from rtc.network.env import env_map, parse_visible_devices
from rtc.rules import rule

NOT_VISIBLE = rule("RTC430", "device-not-visible", "error",
                   "`visible_devices` is invalid, or `devices` are not among them.", """
    What: a server's `devices` (physical ids, as the rank table needs them) include ids
    that are not in its `visible_devices` (the physical NPUs mounted into the container),
    or `visible_devices` repeats an id or names one the hardware does not have.
    Why: the rank table must use physical ids. Writing the container's ids (0..3) instead
    of the physical ones (4..7) makes HCCL bind rank i to the wrong NPU or to one the
    container cannot open ("device not found" / drvDeviceOpen errors), and the device IPs
    in the table then belong to other NPUs.
    Example: `visible_devices 4..7` with `devices 0..3`.
    Fix: write `devices` as physical ids (here `devices 4..7`); rtc maps them to container
    ids 0..3 itself.""")
BAD_RT_VISIBLE = rule("RTC431", "bad-ascend-rt-visible-devices", "error",
                      "ASCEND_RT_VISIBLE_DEVICES is malformed or names devices the process cannot see.", """
    What: the value is not a comma-separated list of distinct whole numbers without spaces,
    or an entry is not a container device id (0 .. visible devices - 1).
    Why: the runtime reads the list up to the first bad token and silently ignores the
    rest (`0, 1` is read as `0`), and ids past the visible devices are dropped; the process
    then sees fewer NPUs than the job needs and vLLM fails with "Error setting
    ASCEND_RT_VISIBLE_DEVICES" or places ranks on the wrong devices.
    Example: `env ASCEND_RT_VISIBLE_DEVICES = "4,5,6,7"` in a container that sees physical
    4..7 as 0..3.
    Fix: list container ids without spaces, e.g. "0,1,2,3". On NVIDIA GPU servers the
    rule judges CUDA_VISIBLE_DEVICES the same way.""")
NOT_COVERED = rule("RTC432", "visible-devices-not-covering", "error",
                   "ASCEND_RT_VISIBLE_DEVICES does not include all devices the job uses on a server.", """
    What: the job uses physical devices on a server whose container ids are not all in
    ASCEND_RT_VISIBLE_DEVICES.
    Why: the process cannot open those NPUs; the ranks meant for them have no device, and
    the job fails at start (world size larger than the visible devices) or binds ranks to
    other NPUs than the rank table says.
    Example: a job on devices 0..7 with `ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3"`.
    Fix: list the container ids of every device the job uses on each server.""")
NUMBERING = rule("RTC433", "device-numbering", "note",
                 "How rank-table device ids map to container and process device ids.", """
    What: shown when a server has `visible_devices` or a job sets
    ASCEND_RT_VISIBLE_DEVICES: physical id (rank table) -> container id -> process id.
    Why: three numberings are easy to mix up; the rank table always needs physical ids.
    Example: `physical 4..7 = container 0..3 = process 0..3`.
    Fix: nothing to fix; check that the mapping is what you meant.""")

NOT_ASCENDING = rule("RTC434", "ascend-rt-visible-devices-not-ascending", "error",
                     "ASCEND_RT_VISIBLE_DEVICES is not in ascending order.", """
    What: a job's (or a script's) ASCEND_RT_VISIBLE_DEVICES lists its device ids out of
    ascending order, e.g. "1,0" or "0,2,4,6,1,3,5,7".
    Why: CANN's runtime refuses such a list when the process opens its first NPU:
    "EE1001 The argument is invalid. Reason: set ASCEND_RT_VISIBLE_DEVICES:0,2,4,6,1,3,5,7
    error, it must be configured in ascending order" (reported in gpustack issue 2527,
    vLLM on an Atlas 300I Duo); torch_npu then sees no device (error 207004).
    Example: `env ASCEND_RT_VISIBLE_DEVICES = "1,0"`.
    Fix: sort the list ("0,1"); the process numbers the devices 0..n-1 in that order, and
    rtc's rank tables list a server's devices in ascending order too. NVIDIA's
    CUDA_VISIBLE_DEVICES may be in any order and is not judged. An error in a script
    (`rtc lint`: the value runs); a warning for a description's `env` line, which rtc
    replaces with each server's own ascending list (then RTC507 is not added).""",
                     also={"warning": "a description's `env` line, which rtc's env files "
                                      "replace"})
MOUNT_ORDER = rule("RTC435", "visible-devices-order", "note",
                   "visible_devices is not in ascending order: how the container numbers them.", """
    What: a server's `visible_devices` (the NPUs a device plugin mounted, in the order it
    gave them) is not in ascending order, e.g. `visible_devices 4, 3`.
    Why: the container numbers the NPUs it mounts 0..k-1 by ascending physical id, not in
    the plugin's order (vllm-ascend PR 16256: host NPUs 3..7 are 0..4 in the container),
    so physical 3 is container device 0 and 4 is 1. rtc numbers them so and writes
    ASCEND_RT_VISIBLE_DEVICES in ascending order, which CANN requires (RTC434).
    Example: `visible_devices 4, 3` gives ASCEND_RT_VISIBLE_DEVICES=0,1 for devices 3, 4.
    Fix: nothing to fix; write the list ascending to silence the note.""")


def check(topo: Topology, plan: Plan):
    yield from _mount_order(topo)
    preset = topo.preset
    folded = Folded("servers")
    for s in topo.servers:
        if s.visible_devices is None:
            continue
        span = s.span_of("visible_devices")
        seen: set[int] = set()
        dup = [p for p in s.visible_devices if p in seen or seen.add(p)]
        if dup:
            folded.add(("dup", span), error(
                NOT_VISIBLE, f"visible_devices of {s.name} lists device {dup[0]} twice", span,
                subject=s.label, hint="list each physical id once"), s.name)
        n = preset.devices_per_server
        bad = [p for p in s.visible_devices if n and p >= n]
        if bad:
            folded.add(("range", span), error(
                NOT_VISIBLE, f"visible_devices of {s.name} names physical device"
                f"{'s' if len(bad) > 1 else ''} {ids_text(bad)}, but a {preset.name} server "
                f"has devices 0..{n - 1}", span, subject=s.label,
                hint="list physical ids of NPUs the container mounts"), s.name)
        mapping = set(s.visible_devices)
        outside = [d.device_id for d in s.devices if d.device_id not in mapping]
        if outside:
            vis = ids_text(s.visible_devices)
            guess = ""
            k = len(s.devices)
            if all(d < len(s.visible_devices) for d in outside) and k <= len(s.visible_devices):
                mounted = sorted(set(s.visible_devices))      # container id order
                phys = [mounted[d.device_id] for d in s.devices
                        if d.device_id < len(mounted)]
                guess = (f"; if you meant the container's devices {ids_text(outside)}, "
                         f"write their physical ids: `devices {ids_text(phys)}`")
            folded.add(("out", s.span_of("devices")), error(
                NOT_VISIBLE, f"{s.name} uses device{'s' if len(outside) > 1 else ''} "
                f"{ids_text(outside)}, but its container only sees physical devices {vis} "
                "(visible_devices); the rank table needs physical ids", s.span_of("devices"),
                subject=s.label, related=[Related(span, f"visible_devices {vis}")],
                hint="`devices` are physical ids (/dev/davinciN, hccn_tool -i N)" + guess),
                s.name)
    yield from folded.emit()
    for job in topo.jobs:
        yield from _job(topo, job)


def _mount_order(topo: Topology):
    """RTC435 for each server whose ``visible_devices`` is not ascending (folded)."""
    folded = Folded("servers")
    for s in topo.servers:
        vis = s.visible_devices
        if vis is None or list(vis) == sorted(set(vis)) or len(set(vis)) != len(vis):
            continue          # ascending, or repeated ids (RTC430 reports those)
        mapping, _ = container_ids(s, topo.preset)
        pairs = ", ".join(f"{p} -> {mapping[p]}" for p in sorted(mapping))
        span = s.span_of("visible_devices")
        folded.add(("order", span), note(
            MOUNT_ORDER, f"visible_devices of {s.name} is {', '.join(map(str, vis))}, not "
            f"ascending; the container numbers the NPUs it mounts by ascending physical id "
            f"(physical -> container: {pairs}), and rtc writes ASCEND_RT_VISIBLE_DEVICES "
            "in ascending order, as CANN requires", span, subject=s.label,
            hint="nothing to fix; write the list ascending to silence this note"), s.name)
    yield from folded.emit()


def _job(topo: Topology, job):
    """RTC431 / RTC432 for the job's ASCEND_RT_VISIBLE_DEVICES, else its RTC433 note."""
    env = env_map(job)
    var = topo.preset.visible_devices_var   # CUDA_VISIBLE_DEVICES on NVIDIA GPU servers
    given = env.get(var)
    rows = []        # (server, physical ids, container ids, devices the runtime sees)
    for p in job.placements:
        s = p.server
        ids, count = container_ids(s, topo.preset)
        rows.append((s, list(p.device_ids), [ids.get(d) for d in p.device_ids], count))
    entries = None
    problems = False
    lines = [(value, span) for name, value, span in job.env if name == var]
    if len({span.file for _, span in lines if span is not None}) > 1:
        # one value per file (rtc lint: each node's script exports its own): each is
        # judged on the servers declared in its file
        for value, span in lines:
            own = [r for r in rows if r[0].span and r[0].span.file == span.file] or rows
            _entries, bad = yield from _rt_visible(job, (value, span), own, var,
                                                   topo.origin == "description")
            problems = problems or bad
        return
    if given is not None:
        entries, problems = yield from _rt_visible(job, given, rows, var,
                                                   topo.origin == "description")
    if problems or not rows:
        return
    yield from _numbering(job, given, rows, entries, var)


def _rt_visible(job, given, rows, var: str, replaced: bool = False):
    """RTC431 / RTC432 / RTC434 for the job's ASCEND_RT_VISIBLE_DEVICES ``given`` (text,
    span): malformed, naming devices beyond what a server's runtime sees, not covering the
    devices the job uses, not ascending (``replaced``: a description's `env` line, which
    rtc's env files replace, so RTC434 is a warning saying so and RTC507 stands down).
    Returns (the listed ids, whether anything was reported)."""
    text, span = given
    if var == "CUDA_VISIBLE_DEVICES" and any(t.strip().startswith(("GPU-", "MIG-"))
                                             for t in text.split(",")):
        # CUDA also takes GPU / MIG UUIDs; which index each one is needs the machine
        yield note(NUMBERING, f"job {job.name}: {var}=\"{text}\" names GPUs by UUID; rtc "
                   "cannot tell which devices those are, so the value is not judged", span,
                   subject=f"job {job.name}",
                   hint="use indices (0,1,...) to have rtc check them, or compare with "
                        "`nvidia-smi -L` on each server")
        return [], True
    parsed = parse_visible_devices(text)
    if parsed.problem:
        yield error(BAD_RT_VISIBLE, f"job {job.name}: {var}=\"{text}\": "
                    f"{parsed.problem}", _at(span, parsed.offset, text),
                    subject=f"job {job.name}",
                    hint="write container device ids separated by commas, no spaces, each "
                         "once, e.g. \"0,1,2,3\" (quote the value)")
    entries = list(parsed.ids)
    if var == "ASCEND_RT_VISIBLE_DEVICES" and not parsed.problem and entries != sorted(entries):
        if replaced:
            yield _replaced(job, text, span, rows, var)
            return entries, True
        yield error(NOT_ASCENDING, f"job {job.name}: {var}=\"{text}\" is not in ascending "
                    "order; CANN refuses it when the process opens its first NPU (EE1001 "
                    "\"it must be configured in ascending order\")", span,
                    subject=f"job {job.name}",
                    hint=f"write {var}=\"{','.join(map(str, sorted(entries)))}\"")
        return entries, True
    beyond = yield from _beyond(job, span, entries, rows, var)
    uncovered = yield from _not_covered(job, text, span, entries, rows, var)
    return entries, bool(parsed.problem) or beyond or uncovered


def _replaced(job, text: str, span, rows: list, var: str):
    """RTC434 as a warning for a description's `env` line: the list is not ascending, but
    rtc writes each server's own (ascending) list in its env file, so the line is unused."""
    lists = "; ".join(f"{s.name}: {','.join(map(str, cont))}" for s, _p, cont, _n in rows
                      if cont and None not in cont)
    return warning(NOT_ASCENDING, f"job {job.name}: env {var} = \"{text}\" is not in "
                   "ascending order, which CANN refuses (EE1001); the line has no effect: rtc "
                   f"writes each server's own list in its env file ({lists or 'none'})", span,
                   subject=f"job {job.name}",
                   hint=f"remove the line: rtc computes {var} per server from the job's "
                        "devices, in ascending order")


def _beyond(job, span, entries: list, rows: list, var: str):
    """RTC431: entries at or past the device count of the server whose runtime sees the
    fewest devices. Returns whether it reported."""
    limits = {count for _, _, _, count in rows}
    if not limits:
        return False
    limit = min(limits)
    beyond = [e for e in entries if e >= limit]
    if not beyond:
        return False
    s0 = next(r for r in rows if r[3] == limit)[0]
    phys = ""
    if s0.visible_devices is not None and any(e in s0.visible_devices for e in beyond):
        phys = (f"; {ids_text(beyond)} look like physical ids: the container sees "
                f"physical {ids_text(s0.visible_devices)} as "
                f"0..{len(s0.visible_devices) - 1}")
    yield error(BAD_RT_VISIBLE, f"job {job.name}: {var} names "
                f"device{'s' if len(beyond) > 1 else ''} {ids_text(beyond)}, but "
                f"{s0.name}'s runtime sees only {limit} device"
                f"{'s' if limit != 1 else ''} (0..{limit - 1}){phys}", span,
                subject=f"job {job.name}, server {s0.name}",
                hint=f"{var} lists container ids, not physical ids")
    return True


def _not_covered(job, text: str, span, entries: list, rows: list, var: str):
    """RTC432: the first server with devices of the job whose container ids are not all
    in ``entries`` (the other such servers counted). Returns whether it reported."""
    missing_rows = []
    listed = set(entries)
    for s, phys, cont, _count in rows:
        lacking = [(p, c) for p, c in zip(phys, cont) if c is None or c not in listed]
        if lacking:
            missing_rows.append((s, lacking))
    if not missing_rows:
        return False
    s, lacking = missing_rows[0]
    more = len(missing_rows) - 1
    renumbered = [(p, c) for p, c in lacking if c is not None and c != p]
    yield error(NOT_COVERED, f"job {job.name} uses {s.name} physical device"
                f"{'s' if len(lacking) > 1 else ''} {ids_text(p for p, _ in lacking)}"
                + (f" (container id{'s' if len(renumbered) > 1 else ''} "
                   f"{ids_text(c for _, c in renumbered)})" if renumbered else "")
                + f", which {var}=\"{text}\" does not include"
                + (f" (and {more} more server{'s' if more > 1 else ''})" if more else ""),
                span, subject=f"job {job.name}, server {s.name}",
                related=[Related(s.span_of("devices"), f"{s.name}'s devices")],
                hint="list the container id of every device the job uses")
    return True


def _numbering(job, given, rows: list, entries: list | None, var: str):
    """RTC433: physical -> container -> process ids on the job's first server, unless
    the three numberings are the same."""
    s, phys, cont, _count = rows[0]
    where = {} if entries is None else {c: k for k, c in reversed(list(enumerate(entries)))}
    procs = [where.get(c, c) for c in cont]
    if cont == phys and procs == cont:
        return          # one numbering everywhere: nothing worth showing
    if _ascending(cont) and _ascending(procs):
        line = f"physical {ids_text(phys)} (rank table device_id)"
        line += (f" = container {ids_text(cont)} (visible_devices "
                 f"{_as_written(s.visible_devices)})" if s.visible_devices is not None
                 else " = container (same ids)")
        if entries is not None:
            line += f" = process {ids_text(procs)} ({var}={given[0]})"
    else:
        line = _mapping_list(phys, cont, procs)
    others = len(rows) - 1
    yield note(NUMBERING, f"job {job.name} on {s.name}: {line}"
               + (f"; {others} more server{'s' if others > 1 else ''}" if others else ""),
               given[1] if given is not None else s.span_of("visible_devices"),
               subject=f"job {job.name}")


def _as_written(ids) -> str:
    """A `visible_devices` list as the user wrote it: ``4..7`` when ascending (how
    :func:`ids_text` shows it), else in its own order (``4, 3``), as the line shows."""
    ids = list(ids)
    return ids_text(ids) if ids == sorted(ids) else ", ".join(map(str, ids))


def _mapping_list(phys: list, cont: list, procs: list) -> str:
    """The RTC433 mapping device by device (when a numbering is not ascending)."""
    shown = [f"{p} -> {c} -> {q}" for p, c, q in zip(phys, cont, procs)
             if c is not None and q is not None]
    unseen = [p for p, c in zip(phys, cont) if c is None]
    if unseen:
        shown.append(f"physical {ids_text(unseen)} -> not visible in the container")
    hidden = [p for p, c, q in zip(phys, cont, procs) if c is not None and q is None]
    if hidden:
        shown.append(f"physical {ids_text(hidden)} -> not visible to the process")
    return "physical -> container -> process: " + ", ".join(shown)


def _ascending(xs) -> bool:
    return all(b is not None and a is not None and b > a for a, b in zip(xs, xs[1:]))


def _at(span: Span, offset: int, text: str) -> Span:
    """Narrow a value span to the character at ``offset`` (skipping a quote)."""
    if span is None:
        return span
    shift = offset + (1 if span.end_column - span.column == len(text) + 2 else 0)
    col = span.column + shift
    return Span(span.file, span.line, col, span.line, col + 1)

#: The rules this module reports (collected by rtc.catalogue).
RULES = (NOT_VISIBLE, BAD_RT_VISIBLE, NOT_COVERED, NUMBERING, NOT_ASCENDING, MOUNT_ORDER)
