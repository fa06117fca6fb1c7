"""NCCL topology XML: rtc's reader over real files (tests/ecosystem/nccl-topo-xml: NCCL 2.28's
own dumps, Azure's NCCL_TOPO_FILEs, a dump pasted cut short in NVIDIA/nccl-tests issue 256),
and rtc's `nccl_topo_file on` output held to the structure of those real files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import TESTS
from rtc.emit.nccl_topo_xml import render
from rtc.inventory import load_inventory_dir
from rtc.inventory.nccl_topo import looks_like_topo_xml, parse_nccl_topo_xml
from rtc.inventory.nvidia_smi import looks_like

REAL = TESTS / "ecosystem" / "nccl-topo-xml"
INV = TESTS / "data" / "inventory" / "nvidia"


def _shape(root: ET.Element) -> dict[str, set[str]]:
    """element path -> attribute names, for every element of a topology XML."""
    out: dict[str, set[str]] = {}

    def walk(e, path):
        out.setdefault(path, set()).update(e.attrib)
        for c in e:
            walk(c, f"{path}/{c.tag}")
    walk(root, root.tag)
    return out


def _real_shapes() -> dict[str, set[str]]:
    """The union of the shapes of every real file that parses (the cut-short one does not)."""
    union: dict[str, set[str]] = {}
    for path in sorted(REAL.glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError:
            continue
        for k, v in _shape(root).items():
            union.setdefault(k, set()).update(v)
    return union


def test_real_files_give_the_structure_nccl_writes():
    real = _real_shapes()
    # NCCL's own dumps: gpu under pci under cpu; nvlink under gpu; nic/net under cpu or pci
    assert {"numaid", "affinity", "arch", "vendor", "familyid", "modelid"} <= real["system/cpu"]
    assert {"dev", "sm", "rank", "gdr"} <= real["system/cpu/pci/gpu"]
    assert real["system/cpu/pci/gpu/nvlink"] == {"target", "count", "tclass"}
    assert "name" in real["system/cpu/nic/net"]


@pytest.mark.parametrize("server,used", [("h200-vm-1gpu", (0,)), ("hgx-h100", tuple(range(8))),
                                          ("pcie-nvlink-2x2", (0, 1, 2, 3))])
def test_rtc_xml_has_only_elements_and_attributes_real_files_have(server, used):
    """Every element path and attribute rtc writes occurs in a real NCCL file; rtc writes no
    attribute a capture cannot give (modelid, link_width ...)."""
    inv, _ = load_inventory_dir(INV / server)
    ours = _shape(ET.fromstring(render(inv.gpu_topo, inv.gpu_list, used)))
    real = _real_shapes()
    for path, attrs in ours.items():
        assert path in real and attrs <= real[path], (path, attrs, real.get(path))
    assert "modelid" not in ours["system/cpu"] and "link_width" not in ours["system/cpu/pci"]


def test_rtc_xml_reads_back_with_the_plan_gpus():
    inv, _ = load_inventory_dir(INV / "hgx-h100")
    xml = render(inv.gpu_topo, inv.gpu_list, tuple(range(8)))
    topo, diags = parse_nccl_topo_xml(xml, "nccl-topo-gpu-01.xml")
    assert diags == [] and len(topo.gpus) == 8 and sorted(topo.gpus.values()) == [str(i) for i in range(8)]
    assert {l.tclass for l in topo.nvlinks} == {"0x068000"}
    # NCCL's own form for a switch fabric it cannot see (the VM dump of nccl-tests issue 256)
    assert {l.target for l in topo.nvlinks} == {"fffffff:ff:ff.0"} and {l.count for l in topo.nvlinks} == {18}


def test_bus_id_forms_match_nccls_dumps():
    """GPU bus ids as NCCL writes them (4-hex-digit domain, lower case) in every real dump."""
    import re

    inv, _ = load_inventory_dir(INV / "hgx-h100")
    ours = ET.fromstring(render(inv.gpu_topo, inv.gpu_list, tuple(range(8))))
    form = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
    real = [p.get("busid") for f in ("h200-vm-1gpu-nccl-2.28-dump.xml", "azure-ncv4-topo.xml")
            for p in ET.parse(REAL / f).getroot().iter("pci")]
    assert real and all(form.fullmatch(b) for b in real)
    assert all(form.fullmatch(p.get("busid")) for p in ours.iter("pci"))


def test_a_dump_cut_short_is_one_error_naming_the_missing_end():
    text = (REAL / "nccltests256-h200-baremetal-dump-cut.xml").read_text()
    topo, diags = parse_nccl_topo_xml(text, "topo_dump_file.txt")
    assert topo is None and [d.code for d in diags] == ["RTC480"]
    assert "ends before `</system>`" in diags[0].message and "topo_dump_file.txt" in diags[0].message


def test_a_graph_file_is_not_a_topology():
    topo, diags = parse_nccl_topo_xml('<graphs version="1"><graph id="0"/></graphs>', "g.xml")
    assert topo is None and "root element is <graphs>, not <system>" in diags[0].message


def test_an_nccl_xml_in_an_inventory_folder_is_one_warning_saying_what_it_is(tmp_path):
    (tmp_path / "nccl-dump.xml").write_bytes((REAL / "h200-vm-1gpu-nccl-2.28-dump.xml").read_bytes())
    inv, diags = load_inventory_dir(tmp_path)
    assert [d.code for d in diags] == ["RTC488"]
    assert "NCCL topology XML" in diags[0].message and inv.gpu_topo is None
    assert looks_like_topo_xml('<?xml version="1.0"?>\n<!-- x -->\n<system version="1"/>')


def test_hwloc_lstopo_text_is_named_not_read():
    text = ("Machine (252GB total)\n  Package L#0\n    NUMANode L#0 (P#0 126GB)\n"
            "    HostBridge\n      PCIBridge\n        PCI 3b:00.0 (3D)\n")
    assert "lstopo" in looks_like(text)


def test_a_factor_sweep_that_stops_below_max_bytes_is_complete():
    """nccl-tests stops when the next size passes maxBytes (common.cu): `-b 1G -e 16G -f 3`
    ends at 9 GiB. Only a sweep whose next size still fits is cut short (RTC575)."""
    from rtc.inventory.nccl_tests import parse_nccl_tests

    eco = TESTS / "ecosystem" / "nccl-tests"
    text = (eco / "nccltests256-h200-2node-16gpu-baremetal-all_reduce_perf.txt").read_text()
    run, diags = parse_nccl_tests(text, "a.txt")
    assert run.step == (3, "factor") and run.rows[-1].size == 9663676416 and diags == []
    cut = text.replace("  9663676416", "# 9663676416")      # the last row lost
    run, diags = parse_nccl_tests(cut, "a.txt")
    assert [d.code for d in diags] == ["RTC575"]
    assert "ends at 3,221,225,472 bytes of 17,179,869,184" in diags[0].message
    by_bytes = text.replace("step: 3(factor)", "step: 1048576(bytes)")
    assert [d.code for d in parse_nccl_tests(by_bytes, "a.txt")[1]] == ["RTC575"]


def test_preflight_reads_the_dump_with_the_same_reader(tmp_path):
    """`rtc preflight nccl` takes nccl-topo-dump.xml through the same reader: a real 8-GPU
    Azure NCCL_TOPO_FILE (GPUs as PCI devices only) against a one-GPU plan is RTC573 naming
    8 GPUs and the missing HCA; a dump cut short is one RTC573 saying where it ends."""
    import json
    import shutil

    from rtc.preflight.nccl import judge

    def folder(name: str, dump: str) -> str:
        d = tmp_path / name
        d.mkdir()
        shutil.copy(REAL / dump, d / "nccl-topo-dump.xml")
        (d / "expect.json").write_text(json.dumps({
            "kind": "nccl", "server": name, "gpus": [0], "islands": [[0]],
            "expected_busbw_gbps": 0.0, "expected_link": "local", "ib_hca": ["mlx5_0"]}))
        return str(d)

    _, diags = judge(folder("azure", "azure-ndv4-topo.xml"))
    [dump] = [d for d in diags if d.code == "RTC573"]
    assert "8 GPUs where the plan uses 1" in dump.message and "no mlx5_0" in dump.message
    _, diags = judge(folder("cut", "nccltests256-h200-baremetal-dump-cut.xml"))
    [dump] = [d for d in diags if d.code == "RTC573"]
    assert "not readable" in dump.message and "ends before `</system>`" in dump.message
