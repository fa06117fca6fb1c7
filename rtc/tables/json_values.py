"""The values of a JSON rank table: decimal strings (``"12"``) and IP addresses, read
the way HCCL's parser and rtc's schemas (``schemas/hccl-v1.*.schema.json``) accept them.

Shared by the lowering (:mod:`rtc.tables.lower_table`, :mod:`rtc.tables.lower_v2`), the
table rules (:mod:`rtc.tables.semantic`) and ``rtc import``. Pure functions; nothing raises.
"""

from __future__ import annotations

import ipaddress
import re

#: Most digits a decimal string may have: more is a mistake the schema reports (RTC615),
#: and ``int()`` refuses over 4,300 digits.
_MAX_DIGITS = 20


def decimal(value) -> int | None:
    """A v1.x decimal string (``"12"``: 1 to 20 ASCII digits) as int; JSON integers below
    10**20 are accepted too (the schema reports their type). None for anything else --
    Unicode digits ('²', '８') and longer strings included -- so the value is left out."""
    if type(value) is str:
        return int(value) if 0 < len(value) <= _MAX_DIGITS and value.isdigit() \
            and value.isascii() else None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** _MAX_DIGITS:
        return value
    return None


def plain_decimal(value, path: tuple, bad: frozenset) -> int | None:
    """:func:`decimal` of the value at ``path``, None when the schema rejected it (``path``
    in ``bad``) -- except a bare JSON integer (``"rank_id": 3``), which the schema rejects
    only for its type (RTC610): its value is plain, so the rules on the values (duplicate
    ranks, duplicate device ids, ...) still report in the same run."""
    if bad and path in bad and (type(value) is not int or value < 0):
        return None
    return decimal(value)


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_V4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}\Z")
_IPv4 = ipaddress.IPv4Address


def parse_address(text: str):
    """One IPv4/IPv6 address (the strict forms :func:`ipaddress.ip_address` accepts), or
    None. Dotted quads take a fast path (tables hold tens of thousands of them)."""
    if _V4.match(text):
        a, b, c, d = text.split(".")
        return _IPv4((int(a) << 24) | (int(b) << 16) | (int(c) << 8) | int(d))
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_address(text: str) -> bool:
    """True when ``text`` is one valid IPv4/IPv6 address (no object is built for the
    common dotted quad)."""
    return _V4.match(text) is not None or parse_address(text) is not None


def address(value) -> tuple[object | None, str]:
    """(first address, state) of an IP field: state is ``ok``, ``missing`` (absent or "")
    or ``bad`` (does not parse)."""
    if value is None or value == "":
        return None, "missing"
    if type(value) is not str:
        return None, "bad"
    ip = parse_address(value.split(",", 1)[0] if "," in value else value)
    return (ip, "ok") if ip is not None else (None, "bad")
