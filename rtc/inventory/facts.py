"""One server's inventory: the facts of every device merged from all captures, and the loader
that reads a directory of captures.

:func:`load_inventory_dir` looks at each file's content first and its name second:

* ``hccn.conf`` (or any ``*.conf``, or text made of ``key_N=value`` lines) -> hccn.conf;
* a ``| NPU  Name | Health |`` box -> ``npu-smi info``; a ``NPU0 NPU1 ... CPU Affinity``
  matrix -> ``npu-smi info -t topo``; a ``NPU ID  Chip ID  Chip Logic ID  Chip Name`` table ->
  ``npu-smi info -m`` (several of these may sit in one mixed capture);
* an ``nvidia-smi topo -m`` matrix (``GPU0 GPU1 ... CPU Affinity``) and an
  ``index, name, pci.bus_id, uuid`` csv table (``nvidia-smi --query-gpu``) -> the GPU
  topology and GPU list of an NVIDIA server (:mod:`rtc.inventory.nvidia_smi`; the first
  file in name order wins);
* ``hca_id:`` blocks of ``ibv_devinfo`` -> the server's RDMA devices and ports
  (:mod:`rtc.inventory.ibv_devinfo`; the first file in name order wins);
* hccn_tool output lines (``ipaddr:``, ``link status:`` ...) or ``hccn_tool`` command lines ->
  hccn_tool, with the device taken from the file name when the file is per device
  (``ip_3.txt``, ``dev3_link.txt``);
* an empty file whose name says what it should hold (``ip_2.txt``) is read as such, so the
  missing fact is reported; ``*.md`` and other documents are skipped silently.

Merging: hccn_tool facts (the device's running state) win over hccn.conf (the file on disk);
between files, the one whose name sorts first wins. Every disagreement is an RTC487 error
naming both values and both sources.

Rule ids used here (besides those of the parsers, see :mod:`rtc.inventory`):

* ``RTC480`` (error) the directory does not exist or a file cannot be read.
* ``RTC485`` (warning) loop captures that number devices by position disagree on how many
  devices there are. Why: a device that printed nothing shifts every later device, so facts
  land on the wrong device. Fix: capture with a header per device or one file per device.
* ``RTC487`` (error) two sources disagree on a device's fact (e.g. ``address_3`` in hccn.conf
  vs ``hccn_tool -i 3 -ip -g``), or two topo matrices / chip tables differ. Why: either the
  running state or the file is stale; after a reboot or a rank-table regeneration the device
  would use another address. Fix: make them agree (re-apply with ``hccn_tool -i N -ip -s ...``
  or edit hccn.conf), then re-capture.
* ``RTC488`` (warning) a file in the directory that rtc does not recognise; it is skipped.
  Fix: remove it or save the raw command output under a telling name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from rtc.diagnostics import Diagnostic, Related, Span, error, warning

from . import hccn_conf as _conf
from . import hccn_tool as _tool
from . import ibv_devinfo as _ibv
from . import npu_smi as _smi
from . import npu_smi_board as _board
from . import nvidia_smi as _nv
from ._common import Fact, display_name, read_text, split_lines
from .hccn_tool import HccnToolOutput, PingResult
from .ibv_devinfo import IbvDevinfo
from .npu_smi import ChipMap, NpuSmiInfo, TopoMatrix
from .npu_smi_board import NpuBoardInfo
from .nvidia_smi import GpuList, GpuTopo
from rtc.inventory.rules import DEVICE_ATTRIBUTION, SOURCES_DISAGREE, UNKNOWN_FILE, UNREADABLE

__all__ = ["Fact", "DeviceFacts", "ServerInventory", "load_inventory_dir", "load_inventory_files",
           "detect_kinds", "MERGED_FIELDS"]

#: The DeviceFacts fields filled from captures, in report order.
MERGED_FIELDS = ("ip", "netmask", "prefix_len", "ipv6", "ipv6_prefix_len", "gateway",
                 "gateway_iface", "netdetect", "link", "net_health", "lldp_ifname",
                 "lldp_system_name", "lldp_chassis_id", "vnic_ip", "vnic_netmask")
# derived or descriptive fields whose disagreements are already reported through another field
_NOT_COMPARED = {"prefix_len", "gateway_iface"}
# hccn.conf key -> DeviceFacts field (address is ip or ipv6 by its value)
_CONF_FIELD = {"netmask": "netmask", "prefix_len": "prefix_len", "gateway": "gateway",
               "netdetect": "netdetect"}
_FIELD_LABEL = {"ip": "IPv4 address", "ipv6": "IPv6 address", "netmask": "netmask",
                "ipv6_prefix_len": "IPv6 prefix length", "gateway": "default gateway",
                "netdetect": "net-detect address", "link": "link status",
                "net_health": "net health status", "lldp_ifname": "LLDP neighbour port",
                "lldp_system_name": "LLDP neighbour name", "lldp_chassis_id": "LLDP chassis id"}


@dataclass
class DeviceFacts:
    """Everything known about one device (``device_id`` as ``hccn_tool -i`` numbers it).

    ``ip``/``netmask``/``prefix_len`` are IPv4 (``prefix_len`` derived from the netmask);
    ``ipv6``/``ipv6_prefix_len`` come from ``-ip -inet6 -g`` or an IPv6 ``address_N``.
    ``link`` is ``"UP"``/``"DOWN"``, ``net_health`` one of
    :data:`rtc.inventory.hccn_tool.NET_HEALTH_VALUES` (or the raw text). ``extra`` holds
    other hccn.conf keys (``send_arp_status``, ``tls_enable``, unknown ones)."""

    device_id: int
    ip: Fact | None = None
    netmask: Fact | None = None
    prefix_len: Fact | None = None
    ipv6: Fact | None = None
    ipv6_prefix_len: Fact | None = None
    gateway: Fact | None = None
    gateway_iface: Fact | None = None
    netdetect: Fact | None = None
    link: Fact | None = None
    net_health: Fact | None = None
    lldp_ifname: Fact | None = None
    lldp_system_name: Fact | None = None
    lldp_chassis_id: Fact | None = None
    #: A3: the vNIC address and mask (``hccn_tool -i N -vnic -g``), the address vllm-ascend's
    #: PD table generator uses on A3; taken as device_ip by ``device_ip inventory vnic``.
    vnic_ip: Fact | None = None
    vnic_netmask: Fact | None = None
    ping: list[PingResult] = field(default_factory=list)
    extra: dict[str, Fact] = field(default_factory=dict)

    def value(self, name: str) -> object:
        """The plain value of a field (None when unknown)."""
        f = getattr(self, name) if name in MERGED_FIELDS else self.extra.get(name)
        return None if f is None else f.value


@dataclass
class ServerInventory:
    """One server's facts. ``files`` maps each file read to the kinds rtc found in it."""

    devices: dict[int, DeviceFacts] = field(default_factory=dict)
    topo: TopoMatrix | None = None
    chips: ChipMap | None = None
    npu_info: NpuSmiInfo | None = None
    conf: _conf.HccnConf | None = None
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: NVIDIA GPU servers: ``nvidia-smi topo -m`` and ``--query-gpu`` captures.
    gpu_topo: GpuTopo | None = None
    gpu_list: GpuList | None = None
    #: RDMA devices and ports (``ibv_devinfo``), the server's InfiniBand / RoCE NICs.
    rdma: IbvDevinfo | None = None
    #: Board and chip facts (``npu-smi info -t board``): board id, chip name, firmware.
    board: NpuBoardInfo | None = None

    def device(self, device_id: int) -> DeviceFacts:
        """The record of a device (created empty when nothing is known yet)."""
        if device_id not in self.devices:
            self.devices[device_id] = DeviceFacts(device_id)
        return self.devices[device_id]

    def device_ips(self) -> dict[int, str]:
        """device id -> IPv4 address (IPv6 when there is no IPv4), for devices that have one."""
        out = {}
        for d, facts in sorted(self.devices.items()):
            f = facts.ip or facts.ipv6
            if f is not None:
                out[d] = f.value
        return out


# -- recognising files ---------------------------------------------------------------------------

_DOC_SUFFIXES = {".md", ".rst", ".html", ".htm", ".pdf", ".png", ".jpg", ".jpeg", ".svg", ".gz",
                 ".tar", ".zip", ".json", ".yaml", ".yml", ".rtc", ".py", ".sh"}
_CONF_LINE = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
_TOOL_NAME_WORDS = ("ip", "ipv6", "link", "net_health", "health", "gateway", "netdetect", "lldp",
                    "ping", "hccn", "hccn_tool", "vnic")
_TOOL_RECORD = re.compile(
    r"^\s*(ipaddr|netmask|ipv6_address|prefix_length|link\s+status|net\s+health\s+status|"
    r"default\s+gateway|netdetect\s+address|ifname|device\s+\d+\s+ping|chassis\s+id\s+tlv)\b", re.I)


def detect_kinds(name: str, text: str) -> list[str]:
    """What a capture holds: any of ``hccn_conf``, ``npu_smi_info``, ``npu_smi_topo``,
    ``npu_smi_chips``, ``npu_smi_board``, ``nvidia_smi_topo``, ``nvidia_smi_gpus``, ``ibv_devinfo``,
    ``hccn_tool``
    (content first, the file name when the content is empty)."""
    lines = split_lines(text)
    base = os.path.basename(name).lower()
    stem = re.sub(r"\.(txt|log|out|conf)$", "", base)
    meaningful = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    kinds: list[str] = []
    # a tool's table first: the legends of `nvidia-smi topo -m` / `npu-smi info -t topo`
    # ("  X    = Self") are key=value lines too, and must not make a capture an hccn.conf
    if not _has_table(lines) and meaningful and sum(
            bool(_CONF_LINE.match(l)) for l in meaningful) * 2 > len(meaningful):
        return ["hccn_conf"]
    if _smi.find_box_table(lines) is not None:
        kinds.append("npu_smi_info")
    if _smi.find_topo(lines) is not None:
        kinds.append("npu_smi_topo")
    if _smi.find_chip_map(lines) is not None:
        kinds.append("npu_smi_chips")
    if _board.find_board(lines) is not None:
        kinds.append("npu_smi_board")
    if _nv.find_gpu_topo(lines) is not None:
        kinds.append("nvidia_smi_topo")
    if _nv.find_gpu_list(lines) is not None:
        kinds.append("nvidia_smi_gpus")
    if _ibv.find_devinfo(lines) is not None:
        kinds.append("ibv_devinfo")
    if any(_TOOL_RECORD.match(l) for l in lines) or any(
            (info := _tool.command_line_info(l)) is not None and info[0] == "hccn_tool" for l in lines):
        kinds.append("hccn_tool")
    if kinds or meaningful:
        return kinds
    # empty (or comment-only) file: trust the name
    if base == "hccn.conf" or base.endswith(".conf"):
        return ["hccn_conf"]
    if "topo" in stem:
        return ["npu_smi_topo"]
    if re.search(r"npu[-_]?smi.*(?:[-_]m$|chip)", stem):
        return ["npu_smi_chips"]
    if stem.startswith(("npu_smi", "npu-smi", "npusmi")):
        return ["npu_smi_info"]
    words = set(re.split(r"[^a-z0-9_]+|(?<=[a-z])(?=\d)", stem)) | set(re.split(r"[^a-z]+", stem))
    if words & set(_TOOL_NAME_WORDS):
        return ["hccn_tool"]
    return []


def _has_table(lines: list[str]) -> bool:
    """Whether the text holds a table of npu-smi or nvidia-smi, or a tool's ``Legend:``
    (not an hccn.conf)."""
    return any(l.strip() in ("Legend:", "NIC Legend:") for l in lines) or any(find(lines) is not None for find in (
        _smi.find_box_table, _smi.find_topo, _smi.find_chip_map, _nv.find_gpu_topo,
        _nv.find_gpu_list, _ibv.find_devinfo, _board.find_board))


# -- loading --------------------------------------------------------------------------------------

def load_inventory_dir(path: str | os.PathLike) -> tuple[ServerInventory, list[Diagnostic]]:
    """Read every capture in a directory (one server) and merge the facts.

    Hidden files and documents (``README.md`` ...) are skipped; files are read in name order.
    Returns the inventory and all diagnostics (parse problems, conflicts); never raises on
    bad content."""
    label = os.fspath(path)
    hint = "pass the folder that holds the captures (hccn.conf, ip.txt, npu_smi_topo.txt ...)"
    try:
        p = Path(path)
        if not p.is_dir():
            return ServerInventory(), [error(
                UNREADABLE, f"inventory directory '{label}' does not exist or is not a "
                "directory; no facts about the server's devices can be read",
                Span.whole_file(label), hint=hint)]
        names = sorted(e.name for e in p.iterdir() if e.is_file() and not e.name.startswith("."))
    except OSError as exc:   # a path too long, a folder that cannot be listed
        return ServerInventory(), [error(
            UNREADABLE, f"inventory directory '{label[:200]}' cannot be read: "
            f"{exc.strerror or exc}", Span.whole_file(label), hint=hint)]
    if not names:
        return ServerInventory(), [warning(
            UNREADABLE, f"inventory directory '{label}' holds no capture files; the server's "
            "values are not checked against any facts", Span.whole_file(label), hint=hint)]
    return load_inventory_files([os.path.join(label, n) for n in names])


def load_inventory_files(paths: Iterable[str | os.PathLike]) -> tuple[ServerInventory, list[Diagnostic]]:
    """Read the given capture files (one server) and merge them; see :func:`load_inventory_dir`."""
    inv = ServerInventory()
    diags: list[Diagnostic] = []
    tools: list[HccnToolOutput] = []
    confs: list[_conf.HccnConf] = []
    topos: list[TopoMatrix] = []
    chip_maps: list[ChipMap] = []
    infos: list[NpuSmiInfo] = []
    gpu_topos: list[GpuTopo] = []
    gpu_lists: list[GpuList] = []
    rdmas: list[IbvDevinfo] = []
    boards: list[NpuBoardInfo] = []

    for path in paths:
        file = os.fspath(path)
        suffix = os.path.splitext(file)[1].lower()
        if suffix in _DOC_SUFFIXES or os.path.basename(file).lower().startswith(("readme", "license")):
            continue
        text, rd = read_text(path, file)
        diags.extend(rd)
        if text is None:
            continue
        kinds = detect_kinds(file, text)
        inv.files[file] = tuple(kinds)
        if not kinds:
            diags.append(_unknown_file(file, text))
            continue
        if "hccn_conf" in kinds:
            conf, d = _conf.parse_hccn_conf(text, file)
            diags.extend(d)
            confs.append(conf)
            continue
        consumed = _parse_tables(kinds, text, file, (
            ("npu_smi_info", _smi.parse_npu_smi_info, infos),
            ("npu_smi_topo", _smi.parse_npu_smi_topo, topos),
            ("npu_smi_chips", _smi.parse_npu_smi_chip_map, chip_maps),
            ("nvidia_smi_topo", _nv.parse_gpu_topo, gpu_topos),
            ("nvidia_smi_gpus", _nv.parse_gpu_list, gpu_lists),
            ("ibv_devinfo", _ibv.parse_ibv_devinfo, rdmas),
            ("npu_smi_board", _board.parse_npu_smi_board, boards)), diags)
        if "hccn_tool" in kinds:
            device = _tool.device_from_filename(file)
            out, d = _tool.parse_hccn_tool(text, file, device=device, ignore_lines=consumed,
                                           vnic=_is_vnic_file(file, text))
            diags.extend(d)
            tools.append(out)

    _merge_devices(inv, tools, confs, diags)
    inv.topo = _pick_one(topos, "npu-smi info -t topo matrix", _topo_key, diags)
    inv.chips = _pick_one(chip_maps, "npu-smi info -m table", _chips_key, diags)
    inv.npu_info = _pick_one(infos, "npu-smi info table", _info_key, diags)
    inv.conf = confs[0] if confs else None
    inv.gpu_topo = gpu_topos[0] if gpu_topos else None
    inv.gpu_list = gpu_lists[0] if gpu_lists else None
    inv.rdma = rdmas[0] if rdmas else None
    inv.board = boards[0] if boards else None
    _check_positional_counts(tools, diags)
    return inv, diags


def _unknown_file(file: str, text: str) -> Diagnostic:
    """RTC488 for a file no reader takes, saying what it looks like when rtc can tell."""
    return warning(
        UNKNOWN_FILE,
        f"'{display_name(file)}' is not a capture rtc recognises (hccn.conf, hccn_tool, "
        f"npu-smi, npu-smi -t board, nvidia-smi topo -m, --query-gpu csv or ibv_devinfo output)"
        f"{_nv.looks_like(text) or _board.looks_like(text)}; "
        "it is skipped, so any fact it holds is not checked",
        Span.whole_file(file),
        hint="remove it from the inventory folder, or save the raw command output "
             "(e.g. `hccn_tool -i 0 -ip -g > ip_0.txt`, `npu-smi info -t topo > npu_smi_topo.txt`)")


def _is_vnic_file(file: str, text: str) -> bool:
    """A capture named ``vnic*`` with no command lines is ``hccn_tool -i N -vnic -g`` output
    (with command lines, each section says what it is)."""
    stem = os.path.splitext(os.path.basename(file))[0].lower()
    return "vnic" in stem and not any(_tool.command_line_info(l) is not None
                                      for l in split_lines(text))


def _parse_tables(kinds: list[str], text: str, file: str, parsers, diags: list) -> set[int]:
    """Run the table parsers of ``kinds`` on one file; each result goes to its bucket.
    Returns the lines the tables took (not hccn_tool output)."""
    consumed: set[int] = set()
    for kind, parse, bucket in parsers:
        if kind in kinds:
            res, d = parse(text, file)
            diags.extend(d)
            if res is not None:
                bucket.append(res)
                consumed.update(res.lines)
    return consumed


def _merge_devices(inv: ServerInventory, tools: list[HccnToolOutput], confs: list[_conf.HccnConf],
                   diags: list[Diagnostic]) -> None:
    for out in tools:
        for device, facts in out.facts.items():
            rec = inv.device(device)
            for name, fact in facts.items():
                _offer(rec, name, fact, diags)
        for device in out.empty:
            inv.device(device)
        for ping in out.pings:
            inv.device(ping.device_id).ping.append(ping)
    for conf in confs:
        for device, facts in conf.devices.items():
            rec = inv.device(device)
            for key, fact in facts.items():
                if key == "address":
                    name = "ipv6" if ":" in str(fact.value) else "ip"
                elif key in _CONF_FIELD:
                    name = _CONF_FIELD[key]
                else:
                    if key not in rec.extra:
                        rec.extra[key] = fact
                    continue
                _offer(rec, name, fact, diags)
    inv.devices = dict(sorted(inv.devices.items()))


def _offer(rec: DeviceFacts, name: str, fact: Fact, diags: list[Diagnostic]) -> None:
    """Keep ``fact`` unless the field is already known; report a disagreement."""
    held: Fact | None = getattr(rec, name)
    if held is None:
        setattr(rec, name, fact)
        return
    if name in _NOT_COMPARED or held.value == fact.value:
        return
    label = _FIELD_LABEL.get(name, name)
    diags.append(error(
        SOURCES_DISAGREE,
        f"device {rec.device_id} {label} disagrees between sources: {fact.source} says "
        f"'{fact.value}' but {held.source} says '{held.value}'; one of them is stale, and the "
        f"device would use a different {label} after the next reboot or re-configuration",
        fact.span,
        hint=f"make them agree: if '{held.value}' is right, correct this line; otherwise re-apply "
             f"the setting (hccn_tool -i {rec.device_id} ... -s) and re-capture. rtc uses "
             f"'{held.value}' ({held.source.split(' (')[0]})",
        related=[Related(held.span, f"{held.source}: '{held.value}'")],
        subject=f"device {rec.device_id}",
    ))


def _topo_key(t: TopoMatrix):
    return (tuple(t.ids), tuple(sorted((k, f.value) for k, f in t.links.items())))


def _chips_key(c: ChipMap):
    return tuple((e.npu_id, e.chip_id, e.logic_id, e.name) for e in c.entries)


def _info_key(i: NpuSmiInfo):
    return tuple((c.npu_id, c.chip_id, c.name.value) for c in i.chips)


def _pick_one(items: list, what: str, key, diags: list[Diagnostic]):
    if not items:
        return None
    first = items[0]
    for other in items[1:]:
        if key(other) != key(first):
            diags.append(error(
                SOURCES_DISAGREE,
                f"{display_name(other.file)} and {display_name(first.file)} disagree on the "
                f"server's {what}; rtc cannot tell which capture is current",
                Span.whole_file(other.file),
                hint=f"keep only the capture of this server's current {what} (rtc uses "
                     f"{display_name(first.file)})",
                related=[Related(Span.whole_file(first.file), f"the {what} rtc uses")],
            ))
    return first


def _check_positional_counts(tools: list[HccnToolOutput], diags: list[Diagnostic]) -> None:
    loops = [t for t in tools if t.positional and t.device_order]
    if len(loops) < 2:
        return
    longest = max(loops, key=lambda t: len(t.device_order))
    for t in loops:
        if len(t.device_order) < len(longest.device_order):
            diags.append(warning(
                DEVICE_ATTRIBUTION,
                f"{display_name(t.file)} lists {len(t.device_order)} devices but "
                f"{display_name(longest.file)} lists {len(longest.device_order)}; these files "
                "number devices only by position, so a device that printed nothing shifts every "
                "later device and its facts land on the wrong device",
                Span.whole_file(t.file),
                hint="re-capture with a header per device (for i in {0..7}; do echo \"device $i\"; "
                     "hccn_tool -i $i -link -g; done) or one file per device (link_0.txt ...)",
                related=[Related(Span.whole_file(longest.file), f"{len(longest.device_order)} devices")],
            ))
