"""A formatting helper shared by the placement checks (RTC3xx): "ranks a..b on server"
runs. Not a check module (no ``check``)."""

from __future__ import annotations

from typing import Sequence

from rtc.textfmt import compact


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
