"""Addresses that can never be right: loopback, unspecified, multicast, link-local."""

from __future__ import annotations

from rtc.diagnostics import error
from rtc.model.topology import Topology
from rtc.rules import rule

RESERVED_ADDRESS = rule("RTC209", "reserved-address", "error",
                        "A host or device IP is loopback, unspecified, multicast or link-local.", """
    What: e.g. `host 127.0.0.1`, `device_ip 0.0.0.0`, a 224.x multicast or a 169.254.x
    link-local address.
    Why: other servers cannot reach such an address: HCCL link setup between servers times
    out (HCCL_CONNECT_TIMEOUT) and vLLM's DP handshake waits 5 minutes then fails.
    Example: `host 127.0.0.1` copied from a single-node setup.
    Fix: use the server's routable address (`ip addr show eno0`) and the NPU's RoCE
    address (`hccn_tool -i N -ip -g`).""")


def _why(ip) -> str | None:
    if ip.is_loopback:
        return "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_link_local:
        return "link-local"
    return None


def check(topo: Topology):
    for s in topo.servers:
        if s.host_ip is not None:
            why = _why(s.host_ip)
            if why:
                yield error(RESERVED_ADDRESS, f"host IP {s.host_ip} of {s.name} is a {why} "
                            "address; other servers cannot reach it", s.span_of("host"),
                            subject=s.label, hint="use the address of the NIC other nodes reach "
                            "(the one HCCL_IF_IP will name)")
        reported = False
        for d in s.devices:
            for what, ip in (("device IP", d.device_ip), ("gateway", d.gateway)):
                if ip is None or reported:
                    continue
                why = _why(ip)
                if why:
                    reported = True
                    yield error(RESERVED_ADDRESS, f"{what} {ip} of {s.name} device {d.device_id} "
                                f"is a {why} address; RoCE peers cannot reach it",
                                s.span_of("device_ip" if what == "device IP" else "gateway"),
                                subject=f"{s.label}, device {d.device_id}",
                                hint="use the NPU's RoCE address from `hccn_tool -i N -ip -g`")
