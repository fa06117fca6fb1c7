"""The walk over a version 1.0 / 1.2 rank table: it applies the rules of
:mod:`.counts` (server_count, addresses), :mod:`.backups` (host ports; backups in 1.2),
:mod:`.ranks` and, in 1.2, :mod:`.super_pods`. It declares no rules of its own."""

from __future__ import annotations

from rtc.diagnostics import error

from ..json_values import decimal
from ._context import Ctx, server_label
from .backups import backups_of, host_port_of
from .containers import container_ips
from .counts import COUNT, addresses_of, ip_counts_of
from .ranks import rank_blocks, rank_set
from .super_pods import check_super_pods


def check_v1(ctx: Ctx, form: str) -> None:
    """The rules of a ``hccl-v1.0`` or ``hccl-v1.2`` table."""
    sl = ctx.doc.get("server_list")
    if not isinstance(sl, list):
        return
    _server_count(ctx, sl)
    entries: list = []
    servers = []
    ip_counts: list[tuple[int, tuple]] = []
    v12 = form == "hccl-v1.2"
    for i, s in enumerate(sl):
        if type(s) is not dict:
            continue
        label = server_label(s, i)
        sp = ("server_list", i)
        if "host_ip" in s:
            addresses_of(ctx, s["host_ip"], sp + ("host_ip",), "host_ip")
        rows, by_id = _devices(ctx, i, s, label, v12, entries, ip_counts)
        if v12:
            backups_of(ctx, label, by_id)
        servers.append((label, sp + ("server_id",) if "server_id" in s else sp, rows))
    if rank_set(ctx, entries, ("server_list",), path_of=_v1_rank_path):
        rank_blocks(ctx, servers, path_of=_v1_rank_path)
    if len({k for k, _ in ip_counts}) > 1:
        ip_counts_of(ctx, [(k, ("server_list", i, "device", j, "device_ip")) for k, (i, j) in ip_counts])
    container_ips(ctx, sl)
    if v12:
        check_super_pods(ctx, sl)


def _server_count(ctx: Ctx, sl: list) -> None:
    """RTC633: server_count against the length of server_list ``sl``."""
    count = ctx.doc.get("server_count")
    if ("server_count",) in ctx.bad:
        return
    n = decimal(count)
    if n is not None and n != len(sl):
        ctx.add(error(COUNT, f'server_count is "{count}" but server_list has {len(sl)} '
                      f"server{'s' if len(sl) != 1 else ''}", ctx.span(("server_count",)),
                      hint=f'write "server_count": "{len(sl)}" (HCCL: "serverList size neq server num")'))


def _devices(ctx: Ctx, i: int, s: dict, label: str, v12: bool, entries: list,
             ip_counts: list) -> tuple[list, dict]:
    """The devices of server ``s`` (server_list[i]): their addresses and host ports are
    checked, their ranks appended to ``entries`` as (rank, (i, j)) and their address counts
    to ``ip_counts``. Returns (rows for the rank block rules, {device_id: (device, path)} for
    the backup rules)."""
    sp = ("server_list", i)
    devs = s.get("device")
    rows = []
    ports: dict[int, tuple] = {}
    by_id: dict[int, tuple] = {}
    if type(devs) is not list:
        return rows, by_id
    bad = ctx.bad
    for j, d in enumerate(devs):
        if type(d) is not dict:
            continue
        if "rank_id" in d:
            dp = sp + ("device", j)
            r = ctx.number(dp + ("rank_id",), d["rank_id"])
            did = ctx.number(dp + ("device_id",), d.get("device_id"))
            entries.append((r, (i, j)))
            rows.append((did, r, (i, j)))
            if did is not None and (v12 or bad):
                by_id[did] = (d, sp + ("device", j))
        ip = d.get("device_ip")
        if ip:
            k = addresses_of(ctx, ip, (*sp, "device", j, "device_ip"), "device_ip")
            if k:
                ip_counts.append((k, (i, j)))
        if "backup_device_ip" in d:
            addresses_of(ctx, d["backup_device_ip"], (*sp, "device", j, "backup_device_ip"),
                       "backup_device_ip")
        if "host_port" in d:
            host_port_of(ctx, d, (*sp, "device", j, "host_port"), label, ports)
    return rows, by_id


def _v1_rank_path(ij: tuple) -> tuple:
    return ("server_list", ij[0], "device", ij[1], "rank_id")
