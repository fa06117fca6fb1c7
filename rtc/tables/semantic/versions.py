"""The table version against the hardware (RTC636): :func:`check_version_fit`."""

from __future__ import annotations

from rtc.diagnostics import Diagnostic, Span, error, warning
from rtc.rules import rule

from ..jsonload import SourceMap

VERSION_HW = rule("RTC636", "version-hardware-mismatch", "error",
                  "The table version does not fit the hardware.", """
    What: version "2.0" (Ascend 950) checked as A2/A3/910A hardware (an error), or version
    "1.2" (A3 super pod) for hardware without super pods (a warning).
    Why: HCCL picks its parser by version; a 2.0 table is only read on Ascend 950, and the
    super pod fields of a 1.2 table are ignored outside an A3 super pod.
    Example: `rtc validate --hardware atlas-800t-a2 a3-table.json` with "version": "1.2".
    Fix: use "1.0" for Atlas 800T A2, 910A and A3 typical networking, "1.2" for A3 super
    pods, "2.0" for Ascend 950; or pass the right --hardware.""")


def check_version_fit(doc, form: str, smap: SourceMap, preset, explicit: bool) -> list[Diagnostic]:
    """RTC636: the table version against the hardware given with ``--hardware``."""
    if not explicit or not isinstance(doc, dict):
        return []
    span = smap.locate_nearest(("version",)) if smap.parsed else Span.whole_file(smap.filename)
    if form in ("hccl-v2.0", "topo-v2.0") and preset.chip != "Ascend":
        return [error(VERSION_HW, f'version "2.0" is the Ascend 950 table, but the hardware is '
                      f'{preset.name}, whose tables are version "{preset.ranktable_version}"', span,
                      hint="check the file or the --hardware option")]
    if form == "hccl-v1.2" and not preset.super_pod:
        return [warning(VERSION_HW, f'version "1.2" is the A3 super pod table, but the hardware is '
                        f"{preset.name}: HCCL ignores the super pod fields there", span,
                        hint=f'use "version": "{preset.ranktable_version}"')]
    return []


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (VERSION_HW,)
