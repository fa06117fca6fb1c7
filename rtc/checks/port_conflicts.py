"""Ports (RTC440-RTC445): every port a host binds, from the port plan
(:mod:`rtc.plan.ports`), and the CANN version that decides HCCL's window.

Overlaps are folded by their owners (one finding for "job a's HCCL window vs job b's HCCL
window" however many hosts it happens on), with the number of hosts and the first one.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error, note, warning
from rtc.network.env import cann_problem
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.ports import KIND_LABEL, PortPlan, overlaps
from rtc.rules import rule

CONFLICT = rule("RTC440", "port-conflict", "error",
                "Two owners bind overlapping ports on one host.", """
    What: on one server, two jobs (or two settings of one job) use the same port: e.g.
    both jobs' HCCL host port windows start at HCCL_IF_BASE_PORT=60000, or the API port
    lies inside the HCCL window.
    Why: the second bind fails with "Address already in use": HCCL fails to build its
    communicator (root info / host socket errors), vLLM's API server or DP coordinator
    does not start, or one job connects to the other job's listener.
    Example: jobs prefill and decode on atlas-01 both with
    `env HCCL_IF_BASE_PORT = 60000` (CANN 8.2: ports 60000-60031 each).
    Fix: move one of them (e.g. HCCL_IF_BASE_PORT = 60032, or another `port`); leave the
    setting out and rtc picks a free value.""")
BAD_HCCL_PORT = rule("RTC441", "bad-hccl-port", "error",
                     "HCCL_IF_BASE_PORT / HCCL_HOST_SOCKET_PORT_RANGE has an invalid value.", """
    What: HCCL_IF_BASE_PORT is not a number in 1024..65520, its window (16 ports before
    CANN 8.2, 32 from 8.2) runs past 65535, or HCCL_HOST_SOCKET_PORT_RANGE is not a list of
    ports / LOW-HIGH ranges (or `auto`).
    Why: HCCL rejects the setting at init ("HCCL_IF_BASE_PORT is invalid") or binds ports
    outside what was reserved, and the communicator is not created.
    Example: `env HCCL_IF_BASE_PORT = 70000`.
    Fix: use a base in 1024..65520 (60000 is the default) and reserve the window with
    `sysctl -w net.ipv4.ip_local_reserved_ports=60000-60031`.""")
PORT_RANGE = rule("RTC446", "port-past-65535", "error",
                  "A port setting plus the ports it implies runs past 65535.", """
    What: e.g. `kv_port 65530` in a Mooncake job: each rank listens on kv_port + its global
    rank, so a job with more than 5 ranks needs ports above 65535.
    Why: those ports do not exist; the ranks past the limit fail to bind and the KV
    transfer (or the launch) fails.
    Example: `kv_port 65530` with 32 ranks.
    Fix: use a value low enough for every rank (the hint gives the largest).""")
KV_IN_ADXL = rule("RTC442", "kv-port-in-transfer-range", "error",
                  "A Mooncake kv_port range lies inside AscendDirectTransport's random port range.", """
    What: kv_port + rank (the ports Mooncake's workers listen on) overlaps
    [20000, 20000 + 1000 x NPUs per server), where the AscendDirectTransport picks random
    ports.
    Why: sooner or later the transfer engine picks a port a worker needs (or the other way
    round) and one of them dies with `zmq.error.ZMQError: Address already in use`, at
    random, often only under load.
    Example: `kv_port 20001` on 8-NPU A2 servers (random range 20000-27999).
    Fix: use kv_port >= 28000 with 8 NPUs per server, >= 36000 with 16.""")
SHARED_DP = rule("RTC443", "shared-dp-endpoint", "error",
                 "Two independent DP groups use one --data-parallel-address and rpc port.", """
    What: two jobs whose DP heads are the same host use the same `dp_rpc_port`.
    Why: each DP head binds its coordinator socket on address:rpc-port; the second cannot,
    and engines of one group may handshake with the other group's head ("unexpected data
    parallel rank") or wait 5 minutes and fail ("Did not receive response from front-end
    process within 5 minutes").
    Example: prefill and decode heads on one host, both `dp_rpc_port 12321`.
    Fix: give each DP group its own rpc port (e.g. 12321 and 12322), or leave `dp_rpc_port`
    out and rtc picks distinct ones.""")
ASSIGNED = rule("RTC444", "assigned-ports", "note",
                "rtc moved a port default because another job or setting on the host takes it.", """
    What: settings the description leaves out (HCCL_IF_BASE_PORT, `port`, `dp_rpc_port`,
    `kv_port`) get their defaults (60000, 8000, 29550, 14579); when a default is already
    taken on one of the job's hosts (another job on the same server, or another setting),
    rtc moves it to the next free value and says which. Jobs are served in declaration
    order, so the first job on a server keeps the defaults.
    Why: with the defaults, two jobs on one host would bind the same ports.
    Example: prefill and decode on atlas-01: prefill keeps HCCL_IF_BASE_PORT 60000, decode
    gets 60032.
    Fix: nothing, if the launch uses these values (rtc's launch scripts do); or write the
    values you want.""")

CANN_VERSION = rule("RTC445", "unknown-cann-version", "warning",
                    "The cluster's `cann` is not a CANN release rtc knows.", """
    What: `cann banana`, or a version line rtc has no record of (`cann 4.0`).
    Why: the CANN version decides how many host ports HCCL takes from HCCL_IF_BASE_PORT
    (16 before 8.2, 32 from 8.2 on); with an unknown version rtc assumes 32, which may
    plan one job's window on top of another's on a CANN that uses more, or waste ports.
    Example: `cann 8.2RC1` (the dot before RC is missing).
    Fix: write the version `npu-smi info` / `cat /usr/local/Ascend/ascend-toolkit/latest/
    version.cfg` reports, e.g. `cann 8.2.RC1`.""")

_SETTING = {"HCCL_IF_BASE_PORT": "env HCCL_IF_BASE_PORT", "port": "port",
            "dp_rpc_port": "dp_rpc_port", "kv_port": "kv_port", "ray_port": "ray_port",
            "proxy_port": "the prefill/decode proxy's port"}
#: How a moved default is named where it differs from "the default <setting>".
_DEFAULT_OF = {"proxy_port": "the prefill/decode proxy's default port"}


def check(topo: Topology, plan: Plan):
    problem = cann_problem(topo.cann)
    if problem:
        yield warning(CANN_VERSION, f"{problem}, so HCCL's host port window may be planned "
                      f"wrong ({plan.ports.hccl_reason})", topo.span_of("cann"),
                      hint="write the version the servers run, e.g. `cann 8.2.RC1`")
    ports = plan.ports
    for p in ports.problems:
        yield error(BAD_HCCL_PORT if p.key.startswith("HCCL_") else PORT_RANGE, f"job {p.job}: {p.message}", p.span, hint=p.hint,
                    subject=f"job {p.job}")
    kept, stacks = _stacks(ports)
    yield from _capped(topo, _folded(overlaps(PortPlan(claims=kept))))
    yield from _stack_findings(stacks)
    for job in topo.jobs:
        jp = ports.jobs.get(job.name)
        if jp is None or not jp.assigned:
            continue
        yield _assigned(job, jp)


def _assigned(job, jp):
    """The RTC444 note of a job some of whose ports rtc chose (``jp.assigned``): which
    defaults were taken and by what, what rtc chose, and how to pin or move each."""
    chosen = ", ".join(f"{_SETTING.get(k, k)} {v}" for k, v in jp.assigned.items())
    why = "; ".join(f"{_DEFAULT_OF.get(k, 'the default ' + _SETTING.get(k, k))} {default} "
                    f"lies in {c.owner}" for k, (default, c) in jp.moved_by.items()) or \
        (f"it shares servers with job{'s' if len(jp.shares_host_with) > 1 else ''} "
         f"{', '.join(jp.shares_host_with)}" if jp.shares_host_with
         else "a default port was already taken")
    own = [k for k in jp.assigned if k != "proxy_port"]
    hint = "launch with these values (rtc's launch scripts do)"
    if own:
        hint += (", or write " + ", ".join(_SETTING.get(k, k) for k in own)
                 + " in the job to pin " + ("it" if len(own) == 1 else "them"))
    if "proxy_port" in jp.assigned:
        hint += ("; the proxy's port has no attribute: proxy-<pair>.sh gets 8192, or the "
                 "next free port when a setting of the plan holds 8192, so to keep 8192 "
                 "give that setting another value (e.g. the job's `port`)")
    return note(ASSIGNED, f"job {job.name}: {why}; rtc chose {chosen} (not given in the job)",
                job.span, subject=f"job {job.name}", hint=hint)


def _folded(pairs) -> dict:
    """The overlapping ``pairs`` folded by owners: (rule, target job, kind, first port,
    other job, kind, first port) -> [target, other, number of pairs (hosts)]. The target
    is the claim the user wrote (rtc never moves a default onto a taken port), the later
    one in the source when both are."""
    folded: dict = {}
    for a, b in pairs:
        kinds = {a.kind, b.kind}
        if kinds == {"kv", "adxl"}:
            code = KV_IN_ADXL
        elif kinds == {"dp_rpc"} and a.job != b.job:
            code = SHARED_DP
        else:
            code = CONFLICT
        target = _target([c for c in (a, b) if c.span is not None and not c.assigned]
                         or [a, b])
        other = b if target is a else a
        key = (code, target.job, target.kind, target.lo, other.job, other.kind, other.lo)
        got = folded.get(key)
        if got is None:
            folded[key] = [target, other, 1]
        else:
            got[2] += 1
    return folded


def _target(claims: list):
    """The claim of ``claims`` latest in the source (the first of equals)."""
    return max(claims, key=lambda c: (c.span.line, c.span.column) if c.span else (0, 0))


#: More claims of one port range and kind on one host than this are one finding (a
#: "stack") instead of a finding per pair: 1,500 launches of port 8000 in a playbook were
#: 1.1 million pairs to fold (~20 s).
MAX_STACK = 64


def _stacks(ports) -> tuple[dict, dict]:
    """(claims to pair, stacks): ``ports.claims`` with each stack of more than
    :data:`MAX_STACK` claims of one (first port, last port, kind) on a host cut to its
    first claim, and those stacks by (rule, kind, lo, hi, jobs) -> [target, hosts, server,
    claims]. A stack's first claim still meets the other claims of its host."""
    kept: dict = {}
    stacks: dict = {}
    for server, claims in ports.claims.items():
        groups: dict = {}
        for c in claims:
            groups.setdefault((c.lo, c.hi, c.kind), []).append(c)
        big = {k: g for k, g in groups.items() if len(g) > MAX_STACK}
        if not big:
            kept[server] = claims
            continue
        kept[server] = [c for c in claims
                        if (c.lo, c.hi, c.kind) not in big or c is big[c.lo, c.hi, c.kind][0]]
        for (lo, hi, kind), group in big.items():
            jobs = tuple(dict.fromkeys(c.job for c in group))
            if len(jobs) < 2 or kind == "adxl":   # one job's claims, or one random range
                continue
            code = SHARED_DP if kind == "dp_rpc" else CONFLICT
            got = stacks.get((code, kind, lo, hi, jobs))
            if got is None:
                target = _target([c for c in group if c.span is not None and not c.assigned]
                                 or group)
                stacks[code, kind, lo, hi, jobs] = [target, 1, server, len(group)]
            else:
                got[1] += 1
    return kept, stacks


def _stack_findings(stacks: dict):
    """One finding per stack of :func:`_stacks`: how many jobs bind the ports, the first
    three by name, the host (and how many more), at the claim written last."""
    for (code, kind, lo, hi, jobs), (target, hosts, server, count) in stacks.items():
        where = f"on {server}" + (f" (and {hosts - 1} more host{'s' if hosts > 2 else ''})"
                                  if hosts > 1 else "")
        ports = str(lo) if lo == hi else f"{lo}-{hi}"
        named = ", ".join(f"job {j}" for j in jobs[:3])
        rest = f" and {len(jobs) - 3} more" if len(jobs) > 3 else ""
        yield error(code, f"{where}: {len(jobs)} jobs ({count} claims) bind the same "
                    f"{KIND_LABEL[kind]} {ports} ({named}{rest}); only the first to start "
                    "gets it", target.span, hint="give each job on this host its own ports",
                    subject=f"server {server}")


#: Most overlaps reported for one port claim; the rest are counted in one more finding
#: (1,500 launches of one port on a host were 1.1 million pairs, 6.6 GB of findings).
MAX_PER_CLAIM = 5


def _capped(topo, folded: dict):
    """The findings of the ``folded`` overlaps, at most :data:`MAX_PER_CLAIM` per claim
    reported (by rule, job, kind and first port), then one that counts the others."""
    shown: dict = {}
    for (code, *_rest), (target, other, hosts) in folded.items():
        entry = shown.setdefault((code, target.job, target.kind, target.lo), [target, 0, []])
        entry[1] += 1
        if entry[1] <= MAX_PER_CLAIM:
            yield _overlap(topo, code, target, other, hosts)
        elif len(entry[2]) < 3:
            entry[2].append(other.owner)
    for (code, *_rest), (target, count, named) in shown.items():
        if count > MAX_PER_CLAIM:
            more = count - MAX_PER_CLAIM
            yield error(code, f"on {target.server}: {target.owner} also overlaps {more} "
                        f"more claim{'s' if more > 1 else ''} ({', '.join(named)}"
                        f"{', ...' if more > len(named) else ''})",
                        target.span, hint="give each job on this host its own ports",
                        subject=f"server {target.server}")


def _overlap(topo, code, target, other, hosts: int):
    where = f"on {target.server}" + (f" (and {hosts - 1} more host{'s' if hosts > 2 else ''})"
                                     if hosts > 1 else "")
    msg = f"{where}: {target.owner} overlaps {other.owner}"
    span = target.span
    if code == KV_IN_ADXL:
        kv = target if target.kind == "kv" else other
        npus = topo.preset.devices_per_server
        hint = (f"use a kv_port of at least {20000 + 1000 * npus} "
                f"({npus} NPUs per server), clear of the transport's random ports")
        span = kv.span or span
    elif code == SHARED_DP:
        server = topo.server(target.server)
        addr = server.host_ip if server is not None and server.host_ip is not None \
            else target.server
        msg = (f"jobs {other.job} and {target.job} are independent DP groups but both use "
               f"{addr}:{target.lo} as --data-parallel-address:--data-parallel-rpc-port; the "
               "second head cannot bind it and engines may reach the wrong head")
        hint = "give each DP group its own dp_rpc_port (or leave it out and rtc picks one)"
    else:
        hint = _conflict_hint(target, other)
    related = [Related(other.span, other.owner)] if other.span is not None else []
    return error(code, msg, span, hint=hint, related=related, subject=f"server {target.server}")


#: The job attribute that sets the ports of a claim kind (for hints).
_KIND_SETTING = {"hccl": "env HCCL_IF_BASE_PORT", "api": "port", "dp_rpc": "dp_rpc_port",
                 "kv": "kv_port", "ray": "ray_port", "master": "master_port"}


def _conflict_hint(a, b) -> str:
    """How to part claims ``a`` (the one reported) and ``b``. Claims of jobs in different
    files were each planned alone, so leaving a value out does not help there: one job
    must be given another value."""
    apart = a.span is not None and b.span is not None and a.span.file != b.span.file
    job = a.job or "?"
    if apart and ":" in job:             # "FILE:JOB" across files
        job = "{1} of {0}".format(*job.rsplit(":", 1))
    if {a.kind, b.kind} == {"hccl"}:
        window = a.hi - a.lo + 1
        hint = ("give each job on a host its own HCCL window, e.g. HCCL_IF_BASE_PORT "
                f"{a.lo} and {a.lo + window}")
        if apart:
            return hint + (f" (each file is planned on its own: write `env HCCL_IF_BASE_PORT = "
                           f"{a.lo + window}` in job {job})")
        return hint + ("" if a.assigned and b.assigned else " (or leave it out and rtc picks)")
    if a.kind == b.kind:
        setting = _KIND_SETTING.get(a.kind)
        fix = (f"give job {job} another {setting}, e.g. `{setting} {a.hi + 1}`" if setting
               else f"give job {job} another {KIND_LABEL[a.kind]}")
        if apart:
            fix += " (each file is planned on its own, so rtc cannot move a default for you)"
        return fix
    return f"move {KIND_LABEL[a.kind]} or {KIND_LABEL[b.kind]} to a free port"

#: The rules this module reports (collected by rtc.catalogue).
RULES = (CONFLICT, CANN_VERSION, PORT_RANGE, BAD_HCCL_PORT, KV_IN_ADXL, SHARED_DP, ASSIGNED)
