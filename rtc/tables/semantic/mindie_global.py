"""The MindCluster / MindIE global rank table (``server_group_list``): unique group ids
(RTC653), each group's rank ids exactly 0..n-1 (RTC654), a device IP or server_id used in
two groups (RTC655), one server_ip on two servers (RTC667), each group's server_count
(RTC633) and its addresses (RTC634).

Source: MindCluster best practice ``dl_bestpractice_010`` (ClusterD builds one group per
MindIE instance from that instance's hccl.json, so rank ids count per group) and the
ClusterD service API doc, Ascend/mind-cluster @22bb3d98
``docs/en/scheduling/api/clusterd/05_service_configuration_apis.md``.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ..json_values import decimal
from ._context import Ctx, ids_of
from .counts import COUNT, addresses_of

GROUP_ID = rule("RTC653", "global-duplicate-group-id", "error",
                "Two groups of a global rank table have the same group_id.", """
    What: server_group_list holds two groups with one group_id.
    Why: the MindIE MS Controller tells the scheduler, prefill and decode instances apart
    by group_id; a repeat merges two instances or hides one.
    Example: a prefill and a decode group both "group_id": "1".
    Fix: number the groups uniquely (MindIE Motor / ClusterD: 0 coordinator, 1 controller,
    instances from 2; omniinfer: prefill instances from 0, then decode; see RTC678).""")
GROUP_RANKS = rule("RTC654", "global-group-rank-ids", "error",
                   "A group's rank_id values are not exactly 0..n-1.", """
    What: the devices of one group have rank ids with a gap, a repeat, or not from 0.
    Why: each group is one instance's HCCL communicator (its own hccl.json); its ranks
    must be 0..n-1 or that instance fails to initialise.
    Example: a decode group whose ranks continue the prefill group's (16..31).
    Fix: number each group's devices from 0 in rank order.""")
GROUP_SHARED = rule("RTC655", "global-shared-device", "error",
                    "Two groups of a global rank table use the same device.", """
    What: one device_ip (or one server_id with the same device_id) appears in two groups.
    Why: an NPU serves one instance; two instances on it fight for its memory and HCCL
    links, and the KV transfer between prefill and decode targets the wrong one.
    Example: the decode group lists the prefill server's device 0 again.
    Fix: give each group its own devices.""")

GROUP_SERVER_IP = rule("RTC667", "global-duplicate-server-ip", "error",
                       "Two servers of a global rank table have the same server_ip.", """
    What: two server entries with different server_id values but one server_ip, in one
    group or in two.
    Why: MindIE Motor's controller reaches each instance's node at its server_ip; two
    nodes on one address make it send one node's role and requests to the other, and
    rtc import cannot give two servers one host.
    Example: the decode group's server copied from the prefill group with a new server_id
    but the old server_ip.
    Fix: give each server its own pod's IP (the host IP when pods share the host network).""")


def _check_global(ctx: Ctx) -> None:
    """The rules of a ``mindie-global`` table."""
    groups = ctx.doc.get("server_group_list")
    if not isinstance(groups, list):
        return
    seen_ids: dict[str, tuple] = {}
    seen_devices: dict[tuple, tuple] = {}
    seen_ips: dict[str, tuple] = {}
    for g, group in enumerate(groups):
        if not isinstance(group, dict):
            continue
        gp = ("server_group_list", g)
        gid = group.get("group_id")
        if isinstance(gid, str) and gp + ("group_id",) not in ctx.bad:
            first = seen_ids.setdefault(gid, gp + ("group_id",))
            if first != gp + ("group_id",):
                ctx.add(error(GROUP_ID, f'{format_path(gp)}: group_id "{gid}" is used twice',
                              ctx.span(gp + ("group_id",)),
                              related=[Related(ctx.span(first), "first here")],
                              hint="number the groups uniquely (MindIE Motor: 0 coordinator, "
                                   "1 controller, instances from 2)"))
        _group(ctx, group, gp, g, seen_devices)
        _server_ips(ctx, group, gp, seen_ips)


def _server_ips(ctx: Ctx, group: dict, gp: tuple, seen: dict) -> None:
    """RTC667: a server_ip that another server_id already has (``seen``: ip -> (server_id,
    path), filled in here)."""
    servers = group.get("server_list")
    for s, server in enumerate(servers if isinstance(servers, list) else ()):
        if not isinstance(server, dict):
            continue
        ip, sid = server.get("server_ip"), server.get("server_id")
        path = gp + ("server_list", s, "server_ip")
        if not isinstance(ip, str) or not ip or not isinstance(sid, str) or path in ctx.bad:
            continue
        first = seen.setdefault(ip, (sid, path))
        if first[0] != sid:
            ctx.add(error(GROUP_SERVER_IP, f"{format_path(path)}: server_ip {ip} of server "
                          f"{sid} is also the server_ip of server {first[0]}", ctx.span(path),
                          related=[Related(ctx.span(first[1]), f"{first[0]}'s server_ip")],
                          hint="give each server its own pod's IP (kubectl get pods -o wide)"))


def _group(ctx: Ctx, group: dict, gp: tuple, g: int, seen: dict) -> None:
    servers = group.get("server_list")
    if not isinstance(servers, list):
        return
    n = decimal(group.get("server_count")) if gp + ("server_count",) not in ctx.bad else None
    if n is not None and n != len(servers):
        ctx.add(error(COUNT, f'{format_path(gp)}: server_count is "{group["server_count"]}" but '
                      f"server_list has {len(servers)} server{'s' if len(servers) != 1 else ''}",
                      ctx.span(gp + ("server_count",)),
                      hint="server_count is the number of servers of the group"))
    ranks: list[int] = []
    unknown = False   # a server or rank the schema reports: RTC654 would only echo it
    for s, server in enumerate(servers):
        sp = gp + ("server_list", s)
        if not isinstance(server, dict) or not isinstance(server.get("device"), list):
            unknown = True
            continue
        addresses_of(ctx, server.get("server_ip"), sp + ("server_ip",), "server_ip")
        for k, dev in enumerate(server["device"]):
            dp = sp + ("device", k)
            if not isinstance(dev, dict):
                unknown = True
                continue
            addresses_of(ctx, dev.get("device_ip"), dp + ("device_ip",), "device_ip")
            r = decimal(dev.get("rank_id")) if dp + ("rank_id",) not in ctx.bad else None
            if r is not None:
                ranks.append(r)
            else:
                unknown = True
            for key in ((dev.get("device_ip"),), (server.get("server_id"), dev.get("device_id"))):
                if not all(isinstance(part, str) and part for part in key):
                    continue  # absent, empty or of the wrong type (the schema reports it)
                first = seen.setdefault(key, (g, dp))
                if first[0] != g:
                    ctx.add(error(GROUP_SHARED, f"{format_path(dp)}: "
                                  + (f"device_ip {key[0]}" if len(key) == 1 else
                                     f"device {key[1]} of server {key[0]}")
                                  + f" is also in server_group_list[{first[0]}]",
                                  ctx.span(dp), related=[Related(ctx.span(first[1]), "there")],
                                  hint="each NPU belongs to one instance"))
                    break
    if ranks and not unknown and sorted(ranks) != list(range(len(ranks))):
        ctx.add(error(GROUP_RANKS, f"{format_path(gp)}: rank_id values are {ids_of(sorted(ranks))}, "
                      f"not 0..{len(ranks) - 1}", ctx.span(gp + ("server_list",)),
                      hint="number each group's devices from 0 (one hccl.json per instance)"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (GROUP_ID, GROUP_RANKS, GROUP_SHARED, GROUP_SERVER_IP)
