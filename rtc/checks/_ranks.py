"""Formatting helpers shared by the placement checks (RTC3xx): compact rank and device
lists, and "ranks a..b on server" runs. Not a check module (no ``check``)."""

from __future__ import annotations

from typing import Iterable, Sequence

from rtc.textfmt import format_ids


def compact(ids: Iterable[int], limit: int = 6) -> str:
    """Ids as ranges: [0,1,2,3,5] -> '0..3, 5'; more than ``limit`` pieces are cut with
    '... (N in all)' (:func:`rtc.textfmt.format_ids`)."""
    return format_ids(ids, limit)


def span_range(first: int, count: int) -> str:
    """'0..7' for (0, 8); '5' for (5, 1)."""
    return str(first) if count == 1 else f"{first}..{first + count - 1}"


def runs_by_server(placement, ranks: Sequence[int], limit: int = 4) -> str:
    """'ranks 0..7 on atlas-01, ranks 8..15 on atlas-02' for a group's members (in the
    group's order), merging consecutive members on one server; at most ``limit`` servers
    are named."""
    out: list[tuple[str, list[int]]] = []
    for r in ranks:
        name = placement.server_of(r) or "no device"
        if out and out[-1][0] == name:
            out[-1][1].append(r)
        else:
            out.append((name, [r]))
    text = [f"rank{'s' if len(rs) > 1 else ''} {compact(rs, 3)} on {name}" for name, rs in out]
    if len(text) > limit:
        more = len({n for n, _ in out[limit:]} - {n for n, _ in out[:limit]})
        return ", ".join(text[:limit]) + (f", ... ({more} more server{'s' if more != 1 else ''})"
                                          if more else ", ...")
    return ", ".join(text)


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 group', '2 groups'."""
    return f"{n} {word if n == 1 else (many or word + 's')}"
