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
NIXL side channel   ``kv_port`` (VLLM_NIXL_SIDE_CHANNEL_PORT,   the servers of a
                    default 5600) + DP rank or + global rank    ``kv_connector nixl`` job
                    (by vLLM release: :mod:`rtc.plan.nixl`)
PD proxy            ``proxy_port`` 8192                         head of a NIXL pair's first
                                                                prefill job
==================  =========================================  ===========================

Values the user gave are claimed as written; overlaps between them are errors reported by
:mod:`rtc.checks.port_conflicts`. A value the user did not give starts at its default and moves up
(by the width of what it claims) until it overlaps nothing already claimed on any of its
hosts; jobs are served in declaration order (so the first job on a shared host keeps the
plain defaults). Every value a job uses, given or chosen, is in its :class:`JobPorts`
(:meth:`JobPorts.settings` for emitters); a default that had to move because another job
(or another setting) took it is also recorded in :attr:`JobPorts.assigned` and reported as a
note (RTC444), so that the launch scripts (and the user) use exactly these values.

Everything is linear in (servers x jobs): claims are kept per host, and choosing the
defaults looks claims up in an index by first port (:class:`_ClaimIndex`), so a host that
holds thousands of them (a playbook of 1,500 launches read as one node) costs no more per
claim than one that holds a handful.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import NamedTuple

from rtc.diagnostics import Span
from rtc.model.topology import Job, Topology
from rtc.plan.disaggregation import pd_pairs
from rtc.plan.modes import job_mode
from rtc.plan.nixl import DEFAULT_PROXY_PORT, side_channel_offsets
from rtc.plan.versions import NIXL_DEFAULT_PORT, parse_version
from rtc.network.env import (HCCL_BASE_MAX, HCCL_BASE_MIN, HCCL_DEFAULT_BASE, env_map,
                             hccl_window_size, parse_port_ranges, shown_value,
                             whole_number)

DEFAULT_API_PORT = 8000
DEFAULT_DP_RPC_PORT = 29550
DEFAULT_KV_PORT = 14579
DEFAULT_RAY_PORT = 6379                       # ray start --head --port (GCS)
DEFAULT_MASTER_PORT = {"nnodes": 29501,       # vLLM --master-port default
                       "torchrun": 29500,     # torchrun / torch.distributed default
                       # SGLang --dist-init-addr HOST:PORT has no default port (it is
                       # required over several nodes); 5000 is rtc's choice, as in SGLang's
                       # multi-node docs examples
                       "sglang-nnodes": 5000}
#: The API port of a framework whose server does not default to vLLM's 8000 (SGLang
#: ServerArgs.port, rtc.plan.sglang_args).
DEFAULT_API_PORTS = {"sglang": 30000}
ADXL_BASE = 20000
ADXL_PER_NPU = 1000
MOONCAKE = ("mooncake", "mooncake_layerwise")

KIND_LABEL = {"hccl": "HCCL host ports", "api": "vLLM API server (--port)",
              "dp_rpc": "DP RPC (--data-parallel-rpc-port)", "ray": "Ray head (ray_port)",
              "master": "master port (--master-port, MASTER_PORT)",
              "kv": "Mooncake kv_port", "adxl": "AscendDirectTransport random ports",
              "nixl": "NIXL side channel (kv_port, VLLM_NIXL_SIDE_CHANNEL_PORT)",
              "proxy": "prefill/decode proxy (--port)"}


class PortClaim(NamedTuple):
    """Ports ``lo``..``hi`` (inclusive) bound on ``server`` by ``job`` for ``kind``.
    ``assigned`` is True when the job does not give the value (rtc used the default, or
    ``moved`` it off a taken default); ``span`` points at what set it."""

    server: str
    lo: int
    hi: int
    kind: str
    job: str | None
    span: Span | None
    assigned: bool = False
    detail: str = ""
    moved: bool = False

    @property
    def owner(self) -> str:
        who = f"job {self.job}" if self.job else "the cluster"
        ports = str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"
        how = ("chosen by rtc" if self.moved else "the default") if self.assigned else ""
        notes = [x for x in (self.detail, how) if x]
        extra = f" ({', '.join(notes)})" if notes else ""
        return f"{who}'s {KIND_LABEL[self.kind]} {ports}{extra}"


class JobPorts:
    """The launch ports of one job: what it uses (given or chosen) and what rtc chose.

    ``head`` is the server running DP rank 0 / the API server / the Ray head;
    ``dp_address`` its address (given or the head's host IP). ``assigned`` maps setting
    names (``HCCL_IF_BASE_PORT``, ``port``, ``dp_rpc_port``, ``kv_port``) to the values rtc
    chose instead of the plain default; ``shares_host_with`` lists the other jobs on any of this job's servers."""

    job: str
    head: str | None
    dp_address: object
    hccl_base: int | None
    hccl_count: int
    hccl_ranges: list
    port: int | None
    dp_rpc_port: int | None
    kv_port: int | None
    ray_port: int | None
    master_port: int | None
    proxy_port: int | None
    assigned: dict
    moved_by: dict  # setting -> (default, PortClaim on it)
    shares_host_with: list

    def __init__(
            self, job: str, head: str | None = None, dp_address: object = None,
            hccl_base: int | None = None, hccl_count: int = 32,
            hccl_ranges: list | None = None, port: int | None = None,
            dp_rpc_port: int | None = None, kv_port: int | None = None,
            ray_port: int | None = None, master_port: int | None = None,
            proxy_port: int | None = None, assigned: dict | None = None,
            moved_by: dict | None = None, shares_host_with: list | None = None) -> None:
        self.job = job
        self.head = head
        self.dp_address = dp_address
        self.hccl_base = hccl_base
        self.hccl_count = hccl_count
        self.hccl_ranges = [] if hccl_ranges is None else hccl_ranges
        self.port = port
        self.dp_rpc_port = dp_rpc_port
        self.kv_port = kv_port
        self.ray_port = ray_port
        self.master_port = master_port
        self.proxy_port = proxy_port
        self.assigned = {} if assigned is None else assigned
        self.moved_by = {} if moved_by is None else moved_by
        self.shares_host_with = [] if shares_host_with is None else shares_host_with

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


class PortProblem(NamedTuple):
    """A port setting rtc cannot use as written (e.g. HCCL_IF_BASE_PORT = 70000)."""

    job: str
    key: str
    message: str
    span: Span | None
    hint: str


class PortPlan:
    """Per-host claims (``claims[server name]``), per-job settings (``jobs[name]``) and
    problems with the written values."""

    claims: dict
    jobs: dict
    problems: list
    hccl_reason: str
    #: NVIDIA GPU hardware: no HCCL host-port window is planned.
    gpu: bool

    def __init__(
            self, claims: dict | None = None, jobs: dict | None = None,
            problems: list | None = None, hccl_reason: str = "", gpu: bool = False) -> None:
        self.claims = {} if claims is None else claims
        self.jobs = {} if jobs is None else jobs
        self.problems = [] if problems is None else problems
        self.hccl_reason = hccl_reason
        self.gpu = gpu

    def on(self, server: str) -> list[PortClaim]:
        return self.claims.get(server, [])

    def add(self, claim: PortClaim) -> None:
        self.claims.setdefault(claim.server, []).append(claim)

    def free(self, server: str, lo: int, hi: int) -> bool:
        return all(c.hi < lo or c.lo > hi for c in self.claims.get(server, ()))


class _Need:
    key: str
    kind: str
    hosts: list
    default: int
    step: int
    given: int | None
    span: Span | None
    detail: str

    def __init__(
            self, key: str, kind: str, hosts: list, default: int, step: int, given: int | None,
            span: Span | None, detail: str = "") -> None:
        self.key = key
        self.kind = kind
        self.hosts = hosts
        self.default = default
        self.step = step
        self.given = given
        self.span = span
        self.detail = detail


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
    except (ValueError, TypeError):  # sizes that cannot be placed: fall back to positions
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
    """Build the :class:`PortPlan` of a lowered Topology (see the module docstring).

    Three passes, jobs in declaration order each time: collect every job's needs (claiming
    the HCCL ranges and AscendDirectTransport ranges on the way), claim the values the user
    gave, then move the defaults past what is claimed."""
    plan = PortPlan(gpu=topo.preset.is_gpu)
    count, reason = hccl_window_size(topo.cann)
    plan.hccl_reason = reason
    needs = _collect_needs(topo, plan, count)
    _claim_given(plan, topo.jobs, needs)
    _claim_defaults(plan, topo.jobs, needs)
    return plan


def _servers_by_host_ip(topo) -> dict:
    """host IP -> the first declared server with that IP (servers without one are left out)."""
    by_host: dict = {}
    for s in topo.servers:
        if s.host_ip is not None:
            by_host.setdefault(s.host_ip, s)
    return by_host


def _jobs_by_server(topo) -> dict[str, list[str]]:
    """server name -> names of the jobs placed on it, in declaration order (a job placed
    twice on a server is listed twice)."""
    users: dict[str, list[str]] = {}
    for job in topo.jobs:
        for p in job.placements:
            users.setdefault(p.server.name, []).append(job.name)
    return users


def _collect_needs(topo, plan: PortPlan, count: int) -> dict[str, list[_Need]]:
    """job name -> the port needs (:class:`_Need`) of each job with servers, jobs in
    declaration order. Records every job's :class:`JobPorts` (HCCL window of ``count``
    ports) in ``plan.jobs``, and adds the claims and problems found on the way to ``plan``."""
    by_host = _servers_by_host_ip(topo)
    users = _jobs_by_server(topo)
    needs: dict[str, list[_Need]] = {}
    npus = max(1, topo.preset.devices_per_server)
    for job in topo.jobs:
        jp = JobPorts(job.name, hccl_count=count)
        plan.jobs[job.name] = jp
        servers = [p.server for p in job.placements]
        if not servers:
            continue
        _set_head(jp, job, servers, users)
        needs[job.name] = _job_needs(topo, plan, job, servers, by_host)
        _claim_adxl(plan, job, [s.name for s in servers], npus)
    return needs


def _set_head(jp: JobPorts, job: Job, servers: list, users: dict) -> None:
    """Fill ``jp.shares_host_with``, ``jp.head`` (the first of ``servers``) and
    ``jp.dp_address`` (vLLM jobs, or one given); returns None."""
    jp.shares_host_with = sorted({other for s in servers for other in users.get(s.name, ())
                                  if other != job.name})
    head = servers[0]
    jp.head = head.name
    if job.framework == "vllm" or job.dp_address is not None:
        jp.dp_address = job.dp_address if job.dp_address is not None else head.host_ip


def _job_needs(topo, plan: PortPlan, job: Job, servers: list, by_host: dict) -> list[_Need]:
    """The port needs of one job with ``servers``, in claim order: HCCL base, API port,
    DP RPC port, Ray head port, master port, Mooncake kv_port (those that apply)."""
    jp = plan.jobs[job.name]
    head = servers[0]
    found = [_hccl_need(plan, job, jp, [s.name for s in servers]),
             _api_need(job, head),
             _dp_rpc_need(job, jp, servers, by_host)]
    mode = _mode(topo, job)
    found += [_ray_need(job, head, mode), _master_need(job, head, mode),
              _nixl_need(topo, job) if job.kv_connector == "nixl" else _kv_need(topo, job),
              _proxy_need(topo, job, head)]
    return [need for need in found if need is not None]


def _hccl_need(plan: PortPlan, job: Job, jp: JobPorts, names: list[str]) -> _Need | None:
    """The ``HCCL_IF_BASE_PORT`` need of ``job`` (a window of ``jp.hccl_count`` ports on
    each server in ``names``), or None when ``HCCL_HOST_SOCKET_PORT_RANGE`` gives the ports
    (then claimed here, as written), or None on NVIDIA GPU servers (no HCCL). Problems with
    either setting go to ``plan.problems``."""
    if plan.gpu:
        return None
    env = env_map(job)
    _claim_hccl_ranges(plan, job, jp, names, env)
    if jp.hccl_ranges:
        return None
    count = jp.hccl_count
    base_given = None
    base_span = None
    if "HCCL_IF_BASE_PORT" in env:
        text, base_span = env["HCCL_IF_BASE_PORT"]
        base_given = _hccl_base_given(plan, job, text, base_span, count)
    return _Need("HCCL_IF_BASE_PORT", "hccl", [(n, 0, count - 1) for n in names],
                 HCCL_DEFAULT_BASE, count, base_given, base_span, f"{count} ports")


def _claim_hccl_ranges(plan: PortPlan, job: Job, jp: JobPorts, names: list[str],
                       env: dict) -> None:
    """Claim ``HCCL_HOST_SOCKET_PORT_RANGE`` (when set and valid) on every server in
    ``names`` and store it in ``jp.hccl_ranges``, or record why it cannot be used;
    returns None."""
    if "HCCL_HOST_SOCKET_PORT_RANGE" not in env:
        return
    text, span = env["HCCL_HOST_SOCKET_PORT_RANGE"]
    ranges, problem = parse_port_ranges(text)
    if problem:
        plan.problems.append(PortProblem(job.name, "HCCL_HOST_SOCKET_PORT_RANGE",
                                         f"HCCL_HOST_SOCKET_PORT_RANGE={shown_value(text)}: "
                                         f"{problem}",
                                         span, "write ports and ranges such as "
                                         "60000-60031 or 60000,60010-60020, or auto"))
    elif ranges:
        jp.hccl_ranges = ranges
        for name in names:
            for lo, hi in ranges:
                plan.add(PortClaim(name, lo, hi, "hccl", job.name, span,
                                   detail="HCCL_HOST_SOCKET_PORT_RANGE"))


def _hccl_base_given(plan: PortPlan, job: Job, text: str, span: Span | None,
                     count: int) -> int | None:
    """The base port ``HCCL_IF_BASE_PORT=text`` gives, or None when it is not a port in
    HCCL's range. A problem is recorded for that, and for a window of ``count`` ports
    running past 65535 (the base is still returned then)."""
    base_given = whole_number(text) if text[:1] != "-" else None
    if base_given is None:
        plan.problems.append(PortProblem(
            job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={shown_value(text)} is not a port "
            "number", span, f"write a whole number in {HCCL_BASE_MIN}..{HCCL_BASE_MAX} "
            "(ASCII digits 0-9)"))
        return None
    if not HCCL_BASE_MIN <= base_given <= HCCL_BASE_MAX:
        plan.problems.append(PortProblem(
            job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={text} is outside "
            f"{HCCL_BASE_MIN}..{HCCL_BASE_MAX}", span,
            f"HCCL accepts a base in {HCCL_BASE_MIN}..{HCCL_BASE_MAX}; e.g. "
            f"{HCCL_DEFAULT_BASE}"))
        return None
    if base_given + count - 1 > 65535:
        plan.problems.append(PortProblem(
            job.name, "HCCL_IF_BASE_PORT", f"HCCL_IF_BASE_PORT={text} with "
            f"{count} ports runs past 65535 ({plan.hccl_reason})", span,
            f"use a base of at most {65536 - count}"))
    return base_given


def _api_need(job: Job, head) -> _Need | None:
    """The vLLM API server ``port`` need (one port on ``head``), or None when the job
    serves no API and gives no ``port``."""
    serving = job.framework in ("vllm", "sglang") and job.role != "train"
    if serving or job.port is not None:
        return _Need("port", "api", [(head.name, 0, 0)],
                     DEFAULT_API_PORTS.get(job.framework, DEFAULT_API_PORT), 1,
                     job.port, job.span_of("port"))
    return None


def _dp_rpc_need(job: Job, jp: JobPorts, servers: list, by_host: dict) -> _Need | None:
    """The ``dp_rpc_port`` need (one port on the server whose host IP is
    ``jp.dp_address``), or None when the job needs none or no server has that address."""
    if (job.framework == "vllm" and job.dp > 1 and len(servers) > 1
            or job.dp_rpc_port is not None):
        rpc_host = by_host.get(jp.dp_address) if jp.dp_address is not None else None
        if rpc_host is not None:
            return _Need("dp_rpc_port", "dp_rpc", [(rpc_host.name, 0, 0)],
                         DEFAULT_DP_RPC_PORT, 1, job.dp_rpc_port,
                         job.span_of("dp_rpc_port"), f"on {jp.dp_address}")
    return None


def _ray_need(job: Job, head, mode: str | None) -> _Need | None:
    """The Ray head ``ray_port`` need (one port on ``head``), or None when the job does
    not run over Ray and gives no ``ray_port``."""
    if job.ray_port is not None or mode == "ray":
        return _Need("ray_port", "ray", [(head.name, 0, 0)], DEFAULT_RAY_PORT, 1,
                     job.ray_port, job.span_of("ray_port"))
    return None


def _master_need(job: Job, head, mode: str | None) -> _Need | None:
    """The ``master_port`` need (one port on ``head``; default by launch ``mode``), or
    None when the job's launch uses no master port and none is given."""
    spec = job.launch
    master_default = DEFAULT_MASTER_PORT.get(mode) or \
        (DEFAULT_MASTER_PORT["torchrun"] if job.framework == "torch_npu" else None)
    given_master = spec.master_port
    if master_default is not None or given_master is not None:
        return _Need("master_port", "master", [(head.name, 0, 0)],
                     master_default or DEFAULT_MASTER_PORT["torchrun"], 1,
                     given_master, spec.span_of("master_port", job.span))
    return None


def _kv_need(topo, job: Job) -> _Need | None:
    """The Mooncake ``kv_port`` need (``kv_port`` + global rank on each server, so the
    width is the world size), or None for a job without Mooncake, ``kv_port`` or ranks."""
    if job.kv_connector in MOONCAKE or job.kv_port is not None:
        ranks = _ranks_by_server(topo, job)
        hosts = [(n, lo, hi) for n, (lo, hi) in ranks.items()]
        width = max((hi for _, _, hi in hosts), default=0) + 1
        if hosts:
            return _Need("kv_port", "kv", hosts, DEFAULT_KV_PORT, width,
                         job.kv_port, job.span_of("kv_port"
                                                  if job.kv_port is not None
                                                  else "kv_connector"),
                         "kv_port + global rank")
    return None


def _nixl_need(topo, job: Job) -> _Need | None:
    """The NIXL side-channel need (``kv_port`` + the offsets of
    :func:`rtc.plan.nixl.side_channel_offsets` on each server), or None without ranks."""
    offsets = side_channel_offsets(topo, job, parse_version(topo.vllm_version))
    hosts = [(n, lo, hi) for n, (lo, hi) in offsets.items()]
    if not hosts:
        return None
    width = max(hi for _, _, hi in hosts) + 1
    return _Need("kv_port", "nixl", hosts, NIXL_DEFAULT_PORT, width, job.kv_port,
                 job.span_of("kv_port" if job.kv_port is not None else "kv_connector"),
                 "VLLM_NIXL_SIDE_CHANNEL_PORT + DP rank")


def _proxy_need(topo, job: Job, head) -> _Need | None:
    """The prefill/decode proxy's port (one port on ``head``) for the first prefill job of
    a complete NIXL pair, else None."""
    if job.kv_connector != "nixl" or job.role != "prefill":
        return None
    for pair in pd_pairs(topo):
        if pair.prefill and pair.decode and pair.prefill[0] is job:
            return _Need("proxy_port", "proxy", [(head.name, 0, 0)], DEFAULT_PROXY_PORT, 1,
                         None, job.span_of("kv_connector"))
    return None


def _claim_adxl(plan: PortPlan, job: Job, names: list[str], npus: int) -> None:
    """Claim AscendDirectTransport's random range (ports 20000 .. + 1000 x ``npus`` - 1)
    for a Mooncake job on each server in ``names`` that has none yet; returns None."""
    if job.kv_connector not in MOONCAKE:
        return
    lo, hi = ADXL_BASE, ADXL_BASE + ADXL_PER_NPU * npus - 1
    for name in names:
        if not any(c.kind == "adxl" for c in plan.on(name)):
            plan.add(PortClaim(name, lo, hi, "adxl", job.name, job.span_of("kv_connector"),
                               detail=f"1000 x {npus} NPUs"))


def _claim_given(plan: PortPlan, jobs: list, needs: dict) -> None:
    """Claim every value the user gave, as written (jobs in order, needs in order), and
    store it in the job's :class:`JobPorts`; returns None."""
    for job in jobs:
        for need in needs.get(job.name, ()):
            if need.given is None:
                continue
            _set(plan.jobs[job.name], need.key, need.given)
            top = need.given + max(ohi for _, _, ohi in need.hosts)
            if top > 65535 and need.kind != "hccl":   # the HCCL window: _hccl_base_given
                what = need.detail or "its ports"
                plan.problems.append(PortProblem(
                    job.name, need.key, f"{need.key} {need.given} ({what}) runs past 65535 "
                    f"(up to {top})", need.span,
                    f"use a {need.key} of at most {need.given - (top - 65535)}"))
            for server, olo, ohi in need.hosts:
                if need.given + olo <= 65535:   # the part past 65535 is the problem above
                    plan.add(PortClaim(server, need.given + olo, min(65535, need.given + ohi),
                                       need.kind, job.name, need.span, detail=need.detail))


def _claim_defaults(plan: PortPlan, jobs: list, needs: dict) -> None:
    """Give every need without a value the first free value from its default up (jobs in
    order, needs in order), claim it and store it in the job's :class:`JobPorts`, noting a
    moved default in ``assigned`` / ``moved_by``; a need with no free port is skipped.
    Returns None. Linear in the needs: claims are looked up in a :class:`_ClaimIndex`, and
    a need like an earlier one resumes that one's search (``resume``)."""
    index = _ClaimIndex(plan)
    resume: dict = {}
    for job in jobs:
        jp = plan.jobs[job.name]
        for need in needs.get(job.name, ()):
            if need.given is not None:
                continue
            value, first_blocker = _free_value(index, need, resume)
            if value is None:
                continue
            _set(jp, need.key, value)
            if value != need.default:
                jp.assigned[need.key] = value
                if first_blocker is not None:
                    jp.moved_by[need.key] = (need.default, first_blocker)
            for server, olo, ohi in need.hosts:
                claim = PortClaim(server, value + olo, value + ohi, need.kind, job.name,
                                  need.span, assigned=True, detail=need.detail,
                                  moved=value != need.default)
                plan.add(claim)
                index.add(claim)


#: Most moves of one default before rtc gives up on it.
_MAX_MOVES = 10_000


def _free_value(index: "_ClaimIndex", need: _Need,
                resume: dict | None = None) -> tuple[int | None, PortClaim | None]:
    """(value, first blocker): the first value (a port) from ``need.default`` up whose
    ports overlap nothing claimed on the need's hosts, and the first claim that was in the
    way (None if the default was free). The value is None when the ports would run past
    65535 or :data:`_MAX_MOVES` moves found nothing.

    ``resume`` (shape -> (value, moves, first blocker)) carries the search of a one-host
    need of the same shape (key, kind, host, default, step) on: claims are only ever
    added, after the ones already on the host, so such a need walks the same values and
    meets the same first blockers up to where the earlier one stopped (1,500 torchrun
    launches on one host walked 1.1 million values before). A need on several hosts
    starts afresh: a claim added since on an earlier host may block it first."""
    shape = (need.key, need.kind, tuple(need.hosts), need.default, need.step) \
        if resume is not None and len(need.hosts) == 1 else None
    value, moves, first_blocker = resume.get(shape, (need.default, 0, None)) \
        if shape is not None else (need.default, 0, None)
    top = max(ohi for _, _, ohi in need.hosts)
    found = None
    while moves < _MAX_MOVES:
        if value + top > 65535:
            break
        blocker = _first_conflict(index, need.hosts, value)
        if blocker is None:
            found = value
            break
        claim, olo = blocker
        first_blocker = first_blocker or claim
        # jump past what is in the way (a whole random range at once)
        value = max(value + need.step, claim.hi + 1 - olo)
        moves += 1
    if shape is not None:
        resume[shape] = (value, moves, first_blocker)
    return found, first_blocker


def _first_conflict(index: "_ClaimIndex", hosts: list, value: int):
    """(claim, offset) of the first existing claim that ``value`` would overlap (hosts in
    order, each host's claims in the order claimed), or None."""
    for server, olo, ohi in hosts:
        c = index.first(server, value + olo, value + ohi)
        if c is not None:
            return c, olo
    return None


#: Claims of at most this many ports are found by bisection on their first port; wider
#: ones (AscendDirectTransport's random range, long kv ranges) are few and scanned.
_NARROW = 64


class _ClaimIndex:
    """The claims of a :class:`PortPlan` by host, answering "the claim first claimed among
    those overlapping ports lo..hi of a host" (what a scan of ``plan.claims[host]`` finds)
    in O(log n + ports of one narrow claim) instead of O(claims on the host). Each
    distinct (host, lo, hi) is kept once, with its first claim: a later identical claim is
    never the first to overlap anything."""

    def __init__(self, plan: PortPlan) -> None:
        self._seen: set = set()
        self._narrow: dict = {}     # server -> sorted [(lo, order, hi, claim)]
        self._wide: dict = {}       # server -> [(order, claim)] in order claimed
        for claims in plan.claims.values():
            for c in claims:
                self.add(c)

    def add(self, c: PortClaim) -> None:
        """Index claim ``c`` (claimed after every claim indexed so far)."""
        key = (c.server, c.lo, c.hi)
        if key in self._seen:
            return
        self._seen.add(key)
        order = len(self._seen)     # 1, 2, ... in the order claimed
        if c.hi - c.lo < _NARROW:
            insort(self._narrow.setdefault(c.server, []), (c.lo, order, c.hi, c))
        else:
            self._wide.setdefault(c.server, []).append((order, c))

    def first(self, server: str, lo: int, hi: int) -> PortClaim | None:
        """The first-claimed claim on ``server`` overlapping ports ``lo``..``hi``, or None."""
        best = next(((order, c) for order, c in self._wide.get(server, ())
                     if c.hi >= lo and c.lo <= hi), None)
        rows = self._narrow.get(server)
        if rows:
            start = bisect_left(rows, (lo - _NARROW + 1,))
            end = bisect_right(rows, (hi, _AFTER_ALL))
            for _clo, order, chi, c in rows[start:end]:
                if chi >= lo and (best is None or order < best[0]):
                    best = (order, c)
        return None if best is None else best[1]


#: Compares after every claim's order number (bisection past the rows starting at ``hi``).
_AFTER_ALL = float("inf")


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
