"""NCCL topology files: ``nccl-topo-<server>.xml`` for ``NCCL_TOPO_FILE``, written for a GPU
server whose ``nccl_topo_file on`` asks for it, from its ``nvidia-smi topo -m`` and
``--query-gpu`` captures.

Why: in a VM the PCI tree NCCL reads from ``/sys`` is often flat or made up, so NCCL
misjudges which GPUs share NVLink, a PCIe switch or a CPU; NVIDIA's answer is to give NCCL
the real topology as XML (reference ``targets.md`` section 6, NCCL issue 1843). The
capture is what nvidia-smi (NVML) reports, which sees the NVLinks even where the PCI tree
lies.

Schema (NVIDIA/nccl ``src/graph/topo.cc`` ``ncclTopoAddCpu`` / ``ncclTopoAddPci`` /
``ncclTopoAddGpu`` / ``ncclTopoAddNvLinks``, ``src/graph/xml.h``): ``<system version="1">``;
per NUMA node a ``<cpu numaid affinity arch vendor familyid modelid>`` (``affinity`` a
Linux cpumask in hex, 32-bit words separated by commas; NCCL overwrites ``host_hash``
itself); per GPU a ``<pci busid class vendor link_speed link_width>`` holding
``<gpu dev sm gdr>`` (NCCL adds ``rank`` and ``keep`` to the GPU it manages, matched by
``busid``); per NVLink peer ``<nvlink target count tclass>``: ``tclass`` ``0x068000`` (an
NVSwitch; NCCL joins all such links to one switch node, so ``target`` only needs to be
present) or the peer GPU's class with its ``busid``. NICs are left to NCCL's own
detection. The CPU model (``arch`` ... ``modelid``) is not in the captures: rtc writes
:data:`CPU_ASSUMED` (x86_64 Intel Sapphire Rapids); edit them when the hosts differ. The
file holds no XML comment (NCCL reads it with its own small parser).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from rtc.inventory.nvidia_smi import PRODUCTS, GpuList, GpuTopo, product

#: PCI class of a GPU (3D controller) and of an NVSwitch; NVIDIA's PCI vendor id.
GPU_CLASS, NVSWITCH_CLASS, NVIDIA_VENDOR = "0x030200", "0x068000", "0x10de"

#: What rtc writes for the CPU when the captures do not say (an assumption, stated in the file).
CPU_ASSUMED = {"arch": "x86_64", "vendor": "GenuineIntel", "familyid": "6", "modelid": "143"}


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
    missing from either capture or its product is not in :data:`PRODUCTS`."""
    missing = [g for g in used if g not in gpus.gpus or g not in topo.gpus]
    if missing:
        raise ValueError(f"GPU {missing[0]} is not in both nvidia-smi captures")
    unknown = [gpus.gpus[g].name for g in used if product(gpus.gpus[g].name) is None]
    if unknown:
        raise ValueError(f"no compute capability known for {unknown[0]!r}")
    switch = len(topo.gpus) > 2 and all(topo.nvlinks(a, b) for a in topo.gpus
                                         for b in topo.gpus if a != b)
    numas: dict[int, list[int]] = {}
    for g in used:
        numas.setdefault(int(topo.numa.get(g) or 0), []).append(g)
    lines = ['<system version="1">']
    for numa, members in sorted(numas.items()):
        aff = topo.cpu_affinity.get(members[0])
        attrs = {"numaid": str(numa), **({"affinity": cpumask(aff)} if aff else {}),
                 **CPU_ASSUMED}
        lines.append(f"  <cpu {_attrs(attrs)}>")
        for g in members:
            lines += _gpu(g, topo, gpus, used, switch)
        lines.append("  </cpu>")
    lines.append("</system>")
    return "\n".join(lines) + "\n"


def _gpu(g: int, topo: GpuTopo, gpus: GpuList, used: tuple[int, ...], switch: bool) -> list[str]:
    sm, speed = product(gpus.gpus[g].name)
    pci = {"busid": nccl_bus_id(gpus.gpus[g].bus_id), "class": GPU_CLASS,
           "vendor": NVIDIA_VENDOR, "link_speed": speed, "link_width": "16"}
    out = [f"    <pci {_attrs(pci)}>",
           f"      <gpu {_attrs({'dev': str(g), 'sm': str(sm), 'gdr': '1'})}>"]
    links = []
    if switch:
        count = max(topo.nvlinks(g, p) for p in topo.gpus if p != g)
        links.append({"target": "ffff:ff:00.0", "count": str(count), "tclass": NVSWITCH_CLASS})
    else:
        for p in used:
            n = topo.nvlinks(g, p) if p != g else 0
            if n:
                links.append({"target": nccl_bus_id(gpus.gpus[p].bus_id), "count": str(n),
                              "tclass": GPU_CLASS})
    out += [f"        <nvlink {_attrs(link)}/>" for link in links]
    return out + ["      </gpu>", "    </pci>"]


def _attrs(values: dict) -> str:
    return " ".join(f"{k}={quoteattr(v)}" for k, v in values.items())
