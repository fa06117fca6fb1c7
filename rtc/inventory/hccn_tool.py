"""Parser for saved ``hccn_tool`` outputs (``/usr/local/Ascend/driver/tools/hccn_tool``).

Recognised output lines (case-insensitive, any amount of blank space, LF/CRLF/CR)::

    ipaddr:6.0.2.1                          hccn_tool -i N -ip -g        -> ip
    ipaddr:192.1.2.3                        hccn_tool -i N -vnic -g      -> vnic_ip (A3 vNIC;
                                            also a file named vnic*.txt without command lines)
    netmask:255.255.255.254                                              -> netmask, prefix_len
    ipv6_address:fd00::1                    hccn_tool -i N -ip -inet6 -g -> ipv6
    prefix_length:64                                                     -> ipv6_prefix_len
    link status: UP                         hccn_tool -i N -link -g      -> link ("UP"/"DOWN")
    net health status: Success              hccn_tool -i N -net_health -g -> net_health
    default gateway:6.0.2.0, Iface:eth0     hccn_tool -i N -gateway -g   -> gateway, gateway_iface
    netdetect address: 6.0.2.0              hccn_tool -i N -netdetect -g -> netdetect
    Ifname: 400GE1/4/1:1                    hccn_tool -i N -lldp -g      -> lldp_ifname
    device 0 PING 6.0.2.1                   hccn_tool -i N -ping -g address X -> a PingResult
    recv seq=0,time=0.042000ms
    3 packets transmitted, 3 received, 0.00% packet loss

A full ``-lldp -g`` dump (``Chassis ID TLV`` / ``Port ID TLV`` / ``System Name TLV`` ...
sections with indented bodies) also gives ``lldp_chassis_id`` and ``lldp_system_name``.

Which device a line belongs to, strongest first:

1. a command echo or prompt line in the capture, ``hccn_tool -i 3 -ip -g`` (also
   ``/usr/local/Ascend/driver/tools/hccn_tool ...``, ``$ ...``, ``+ ...`` from ``set -x``), or a
   header a loop printed (``device 3``, ``== npu 3 ==``, ``[3]``, a bare ``3``);
2. the line itself: ``Iface:eth3`` in ``-gateway`` output, ``device 3 PING`` in ``-ping``;
3. the ``device`` the caller passes, or the one in the file name (``ip_3.txt``,
   ``dev3_link.txt``, ``link-npu3.txt``; see :func:`device_from_filename`);
4. otherwise the position in a loop's concatenated output: the first ``ipaddr:`` is device
   ``first_device`` (0), the next one device 1, and so on. Each command's lines are counted on
   their own, so a ``netmask:`` line joins the ``ipaddr:`` before it and ``-ip -g`` output with
   or without ``netmask:`` lines both work. A device that printed *nothing* cannot be seen this
   way and shifts every later device; :mod:`rtc.inventory.facts` warns when loop files
   disagree on the device count, and so does a gateway ``Iface:ethN`` that disagrees with its
   position.

Sections of a mixed capture that are not parsed here (``npu-smi``, ``lspci``, ``hccn_tool
-stat`` ...) are skipped; so are lines before the first command line of such a capture.

Rule ids used here:

* ``RTC480`` the file cannot be read / is binary (see :func:`rtc.inventory._common.read_text`).
* ``RTC483`` (error for addresses and numbers, warning for unknown status words) a value of the
  wrong shape, e.g. ``ipaddr:6.0.2.300``, ``link status: FLAPPING``. Why: the fact cannot be
  used or checked. Fix: re-capture, or correct the device's configuration.
* ``RTC484`` (warning) a line that is no known hccn_tool output. Why: it may be a format rtc
  does not understand, so a fact may be missing. Fix: delete noise from the capture, or
  capture the raw command output.
* ``RTC485`` (warning) device attribution problems: the line's own device (``Iface:eth5``,
  ``device 5 PING``) disagrees with its header or file name, a device is given the same fact
  twice, a gateway line's interface disagrees with its position in a loop's output. Why: facts
  may be attached to the wrong device. Fix: capture one file per device or print a header per
  device in the loop.
* ``RTC489`` (warning) a device with an empty value (``ipaddr:`` with nothing after it) or a
  command that printed nothing (``hccn_tool -i 2 -ip -g`` followed by no output), or an empty
  file. Why: the device lacks that setting (no NIC address for the rank table). Fix: configure
  it, e.g. ``hccn_tool -i 2 -ip -s address <ip> netmask <mask>``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from rtc.diagnostics import Diagnostic, Related, Span, error, note, warning

from ._common import (Fact, ascii_int, display_name, parse_ip, parse_netmask, read_text, short_text,
                      split_lines, value_span)
from rtc.inventory.rules import BAD_VALUE, DEVICE_ATTRIBUTION, MISSING_VALUE, UNKNOWN_LINE

#: ``net health status`` values (MindCluster treats the last four as faults).
NET_HEALTH_VALUES = ("Success", "Init", "Fault", "Socket failed", "Receive timeout",
                     "Unreachable", "Detect ip set")
LINK_VALUES = ("UP", "DOWN")

#: hccn_tool command flag -> what it reports; these sections are parsed.
PARSED_COMMANDS = ("-ip", "-link", "-net_health", "-gateway", "-netdetect", "-lldp", "-ping",
                   "-vnic")

# field -> the group its lines are counted in for positional device numbering, and the
# command label used in Fact.source.
_GROUP = {
    "ip": "ip", "netmask": "ip", "vnic_ip": "vnic", "vnic_netmask": "vnic",
    "ipv6": "ipv6", "ipv6_prefix_len": "ipv6",
    "link": "link", "net_health": "net_health",
    "gateway": "gateway", "netdetect": "netdetect",
    "lldp_chassis_id": "lldp", "lldp_ifname": "lldp", "lldp_system_name": "lldp",
}
_COMMAND_LABEL = {
    "ip": "-ip -g", "ipv6": "-ip -inet6 -g", "link": "-link -g", "net_health": "-net_health -g",
    "gateway": "-gateway -g", "netdetect": "-netdetect -g", "lldp": "-lldp -g",
    "vnic": "-vnic -g",
}
_FIX = {
    "ip": "hccn_tool -i {d} -ip -s address <ip> netmask <mask>",
    "netmask": "hccn_tool -i {d} -ip -s address <ip> netmask <mask>",
    "ipv6": "hccn_tool -i {d} -ip -inet6 -s address <ipv6> prefixlen <n>",
    "ipv6_prefix_len": "hccn_tool -i {d} -ip -inet6 -s address <ipv6> prefixlen <n>",
    "gateway": "hccn_tool -i {d} -gateway -s address <gateway ip>",
    "netdetect": "hccn_tool -i {d} -netdetect -s address <detect ip, usually the gateway>",
}
_MAX_UNRECOGNISED = 10

# -- line patterns ---------------------------------------------------------------------------
_R = re.IGNORECASE
_IPADDR = re.compile(r"^\s*ipaddr\s*:\s*(?P<v>.*?)\s*$", _R)
_NETMASK = re.compile(r"^\s*netmask\s*:\s*(?P<v>.*?)\s*$", _R)
_IPV6 = re.compile(r"^\s*ipv6_addr(?:ess)?\s*:\s*(?P<v>.*?)\s*$", _R)
_PREFIX = re.compile(r"^\s*prefix_?len(?:gth)?\s*:\s*(?P<v>.*?)\s*$", _R)
_LINK = re.compile(r"^\s*link\s+status\s*:\s*(?P<v>.*?)\s*$", _R)
_HEALTH = re.compile(r"^\s*net\s+health\s+status\s*:\s*(?P<v>.*?)\s*$", _R)
_GATEWAY = re.compile(r"^\s*default\s+gateway\s*:\s*(?P<v>[^,\s]*)\s*(?:,\s*iface\s*:\s*(?P<if>\S*))?\s*$", _R)
_NETDETECT = re.compile(r"^\s*netdetect\s+address\s*:\s*(?P<v>.*?)\s*$", _R)
_IFNAME = re.compile(r"^\s*ifname\s*:\s*(?P<v>.*?)\s*$", _R)
# numbers in output lines: 1 to 20 ASCII digits (\d would also take a fullwidth '８', and a
# 5,000-digit number would reach int()); a line with anything else is not known output
_N = r"[0-9]{1,20}"
_PING = re.compile(rf"^\s*device\s+(?P<d>{_N})\s+PING\s+(?P<v>\S+)\s*$", _R)
_RECV = re.compile(rf"^\s*recv\s+seq\s*=\s*(?P<seq>{_N})\s*,\s*time\s*=\s*(?P<t>{_N}(?:\.{_N})?)\s*ms\s*$", _R)
_SUMMARY = re.compile(rf"^\s*(?P<tx>{_N})\s+packets?\s+transmitted\s*,\s*(?P<rx>{_N})\s+received\s*,"
                      rf"\s*(?P<loss>{_N}(?:\.{_N})?)\s*%\s*packet\s+loss\s*$", _R)
_TLV = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z0-9 ./-]*?)\s+TLV\s*$", _R)
_IFACE_NUM = re.compile(r"([0-9]+)$")

# command lines: a prompt ("$ ", "# ", "+ " from set -x, "[root@h ~]# ") or a path/tool name.
_PROMPT = r"^\s*(?:\[[^\]]*\]\s*[#$]\s*|[$#+>]\s+)?"
_TOOL_LINE = re.compile(_PROMPT + r"(?P<cmd>(?:\S*/)?(?P<tool>hccn_tool|npu-smi|lspci|ifconfig|ethtool|"
                        r"dmesg)(?:\s.*)?)$")
# any other command after an explicit shell prompt (not "# ", which may be a comment header)
_PROMPTED = re.compile(r"^\s*(?:\[[^\]]*\]\s*[#$]|\$|\+)\s+(?P<cmd>[A-Za-z_./][^\s]*(?:\s.*)?)$")
_LOOP_LINE = re.compile(_PROMPT + r"(?P<cmd>(?:for|while)\s.*\bhccn_tool\b.*)$")
_KEYWORD = r"(?:(?:device|dev|npu|card|chip|phy)(?:[-_ ]?id)?|id|i)"
_DEVICE_HEADER = re.compile(
    r"^[\s=#*\-\[<>(:]*(?:" + _KEYWORD + r"\s*[#:=-]?\s*)?(?P<d>" + _N + r")[\s=#*\-\]>):]*$", _R)


def device_from_filename(name: str) -> int | None:
    """The device a per-device capture is named after: ``ip_3.txt`` -> 3, ``dev3_link.txt``
    -> 3, ``link-npu3.log`` -> 3, ``3_ip.txt`` -> 3. None for loop files (``ip.txt``) and for
    names whose digits are something else (``ping_6.0.2.1.txt``, ``npu_smi_910b.txt``)."""
    base = os.path.basename(name)
    stem = re.sub(r"\.(txt|log|out)$", "", base, flags=re.I)
    m = re.search(r"(?:^|[^A-Za-z0-9])(?:dev|device|npu|card|chip)[-_]?([0-9]+)(?=$|[-_])", stem, re.I) \
        or re.fullmatch(r"[A-Za-z][A-Za-z_-]*?[-_]([0-9]+)", stem) \
        or re.fullmatch(r"([0-9]+)[-_][A-Za-z][A-Za-z_-]*", stem)
    return ascii_int(m.group(1)) if m else None     # None for a 5,000-digit "device"


@dataclass(frozen=True)
class PingReply:
    seq: int
    time_ms: float
    span: Span


@dataclass
class PingResult:
    """One ``hccn_tool -i N -ping -g address X`` run. ``target`` is a Fact holding the
    pinged address; the counters are None when the summary line is missing."""

    device_id: int
    target: Fact
    replies: list[PingReply] = field(default_factory=list)
    transmitted: int | None = None
    received: int | None = None
    loss_percent: float | None = None
    summary_span: Span | None = None

    @property
    def ok(self) -> bool:
        """Every packet came back (judged from the summary, else from the replies)."""
        if self.transmitted is not None and self.received is not None:
            return self.transmitted > 0 and self.received == self.transmitted
        return bool(self.replies)


@dataclass
class HccnToolOutput:
    """What one capture file says. ``facts[device][field]`` (fields: ``ip``, ``netmask``,
    ``prefix_len``, ``ipv6``, ``ipv6_prefix_len``, ``link``, ``net_health``, ``gateway``,
    ``gateway_iface``, ``netdetect``, ``lldp_ifname``, ``lldp_system_name``,
    ``lldp_chassis_id``). ``positional`` is True when some device numbers came only from the
    order of a loop's output; ``device_order`` lists devices as they first appeared."""

    file: str
    facts: dict[int, dict[str, Fact]] = field(default_factory=dict)
    pings: list[PingResult] = field(default_factory=list)
    positional: bool = False
    device_order: list[int] = field(default_factory=list)
    #: devices whose output was empty (``ipaddr:`` blank or a section with no lines), by field
    empty: dict[int, set[str]] = field(default_factory=dict)

    def get(self, device: int, name: str) -> Fact | None:
        return self.facts.get(device, {}).get(name)

    @property
    def devices(self) -> list[int]:
        return sorted(set(self.facts) | set(self.empty) | {p.device_id for p in self.pings})


def command_line_info(line: str) -> tuple[str, int | None, str, bool] | None:
    """If ``line`` is a command echo/prompt, return ``(tool, device, flag, is_loop)``:
    ``tool`` is ``hccn_tool``/``npu-smi``/..., ``device`` the ``-i N`` value (None when absent
    or a shell variable), ``flag`` the command flag (``-ip``, ``-link_stat`` ...; ``-ip -inet6``
    for IPv6), ``is_loop`` for ``for i in {0..7}; do hccn_tool ...; done`` lines."""
    m = _LOOP_LINE.match(line)
    if m:
        return "hccn_tool", None, _flag_of(m.group("cmd")), True
    m = _TOOL_LINE.match(line)
    if not m:
        pm = _PROMPTED.match(line)
        if pm:
            return os.path.basename(pm.group("cmd").split()[0]), None, "", False
        return None
    tool = m.group("tool")
    if tool != "hccn_tool":
        return tool, None, "", False
    cmd = m.group("cmd")
    dm = re.search(r"\s-i\s+(\S+)", cmd)
    device = ascii_int(dm.group(1)) if dm else None
    return tool, device, _flag_of(cmd), False


def _flag_of(cmd: str) -> str:
    after = cmd.split("hccn_tool", 1)[-1].split("|", 1)[0].split(";", 1)[0]
    toks = after.split()
    flags = [t for i, t in enumerate(toks) if t.startswith("-") and t not in ("-i", "-g", "-s")
             and not (i > 0 and toks[i - 1] == "-i")]
    if not flags:
        return ""
    if flags[0] == "-ip" and "-inet6" in flags:
        return "-ip -inet6"
    return flags[0]


def _loop_start(cmd: str) -> int | None:
    m = re.search(r"\{([0-9]+)\.\.[0-9]+\}", cmd) or re.search(r"\bseq\s+([0-9]+)\s+[0-9]+", cmd) \
        or re.search(r"\bin\s+([0-9]+)\b", cmd)
    return ascii_int(m.group(1)) if m else None


# section flag -> the field whose absence an empty section means
_SECTION_FIELD = {"-ip": "ip", "-ip -inet6": "ipv6", "-vnic": "vnic_ip", "-link": "link",
                  "-net_health": "net_health",
                  "-gateway": "gateway", "-netdetect": "netdetect", "-lldp": "lldp_ifname"}
_WHY_MISSING = {
    "ip": "the rank table needs a device_ip for every device that takes part",
    "ipv6": "the rank table needs a device_ip for every device that takes part",
}


@dataclass
class _Section:
    tool: str
    device: int | None
    flag: str
    span: Span
    parsed: bool
    records: int = 0


def _line_span(file: str, no: int, line: str) -> Span:
    return Span(file, no, len(line) - len(line.lstrip()) + 1, no, len(line.rstrip()) + 1)


# -- value lines ---------------------------------------------------------------------------
#: what a value reader returns: the facts to keep (field -> value) and, when the value has the
#: wrong shape, why (the RTC483 message tail)
_Reading = tuple[dict[str, object], str | None]


def _read_ipaddr(raw: str) -> _Reading:
    """``ipaddr:`` must be an IPv4 address (it becomes the rank table's device_ip)."""
    ip, why = parse_ip(raw)
    if ip is None or ":" in ip:
        return {}, (f"is not an IPv4 address ({why or 'IPv6 in -ip -g'}); "
                    "it cannot be used as the rank table's device_ip")
    return {"ip": ip}, None


def _read_netmask(raw: str) -> _Reading:
    """``netmask:`` gives the mask and the prefix length it stands for."""
    mask, plen, why = parse_netmask(raw)
    if mask is None:
        return {}, f"is not a netmask ({why}); the device's subnet cannot be worked out"
    return {"netmask": mask, "prefix_len": plen}, None


def _read_ipv6(raw: str) -> _Reading:
    """``ipv6_address:`` must be an IPv6 address."""
    ip, why = parse_ip(raw)
    if ip is None or ":" not in ip:
        return {}, f"is not an IPv6 address ({why or 'IPv4'})"
    return {"ipv6": ip}, None


def _read_prefix_length(raw: str) -> _Reading:
    """``prefix_length:`` must be 0..128."""
    value = ascii_int(raw)
    if value is None or value > 128:
        return {}, "is not a prefix length (0..128, ASCII digits)"
    return {"ipv6_prefix_len": value}, None


def _read_link(raw: str) -> _Reading:
    """``link status:`` is UP or DOWN (any case); another word is kept as reported."""
    value = raw.upper()
    if value not in LINK_VALUES:
        return {"link": raw}, ("is neither UP nor DOWN; rtc keeps it as reported but cannot "
                               "tell whether the port is usable")
    return {"link": value}, None


def _read_net_health(raw: str) -> _Reading:
    """``net health status:`` is one of :data:`NET_HEALTH_VALUES` (any case and spacing);
    another word is kept as reported."""
    canon = {v.lower(): v for v in NET_HEALTH_VALUES}.get(" ".join(raw.split()).lower())
    if canon is None:
        return {"net_health": raw}, ("is not one of " + ", ".join(NET_HEALTH_VALUES)
                                     + "; rtc keeps it as reported but cannot judge it")
    return {"net_health": canon}, None


def _address_reader(fld: str) -> Callable[[str], _Reading]:
    """A reader that keeps any IPv4/IPv6 address as ``fld`` (gateway, net-detect address)."""
    def read(raw: str) -> _Reading:
        ip, why = parse_ip(raw)
        if ip is None:
            return {}, f"is not an IP address ({why})"
        return {fld: ip}, None
    return read


def _read_ifname(raw: str) -> _Reading:
    """``Ifname:`` is kept as printed (the switch port the LLDP neighbour reports)."""
    return {"lldp_ifname": raw}, None


@dataclass(frozen=True)
class _ValueLine:
    """One kind of ``name: value`` output line. ``fld`` is the fact it sets (and decides the
    device numbering group and the command in Fact.source); ``label`` names the line in
    messages; ``missing`` says what an empty value lacks (RTC489); ``read`` checks the value;
    ``soft``: a value of the wrong shape is kept with a warning instead of dropped with an
    error. Calling it handles a matched line, like the other handlers of :data:`_RECORDS`."""

    fld: str
    label: str
    missing: str
    read: Callable[[str], _Reading]
    soft: bool = False

    def __call__(self, parser: _Parser, m: re.Match, no: int) -> bool:
        """Handle a line this kind's pattern matched (see :meth:`_Parser.value_line`)."""
        return parser.value_line(self, m, no)


_GATEWAY_LINE = _ValueLine("gateway", "default gateway", "default gateway", _address_reader("gateway"))
_IFNAME_LINE = _ValueLine("lldp_ifname", "Ifname", "LLDP neighbour port (Ifname)", _read_ifname)


def _read_vnic(raw: str) -> _Reading:
    facts, why = _read_ipaddr(raw)
    return {"vnic_ip": facts["ip"]} if facts else facts, why


def _read_vnic_netmask(raw: str) -> _Reading:
    facts, why = _read_netmask(raw)
    return ({"vnic_netmask": facts["netmask"]} if facts and "netmask" in facts else {}), why


#: ``-ip -g`` line kinds -> their ``-vnic -g`` counterparts.
_VNIC_LINES = {
    "ip": _ValueLine("vnic_ip", "ipaddr", "vNIC IPv4 address ('ipaddr:' is empty)", _read_vnic),
    "netmask": _ValueLine("vnic_netmask", "netmask", "vNIC netmask", _read_vnic_netmask),
}


class _Parser:
    vnic: bool = False  # the whole file is `-vnic -g` output (named so, without commands)

    def __init__(self, file: str, device: int | None, first_device: int):
        self.file = file
        self.name = display_name(file)
        self.default_device = device
        self.first = first_device
        self.out = HccnToolOutput(file)
        self.diags: list[Diagnostic] = []
        self.section: _Section | None = None
        self.header_device: int | None = None      # from a command line or a printed header
        self.header_span: Span | None = None
        self.block: tuple[int, Span] | None = None  # an open printed "device N" header
        self.block_records = 0
        self.cursor: dict[str, int] = {}           # group -> current positional device
        self.gateway_count = 0                     # gateway lines seen since the loop began
        self.seen: dict[tuple[int, str], Span] = {}
        self.shift_warned = False
        self.ping: PingResult | None = None
        self.lldp_tlv: str | None = None           # inside a full LLDP dump
        self.lldp_device: int | None = None
        self.unrecognised = 0

    # -- helpers -------------------------------------------------------------------------
    def source(self, group: str, device: int, line: int) -> str:
        return f"hccn_tool -i {device} {_COMMAND_LABEL.get(group, group)} ({self.name}:{line})"

    def _note_device(self, device: int) -> None:
        if device not in self.out.device_order:
            self.out.device_order.append(device)

    def _counted(self) -> None:
        if self.section is not None:
            self.section.records += 1
        self.block_records += 1

    def resolve(self, fld: str, own: int | None, span: Span, what: str, *, unique: bool = True) -> int:
        """Pick the device for a record of ``fld``; ``own`` is the device the line names.
        Strongest first: the header, the line itself, the file's device, the position."""
        group = _GROUP.get(fld, fld)
        if self.header_device is not None:
            device = self.header_device
            self._check_against_header(own, span, what)
        elif own is not None:
            device = own
            self._check_named_device(fld, own, span, what)
            self.cursor[group] = own
        elif self.default_device is not None:
            device = self.default_device
        else:
            device = self._next_position(fld, group)
            unique = False
        if fld == "gateway":
            self.gateway_count += 1
        if unique:
            self._check_repeat(device, fld, span, what)
        self.seen[(device, fld)] = span
        self._note_device(device)
        self._counted()
        return device

    def _check_against_header(self, own: int | None, span: Span, what: str) -> None:
        """Warn when the line names another device than the header it follows."""
        device = self.header_device
        if own is None or own == device:
            return
        self.diags.append(warning(
            DEVICE_ATTRIBUTION,
            f"{what} names device {own} but follows the header for device {device} "
            f"({self.header_span}); the fact may belong to another device",
            span,
            hint="check which device this output came from; rtc keeps it on the header's device",
            related=[Related(self.header_span, "device header")] if self.header_span else (),
            subject=f"device {device}",
        ))

    def _check_named_device(self, fld: str, own: int, span: Span, what: str) -> None:
        """Warn when the device a headerless line names disagrees with the file's device, or
        (for gateway lines of a loop) with the line's position in the loop's output."""
        if self.default_device is not None and own != self.default_device:
            self.diags.append(warning(
                DEVICE_ATTRIBUTION,
                f"{what} names device {own} but {self.name} is for device "
                f"{self.default_device} (by its name or the caller); rtc trusts the output",
                span,
                hint="rename the file after the device it holds, or re-capture it",
                subject=f"device {own}",
            ))
        elif self.default_device is None and fld == "gateway":
            self._check_loop_position(own, span, what)

    def _check_loop_position(self, own: int, span: Span, what: str) -> None:
        """Warn (once) when a loop's gateway line names another device than its position."""
        expected = self.first + self.gateway_count
        if own == expected or self.shift_warned:
            return
        self.shift_warned = True
        self.diags.append(warning(
            DEVICE_ATTRIBUTION,
            f"{what} is entry {self.gateway_count + 1} of a loop's output but names "
            f"device {own}, not {expected}: some device printed nothing, so loop files "
            "that number devices by position may be shifted",
            span,
            hint="capture with a header per device (for i in {0..7}; do echo \"device $i\"; "
                 "hccn_tool -i $i -ip -g; done) or one file per device (ip_0.txt ...)",
            subject=f"device {own}",
        ))

    def _next_position(self, fld: str, group: str) -> int:
        """The device a line without any device clue gets from its place in a loop's
        output: the group's current device, or the next one once it already has ``fld``."""
        cur = self.cursor.get(group)
        if cur is None:
            cur = self.first
        elif (cur, fld) in self.seen:
            cur += 1
        self.cursor[group] = cur
        self.out.positional = True
        return cur

    def _check_repeat(self, device: int, fld: str, span: Span, what: str) -> None:
        """Warn when ``device`` already has a value for ``fld`` (the later one is used)."""
        prev = self.seen.get((device, fld))
        if prev is None:
            return
        self.diags.append(warning(
            DEVICE_ATTRIBUTION,
            f"device {device} gets a second {what} (the first is at line {prev.line}); "
            "rtc uses this later one",
            span,
            hint="keep one capture per device and command, or print a header per device",
            related=[Related(prev, "first value")],
            subject=f"device {device}",
        ))

    def put(self, device: int, fld: str, fact: Fact) -> None:
        self.out.facts.setdefault(device, {})[fld] = fact

    def empty(self, device: int, fld: str, span: Span, label: str) -> None:
        self.out.empty.setdefault(device, set()).add(fld)
        fix = _FIX.get(fld, "").format(d=device)
        why = _WHY_MISSING.get(fld, "rtc cannot check this setting for it")
        self.diags.append(warning(
            MISSING_VALUE,
            f"device {device} reports no {label} in {self.name}; {why}",
            span,
            hint=(f"configure it ({fix}) and re-capture" if fix else "check the device and re-capture")
            + ", or leave the device out of the cluster description",
            subject=f"device {device}",
        ))

    def bad_value(self, device: int, what: str, raw: str, why: str, span: Span, *, soft: bool = False) -> None:
        make = warning if soft else error
        self.diags.append(make(
            BAD_VALUE,
            f"device {device}: {what} '{short_text(raw, 60)}' {why}",
            span,
            hint="re-capture the output; if the device really reports this, fix its configuration "
                 "with hccn_tool -i N ... -s",
            subject=f"device {device}",
        ))

    # -- sections and printed headers ----------------------------------------------------
    def close_section(self) -> None:
        s = self.section
        self.section = None
        if s is None or not s.parsed or s.records or s.device is None:
            return
        fld = _SECTION_FIELD.get(s.flag)
        if fld is None:
            return
        self.out.empty.setdefault(s.device, set()).add(fld)
        self._note_device(s.device)
        fix = _FIX.get(fld, "")
        why = _WHY_MISSING.get(fld, "rtc cannot check this setting for it")
        self.diags.append(warning(
            MISSING_VALUE,
            f"'hccn_tool -i {s.device} {s.flag} -g' printed nothing, so device {s.device} has no "
            f"{fld.replace('_', ' ')} in this capture (not configured, or no such device); {why}",
            s.span,
            hint=(f"configure it ({fix.format(d=s.device)}) and re-capture" if fix
                  else "check the device with npu-smi info and re-capture")
            + ", or leave the device out of the cluster description",
            subject=f"device {s.device}",
        ))

    def close_block(self) -> None:
        b = self.block
        self.block = None
        if b is None or self.block_records:
            return
        device, span = b
        self._note_device(device)
        self.diags.append(warning(
            MISSING_VALUE,
            f"device {device} printed nothing after its header in {self.name}; its facts are "
            "missing from this capture",
            span,
            hint="check that the command works for this device (hccn_tool -i N ... -g) and re-capture",
            subject=f"device {device}",
        ))

    def _reset_state(self) -> None:
        self.ping = None
        self.lldp_tlv = None
        self.lldp_device = None
        self.block_records = 0

    def start_command(self, info: tuple[str, int | None, str, bool], no: int, line: str) -> None:
        tool, device, flag, is_loop = info
        self.close_block()
        self.close_section()
        self._reset_state()
        span = _line_span(self.file, no, line)
        parsed = tool == "hccn_tool" and flag.split(" ")[0] in PARSED_COMMANDS
        self.section = _Section(tool, device, flag, span, parsed)
        self.header_device = device if tool == "hccn_tool" else None
        self.header_span = span if self.header_device is not None else None
        if tool == "hccn_tool" and device is None:
            if not is_loop:
                self._check_device_arg(line, no)
            # a loop (or an `-i $i` echo): positions count from the loop's start again
            self.cursor.clear()
            self.gateway_count = 0
            start = _loop_start(line) if is_loop else None
            if start is not None:
                self.first = start

    def _check_device_arg(self, line: str, no: int) -> None:
        """RTC483 for ``hccn_tool -i X`` whose X has digits but is not a device number (a
        superscript '²', a fullwidth '８', 5,000 digits); the output after it is then numbered
        by position, as for ``-i $i``. Shell variables (``$i``) and words pass silently."""
        dm = re.search(r"\s-i\s+(\S+)", line)
        raw = dm.group(1) if dm else ""
        too_long = raw.isascii() and raw.isdigit()      # else command_line_info had read it
        if not too_long and not any(ch.isdigit() and not ch.isascii() for ch in raw):
            return
        self.diags.append(error(
            BAD_VALUE,
            f"'hccn_tool -i {short_text(raw)}' in {self.name}: '{short_text(raw)}' is not a "
            "device number (ASCII digits 0-9, at most 20); rtc numbers the output after it by "
            "position",
            value_span(self.file, no, dm.start(1), len(raw)),
            hint="re-capture with the real device number, e.g. hccn_tool -i 3 -ip -g",
        ))

    def start_block(self, device: int, no: int, line: str) -> None:
        self.close_block()
        self._reset_state()
        span = _line_span(self.file, no, line)
        self.header_device = device
        self.header_span = span
        self.block = (device, span)

    # -- records -------------------------------------------------------------------------
    def record(self, line: str, no: int) -> bool:
        """Handle one output line; False when it is not a known hccn_tool line. The patterns
        of :data:`_RECORDS` are tried in order; a handler may pass a line on (False)."""
        for pattern, handler in _RECORDS:
            m = pattern.match(line)
            if m and handler(self, m, no):
                return True
        return False

    def value_line(self, kind: _ValueLine, m: re.Match, no: int) -> bool:
        """A ``name: value`` line whose device comes from the header, file or position.
        In ``-vnic -g`` output (or a vnic file) ``ipaddr:`` / ``netmask:`` are the vNIC's."""
        if kind.fld in _VNIC_LINES and (self.vnic or (self.section is not None
                                                      and self.section.flag == "-vnic")):
            kind = _VNIC_LINES[kind.fld]
        raw = m.group("v")
        span = value_span(self.file, no, m.start("v"), len(raw))
        device = self.resolve(kind.fld, None, span, f"{kind.label} line {no}")
        self.store(kind, device, raw, span, no)
        return True

    def store(self, kind: _ValueLine, device: int, raw: str, span: Span, no: int) -> None:
        """Check the value ``raw`` of a ``kind`` line and keep the facts it gives ``device``
        (RTC489 when it is empty, RTC483 when it has the wrong shape)."""
        if not raw:
            self.empty(device, kind.fld, span, kind.missing)
            return
        facts, why = kind.read(raw)
        if why is not None:
            self.bad_value(device, kind.label, raw, why, span, soft=kind.soft)
            if not kind.soft:
                return
        src = self.source(_GROUP[kind.fld], device, no)
        for fld, value in facts.items():
            self.put(device, fld, Fact(value, span, src))

    def gateway(self, m: re.Match, no: int) -> bool:
        """``default gateway:A, Iface:ethN`` of ``-gateway -g``; ``ethN`` names the device."""
        raw = m.group("v")
        span = value_span(self.file, no, m.start("v"), len(raw))
        iface = m.group("if")
        own = None
        if iface:
            im = _IFACE_NUM.search(iface)
            own = ascii_int(im.group(1)) if im else None
        device = self.resolve("gateway", own, span, f"gateway line {no} (Iface:{iface})" if iface else f"gateway line {no}")
        if iface:
            self.put(device, "gateway_iface", Fact(iface, value_span(self.file, no, m.start("if"), len(iface)),
                                                   self.source("gateway", device, no)))
        self.store(_GATEWAY_LINE, device, raw, span, no)
        return True

    def ifname(self, m: re.Match, no: int) -> bool:
        """``Ifname:`` of ``-lldp -g``: in a full LLDP dump (Port ID TLV) it belongs to the
        dump's device, otherwise it is a value line of its own."""
        if self.lldp_tlv is None or self.lldp_device is None:
            return self.value_line(_IFNAME_LINE, m, no)
        raw = m.group("v")
        span = value_span(self.file, no, m.start("v"), len(raw))
        self.seen[(self.lldp_device, "lldp_ifname")] = span
        self.put(self.lldp_device, "lldp_ifname", Fact(raw, span, self.source("lldp", self.lldp_device, no)))
        return True

    def ping_start(self, m: re.Match, no: int) -> bool:
        """``device N PING X`` opens the result of one ``-ping`` run."""
        own = int(m.group("d"))
        raw = m.group("v")
        span = value_span(self.file, no, m.start("v"), len(raw))
        device = self.resolve("ping", own, span, f"ping line {no}", unique=False)
        target, _ = parse_ip(raw)
        cmd = f"-ping -g address {target or raw}"
        self.ping = PingResult(device, Fact(target or raw, span, f"hccn_tool -i {device} {cmd} ({self.name}:{no})"))
        self.out.pings.append(self.ping)
        return True

    def ping_reply(self, m: re.Match, no: int) -> bool:
        """``recv seq=S,time=Tms``: one reply of the open ping run (none open: not ours)."""
        if self.ping is None:
            return False
        self.ping.replies.append(PingReply(int(m.group("seq")), float(m.group("t")),
                                           value_span(self.file, no, m.start(), m.end() - m.start())))
        return True

    def ping_summary(self, m: re.Match, no: int) -> bool:
        """``T packets transmitted, R received, L% packet loss`` closes the open ping run."""
        if self.ping is None:
            return False
        self.ping.transmitted = int(m.group("tx"))
        self.ping.received = int(m.group("rx"))
        self.ping.loss_percent = float(m.group("loss"))
        self.ping.summary_span = value_span(self.file, no, m.start("tx"), m.end("loss") - m.start("tx") + 1)
        return True

    def lldp(self, line: str, no: int) -> bool:
        """Full ``-lldp -g`` dump handling; True when the line was consumed."""
        tm = _TLV.match(line)
        if tm:
            name = " ".join(tm.group("name").split()).lower()
            if name == "chassis id":
                span = value_span(self.file, no, tm.start("name"), len(tm.group("name")))
                self.lldp_device = self.resolve("lldp_chassis_id", None, span, f"LLDP dump at line {no}")
                self.lldp_tlv = name
                return True
            if self.lldp_tlv is not None or self.lldp_device is not None:
                if name.startswith("end of lldpdu"):
                    self.lldp_tlv = None
                    self.lldp_device = None
                else:
                    self.lldp_tlv = name
                return True
            return False
        if self.lldp_tlv is None:
            return False
        if not line[:1].isspace():
            # a non-indented line ends the dump
            self.lldp_tlv = None
            self.lldp_device = None
            return False
        body = line.strip()
        if not body:
            return True
        dev = self.lldp_device
        start = len(line) - len(line.lstrip())
        if self.lldp_tlv == "chassis id" and dev is not None:
            value = body.split(":", 1)[1].strip() if ":" in body and body.split(":", 1)[0].isalpha() else body
            off = line.index(value) if value else start
            self.put(dev, "lldp_chassis_id", Fact(value, value_span(self.file, no, off, len(value)),
                                                  self.source("lldp", dev, no)))
            return True
        if self.lldp_tlv == "system name" and dev is not None:
            self.put(dev, "lldp_system_name", Fact(body, value_span(self.file, no, start, len(body)),
                                                   self.source("lldp", dev, no)))
            return True
        if self.lldp_tlv == "port id" and _IFNAME.match(line):
            return False   # handled by record()
        return True        # other TLV bodies are not needed

    def unknown(self, line: str, no: int) -> None:
        self.unrecognised += 1
        if self.unrecognised > _MAX_UNRECOGNISED:
            return
        lead = len(line) - len(line.lstrip())
        self.diags.append(warning(
            UNKNOWN_LINE,
            f"line {no} of {self.name} is not hccn_tool output rtc knows: '{line.strip()[:80]}'; "
            "a fact it holds, if any, is not used",
            Span(self.file, no, lead + 1, no, len(line.rstrip()) + 1),
            hint="save the raw output of hccn_tool -i N <-ip|-link|-net_health|-gateway|-netdetect|"
                 "-lldp|-ping> -g (one file per device or one loop per file) without other text",
        ))

    # -- main loop ----------------------------------------------------------------------
    def run(self, lines: list[str], ignore: set[int]) -> None:
        headed = any(command_line_info(l) is not None for l in lines)
        for no, line in enumerate(lines, start=1):
            if no in ignore or not line.strip():
                continue
            if self.lldp_tlv is None or not line[:1].isspace():
                info = command_line_info(line)
                if info is not None:
                    self.start_command(info, no, line)
                    continue
            if headed and (self.section is None or not self.section.parsed):
                continue        # npu-smi / lspci / -stat sections, or text before the first command
            if self.lldp(line, no):
                continue
            if self.lldp_tlv is None:
                dm = _DEVICE_HEADER.match(line)
                if dm:
                    self.start_block(int(dm.group("d")), no, line)
                    continue
            if self.record(line, no):
                continue
            self.unknown(line, no)
        self.close_block()
        self.close_section()
        if self.unrecognised > _MAX_UNRECOGNISED:
            self.diags.append(note(
                UNKNOWN_LINE,
                f"{self.unrecognised - _MAX_UNRECOGNISED} more unrecognised lines in {self.name} "
                "not shown; the file is probably not hccn_tool output",
                Span.whole_file(self.file),
                hint="check that the file holds what its name says, or move it out of the inventory",
            ))


#: output line pattern -> its handler ``(parser, match, line number) -> bool``, tried in this
#: order by :meth:`_Parser.record`
_RECORDS: tuple[tuple[re.Pattern, Callable[[_Parser, re.Match, int], bool]], ...] = (
    (_IPADDR, _ValueLine("ip", "ipaddr", "IPv4 address ('ipaddr:' is empty)", _read_ipaddr)),
    (_NETMASK, _ValueLine("netmask", "netmask", "netmask ('netmask:' is empty)", _read_netmask)),
    (_IPV6, _ValueLine("ipv6", "ipv6_address", "IPv6 address ('ipv6_address:' is empty)", _read_ipv6)),
    (_PREFIX, _ValueLine("ipv6_prefix_len", "prefix_length", "IPv6 prefix length", _read_prefix_length)),
    (_LINK, _ValueLine("link", "link status", "link status", _read_link, soft=True)),
    (_HEALTH, _ValueLine("net_health", "net health status", "net health status", _read_net_health, soft=True)),
    (_GATEWAY, _Parser.gateway),
    (_NETDETECT, _ValueLine("netdetect", "netdetect address", "net-detect address", _address_reader("netdetect"))),
    (_IFNAME, _Parser.ifname),
    (_PING, _Parser.ping_start),
    (_RECV, _Parser.ping_reply),
    (_SUMMARY, _Parser.ping_summary),
)


def parse_hccn_tool(text: str, file: str = "<hccn_tool>", *, device: int | None = None,
                    first_device: int = 0, ignore_lines: Iterable[int] = (),
                    vnic: bool = False) -> tuple[HccnToolOutput, list[Diagnostic]]:
    """Parse saved hccn_tool output (one device's, a loop's, or a mixed capture's).

    ``device``: the device the text belongs to when neither a header nor the line says
    (e.g. from the file name). ``first_device``: the device the first entry of a loop's
    headerless output belongs to. ``ignore_lines``: 1-based line numbers another parser
    already consumed (an npu-smi table in the same file). ``vnic``: the text is
    ``hccn_tool -i N -vnic -g`` output (its ``ipaddr:`` is the vNIC address, ``vnic_ip``).
    """
    lines = split_lines(text)
    p = _Parser(file, device, first_device)
    p.vnic = vnic
    if not any(l.strip() for l in lines):
        p.diags.append(warning(
            MISSING_VALUE,
            f"{p.name} is empty" + (f"; device {device} has no facts from it" if device is not None else ""),
            Span.whole_file(file),
            hint="re-run the capture; hccn_tool prints nothing when the device or setting is missing",
            subject=f"device {device}" if device is not None else None,
        ))
        if device is not None:
            p.out.device_order.append(device)
            p.out.empty[device] = set()
        return p.out, p.diags
    p.run(lines, set(ignore_lines))
    out = p.out
    out.facts = dict(sorted(out.facts.items()))
    return out, p.diags


def load_hccn_tool(path: str | os.PathLike, file: str | None = None, *, device: int | None = None,
                   first_device: int = 0) -> tuple[HccnToolOutput, list[Diagnostic]]:
    """Read and parse a capture file; the device defaults to the one in the file name
    (:func:`device_from_filename`)."""
    label = file if file is not None else os.fspath(path)
    text, diags = read_text(path, label)
    if text is None:
        return HccnToolOutput(label), diags
    if device is None:
        device = device_from_filename(label)
    out, more = parse_hccn_tool(text, label, device=device, first_device=first_device)
    return out, diags + more
