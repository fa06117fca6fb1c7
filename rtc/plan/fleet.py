"""The fleet plan: which server runs which of the files ``rtc compile --out-dir`` writes,
for the engines operators already use to run a command on every node (Slurm, Ansible,
Kubernetes Jobs; rendered by :mod:`rtc.emit.slurm`, :mod:`rtc.emit.ansible`,
:mod:`rtc.emit.k8s_preflight`). rtc has no runner of its own: these engines copy and start
the per-node files, and bring the preflight results back for ``rtc preflight report``.

Shapes: a :class:`FleetPlan` holds one :class:`FleetJob` per job with a launch (its nodes
in the plan's order, the head first) and one :class:`FleetHost` per server of the
preflight. Names are file names inside the ``--out-dir`` folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.model.topology import Topology
from rtc.textfmt import ip_text

#: The folder (relative to where the engine runs) the preflight results come back to,
#: one sub-folder per server: the default of ``preflight-<server>.sh`` itself.
RESULTS_DIR = "preflight-results"

#: Files every node of a job needs besides its own and its job's rank table: name prefixes
#: of the prefill/decode tables.
_SHARED = ("pd-ranktable", "global-ranktable")


@dataclass
class FleetNode:
    """One server's part of a job: its host address, device count and files."""

    server: str
    host: str | None
    devices: int
    env_file: str
    launch_file: str
    head: bool
    files: list[str] = field(default_factory=list)     # every file the node needs


@dataclass
class FleetJob:
    name: str
    nodes: list[FleetNode]

    @property
    def head(self) -> FleetNode:
        return next((n for n in self.nodes if n.head), self.nodes[0])

    @property
    def workers(self) -> list[FleetNode]:
        head = self.head
        return [n for n in self.nodes if n is not head]


@dataclass
class FleetHost:
    """A server of the preflight: its host address, devices in use and script."""

    server: str
    host: str | None
    devices: int
    script: str


@dataclass
class FleetPlan:
    source: str
    gpu: bool                       # NVIDIA GPUs (else Ascend NPUs)
    jobs: list[FleetJob]
    preflight: list[FleetHost]
    report: str                     # the command that judges the results: report / nccl
    #: NIXL prefill/decode proxies, one one-node "job" each (started after the jobs)
    proxies: list[FleetJob] = field(default_factory=list)

    def proxy_on(self, job: FleetJob) -> FleetJob | None:
        """The proxy that runs on ``job``'s head server, if any."""
        return next((p for p in self.proxies if p.nodes[0].server == job.head.server), None)

    @property
    def hosts(self) -> list[str]:
        """Every server named by a job or the preflight, in plan order, once each."""
        seen: dict[str, None] = {}
        for j in self.jobs + self.proxies:
            for n in j.nodes:
                seen.setdefault(n.server)
        for h in self.preflight:
            seen.setdefault(h.server)
        return list(seen)

    def host_ip(self, server: str) -> str | None:
        for h in self.preflight:
            if h.server == server:
                return h.host
        return next((n.host for j in self.jobs for n in j.nodes if n.server == server), None)


def plan_fleet(topo: Topology, plan, jobs: list, names: list[str], launch_files: dict,
               env_files: dict, source: str, tables: dict | None = None) -> FleetPlan:
    """The fleet plan of ``jobs`` (Topology jobs; None entries are skipped) from the
    compiled ``plan`` and the bundle's file ``names`` / ``launch_files`` / ``env_files``
    (``(server, job) -> file name``, as :class:`rtc.emit.bundle.Bundle` holds them);
    ``tables`` maps job names to their rank table file."""
    tables = tables or {}
    shared = [n for n in names if n.startswith(_SHARED) and n.endswith(".json")]
    have = set(names)
    out = []
    for job in (j for j in jobs if j is not None):
        jl = plan.launches.get(job.name)
        if jl is None or not jl.nodes:
            continue
        nodes = []
        for nl in jl.nodes:
            key = (nl.server.name, job.name)
            if key not in launch_files:
                continue
            own = [f for f in (f"mindie-{nl.stem}.json", f"nccl-topo-{nl.server.name}.xml",
                               f"topo-{nl.server.name}.json") if f in have]
            table = [tables[job.name]] if job.name in tables else []
            nodes.append(FleetNode(nl.server.name, _ip(nl.server.host_ip),
                                   len(nl.node.device_ids), env_files[key], launch_files[key],
                                   nl.head, [env_files[key], launch_files[key]] + own + table
                                   + shared))
        if nodes:
            out.append(FleetJob(job.name, nodes))
    used = _devices(jobs)
    pre = [FleetHost(s.name, _ip(s.host_ip), len(used.get(s.name, ())) or len(s.devices),
                     f"preflight-{s.name}.sh")
           for s in topo.servers if f"preflight-{s.name}.sh" in have]
    return FleetPlan(source, topo.preset.is_gpu, out, pre,
                     "nccl" if topo.preset.is_gpu else "report", _proxies(plan, have))


def _proxies(plan, have: set) -> list[FleetJob]:
    """A one-node "job" ``proxy-<pair>`` for each NIXL prefill/decode proxy script written
    (:class:`rtc.plan.nixl.PdProxy`: on the head of the pair's first prefill job), started
    after the jobs it sends requests to."""
    out = []
    for px in getattr(plan, "proxies", ()):
        script = f"proxy-{px.name}.sh"
        if script in have:
            out.append(FleetJob(f"proxy-{px.name}", [FleetNode(
                px.server.name, _ip(px.server.host_ip), 0, "", script, True, [script])]))
    return out


def _ip(addr) -> str | None:
    return None if addr is None else ip_text(addr)


def _devices(jobs: list) -> dict[str, set]:
    """server name -> the device ids the jobs use on it."""
    used: dict[str, set] = {}
    for job in (j for j in jobs if j is not None):
        for p in job.placements:
            used.setdefault(p.server.name, set()).update(p.device_ids)
    return used
