"""Addresses that can never be right: loopback, unspecified, multicast, link-local,
limited broadcast, reserved."""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

RESERVED_ADDRESS = rule("RTC209", "reserved-address", "error",
                        "A host, container or device IP is loopback, unspecified, multicast, link-local, broadcast or reserved.", """
    What: e.g. `host 127.0.0.1`, `container_ip 127.0.0.1`, `device_ip 0.0.0.0`, a 224.x
    multicast, a 169.254.x link-local address, the limited broadcast 255.255.255.255 or a reserved 240.0.0.0/4
    (class E) address (IPv6: the addresses `ipaddress` marks reserved).
    Why: other servers cannot reach such an address: HCCL link setup between servers times
    out (HCCL_CONNECT_TIMEOUT) and vLLM's DP handshake waits 5 minutes then fails.
    Example: `host 127.0.0.1` copied from a single-node setup.
    Fix: use the server's routable address (`ip addr show eno0`) and the NPU's RoCE
    address (`hccn_tool -i N -ip -g`).""")


_V4_RANGES = (  # (network as int, mask as int, reason): checked with integer arithmetic
    (0xFFFFFFFF, 0xFFFFFFFF, "limited broadcast"),
    (0x00000000, 0xFFFFFFFF, "unspecified"),
    (0x00000000, 0xFF000000, "'this network' (0.0.0.0/8)"),
    (0x7F000000, 0xFF000000, "loopback"),
    (0xE0000000, 0xF0000000, "multicast"),
    (0xF0000000, 0xF0000000, "reserved (class E, 240.0.0.0/4)"),
    (0xA9FE0000, 0xFFFF0000, "link-local"),
)


# First octets that some range above can match; every other IPv4 address is fine.
_SUSPECT_FIRST_OCTETS = frozenset(o for o in range(256) for net, mask, _ in _V4_RANGES
                                  if o & (mask >> 24) == net >> 24)


def _suspect_servers(topo: Topology) -> set[int]:
    """ids of the servers with a device address or gateway that could be reserved (by
    its address key, rtc.model.topology.address_key): decided from the first octet, in
    one pass without a call per address; IPv6 always needs a look."""
    first = _SUSPECT_FIRST_OCTETS
    return {id(s) for s, _d, ip, gw in topo.address_keys()
            if ip is not None and (ip > 0xFFFFFFFF or ip >> 24 in first)
            or gw is not None and (gw > 0xFFFFFFFF or gw >> 24 in first)}


def _why(ip) -> str | None:
    if ip.version == 4:  # fast path: 65,536 devices are checked here
        n = int(ip)
        for net, mask, why in _V4_RANGES:
            if n & mask == net:
                return why
        return None
    if ip.is_loopback:
        return "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_link_local:
        return "link-local"
    if ip.is_reserved:
        return "reserved"
    return None


def _article(why: str) -> str:
    return "an" if why[0] in "aeiou" else "a"


def check(topo: Topology, plan: Plan):
    # Servers with a device address worth a closer look (by int key, in one pass).
    flagged = _suspect_servers(topo)
    # One finding per source line (a family's template is one line), counting the rest.
    hosts = Folded("servers")
    devices = Folded("addresses")
    for s in topo.servers:
        if s.host_ip is not None:
            why = _why(s.host_ip)
            if why:
                hosts.add(s.span_of("host"), error(
                    RESERVED_ADDRESS, f"host IP {s.host_ip} of {s.name} is {_article(why)} {why} "
                    "address; other servers cannot reach it", s.span_of("host"), subject=s.label,
                    hint="use the address of the NIC other nodes reach (the one HCCL_IF_IP "
                         "will name)"), s.name)
        if s.container_ip is not None:
            why = _why(s.container_ip)
            if why:
                hosts.add(s.span_of("container_ip"), error(
                    RESERVED_ADDRESS, f"container_ip {s.container_ip} of {s.name} is "
                    f"{_article(why)} {why} address; other pods cannot reach it",
                    s.span_of("container_ip"), subject=s.label,
                    hint="use the pod's own IP (`kubectl get pods -o wide`), or leave "
                         "container_ip out when the pod shares the host's network"), s.name)
        if id(s) not in flagged:
            continue
        for d in s.devices:
            for what, ip in (("device IP", d.device_ip), ("gateway", d.gateway)):
                why = None if ip is None else _why(ip)
                if why:
                    attr = "device_ip" if what == "device IP" else "gateway"
                    devices.add(s.span_of(attr), error(
                        RESERVED_ADDRESS, f"{what} {ip} of {s.name} device {d.device_id} is "
                        f"{_article(why)} {why} address; RoCE peers cannot reach it",
                        s.span_of(attr), subject=f"{s.label}, device {d.device_id}",
                        hint="use the NPU's RoCE address from `hccn_tool -i N -ip -g`"
                        if attr == "device_ip" else "use the switch-side address of the NPU's "
                        "link from `hccn_tool -i N -gateway -g`"),
                        f"{s.name} device {d.device_id} {ip}")
    yield from hosts.emit()
    yield from devices.emit()

#: The rules this module reports (collected by rtc.catalogue).
RULES = (RESERVED_ADDRESS,)
