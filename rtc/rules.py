"""The registry of rule ids.

Every diagnostic code rtc can produce is declared once with :func:`rule`, next to the code
that produces it. The declaration carries the explanation that ``rtc explain RTCnnn``
prints (what is wrong, why it breaks at run time, an example of the mistake, the fix) and
the one-line summary that ``rtc rules`` lists. Ids are unique and never reused.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from rtc.diagnostics import Severity


@dataclass(frozen=True)
class Rule:
    """One rule: ``code`` (``RTC203``), a short kebab-case ``name``, its default
    ``severity``, a one-line ``summary`` and a longer ``explanation``."""

    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str


_RULES: dict[str, Rule] = {}

# Modules that declare rules; imported by all_rules() so the registry is complete.
RULE_MODULES: list[str] = [
    "rtc.syntax.parser",
    "rtc.syntax.schema",
    "rtc.model.lower",
    "rtc.checks",
    "rtc.tables.semantic",
    "rtc.api",
    "rtc.preflight.report",
    "rtc.inventory.rules",
]


def rule(code: str, name: str, severity: str, summary: str, explanation: str) -> str:
    """Declare a rule and return its code (use the return value when emitting).

    Raises ValueError when ``code`` is declared twice with a different name."""
    sev = {"error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.NOTE}[severity]
    known = _RULES.get(code)
    if known is not None and known.name != name:
        raise ValueError(f"rule id {code} declared twice ({known.name!r} and {name!r})")
    _RULES[code] = Rule(code, name, sev, summary, inspect.cleandoc(explanation))
    return code


def all_rules() -> list[Rule]:
    """Every declared rule, sorted by code (imports the modules that declare them)."""
    for mod in RULE_MODULES:
        importlib.import_module(mod)
    return sorted(_RULES.values(), key=lambda r: r.code)


def get_rule(code: str) -> Rule | None:
    """The rule with this code, or None."""
    all_rules()
    return _RULES.get(code.upper())
