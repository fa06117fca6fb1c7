"""The table version against the hardware (RTC636): :func:`check_version_fit`.

The rule and its judgement live with the compiler's checks
(:mod:`rtc.checks.chip_version`), so a 1.x table on Ascend 950 (or 2.0 on A2/A3) is the
same finding for ``rtc validate --hardware`` and for a description whose captures show the
chip."""

from __future__ import annotations

from rtc.checks.chip_version import VERSION_HW, table_version_findings
from rtc.diagnostics import Diagnostic, Span, note, warning
from rtc.rules import rule

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


HARDWARE_GUESSED = rule("RTC677", "hardware-inferred-from-device-ids", "note",
                        "rtc validate chose the hardware from the table's device ids.", """
    What: a version "1.0" table checked without --hardware whose device ids go above 7.
    The table does not name its hardware; rtc checks it as Atlas 800 A3 (16 dies per
    server, typical networking) when ids above 7 are real evidence, and as Atlas 800T A2
    when one lone id above 7 sits among servers numbered 0..7 (a typo, reported as RTC205).
    Why: every hardware rule (device ids that exist, die pairs, HCCS rings) depends on the
    choice; a wrong guess turns one typo into warnings about split chips.
    Example: an A2 table where one server lists device 9 instead of 5.
    Fix: give --hardware (atlas-800t-a2, atlas-800-a3, ...) to check the table as the
    hardware it is for; the note goes away.""")


def hardware_guess_note(doc, form: str, smap: SourceMap, reason: str,
                        evidence: list) -> list[Diagnostic]:
    """RTC677: say which hardware a 1.0 table with device ids above 7 was checked as and
    why (``reason`` is "NAME (inferred: WHY)" from :func:`rtc.tables.lower_table.choose_preset`,
    ``evidence`` the (server_id, device id, path) of those ids); nothing otherwise."""
    if form != "hccl-v1.0" or not evidence or " (inferred: " not in reason:
        return []
    name, why = reason.split(" (inferred: ", 1)
    path = evidence[0][2]
    span = smap.locate_nearest(path) if smap.parsed else Span.whole_file(smap.filename)
    other = "atlas-800-a3" if name.startswith("atlas-800t-a2") else "atlas-800t-a2"
    return [note(HARDWARE_GUESSED, f"checked as {name}: {why.rstrip(')')}", span,
                 hint=f"give --hardware to say what the servers are (e.g. --hardware {other})",
                 subject=f"server {evidence[0][0]}, device {evidence[0][1]}")]


#: The rules this module reports: RTC636 is rtc.checks.chip_version's (listed there).
RULES = (HARDWARE_GUESSED,)
