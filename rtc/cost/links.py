"""Link classes: which physical link joins two ranks, from the hardware preset.

A rank sits at a :class:`Site` (server index, physical device id, super pod). The
:class:`Hardware` of a cluster (from its preset, ``links.toml`` ``[chips.*]`` and the
job's environment) turns a pair of sites into a link class (reference ``cost-model.md``
§5.1):

=================  ============================================================
``local``          the same die (same server and device)
``sio-a3``         the two dies of one A3 package (device ids 2k, 2k+1)
``hccs-a3``        two dies of one A3 server in different packages (UB switches)
``hccs-910b``      two NPUs of one 910B server (full HCCS mesh)
``hccs-910a``      two 910A NPUs of the same HCCS group of 4 (in-ring)
``xring-910a``     two 910A NPUs of different groups (cross-ring; link not stated)
``ub-a3``          two A3 servers of one super pod (UB), unless
                   ``HCCL_INTER_HCCS_DISABLE=TRUE`` (then RoCE; reference §5.1)
``roce-<speed>``   anything else: RoCE at the NIC speed (100/200/400GE)
``pcie-gen4/5``    fall-back paths with parameters, for hardware that uses them
=================  ============================================================

On NVIDIA GPU presets (``family`` ``nvidia``) the same rules give: two GPUs of one NVLink
island -> the chip's NVLink class (``nvlink3`` / ``nvlink4`` / ``nvlink5`` through
NVSwitch, ``nvlink-bridge`` for bridged PCIe pairs); of different islands -> ``sys`` or
``pcie-gen4`` (the cross-group link); other servers -> the NIC (``ib-hdr``, ``ib-ndr``,
``eth-100g``). The NCCL ring model over them is :mod:`rtc.cost.nccl`.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Iterable, Mapping

from rtc.cost.params import chip_links
from rtc.model.presets import Preset

LOCAL = "local"
SIO_A3 = "sio-a3"
HCCS_A3 = "hccs-a3"
HCCS_910B = "hccs-910b"
HCCS_910A = "hccs-910a"
XRING_910A = "xring-910a"
UB_A3 = "ub-a3"
ROCE_100GE = "roce-100ge"
ROCE_200GE = "roce-200ge"
ROCE_400GE = "roce-400ge"
PCIE_GEN4 = "pcie-gen4"
PCIE_GEN5 = "pcie-gen5"

#: Every Ascend link class, fastest kind first (a tie-break for equal bandwidths).
ASCEND_CLASSES: tuple[str, ...] = (LOCAL, SIO_A3, HCCS_A3, UB_A3, HCCS_910B, HCCS_910A,
                                   XRING_910A, PCIE_GEN5, PCIE_GEN4, ROCE_400GE,
                                   ROCE_200GE, ROCE_100GE)

#: The NVIDIA link classes (parameters in links.toml, set ``nominal``), fastest first.
GPU_CLASSES: tuple[str, ...] = ("nvlink5", "nvls-h100", "nvlink4", "nvlink3", "nvlink-bridge",
                                "sys", "ib-ndr", "ib-hdr", "eth-100g")

#: NIC speed -> RoCE link class.
NIC_CLASSES: dict[str, str] = {"100ge": ROCE_100GE, "200ge": ROCE_200GE,
                               "400ge": ROCE_400GE}


@dataclass(frozen=True, order=True)
class Site:
    """Where a rank runs: the server's index (declaration order), the physical device id
    on it, and the server's super pod id (None when the hardware has none)."""

    server: int
    device: int
    super_pod: str | None = None


@dataclass(frozen=True)
class Hardware:
    """The link structure of a cluster's servers.

    ``family`` is ``910b``, ``910a``, ``a3`` or ``generic``; ``*_link`` name the link
    classes (None where the hardware has no such link); ``hccs_groups`` / ``die_pairs``
    come from the preset; ``rdma_lite`` feeds HCCL's Pipeline threshold;
    ``hccs_inter_disabled`` is ``HCCL_INTER_HCCS_DISABLE=TRUE`` (RoCE between the servers
    of a super pod); ``hbm`` the device memory of one rank in bytes (the preset's
    ``hbm_gb``; 0: unknown)."""

    preset: str
    family: str
    devices_per_server: int
    server_link: str
    nic: str
    die_pair_link: str | None = None
    super_pod_link: str | None = None
    cross_group_link: str | None = None
    hccs_groups: tuple[tuple[int, ...], ...] = ()
    die_pairs: tuple[tuple[int, int], ...] = ()
    rdma_lite: bool = True
    hccs_inter_disabled: bool = False
    hbm: float = 0.0
    nvls_link: str | None = None
    nics_per_server: int = 0

    def die_pair_of(self, device: int) -> int | None:
        """Index of the die pair (package) holding ``device`` (None without pairs)."""
        return self._pair_index.get(device)

    def hccs_group_of(self, device: int) -> int:
        """Index of the HCCS group holding ``device`` (0 when there is one group)."""
        return self._group_index.get(device, 0)

    @functools.cached_property
    def _pair_index(self) -> dict[int, int]:
        return {d: i for i, pair in reversed(list(enumerate(self.die_pairs))) for d in pair}

    @functools.cached_property
    def _group_index(self) -> dict[int, int]:
        return {d: i for i, g in reversed(list(enumerate(self.hccs_groups))) for d in g}


def env_value(env: Iterable | Mapping | None, name: str) -> str | None:
    """The value of variable ``name`` in ``env``: a mapping, or pairs / objects with
    ``name`` and ``value`` (a job's ``EnvLine`` list). The last one wins."""
    if env is None:
        return None
    if isinstance(env, Mapping):
        got = env.get(name)
        return None if got is None else str(got)
    found = None
    for item in env:
        key, value = (item.name, item.value) if hasattr(item, "name") else item
        if key == name:
            found = str(value)
    return found


def hardware_of(preset: Preset, *, env: Iterable | Mapping | None = None,
                nic: str | None = None, devices_per_server: int | None = None) -> Hardware:
    """The :class:`Hardware` of ``preset``, with the job's ``env`` applied
    (``HCCL_INTER_HCCS_DISABLE=TRUE``) and optionally another NIC speed (``"400ge"`` or
    a RoCE class name) or device count (for the ``generic`` preset).

    Link classes per chip come from ``links.toml`` ``[chips.*]`` (reference §1.1)."""
    chip = chip_links(preset.chip)
    count = devices_per_server or preset.devices_per_server
    groups = preset.nvlink_islands or preset.hccs_groups or (
        (tuple(range(count)),) if count else ())
    disabled = (env_value(env, "HCCL_INTER_HCCS_DISABLE") or "").strip().upper() == "TRUE"
    nic_class = chip.nic if nic is None else NIC_CLASSES.get(nic.lower(), nic)
    return Hardware(preset=preset.name, family=chip.family, devices_per_server=count,
                    server_link=chip.server_link, nic=nic_class,
                    die_pair_link=chip.die_pair_link,
                    super_pod_link=chip.super_pod_link if preset.super_pod else None,
                    cross_group_link=chip.cross_group_link, hccs_groups=groups,
                    die_pairs=preset.die_pairs, rdma_lite=chip.rdma_lite,
                    hccs_inter_disabled=disabled, hbm=preset.hbm_gb * 1e9,
                    nvls_link=chip.nvls_link, nics_per_server=preset.nics_per_server)


def _same_server_class(hw: Hardware, a: int, b: int) -> str:
    if hw.die_pair_link and hw.die_pairs:
        pa = hw.die_pair_of(a)
        if pa is not None and pa == hw.die_pair_of(b):
            return hw.die_pair_link
    if hw.cross_group_link and hw.hccs_group_of(a) != hw.hccs_group_of(b):
        return hw.cross_group_link
    return hw.server_link


def pair_class(hw: Hardware, a: Site, b: Site) -> str:
    """The link class between the ranks at ``a`` and ``b`` (see the module docstring).

    >>> from rtc.model.presets import presets
    >>> hw = hardware_of(presets()["atlas-800-a3"])
    >>> a, b, c = Site(0, 0, "0"), Site(0, 1, "0"), Site(0, 2, "0")
    >>> pair_class(hw, a, b), pair_class(hw, b, c)
    ('sio-a3', 'hccs-a3')
    >>> pair_class(hw, a, Site(1, 0, "0")), pair_class(hw, a, Site(1, 0, "1"))
    ('ub-a3', 'roce-200ge')
    """
    if a.server == b.server:
        if a.device == b.device:
            return LOCAL
        return _same_server_class(hw, a.device, b.device)
    if (hw.super_pod_link and not hw.hccs_inter_disabled and a.super_pod is not None
            and a.super_pod == b.super_pod):
        return hw.super_pod_link
    return hw.nic
