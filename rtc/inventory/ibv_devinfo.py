"""Parser of ``ibv_devinfo`` output (libibverbs' ``ibv_devinfo`` / ``ibv_devinfo -v`` /
``-d DEV -i PORT``): the RDMA devices of a server, their ports, port state and link layer
(``InfiniBand`` or ``Ethernet``, i.e. RoCE) and, in verbose output, the GID table.

The format (rdma-core ``libibverbs/examples/devinfo.c``, ``print_hca_cap``): one block per
device starting ``hca_id:<TAB>mlx5_0`` at column 0, device attributes indented by one tab
(``transport:``, ``fw_ver:``, ``node_guid:``, ``phys_port_cnt:`` ...), then
``Device ports:`` and per port ``port:<TAB>1`` followed by ``state:  PORT_ACTIVE (4)``,
``link_layer:  Ethernet`` and, with ``-v``, ``GID[  0]:  fe80:...`` (newer releases append
``, RoCE v2``). Lines before the first ``hca_id:`` (a pasted prompt) are skipped; whitespace
may be tabs or spaces. -> :class:`IbvDevinfo`. Problems are ``RTC578`` diagnostics.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, error
from rtc.rules import rule

from ._common import read_text, split_lines, value_span

IBV_DEVINFO_UNREADABLE = rule("RTC578", "ibv-devinfo-unreadable", "error",
                              "ibv_devinfo output is missing or cut short.", """
    What: a capture with no `hca_id:` device block (e.g. `No IB devices found`), a device
    block without any `port:`, or a port without its `state:` or `link_layer:` line.
    Why: which RDMA ports are up and whether they run InfiniBand or RoCE (Ethernet) is what
    NCCL_IB_HCA and the server's NIC plan depend on; a cut capture hides a down port.
    Example: `ibv_devinfo > ibv.txt` interrupted after the first device's attributes.
    Fix: capture `ibv_devinfo -v` again on the server and keep the whole output.""")

RULES = (IBV_DEVINFO_UNREADABLE,)

_HCA = re.compile(r"^hca_id:\s*(\S+)")
_ATTR = re.compile(r"^\s+([A-Za-z_]+):\s*(.*?)\s*$")
_PORT = re.compile(r"^\s+port:\s*(\d+)\s*$")
_GID = re.compile(r"^\s+GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+)(?:,\s*(.+?))?\s*$")


@dataclass
class IbvPort:
    """One port: ``number``, ``state`` (``PORT_ACTIVE`` ..., the word without its code),
    ``link_layer`` (``InfiniBand`` / ``Ethernet``), ``gids`` (index -> GID text, ``-v``
    only) and the 1-based ``line`` of its ``port:`` line."""

    number: int
    line: int
    state: str | None = None
    link_layer: str | None = None
    gids: dict[int, str] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.state == "PORT_ACTIVE"


@dataclass
class IbvDevice:
    """One RDMA device (``hca_id``): its ``attrs`` as printed (``transport``, ``fw_ver``,
    ``node_guid`` ...), its ``ports`` and the 1-based ``line`` of ``hca_id:``."""

    name: str
    line: int
    attrs: dict[str, str] = field(default_factory=dict)
    ports: list[IbvPort] = field(default_factory=list)


@dataclass
class IbvDevinfo:
    """An ``ibv_devinfo`` capture: ``devices`` in print order and the 0-based ``lines``
    the reader took (so no other reader of the inventory reports them)."""

    file: str
    devices: list[IbvDevice] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)

    def ports(self) -> list[tuple[str, IbvPort]]:
        """``(device, port)`` for every port, in print order."""
        return [(d.name, p) for d in self.devices for p in d.ports]


def find_devinfo(lines: list[str]) -> int | None:
    """0-based index of the first ``hca_id:`` line followed by an ibv_devinfo attribute
    (``transport:``), or None."""
    for i, line in enumerate(lines):
        if _HCA.match(line) and any(l.strip().startswith("transport:") for l in lines[i + 1:i + 3]):
            return i
    return None


def parse_ibv_devinfo(text: str, file: str = "<ibv_devinfo>") -> tuple[IbvDevinfo | None, list[Diagnostic]]:
    """Parse an ``ibv_devinfo`` capture. Returns ``(None, [RTC578])`` when no device block
    is found; otherwise the devices and an RTC578 error per device without ports or port
    without ``state`` / ``link_layer`` (the capture was cut short)."""
    lines = split_lines(text)
    at = find_devinfo(lines)
    if at is None:
        return None, [error(IBV_DEVINFO_UNREADABLE, f"no `ibv_devinfo` device block in "
                            f"{os.path.basename(file)}: expected a line 'hca_id: <device>' "
                            "followed by 'transport:'", value_span(file, 1, 0, 1),
                            hint="run `ibv_devinfo -v > ibv_devinfo.txt` on the server; "
                                 "'No IB devices found' means the RDMA driver is not loaded")]
    out = IbvDevinfo(file)
    dev: IbvDevice | None = None
    port: IbvPort | None = None
    for i in range(at, len(lines)):
        line = lines[i]
        if m := _HCA.match(line):
            dev, port = IbvDevice(m.group(1), i + 1), None
            out.devices.append(dev)
        elif dev is None or not line.strip():
            continue
        elif m := _PORT.match(line):
            port = IbvPort(int(m.group(1)), i + 1)
            dev.ports.append(port)
        elif m := _GID.match(line):
            if port is not None:
                port.gids[int(m.group(1))] = m.group(2)
        elif (m := _ATTR.match(line)) and port is not None and m.group(1) in ("state", "link_layer"):
            setattr(port, m.group(1), m.group(2).split(" (")[0].strip())
        elif m and port is None:
            dev.attrs.setdefault(m.group(1), m.group(2))
        elif not line[:1].isspace():
            break      # the next prompt or text after the capture
        out.lines.add(i)
    return out, _cut_short(out)


def _cut_short(out: IbvDevinfo) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    for dev in out.devices:
        if not dev.ports:
            diags.append(error(
                IBV_DEVINFO_UNREADABLE, f"device {dev.name} in {os.path.basename(out.file)} "
                "lists no port: the capture was cut short, so its port state and link layer "
                "are unknown", value_span(out.file, dev.line, 0, len("hca_id:")),
                hint="capture `ibv_devinfo -v` again and keep the whole output", subject=dev.name))
        for p in dev.ports:
            missing = [k for k in ("state", "link_layer") if getattr(p, k) is None]
            if missing:
                diags.append(error(
                    IBV_DEVINFO_UNREADABLE, f"port {p.number} of {dev.name} has no "
                    f"{' and no '.join(missing)} line: the capture was cut short",
                    value_span(out.file, p.line, 0, 1),
                    hint="capture `ibv_devinfo -v` again and keep the whole output",
                    subject=f"{dev.name} port {p.number}"))
    return diags


def load_ibv_devinfo(path: str | os.PathLike, file: str | None = None) -> tuple[IbvDevinfo | None, list[Diagnostic]]:
    """Read and parse an ``ibv_devinfo`` capture file."""
    text, diags = read_text(path, file)
    if text is None:
        return None, diags
    res, more = parse_ibv_devinfo(text, file if file is not None else os.fspath(path))
    return res, diags + more
