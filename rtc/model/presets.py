"""Hardware presets, loaded from ``presets.toml`` (data, not branches in code).

A :class:`Preset` gives the NPUs per server, valid physical device ids, the intra-server
fabric (HCCS groups, A3 die pairs), the rank table version (1.0 or 1.2) and whether
multi-server tables need device IPs. Sources are cited in the TOML file.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Preset:
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

    def with_devices(self, count: int) -> "Preset":
        """A copy with ``devices_per_server`` set (for ``generic``)."""
        return Preset(**{**self.__dict__, "devices_per_server": count,
                         "hccs_groups": (tuple(range(count)),) if not self.hccs_groups
                         else self.hccs_groups})


#: Most NPUs a ``generic`` server may have (``devices_per_server``).
MAX_GENERIC_DEVICES = 64


@functools.lru_cache(maxsize=1)
def presets() -> dict[str, Preset]:
    """All presets by name."""
    data = tomllib.loads(resources.files("rtc.model").joinpath("presets.toml").read_text("utf-8"))
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
        )
    return out
