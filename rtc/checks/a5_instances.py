"""Ascend 950 (rank table 2.0) net instances: each server is its own level-0 instance, and
the servers of one super pod share the super pod level's instance (HCCL
rank_table_config_a5.md: ranks with one ``net_instance_id`` at a layer form one network
domain; level 0 is the domain of one server's topology file, so its ranks are that
server's devices).

* RTC232: two servers of one rank table have the same level-0 ``net_instance_id`` (a
  ``net_instance 0`` line equal to another server's, or to its default
  ``<super pod>_<n>``). In a table the two servers read back as one instance listing each
  device twice (:mod:`rtc.tables.lower_v2` starts a second server where the instance's
  device list starts again), so the same rule reports it there.
* RTC233: servers of one super pod get different ``net_instance_id`` at the super pod
  level (a ``net_instance 1`` line on some of them), or servers of different super pods
  the same one: the level-1 domain no longer matches the super pod. Description only: a
  table's super pod is read from that instance.
"""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.checks.ranktable_rules import tables_of
from rtc.diagnostics import Related, error
from rtc.model.net_instances import default_instances, net_instance
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

SHARED_INSTANCE = rule("RTC232", "shared-net-instance", "error",
                       "Two Ascend 950 servers have the same level-0 net_instance_id.", """
    What: two servers of one rank table 2.0 get the same `net_instance_id` at level 0
    (a `net_instance 0 NAME` line equal to another server's name or to its default
    `<super pod>_<n>`; in a table, one level-0 instance whose device list starts again).
    Why: level 0 is the domain of one server's topology file; HCCL takes the ranks of one
    level-0 instance as the devices of one server, so the table lists each device twice
    (RTC204) and the mesh links go to the wrong node.
    Example: `net_instance 0 0_1` on the first of two servers of super pod 0 (the second
    one's default is 0_1).
    Fix: give each server its own level-0 name, or drop the `net_instance 0` line to use
    the default `<super pod>_<n>`.""")

SPLIT_POD = rule("RTC233", "split-super-pod-instance", "error",
                 "The super pod level's net_instance_id does not match the super pods.", """
    What: servers of one `super_pod` get different `net_instance_id` at the super pod
    level (a `net_instance 1 NAME` line on some of them), or servers of different super
    pods get the same one.
    Why: HCCL builds one UB domain per level-1 instance; a split instance cuts the super
    pod in two (ranks on either side stop reaching each other over UB), a shared one
    joins two super pods that have no UB between them.
    Example: `net_instance 1 sp` on one of two servers in `super_pod 0`.
    Fix: write the same `net_instance 1` line on every server of the super pod (or none:
    the default is the super pod id).""")


def _level(topo: Topology, scope: str):
    return next((lv for lv in topo.preset.levels if lv.scope == scope), None)


def _shared_level0(topo: Topology, members, defaults: dict, level):
    folded = Folded("servers")
    seen: dict[str, object] = {}
    for s, _devs in members:
        name = net_instance(s, level, defaults)
        first = seen.setdefault(name, s)
        if first is s:
            continue
        # where the name was written: this server's line, else the first one's
        at, other = (first, s) if level.net_layer in first.net_instances and \
            level.net_layer not in s.net_instances else (s, first)
        span = at.span_of("net_instance") if level.net_layer in at.net_instances else at.span
        folded.add((SHARED_INSTANCE.code, span), error(
            SHARED_INSTANCE, f"{at.name} has level-0 net_instance_id \"{name}\", which "
            f"{other.name} has too: HCCL would read the two servers as one instance (each "
            "device twice)", span, subject=at.label,
            related=[Related(other.span_of("net_instance") if level.net_layer in
                             other.net_instances else other.span, f"{other.name}")],
            hint="give each server its own `net_instance 0 NAME` (in a family, make it "
                 "depend on i, e.g. `pod0_{i}`), or drop the line to use the default "
                 "<super pod>_<n>"), s.name)
    yield from folded.emit()


def _split_pods(topo: Topology, members, level):
    by_pod: dict[str, tuple] = {}
    by_name: dict[str, tuple] = {}
    for s, _devs in members:
        name = net_instance(s, level, {})
        if name is None:
            continue
        pod = by_pod.setdefault(s.super_pod_id, (name, s))
        owner = by_name.setdefault(name, (s.super_pod_id, s))
        if pod[0] != name:
            why = (f"super pod {s.super_pod_id} has \"{pod[0]}\" on {pod[1].name}: the "
                   "instance splits the super pod")
            other = pod[1]
        elif owner[0] != s.super_pod_id:
            why = (f"{owner[1].name} of super pod {owner[0]} has it too: the instance joins "
                   "two super pods")
            other = owner[1]
        else:
            continue
        # point at a written `net_instance` line: this server's, else the other's
        at = other if level.net_layer in other.net_instances and \
            level.net_layer not in s.net_instances else s
        yield error(SPLIT_POD, f"{s.name} has net_instance_id \"{name}\" at layer "
                    f"{level.net_layer} (the super pod level); {why}",
                    at.span_of("net_instance"), subject=s.label,
                    related=[Related(other.span_of("net_instance"), other.name)],
                    hint=f"write the same `net_instance {level.net_layer}` line on every "
                         "server of the super pod, or none (the default is the super pod id)")
        return


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_a5:
        return
    level0, pods = _level(topo, "server"), _level(topo, "super_pod")
    defaults = default_instances(topo)
    for _job, members in tables_of(topo):
        if level0 is not None:
            yield from _shared_level0(topo, members, defaults, level0)
        if pods is not None and topo.origin == "description":
            yield from _split_pods(topo, members, pods)


#: The rules this module reports.
RULES = (SHARED_INSTANCE, SPLIT_POD)
