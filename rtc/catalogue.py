"""The catalogue of every rule rtc can report: ``rtc rules``, ``rtc explain``, SARIF rule
metadata and the rule names a ``policy`` line may use.

Each module that reports findings declares its rules with :func:`rtc.rules.rule` and lists
them in its ``RULES`` tuple; this module joins those tuples in pipeline order (a static list
a reader can follow: nothing is found by name at run time). ``tests/test_architecture.py``
checks that every declared rule is here, that ids are unique, and that no module reports a
bare ``"RTCnnn"`` string.
"""

from __future__ import annotations

from rtc import rules as driver
from rtc.checks import RULES as CHECK_RULES
from rtc.checks import policies
from rtc.inventory import allreduce_sweep, ibv_devinfo, nccl_tests, npu_smi_board, nvidia_smi
from rtc.inventory import rules as inventory
from rtc.model import lower_decls, lower_jobs, lower_servers
from rtc.plan import kubernetes as k8s_plan
from rtc.preflight import findings as preflight
from rtc.preflight import nccl as nccl_preflight
from rtc.preflight import npu_bandwidth
from rtc.rules import Rule
from rtc.schema import explain as schema_rules
from rtc.syntax import parser, schema, values
from rtc.tables import configmap, importer, jsonload, pods, recognise, semantic
from rtc.tables import import_global
from rtc.scripts import drift as script_drift
from rtc.scripts import rules as script_rules
from rtc.scripts import manifests as script_manifests
from rtc.scripts import sglang_rules
from rtc.scripts import torchrun_rules
from rtc.model import net_layers

#: Every rule, in pipeline order: driver, syntax, lowering, inventory, checks, policies,
#: the JSON front end and schema, table rules, import, preflight.
PIPELINE_ORDER: tuple[Rule, ...] = (
    driver.RULES + parser.RULES + values.RULES + schema.RULES
    + lower_decls.RULES + lower_servers.RULES + lower_jobs.RULES + inventory.RULES
    + nvidia_smi.RULES + ibv_devinfo.RULES + npu_smi_board.RULES + nccl_tests.RULES + allreduce_sweep.RULES
    + CHECK_RULES + policies.RULES
    + jsonload.RULES + recognise.RULES + schema_rules.RULES + semantic.RULES + importer.RULES
    + preflight.RULES + k8s_plan.RULES + configmap.RULES + pods.RULES
    + script_rules.RULES + sglang_rules.RULES + torchrun_rules.RULES + script_manifests.RULES
    + script_drift.RULES
    + nccl_preflight.RULES + npu_bandwidth.RULES
    + import_global.RULES
    + net_layers.RULES)

#: Every rule, sorted by code.
RULES: tuple[Rule, ...] = tuple(sorted(PIPELINE_ORDER, key=lambda r: r.code))

_BY_CODE = {r.code: r for r in RULES}


def get_rule(code: str) -> Rule | None:
    """The rule with this id (case-insensitive: ``rtc208`` works), or None."""
    return _BY_CODE.get(code.upper())
