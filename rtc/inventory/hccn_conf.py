"""Parser for ``/etc/hccn.conf``.

The file is flat ``key_<device>=value`` text, one entry per line, written by
``hccn_tool -i N -ip -s ...``, ``-netdetect -s``, ``-gateway -s``::

    address_0=6.0.2.1
    netmask_0=255.255.255.254
    netdetect_0=6.0.2.0
    gateway_0=6.0.2.0
    send_arp_status_0=1
    tls_enable_0=0

Blank lines and ``#`` comment lines are skipped. Spaces around ``=`` are tolerated. Keys rtc
does not know are kept (per device when they end in ``_<N>``, otherwise as global keys), so
nothing in the file is lost.

Rule ids used here:

* ``RTC481`` (error) malformed line: no ``=``, an empty key, a key with characters other than
  letters, digits and ``_``, or a known key (``address``, ``netmask`` ...) without its
  ``_<device>`` suffix. Why: hccn tooling and HCCL cannot read the entry, so the device keeps
  no (or a stale) setting. Fix: write it as ``key_<device>=value``, e.g. ``address_3=6.0.2.7``.
* ``RTC482`` (warning) the same key appears twice. Why: only one value can be in effect and
  which one the driver applies is not documented (rtc uses the last). Fix: delete one line.
* ``RTC483`` (error) a value of the wrong type: an address that is not an IP, a netmask that
  is not a contiguous dotted mask, a flag that is not an integer. Fix: correct the value.
* ``RTC489`` (warning) an entry with an empty value (``address_2=``). Why: the device has no
  such setting, e.g. no NIC address to put in the rank table. Fix: fill it in or delete it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Related, Span, error, warning

from ._common import (Fact, ascii_int, display_name, parse_ip, parse_netmask, read_text, short_text,
                      split_lines, value_span)
from rtc.inventory.rules import BAD_VALUE, HCCN_CONF_BAD_LINE, HCCN_CONF_DUPLICATE_KEY, MISSING_VALUE

#: Per-device keys rtc knows, and how their values are typed.
KNOWN_KEYS: dict[str, str] = {
    "address": "ip",
    "netmask": "netmask",
    "netdetect": "ip",
    "gateway": "ip",
    "send_arp_status": "int",
    "tls_enable": "int",
}

_KEY_CHARS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEVICE_KEY = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*?)_(?P<dev>[0-9]+)$")


@dataclass(frozen=True)
class HccnConfEntry:
    """One ``key=value`` line. ``base`` is the key without its ``_<device>`` suffix;
    ``device`` is None for global keys. ``value`` is the typed value (canonical IP text,
    netmask text, int, or the raw string for unknown keys); ``key_span`` points at the key."""

    key: str
    base: str
    device: int | None
    value: Fact
    key_span: Span


@dataclass
class HccnConf:
    """A parsed hccn.conf. ``devices[d][base]`` is the :class:`Fact` in effect for device
    ``d`` (for ``netmask`` there is also a derived ``prefix_len``); ``globals`` holds keys
    without a device suffix; ``entries`` keeps every line in file order."""

    file: str
    devices: dict[int, dict[str, Fact]] = field(default_factory=dict)
    globals: dict[str, Fact] = field(default_factory=dict)
    entries: list[HccnConfEntry] = field(default_factory=list)

    def get(self, device: int, base: str) -> Fact | None:
        return self.devices.get(device, {}).get(base)


def _typed(kind: str, raw: str) -> tuple[object | None, int | None, str | None]:
    """Return (value, prefix_len, problem)."""
    if kind == "ip":
        v, why = parse_ip(raw)
        return v, None, (None if v is not None else f"'{raw}' is not an IP address ({why})")
    if kind == "netmask":
        v, plen, why = parse_netmask(raw)
        return v, plen, (None if v is not None else f"'{raw}' is not a netmask ({why})")
    if kind == "int":
        if re.fullmatch(r"[+-]?[0-9]{1,20}", raw):         # ASCII digits only, no int() of 5,000
            return int(raw), None, None
        return None, None, f"'{short_text(raw)}' is not an integer (ASCII digits 0-9, at most 20)"
    return raw, None, None


_TYPE_HINT = {
    "ip": "write a plain dotted IPv4 (6.0.2.1) or an IPv6 address, no leading zeros",
    "netmask": "write a dotted contiguous mask, e.g. 255.255.255.0 for /24",
    "int": "write 0 or 1",
}


@dataclass(frozen=True)
class _Line:
    """A ``key=value`` line split at its first ``=`` (``eq``, 0-based); ``key_span`` points at
    the key, ``vspan`` at the value."""

    no: int
    key: str
    value: str
    eq: int
    key_span: Span
    vspan: Span


def _subject(device: int | None) -> str | None:
    """The diagnostic subject for an entry of ``device`` (none for global keys)."""
    return f"device {device}" if device is not None else None


def _malformed(file: str, no: int, line: str) -> Diagnostic | None:
    """RTC481 for a line that is not ``key=value`` with a key of letters, digits and ``_``."""
    name = display_name(file)
    lead = len(line) - len(line.lstrip())
    if "=" not in line:
        return error(
            HCCN_CONF_BAD_LINE,
            f"line {no} of {name} is not a 'key=value' entry: '{line.strip()}'; hccn tooling "
            "cannot read it, so the setting it was meant to hold is not applied",
            Span(file, no, lead + 1, no, len(line.rstrip()) + 1),
            hint="write it as key_<device>=value (e.g. address_3=6.0.2.7), or comment it out with '#'",
        )
    eq = line.index("=")
    key = line[:eq].strip()
    if not key:
        return error(
            HCCN_CONF_BAD_LINE,
            f"line {no} of {name} has an empty key before '='; the value cannot belong to any device",
            Span(file, no, eq + 1, no, eq + 2),
            hint="put the key in front, e.g. address_0=6.0.2.1",
        )
    if not _KEY_CHARS.match(key):
        return error(
            HCCN_CONF_BAD_LINE,
            f"key '{key}' in {name} contains characters other than letters, digits and '_'; "
            "hccn tooling will not recognise it",
            Span(file, no, lead + 1, no, lead + 1 + len(key)),
            hint="keys look like address_0, netmask_0, netdetect_0, gateway_0",
        )
    dm = _DEVICE_KEY.match(key)
    if dm and ascii_int(dm.group("dev")) is None:
        return error(
            HCCN_CONF_BAD_LINE,
            f"key '{short_text(key)}' in {name} ends in a device number of "
            f"{len(dm.group('dev')):,} digits; no device has one, so the setting is lost",
            Span(file, no, lead + 1, no, lead + 1 + len(key)),
            hint="keys look like address_0, netmask_0, netdetect_0, gateway_0",
        )
    return None


def _split(file: str, no: int, line: str) -> _Line:
    """Split a well-formed line (see :func:`_malformed`) into key and value with their spans."""
    lead = len(line) - len(line.lstrip())
    eq = line.index("=")
    key = line[:eq].strip()
    value = line[eq + 1:].strip()
    vstart = eq + 1
    vstart += len(line[vstart:]) - len(line[vstart:].lstrip())
    return _Line(no, key, value, eq, Span(file, no, lead + 1, no, lead + 1 + len(key)),
                 value_span(file, no, vstart, len(value)))


def _base_and_device(key: str) -> tuple[str, int | None]:
    """``address_3`` -> ``("address", 3)``; a key without a ``_<N>`` suffix is global."""
    m = _DEVICE_KEY.match(key)
    if m:
        return m.group("base"), ascii_int(m.group("dev"))
    return key, None


def _missing_suffix(name: str, ln: _Line) -> Diagnostic | None:
    """RTC481 for a global key that is a known per-device key without its ``_<device>``
    (``address=``, ``address0=``, ``address_x=``)."""
    key = ln.key
    stem = re.sub(r"_?\d*$", "", key)          # address0 -> address
    head = key.rsplit("_", 1)[0]                # address_x -> address
    known = stem if stem in KNOWN_KEYS else head if head in KNOWN_KEYS else None
    if known is None:
        return None
    digits = re.search(r"(\d+)$", key)
    example = f"{known}_{digits.group(1) if digits else '0'}"
    return error(
        HCCN_CONF_BAD_LINE,
        f"key '{key}' in {name} has no '_<device>' suffix, so it applies to no "
        "device and the setting is lost",
        ln.key_span,
        hint=f"name the device the value belongs to, e.g. {example}={ln.value}",
    )


class _ConfReader:
    """Reads the lines of one hccn.conf into ``conf``, collecting ``diags``; ``first_seen``
    remembers where each key was first set."""

    def __init__(self, file: str):
        self.file = file
        self.name = display_name(file)
        self.conf = HccnConf(file)
        self.diags: list[Diagnostic] = []
        self.first_seen: dict[str, Span] = {}

    def read_line(self, no: int, line: str) -> None:
        """Read one line that is not blank or a comment, or report why it cannot be used."""
        problem = _malformed(self.file, no, line)
        if problem is not None:
            self.diags.append(problem)
            return
        ln = _split(self.file, no, line)
        base, device = _base_and_device(ln.key)
        problem = _missing_suffix(self.name, ln) if device is None else None
        if problem is not None:
            self.diags.append(problem)
            return
        if not ln.value:
            self.diags.append(self._empty_value(ln, base, device))
            return
        kind = KNOWN_KEYS.get(base, "raw") if device is not None else "raw"
        value, plen, why = _typed(kind, ln.value)
        if why is not None:
            self.diags.append(error(
                BAD_VALUE,
                f"{ln.key} in {self.name}: {why}; the device cannot use it and rtc cannot check it",
                ln.vspan,
                hint=_TYPE_HINT.get(kind),
                subject=_subject(device),
            ))
            return
        self.keep(ln, base, device, value, plen)

    def _empty_value(self, ln: _Line, base: str, device: int | None) -> Diagnostic:
        """RTC489 for ``key=`` with nothing after it."""
        return warning(
            MISSING_VALUE,
            f"'{ln.key}' in {self.name} has an empty value"
            + (f"; device {device} has no {base} setting" if device is not None else ""),
            Span(self.file, ln.no, ln.eq + 2, ln.no, ln.eq + 2),
            hint=f"fill in the value (e.g. {ln.key}=<value>) or delete the line",
            subject=_subject(device),
        )

    def keep(self, ln: _Line, base: str, device: int | None, value: object, plen: int | None) -> None:
        """Record a valid entry (the later of two equal keys wins, with RTC482)."""
        source = f"hccn.conf {ln.key} ({self.name}:{ln.no})"
        fact = Fact(value, ln.vspan, source)
        first = self.first_seen.get(ln.key)
        if first is not None:
            self.diags.append(warning(
                HCCN_CONF_DUPLICATE_KEY,
                f"'{ln.key}' is set more than once in {self.name} (first at line {first.line}); "
                "only one value can be in effect and which one the driver applies is not "
                "documented (rtc uses this later one)",
                ln.key_span,
                hint="delete the line that is wrong",
                related=[Related(first, f"first '{ln.key}'")],
                subject=_subject(device),
            ))
        else:
            self.first_seen[ln.key] = ln.key_span
        self.conf.entries.append(HccnConfEntry(ln.key, base, device, fact, ln.key_span))
        if device is None:
            self.conf.globals[ln.key] = fact
        else:
            slot = self.conf.devices.setdefault(device, {})
            slot[base] = fact
            if plen is not None:
                slot["prefix_len"] = Fact(plen, ln.vspan, source)


def parse_hccn_conf(text: str, file: str = "hccn.conf") -> tuple[HccnConf, list[Diagnostic]]:
    """Parse hccn.conf text. ``file`` is used in spans and sources (the path as the user gave
    it). Returns the parsed file and its diagnostics (never raises on bad content)."""
    reader = _ConfReader(file)
    for no, line in enumerate(split_lines(text), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        reader.read_line(no, line)
    conf = reader.conf
    conf.devices = dict(sorted(conf.devices.items()))
    return conf, reader.diags


def load_hccn_conf(path: str | os.PathLike, file: str | None = None) -> tuple[HccnConf, list[Diagnostic]]:
    """Read and parse an hccn.conf file (RTC480 when it cannot be read)."""
    label = file if file is not None else os.fspath(path)
    text, diags = read_text(path, label)
    if text is None:
        return HccnConf(label), diags
    conf, more = parse_hccn_conf(text, label)
    return conf, diags + more
