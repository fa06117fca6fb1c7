"""The intra-server links a server's captures show, fed into the cost model's
:class:`~rtc.cost.links.Hardware`.

``npu-smi info -t topo`` (:class:`rtc.inventory.npu_smi.TopoMatrix`) says which NPU pairs
of an Ascend server are joined by HCCS (``HCCS``, ``HCCS_SW``, ``SIO``) and which only by
PCIe or the CPU (``PIX``, ``PXB``, ``PHB``, ``SYS``). Its HCCS islands replace the preset's
``hccs_groups``; pairs in different islands are costed over ``cross_group_link`` (the
preset's, e.g. ``xring-910a``, or ``pcie-gen4`` when the preset has none: a 910B or A3
server is a full HCCS mesh, so a capture that splits it means PCIe between the parts).
Servers without a capture keep the preset's links.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the link classes (links.toml) are read only when a job is costed
    from rtc.cost.links import Hardware

Islands = tuple[tuple[int, ...], ...]


def server_islands(server) -> Islands | None:
    """The HCCS islands of ``server`` (a :class:`~rtc.model.topology.Server`) from its
    ``npu-smi info -t topo`` capture, or None when it has no such capture."""
    inv = getattr(server, "inventory_facts", None)
    topo = getattr(inv, "topo", None) if inv is not None else None
    if topo is None or not topo.ids:
        return None
    return tuple(topo.hccs_islands())


def restricted(islands: Islands, devices) -> Islands:
    """``islands`` keeping only ``devices`` (empty islands dropped), sorted."""
    want = set(devices)
    return tuple(sorted(g for g in (tuple(d for d in isl if d in want) for isl in islands) if g))


def with_islands(hw: Hardware, islands: Islands) -> Hardware:
    """``hw`` with its HCCS groups replaced by the captured ``islands``; pairs between
    islands go over the preset's cross-group link, or PCIe Gen4 when it has none."""
    from rtc.cost.links import PCIE_GEN4

    return dataclasses.replace(hw, hccs_groups=tuple(islands),
                               cross_group_link=hw.cross_group_link or PCIE_GEN4)


def job_islands(topology, job) -> Islands | None:
    """The captured HCCS islands to cost ``job`` with: of the first of its servers (in
    declaration order) whose capture, restricted to the devices the job uses there,
    splits them differently from the preset's groups; None when no server of the job has
    a capture that does (the preset's links stand). The model has one set of groups per
    job, so one damaged server stands for all of them (the finding, RTC225 / RTC226, names
    which)."""
    if topology.preset.is_gpu:
        return None
    preset_groups = topology.preset.hccs_groups
    for p in job.placements:
        islands = server_islands(p.server)
        if islands is None:
            continue
        used = tuple(p.device_ids)
        want = restricted(preset_groups or (tuple(used),), used)
        if restricted(islands, used) != want:
            return islands
    return None
