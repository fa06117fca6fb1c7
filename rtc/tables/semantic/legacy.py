"""The legacy ``group_list`` rank tables (cloud and lab forms): unique group and pod names
(RTC645) and the lab form's devices per server (RTC646), plus their counts, addresses and
address counts (RTC633-RTC635) and, in the lab form, rank ids (RTC630-RTC632)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ..json_values import decimal
from ._context import Ctx
from .counts import addresses_of, count_of, ip_counts_of
from .ranks import rank_blocks, rank_set

LEGACY_NAME = rule("RTC645", "legacy-duplicate-name", "error",
                   "A legacy group_list table repeats a group_name or pod_name.", """
    What: two groups with one group_name, or two instances with one pod_name.
    Why: HCCL's legacy parser identifies groups and pods by these names; it rejects
    duplicates (a process finds its entry by pod_name).
    Example: two instances with "pod_name": "0".
    Fix: make every name unique.""")
LEGACY_AVERAGE = rule("RTC646", "legacy-uneven-devices", "error",
                      "device_num / server_num is not a valid per-server device count.", """
    What: in the legacy "lab" form, device_num must be server_num times 1, 2, 4, 8 or 16.
    Why: HCCL's legacy parser (CheckAverageDev) rejects other layouts.
    Example: "device_num": "6", "server_num": "2" (3 per server).
    Fix: use the same 1, 2, 4, 8 or 16 devices on every server.""")


@dataclass
class _Walk:
    """What the walk over the groups collects (``entries`` and ``servers`` in the lab form
    only)."""

    lab: bool
    names: dict[str, tuple] = field(default_factory=dict)  # group_name -> first path
    pods: dict[str, tuple] = field(default_factory=dict)  # pod_name -> first path
    entries: list = field(default_factory=list)  # (rank | None, rank_id path)
    servers: dict[str, list] = field(default_factory=dict)  # server_id -> [(device_id, rank, path)]
    anchors: dict[str, tuple] = field(default_factory=dict)  # server_id -> first server_id path
    counts: list = field(default_factory=list)  # (addresses in a device_ip, its path)


def check_legacy(ctx: Ctx, lab: bool) -> None:
    """The rules of a legacy table (``lab``: the lab form, else the cloud form)."""
    groups = ctx.doc.get("group_list")
    if not isinstance(groups, list):
        return
    count_of(ctx, ("group_count",), len(groups), "group_list has")
    walk = _Walk(lab)
    for g, grp in enumerate(groups):
        if isinstance(grp, dict):
            _group(ctx, walk, ("group_list", g), grp)
    if lab:
        if rank_set(ctx, walk.entries, ("group_list",), "instance"):
            rank_blocks(ctx, [(sid, walk.anchors[sid], rows) for sid, rows in walk.servers.items()])
    ip_counts_of(ctx, walk.counts)


def _group(ctx: Ctx, walk: _Walk, gp: tuple, grp: dict) -> None:
    """One entry of group_list (at path ``gp``): its name, counts and instances."""
    name = grp.get("group_name")
    if isinstance(name, str) and name:
        _unique_name(ctx, walk.names, name, gp + ("group_name",))
    insts = grp.get("instance_list")
    if not isinstance(insts, list):
        return
    count_of(ctx, gp + ("instance_count",), len(insts), "instance_list has")
    ndev = 0
    sids: set[str] = set()
    for k, inst in enumerate(insts):
        if isinstance(inst, dict):
            ndev += _instance(ctx, walk, gp + ("instance_list", k), inst, sids)
    if walk.lab:
        _lab_counts(ctx, gp, grp, len(insts), len(sids))
    else:
        count_of(ctx, gp + ("device_count",), ndev, "its instances have this many devices:")


def _unique_name(ctx: Ctx, seen: dict[str, tuple], name: str, path: tuple,
                 hint: str | None = None) -> None:
    """RTC645 when ``name`` (the group_name or pod_name at ``path``) is in ``seen``."""
    first = seen.get(name)
    if first is not None:
        ctx.add(error(LEGACY_NAME, f"{format_path(path)}: {path[-1]} \"{name}\" is used twice",
                      ctx.span(path), related=[Related(ctx.span(first), "first here")],
                      hint=hint))
    else:
        seen[name] = path


def _instance(ctx: Ctx, walk: _Walk, ip_: tuple, inst: dict, sids: set[str]) -> int:
    """One instance (at path ``ip_``); adds its server_id to ``sids`` and returns its
    number of devices."""
    sid = inst.get("server_id")
    if isinstance(sid, str):
        sids.add(sid)
        walk.anchors.setdefault(sid, ip_ + ("server_id",))
    pod = inst.get("pod_name")
    if isinstance(pod, str):
        _unique_name(ctx, walk.pods, pod, ip_ + ("pod_name",),
                     hint="HCCL finds a process's entry by pod_name; make it unique")
    devs = inst.get("devices")
    rp = ip_ + ("rank_id",)
    r = ctx.number(rp, inst.get("rank_id"))
    if walk.lab:
        walk.entries.append((r, rp))
    if not isinstance(devs, list):
        return 0
    ndev = 0
    for j, d in enumerate(devs):
        if not isinstance(d, dict):
            continue
        ndev += 1
        dp = ip_ + ("devices", j)
        n = addresses_of(ctx, d.get("device_ip"), dp + ("device_ip",), "device_ip")
        if n:
            walk.counts.append((n, dp + ("device_ip",)))
        if walk.lab and isinstance(sid, str):
            did = decimal(d.get("device_id"))
            walk.servers.setdefault(sid, []).append((did, r, rp))
    return ndev


def _lab_counts(ctx: Ctx, gp: tuple, grp: dict, instances: int, servers: int) -> None:
    """RTC633 for device_num and server_num of a lab-form group, RTC646 for their ratio."""
    count_of(ctx, gp + ("device_num",), instances, "instance_list has (one instance per device):")
    count_of(ctx, gp + ("server_num",), servers, "the instances name this many servers:")
    dn, sn = decimal(grp.get("device_num")), decimal(grp.get("server_num"))
    if dn is not None and sn and (dn % sn or dn // sn not in (1, 2, 4, 8, 16)):
        ctx.add(error(LEGACY_AVERAGE, f"{format_path(gp + ('device_num',))}: {dn} devices on {sn} "
                      f"servers is not 1, 2, 4, 8 or 16 per server",
                      ctx.span(gp + ("device_num",)),
                      hint="use the same 1, 2, 4, 8 or 16 devices on every server"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (LEGACY_NAME, LEGACY_AVERAGE)
