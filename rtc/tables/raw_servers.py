"""Servers as a JSON rank table holds them, before lowering: where each value sits in the
file (:class:`ServerOrigin`) and the server's raw values (:class:`RawServer`). Shared by the
v1.x / PD / legacy lowering (:mod:`rtc.tables.lower_table`) and the 2.0 one
(:mod:`rtc.tables.lower_v2`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: :attr:`RawServer.hidden` of a server one of whose devices has no usable device_ip.
NO_IP = frozenset({"device_ip"})


@dataclass
class ServerOrigin:
    """Where one lowered server's values are in the JSON file (paths, not spans)."""

    server_id: tuple | None = None      # the server_id value
    obj: tuple | None = None            # the server object (None for PD / legacy)
    host: tuple | None = None           # the host_ip value
    device_key: tuple | None = None     # path whose *key* is the device array
    devices: list = field(default_factory=list)   # [(device_id, device object path, dict)]
    pod: tuple | None = None            # the super_pod_id value naming its pod
    container: tuple | None = None      # the container_ip value (the pod IP)
    first_missing: dict = field(default_factory=dict)  # device key -> first device lacking it
    #: (device_id, device key) -> the value's path where it is not a key of the device
    #: object (2.0 tables: the address inside level_list)
    subpaths: dict = field(default_factory=dict)
    backup: tuple | None = None         # 2.0: the backup rank's replaced_local_id value

    def device_path(self, device_id: int):
        """(path, dict) of the device with this id (the last one when it repeats)."""
        found = None
        for did, path, d in self.devices:
            if did == device_id:
                found = (path, d)
        return found

    def anchor(self) -> tuple | None:
        return self.server_id or self.obj or (self.devices[0][1] if self.devices else None)


@dataclass
class RawServer:
    """A server as read from the table, before it becomes a :class:`rtc.model.topology.Server`."""

    server_id: str | None
    origin: ServerOrigin
    devices: list = field(default_factory=list)      # Device
    host: object = None
    container: object = None
    pod: str | None = None
    hidden: frozenset = frozenset()
    order: tuple = ()
    min_rank: float = float("inf")
    incomplete: frozenset = frozenset()  # see "Server order" in the module docstring
    net_instances: dict = field(default_factory=dict)  # 2.0: layer -> net_instance_id
    backup: tuple | None = None  # 2.0: (device_id, replaced_local_id) of the backup rank
