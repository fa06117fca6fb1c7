"""Parsers for ``nvidia-smi`` outputs on NVIDIA GPU servers.

* ``nvidia-smi topo -m``: a matrix whose header names the columns ``GPU0 .. GPUn``, then
  NIC columns (``NIC0 ..`` with a ``NIC Legend:`` below that maps ``NIC0: mlx5_0``; older
  drivers print the HCA names, ``mlx5_0``, as the columns themselves), then ``CPU Affinity``,
  ``NUMA Affinity`` and on newer drivers ``GPU NUMA ID``. One row per GPU and per NIC; a
  GPU row ends with its CPU set (``0-55,112-167``) and NUMA node (``0`` or ``N/A``). Link
  codes (the ``Legend:`` that follows the matrix): ``X`` self, ``NV#`` a bonded set of #
  NVLinks, ``PIX`` at most one PCIe bridge, ``PXB`` several PCIe bridges, ``PHB`` a PCIe
  host bridge (the CPU), ``NODE`` between host bridges of one NUMA node, ``SYS`` across the
  SMP interconnect between NUMA nodes (``SOC``: older drivers' name for it).
  -> :class:`GpuTopo`; its NVLink islands are the connected components of the graph of
  ``NV#`` pairs (networkx).
* ``nvidia-smi --query-gpu=index,name,pci.bus_id,uuid --format=csv``: a header
  ``index, name, pci.bus_id, uuid`` and one comma-separated row per GPU. -> :class:`GpuList`.

Format: NVIDIA's nvidia-smi documentation and the legend the tool prints with the matrix
(reference ``targets.md`` section 6); the captures in ``tests/data/inventory/nvidia/`` follow
it and say where each comes from. Columns are split on whitespace (tabs and spaces both
appear in captures copied from terminals). Bad captures are ``RTC474`` diagnostics at the
line and column.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, error, warning

from ._common import ascii_int, read_text, short_text, split_lines, value_span
from .nccl_topo import looks_like_topo_xml
from rtc.rules import rule

NVIDIA_SMI_UNREADABLE = rule("RTC474", "nvidia-smi-unreadable", "error", "nvidia-smi output is missing, malformed or inconsistent.", """
    What: an `nvidia-smi topo -m` matrix without its GPU rows, a row cut short, a link code
    that is not X, NV#, PIX, PXB, PHB, NODE or SYS, a diagonal other than X, an asymmetric
    pair; a `nvidia-smi --query-gpu=index,name,pci.bus_id,uuid --format=csv` table with a
    row of too few cells, a repeated or non-numeric index, or a bus id that is not
    DOMAIN:BUS:DEVICE.FUNCTION.
    Why: the NVLink islands (and so the TP placement checks) are read from the matrix; a
    damaged capture would give wrong islands.
    Example: a `topo -m` capture cut off by a terminal after GPU5.
    Fix: capture the raw output again into its own file (`nvidia-smi topo -m > topo.txt`).""",
    also={"warning": "NIC columns without a NIC Legend entry, or an asymmetric pair; a "
                     "--query-gpu table without pci.bus_id or uuid (the GPUs are read)"})


#: PCIe / CPU link codes of ``nvidia-smi topo -m``, nearest first (``SOC`` = old ``SYS``).
PCI_CODES = ("PIX", "PXB", "PHB", "NODE", "SYS", "SOC")
_NV = re.compile(r"^NV(?P<n>[0-9]{1,3})$")
_GPU = re.compile(r"^GPU(?P<n>[0-9]{1,3})$")
_NIC_LEGEND = re.compile(r"^\s*(?P<key>NIC[0-9]{1,3})\s*:\s*(?P<name>\S+)\s*$")
_TRAILERS = (("CPU Affinity", "CPU_Affinity"), ("NUMA Affinity", "NUMA_Affinity"),
             ("GPU NUMA ID", "GPU_NUMA_ID"))
_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")


@dataclass
class GpuTopo:
    """One ``nvidia-smi topo -m`` matrix.

    ``gpus``: GPU indexes in column order; ``nics``: NIC column labels (``NIC0`` or the
    HCA name); ``legend``: ``NIC0`` -> HCA name; ``links[(a, b)]`` the code between GPUs a
    and b (both orders); ``gpu_nic[(gpu, nic label)]`` the code between a GPU and a NIC;
    ``cpu_affinity`` / ``numa`` per GPU (text as printed; None when absent or ``N/A``);
    ``file`` and ``lines`` (1-based) where it was read."""

    file: str
    gpus: list[int] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)
    legend: dict[str, str] = field(default_factory=dict)
    links: dict[tuple[int, int], str] = field(default_factory=dict)
    gpu_nic: dict[tuple[int, str], str] = field(default_factory=dict)
    cpu_affinity: dict[int, str | None] = field(default_factory=dict)
    numa: dict[int, str | None] = field(default_factory=dict)
    lines: set[int] = field(default_factory=set)

    def nvlinks(self, a: int, b: int) -> int:
        """How many bonded NVLinks join GPUs ``a`` and ``b`` (0: none, PCIe / CPU only)."""
        m = _NV.match(self.links.get((a, b), ""))
        return int(m.group("n")) if m else 0

    def islands(self) -> list[tuple[int, ...]]:
        """The NVLink islands: connected components of the graph whose edges are the GPU
        pairs with ``NV#``; every GPU is in one island (a GPU without NVLink alone).
        Sorted by their smallest GPU."""
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(self.gpus)
        g.add_edges_from(p for p in self.links if p[0] < p[1] and self.nvlinks(*p))
        return sorted((tuple(sorted(c)) for c in nx.connected_components(g)), key=lambda c: c[0])

    def nic_names(self) -> list[str]:
        """The HCA names of the NIC columns (``NIC0`` resolved through the legend)."""
        return [self.legend.get(n, n) for n in self.nics]


#: ANSI SGR escapes (``ESC[4m`` underline, ``ESC[0m`` reset): nvidia-smi wraps the ``topo``
#: header in them even when its output goes to a file (the H200 capture in tests/ecosystem).
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def clean_lines(text: str) -> list[str]:
    """The lines of a capture with ANSI SGR escapes removed (CRLF, CR and LF all end a line;
    see :func:`~rtc.inventory._common.split_lines`). Columns of a span are counted in the
    cleaned line."""
    return [_SGR.sub("", line) for line in split_lines(text)]


def _fields(line: str) -> list[str]:
    """The cells of a matrix line: tab-separated when the line has tabs (empty cells kept,
    as nvidia-smi pads with extra tabs and prints an empty CPU affinity in some VMs),
    else whitespace-separated (captures re-typed or copied from a terminal)."""
    body = line.strip(" \r\n")
    if "\t" in body:
        return [c.strip() for c in body.strip("\t").split("\t")]
    return body.split()


def _header(line: str) -> list[str] | None:
    """The column labels of a ``topo -m`` header line (None when the line is not one)."""
    text = line
    for words, token in _TRAILERS:
        text = text.replace(words, token)
    labels = text.split()
    if len(labels) < 2 or not _GPU.match(labels[0]):
        return None
    return labels


def _is_code(cell: str) -> bool:
    return cell == "X" or bool(_NV.match(cell)) or cell in PCI_CODES


def find_gpu_topo(lines: list[str]) -> int | None:
    """0-based index of the first ``topo -m`` header line, or None. A header names ``CPU
    Affinity`` or is followed by a row of link codes (so the ``OK`` / ``NS`` matrix of
    ``nvidia-smi topo -p2p`` is not taken for one). ANSI escapes are ignored."""
    for i, raw in enumerate(lines):
        labels = _header(_SGR.sub("", raw))
        if not labels:
            continue
        after = [c for c in _fields(_SGR.sub("", lines[i + 1]))] if i + 1 < len(lines) else []
        row = [c for c in after[1:] if c]
        if "CPU_Affinity" in labels or (after[:1] == [labels[0]] and row and all(map(_is_code, row))):
            return i
    return None


def parse_gpu_topo(text: str, file: str = "<nvidia-smi topo -m>") -> tuple[GpuTopo | None, list[Diagnostic]]:
    """Parse the text of ``nvidia-smi topo -m``. Returns (None, [RTC474 error]) when there is
    no matrix; problems inside the matrix are RTC474 errors (unknown codes, a capture cut
    short: one error naming the rows and cells missing) or warnings (asymmetry, NIC columns
    without a ``NIC Legend`` entry), at the cell.

    Takes what machines print: ANSI escapes, CRLF, tab or space columns, indented rows
    (a capture pasted into markdown), one-GPU matrices (no GPU-to-GPU column), NIC columns
    named ``NIC#`` (with the legend) or by HCA (older drivers), ``N/A`` and empty affinity
    cells, ``GPU NUMA ID``, and other text before and after the matrix."""
    lines = clean_lines(text)
    at = find_gpu_topo(lines)
    if at is None:
        return None, [error(NVIDIA_SMI_UNREADABLE, f"no `nvidia-smi topo -m` matrix in "
                            f"{os.path.basename(file)}: expected a header 'GPU0 GPU1 ... CPU "
                            "Affinity' and one row per GPU; the NVLink islands are unknown",
                            value_span(file, 1, 0, 1),
                            hint="save the raw output: `nvidia-smi topo -m > topo.txt`")]
    labels = _header(lines[at])
    topo = GpuTopo(file, lines={at + 1})
    cols = [x for x in labels if not x.endswith(("_Affinity", "_ID"))]
    topo.gpus = [int(_GPU.match(c).group("n")) for c in cols if _GPU.match(c)]
    topo.nics = [c for c in cols if not _GPU.match(c)]
    trailers = [x for x in labels if x.endswith(("_Affinity", "_ID"))]
    diags: list[Diagnostic] = []
    seen_rows: set[str] = set()
    cut: str | None = None
    for i in range(at + 1, len(lines)):
        cells = _fields(lines[i])
        if not cells or cells[0] not in cols or cells[0] in seen_rows:
            break
        topo.lines.add(i + 1)
        seen_rows.add(cells[0])
        more, cut = _row(topo, cols, trailers, cells, lines[i], i + 1)
        diags += more
        if cut:
            break
    missing = [c for c in cols if _GPU.match(c) and c not in seen_rows]
    if cut or missing:
        what = "; ".join(x for x in (cut, missing and f"no row for {', '.join(missing)}") if x)
        diags.append(error(NVIDIA_SMI_UNREADABLE, f"the `nvidia-smi topo -m` matrix is cut short "
                           f"({what}): the NVLink islands would be wrong",
                           value_span(file, max(topo.lines), 0, 1),
                           hint="capture the whole output again: `nvidia-smi topo -m > topo.txt`"))
        return topo, diags
    diags += _legend(topo, lines, max(topo.lines))
    diags += _symmetric(topo)
    return topo, diags


def _row(topo: GpuTopo, cols: list[str], trailers: list[str], cells: list[str], line: str,
         no: int) -> tuple[list[Diagnostic], str | None]:
    """One matrix row: its link codes and, for a GPU row, CPU and NUMA affinity. Returns the
    findings and, for a row cut short, what it lacks."""
    label = cells[0]
    codes = [(k, c) for k, c in enumerate(cells[1:], 1) if c][:len(cols)]
    if len(codes) < len(cols):
        return [], f"row {label} has {len(codes)} of its {len(cols)} link cells"
    diags = []
    offsets = _offsets(line, [label] + [c for _, c in codes])
    row_gpu = _GPU.match(label)
    for (_, code), col, start in zip(codes, cols, offsets[1:]):
        span = value_span(topo.file, no, start, len(code))
        if (col == label) != (code == "X"):
            diags.append(error(NVIDIA_SMI_UNREADABLE, f"{label} x {col} reads '{short_text(code)}'"
                               f"; only a device's own cell is X", span,
                               hint="capture the raw output again, unedited"))
            continue
        if not _is_code(code):
            diags.append(error(NVIDIA_SMI_UNREADABLE, f"{label} x {col}: '{short_text(code)}' is "
                               "not a link code of nvidia-smi topo -m (X, NV#, PIX, PXB, PHB, "
                               "NODE, SYS)", span, hint="capture the raw output again, unedited"))
            continue
        col_gpu = _GPU.match(col)
        if row_gpu and col_gpu:
            topo.links[(int(row_gpu.group("n")), int(col_gpu.group("n")))] = code
        elif row_gpu:
            topo.gpu_nic[(int(row_gpu.group("n")), col)] = code
    if row_gpu:
        g = int(row_gpu.group("n"))
        values = _trailer_values(trailers, cells[codes[-1][0] + 1:] if codes else cells[1:],
                                 "\t" in line)
        topo.cpu_affinity[g] = _known(values.get("CPU_Affinity"))
        topo.numa[g] = _known(values.get("NUMA_Affinity"))
    return diags, None


def _trailer_values(trailers: list[str], rest: list[str], tabbed: bool) -> dict[str, str]:
    """Affinity cells after the link codes -> trailer label. In tab-separated rows the CPU
    affinity is the first cell even when empty (VMs print none); nvidia-smi pads the later
    columns with extra tabs, so they take the non-empty cells in order."""
    if tabbed and trailers[:1] == ["CPU_Affinity"] and rest:
        return {"CPU_Affinity": rest[0], **dict(zip(trailers[1:], [c for c in rest[1:] if c]))}
    return dict(zip(trailers, [c for c in rest if c]))


def _known(text: str | None) -> str | None:
    return None if not text or text == "N/A" else text


def _offsets(line: str, cells: list[str]) -> list[int]:
    out, pos = [], 0
    for c in cells:
        pos = line.index(c, pos)
        out.append(pos)
        pos += len(c)
    return out


def _legend(topo: GpuTopo, lines: list[str], after: int) -> list[Diagnostic]:
    """Read ``NIC Legend:`` entries; a ``NIC#`` column without one is an RTC474 warning."""
    for line in lines[after:]:
        m = _NIC_LEGEND.match(line)
        if m:
            topo.legend[m.group("key")] = m.group("name")
    unnamed = [n for n in topo.nics if n.startswith("NIC") and n not in topo.legend]
    if not unnamed:
        return []
    return [warning(NVIDIA_SMI_UNREADABLE, f"NIC column{'s' if len(unnamed) > 1 else ''} "
                    f"{', '.join(unnamed)} of the `nvidia-smi topo -m` matrix "
                    f"{'have' if len(unnamed) > 1 else 'has'} no entry in the 'NIC Legend'; "
                    "the HCA names (NCCL_IB_HCA) are unknown", value_span(topo.file, after, 0, 1),
                    hint="capture the whole output, with the legend below the matrix")]


def _symmetric(topo: GpuTopo) -> list[Diagnostic]:
    for (a, b), code in sorted(topo.links.items()):
        back = topo.links.get((b, a))
        if a < b and back is not None and back != code:
            return [warning(NVIDIA_SMI_UNREADABLE, f"GPU{a} x GPU{b} reads {code} but GPU{b} x "
                            f"GPU{a} reads {back}; the matrix should be symmetric",
                            value_span(topo.file, min(topo.lines), 0, 1),
                            hint="capture the raw output again, unedited")]
    return []


#: Product name word -> (CUDA compute capability as NCCL's ``sm``, PCIe link speed).
#: Sources: NVIDIA CUDA GPUs compute-capability table (A100 8.0, A6000 8.6, L40S 8.9,
#: H100/H200 9.0, B200 10.0); PCIe Gen4 (16 GT/s) on Ampere / Ada, Gen5 (32 GT/s) on
#: Hopper / Blackwell (product datasheets).
PRODUCTS: dict[str, tuple[int, str]] = {
    "B200": (100, "32.0 GT/s PCIe"), "H200": (90, "32.0 GT/s PCIe"),
    "H100": (90, "32.0 GT/s PCIe"), "L40S": (89, "16.0 GT/s PCIe"),
    "A6000": (86, "16.0 GT/s PCIe"), "A100": (80, "16.0 GT/s PCIe"),
}


def product(name: str) -> tuple[int, str] | None:
    """(compute capability, PCIe link speed) of a ``--query-gpu`` product name, or None."""
    return next((v for k, v in PRODUCTS.items() if k in name.upper()), None)


@dataclass(frozen=True)
class GpuEntry:
    """One GPU of ``--query-gpu``: index, product name, PCI bus id, UUID, capture line
    (``bus_id`` / ``uuid`` / ``name`` are ``""`` where the query did not ask for them)."""

    index: int
    name: str
    bus_id: str
    uuid: str
    line: int


@dataclass
class GpuList:
    """The rows of ``nvidia-smi --query-gpu=index,name,pci.bus_id,uuid --format=csv``."""

    file: str
    gpus: dict[int, GpuEntry] = field(default_factory=dict)
    lines: set[int] = field(default_factory=set)


_QUERY_FIELDS = ("index", "name", "pci.bus_id", "uuid")


#: A ``--query-gpu`` csv header cell: a property name, with its unit in brackets when the
#: query asked for units (``memory.total [MiB]``, ``power.limit [W]``).
_QUERY_CELL = re.compile(r"^[a-z][a-z0-9_.]*(?: \[[^\]]+\])?$")


def find_gpu_list(lines: list[str]) -> int | None:
    """0-based index of a ``--query-gpu=index,...`` csv header (``index`` first, then at
    least one other property: ``index, name, pci.bus_id, uuid`` as rtc's preflight asks, or
    ``index, name, memory.total [MiB], ...`` as users query), or None."""
    for i, line in enumerate(lines):
        names = [x.strip().lower() for x in line.split(",")]
        if names[:1] == ["index"] and len(names) > 1 and all(map(_QUERY_CELL.match, names)):
            return i
    return None


def parse_gpu_list(text: str, file: str = "<nvidia-smi --query-gpu>") -> tuple[GpuList | None, list[Diagnostic]]:
    """Parse ``--query-gpu=index,name,pci.bus_id,uuid --format=csv`` (other column orders
    work; ``noheader`` output is not recognised). RTC474 errors at the cell."""
    lines = split_lines(text)
    at = find_gpu_list(lines)
    if at is None:
        return None, [error(NVIDIA_SMI_UNREADABLE, f"no `nvidia-smi --query-gpu` table in "
                            f"{os.path.basename(file)}: expected the header 'index, name, "
                            "pci.bus_id, uuid'", value_span(file, 1, 0, 1),
                            hint="capture `nvidia-smi --query-gpu=index,name,pci.bus_id,uuid "
                                 "--format=csv > gpus.csv`")]
    header = [x.strip().lower() for x in lines[at].split(",")]
    absent = [f for f in _QUERY_FIELDS if f not in header]
    out = GpuList(file, lines={at + 1})
    diags: list[Diagnostic] = []
    if absent:   # the GPUs are still counted; what needs the column says so (RTC476)
        diags.append(warning(NVIDIA_SMI_UNREADABLE, f"the --query-gpu table lacks the column"
                             f"{'s' if len(absent) > 1 else ''} {', '.join(absent)}: rtc reads "
                             "the GPUs but cannot match them by PCI bus id or UUID",
                             value_span(file, at + 1, 0, len(lines[at])),
                             hint="query index,name,pci.bus_id,uuid"))
    for no in range(at + 2, len(lines) + 1):
        line = lines[no - 1]
        if not line.strip():
            break
        out.lines.add(no)
        try:
            row = next(csv.reader([line], skipinitialspace=True))
        except csv.Error as exc:    # a cell longer than csv's field limit (128 KiB)
            diags.append(error(NVIDIA_SMI_UNREADABLE, f"line {no} of the --query-gpu table "
                               f"cannot be read as CSV ({exc})",
                               value_span(file, no, 0, min(len(line), 200)),
                               hint="capture the raw csv output again"))
            continue
        diags += _gpu_row(out, dict(zip(header, (c.strip() for c in row))), line, no,
                          len(row) == len(header))
    return out, diags


def _gpu_row(out: GpuList, cells: dict, line: str, no: int, complete: bool) -> list[Diagnostic]:
    if not complete:
        return [error(NVIDIA_SMI_UNREADABLE, f"line {no} of the --query-gpu table has not one "
                      "value per column", value_span(out.file, no, 0, len(line)),
                      hint="capture the raw csv output again")]
    index = ascii_int(cells["index"], 3)
    bus = cells.get("pci.bus_id", "")
    if index is None or index in out.gpus:
        why = "is not a GPU index" if index is None else "is listed twice"
        return [error(NVIDIA_SMI_UNREADABLE, f"--query-gpu index '{short_text(cells['index'])}'"
                      f" {why}", value_span(out.file, no, line.index(cells["index"]),
                                            len(cells["index"]) or 1),
                      hint="capture the raw csv output again")]
    if "pci.bus_id" in cells and not _BUS_ID.match(bus):
        return [error(NVIDIA_SMI_UNREADABLE, f"GPU {index}: pci.bus_id '{short_text(bus)}' is "
                      "not DOMAIN:BUS:DEVICE.FUNCTION", value_span(out.file, no, line.find(bus)
                                                                   if bus else 0, len(bus) or 1),
                      hint="capture the raw csv output again")]
    out.gpus[index] = GpuEntry(index, cells.get("name", ""), bus, cells.get("uuid", ""), no)
    return []


#: ``nvidia-smi -L``: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)``, and under a GPU in
#: MIG mode ``  MIG 1g.10gb     Device  0: (UUID: MIG-...)`` (drivers before R470 print
#: ``MIG-GPU-<uuid>/<gi>/<ci>``). Source: the captures in tests/ecosystem/nvidia-smi-L.
_L_GPU = re.compile(r"^GPU (?P<index>[0-9]{1,3}): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[^)\s]+)\)\s*$")
_L_MIG = re.compile(r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<dev>[0-9]{1,3}): "
                    r"\(UUID: (?P<uuid>MIG-[^)\s]+)\)\s*$")


@dataclass(frozen=True)
class MigDevice:
    """One MIG device line of ``nvidia-smi -L``: its GPU, profile (``1g.10gb``), device
    index within the GPU and ``MIG-`` UUID (what ``CUDA_VISIBLE_DEVICES`` takes)."""

    gpu: int
    profile: str
    device: int
    uuid: str
    line: int


@dataclass
class GpuNames:
    """``nvidia-smi -L``: ``gpus`` index -> (name, UUID) and the ``mig`` devices."""

    file: str
    gpus: dict[int, tuple[str, str]] = field(default_factory=dict)
    mig: list[MigDevice] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)


def find_gpu_names(lines: list[str]) -> int | None:
    """0-based index of the first ``GPU n: NAME (UUID: GPU-...)`` line of ``-L``, or None."""
    return next((i for i, line in enumerate(lines) if _L_GPU.match(line)), None)


def parse_gpu_names(text: str, file: str = "<nvidia-smi -L>") -> tuple[GpuNames | None, list[Diagnostic]]:
    """Parse ``nvidia-smi -L``. (None, [RTC474 error]) when no GPU line is found; a MIG
    line before any GPU line or a GPU index listed twice is an RTC474 error."""
    lines = clean_lines(text)
    if find_gpu_names(lines) is None:
        return None, [error(NVIDIA_SMI_UNREADABLE, f"no `nvidia-smi -L` line in "
                            f"{os.path.basename(file)}: expected 'GPU 0: <name> (UUID: GPU-...)'",
                            value_span(file, 1, 0, 1), hint="capture `nvidia-smi -L > gpus-L.txt`")]
    out, diags, gpu = GpuNames(file), [], None
    for no, line in enumerate(lines, 1):
        m, mig = _L_GPU.match(line), _L_MIG.match(line)
        if m:
            gpu = int(m.group("index"))
            if gpu in out.gpus:
                diags.append(error(NVIDIA_SMI_UNREADABLE, f"GPU {gpu} is listed twice",
                                   value_span(file, no, 0, len(line)),
                                   hint="capture the raw output again"))
            out.gpus[gpu] = (m.group("name"), m.group("uuid"))
        elif mig and gpu is not None:
            out.mig.append(MigDevice(gpu, mig.group("profile"), int(mig.group("dev")),
                                     mig.group("uuid"), no))
        elif mig:
            diags.append(error(NVIDIA_SMI_UNREADABLE, "a MIG device line comes before any GPU "
                               "line: the capture looks cut at the top",
                               value_span(file, no, 0, len(line)), hint="capture the whole output"))
        else:
            continue
        out.lines.add(no)
    return out, diags


def load_gpu_names(path: str | os.PathLike, file: str | None = None) -> tuple[GpuNames | None, list[Diagnostic]]:
    """Read and parse an ``nvidia-smi -L`` capture file."""
    return _load(parse_gpu_names, path, file)


#: ``nvidia-smi nvlink -s``: ``\t Link 0: 14.062 GB/s`` under each ``GPU n: ...`` line (or
#: ``\t Link 0: <inactive>``); source: siboehm/bench gpu/nvlink/README.md.
_NVLINK_S = re.compile(r"^\s+Link \d+: (?:[0-9.]+ GB/s|<inactive>)\s*$")


def looks_like(text: str) -> str:
    """For a file no reader took: ``" (it looks like ...)"`` naming the nvidia-smi output
    it resembles and what rtc reads instead, or ``""``."""
    lines = clean_lines(text)
    if any(_NVLINK_S.match(l) for l in lines):
        return (" (it looks like `nvidia-smi nvlink -s`; for NVLink pairs rtc reads `nvidia-smi "
                "topo -m`)")
    if find_gpu_names(lines) is not None:
        return (" (it looks like `nvidia-smi -L`; for the GPU list rtc reads `nvidia-smi "
                "--query-gpu=index,name,pci.bus_id,uuid --format=csv`)")
    if any(_header(l) for l in lines) and any("Status Ok" in l for l in lines):
        return " (it looks like `nvidia-smi topo -p2p`; rtc reads `nvidia-smi topo -m`)"
    if any(l.lstrip().startswith(("| NVIDIA-SMI", "NVIDIA-SMI ")) for l in lines):
        return " (it looks like the `nvidia-smi` summary table; rtc reads `nvidia-smi topo -m`)"
    if lines and lines[0].startswith("Machine (") and any("Package L#" in l for l in lines):
        return (" (it looks like `hwloc lstopo` text; for GPU links rtc reads "
                "`nvidia-smi topo -m`)")
    if text.lstrip("\ufeff \t\r\n").startswith("<graphs"):
        return (" (it looks like an NCCL graph XML, NCCL_GRAPH_DUMP_FILE / NCCL_GRAPH_FILE; rtc "
                "reads the topology XML, NCCL_TOPO_DUMP_FILE, in preflight results)")
    if looks_like_topo_xml(text):
        return (" (it looks like an NCCL topology XML, NCCL_TOPO_DUMP_FILE; `rtc preflight "
                "nccl` reads it as nccl-topo-dump.xml in a preflight results folder)")
    return ""


def _load(parse, path, file):
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    res, more = parse(text, file if file is not None else os.fspath(path))
    return res, diags + more


def load_gpu_topo(path: str | os.PathLike, file: str | None = None) -> tuple[GpuTopo | None, list[Diagnostic]]:
    """Read and parse an ``nvidia-smi topo -m`` capture file."""
    return _load(parse_gpu_topo, path, file)


def load_gpu_list(path: str | os.PathLike, file: str | None = None) -> tuple[GpuList | None, list[Diagnostic]]:
    """Read and parse an ``nvidia-smi --query-gpu ... --format=csv`` capture file."""
    return _load(parse_gpu_list, path, file)


#: The rules this module reports (collected by rtc.catalogue).
RULES = (NVIDIA_SMI_UNREADABLE,)
