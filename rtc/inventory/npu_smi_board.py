"""Parser of ``npu-smi info -t board -i N`` and ``npu-smi info -t board -i N -c C`` output:
an Ascend card's board facts (board id, PCIe bus, firmware and driver versions) and, with
``-c``, its chip's type and name (``910A``, ``910B3`` ...).

The format (Ascend "npu-smi info -t board" reference; captures in Ascend/mind-cluster's
``docs/en/faultdiag/user_guide/03_collecting_logs.md`` and fault-diag test data): one
``Key<spaces>: value`` line per fact, keys padded to one column, the whole block indented
or not (tabs or spaces). The card form starts ``NPU ID : 0`` then ``Software Version``,
``Firmware Version``, ``Compatibility``, ``Board ID``, ``PCB ID``, ``BOM ID``, ``PCIe Bus
Info``, ``Slot ID`` ... ``Chip Count``; the chip form (``-c``) starts ``NPU ID``, ``Chip ID``,
``Chip Type``, ``Chip Name``, ``Chip Version``, ``Board ID`` ... ``Firmware Version``. A block
is a board block when it holds ``Board ID``; other ``NPU ID`` blocks (``-t usages``,
``-t common``) and command lines between blocks are left to other readers.
-> :class:`NpuBoardInfo`. Problems are ``RTC579`` diagnostics.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, error
from rtc.rules import rule

from ._common import read_text, split_lines, value_span

NPU_SMI_BOARD_UNREADABLE = rule("RTC579", "npu-smi-board-unreadable", "error",
                                "npu-smi info -t board output is missing or cut short.", """
    What: a capture with no `NPU ID : N` block holding a `Board ID` line, or a chip block
    (`Chip ID`) without its `Chip Name`.
    Why: the board id and chip name say which Atlas card a server has (910A / 910B / 310P),
    which decides the rank table's form and the device presets rtc checks it against.
    Example: `npu-smi info -t board -i 0 > board_0.txt` run on a host whose driver is not
    loaded, or the output cut after the `NPU ID` line.
    Fix: run `npu-smi info -t board -i N -c 0` again on the server and keep the whole output.""")

RULES = (NPU_SMI_BOARD_UNREADABLE,)

_KV = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()%./-]*?)\s*:\s*(.*?)\s*$")


@dataclass
class NpuBoard:
    """One board block: ``npu_id``, ``chip_id`` (``-c`` form only), ``fields`` (key -> value
    as printed: ``Board ID``, ``Chip Name``, ``Firmware Version`` ...) and the 1-based ``line``
    of its ``NPU ID`` line."""

    npu_id: int | None
    line: int
    chip_id: int | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def board_id(self) -> str | None:
        return self.fields.get("Board ID")

    @property
    def chip_name(self) -> str | None:
        return self.fields.get("Chip Name")


@dataclass
class NpuBoardInfo:
    """An ``npu-smi info -t board`` capture: ``boards`` in print order and the 0-based
    ``lines`` the reader took (so no other inventory reader reports them)."""

    file: str
    boards: list[NpuBoard] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` (0-based, end exclusive) of every run of ``Key : value`` lines that
    starts with ``NPU ID`` and holds ``Board ID``."""
    out = []
    i = 0
    while i < len(lines):
        m = _KV.match(lines[i])
        if m and m.group(1) == "NPU ID":
            j = i + 1
            while j < len(lines) and (m := _KV.match(lines[j])) and m.group(1) != "NPU ID":
                j += 1
            if any(_KV.match(l).group(1) == "Board ID" for l in lines[i:j]):
                out.append((i, j))
            i = j
        else:
            i += 1
    return out


def find_board(lines: list[str]) -> int | None:
    """0-based index of the first board block's ``NPU ID`` line, or None."""
    found = _blocks(lines)
    return found[0][0] if found else None


def parse_npu_smi_board(text: str, file: str = "<npu-smi board>") -> tuple[NpuBoardInfo | None, list[Diagnostic]]:
    """Parse an ``npu-smi info -t board`` capture (one or several blocks, card or chip form).
    Returns ``(None, [RTC579])`` when no board block is found; otherwise the boards and an
    RTC579 error per chip block without ``Chip Name`` (the capture was cut short)."""
    lines = split_lines(text)
    found = _blocks(lines)
    name = os.path.basename(file)
    if not found:
        return None, [error(NPU_SMI_BOARD_UNREADABLE, f"no `npu-smi info -t board` block in {name}: "
                            "expected a line 'NPU ID : <n>' followed by 'Board ID : <id>'",
                            value_span(file, 1, 0, 1),
                            hint="run `npu-smi info -t board -i 0 -c 0 > board_0.txt` on the "
                                 "server; an error there means the driver is not loaded")]
    out = NpuBoardInfo(file)
    diags: list[Diagnostic] = []
    for start, end in found:
        fields = {}
        for k in range(start, end):
            m = _KV.match(lines[k])
            fields.setdefault(m.group(1), m.group(2))
            out.lines.add(k)
        board = NpuBoard(_int(fields["NPU ID"]), start + 1, _int(fields.get("Chip ID")), fields)
        out.boards.append(board)
        if board.chip_id is not None and board.chip_name is None:
            diags.append(error(
                NPU_SMI_BOARD_UNREADABLE, f"chip {board.chip_id} of NPU {fields['NPU ID']} in "
                f"{name} has no 'Chip Name' line: the capture was cut short, so the chip "
                "model is unknown", value_span(file, start + 1, 0, 1),
                hint="capture `npu-smi info -t board -i N -c 0` again and keep the whole output",
                subject=f"NPU {fields['NPU ID']}"))
    return out, diags


def _int(raw: str | None) -> int | None:
    return int(raw) if raw is not None and raw.isdigit() and len(raw) <= 20 else None


def load_npu_smi_board(path: str | os.PathLike, file: str | None = None) -> tuple[NpuBoardInfo | None, list[Diagnostic]]:
    """Read and parse an ``npu-smi info -t board`` capture file."""
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    res, more = parse_npu_smi_board(text, file if file is not None else os.fspath(path))
    return res, diags + more


#: Keys of the ``npu-smi info -t <type>`` key/value outputs rtc does not read (``usages``,
#: ``health``, ``ecc``, ``memory`` ...; source: Ascend/mind-cluster faultdiag docs,
#: 03_collecting_logs.md, which collects them).
_OTHER_TYPES = ("Chip Count", "Health Status", "Error Code", "DDR Capacity(MB)",
                "HBM Capacity(MB)", "Aicore Usage Rate(%)")


def looks_like(text: str) -> str:
    """For a file no reader took: ``" (it looks like ...)"`` when it is ``npu-smi info -t
    <type>`` key/value output of a type rtc does not read, or ``""``."""
    keys = [m.group(1) for l in split_lines(text) if (m := _KV.match(l))]
    if keys and any(k in _OTHER_TYPES for k in keys):
        return (" (it looks like `npu-smi info -t usages/health/ecc` key/value output; rtc "
                "reads `npu-smi info`, `-t board`, `-t topo` and `-m`)")
    return ""
