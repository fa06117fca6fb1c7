"""Host-side addressing of a job (RTC450, RTC451, RTC456): HCCL_IF_IP / VLLM_HOST_IP and
--data-parallel-address.

rtc generates HCCL_IF_IP (and VLLM_HOST_IP) per node from the server's `host`; a job
`env` that sets them fixes one value for every node. The DP head is the job's first
server (it holds DP rank 0 and runs the DP coordinator); `dp_address` defaults to its host.
"""

from __future__ import annotations

import ipaddress

from rtc.checks._net import related
from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.network.env import env_map
from rtc.rules import rule
from rtc.syntax.values import looks_like_placeholder

FIXED_HOST_IP = rule("RTC450", "fixed-host-ip", "error",
                     "HCCL_IF_IP / VLLM_HOST_IP is set to one value for several nodes, or not to the node's own host IP (in scripts: a node's own addresses disagree).", """
    What: a job's `env HCCL_IF_IP = ...` (or VLLM_HOST_IP) with one address while the job
    runs on several servers, or with an address that is not its server's `host`.
    Scripts (`rtc lint`, rtc's own output as much as hand-written ones): one node's own
    addresses disagree: its HCCL_IF_IP, VLLM_HOST_IP and `ray start --node-ip-address`
    are not all the node's host IP (the first of them the script sets), e.g. a worker
    whose --node-ip-address is the head's IP while its HCCL_IF_IP is its own.
    Why: every node then announces the same (or a foreign) address: HCCL's root-info
    exchange and vLLM/Ray see duplicate node IPs ("Every node should have a unique IP
    address"), workers connect back to the wrong node, and bootstrap hangs until
    HCCL_CONNECT_TIMEOUT. HCCL binds its host NIC for the root-info exchange to
    HCCL_IF_IP; vLLM takes VLLM_HOST_IP as the node's own IP (vllm/envs.py, `get_ip` in
    vllm/utils); Ray registers the node under --node-ip-address (ray-project/ray
    python/ray/scripts/scripts.py: "the IP address of this node"); with two addresses on
    one node one of the three announces the wrong one.
    Example: `env HCCL_IF_IP = 10.0.0.6` in a job on atlas-01 (10.0.0.6) and atlas-02
    (10.0.0.5); or a script with HCCL_IF_IP=192.168.1.111 and VLLM_HOST_IP=192.168.1.11.
    Fix: remove it: rtc sets HCCL_IF_IP (and VLLM_HOST_IP) per node from each server's
    `host`; in a script, give every own-address setting of the node its one host IP.""")
DP_ADDRESS = rule("RTC451", "dp-address-not-head", "error",
                  "--data-parallel-address is not the DP head's host IP.", """
    What: the job's `dp_address` is the host IP of one of its other servers (a worker,
    which would then point at itself), or of no server of the job.
    Why: the DP coordinator runs next to DP rank 0 on the job's first server. Engines that
    look for it elsewhere connect to a socket nobody answers and fail after 5 minutes
    ("Did not receive response from front-end process within 5 minutes"), while the head
    waits forever for them.
    Example: a job on atlas-01, atlas-02 with `dp_address 10.0.0.5` (atlas-02).
    Fix: leave `dp_address` out (rtc uses the first server's host), or declare the head
    server first.""")
NO_HOST = rule("RTC456", "missing-host-ip", "warning",
               "A server of a multi-server job has no host IP.", """
    What: a job spans several servers and one of them has no `host`.
    Why: rtc cannot generate HCCL_IF_IP, --data-parallel-address or check the ports and
    addresses of that node; HCCL then picks a NIC by name order, which may not reach the
    others.
    Example: `server atlas-02 { devices 0..7 }` in a DP2 job.
    Fix: add `host ADDRESS` (the address of the NIC other nodes reach).""")


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        servers = [p.server for p in job.placements]
        if not servers:
            continue
        env = env_map(job)
        for var in ("HCCL_IF_IP", "VLLM_HOST_IP"):
            if var in env:
                yield from _fixed_ip(job, var, env[var], servers)
        multi = len(servers) > 1
        if multi:
            # a host that was written but could not be read is reported already (RTC111)
            lacking = [s for s in servers if s.host_ip is None and "host" not in s.incomplete]
            if lacking:
                s = lacking[0]
                more = len(lacking) - 1
                yield warning(NO_HOST, f"job {job.name} runs on several servers but {s.name} "
                              "has no host IP" + (f" (and {more} more)" if more else ""),
                              s.span, subject=s.label,
                              hint="add `host ADDRESS` so rtc can set HCCL_IF_IP and the DP "
                                   "address for it")
        if job.framework == "vllm" and job.dp > 1 and multi:
            yield from _dp_address(topo, job, servers)


def _fixed_ip(job, var: str, value: tuple, servers):
    text, span = value
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        why = "a placeholder" if looks_like_placeholder(text) else "not an IP address"
        yield error(FIXED_HOST_IP, f"job {job.name}: {var}={text} is {why}", span,
                    subject=f"job {job.name}",
                    hint=f"remove it: rtc sets {var} per node from each server's `host`")
        return
    owners = [s for s in servers if s.host_ip == ip]
    if len(servers) > 1:
        own = f" (it is {owners[0].name}'s host)" if owners else ""
        yield error(FIXED_HOST_IP, f"job {job.name} runs on {len(servers)} servers but sets "
                    f"{var}={ip} for all of them{own}: every node would announce the same "
                    "address", span, subject=f"job {job.name}",
                    related=[Related(s.span_of("host"), f"{s.name}'s host {s.host_ip}")
                             for s in servers[:2] if s.host_ip is not None],
                    hint=f"remove it: rtc sets {var} per node from each server's `host`")
    elif servers[0].host_ip is not None and not owners:
        s = servers[0]
        yield error(FIXED_HOST_IP, f"job {job.name}: {var}={ip} is not the host IP of "
                    f"{s.name} ({s.host_ip})", span, subject=f"job {job.name}",
                    related=related(s.span_of("host"), f"{s.name}'s host"),
                    hint=f"remove it (rtc uses {s.host_ip}) or correct the server's `host`")


def _dp_address(topo: Topology, job, servers):
    head = servers[0]
    if job.dp_address is None:
        return          # the default is the head's host (RTC456 if it has none)
    if head.host_ip is not None and job.dp_address == head.host_ip:
        return
    span = job.span_of("dp_address")
    worker = next((s for s in servers[1:] if s.host_ip == job.dp_address), None)
    where = f"{head.name} ({head.host_ip})" if head.host_ip is not None else head.name
    if worker is not None:
        msg = (f"job {job.name}: dp_address {job.dp_address} is {worker.name}'s host, but "
               f"{worker.name} is a worker; DP rank 0 and its coordinator run on {where}, so "
               f"{worker.name} would wait for a front end on itself")
    else:
        other = next((s for s in topo.servers if s.host_ip == job.dp_address), None)
        if other is None and head.host_ip is None:
            return      # the head's host is not known (a Slurm `srun -w` node): it may be it
        what = f"{other.name}, which is not in the job" if other else "no server of the cluster"
        msg = (f"job {job.name}: dp_address {job.dp_address} is the host of {what}; the DP "
               f"head (rank 0) is {where}")
    yield error(DP_ADDRESS, msg, span, subject=f"job {job.name}",
                related=related(head.span_of("host"), f"{head.name}, the DP head"),
                hint="leave `dp_address` out (rtc uses the first server's host), or declare "
                     "the intended head server first in the job")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (FIXED_HOST_IP, DP_ADDRESS, NO_HOST)
