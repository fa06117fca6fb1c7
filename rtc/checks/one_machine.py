"""One physical machine listed as two servers (RTC223).

Two ``server`` entries are one machine when they share a host IP but hold different device
ids (two pods of one node, each given half the NPUs), or when their ``inventory`` captures
show the same NPU addresses (captured twice on the same machine). HCCL then treats them as
two servers and insists on RoCE between them, where the NPUs really share HCCS (vllm-ascend
issue 14506, two pods of one node listed as two servers: HCCL error 103900).
"""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule
from rtc.textfmt import format_ids

ONE_MACHINE = rule("RTC223", "one-machine-two-servers", "error",
                   "Two server entries describe one physical machine.", """
    What: two servers with the same host IP but different devices (e.g. two pods of one
    node with devices 0..7 and 8..15), or whose captures show the same NPU addresses.
    Why: HCCL reads each server_list entry as its own machine and insists on RoCE between
    them, although the NPUs are linked inside the machine; communicator init fails
    (HCCL error 103900) or traffic takes RoCE needlessly.
    Example: `server pod-a { host 10.0.0.6 devices 0..7 }` and `server pod-b { host
    10.0.0.6 devices 8..15 }`.
    Fix: list the machine once with all its devices (one job may use some of them with
    `on SERVER devices SET`).""")

_HINT = ("list the machine once with all its devices; a job can take part of them with "
         "`on SERVER devices SET`")


def check(topo: Topology, plan: Plan):
    folded = Folded("servers")
    hosts: dict = {}
    captured: dict = {}
    for s in topo.servers:
        ids = {d.device_id for d in s.devices}
        other = hosts.get(s.host_ip) if s.host_ip is not None else None
        theirs = {d.device_id for d in other.devices} if other is not None else set()
        if other is not None and ids and not ids & theirs:
            folded.add((other.span_of("host"), s.span_of("host")), error(
                ONE_MACHINE, f"{other.name} (devices {format_ids(sorted(theirs))}) and "
                f"{s.name} (devices {format_ids(sorted(ids))}) share host IP {s.host_ip}: "
                "one machine listed as two servers, so HCCL insists on RoCE between them",
                s.span_of("host"), subject=s.label,
                related=[Related(other.span_of("host"), f"{other.name}'s host")], hint=_HINT),
                s.name)
        elif s.host_ip is not None:
            hosts.setdefault(s.host_ip, s)
        inv = s.inventory_facts
        if inv is None or s.inventory is None:
            continue
        for dev, ip in inv.device_ips().items():
            first = captured.setdefault(ip, (s, dev))
            if first[0] is not s and first[0].inventory != s.inventory:
                folded.add((first[0].span_of("inventory"), s.span_of("inventory")), error(
                    ONE_MACHINE, f"the captures of {s.name} and {first[0].name} both show NPU "
                    f"address {ip} (device {dev} and device {first[1]}): one machine captured "
                    "twice, or listed as two servers", s.span_of("inventory"), subject=s.label,
                    related=[Related(first[0].span_of("inventory"), first[0].name)],
                    hint=_HINT + "; or capture each server on its own machine"), s.name)
                break
    yield from folded.emit()


#: The rules this module reports (collected by rtc.catalogue).
RULES = (ONE_MACHINE,)
