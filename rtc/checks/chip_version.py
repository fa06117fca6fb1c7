"""The rank table version against the chip (RTC636), and the chip a server's captures show
against the hardware preset (RTC222).

One rule for both front ends: :func:`version_problem` says what is wrong with a table
version on given hardware; :mod:`rtc.tables.semantic.versions` applies it to existing
tables (``rtc validate --hardware``), :func:`check` to descriptions whose servers have
``npu-smi info`` captures (the chip name column).

Which version each chip reads: the HCCL user guide (hicann/hccl @09300b70,
``docs/zh/user_guide/cluster_info_config/rank_table_config_{910,a2,a3,a5}.md``) and the
parser that picks by ``version`` (libochao-huawei/hcomm @8958adbf, mirror of cann/hcomm:
``topoinfo_ranktableParser_pub.h`` for 1.0 / 1.1 / 1.2, ``rank_table_info.cc`` for 2.0).
Ascend 910 / 910B read 1.0; Ascend 910_93 (A3) reads 1.0 (typical networking) or 1.2
(super pod); Ascend 950 reads only 2.0.
"""

from __future__ import annotations

import re

from rtc.diagnostics import Diagnostic, Related, Span, error
from rtc.model.presets import Preset
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

VERSION_HW = rule("RTC636", "version-hardware-mismatch", "error",
                  "The table version does not fit the hardware.", """
    What: a version "1.0" / "1.2" table on Ascend 950 hardware (atlas-950-superpod,
    atlas-850, or captures whose `npu-smi info` shows a 950 chip), or version "2.0" on
    A2/A3/910A hardware (errors); version "1.2" for hardware without super pods (a
    warning).
    Why: HCCL picks its parser by version. Ascend 950 reads only 2.0 and fails every job
    with Config_Error_Ranktable (EI0014) on a left-over 1.x table, without naming the
    file; A2/A3 cannot read 2.0; the super pod fields of 1.2 are ignored outside a super
    pod.
    Example: `rtc validate --hardware atlas-950-superpod hccl.json` where hccl.json is
    version "1.0" (a stale ConfigMap mounted at /user/serverid/devindex/config).
    Fix: use "2.0" (and its topology files) on Ascend 950, "1.0" for Atlas 800T A2, 910A
    and A3 typical networking, "1.2" for A3 super pods; find the stale table through
    RANK_TABLE_FILE; or pass the right --hardware / hardware preset.""", also={"warning": "version \"1.2\" for hardware without super pods"})
CHIP_PRESET = rule("RTC222", "chip-preset-mismatch", "error",
                   "A server's captures show another chip than the hardware preset.", """
    What: `npu-smi info` in a server's `inventory` folder lists e.g. 910B2 chips (Atlas
    800T A2) while the cluster says `hardware atlas-800-a3`.
    Why: the preset decides the device ids, the table version and every hardware rule;
    judged for the wrong chip they pass tables HCCL will reject (or reject good ones).
    Example: a 910B capture on a cluster declared A3.
    Fix: set `hardware` to the preset of the chip the captures show, or capture the
    right server.""")

#: Where a stale table usually comes from (MindCluster ascend-operator / hccl-controller
#: mount the rings-config ConfigMap there; RANK_TABLE_FILE points at it).
STALE_TABLE_HINT = ("a stale table is usually the rings-config ConfigMap mounted at "
                    "/user/serverid/devindex/config/hccl.json or a host file mounted into "
                    "the container: check the file RANK_TABLE_FILE names")

_VERSIONS = {"a2": "1.0", "910a": "1.0", "a3": "1.0 or 1.2", "a5": "2.0"}
_NAMES = {"a2": "Ascend 910B", "910a": "Ascend 910", "a3": "Ascend 910_93 (A3)",
          "a5": "Ascend 950"}
_PRESET_FAMILY = {"Ascend910B": "a2", "Ascend910_93": "a3", "Ascend910": "910a",
                  "Ascend950": "a5"}


def preset_family(preset: Preset) -> str | None:
    """``a2``, ``a3``, ``910a`` or ``a5`` for a preset's chip (None for ``generic``)."""
    return _PRESET_FAMILY.get(preset.chip)


def chip_family(name: str, a3_columns: bool = False) -> str | None:
    """The chip generation of an ``npu-smi info`` name (``910B2`` -> ``a2``, ``950PR`` /
    ``Ascend950DT`` -> ``a5``, ``Ascend910`` with the A3 ``Chip Phy-ID`` column or
    ``Ascend910_93xx`` -> ``a3``, ``910A`` -> ``910a``); None when it cannot be told."""
    n = name.strip().upper().replace("ASCEND", "")
    if "950" in n:
        return "a5"
    if re.match(r"910B\d?$", n):
        return "a2"
    if n.startswith("910_93") or (n == "910" and a3_columns):
        return "a3"
    if n in ("910A", "910PROA", "910PROB"):
        return "910a"
    return None


def version_problem(version: str, preset: Preset) -> tuple[str, str] | None:
    """(message, hint) when a table of ``version`` cannot be read on ``preset``'s chip
    (an RTC636 error), else None."""
    family = preset_family(preset)
    if family is None or version not in ("1.0", "1.2", "2.0"):
        return None
    if family == "a5" and version != "2.0":
        return (f'version "{version}" table on {preset.name} ({_NAMES[family]}): its HCCL reads '
                'only rank table version "2.0" and fails with Config_Error_Ranktable '
                "(EI0014) without naming the file",
                f'write a "2.0" table and its topology files (`rtc compile`); '
                f"{STALE_TABLE_HINT}")
    if family != "a5" and version == "2.0":
        return (f'version "2.0" is the Ascend 950 table, but the hardware is {preset.name} '
                f'({_NAMES[family]}), whose HCCL reads version {_VERSIONS[family]}',
                f"check the file or the hardware; {STALE_TABLE_HINT}")
    return None


def check(topo: Topology, plan: Plan):
    """RTC636 / RTC222 for each server whose ``npu-smi info`` capture shows its chips."""
    want = preset_family(topo.preset)
    if want is None:
        return
    reported: set = set()
    for s in topo.servers:
        info = s.inventory_facts.npu_info if s.inventory_facts is not None else None
        if info is None or not info.chips:
            continue
        chip = info.chips[0]
        got = chip_family(str(chip.name.value), chip.phy_id is not None)
        if got is None or got == want or (got, s.family or s.name) in reported:
            continue
        reported.add((got, s.family or s.name))
        yield _finding(topo, s, chip, got, want)


def _finding(topo: Topology, s, chip, got: str, want: str) -> Diagnostic:
    where = [Related(s.span_of("inventory"), f"inventory of {s.name}")]
    shown = f"npu-smi info of {s.name} shows {chip.name.value} chips ({_NAMES[got]})"
    if (got == "a5") != (want == "a5"):
        return error(VERSION_HW, f"{shown}, whose HCCL reads rank table version "
                     f"{_VERSIONS[got]}, but hardware {topo.preset.name} writes version "
                     f"{topo.preset.ranktable_version}", chip.name.span, subject=s.label,
                     related=where, hint=f"set `hardware` to the preset of this chip; "
                     f"{STALE_TABLE_HINT}")
    return error(CHIP_PRESET, f"{shown}, but the cluster's hardware is {topo.preset.name} "
                 f"({_NAMES[want]})", chip.name.span, subject=s.label, related=where,
                 hint="set `hardware` to the preset of the chip the captures show, or "
                      "capture the right server")


def table_version_findings(version: str, preset: Preset, span: Span) -> list[Diagnostic]:
    """RTC636 for an existing table of ``version`` checked as ``preset`` (``--hardware``)."""
    got = version_problem(version, preset)
    return [] if got is None else [error(VERSION_HW, got[0], span, hint=got[1])]


#: The rules this module reports (RTC636 also for rtc.tables.semantic.versions).
RULES = (VERSION_HW, CHIP_PRESET)
