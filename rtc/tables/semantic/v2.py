"""The version 2.0 (Ascend 950) rank table: level order (RTC650), address counts per net
instance (RTC651), the backup rank (RTC652), a port bound to two addresses of one level
(RTC670), plus rank_count (RTC633) and the rank ids (RTC630)."""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ._context import Ctx
from .counts import COUNT
from .ranks import rank_set

V2_LEVELS = rule("RTC650", "v2-level-order", "error",
                 "A 2.0 rank's level_list does not ascend from net_layer 0.", """
    What: the levels of a rank must start at net_layer 0 and ascend, each layer once.
    Why: the 2.0 parser reads level_list in order; layer 0 (TOPO_FILE_DESC) is the
    server's own topology and every other layer builds on the one below.
    Example: level_list with net_layer 1 first, or two entries with net_layer 0.
    Fix: list the levels 0, 1, ... in ascending order.""")
V2_ADDRESS_COUNT = rule("RTC651", "v2-address-count", "error",
                        "Ranks of one net instance have different numbers of addresses.", """
    What: in a 2.0 table, all ranks with the same net_instance_id (at one net_layer) must
    have the same number of rank_addr_list entries.
    Why: HCCL checks it when it reads the table and pairs addresses by position.
    Example: rank 0 with two IPV4 addresses and rank 1 with one in "az0-rack0".
    Fix: give every rank of the instance the same addresses per plane.""")
V2_BACKUP = rule("RTC652", "v2-backup-rank", "error",
                 "A 2.0 table has several backup ranks, or one without replaced_local_id.", """
    What: a backup rank has local_id 64; a table may have at most one, and it must name
    the local_id it replaces (replaced_local_id).
    Why: the 2.0 parser rejects other layouts.
    Example: two ranks with "local_id": 64.
    Fix: keep one backup rank and set its replaced_local_id.""")


V2_PORT_TWICE = rule("RTC670", "v2-port-two-addresses", "error",
                     "A port is bound to two addresses at one level of a 2.0 rank.", """
    What: two rank_addr_list entries of one rank's level list the same `die/port`.
    Why: HCCL rank_table_config_a5.md: "a port can be mapped to only one address within the
    same network layer"; HCCL cannot tell which address the port's links use.
    Example: EID A with ports ["0/4", "0/5"] and EID B with ports ["0/5"] at net_layer 1.
    Fix: list each port under the one address that serves it.""")


def _ports_once(ctx: Ctx, lp: tuple, addrs: list) -> None:
    """RTC670 for the first port that a second address of one level lists again."""
    flat: list = []
    for a in addrs:
        ports = a.get("ports") if type(a) is dict else None
        if type(ports) is list:
            flat += ports
    try:
        if len(set(flat)) == len(flat):  # the common case, decided without a loop
            return
    except TypeError:  # a port that is not a string: the schema reported it
        pass
    owner: dict = {}
    for m, a in enumerate(addrs):
        ports = a.get("ports") if isinstance(a, dict) else None
        for n, port in enumerate(ports if isinstance(ports, list) else ()):
            if not isinstance(port, str):
                continue
            first = owner.setdefault(port, m)
            if first != m:
                pp = lp + ("rank_addr_list", m, "ports", n)
                ctx.add(error(V2_PORT_TWICE, f"{format_path(pp)}: port {port} is already "
                              f"bound to rank_addr_list[{first}] at this level",
                              ctx.span(pp), related=[Related(ctx.span(
                                  lp + ("rank_addr_list", first)), "first address")],
                              hint="list each port under one address"))
                return


def _int2(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def check_v2(ctx: Ctx) -> None:
    """The rules of a ``hccl-v2.0`` table."""
    doc = ctx.doc
    ranks = doc.get("rank_list")
    if not isinstance(ranks, list):
        return
    rc = doc.get("rank_count")
    if ("rank_count",) not in ctx.bad and _int2(rc) is not None and rc != len(ranks):
        ctx.add(error(COUNT, f"rank_count is {rc} but rank_list has {len(ranks)} ranks",
                      ctx.span(("rank_count",)), hint=f'write "rank_count": {len(ranks)}'))
    entries = []
    instances: dict[tuple, tuple] = {}
    backups = []
    for k, r in enumerate(ranks):
        if not isinstance(r, dict):
            continue
        rp = ("rank_list", k)
        entries.append((None if rp + ("rank_id",) in ctx.bad else _int2(r.get("rank_id")), rp + ("rank_id",)))
        if _int2(r.get("local_id")) == 64 and rp + ("local_id",) not in ctx.bad:
            backups.append(rp)
            if "replaced_local_id" not in r:
                ctx.add(error(V2_BACKUP, f"{format_path(rp)}: backup rank (local_id 64) without "
                              "replaced_local_id", ctx.span(rp + ("local_id",)),
                              hint="name the local_id this backup rank replaces"))
        levels = r.get("level_list")
        if isinstance(levels, list):
            _levels(ctx, rp, levels, instances)
    for extra in backups[1:]:
        ctx.add(error(V2_BACKUP, f"{format_path(extra)}: a second backup rank (local_id 64); a "
                      "table may have one", ctx.span(extra + ("local_id",)),
                      related=[Related(ctx.span(backups[0] + ("local_id",)), "first backup rank")]))
    rank_set(ctx, entries, ("rank_list",), "rank")


def _levels(ctx: Ctx, rp: tuple, levels: list, instances: dict[tuple, tuple]) -> None:
    """RTC650 for the level_list of the rank at ``rp``, RTC651 for its address counts
    against the first rank seen of each (net_layer, net_instance_id) in ``instances``."""
    prev = -1
    for n, lvl in enumerate(levels):
        if not isinstance(lvl, dict):
            continue
        lp = rp + ("level_list", n)
        layer = None if lp + ("net_layer",) in ctx.bad else _int2(lvl.get("net_layer"))
        if layer is not None:
            if (n == 0 and layer != 0) or layer <= prev:
                why = "the first level must be net_layer 0" if n == 0 else \
                    f"net_layer {layer} does not ascend after {prev}"
                ctx.add(error(V2_LEVELS, f"{format_path(lp + ('net_layer',))}: {why}",
                              ctx.span(lp + ("net_layer",)),
                              hint="list the levels 0, 1, ... in ascending order, each once"))
            prev = max(prev, layer)
        inst = lvl.get("net_instance_id")
        addrs = lvl.get("rank_addr_list")
        if layer is None or not isinstance(inst, str) or not isinstance(addrs, list):
            continue
        _ports_once(ctx, lp, addrs)
        key = (layer, inst)
        first = instances.get(key)
        if first is None:
            instances[key] = (len(addrs), lp + ("rank_addr_list",))
        elif first[0] != len(addrs):
            ctx.add(error(V2_ADDRESS_COUNT, f"{format_path(lp + ('rank_addr_list',))}: "
                          f"{len(addrs)} address{'es' if len(addrs) != 1 else ''} but other ranks of "
                          f"net instance \"{inst}\" (layer {layer}) have {first[0]}",
                          ctx.span(lp + ("rank_addr_list",), key=True),
                          related=[Related(ctx.span(first[1], key=True), f"{first[0]} here")],
                          hint="give every rank of the instance the same number of addresses"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (V2_LEVELS, V2_ADDRESS_COUNT, V2_BACKUP, V2_PORT_TWICE)
