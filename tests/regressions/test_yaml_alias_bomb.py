"""A YAML alias bomb ("billion laughs") given to `rtc lint` is one RTC790, at once.

Seen by a fresh user: nine anchors of nine aliases each (300 bytes) made the manifest
reader expand 387 million nodes (7 GB); `rtc validate` of the same file read it in 0.1 s."""

from __future__ import annotations

import resource
import time

from rtc.api.linting import lint_scripts


def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n" + \
        "".join(f"x{ln}\n" for ln in lines)


def test_alias_bomb_is_rtc790_and_cheap():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    rep = lint_scripts([("bomb.yaml", _bomb(9).encode())])
    assert time.process_time() - start < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000
    found = [(d.code, d.span.line, d.span.column) for d in rep.diagnostics]
    assert found == [("RTC790", 1, 1)], [d.message for d in rep.diagnostics]
    assert "aliases expand to more than" in rep.diagnostics[0].message


def test_modest_aliases_are_read():
    # two levels (81 scalars) is what people write (shared env lists, resources)
    rep = lint_scripts([("ok.yaml", _bomb(2).encode())])
    assert "RTC790" not in {d.code for d in rep.diagnostics}
