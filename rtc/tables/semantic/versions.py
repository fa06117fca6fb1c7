"""The table version against the hardware (RTC636): :func:`check_version_fit`.

The rule and its judgement live with the compiler's checks
(:mod:`rtc.checks.chip_version`), so a 1.x table on Ascend 950 (or 2.0 on A2/A3) is the
same finding for ``rtc validate --hardware`` and for a description whose captures show the
chip."""

from __future__ import annotations

from rtc.checks.chip_version import VERSION_HW, table_version_findings
from rtc.diagnostics import Diagnostic, Span, warning

from ..jsonload import SourceMap

_VERSION_OF_FORM = {"hccl-v1.0": "1.0", "hccl-v1.2": "1.2", "hccl-v2.0": "2.0",
                    "topo-v2.0": "2.0", "pd-ranktable": None}


def check_version_fit(doc, form: str, smap: SourceMap, preset, explicit: bool) -> list[Diagnostic]:
    """RTC636: the table version against the hardware given with ``--hardware``."""
    if not explicit or not isinstance(doc, dict):
        return []
    span = smap.locate_nearest(("version",)) if smap.parsed else Span.whole_file(smap.filename)
    version = _VERSION_OF_FORM.get(form)
    found = table_version_findings(version, preset, span) if version else []
    if found:
        return found
    if form == "hccl-v1.2" and not preset.super_pod:
        return [warning(VERSION_HW, f'version "1.2" is the A3 super pod table, but the hardware is '
                        f"{preset.name}: HCCL ignores the super pod fields there", span,
                        hint=f'use "version": "{preset.ranktable_version}"')]
    return []


#: The rules this module reports: RTC636 is rtc.checks.chip_version's (listed there).
RULES = ()
