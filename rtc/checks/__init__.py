"""Checks: pure functions ``check(topology, plan) -> iterable of Diagnostic``, one module per
rule family, run in the order of :data:`CHECKS`.

A check is written once over the model (:class:`~rtc.model.topology.Topology`) and the plan
(:class:`~rtc.plan.Plan`), and so applies with the same rule id to ``.rtc`` descriptions and
to existing rank tables lowered by :mod:`rtc.tables`. Checks never print and never modify
their inputs. Each module declares its rules with :func:`rtc.rules.rule` and lists them in
its ``RULES``. Policies (``policy RULE error|warn|allow``) and ``--strict`` change severities
after the checks ran (:mod:`rtc.checks.policies`).
"""

from __future__ import annotations

from functools import partial

from rtc.checks import (addresses, block_names, cost_inputs, cross_node, device_ids, device_numbering,
                        duplicates, env_values, expert_parallel, hardware_groups, host_addressing,
                        inventory_facts, launch_settings, net_addresses, node_fit,
                        overlapping_ranks, parallel_sizes, pd_pairing, peer_reachability,
                        port_conflicts, ranktable_rules, ray_order, server_sizes, socket_env,
                        unused_attributes, world_size)
from rtc.checks import a5_addresses, chip_version, one_machine
from rtc.checks import dp_launch
from rtc.checks import node_agreement
from rtc.checks import gpu_islands, nccl_env
from rtc.checks import hccs_links, link_env
from rtc.checks import mindie_launch
from rtc.checks import nixl_pd
from rtc.checks import a5_backup
from rtc.checks import a5_instances
from rtc.checks import kv_capacity
from rtc.checks import sglang_layout
from rtc.checks import ray_npu_env
from rtc.checks import pd_roles
from rtc.diagnostics import Diagnostic
from rtc.model.topology import Topology
from rtc.plan import Plan

#: Every check module, in the order they run (results are sorted before they are shown).
CHECKS = (
    # structure of the cluster (RTC2xx)
    duplicates, block_names, device_ids, addresses, world_size, ranktable_rules,
    # parallel groups and placement (RTC3xx)
    overlapping_ranks, node_fit, parallel_sizes, cross_node, hardware_groups, server_sizes,
    expert_parallel, cost_inputs, kv_capacity,
    # network, ports, inventory (RTC4xx)
    net_addresses, peer_reachability, inventory_facts, device_numbering, port_conflicts,
    host_addressing, socket_env, env_values,
    # launch, environment, disaggregation (RTC5xx)
    launch_settings, ray_order, pd_pairing, unused_attributes,
    # Ascend 950 (rank table 2.0)
    a5_addresses, chip_version,
    # one machine, one server entry
    one_machine,
    dp_launch,
    # the nodes of one deployment give alike what vLLM needs alike (RTC722, RTC723)
    node_agreement,
    # NVIDIA GPU servers: NVLink islands (RTC312, RTC313, RTC473), NCCL_IB_HCA (RTC472)
    gpu_islands, nccl_env,
    # captured intra-server links (RTC225, RTC226) and the HCCL env that depends on them
    hccs_links, link_env,
    # MindIE jobs (RTC656-658)
    mindie_launch,
    # prefill/decode with vLLM's own connectors (NixlConnector; RTC533-RTC537)
    nixl_pd,
    # Ascend 950: the backup rank (RTC231)
    a5_backup,
    # Ascend 950: level-0 and super pod net instances (RTC232, RTC233)
    a5_instances,
    # SGLang's layout over several servers (RTC350)
    sglang_layout,
    # Ray on Ascend NPUs in lifted scripts (RTC710)
    ray_npu_env,
    # the kv_role sides of lifted prefill/decode scripts (RTC711)
    pd_roles,
)

#: The rules of every check module.
RULES = tuple(r for module in CHECKS for r in module.RULES)


def run_checks(topology: Topology, plan: Plan) -> list[Diagnostic]:
    """Every check of :data:`CHECKS` on ``topology`` and its ``plan``: all diagnostics, in
    check order (policies not applied: see :func:`rtc.checks.policies.apply_policies`)."""
    out: list[Diagnostic] = []
    for module in CHECKS:
        out.extend(module.check(topology, plan))
    return out


#: The check modules whose ``check`` reads its ``plan`` argument; the others ignore it.
#: :func:`check_tasks` puts these first, so the process that takes its share of the checks
#: from the back (:func:`rtc.forked.share`) seldom needs a plan of its own. Kept true by
#: ``tests/checks/test_check_tasks.py``, which reads each check's source.
PLAN_READERS = (block_names, inventory_facts, port_conflicts, launch_settings, ray_order,
                pd_pairing, unused_attributes, dp_launch, mindie_launch, nixl_pd,
                node_agreement, ray_npu_env, pd_roles)


#: The checks that plan nothing but take the most time on a large cluster (seconds at
#: 65,536 A2 NPUs on the 2-core VM: peer_reachability 0.14, duplicates 0.08,
#: net_addresses 0.05, cross_node 0.04, device_numbering 0.03, addresses 0.02; the rest
#: under 0.02 each). :func:`check_tasks` puts them right after the plan readers, so the
#: two processes sharing the checks meet among short ones and neither waits long for the
#: other's last task.
HEAVY_CHECKS = (peer_reachability, duplicates, net_addresses, cross_node, device_numbering,
                addresses)


def check_tasks(topology: Topology, plan_of) -> list:
    """:func:`run_checks` as zero-argument callables, one per module of :data:`CHECKS`,
    for sharing the checks between two processes (:func:`rtc.forked.share`): the modules
    of :data:`PLAN_READERS` first, then :data:`HEAVY_CHECKS`, then the others in
    :data:`CHECKS` order. A task gives ``(position in CHECKS, diagnostics)``;
    :func:`joined` puts the results together as :func:`run_checks` gives them.
    ``plan_of()`` gives the plan and is called only by the tasks of plan readers (so it
    may build the plan on first use); the others get None."""
    position = {module: k for k, module in enumerate(CHECKS)}
    first = PLAN_READERS + HEAVY_CHECKS
    order = [m for m in CHECKS if m in PLAN_READERS] + list(HEAVY_CHECKS) + \
        [m for m in CHECKS if m not in first]
    return [partial(_diagnostics_of, position[m], m, topology,
                    plan_of if m in PLAN_READERS else None) for m in order]


def joined(results: list) -> list[Diagnostic]:
    """The diagnostics of :func:`check_tasks`' results (any order), in check order."""
    return [d for _k, part in sorted(results, key=lambda r: r[0]) for d in part]


def _diagnostics_of(position: int, module, topology: Topology, plan_of) -> tuple:
    return position, list(module.check(topology, None if plan_of is None else plan_of()))
