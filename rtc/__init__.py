"""rtc: the rank-table and topology compiler for Ascend NPU and NVIDIA GPU clusters.

Pipeline: parse (``rtc.syntax``) -> lower (``rtc.model``) -> check (``rtc.checks``) ->
emit (``rtc.emit``). The high-level entry points live in :mod:`rtc.api`.
"""

__version__ = "0.1.0"
