"""The Ascend 950 backup rank (rank table 2.0): ``backup DEVICE replaces LOCAL``.

HCCL's 2.0 parser takes at most one backup rank per table: the rank with ``local_id`` 64
names the ``replaced_local_id`` it stands in for, and it must have a level 0 (HCCL
rank_table_config_a5.md; HCOMM ``UpdaterFor64Plus1``, which records the replacement per
level-0 instance, and ``new_rank_info`` tests: ``replaced_local_id`` 64 is invalid). The
table form of these rules is RTC652 (:mod:`rtc.tables.semantic.v2`).

* RTC231: ``backup`` names a device the server does not have, or the table (a job's, or
  the cluster's) has more than one backup rank, or the replaced local_id is the backup
  device's own id or no device of the hardware (in a 2.0 table too: the backup
  rank's ``replaced_local_id``; a second backup rank there is RTC652).
"""

from __future__ import annotations

from rtc.checks.ranktable_rules import tables_of
from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

BACKUP_RANK = rule("RTC231", "backup-rank", "error",
                   "An Ascend 950 backup rank is not one spare device of its table.", """
    What: `backup DEVICE replaces LOCAL` names a device the server does not list, names
    the device itself as the one replaced, replaces a local_id the hardware does not
    have (also a 2.0 table's `replaced_local_id`), or two servers of
    one rank table each have a backup.
    Why: a 2.0 table may hold one backup rank (local_id 64 with replaced_local_id); HCCL
    rejects a second one, and a spare that is not in the table cannot stand in.
    Example: `backup 9 replaces 3` on a server with `devices 0..7`.
    Fix: name one of the server's devices as the spare, and keep one `backup` per job's
    table.""")


def _replaced(topo: Topology, s):
    """RTC231 for a replaced local_id that is no device of the hardware (the local_id of
    a 2.0 rank is its physical device id; the replaced NPU may be left out of the table,
    as a failed one is)."""
    device, replaced = s.backup
    top = topo.preset.devices_per_server - 1
    if 0 <= replaced <= top:
        return None
    where = "" if topo.origin == "description" else " (replaced_local_id)"
    return error(BACKUP_RANK, f"{s.name}: backup device {device} replaces local_id "
                 f"{replaced}{where}, but {topo.preset.name} has devices 0..{top}: HCCL's "
                 "backup rank stands in for one NPU of its server, and there is none with "
                 "that local_id", s.span_of("backup"), subject=s.label,
                 hint=f"give the device id (0..{top}) of the NPU the spare stands in for")


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_a5:
        return
    for s in topo.servers:
        if s.backup is None:
            continue
        device, replaced = s.backup
        if s.device(device) is None:
            yield error(BACKUP_RANK, f"{s.name}: backup device {device} is not one of its "
                        "devices", s.span_of("backup"), subject=s.label,
                        hint="name a device of the server's `devices` as the spare")
        elif device == replaced:
            yield error(BACKUP_RANK, f"{s.name}: backup device {device} replaces itself",
                        s.span_of("backup"), subject=s.label,
                        hint="give the local_id of the NPU the spare stands in for")
        else:
            found = _replaced(topo, s)
            if found is not None:
                yield found
    if topo.origin != "description":
        return  # a table's second backup rank is RTC652
    for job, members in tables_of(topo):
        spares = [s for s, devs in members if s.backup is not None
                  and any(d.device_id == s.backup[0] for d in devs)]
        if len(spares) > 1:
            what = f"job {job.name}" if job else "the cluster"
            yield error(BACKUP_RANK, f"{what} has {len(spares)} backup ranks ("
                        f"{', '.join(s.name for s in spares[:3])}); a 2.0 table may have one",
                        spares[1].span_of("backup"), subject=spares[1].label,
                        related=[Related(spares[0].span_of("backup"), "first backup")],
                        hint="keep one `backup` line per job's servers")


#: The rules this module reports.
RULES = (BACKUP_RANK,)
