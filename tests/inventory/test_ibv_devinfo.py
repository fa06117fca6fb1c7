"""ibv_devinfo reader (rtc.inventory.ibv_devinfo) over real captures from
tests/ecosystem/ibv-devinfo (sources in its SOURCES.md), a capture cut short, and the
inventory's sniffing of it."""

from __future__ import annotations

import shutil
from pathlib import Path

from rtc.inventory import detect_kinds, load_inventory_dir, parse_ibv_devinfo
from rtc.inventory.ibv_devinfo import IBV_DEVINFO_UNREADABLE
from conftest import TESTS

CORPUS = TESTS / "ecosystem" / "ibv-devinfo"


def _read(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def test_two_hcas_ports_state_and_link_layer():
    info, diags = parse_ibv_devinfo(_read("heioy-books-2x-connectx3-ib.txt"), "ibv.txt")
    assert diags == []
    assert [d.name for d in info.devices] == ["mlx4_1", "mlx4_0"]
    assert info.devices[0].attrs["fw_ver"] == "2.42.5000"
    assert info.devices[1].attrs["node_guid"] == "e41d:2d03:00e0:c740"
    got = [(dev, p.number, p.state, p.link_layer) for dev, p in info.ports()]
    assert got == [("mlx4_1", 1, "PORT_ACTIVE", "InfiniBand"), ("mlx4_1", 2, "PORT_DOWN", "InfiniBand"),
                   ("mlx4_0", 1, "PORT_ACTIVE", "InfiniBand"), ("mlx4_0", 2, "PORT_DOWN", "InfiniBand")]
    assert 0 not in info.lines        # the pasted prompt line is not part of the capture


def test_verbose_capture_reads_the_gid_and_skips_capability_lists():
    info, diags = parse_ibv_devinfo(_read("heioy-books-d-mlx4_1-i2-verbose.txt"), "v.txt")
    assert diags == []
    (dev, port), = info.ports()
    assert (dev, port.number, port.active) == ("mlx4_1", 2, False)
    assert port.gids == {0: "fe80:0000:0000:0000:7cfe:9003:00a5:95c2"}
    assert info.devices[0].attrs["phys_port_cnt"] == "2"


def test_capture_cut_short_is_one_clear_error_per_port():
    lines = _read("heioy-books-d-mlx4_1.txt").splitlines(keepends=True)
    cut = "".join(lines[:16])          # ends after port 1's `state:` line
    info, diags = parse_ibv_devinfo(cut, "cut.txt")
    assert [d.code for d in diags] == [IBV_DEVINFO_UNREADABLE.code]
    assert "port 1 of mlx4_1 has no link_layer line" in diags[0].message
    assert diags[0].span.line == 13    # the `port:\t1` line
    cut = "".join(lines[:12])          # device attributes only
    _, diags = parse_ibv_devinfo(cut, "cut.txt")
    assert "mlx4_1" in diags[0].message and "lists no port" in diags[0].message


def test_no_devices_is_an_error_not_a_traceback():
    info, diags = parse_ibv_devinfo("No IB devices found\n", "ibv.txt")
    assert info is None and [d.code for d in diags] == [IBV_DEVINFO_UNREADABLE.code]
    assert "hca_id" in diags[0].message


def test_inventory_sniffs_it_as_ibv_devinfo_only(tmp_path: Path):
    text = _read("heioy-books-d-mlx4_1-i2-verbose.txt")
    assert detect_kinds("rdma.txt", text) == ["ibv_devinfo"]
    shutil.copy(CORPUS / "heioy-books-2x-connectx3-ib.txt", tmp_path / "ibv_devinfo.txt")
    inv, diags = load_inventory_dir(tmp_path)
    assert [d.code for d in diags] == []
    assert [d.name for d in inv.rdma.devices] == ["mlx4_1", "mlx4_0"]
    assert inv.devices == {}
