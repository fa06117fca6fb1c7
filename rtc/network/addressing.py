"""Address arithmetic for the network model: device subnets, host networks, fabrics.

Subnets are handled as plain integer triples ``(version, network, prefix)`` so that a
cluster of 32,768 NPUs with a /31 each costs one integer mask per device, not an
:mod:`ipaddress` network object; :func:`subnet_text` turns a triple back into
``6.0.2.0/31`` for messages.

Declarations (built by :mod:`rtc.model.lower_network` from the ``network`` and ``fabric``
blocks):

* :class:`HostNetwork` -- ``network NAME { cidr 10.0.0.0/24  nic eno0 }``: servers whose
  ``nic`` is listed must have their ``host`` inside ``cidr``.
* :class:`Fabric` -- ``fabric NAME { subnets 6.0.0.0/16, 6.1.0.0/16 }``: device subnets
  inside these networks whose devices have a gateway are routed to each other.
"""

from __future__ import annotations

import functools

import ipaddress
from dataclasses import dataclass, field

from rtc.diagnostics import Span

Subnet = tuple[int, int, int]   # (IP version, network as int, prefix length)

_BITS = {4: 32, 6: 128}

V6_KEY_OFFSET = 1 << 128
"""IPv6 address keys are the address value plus this, so no IPv6 key equals an IPv4 key."""


def address_key(ip) -> int:
    """One int per address, unique across both families: the IPv4 value (below 2**32), or
    the IPv6 value plus :data:`V6_KEY_OFFSET`. ``key < 2**32`` tells IPv4."""
    if type(ip) is ipaddress.IPv4Address:
        return int(ip)
    return int(ip) + (V6_KEY_OFFSET if ip.version == 6 else 0)


@dataclass
class HostNetwork:
    """A host network: ``cidr`` and the NIC names (``nic``) attached to it. ``incomplete``
    holds the attributes that were written but could not be read (already reported)."""

    name: str
    span: Span
    cidr: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    nics: tuple[str, ...] = ()
    spans: dict = field(default_factory=dict)
    incomplete: frozenset = frozenset()

    def span_of(self, attr: str) -> Span:
        return self.spans.get(attr, self.span)


@dataclass
class Fabric:
    """A routed RoCE fabric: ``subnets`` is a list of (network, span). ``incomplete`` holds
    the attributes that were written but could not be read (already reported)."""

    name: str
    span: Span
    subnets: list = field(default_factory=list)
    spans: dict = field(default_factory=dict)
    incomplete: frozenset = frozenset()

    def span_of(self, attr: str) -> Span:
        return self.spans.get(attr, self.span)


@functools.lru_cache(maxsize=None)
def mask(version: int, prefix: int) -> int:
    bits = _BITS[version]
    return ((1 << bits) - 1) ^ ((1 << (bits - prefix)) - 1)


def subnet_of(ip, prefix: int | None) -> Subnet | None:
    """The subnet triple of ``ip``/``prefix`` (None when either is unknown or the prefix
    is too long for the address family)."""
    if ip is None or prefix is None:
        return None
    v = ip.version
    if prefix > _BITS[v] or prefix < 0:
        return None
    return (v, int(ip) & mask(v, prefix), prefix)


def contains(subnet: Subnet, ip) -> bool:
    """True when address ``ip`` lies in ``subnet``."""
    v, net, prefix = subnet
    return ip is not None and ip.version == v and (int(ip) & mask(v, prefix)) == net


def within(inner: Subnet, outer: Subnet) -> bool:
    """True when subnet ``inner`` lies entirely inside ``outer``."""
    return (inner[0] == outer[0] and inner[2] >= outer[2]
            and (inner[1] & mask(outer[0], outer[2])) == outer[1])


def from_network(net) -> Subnet:
    return (net.version, int(net.network_address), net.prefixlen)


def subnet_text(subnet: Subnet) -> str:
    v, net, prefix = subnet
    addr = ipaddress.IPv4Address(net) if v == 4 else ipaddress.IPv6Address(net)
    return f"{addr}/{prefix}"


def is_network_or_broadcast(ip, prefix: int) -> str | None:
    """'network' / 'broadcast' when ``ip`` is that address of its IPv4 subnet and the subnet
    has room for hosts (prefix <= 30; /31 and /32 use every address, RFC 3021)."""
    if ip is None or ip.version != 4 or prefix is None or prefix > 30:
        return None
    m = mask(4, prefix)
    n = int(ip)
    if n & ~m & 0xFFFFFFFF == 0:
        return "network"
    if n & ~m & 0xFFFFFFFF == (~m & 0xFFFFFFFF):
        return "broadcast"
    return None


class FabricIndex:
    """Which declared fabrics a device subnet belongs to (linear in the fabrics' subnets,
    which are few)."""

    def __init__(self, fabrics: list[Fabric]):
        self.entries: list[tuple[Subnet, str]] = []
        for f in fabrics:
            for net, _span in f.subnets:
                self.entries.append((from_network(net), f.name))

    def fabrics_of(self, subnet: Subnet) -> list[str]:
        return [name for outer, name in self.entries if within(subnet, outer)]
