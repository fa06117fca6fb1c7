"""Policies: ``policy RULE error|warn|allow`` lines change the severity of a rule's findings.

A cluster block's policy applies to every finding; a job block's policy applies to the
findings about that job -- those whose subject or message starts with ``job NAME`` (the
convention every job-level check follows) or that name ``job NAME's`` ports -- and wins
over the cluster's. ``RULE`` is a rule id (``RTC310``) or name (``cross-node-tp``, or with
underscores). The rule catalogue is passed in by the caller
(:data:`rtc.catalogue.RULES`), so that these functions know every rule without
importing the stages above the checks.
"""

from __future__ import annotations

import difflib
from typing import Iterable

from rtc.diagnostics import Diagnostic, Severity, Span, error
from rtc.model.topology import Topology
from rtc.rules import Rule, rule
from rtc.syntax.decls import PolicyLine

UNKNOWN_POLICY = rule("RTC118", "unknown-policy-rule", "error",
                      "A `policy` line names a rule that does not exist.", """
    What: `policy RTC999 error` or `policy cross_node_tpp warn`: the name is neither a rule
    id (RTCnnn) nor a rule name (kebab-case or snake_case).
    Why: the policy would silently change nothing, and the finding you meant to allow,
    demote or promote would keep its default severity.
    Example: `policy cross_node_tpp error` (the rule is cross-node-tp).
    Fix: use a name or id from `rtc rules` (rtc suggests the closest one).""")


def _names(rules: Iterable[Rule]) -> dict[str, str]:
    """Every way a policy may name a rule -> its id."""
    out: dict[str, str] = {}
    for r in rules:
        out[r.code] = r.code
        out[r.name] = r.code
        out[r.name.replace("-", "_")] = r.code
    return out


def unknown_policies(topology: Topology, rules: Iterable[Rule]) -> list[Diagnostic]:
    """RTC118 for every policy line of the cluster and its jobs whose rule is no rule id or
    name of ``rules``, with the closest one as a hint."""
    lines = [(f"cluster {topology.name}" if topology.named else "the cluster block", p)
             for p in topology.policies]
    lines += [(f"job {j.name}", p) for j in topology.jobs for p in j.policies]
    if not lines:
        return []
    rules = list(rules)
    known = _names(rules)
    out = []
    for where, p in lines:
        if p.rule in known or p.rule.upper() in known:
            continue
        by_id = p.rule[:3].upper() == "RTC"
        pool = [r.code for r in rules] if by_id else \
            [r.name for r in rules] + [r.name.replace("-", "_") for r in rules]
        close = difflib.get_close_matches(p.rule.upper() if by_id else p.rule, pool, n=1,
                                          cutoff=0.8 if by_id else 0.6)
        span = Span(p.span.file, p.span.line, p.span.column, p.span.line,
                    p.span.column + len(p.rule))
        out.append(error(UNKNOWN_POLICY, f"policy in {where} names {p.rule!r}, which is no "
                         "rule; the policy would change nothing", span,
                         hint=(f"did you mean '{close[0]}'? " if close else "") +
                         "`rtc rules` lists every rule id and name"))
    return out


def apply_policies(topology: Topology, diags: list[Diagnostic],
                   rules: Iterable[Rule]) -> list[Diagnostic]:
    """``diags`` with the policies of ``topology`` applied: ``allow`` drops a rule's
    findings, ``warn`` / ``error`` set their severity (see the module docstring)."""
    if not topology.policies and not any(j.policies for j in topology.jobs):
        return diags
    names = _names(rules)
    cluster = _levels(topology.policies, names)
    jobs = [(f"job {j.name}", _levels(j.policies, names)) for j in topology.jobs if j.policies]
    out = []
    for d in diags:
        level = cluster.get(d.code)
        for prefix, levels in jobs:
            if d.code in levels and _about(d, prefix):
                level = levels[d.code]
                break
        if level == "allow":
            continue
        if level == "warn":
            d = d.with_severity(Severity.WARNING)
        elif level == "error":
            d = d.with_severity(Severity.ERROR)
        out.append(d)
    return out


def _levels(policies: tuple[PolicyLine, ...], names: dict[str, str]) -> dict[str, str]:
    """Rule id -> level (the last line for a rule wins)."""
    return {names.get(p.rule, p.rule): p.level for p in policies}


def _about(d: Diagnostic, prefix: str) -> bool:
    """True when the finding is about the job named by ``prefix`` (``job NAME``): its
    subject or message starts with it, or the message names something of the job
    (``job NAME's HCCL host ports``, as port findings between two jobs do)."""
    for text in (d.subject or "", d.message):
        if text == prefix or (text.startswith(prefix) and text[len(prefix)] in ",:'"):
            return True
    return f"{prefix}'s " in d.message


#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNKNOWN_POLICY,)
