"""Run the public-report corpus (tests/lint_cases/public/<id>/, issue 33) and print its table.

Each case folder holds ``SOURCE.md`` (where the report is, what went wrong, the rule rtc
should give), ``case.json`` and two folders of inputs: ``broken/`` (the mistake, rewritten
in our own words in the shape the reporter gave) and ``fixed/`` (the same deployment with
the mistake corrected). ``case.json``::

    {"command": "lint" | "validate",    # rtc lint of all files together, or rtc validate
     "hardware": "hgx-h100" | null,     # --hardware (null: rtc's own choice)
     "vllm_version": "0.11.0" | null,   # --vllm-version
     "expect": ["RTC741"],              # the rule(s) rtc should give; one is enough
     "accept": ["RTC310"]}              # design warnings the reporter chose (optional)

``accept`` may only name the layout advisories of :data:`DESIGN_WARNINGS` (a TP group
across servers or NVLink islands, which a deployment may choose on purpose); they are
not counted as false findings on the control, and SOURCE.md says why the case has them.

A case is *detected* when linting ``broken/`` gives one of ``expect`` (any severity). A
*false finding* is an error or warning on ``fixed/`` (notes are allowed). Everything runs
in-process through :mod:`rtc.api` (no subprocess per case), in well under a second a case.

Usage: ``python tools/public_cases.py [--json]``; exit 1 when a control has a finding.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: Warnings about a layout the reporter chose (TP across servers / NVLink islands), never a
#: mistake of the launch; a case may accept them on its control (``accept``).
DESIGN_WARNINGS = frozenset({"RTC310", "RTC311", "RTC312", "RTC313"})
ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "lint_cases" / "public"
sys.path.insert(0, str(ROOT))


@dataclass
class Outcome:
    """One case's result: ``detected`` (an expected rule on the broken input), the codes
    found on the broken input, and the error/warning findings on the fixed control
    (``code file:line message`` strings)."""

    case: str
    expect: list[str]
    detected: bool
    broken_codes: list[str] = field(default_factory=list)
    control_findings: list[str] = field(default_factory=list)


def _inputs(folder: Path) -> list[tuple[str, str]]:
    """``(label, text)`` of every file of ``folder``, sorted by name; the label is the
    file name, as `rtc lint` shows it when run inside the case folder."""
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.iterdir())
            if p.is_file()]


def _diagnostics(spec: dict, folder: Path) -> list:
    """The diagnostics `rtc lint` / `rtc validate` give for the files of ``folder``."""
    files = _inputs(folder)
    if spec.get("command", "lint") == "validate":
        from rtc.api.validating import validate_source
        found = []
        for label, text in files:
            found += validate_source(text, label, hardware=spec.get("hardware")).diagnostics
        return found
    from rtc.api.linting import lint_scripts
    return lint_scripts(files, hardware=spec.get("hardware"),
                        vllm_version=spec.get("vllm_version")).diagnostics


def run_case(folder: Path) -> Outcome:
    """Run one case folder (see the module docstring). Raises for a malformed case."""
    from rtc.diagnostics import Severity

    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    broken = _diagnostics(spec, folder / "broken")
    fixed = _diagnostics(spec, folder / "fixed")
    codes = sorted({d.code for d in broken})
    accepted = set(spec.get("accept", [])) & DESIGN_WARNINGS
    bad = [f"{d.code} {d.span.file if d.span else ''}:{d.span.line if d.span else ''} "
           f"{d.message}" for d in fixed if d.severity in (Severity.ERROR, Severity.WARNING)
           and not (d.severity is Severity.WARNING and d.code in accepted)]
    return Outcome(folder.name, spec["expect"], any(c in codes for c in spec["expect"]),
                   codes, bad)


def run_all(root: Path = CASES) -> list[Outcome]:
    """Every case under ``root``, in name order."""
    return [run_case(p) for p in sorted(root.iterdir()) if (p / "case.json").is_file()]


def summary(outcomes: list[Outcome]) -> dict:
    """``cases``, ``detected``, ``controls_with_findings``, ``false_findings`` and
    ``detection_pct`` (one decimal) of a run."""
    detected = sum(o.detected for o in outcomes)
    return {"cases": len(outcomes), "detected": detected,
            "controls_with_findings": sum(bool(o.control_findings) for o in outcomes),
            "false_findings": sum(len(o.control_findings) for o in outcomes),
            "detection_pct": round(100.0 * detected / len(outcomes), 1) if outcomes else 0.0}


def table(outcomes: list[Outcome]) -> str:
    """The per-case table and the totals line, as text."""
    rows = [f"{'case':44} {'expect':16} {'detected':8} {'control':8} found on broken"]
    for o in outcomes:
        rows.append(f"{o.case:44} {' '.join(o.expect):16} {'yes' if o.detected else 'NO':8} "
                    f"{len(o.control_findings):<8} {' '.join(o.broken_codes)}")
        rows += [f"    control finding: {f}" for f in o.control_findings]
    s = summary(outcomes)
    rows.append(f"\ncases {s['cases']}, detected with the right rule {s['detected']} "
                f"({s['detection_pct']} %), false findings on the fixed controls "
                f"{s['false_findings']}")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    outcomes = run_all()
    if "--json" in argv:
        print(json.dumps({"summary": summary(outcomes),
                          "cases": [o.__dict__ for o in outcomes]}, indent=1))
    else:
        print(table(outcomes))
    return 1 if any(o.control_findings for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
