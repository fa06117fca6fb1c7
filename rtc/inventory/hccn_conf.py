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

from ._common import Fact, display_name, parse_ip, parse_netmask, read_text, split_lines, value_span
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
_DEVICE_KEY = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*?)_(?P<dev>\d+)$")


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
        if re.fullmatch(r"[+-]?\d+", raw):
            return int(raw), None, None
        return None, None, f"'{raw}' is not an integer"
    return raw, None, None


def parse_hccn_conf(text: str, file: str = "hccn.conf") -> tuple[HccnConf, list[Diagnostic]]:
    """Parse hccn.conf text. ``file`` is used in spans and sources (the path as the user gave
    it). Returns the parsed file and its diagnostics (never raises on bad content)."""
    conf = HccnConf(file)
    diags: list[Diagnostic] = []
    name = display_name(file)
    first_seen: dict[str, Span] = {}

    for no, line in enumerate(split_lines(text), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        lead = len(line) - len(line.lstrip())
        if "=" not in line:
            diags.append(error(
                HCCN_CONF_BAD_LINE,
                f"line {no} of {name} is not a 'key=value' entry: '{stripped}'; hccn tooling "
                "cannot read it, so the setting it was meant to hold is not applied",
                Span(file, no, lead + 1, no, len(line.rstrip()) + 1),
                hint="write it as key_<device>=value (e.g. address_3=6.0.2.7), or comment it out with '#'",
            ))
            continue
        eq = line.index("=")
        key = line[:eq].strip()
        raw_value = line[eq + 1:].strip()
        key_span = Span(file, no, lead + 1, no, lead + 1 + len(key))
        if not key:
            diags.append(error(
                HCCN_CONF_BAD_LINE,
                f"line {no} of {name} has an empty key before '='; the value cannot belong to any device",
                Span(file, no, eq + 1, no, eq + 2),
                hint="put the key in front, e.g. address_0=6.0.2.1",
            ))
            continue
        if not _KEY_CHARS.match(key):
            diags.append(error(
                HCCN_CONF_BAD_LINE,
                f"key '{key}' in {name} contains characters other than letters, digits and '_'; "
                "hccn tooling will not recognise it",
                key_span,
                hint="keys look like address_0, netmask_0, netdetect_0, gateway_0",
            ))
            continue
        m = _DEVICE_KEY.match(key)
        device: int | None
        if m:
            base, device = m.group("base"), int(m.group("dev"))
        else:
            base, device = key, None
            stem = re.sub(r"_?\d*$", "", key)          # address0 -> address
            head = key.rsplit("_", 1)[0]                # address_x -> address
            known = stem if stem in KNOWN_KEYS else head if head in KNOWN_KEYS else None
            if known is not None:
                digits = re.search(r"(\d+)$", key)
                example = f"{known}_{digits.group(1) if digits else '0'}"
                diags.append(error(
                    HCCN_CONF_BAD_LINE,
                    f"key '{key}' in {name} has no '_<device>' suffix, so it applies to no "
                    "device and the setting is lost",
                    key_span,
                    hint=f"name the device the value belongs to, e.g. {example}={raw_value}",
                ))
                continue

        vstart = line.index("=") + 1
        vstart += len(line[vstart:]) - len(line[vstart:].lstrip())
        vspan = value_span(file, no, vstart, len(raw_value))
        subject = f"device {device}" if device is not None else None

        if not raw_value:
            diags.append(warning(
                MISSING_VALUE,
                f"'{key}' in {name} has an empty value"
                + (f"; device {device} has no {base} setting" if device is not None else ""),
                Span(file, no, eq + 2, no, eq + 2),
                hint=f"fill in the value (e.g. {key}=<value>) or delete the line",
                subject=subject,
            ))
            continue

        kind = KNOWN_KEYS.get(base, "raw") if device is not None else "raw"
        value, plen, problem = _typed(kind, raw_value)
        if problem is not None:
            diags.append(error(
                BAD_VALUE,
                f"{key} in {name}: {problem}; the device cannot use it and rtc cannot check it",
                vspan,
                hint={
                    "ip": "write a plain dotted IPv4 (6.0.2.1) or an IPv6 address, no leading zeros",
                    "netmask": "write a dotted contiguous mask, e.g. 255.255.255.0 for /24",
                    "int": "write 0 or 1",
                }.get(kind),
                subject=subject,
            ))
            continue

        source = f"hccn.conf {key} ({name}:{no})"
        fact = Fact(value, vspan, source)
        if key in first_seen:
            diags.append(warning(
                HCCN_CONF_DUPLICATE_KEY,
                f"'{key}' is set more than once in {name} (first at line {first_seen[key].line}); "
                "only one value can be in effect and which one the driver applies is not "
                "documented (rtc uses this later one)",
                key_span,
                hint="delete the line that is wrong",
                related=[Related(first_seen[key], f"first '{key}'")],
                subject=subject,
            ))
        else:
            first_seen[key] = key_span
        conf.entries.append(HccnConfEntry(key, base, device, fact, key_span))
        if device is None:
            conf.globals[key] = fact
        else:
            slot = conf.devices.setdefault(device, {})
            slot[base] = fact
            if plen is not None:
                slot["prefix_len"] = Fact(plen, vspan, source)
    conf.devices = dict(sorted(conf.devices.items()))
    return conf, diags


def load_hccn_conf(path: str | os.PathLike, file: str | None = None) -> tuple[HccnConf, list[Diagnostic]]:
    """Read and parse an hccn.conf file (RTC480 when it cannot be read)."""
    label = file if file is not None else os.fspath(path)
    text, diags = read_text(path, label)
    if text is None:
        return HccnConf(label), diags
    conf, more = parse_hccn_conf(text, label)
    return conf, diags + more
