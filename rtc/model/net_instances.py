"""The ``net_instance_id`` a server gets at each rank table 2.0 level, for the emitter
(:mod:`rtc.emit.hccl_v2`) and the checks that compare servers' instances (RTC232, RTC233):
the server's ``net_instance LAYER NAME`` when written; else at a ``server`` level
``<super pod>_<n>`` (n = the server's place among its super pod's servers, MindCluster's
``<super pod>_<chassis>``) or the server_id outside a super pod; at a ``super_pod`` level
the super pod (the level does not apply to a server without one); at a ``cluster`` level
``CLUSTER`` (MindCluster mindcluster-tools utils/const.py)."""

from __future__ import annotations

from rtc.model.presets import NetLevel
from rtc.model.topology import Server, Topology

__all__ = ["CLUSTER_INSTANCE", "default_instances", "net_instance"]

CLUSTER_INSTANCE = "CLUSTER"  # MindCluster mindcluster-tools utils/const.py


def default_instances(topo: Topology) -> dict[int, str]:
    """id(server) -> its default level-0 instance ``<super pod>_<n>`` (servers with a
    super pod only, on a preset with a super pod level; n counts the pod's servers in
    declared order)."""
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    if not any(lv.scope == "super_pod" for lv in topo.preset.levels):
        return out  # no super pod level (atlas-350): super_pod names no instance
    for s in topo.servers:
        if s.super_pod_id is not None:
            n = seen.get(s.super_pod_id, 0)
            seen[s.super_pod_id] = n + 1
            out[id(s)] = f"{s.super_pod_id}_{n}"
    return out


def net_instance(server: Server, level: NetLevel, defaults: dict) -> str | None:
    """The server's ``net_instance_id`` at ``level`` (None: the level does not apply)."""
    given = server.net_instances.get(level.net_layer)
    if level.scope == "super_pod" and server.super_pod_id is None:
        return None
    if given is not None:
        return given
    if level.scope == "server":
        return defaults.get(id(server), server.server_id)
    if level.scope == "super_pod":
        return server.super_pod_id
    return CLUSTER_INSTANCE
