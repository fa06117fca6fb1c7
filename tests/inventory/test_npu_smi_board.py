"""npu-smi info -t board reader (rtc.inventory.npu_smi_board) over real captures from
tests/ecosystem/npu-smi-board (sources in its SOURCES.md), captures cut short, and the
inventory's sniffing of it (a `-t usages` block is no board block)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rtc.inventory import detect_kinds, load_inventory_dir, parse_npu_smi_board
from rtc.inventory.npu_smi_board import NPU_SMI_BOARD_UNREADABLE
from conftest import TESTS

CORPUS = TESTS / "ecosystem" / "npu-smi-board"


def _read(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def test_chip_form_with_tabs_and_command_line():
    info, diags = parse_npu_smi_board(_read("mindcluster-faultdiag-kg-910a-board-i0-c0.txt"), "b.txt")
    assert diags == []
    [b] = info.boards
    assert (b.npu_id, b.chip_id, b.chip_name, b.board_id) == (0, 0, "910A", "0x02")
    assert b.fields["PCIe Bus Info"] == "0000:61:00.0"
    assert b.line == 2 and 0 not in info.lines          # the command line is not the capture


def test_card_form_has_no_chip():
    info, diags = parse_npu_smi_board(_read("mindcluster-faultdiag-doc-board-i0.txt"), "b.txt")
    assert diags == []
    [b] = info.boards
    assert (b.npu_id, b.chip_id, b.chip_name) == (0, None, None)
    assert b.fields["Software Version"] == "23.0.5" and b.fields["Chip Count"] == "1"


def test_no_board_block_is_one_clear_error():
    usages = "NPU ID                         : 0\nChip Count                     : 1\n\nHBM Usage Rate(%) : 0\n"
    info, diags = parse_npu_smi_board(usages, "board_0.txt")
    assert info is None
    assert [d.code for d in diags] == [NPU_SMI_BOARD_UNREADABLE.code] == ["RTC579"]
    assert "board_0.txt" in diags[0].message and "Board ID" in diags[0].message


def test_chip_block_cut_before_chip_name():
    text = _read("mindcluster-faultdiag-doc-board-i0-c0.txt").splitlines()
    cut = "\n".join(l for l in text if not l.startswith(("Chip Name", "Chip Version")))
    info, diags = parse_npu_smi_board(cut, "b.txt")
    assert len(info.boards) == 1
    assert [d.code for d in diags] == ["RTC579"] and "Chip Name" in diags[0].message


def test_sniffed_as_board_only_and_read_by_inventory(tmp_path):
    for name in ("mindcluster-faultdiag-doc-board-i0.txt", "mindcluster-faultdiag-kg-910a-board-i0-c0.txt"):
        assert detect_kinds(name, _read(name)) == ["npu_smi_board"]
    assert "npu_smi_board" not in detect_kinds("u.txt", "NPU ID : 0\nChip Count : 1\n")
    shutil.copy(CORPUS / "mindcluster-faultdiag-kg-910a-board-i0-c0.txt", tmp_path / "board_0.txt")
    inv, diags = load_inventory_dir(tmp_path)
    assert [d for d in diags if d.severity.name == "ERROR"] == []
    assert inv.board.boards[0].chip_name == "910A"
    assert inv.files[str(tmp_path / "board_0.txt")] == ("npu_smi_board",)
