"""One failing input per structural rule (rule id, line, column) and passing inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CASES, expectations
from rtc.api import compile_text

CHECK_CASES = sorted((CASES / "checks").glob("*.rtc"))


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda p: p.stem)
def test_check_case(case: Path):
    expected = expectations(case)
    assert expected is not None, f"{case.name} has no '# expect:' line"
    result = compile_text(case.read_text(encoding="utf-8"), str(case))
    got = sorted((d.code, d.span.line, d.span.column) for d in result.diagnostics if d.span)
    if expected == []:
        assert result.diagnostics == [], [d.message for d in result.diagnostics]
        assert result.ok
    else:
        for item in expected:
            assert item in got, f"expected {item}, got {got}: " + \
                "; ".join(d.message for d in result.diagnostics)


def test_every_structural_rule_has_a_failing_case():
    covered = {expectations(p)[0][0] for p in CHECK_CASES if expectations(p)}
    wanted = {f"RTC2{n:02d}" for n in range(0, 17)}
    assert wanted <= covered, sorted(wanted - covered)
