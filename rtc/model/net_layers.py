"""Which rank table 2.0 layers exist on a preset, and which ones a per-layer attribute
applies to: one rule (RTC674) for the language's ``plane`` / ``port_eid`` / ``level_ip``
/ ``net_instance`` lines and for a table's ``net_layer`` values.

A 2.0 preset's levels are data (``rtc/model/presets.toml``, from HCCL
rank_table_config_a5.md and MindCluster's rank table builder): e.g. atlas-950-superpod
has 0 (TOPO_FILE_DESC, the node's UB mesh), 1 (CLOS, the super pod's UB) and 3 (CLOS,
RoCE between super pods). ``port_eid`` and ``level_ip`` replace the die EIDs of a UB
(``eid``) level, so they mean nothing at the RoCE (``device_ip``) level or at a level
without ports.
"""

from __future__ import annotations

from rtc.model.presets import Preset
from rtc.rules import rule

__all__ = ["NET_LAYER", "layer_problem", "levels_text"]

NET_LAYER = rule("RTC674", "bad-net-layer", "error",
                 "A rank table 2.0 layer is not a level of the hardware (or of the attribute).",
                 """
    What: a `plane`, `port_eid`, `level_ip` or `net_instance` line names a layer the
    preset has no level for (e.g. `port_eid 5` on atlas-950-superpod, whose levels are
    0, 1 and 3), or `port_eid` / `level_ip` names the RoCE level (3), whose address is
    the device's `device_ip`; in a 2.0 table, a level's `net_layer` that is no level of
    the hardware (e.g. 2 or 7 on atlas-950-superpod), or addresses at a UB level the
    hardware has no ports for (EIDs at level 0 with `--hardware atlas-350`).
    Why: HCCL builds one network domain per layer; a layer the hardware does not have
    is read as another network (ranks at layer 2 and 3 never meet), and a line for it
    would be silently ignored by the compile.
    Fix: use the layers the message lists (the preset's levels, rtc/model/presets.toml);
    for the RoCE address write `device_ip`; for a table, pass the `--hardware` it was
    built for.""")


def levels_text(preset: Preset) -> str:
    """``0 (TOPO_FILE_DESC, UB eid), 1 (CLOS, UB eid), 3 (CLOS, RoCE device_ip)``."""
    return ", ".join(f"{lv.net_layer} ({lv.net_type}, "
                     f"{'RoCE device_ip' if lv.address == 'device_ip' else 'UB eid'})"
                     for lv in preset.levels)


def layer_problem(preset: Preset, layer: int, key: str) -> str | None:
    """Why ``layer`` is wrong for the attribute ``key`` (``plane``, ``port_eid``,
    ``level_ip``, ``net_instance`` or ``net_layer`` for a table) on ``preset``, or None
    when it is fine (also for a preset without 2.0 levels: RTC512 covers those)."""
    if not preset.levels:
        return None
    level = next((lv for lv in preset.levels if lv.net_layer == layer), None)
    if level is None:
        return (f"layer {layer} is not a level of {preset.name} (its levels: "
                f"{levels_text(preset)})")
    if key in ("port_eid", "level_ip") and level.address != "eid":
        return (f"layer {layer} is the RoCE level of {preset.name}, whose address is the "
                f"device's device_ip; {key} replaces the die EIDs of a UB level ("
                + ", ".join(str(lv.net_layer) for lv in preset.levels
                            if lv.address == "eid") + ")")
    return None


#: The rules this module declares (joined in rtc.catalogue).
RULES = (NET_LAYER,)
