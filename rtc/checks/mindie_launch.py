"""MindIE jobs (``framework mindie``): what MindIE Server refuses at start-up, found before
(RTC656 rank table and node addresses, RTC657 pod IPs, RTC658 ports, RTC666 GPU hardware).

The limits are MindIE's own (:data:`rtc.plan.mindie.FACTS`, read in MindIE-LLM's
``ranktable_config.cpp`` ``CheckParam`` and ``config_manager_impl.cpp`` ``CheckAllParam``):
a multi-node instance needs 2..60 servers with the same number (1..32) of NPUs each and a
``container_ip`` on every server, which is also how each node finds itself (its
``MIES_CONTAINER_IP``); its REST port must not be one of the other ports it binds.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.mindie import (DEFAULT_PORT, MAX_LOCAL_DEVICES, MAX_RANK_ID, MAX_SERVERS,
                             fixed_ports, service_ip)
from rtc.plan.disaggregation import pd_side
from rtc.rules import rule

MINDIE_TABLE = rule("RTC656", "mindie-multi-node-table", "error",
                    "A multi-node MindIE job breaks MindIE's rank table limits.", """
    What: a `framework mindie` job on several servers with more than 60 servers, more
    than 32 NPUs on a server, servers with different NPU counts, more than 512 ranks, or a
    server with neither `container_ip` nor `host`.
    Why: MindIE Server checks the rank table at start-up (multiNodesInferEnabled) and
    exits: it needs 2..60 servers with the same number of NPUs, a container_ip on every
    server (it finds its own server by MIES_CONTAINER_IP) and rank ids up to 511.
    Example: `job j { framework mindie  on a devices 0..7  on b devices 0..3 }`.
    Fix: give every server the same number of NPUs, at most 60 servers, and a `host`
    (or `container_ip` when pods have their own IPs).""")
POD_IPS = rule("RTC657", "mindie-container-ip", "error",
               "A container IP repeats another server's, or a host or device IP.", """
    What: two servers whose `container_ip` is the same, or one server's `container_ip` that
    is another server's `host` or any server's device IP.
    Why: MindIE finds its own server in the rank table by MIES_CONTAINER_IP == container_ip;
    with two matches both nodes take the same ranks (and Kubernetes never gives two pods
    one IP: the description is wrong).
    Example: `container_ip 172.16.0.1` on two servers.
    Fix: give each server its own pod's IP (`kubectl get pods -o wide`).""")
MINDIE_PORT = rule("RTC658", "mindie-port", "error",
                   "A MindIE job's port is outside 1024..65535 or one of its other ports.", """
    What: the `port` of a `framework mindie` job below 1024, or equal to a port rtc's
    config fragment gives MindIE for something else (management 1026, metrics 1027,
    multiNodesInferPort 1120, interCommPort 1121 on prefill/decode jobs).
    Why: MindIE Server refuses ports outside [1024, 65535] and a REST port equal to
    multiNodesInferPort ('Endpoint port cannot be equal to multiNodesInferPort'); the
    others clash when it binds them.
    Example: `port 1120`.
    Fix: choose another port (MindIE's default is 1025).""")

MINDIE_ON_GPU = rule("RTC666", "mindie-on-gpu", "error",
                     "A `framework mindie` job on NVIDIA GPU hardware.", """
    What: a job with `framework mindie` in a cluster whose hardware is an NVIDIA GPU preset.
    Why: MindIE Server runs on Ascend NPUs only (CANN, HCCL and a rank table); on GPUs its
    daemon finds no NPU and exits, and rtc's MindIE env and config.json keys do not apply.
    Example: `framework mindie` with `hardware hgx-h100`.
    Fix: use `framework vllm` on GPUs, or an Ascend preset (e.g. atlas-800t-a2).""")

RULES = (MINDIE_TABLE, POD_IPS, MINDIE_PORT, MINDIE_ON_GPU)


def check(topo: Topology, plan: Plan):
    yield from _pod_ips(topo)
    for job in topo.jobs:
        if job.framework != "mindie" or not job.placements:
            continue
        if topo.preset.is_gpu:
            yield error(MINDIE_ON_GPU, f"job {job.name} has framework mindie, but hardware "
                        f"{topo.preset.name} is NVIDIA GPUs; MindIE Server runs on Ascend "
                        "NPUs only", job.span_of("framework"), subject=f"job {job.name}",
                        hint="use `framework vllm` on GPUs, or an Ascend hardware preset")
            continue
        yield from _port(job, pd_side(plan.pairs, job) is not None)
        yield from _table(topo, job)


def _pod_ips(topo: Topology):
    """RTC657: a container_ip used twice, or equal to another server's host or to a device
    IP (an NPU's RoCE address is never a pod's)."""
    if not any(s.container_ip is not None for s in topo.servers):
        return
    seen: dict = {}
    for s in topo.servers:
        for d in s.devices:
            if d.device_ip is not None:
                seen.setdefault(d.device_ip, (s, "device_ip"))
    for s in topo.servers:
        if s.host_ip is not None:
            seen.setdefault(s.host_ip, (s, "host"))
    for s in topo.servers:
        ip = s.container_ip
        if ip is None:
            continue
        other = seen.get(ip)
        if other is not None and (other[0] is not s or other[1] == "device_ip"):
            o, what = other
            name = "a device IP" if what == "device_ip" else f"the {what}"
            yield error(POD_IPS, f"container_ip {ip} of {s.name} is also {name} of "
                        f"{o.name}", s.span_of("container_ip"), subject=s.label,
                        related=[Related(o.span_of(what), f"{o.name}'s {what}")],
                        hint="give each server its own pod's IP (`kubectl get pods -o wide`)")
        seen[ip] = (s, "container_ip")


def _port(job, pd: bool):
    """RTC658: the job's REST port against MindIE's range and its other ports."""
    port = job.port or DEFAULT_PORT
    clash = [k for k, v in fixed_ports(pd).items() if v == port]
    if port < 1024 or clash:
        why = "MindIE takes 1024..65535" if port < 1024 else \
            f"rtc gives MindIE's {clash[0]} that port"
        yield error(MINDIE_PORT, f"job {job.name}: port {port} cannot be MindIE's REST port: "
                    f"{why}", job.span_of("port"), subject=f"job {job.name}",
                    hint=f"choose another port (MindIE's default is {DEFAULT_PORT})")


def _table(topo: Topology, job):
    """RTC656: the limits of MindIE's multi-node rank table."""
    members = [(s, devs) for s, devs in topo.rank_table_members(job) if devs]
    if len(members) < 2:
        return
    span, subject = job.span_of("framework"), f"job {job.name}"
    counts = sorted({len(devs) for _s, devs in members})
    ranks = sum(len(devs) for _s, devs in members)
    problems = []
    if len(members) > MAX_SERVERS:
        problems.append(f"{len(members)} servers (MindIE takes 2..{MAX_SERVERS})")
    if len(counts) > 1:
        first = {n: s.name for s, devs in reversed(members) for n in [len(devs)]}
        problems.append("servers with different NPU counts ("
                        + ", ".join(f"{n} on {first[n]}" for n in counts) + ")")
    if counts[-1] > MAX_LOCAL_DEVICES:
        problems.append(f"{counts[-1]} NPUs on a server (MindIE takes 1..{MAX_LOCAL_DEVICES})")
    if ranks > MAX_RANK_ID + 1:
        problems.append(f"{ranks} ranks (MindIE takes rank ids 0..{MAX_RANK_ID})")
    lacking = [s.name for s, _d in members if service_ip(s) is None]
    if lacking:
        problems.append(f"server {lacking[0]} has neither container_ip nor host (MindIE needs "
                        "container_ip on every server)")
    for p in problems:
        yield error(MINDIE_TABLE, f"job {job.name} on {len(members)} servers: {p}", span,
                    subject=subject, hint="MindIE Server exits at start-up on this table: "
                    "the same number of NPUs on 2..60 servers, each with a `host` or "
                    "`container_ip`")
