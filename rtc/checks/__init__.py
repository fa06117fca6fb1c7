"""Checks: pure functions ``check(topology) -> iterable of Diagnostic``, one module per
rule family, run in the order of :data:`CHECK_MODULES`.

Checks never print and never modify the Topology. Each module declares its rules with
:func:`rtc.rules.rule` (the docstring ``rtc explain`` prints). Policies
(``policy RULE-NAME error|warn|allow`` in the cluster block, or in a job block for that
job's findings) and ``--strict`` change severities after the checks ran, in
:func:`run_checks`.
"""

from __future__ import annotations

import importlib

from rtc.diagnostics import Diagnostic, Severity
from rtc.model.topology import Topology

# Order matters only for reading the code: results are sorted before they are shown.
CHECK_MODULES: list[str] = [
    "rtc.checks.duplicates",
    "rtc.checks.device_ids",
    "rtc.checks.addresses",
    "rtc.checks.world_size",
    "rtc.checks.ranktable_rules",
    "rtc.checks.overlapping_ranks",
    "rtc.checks.node_fit",
    "rtc.checks.cross_node",
    "rtc.checks.hardware_groups",
    "rtc.checks.server_sizes",
    "rtc.checks.expert_parallel",
    # network, ports, inventory (RTC4xx)
    "rtc.checks.net_addresses",
    "rtc.checks.reachability",
    "rtc.checks.inventory_facts",
    "rtc.checks.device_numbering",
    "rtc.checks.ports",
    "rtc.checks.host_addressing",
    "rtc.checks.socket_env",
    # launch, environment, disaggregation (RTC5xx)
    "rtc.checks.launch",
    "rtc.checks.ray_order",
    "rtc.checks.disaggregation",
]


def run_checks(topology: Topology) -> list[Diagnostic]:
    """Run every registered check on ``topology`` and return all diagnostics, with the
    cluster's policies applied (``allow`` drops a rule's findings, ``warn``/``error`` set
    their severity)."""
    out: list[Diagnostic] = []
    for name in CHECK_MODULES:
        module = importlib.import_module(name)
        out.extend(module.check(topology))
    return apply_policies(topology, out)


def apply_policies(topology: Topology, diags: list[Diagnostic]) -> list[Diagnostic]:
    """Apply ``policy`` settings (by rule name or id) to diagnostics.

    A cluster block's policy applies to every finding; a job block's policy applies to the
    findings about that job -- those whose subject or message starts with ``job NAME`` (the
    convention every job-level check follows) or that name ``job NAME's`` ports -- and wins
    over the cluster's."""
    from rtc.rules import all_rules

    if not topology.policies and not any(j.policies for j in topology.jobs):
        return diags
    names = {r.name: r.code for r in all_rules()}
    names.update({n.replace("-", "_"): c for n, c in list(names.items())})

    def levels_of(policies) -> dict[str, str]:
        return {names.get(key, key): level for key, (level, _span) in policies.items()}

    cluster = levels_of(topology.policies)
    jobs = [(f"job {j.name}", levels_of(j.policies)) for j in topology.jobs if j.policies]
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


def _about(d: Diagnostic, prefix: str) -> bool:
    """True when the finding is about the job named by ``prefix`` (``job NAME``): its
    subject or message starts with it, or the message names something of the job
    (``job NAME's HCCL host ports``, as port findings between two jobs do)."""
    for text in (d.subject or "", d.message):
        if text == prefix or (text.startswith(prefix) and text[len(prefix)] in ",:'"):
            return True
    return f"{prefix}'s " in d.message


# Import the modules so their rules are registered for `rtc rules` / `rtc explain`.
for _name in CHECK_MODULES:
    importlib.import_module(_name)
