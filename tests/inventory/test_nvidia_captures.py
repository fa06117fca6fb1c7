"""Real nvidia-smi captures (tests/ecosystem/nvidia-smi-*/, each with a SOURCES.md row) read
through rtc's readers: every file reads and gives the facts its row states, so a file that
stops reading fails here. Also the H200 VM capture through every front end (inventory,
``rtc check``, ``rtc preflight nccl``) and the NCCL topology XML against NCCL's own dump."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rtc.inventory import load_inventory_dir
from rtc.inventory.nvidia_smi import (load_gpu_list, load_gpu_names, load_gpu_topo,
                                      parse_gpu_topo)
from conftest import TESTS

HERE = TESTS
ECO = HERE / "ecosystem"
H200 = HERE / "data" / "inventory" / "nvidia" / "h200-vm-1gpu"


def rows(kind: str) -> list[tuple[str, dict[str, str]]]:
    """(file, facts) of each row of ``tests/ecosystem/<kind>/SOURCES.md``."""
    out = []
    for line in (ECO / kind / "SOURCES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and "=" in cells[2]:
            out.append((cells[0], dict(kv.split("=", 1) for kv in cells[2].split("; "))))
    return out


def test_every_capture_has_a_sources_row():
    for kind in ("nvidia-smi-topo", "nvidia-smi-query-gpu", "nvidia-smi-L"):
        files = {p.name for p in (ECO / kind).iterdir() if p.name != "SOURCES.md"}
        assert files == {f for f, _ in rows(kind)}, kind
    assert len(rows("nvidia-smi-topo")) >= 10


@pytest.mark.parametrize("name,facts", rows("nvidia-smi-topo"))
def test_topo_captures_read_with_their_facts(name, facts):
    topo, diags = load_gpu_topo(ECO / "nvidia-smi-topo" / name)
    assert topo is not None and not [d for d in diags if d.severity.name == "ERROR"], diags
    got = {"gpus": str(len(topo.gpus)), "nics": str(len(topo.nics)),
           "nvlink": "yes" if any(len(i) > 1 for i in topo.islands()) else "no"}
    assert got == facts


@pytest.mark.parametrize("name,facts", rows("nvidia-smi-query-gpu"))
def test_query_gpu_captures_read_with_their_facts(name, facts):
    listed, diags = load_gpu_list(ECO / "nvidia-smi-query-gpu" / name)
    assert listed is not None and not [d for d in diags if d.severity.name == "ERROR"]
    assert {"gpus": str(len(listed.gpus))} == facts
    # a query without pci.bus_id / uuid is read, with one warning naming the columns
    full = all(g.bus_id and g.uuid for g in listed.gpus.values())
    assert [d.message for d in diags] == ([] if full else [
        "the --query-gpu table lacks the columns pci.bus_id, uuid: rtc reads the GPUs but "
        "cannot match them by PCI bus id or UUID"])


def test_query_gpu_without_bus_ids_cannot_feed_nccl_topo_file(tmp_path):
    """A user's own `--query-gpu=index,name,memory.total,...` csv counts the GPUs, but
    `nccl_topo_file on` needs the bus ids: RTC476 names the capture it needs."""
    from rtc.inventory.nvidia_smi import parse_gpu_list

    text = (ECO / "nvidia-smi-query-gpu" / "deepseek-serving-h200-8gpu.csv").read_text()
    listed, _ = parse_gpu_list(text, "gpus.csv")
    assert sorted(listed.gpus) == list(range(8))
    assert {g.name for g in listed.gpus.values()} == {"NVIDIA H200"}
    assert {g.bus_id for g in listed.gpus.values()} == {""}
    header_only, diags = parse_gpu_list("index, name\n", "g.csv")
    assert header_only is not None and header_only.gpus == {}
    assert parse_gpu_list("index\n0\n", "g.csv")[0] is None   # one column is no query table


@pytest.mark.parametrize("name,facts", rows("nvidia-smi-L"))
def test_L_captures_read_with_their_facts(name, facts):
    names, diags = load_gpu_names(ECO / "nvidia-smi-L" / name)
    assert names is not None and diags == []
    assert {"gpus": str(len(names.gpus)), "mig": str(len(names.mig))} == facts
    assert all(m.uuid.startswith("MIG-") for m in names.mig)


def test_crlf_and_escapes_give_the_same_facts():
    raw = (ECO / "nvidia-smi-topo" / "a100-8gpu-nv12-17nics.txt").read_text()
    a, _ = parse_gpu_topo(raw)
    b, d = parse_gpu_topo("\x1b[4m" + raw.replace("\n", "\r\n"))
    assert d == [] and (a.links, a.gpu_nic, a.legend, a.cpu_affinity) == (
        b.links, b.gpu_nic, b.legend, b.cpu_affinity)


def test_empty_cpu_affinity_cell_in_a_tab_capture():
    # the shape of a public 4x H100 VM capture: GPU1..3 print no CPU affinity
    text = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
            "GPU0\t X \tNV18\t44-51,148-155\t0\t\tN/A\n"
            "GPU1\tNV18\t X \t\t1\t\tN/A\n")
    topo, diags = parse_gpu_topo(text)
    assert diags == [] and topo.cpu_affinity == {0: "44-51,148-155", 1: None}
    assert topo.numa == {0: "0", 1: "1"}


@pytest.mark.parametrize("keep", [3, 6, 9])
def test_a_cut_capture_is_one_error_naming_what_is_missing(keep):
    lines = (ECO / "nvidia-smi-topo" / "a100-8gpu-nv12-17nics.txt").read_text().splitlines()
    text = "\n".join(lines[:keep]) + "\n" + lines[keep][:40]
    topo, diags = parse_gpu_topo(text)
    assert [d.code for d in diags] == ["RTC474"]
    assert "cut short" in diags[0].message and "GPU7" in diags[0].message


def test_p2p_matrix_is_not_a_topo_matrix():
    text = (ECO / "nvidia-smi-topo" / "2gpu-node-indented-wrapped-legend-with-p2p.txt").read_text()
    p2p = text[text.index("          GPU0 GPU1\n"):]
    assert parse_gpu_topo(p2p)[0] is None


def test_inventory_takes_the_h200_capture_as_nvidia_smi():
    inv, diags = load_inventory_dir(H200)
    assert diags == []
    assert sorted(inv.files.values()) == [("nvidia_smi_gpus",), ("nvidia_smi_topo",)]
    assert inv.gpu_topo.gpus == [0] and inv.gpu_topo.islands() == [(0,)]
    assert inv.gpu_list.gpus[0].bus_id == "00000000:00:06.0"


def test_unknown_nvidia_output_is_one_warning_saying_what_it_looks_like(tmp_path):
    (tmp_path / "gpus-L.txt").write_bytes((ECO / "nvidia-smi-L" / "a100-mig-7x1g.txt").read_bytes())
    _, diags = load_inventory_dir(tmp_path)
    assert [d.code for d in diags] == ["RTC488"] and "nvidia-smi -L" in diags[0].message


def test_rtc_check_reads_the_h200_vm(rtc):
    res = rtc("check", str(HERE / "cases" / "checks" / "RTC479-vm-one-gpu-without-nvlink.rtc"))
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "RTC479" in out
    assert not re.search(r"RTC4(81|74|76)", out)


def test_preflight_nccl_reads_the_h200_results(rtc):
    res = rtc("preflight", "nccl", str(HERE / "data" / "preflight" / "h200-vm-1gpu"))
    out = res.stdout + res.stderr
    assert res.returncode == 1 and re.findall(r"RTC\d+", out) == ["RTC572"]
    assert "127" in out and "not installed" in out


def _shape(root: ET.Element) -> dict[str, set[str]]:
    """element path -> attribute names, for every element of a topology XML."""
    out: dict[str, set[str]] = {}

    def walk(e, path):
        out.setdefault(path, set()).update(e.attrib)
        for c in e:
            walk(c, f"{path}/{c.tag}")
    walk(root, root.tag)
    return out


def test_nccl_topo_xml_has_the_structure_of_nccls_own_dump():
    from rtc.emit.nccl_topo_xml import render

    inv, _ = load_inventory_dir(H200)
    ours = _shape(ET.fromstring(render(inv.gpu_topo, inv.gpu_list, (0,))))
    real = _shape(ET.parse(HERE / "data" / "nccl-topo" / "h200-vm-1gpu-nccl-2.28-dump.xml").getroot())
    # NVIDIA/nccl issue 1505 (NCCL_TOPO_DUMP_FILE of a DGX A100): nvlink under gpu
    real.setdefault("system/cpu/pci/gpu/nvlink", set()).update({"target", "count", "tclass"})
    # the VM's CPU had no NUMA node, so NCCL wrote no affinity; on a NUMA host NCCL's
    # ncclTopoGetXmlFromCpu (src/graph/xml.cc) writes `affinity` on <cpu>
    real["system/cpu"].add("affinity")
    for path, attrs in ours.items():
        assert path in real and attrs <= real[path], (path, attrs)
    bus = ET.fromstring(render(inv.gpu_topo, inv.gpu_list, (0,))).find("cpu/pci").get("busid")
    assert bus == "0000:00:06.0" and re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", bus)
