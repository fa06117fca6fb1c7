"""Helpers shared by the network checks (RTC4xx). Not a check module (no ``check``).

:class:`Folded` keeps one diagnostic per key (usually the span of the attribute that
produced the finding, so a family of 4,096 servers written once gives one finding, not
4,096) and counts the rest; :meth:`Folded.emit` adds "(and N more ...)".
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic, Related
from rtc.textfmt import compact


def ids_text(ids) -> str:
    """[4,5,6,7] -> '4..7'; [0,2] -> '0, 2'."""
    return compact(sorted(ids))


class Folded:
    """Findings folded by key: the first one is kept, the others counted."""

    noun: str
    items: dict

    def __init__(self, noun: str = "servers", items: dict | None = None) -> None:
        self.noun = noun
        self.items = {} if items is None else items

    def add(self, key, diag: Diagnostic, who: str | None = None) -> None:
        got = self.items.get(key)
        if got is None:
            self.items[key] = [diag, 0, []]
        else:
            got[1] += 1
            if who is not None and len(got[2]) < 3 and who not in got[2]:
                got[2].append(who)

    def emit(self):
        for diag, more, names in self.items.values():
            if more:
                noun = self.noun if more != 1 else \
                    self.noun[:-2] if self.noun.endswith("sses") else self.noun[:-1]
                extra = f" (and {more} more {noun}" + \
                    (f": {', '.join(names)}{', ...' if more > len(names) else ''}" if names else "") + ")"
                diag = Diagnostic(diag.code, diag.severity, diag.message + extra, diag.span,
                                  diag.hint, diag.related, diag.subject)
            yield diag


def related(span, message: str) -> list[Related]:
    return [Related(span, message)] if span is not None else []


def devices_in_use(topo) -> dict[str, set[int]]:
    """server name -> device ids some job uses (every device when there is no job)."""
    out: dict[str, set[int]] = {}
    if not topo.jobs:
        for s in topo.servers:
            out[s.name] = {d.device_id for d in s.devices}
        return out
    for job in topo.jobs:
        for p in job.placements:
            out.setdefault(p.server.name, set()).update(p.device_ids)
    return out
