"""Rank id rules of rank tables: ids exactly 0..N-1 (RTC630), one contiguous block per
server (RTC631), servers and devices listed in rank order (RTC632)."""

from __future__ import annotations

from rtc.diagnostics import Related, error, warning
from rtc.rules import rule

from ..jsonload import format_path
from ._context import Ctx, ids_of

RANK_IDS = rule("RTC630", "rank-ids-not-0-to-n", "error",
                "rank_id values are not exactly 0..N-1 (a duplicate, a gap, or too large).", """
    What: the rank ids of a table must be 0, 1, ..., N-1 for N devices, each exactly once.
    Why: HCCL sorts the ranks by rank_id and then requires the i-th one to be i; a gap, a
    repeat or a value >= N fails communicator init on every node ("rank id ... must be
    less than rank size and unique").
    Example: two devices with "rank_id": "5" and none with "6".
    Fix: renumber the ranks 0..N-1 (`rtc import` + `rtc compile` does it for you).""")
RANK_INTERLEAVED = rule("RTC631", "rank-ids-interleaved", "error",
                        "A server's rank ids are not one contiguous block.", """
    What: the ranks of one server are split by ranks of another server, e.g. server 1 has
    0, 1, 2, 7 and server 2 has 3..6.
    Why: the HCCL rank table docs forbid interleaving rank ranges across servers; HCCL's
    hierarchical algorithms assume the ranks of a server are adjacent, and tools that
    derive local ranks from rank ids get them wrong.
    Example: {"device_id": "3", "rank_id": "7"} on server 1 in the doc's forbidden example.
    Fix: number the ranks server by server (server 1: 0..3, server 2: 4..7).""")
RANK_ORDER = rule("RTC632", "rank-order", "warning",
                  "The table lists servers or devices in another order than their ranks.", """
    What: server_list is not sorted by rank (a later server holds lower ranks), or inside
    a server the ranks do not follow the device ids (device 0 has rank 1, device 1 rank 0).
    Why: HCCL itself sorts by rank_id, but the docs recommend numbering ranks in physical
    order, Ascend Operator writes servers sorted by their first rank, and tools that read
    the table in order (merge_hccl.py, launch scripts that derive RANK_ID from positions)
    then disagree with HCCL about who is rank 0. rtc numbers ranks in this order too, so
    `rtc import` cannot reproduce such a table.
    Example: server_list [node_1 (ranks 8..15), node_0 (ranks 0..7)].
    Fix: list servers by rank and number each server's devices in device id order.""")


def _same(x):
    return x


def rank_set(ctx: Ctx, entries: list, container: tuple, what: str = "device",
              path_of=_same) -> bool:
    """RTC630 over ``entries`` = [(rank int | None (unusable), where)]; ``path_of(where)``
    is the path of the rank_id value. True when the ranks are exactly 0..N-1 (so the
    block and order rules are worth checking)."""
    before = len(ctx.out)
    n = len(entries)
    seen: dict[int, tuple] = {}
    unusable = False
    for r, where in entries:
        if r is None:
            unusable = True
            continue
        if r >= n:
            path = path_of(where)
            ctx.add(error(RANK_IDS, f"{format_path(path)}: rank_id {r} is out of range: the table "
                          f"has {n} {what}{'s' if n != 1 else ''}, so rank ids are 0..{n - 1}",
                          ctx.span(path), hint="number the ranks 0..N-1 without gaps"))
            continue
        first = seen.get(r)
        if first is not None:
            path = path_of(where)
            ctx.add(error(RANK_IDS, f"{format_path(path)}: rank_id {r} is used twice",
                          ctx.span(path), related=[Related(ctx.span(path_of(first)), f"rank {r} first here")],
                          hint="every rank id 0..N-1 exactly once"))
            continue
        seen[r] = where
    if not unusable and len(seen) < n:
        missing = [r for r in range(n) if r not in seen]
        if missing:
            ctx.add(error(RANK_IDS, f"rank ids must be exactly 0..{n - 1} for {n} {what}s; "
                          f"missing: {ids_of(missing)}", ctx.span(container, key=True),
                          hint="HCCL sorts the ranks and requires the i-th to be i"))
    return not unusable and len(ctx.out) == before


def rank_blocks(ctx: Ctx, servers: list, path_of=_same) -> None:
    """RTC631 and RTC632 over servers = [(label, anchor path, [(device_id|None, rank|None,
    where)])] in list order; ``path_of(where)`` is the path of the rank_id value."""
    owner: dict[int, str] = {}
    for label, _, devs in servers:
        for _, r, _ in devs:
            if r is not None:
                owner.setdefault(r, label)
    firsts = []
    unordered: list = []
    for label, anchor, devs in servers:
        ranks = [r for _, r, _ in devs if r is not None]
        if ranks:
            firsts.append((min(ranks), label, anchor))
        uniq = sorted(set(ranks))
        if len(uniq) >= 2 and uniq[-1] - uniq[0] + 1 != len(uniq):
            # the first rank after a hole in the server's block
            k = next(k for k in range(1, len(uniq)) if uniq[k] != uniq[k - 1] + 1)
            hole = range(uniq[k - 1] + 1, uniq[k])
            others = sorted({owner[r] for r in hole if r in owner})
            path = path_of(next(p for _, r, p in devs if r == uniq[k]))
            ctx.add(error(RANK_INTERLEAVED, f"server {label} has ranks {ids_of(uniq)}: not one "
                          f"contiguous block" + (f" (ranks {ids_of(hole)} are on {', '.join(others[:3])})"
                                                 if others else ""),
                          ctx.span(path), subject=f"server {label}",
                          hint="number ranks server by server: all of one server, then the next"))
        by_dev = sorted((d, r, p) for d, r, p in devs if d is not None and r is not None)
        for (d0, r0, _), (d1, r1, p1) in zip(by_dev, by_dev[1:]):
            if r1 < r0:
                unordered.append((label, d0, r0, d1, r1, path_of(p1)))
                break
    for (r0, l0, _), (r1, l1, a1) in zip(firsts, firsts[1:]):
        if r1 < r0:
            ctx.add(warning(RANK_ORDER, f"server_list is not in rank order: {l1} (first rank {r1}) "
                            f"comes after {l0} (first rank {r0})", ctx.span(a1), subject=f"server {l1}",
                            hint="list the servers by rank; HCCL sorts by rank_id, but tools that "
                                 "read the list in order (and rtc import) assume it"))
            break
    if unordered:
        label, d0, r0, d1, r1, p1 = unordered[0]
        more = f" (and {len(unordered) - 1} more server{'s' if len(unordered) > 2 else ''})" \
            if len(unordered) > 1 else ""
        ctx.add(warning(RANK_ORDER, f"on {label}, ranks do not follow device ids: device {d1} has "
                        f"rank {r1} but device {d0} has rank {r0}{more}", ctx.span(p1),
                        subject=f"server {label}, device {d1}",
                        hint="number each server's devices in device id order (the HCCL docs "
                             "recommend physical order)"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (RANK_IDS, RANK_INTERLEAVED, RANK_ORDER)
