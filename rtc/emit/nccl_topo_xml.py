"""NCCL topology files: ``nccl-topo-<server>.xml`` for ``NCCL_TOPO_FILE``, written for a GPU
server whose ``nccl_topo_file on`` asks for it, from its ``nvidia-smi topo -m`` and
``--query-gpu`` captures.

Why: in a VM the PCI tree NCCL reads from ``/sys`` is often flat or made up, so NCCL
misjudges which GPUs share NVLink, a PCIe switch or a CPU; NVIDIA's answer is to give NCCL
the real topology as XML (reference ``targets.md`` section 6, NCCL issue 1843). The
capture is what nvidia-smi (NVML) reports, which sees the NVLinks even where the PCI tree
lies.

Schema (NVIDIA/nccl ``src/graph/xml.cc`` and ``topo.cc``, read at commit 5067397, 2026-06;
the real dump of NCCL 2.28 in ``tests/data/nccl-topo/``): ``<system version="1">``; per
NUMA node a ``<cpu numaid affinity>``; per GPU a ``<pci busid>`` (``DDDD:BB:DD.F``, lower
case) holding ``<gpu dev>``, and per NVLink peer ``<nvlink target count tclass>``:
``tclass`` ``0x068000`` (an NVSwitch; NCCL joins all such links to one switch node) or
``0x030200`` with the peer GPU's ``busid``. rtc writes only what the captures say: the
NUMA node and CPU set (``topo -m``; ``numaid`` -1, NCCL's "unknown", for ``N/A``), the bus
id (``--query-gpu``), the GPU index and its NVLinks (``topo -m``). Everything else NCCL
fills itself when the attribute is absent (``xml.cc``: ``arch`` ``vendor`` ``familyid``
``modelid`` of the CPU, ``class`` ``vendor`` ``device`` ``link_speed`` ``link_width`` of the
PCI device, ``sm`` of the GPU; ``topo.cc``: ``gdr``, ``rank``, ``host_hash``): rtc once
guessed ``modelid`` 143 where the host had 207 and ``link_width`` 16 where NCCL read 0,
and NCCL trusts the file. NICs are left to NCCL's own detection. The file holds no XML
comment (NCCL reads it with its own small parser).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from rtc.inventory.nvidia_smi import GpuList, GpuTopo

#: PCI class of a GPU (3D controller) and of an NVSwitch; NVIDIA's PCI vendor id.
GPU_CLASS, NVSWITCH_CLASS, NVIDIA_VENDOR = "0x030200", "0x068000", "0x10de"
#: The target NCCL itself writes for a GPU's NVSwitch fabric when the switches are not
#: visible as PCI devices (a VM, a GB200/GB300 tray): bus id -1 printed as
#: ``fffffff:ff:ff.0`` (NCCL 2.28 dump of an 8x H200 KVM guest in NVIDIA/nccl-tests issue
#: 256, tests/ecosystem/nccl-topo-xml; NVIDIA/nccl issue 1182: "we have to assume those are
#: invisible NVSwitches ... class bridge and ID -1"). ``topo.cc`` ncclTopoAddNvLinks joins
#: every tclass-0x068000 link to one NVS node without reading ``target``.
NVSWITCH_TARGET = "fffffff:ff:ff.0"



def cpumask(cpus: str) -> str:
    """A CPU list as nvidia-smi prints it (``0-55,112-167``) -> Linux cpumask hex words,
    most significant first, comma-separated (``ffffff00,...``). ValueError for bad text."""
    bits = 0
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if a > b:
            raise ValueError(f"CPU range {part!r} runs backwards")
        bits |= ((1 << (b - a + 1)) - 1) << a
    words = []
    while True:
        words.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
        if not bits:
            break
    return ",".join(reversed(words))


def nccl_bus_id(bus: str) -> str:
    """``00000000:18:00.0`` (nvidia-smi) -> ``0000:18:00.0`` (NCCL's form, lower case)."""
    domain, rest = bus.split(":", 1)
    return f"{int(domain, 16):04x}:{rest.lower()}"


def render(topo: GpuTopo, gpus: GpuList, used: tuple[int, ...]) -> str:
    """The XML text for the ``used`` GPUs of one server. ValueError when a GPU of ``used`` is
    missing from either capture."""
    missing = [g for g in used if g not in gpus.gpus or g not in topo.gpus]
    if missing:
        raise ValueError(f"GPU {missing[0]} is not in both nvidia-smi captures")
    switch = len(topo.gpus) > 2 and all(topo.nvlinks(a, b) for a in topo.gpus
                                         for b in topo.gpus if a != b)
    numas: dict[int, list[int]] = {}
    for g in used:
        numa = topo.numa.get(g)
        numas.setdefault(int(numa) if numa and numa.isdigit() and len(numa) <= 20 else -1, []).append(g)
    lines = ['<system version="1">']
    for numa, members in sorted(numas.items()):
        aff = topo.cpu_affinity.get(members[0])
        attrs = {"numaid": str(numa), **({"affinity": cpumask(aff)} if aff else {})}
        lines.append(f"  <cpu {_attrs(attrs)}>")
        for g in members:
            lines += _gpu(g, topo, gpus, used, switch)
        lines.append("  </cpu>")
    lines.append("</system>")
    return "\n".join(lines) + "\n"


def _gpu(g: int, topo: GpuTopo, gpus: GpuList, used: tuple[int, ...], switch: bool) -> list[str]:
    out = [f"    <pci {_attrs({'busid': nccl_bus_id(gpus.gpus[g].bus_id)})}>",
           f"      <gpu {_attrs({'dev': str(g)})}>"]
    links = []
    if switch:
        count = max(topo.nvlinks(g, p) for p in topo.gpus if p != g)
        links.append({"target": NVSWITCH_TARGET, "count": str(count), "tclass": NVSWITCH_CLASS})
    else:
        for p in used:
            n = topo.nvlinks(g, p) if p != g else 0
            if n:
                links.append({"target": nccl_bus_id(gpus.gpus[p].bus_id), "count": str(n),
                              "tclass": GPU_CLASS})
    out += [f"        <nvlink {_attrs(link)}/>" for link in links]
    if not links:   # NCCL's own form of a GPU without NVLink: <gpu .../>
        return out[:-1] + [out[-1][:-1] + "/>", "    </pci>"]
    return out + ["      </gpu>", "    </pci>"]


def _attrs(values: dict) -> str:
    return " ".join(f"{k}={quoteattr(v)}" for k, v in values.items())
