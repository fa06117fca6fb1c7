"""NCCL topology XML: the file NCCL writes for ``NCCL_TOPO_DUMP_FILE`` and reads from
``NCCL_TOPO_FILE`` (also rtc's own ``nccl-topo-<server>.xml``).

Format (NVIDIA/nccl ``src/graph/xml.cc`` ``ncclTopoDumpXmlToFile`` / ``ncclTopoGetXmlFromFile``
and ``src/graph/topo.cc``, read at release v2.28; real files in
``tests/ecosystem/nccl-topo-xml/``)::

    <system version="1">
      <cpu numaid affinity arch vendor familyid modelid [host_hash]>
        <pci busid class vendor device subsystem_vendor subsystem_device link_speed link_width>
          <pci ...>                                   (PCIe switches nest)
          <gpu dev sm rank gdr>                      (under the GPU's <pci>)
            <nvlink target count tclass/>            (tclass 0x068000: an NVSwitch,
                                                      0x030200: the GPU at ``target``)
            <c2c bw count/>
          </gpu>
          <nic><net name dev speed port latency guid maxconn gdr/></nic>
        </pci>
        <nic><net .../></nic>                         (a NIC without a PCI device: sockets)
      </cpu>
    </system>

A hand-made ``NCCL_TOPO_FILE`` may list the GPUs only as ``<pci class="0x030200">`` without
a ``<gpu>`` child (Azure's ndv2/ndv4/ndv5 files): NCCL fills the rest from the system. rtc
counts a GPU per ``<gpu>`` element, or per GPU-class ``<pci>`` that holds none. Bus ids are
kept as written (NCCL writes ``0000:18:00.0``, lower case; a VM's invisible NVSwitch is the
target ``fffffff:ff:ff.0``).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span, error

from ._common import read_text
from .rules import UNREADABLE

#: PCI class codes NCCL writes (``topo.cc``): a 3D controller (GPU), an NVSwitch bridge,
#: Ethernet and InfiniBand controllers.
GPU_CLASS, NVSWITCH_CLASS, NIC_CLASSES = "0x030200", "0x068000", ("0x020000", "0x020700")


@dataclass(frozen=True)
class NvLink:
    """One ``<nvlink>`` of a GPU: the GPU's bus id (``""`` when its ``<pci>`` has none),
    the target bus id, the number of links and the target's PCI class."""

    gpu: str
    target: str
    count: int
    tclass: str


@dataclass
class NcclTopo:
    """What an NCCL topology XML says: ``gpus`` bus id -> ``dev`` (``""`` when the file
    gives no ``<gpu>``), ``nets`` the ``<net name>``s in file order, ``nic_pcis`` bus ids of
    NIC-class PCI devices, ``nvlinks``, ``cpus`` the ``numaid`` of each ``<cpu>``."""

    file: str
    gpus: dict[str, str] = field(default_factory=dict)
    nets: list[str] = field(default_factory=list)
    nic_pcis: list[str] = field(default_factory=list)
    nvlinks: list[NvLink] = field(default_factory=list)
    cpus: list[str] = field(default_factory=list)


def looks_like_topo_xml(text: str) -> bool:
    """Whether the text starts (after an XML declaration or comments) with ``<system``."""
    body = text.lstrip("\ufeff \t\r\n")
    while body.startswith(("<?", "<!--")):
        end = body.find("?>" if body.startswith("<?") else "-->")
        if end < 0:
            return False
        body = body[end + (2 if body.startswith("<?") else 3):].lstrip()
    return body.startswith("<system")


def parse_nccl_topo_xml(text: str, file: str = "<nccl topology xml>") -> tuple[NcclTopo | None, list[Diagnostic]]:
    """Parse an NCCL topology XML. Returns ``(None, [RTC480])`` when the text is not XML or
    its root is not ``<system>``: the message says what is missing (a truncated dump ends
    without ``</system>``)."""
    name = os.path.basename(file)

    def unreadable(why: str) -> tuple[None, list[Diagnostic]]:
        return None, [error(UNREADABLE, f"{name} is not an NCCL topology XML: {why}",
                            Span.whole_file(file),
                            hint="write it again with NCCL_TOPO_DUMP_FILE=<file> on a run "
                                 "that reaches communicator init; NCCL writes it whole")]
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        closed = "</system>" in text
        return unreadable(f"XML error {exc}" + ("" if closed else
                                                "; it ends before `</system>` (cut short?)"))
    if root.tag != "system":
        return unreadable(f"its root element is <{root.tag}>, not <system>")
    out = NcclTopo(file, cpus=[c.get("numaid", "") for c in root.iter("cpu")])
    for pci in root.iter("pci"):
        _pci(out, pci)
    out.nets = [n.get("name", "") for n in root.iter("net")]
    return out, []


def _pci(out: NcclTopo, pci: ET.Element) -> None:
    """One ``<pci>``: a GPU (its ``<gpu>`` children or its class), a NIC, or a switch."""
    bus = pci.get("busid", "")
    gpus = pci.findall("gpu")
    for gpu in gpus:
        out.gpus.setdefault(bus if len(gpus) == 1 else f"{bus}#{gpu.get('dev', '')}",
                            gpu.get("dev", ""))
        for link in gpu.findall("nvlink"):
            count = link.get("count", "0")
            out.nvlinks.append(NvLink(bus, link.get("target", ""),
                                      int(count) if count.isdigit() else 0,
                                      link.get("tclass", "")))
    if not gpus and pci.get("class") == GPU_CLASS:
        out.gpus.setdefault(bus, "")
    if pci.get("class") in NIC_CLASSES:
        out.nic_pcis.append(bus)


def load_nccl_topo_xml(path: str | os.PathLike, file: str | None = None) -> tuple[NcclTopo | None, list[Diagnostic]]:
    """Read and parse an NCCL topology XML file."""
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    res, more = parse_nccl_topo_xml(text, file if file is not None else os.fspath(path))
    return res, diags + more
