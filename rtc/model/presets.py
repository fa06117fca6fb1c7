"""Hardware presets, loaded from ``presets.toml`` (data, not branches in code).

A :class:`Preset` gives the NPUs per server, valid physical device ids, the intra-server
fabric (HCCS groups, A3 die pairs), the rank table version (1.0, 1.2 or 2.0) and whether
multi-server tables need device IPs. Ascend 950 presets (rank table 2.0) add the dies per
NPU, the UB ports of the in-server mesh and their network levels (:class:`NetLevel`).
Sources are cited in the TOML file.

NVIDIA GPU presets (``vendor = "nvidia"``) have no rank table (``ranktable_version``
``"none"``); their intra-server fabric is ``nvlink_islands`` (the GPU sets joined by
NVLink) and their NIC count ``nics_per_server``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from rtc.resources import package_toml


class NetLevel(NamedTuple):
    """One network level of a rank table 2.0 preset (one ``level_list`` entry per rank).

    ``scope``: ``server`` (the topology-file domain of one server), ``super_pod`` (only
    servers with a ``super_pod``; its id names the instance) or ``cluster`` (one instance,
    ``CLUSTER``). ``address``: ``eid`` (one EID per die, the die's ``ports``) or
    ``device_ip`` (the device's RoCE address, IPV4 or IPV6). ``ports`` are ``die/port``
    strings (level 0 takes the mesh ports instead); ``plane`` is ``die`` (plane_id = die
    number) or a fixed plane_id; ``topo_type`` is the topology-file edge type (1DMESH for
    the in-server mesh, CLOS towards a switch). Source: HCCL rank_table_config_a5.md,
    MindCluster mindcluster-tools rootinfo.py (see presets.toml)."""

    net_layer: int
    net_type: str
    scope: str
    address: str
    protocols: tuple[str, ...]
    ports: tuple[str, ...]
    plane: str
    topo_type: str


class Preset(NamedTuple):
    """One hardware preset. ``devices_per_server`` is 0 for ``generic`` (the cluster gives it)."""

    name: str
    description: str
    chip: str
    devices_per_server: int
    ranktable_version: str
    intra_server_link: str
    inter_server_link: str
    device_ip_required_multi_server: bool
    super_pod: bool
    hccs_groups: tuple[tuple[int, ...], ...]
    die_pairs: tuple[tuple[int, int], ...]
    allowed_server_sizes: tuple[int, ...]
    #: Every server of a rank table must have the same number of devices (HCCL's
    #: CheckDeviceNumValid; skipped by HCCL on 910B and A3).
    equal_server_sizes: bool = False
    #: Device memory of one rank (an NPU, or one die on A3) in GB (10^9 bytes); 0 when
    #: unknown. RTC343 and the advisor compare the weights per rank with it.
    hbm_gb: int = 0
    hbm_source: str = ""
    #: Rank table 2.0 (Ascend 950) only: dies per NPU, physical UB ports per die, the
    #: factory topology file's name, the port of each mesh peer (peer j of a device ->
    #: ``mesh_ports[j]``) and the network levels, lowest first.
    dies_per_device: int = 1
    ports_per_die: int = 0
    topo_file: str = ""
    mesh_ports: tuple[str, ...] = ()
    levels: tuple[NetLevel, ...] = ()

    @property
    def is_a5(self) -> bool:
        """True for Ascend 950 hardware (rank table 2.0 and a topology file)."""
        return self.ranktable_version == "2.0"
    #: ``ascend`` or ``nvidia``.
    vendor: str = "ascend"
    #: NVIDIA: the GPU sets joined by NVLink (one set per island; singletons: PCIe only).
    nvlink_islands: tuple[tuple[int, ...], ...] = ()
    #: NVIDIA: compute-fabric NICs per server (NCCL uses one ring per NIC across servers).
    nics_per_server: int = 0
    source: str = ""

    @property
    def is_gpu(self) -> bool:
        """True for NVIDIA GPU hardware (no HCCL rank table; CUDA / NCCL variables)."""
        return self.vendor == "nvidia"

    @property
    def visible_devices_var(self) -> str:
        """The variable that lists the devices a process sees (CUDA runtime or Ascend)."""
        return "CUDA_VISIBLE_DEVICES" if self.is_gpu else "ASCEND_RT_VISIBLE_DEVICES"

    def island_of(self, device: int) -> int | None:
        """Index of the NVLink island holding GPU ``device`` (None when none does)."""
        for i, island in enumerate(self.nvlink_islands):
            if device in island:
                return i
        return None

    def with_devices(self, count: int, islands=()) -> "Preset":
        """A copy with ``devices_per_server`` set (for ``generic`` / ``generic-gpu``;
        ``islands``: the NVLink islands the cluster gives; the other GPUs are PCIe-only)."""
        if self.is_gpu:
            given = tuple(tuple(sorted(i)) for i in islands)
            seen = {d for i in given for d in i}
            rest = tuple((d,) for d in range(count) if d not in seen)
            return self._replace(devices_per_server=count, nvlink_islands=given + rest)
        return self._replace(devices_per_server=count,
                             hccs_groups=self.hccs_groups or (tuple(range(count)),))


#: Most NPUs a ``generic`` server may have (``devices_per_server``).
MAX_GENERIC_DEVICES = 64


@functools.lru_cache(maxsize=1)
def presets() -> dict[str, Preset]:
    """All presets by name."""
    data = package_toml("model", "presets.toml")
    out = {}
    for name, d in data.items():
        out[name] = Preset(
            name=name,
            description=d["description"],
            chip=d["chip"],
            devices_per_server=d["devices_per_server"],
            ranktable_version=d["ranktable_version"],
            intra_server_link=d["intra_server_link"],
            inter_server_link=d["inter_server_link"],
            device_ip_required_multi_server=d["device_ip_required_multi_server"],
            super_pod=d["super_pod"],
            hccs_groups=tuple(tuple(g) for g in d.get("hccs_groups", [])),
            die_pairs=tuple(tuple(p) for p in d.get("die_pairs", [])),
            allowed_server_sizes=tuple(d.get("allowed_server_sizes", [])),
            equal_server_sizes=d.get("equal_server_sizes", False),
            hbm_gb=d.get("hbm_gb", 0), hbm_source=d.get("hbm_source", ""),
            dies_per_device=d.get("dies_per_device", 1),
            ports_per_die=d.get("ports_per_die", 0),
            topo_file=d.get("topo_file", ""),
            mesh_ports=tuple(d.get("mesh_ports", [])),
            levels=tuple(NetLevel(lv["net_layer"], lv["net_type"], lv["scope"], lv["address"],
                                  tuple(lv["protocols"]), tuple(lv["ports"]), lv["plane"],
                                  lv["topo_type"]) for lv in d.get("levels", [])),
            vendor=d.get("vendor", "ascend"),
            nvlink_islands=tuple(tuple(g) for g in d.get("nvlink_islands", [])),
            nics_per_server=d.get("nics_per_server", 0),
            source=d.get("source", ""),
        )
    return out
