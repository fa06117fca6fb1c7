"""The per-host port plan: every TCP port a host will bind for the cluster's jobs, with its
owner, and the defaults rtc chose where the user gave none.

What each job binds, and where (``head`` = the job's first server, which runs DP rank 0,
the API server and the Ray head):

==================  =========================================  ===========================
owner               ports                                      hosts
==================  =========================================  ===========================
HCCL host ports     ``HCCL_IF_BASE_PORT`` .. + 15 (CANN < 8.2)  every server of the job
                    or + 31 (CANN 8.2+, or version unknown);
                    default base 60000; ``HCCL_HOST_SOCKET_
                    PORT_RANGE`` replaces the window when set
vLLM API server     ``port`` (``--port``, default 8000)         head (vLLM serving jobs)
DP RPC              ``dp_rpc_port`` (default 29550)             the ``dp_address`` host
                                                                (vLLM, dp > 1, > 1 server)
Ray head (GCS)      ``ray_port`` (default 6379)                 head (jobs run over Ray)
master port         ``master_port`` (default 29501 for vLLM     head (vLLM --nnodes,
                    --nnodes, 29500 for torchrun / torch_npu)   torchrun, torch_npu)
Mooncake KV         ``kv_port`` + global rank of each rank on   every server of the job
                    the host (default kv_port 14579)            (``kv_connector mooncake*``)
AscendDirect-       [20000, 20000 + 1000 x NPUs per server)     every server of a Mooncake
Transport (random)                                              job
==================  =========================================  ===========================

Values the user gave are claimed as written; overlaps between them are errors reported by
:mod:`rtc.checks.port_conflicts`. A value the user did not give starts at its default and moves up
(by the width of what it claims) until it overlaps nothing already claimed on any of its
hosts; jobs are served in declaration order (so the first job on a shared host keeps the
plain defaults). Every value a job uses, given or chosen, is in its :class:`JobPorts`
(:meth:`JobPorts.settings` for emitters); a default that had to move because another job
(or another setting) took it is also recorded in :attr:`JobPorts.assigned` and reported as a
note (RTC444), so that the launch scripts (and the user) use exactly these values.

Everything is linear in (servers x jobs): claims are kept per host, and a host holds a
handful of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.diagnostics import Span
from rtc.model.topology import Job, Topology
from rtc.plan.modes import job_mode
from rtc.network.env import (HCCL_BASE_MAX, HCCL_BASE_MIN, HCCL_DEFAULT_BASE, env_map,
                             hccl_window_size, parse_port_ranges)

DEFAULT_API_PORT = 8000
DEFAULT_DP_RPC_PORT = 29550
DEFAULT_KV_PORT = 14579
DEFAULT_RAY_PORT = 6379                       # ray start --head --port (GCS)
DEFAULT_MASTER_PORT = {"nnodes": 29501,       # vLLM --master-port default
                       "torchrun": 29500}     # torchrun / torch.distributed default
ADXL_BASE = 20000
ADXL_PER_NPU = 1000
MOONCAKE = ("mooncake", "mooncake_layerwise")

KIND_LABEL = {"hccl": "HCCL host ports", "api": "vLLM API server (--port)",
              "dp_rpc": "DP RPC (--data-parallel-rpc-port)", "ray": "Ray head (ray_port)",
              "master": "master port (--master-port, MASTER_PORT)",
              "kv": "Mooncake kv_port", "adxl": "AscendDirectTransport random ports"}


@dataclass(frozen=True)
class PortClaim:
    """Ports ``lo``..``hi`` (inclusive) bound on ``server`` by ``job`` for ``kind``.
    ``assigned`` is True when rtc chose the value; ``span`` points at what set it."""

    server: str
    lo: int
    hi: int
    kind: str
    job: str | None
    span: Span | None
    assigned: bool = False
    detail: str = ""

    @property
    def owner(self) -> str:
        who = f"job {self.job}" if self.job else "the cluster"
        ports = str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"
        notes = [x for x in (self.detail, "chosen by rtc" if self.assigned else "") if x]
        extra = f" ({', '.join(notes)})" if notes else ""
        return f"{who}'s {KIND_LABEL[self.kind]} {ports}{extra}"


@dataclass
class JobPorts:
    """The launch ports of one job: what it uses (given or chosen) and what rtc chose.

    ``head`` is the server running DP rank 0 / the API server / the Ray head;
    ``dp_address`` its address (given or the head's host IP). ``assigned`` maps setting
    names (``HCCL_IF_BASE_PORT``, ``port``, ``dp_rpc_port``, ``kv_port``) to the values rtc
    chose instead of the plain default; ``shares_host_with`` lists the other jobs on any of this job's servers."""

    job: str
    head: str | None = None
    dp_address: object = None
    hccl_base: int | None = None
    hccl_count: int = 32
    hccl_ranges: list = field(default_factory=list)
    port: int | None = None
    dp_rpc_port: int | None = None
    kv_port: int | None = None
    ray_port: int | None = None
    master_port: int | None = None
    assigned: dict = field(default_factory=dict)
    moved_by: dict = field(default_factory=dict)  # setting -> (default, PortClaim on it)
    shares_host_with: list = field(default_factory=list)

    def settings(self) -> dict:
        """Plain launch settings for emitters: env variables and vLLM flags with values
        (only the ones that apply to this job)."""
        out: dict = {}
        if self.hccl_ranges:
            out["HCCL_HOST_SOCKET_PORT_RANGE"] = ",".join(
                str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.hccl_ranges)
        elif self.hccl_base is not None:
            out["HCCL_IF_BASE_PORT"] = self.hccl_base
        for key, flag in (("port", "--port"), ("dp_rpc_port", "--data-parallel-rpc-port"),
                          ("kv_port", "kv_port"), ("ray_port", "ray_port"),
                          ("master_port", "master_port")):
            value = getattr(self, key)
            if value is not None:
                out[flag] = value
        if self.dp_address is not None:
            out["--data-parallel-address"] = str(self.dp_address)
        return out


@dataclass(frozen=True)
class PortProblem:
    """A port setting rtc cannot use as written (e.g. HCCL_IF_BASE_PORT = 70000)."""

    job: str
    key: str
    message: str
    span: Span | None
    hint: str


@dataclass
class PortPlan:
    """Per-host claims (``claims[server name]``), per-job settings (``jobs[name]``) and
    problems with the written values."""

    claims: dict = field(default_factory=dict)
    jobs: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    hccl_reason: str = ""

    def on(self, server: str) -> list[PortClaim]:
        return self.claims.get(server, [])

    def add(self, claim: PortClaim) -> None:
        self.claims.setdefault(claim.server, []).append(claim)

    def free(self, server: str, lo: int, hi: int) -> bool:
        return all(c.hi < lo or c.lo > hi for c in self.claims.get(server, ()))


@dataclass
class _Need:
    key: str            # setting name
    kind: str
    hosts: list         # [(server, offset_lo, offset_hi)]
    default: int
    step: int
    given: int | None
    span: Span | None
    detail: str = ""


def _ranks_by_server(topo, job) -> dict[str, tuple[int, int]]:
    """server -> (lowest, highest) global rank running there (rank-table position when
    the placement is not available)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        pl = topo.placement(job)
        for n in pl.nodes:
            r = n.ranks
            if len(r):
                out[n.name] = (r.start, r.stop - 1)
        return out
    except Exception:  # noqa: BLE001 - placement is optional here; fall back to positions
        pos = 0
        for s, devs in topo.rank_table_members(job):
            if devs:
                out[s.name] = (pos, pos + len(devs) - 1)
            pos += len(devs)
        return out


def _mode(topo: Topology, job: Job) -> str | None:
    """The launch mode of ``job`` (:func:`rtc.plan.modes.job_mode`), or None when the job
    cannot be placed (its errors are reported by the checks)."""
    try:
        return job_mode(topo, job)
    except ValueError:  # no placement: no launch, nothing to reserve
        return None


def plan_ports(topo) -> PortPlan:
    """Build the :class:`PortPlan` of a lowered Topology (see the module docstring)."""
    plan = PortPlan()
    count, reason = hccl_window_size(topo.cann)
    plan.hccl_reason = reason
    by_host: dict = {}
    for s in topo.servers:
        if s.host_ip is not None:
            by_host.setdefault(s.host_ip, s)
    users: dict[str, list[str]] = {}
    for job in topo.jobs:
        for p in job.placements:
            users.setdefault(p.server.name, []).append(job.name)

    needs: dict[str, list[_Need]] = {}
    npus = max(1, topo.preset.devices_per_server)
    for job in topo.jobs:
        jp = JobPorts(job.name, hccl_count=count)
        plan.jobs[job.name] = jp
        servers = [p.server for p in job.placements]
        if not servers:
            continue
        shared = sorted({other for s in servers for other in users.get(s.name, ())
                         if other != job.name})
        jp.shares_host_with = shared
        head = servers[0]
        jp.head = head.name
        if job.framework == "vllm" or job.dp_address is not None:
            jp.dp_address = job.dp_address if job.dp_address is not None else head.host_ip
        env = env_map(job)
        job_needs: list[_Need] = []
        needs[job.name] = job_needs
        names = [s.name for s in servers]

        # HCCL host ports
        base_given = None
        base_span = None
        if "HCCL_HOST_SOCKET_PORT_RANGE" in env:
            text, span = env["HCCL_HOST_SOCKET_PORT_RANGE"]
            ranges, problem = parse_port_ranges(text)
            if problem:
                plan.problems.append(PortProblem(job.name, "HCCL_HOST_SOCKET_PORT_RANGE",
                                                 f"HCCL_HOST_SOCKET_PORT_RANGE={text}: {problem}",
                                                 span, "write ports and ranges such as "
                                                 "60000-60031 or 60000,60010-60020, or auto"))
            elif ranges:
                jp.hccl_ranges = ranges
                for name in names:
                    for lo, hi in ranges:
                        plan.add(PortClaim(name, lo, hi, "hccl", job.name, span,
                                           detail="HCCL_HOST_SOCKET_PORT_RANGE"))
        if not jp.hccl_ranges and "HCCL_IF_BASE_PORT" in env:
            text, span = env["HCCL_IF_BASE_PORT"]
            base_span = span
            if not text.isdigit():
                plan.problems.append(PortProblem(
                    job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={text} is not a port "
                    "number", span, f"write a whole number in {HCCL_BASE_MIN}..{HCCL_BASE_MAX}"))
            elif not HCCL_BASE_MIN <= int(text) <= HCCL_BASE_MAX:
                plan.problems.append(PortProblem(
                    job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={text} is outside "
                    f"{HCCL_BASE_MIN}..{HCCL_BASE_MAX}", span,
                    f"HCCL accepts a base in {HCCL_BASE_MIN}..{HCCL_BASE_MAX}; e.g. "
                    f"{HCCL_DEFAULT_BASE}"))
            else:
                base_given = int(text)
                if base_given + count - 1 > 65535:
                    plan.problems.append(PortProblem(
                        job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={text} with "
                        f"{count} ports runs past 65535 ({reason})", span,
                        f"use a base of at most {65536 - count}"))
        if not jp.hccl_ranges:
            job_needs.append(_Need("HCCL_IF_BASE_PORT", "hccl", [(n, 0, count - 1) for n in names],
                                   HCCL_DEFAULT_BASE, count, base_given, base_span,
                                   f"{count} ports"))

        serving = job.framework == "vllm" and job.role != "train"
        if serving or job.port is not None:
            job_needs.append(_Need("port", "api", [(head.name, 0, 0)], DEFAULT_API_PORT, 1,
                                   job.port, job.span_of("port")))
        if (job.framework == "vllm" and job.dp > 1 and len(servers) > 1
                or job.dp_rpc_port is not None):
            rpc_host = by_host.get(jp.dp_address) if jp.dp_address is not None else None
            if rpc_host is not None:
                job_needs.append(_Need("dp_rpc_port", "dp_rpc", [(rpc_host.name, 0, 0)],
                                       DEFAULT_DP_RPC_PORT, 1, job.dp_rpc_port,
                                       job.span_of("dp_rpc_port"),
                                       f"on {jp.dp_address}"))
        mode, spec = _mode(topo, job), job.launch
        if job.ray_port is not None or mode == "ray":
            job_needs.append(_Need("ray_port", "ray", [(head.name, 0, 0)], DEFAULT_RAY_PORT, 1,
                                   job.ray_port, job.span_of("ray_port")))
        master_default = DEFAULT_MASTER_PORT.get(mode) or \
            (DEFAULT_MASTER_PORT["torchrun"] if job.framework == "torch_npu" else None)
        given_master = spec.master_port
        if master_default is not None or given_master is not None:
            job_needs.append(_Need("master_port", "master", [(head.name, 0, 0)],
                                   master_default or DEFAULT_MASTER_PORT["torchrun"], 1,
                                   given_master, spec.span_of("master_port", job.span)))
        if job.kv_connector in MOONCAKE or job.kv_port is not None:
            ranks = _ranks_by_server(topo, job)
            hosts = [(n, lo, hi) for n, (lo, hi) in ranks.items()]
            width = max((hi for _, _, hi in hosts), default=0) + 1
            if hosts:
                job_needs.append(_Need("kv_port", "kv", hosts, DEFAULT_KV_PORT, width,
                                       job.kv_port, job.span_of("kv_port"
                                                                if job.kv_port is not None
                                                                else "kv_connector"),
                                       "kv_port + global rank"))
        if job.kv_connector in MOONCAKE:
            lo, hi = ADXL_BASE, ADXL_BASE + ADXL_PER_NPU * npus - 1
            for name in names:
                if not any(c.kind == "adxl" for c in plan.on(name)):
                    plan.add(PortClaim(name, lo, hi, "adxl", job.name,
                                       job.span_of("kv_connector"),
                                       detail=f"1000 x {npus} NPUs"))

    # The values the user gave, as written.
    for job in topo.jobs:
        for need in needs.get(job.name, ()):
            if need.given is None:
                continue
            _set(plan.jobs[job.name], need.key, need.given)
            for server, olo, ohi in need.hosts:
                plan.add(PortClaim(server, need.given + olo, min(65535, need.given + ohi),
                                   need.kind, job.name, need.span, detail=need.detail))
    # Defaults, moved past whatever is already claimed on their hosts.
    for job in topo.jobs:
        jp = plan.jobs[job.name]
        for need in needs.get(job.name, ()):
            if need.given is not None:
                continue
            value = need.default
            top = max(ohi for _, _, ohi in need.hosts)
            first_blocker = None
            for _ in range(10_000):
                if value + top > 65535:
                    value = None
                    break
                blocker = _first_conflict(plan, need.hosts, value)
                if blocker is None:
                    break
                claim, olo = blocker
                first_blocker = first_blocker or claim
                # jump past what is in the way (a whole random range at once)
                value = max(value + need.step, claim.hi + 1 - olo)
            else:
                value = None
            if value is None:
                continue
            _set(jp, need.key, value)
            if value != need.default:
                jp.assigned[need.key] = value
                if first_blocker is not None:
                    jp.moved_by[need.key] = (need.default, first_blocker)
            for server, olo, ohi in need.hosts:
                plan.add(PortClaim(server, value + olo, value + ohi, need.kind, job.name,
                                   need.span, assigned=True, detail=need.detail))
    return plan


def _first_conflict(plan: PortPlan, hosts: list, value: int):
    """(claim, offset) of the first existing claim that ``value`` would overlap, or None."""
    for server, olo, ohi in hosts:
        lo, hi = value + olo, value + ohi
        for c in plan.claims.get(server, ()):
            if c.hi >= lo and c.lo <= hi:
                return c, olo
    return None


def _set(jp: JobPorts, key: str, value: int) -> None:
    attr = {"HCCL_IF_BASE_PORT": "hccl_base"}.get(key, key)
    setattr(jp, attr, value)


def overlaps(plan: PortPlan) -> list[tuple[PortClaim, PortClaim]]:
    """Every pair of claims that overlap on one host (each pair once, in host order).
    Two AscendDirectTransport claims never conflict (one shared random range)."""
    out = []
    for server, claims in plan.claims.items():
        ordered = sorted(claims, key=lambda c: (c.lo, c.hi))
        active: list[PortClaim] = []
        for c in ordered:
            active = [a for a in active if a.hi >= c.lo]
            for a in active:
                if a.kind == "adxl" and c.kind == "adxl":
                    continue
                if a.job == c.job and a.kind == c.kind:
                    continue
                out.append((a, c))
            active.append(c)
    return out
