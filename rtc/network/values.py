"""Value parsers for the network part of the language (used by :data:`rtc.syntax.schema.BLOCK_SPECS`).

* ``cidr 10.0.0.0/24`` -> :class:`ipaddress.IPv4Network` (host bits must be zero);
* ``subnets 6.0.0.0/16, 6.1.0.0/16`` -> tuple of networks;
* ``nic eno0`` / ``nic eno0, enp189s0f0`` -> tuple of NIC names;
* ``port 8077`` -> an integer TCP port 1..65535.

They raise :class:`~rtc.syntax.values.ValueProblem` with the syntax-stage rule ids
(RTC111 bad IP literal, RTC114 bad value) so errors look like every other literal error.
"""

from __future__ import annotations

import ipaddress
import re

from rtc.syntax.ast import Attribute
from rtc.syntax.values import ValueProblem, attribute_words, looks_like_placeholder, parse_int

_BAD_IP = "RTC111"
_BAD_VALUE = "RTC114"
_NIC_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")


def parse_cidr(text: str, span) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``10.0.0.0/24`` -> network. A host address with its prefix (``10.0.0.6/24``) is
    rejected with the network it belongs to as the hint."""
    if "/" not in text:
        raise ValueProblem(_BAD_VALUE, f"'{text}' is not a network: write ADDRESS/PREFIX, "
                           "e.g. 10.0.0.0/24", span)
    if looks_like_placeholder(text.split("/")[0]):
        raise ValueProblem(_BAD_IP, f"'{text}' is a placeholder, not a network", span,
                           "write the real network, e.g. 6.0.0.0/16")
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        pass
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        address, _, prefix = text.partition("/")
        bits = 128 if ":" in address else 32
        if prefix.isdigit() and int(prefix) > bits:
            raise ValueProblem(_BAD_IP, f"'{text}': prefix /{prefix} is longer than the "
                               f"{bits} bits of an IPv{6 if bits == 128 else 4} address", span,
                               f"a prefix is 0..{bits}, e.g. {address}/{bits // 2}")
        raise ValueProblem(_BAD_IP, f"'{text}' is not a valid network (ADDRESS/PREFIX)", span,
                           "e.g. 10.0.0.0/24 or fd00::/64")
    raise ValueProblem(_BAD_VALUE, f"'{text}' has host bits set; the network is {net}", span,
                       f"write {net}")


def p_cidr(attr: Attribute):
    words = attribute_words(attr)
    if len(words) != 1:
        raise ValueProblem(_BAD_VALUE, f"'{attr.key}' takes one network, e.g. 10.0.0.0/24",
                           attr.span)
    return parse_cidr(words[0].text, words[0].span)


def p_cidr_list(attr: Attribute) -> tuple:
    if len(attr.args) > 1:
        raise ValueProblem(_BAD_VALUE, f"separate the networks of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple((parse_cidr(w.text, w.span), w.span) for w in attribute_words(attr))


def _nic_name(w) -> str:
    if not _NIC_RE.fullmatch(w.text):
        raise ValueProblem(_BAD_VALUE, f"'{w.text}' is not a network interface name", w.span,
                           "interface names are up to 15 letters, digits, '-', '_', '.' (no "
                           "templates), e.g. eno0 or enp189s0f0")
    return w.text


def p_nic(attr: Attribute) -> str:
    """A server's host NIC (``nic eno0``), checked like a Linux interface name."""
    words = attribute_words(attr)
    if len(words) != 1 or len(attr.args) != 1:
        raise ValueProblem(_BAD_VALUE, f"'{attr.key}' takes one interface name, e.g. eno0",
                           attr.span)
    return _nic_name(words[0])


def p_nic_list(attr: Attribute) -> tuple[str, ...]:
    if len(attr.args) > 1:
        raise ValueProblem(_BAD_VALUE, f"separate the NIC names of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple(_nic_name(w) for w in attribute_words(attr))


def p_port(attr: Attribute) -> int:
    words = attribute_words(attr)
    if len(words) != 1 or len(attr.args) != 1:
        raise ValueProblem(_BAD_VALUE, f"'{attr.key}' takes one port number", attr.span,
                           f"write `{attr.key} PORT`, e.g. `{attr.key} 8000`")
    return parse_int(words[0].text, words[0].span, lo=1, hi=65535, what=f"'{attr.key}' port")
