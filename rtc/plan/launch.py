"""Launch plans: the processes each server starts for a job, as data.

:func:`plan_job` turns a lowered Topology job into a :class:`JobLaunch` (one
:class:`NodeLaunch` per server of the job, each a list of :class:`Proc` argv lists with
their per-process environment), using the ports of the port plan (:mod:`rtc.plan.ports`).
:mod:`rtc.emit.launch_script` renders a node as a bash script, :mod:`rtc.emit.plan_json`
writes the same argv lists into ``plan.json``, and :mod:`rtc.checks.launch_settings` judges
them (flags the user's ``args`` repeat, ports, versions), so there is one source of truth
for what runs where. The modes are chosen by :mod:`rtc.plan.modes`.

Launch modes
============

``framework vllm`` (the default) - one ``vllm serve MODEL`` per server unless noted:

==============  ===========================================================================
mode            when / what
==============  ===========================================================================
``single``      the job is on one server: ``--data-parallel-size`` only when dp > 1.
``dp-internal`` dp > 1 over several servers, every server holding whole replicas (D1,
                ``lb internal``, the default): the same ``--data-parallel-size``,
                ``--data-parallel-address`` (the head's host) and ``--data-parallel-rpc-port``
                everywhere; ``--data-parallel-size-local`` and ``--data-parallel-start-rank``
                from the placement; workers add ``--headless`` and ``--api-server-count 0``.
``dp-hybrid``   ``lb hybrid``: every server runs an API server with
                ``--data-parallel-hybrid-lb`` (no ``--headless``), the same address and port.
``dp-external`` ``lb external``: one process per DP rank with ``--data-parallel-rank``, its
                own ``--port`` (``port`` + local index) and its own
                ``ASCEND_RT_VISIBLE_DEVICES`` slice; a dense model (``model_kind dense``)
                gets no DP flags at all (independent replicas).
``ray``         ``executor ray`` - the default when one replica spans servers and dp = 1
                (D2), or when ``ray_port`` is given: every server runs ``ray start`` (head:
                ``--head --port``; others ``--address HEAD:PORT``) after exporting its
                environment (``RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1``); the head
                then runs ``vllm serve --distributed-executor-backend ray``. The head's
                script takes a step argument: ``ray``, ``serve`` or nothing (both).
``nnodes``      ``executor mp`` with a replica spanning servers: ``--nnodes``,
                ``--node-rank``, ``--master-addr`` (the head's host), ``--master-port``
                (``master_port``, default 29501) on every server, ``--headless`` on node
                rank > 0.
==============  ===========================================================================

Prefill/decode jobs (:func:`rtc.plan.disaggregation.pd_pairs`) add ``--kv-transfer-config``
with ``kv_role`` ``kv_producer`` / ``kv_consumer``, the plan's ``kv_port``, the
connector and - for Mooncake - ``kv_connector_extra_config`` describing both sides. On
NVIDIA GPUs ``kv_connector nixl`` writes vLLM's NixlConnector, and each node's
environment gets the NIXL side channel and UCX devices (:mod:`rtc.plan.nixl`).

``framework mindspore`` / ``torch_npu`` (rank-table launches): one ``python3 ENTRY ARGS``
per rank with ``RANK_ID`` (the rank table's ``rank_id``) and ``DEVICE_ID`` (the device's
position in the server's ``ASCEND_RT_VISIBLE_DEVICES``, i.e. the id the process sees);
``RANK_SIZE`` and ``RANK_TABLE_FILE`` are in the env file. torch_npu also gets
``RANK``/``LOCAL_RANK`` per process and ``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``.
Per-rank values are passed with ``env NAME=VALUE`` on each process's command line (no
per-rank env files).

``framework mindie``: one MindIE Server daemon (``"$MINDIE_DAEMON"``) per server, after
the node's ``config.json`` has the keys of ``mindie-<stem>.json`` (:mod:`rtc.plan.mindie`).

``framework megatron``: one ``torchrun --nnodes N --node_rank K --nproc_per_node L
--master_addr HEAD --master_port P ENTRY ARGS`` per server.

``framework sglang`` (:mod:`rtc.plan.sglang_args`, SGLang ``server_args.py``): one
``python3 -m sglang.launch_server --model-path "$MODEL" --tp-size TP`` per server
(``--pp-size`` / ``--dp-size`` / ``--ep-size`` when used; ``--device npu
--attention-backend ascend`` on NPUs); the head adds ``--host 0.0.0.0 --port``. Over
several servers: ``--nnodes N --node-rank K --dist-init-addr HEAD:master_port`` (default
5000). Prefill/decode jobs add ``--disaggregation-mode prefill|decode`` and
``--disaggregation-transfer-backend`` (``ascend`` on NPUs, ``nixl`` for ``kv_connector
nixl``, else ``mooncake``), the prefill head ``--disaggregation-bootstrap-port``
(``kv_port``, SGLang's default 8998); on NPUs every node of the pair exports
``ASCEND_MF_STORE_URL=tcp://<prefill head>:<master_port of the prefill job + 1>`` (rtc's
choice of port) and ``ASCEND_MF_TRANSFER_PROTOCOL=device_rdma``.

``args`` go to every node, ``head_args`` to the head (the job's first server: DP rank 0,
API server, Ray head, node rank 0), ``worker_args`` to the others; they follow rtc's flags.
``MODEL`` / ``ENTRY`` are shell variables in the script, preset from ``model`` / ``entry``
and overridable from the environment (required at run time when the job gives none).
"""
from __future__ import annotations

import json
from typing import NamedTuple

from rtc.model.topology import Job, LaunchSpec, Server, Topology, container_ids
from rtc.parallel.placement import JobPlacement, NodePlan
from rtc.plan.disaggregation import PdPair, pd_side
from rtc.plan.modes import job_mode
from rtc.plan.nixl import is_nixl, nixl_env
from rtc.network.env import env_map
from rtc.plan.ports import (DEFAULT_API_PORT, DEFAULT_DP_RPC_PORT, DEFAULT_MASTER_PORT,
                            DEFAULT_RAY_PORT, JobPorts, PortPlan)
from rtc.plan.versions import has, needs_comment, parse_version, version_text, vllm_flags

CONNECTORS = {
    "mooncake": ("MooncakeConnectorV1", "vllm_ascend.distributed.mooncake_connector"),
    "mooncake_layerwise": ("MooncakeLayerwiseConnector",
                           "vllm_ascend.distributed.mooncake_layerwise_connector"),
    "llmdatadist": ("LLMDataDistCMgrConnector",
                    "vllm_ascend.distributed.llmdatadist_c_mgr_connector"),
    # vLLM's own (NVIDIA GPUs): registered by name, no module path (rtc.plan.nixl)
    "nixl": ("NixlConnector", None),
}


class Ref(NamedTuple):
    """A shell variable of the script used as one argument (``"$MODEL"``)."""

    name: str


class Proc:
    """One process: argv (str or :class:`Ref`), per-process environment, whether it runs
    in the background, and the step it belongs to (Ray head: ``ray`` / ``serve``).
    ``spans`` says where each flag was written when the process was lifted from a script
    (flag name -> Span; ``""``: the command line), and is empty for rtc's own plan."""

    argv: list
    env: list      # [(name, value)]
    background: bool
    step: str | None
    label: str
    user_args: tuple                        # the args/head_args/worker_args part
    spans: dict    # flag -> Span (lifted scripts; "" = line)
    _words: tuple | None  # words() without values, once computed
    _flags: dict | None   # flags() once computed

    def __init__(
            self, argv: list, env: list | None = None, background: bool = False,
            step: str | None = None, label: str = "", user_args: tuple = (),
            spans: dict | None = None) -> None:
        self.argv = argv
        self.env = [] if env is None else env
        self.background = background
        self.step = step
        self.label = label
        self.user_args = user_args
        self.spans = {} if spans is None else spans
        self._words = None
        self._flags = None

    def words(self, values: dict | None = None) -> list[str]:
        """argv as plain strings; a Ref becomes ``values[name]`` or ``$NAME``."""
        if not values:
            if self._words is None:
                self._words = tuple([a if isinstance(a, str) else f"${a.name}"
                                     for a in self.argv])
            return list(self._words)
        return [a if isinstance(a, str) else (values.get(a.name) or f"${a.name}")
                for a in self.argv]

    def flags(self) -> dict[str, str | None]:
        """:func:`rtc.plan.versions.vllm_flags` of :meth:`words` (no values), parsed on
        first use and cached. Several checks read the words and flags of every process;
        ``argv`` is not changed once the process is planned. Callers must not modify
        the dict."""
        if self._flags is None:
            self._flags = vllm_flags(self.words())
        return self._flags


class NodeLaunch:
    """What one server runs for one job: its processes, the node-level environment the
    launch needs, script comments, the script's variables ``(name, preset value or None,
    what)`` and its steps (Ray head: ``("ray", "serve")``)."""

    job: Job
    server: Server
    node: NodePlan
    stem: str
    head: bool
    mode: str
    procs: list[Proc]
    env: list      # node-level env the launch needs [(n, v)]
    comments: list[str]
    variables: list
    steps: tuple
    env_spans: dict  # env name -> Span (lifted scripts)

    def __init__(
            self, job: Job, server: Server, node: NodePlan, stem: str, head: bool, mode: str,
            procs: list[Proc] | None = None, env: list | None = None,
            comments: list[str] | None = None, variables: list | None = None,
            steps: tuple = (), env_spans: dict | None = None) -> None:
        self.job = job
        self.server = server
        self.node = node
        self.stem = stem
        self.head = head
        self.mode = mode
        self.procs = [] if procs is None else procs
        self.env = [] if env is None else env
        self.comments = [] if comments is None else comments
        self.variables = [] if variables is None else variables
        self.steps = steps
        self.env_spans = {} if env_spans is None else env_spans


class JobLaunch:
    """The launch of one job: its mode and one :class:`NodeLaunch` per server with devices
    (none when ``blocked`` says why no scripts can be written, e.g. a missing host IP)."""

    job: Job
    mode: str
    nodes: list[NodeLaunch]
    blocked: str | None
    origin: str          # or "script": lifted from launch scripts (rtc.scripts)

    def __init__(
            self, job: Job, mode: str, nodes: list[NodeLaunch] | None = None,
            blocked: str | None = None, origin: str = "plan") -> None:
        self.job = job
        self.mode = mode
        self.nodes = [] if nodes is None else nodes
        self.blocked = blocked
        self.origin = origin

    @property
    def nodes_by_server(self) -> dict[str, NodeLaunch]:
        return {nl.server.name: nl for nl in self.nodes}


def server_stems(topo: Topology) -> dict[tuple[str, str], str]:
    """(server name, job name) -> file stem: ``server`` when only that job uses the
    server, else ``server.job``."""
    users: dict[str, list[str]] = {}
    for j in topo.jobs:
        for p in j.placements:
            if p.device_ids:
                users.setdefault(p.server.name, []).append(j.name)
    out = {}
    for name, jobs in users.items():
        for j in jobs:
            out[(name, j)] = name if len(jobs) == 1 else f"{name}.{j}"
    return out


def container_list(server: Server, preset, device_ids) -> str:
    """ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES on GPUs) for these physical ids
    (container numbering when the server declares ``visible_devices``), ascending: CANN
    refuses a list that is not ("EE1001 ... it must be configured in ascending order",
    gpustack issue 2527), and the rank table lists a server's devices ascending too."""
    mapping, _ = container_ids(server, preset)
    return ",".join(str(x) for x in sorted(mapping.get(d, d) for d in device_ids))


class _Job:
    """What every node of one job's launch needs (a plain class: see _Serve)."""

    def __init__(self, topo: Topology, job: Job, pl: JobPlacement, jp: JobPorts | None,
                 side: tuple[PdPair, str] | None, nodes: list[NodePlan], servers: list[Server]):
        self.topo, self.job, self.pl, self.jp = topo, job, pl, jp
        self.side, self.nodes, self.servers = side, nodes, servers
        self._vllm: _VllmShared | None = None

    def vllm_shared(self, mode: str) -> _VllmShared:
        """The node-independent parts of a vLLM launch (every node of a job has one
        ``mode``), computed on first use."""
        if self._vllm is None:
            self._vllm = _VllmShared(self, mode)
        return self._vllm

    @property
    def spec(self) -> LaunchSpec:
        return self.job.launch

    def user(self, head: bool) -> tuple:
        """The user's extra argv words on this node: ``args``, then ``head_args`` or
        ``worker_args``."""
        spec = self.spec
        return tuple(spec.args) + tuple(spec.head_args if head else spec.worker_args)

    def master_port(self, default: int) -> int:
        """The port plan's master port (the user's, or a default moved past other jobs on
        the head), else the user's or the default."""
        if self.jp is not None and self.jp.master_port is not None:
            return self.jp.master_port
        return self.spec.master_port or default

    def kv_flags(self, engine_id: str) -> list[str]:
        doc = kv_transfer_config(self.job, self.side, self.jp, engine_id)
        return [] if doc is None else ["--kv-transfer-config", json.dumps(doc)]


def plan_job(topo: Topology, job: Job, ports: PortPlan, pairs: list[PdPair],
             stems: dict | None = None) -> JobLaunch:
    """The :class:`JobLaunch` of ``job`` (see the module docstring). Raises ValueError
    when the job cannot be placed (the RTC3xx checks report why)."""
    stems = stems if stems is not None else server_stems(topo)
    pl = topo.placement(job)
    mode = job_mode(topo, job)
    out = JobLaunch(job, mode)
    nodes = [n for n in pl.nodes if n.device_count]
    if not nodes:
        return out
    servers = [topo.server(n.name) for n in nodes]
    if len(servers) > 1 or mode == "ray":
        lacking = [s.name for s in servers if s.host_ip is None]
        if lacking:
            out.blocked = f"server {lacking[0]} has no host IP"
            return out
    ctx = _Job(topo, job, pl, ports.jobs.get(job.name), pd_side(pairs, job), nodes, servers)
    for k, (n, s) in enumerate(zip(nodes, servers)):
        nl = NodeLaunch(job, s, n, stems.get((s.name, job.name), s.name), k == 0, mode)
        if job.framework == "vllm":
            _vllm_node(ctx, nl)
        elif job.framework == "sglang":
            _sglang_node(ctx, nl, k)
        elif mode == "ranktable":
            _ranktable_node(ctx, nl)
        elif mode == "mindie":
            _mindie_node(ctx, nl)
        else:
            _torchrun_node(ctx, nl, k)
        out.nodes.append(nl)
    return out


def kv_transfer_config(job: Job, side: tuple[PdPair, str] | None, jp: JobPorts | None,
                       engine_id: str) -> dict | None:
    """The ``--kv-transfer-config`` document of a prefill/decode job (None otherwise):
    connector and module, ``kv_role``, the planned ``kv_port``, ``engine_id`` and - except
    for LLMDataDist - ``kv_connector_extra_config`` with both sides' dp/tp (pp) sizes.
    vLLM's NixlConnector gets only connector, role and ``engine_id`` (its port is
    ``VLLM_NIXL_SIDE_CHANNEL_PORT``, :func:`rtc.plan.nixl.nixl_env`)."""
    if side is None or job.kv_connector not in CONNECTORS:
        return None
    pair, role = side
    name, module = CONNECTORS[job.kv_connector]
    doc: dict = {"kv_connector": name,
                 "kv_role": "kv_producer" if role == "prefill" else "kv_consumer"}
    if module is None:   # NixlConnector: the side channel is in the env (rtc.plan.nixl)
        doc["engine_id"] = engine_id
        return doc
    if jp is not None and jp.kv_port is not None:
        doc["kv_port"] = str(jp.kv_port)
    doc["engine_id"] = engine_id
    doc["kv_connector_module_path"] = module
    if job.kv_connector != "llmdatadist":
        p, d = pair.prefill[0], pair.decode[0]
        pre = {"dp_size": p.dp, "tp_size": p.tp}
        if p.pp > 1:
            pre["pp_size"] = p.pp
        doc["kv_connector_extra_config"] = {"prefill": pre,
                                            "decode": {"dp_size": d.dp, "tp_size": d.tp}}
    return doc


def _tp_flags(job: Job) -> list[str]:
    out = ["--tensor-parallel-size", str(job.tp)]
    if job.pp > 1:
        out += ["--pipeline-parallel-size", str(job.pp)]
    if job.pcp > 1:
        out += ["--prefill-context-parallel-size", str(job.pcp)]
    if job.dcp > 1:
        out += ["--decode-context-parallel-size", str(job.dcp)]
    if job.expert_parallel:
        out.append("--enable-expert-parallel")
    return out


def _pp_first(tpf: list[str]) -> list[str]:
    """D2's order: --pipeline-parallel-size before --tensor-parallel-size."""
    if "--pipeline-parallel-size" not in tpf:
        return tpf
    i = tpf.index("--pipeline-parallel-size")
    return tpf[i:i + 2] + tpf[:i] + tpf[i + 2:]


def _rng(first: int | None, count: int | None) -> str:
    if first is None or not count:
        return "none"
    return str(first) if count == 1 else f"{first}..{first + count - 1}"


def _version_comments(topo: Topology, mode: str, job: Job) -> list[str]:
    v = parse_version(topo.vllm_version)
    out = []
    if v is None:
        if topo.vllm_version:
            out.append(f"vllm_version '{topo.vllm_version}' is not a version rtc reads: "
                       "the flags are the conservative form (vLLM 0.9 and later).")
        else:
            out.append("vllm_version is not set in the cluster block: the flags are the "
                       "conservative form (vLLM 0.9 and later); set it to check them.")
    else:
        out.append(f"Flags for vLLM {version_text(v)} (cluster vllm_version).")
    newer = [flag for size, flag in ((job.pcp, "--prefill-context-parallel-size"),
                                     (job.dcp, "--decode-context-parallel-size")) if size > 1]
    if newer:
        out.append(" and ".join(newer) + (" is" if len(newer) == 1 else " are")
                   + " newer than vLLM 0.9: check that the vLLM you run has "
                   + ("it." if len(newer) == 1 else "them."))
    feature = {"dp-external": "external_lb", "dp-hybrid": "hybrid_lb", "nnodes": "nnodes"}.get(mode)
    if feature:
        note = needs_comment(v, feature)
        if note:
            out.append("This form " + note + ".")
    return out


class _Serve:
    """The parts every ``vllm serve`` line of one node shares: ``base`` (vllm serve "$MODEL"
    [--served-model-name N]), ``tpf`` (the parallel-size flags), ``user`` (the user's extra
    words), ``port``, ``address`` / ``rpc`` (--data-parallel-address / -rpc-port) and the
    ``engine`` id of the KV transfer config. A plain class, not a dataclass: dataclasses
    compile their methods at import time, which every ``rtc`` run pays."""

    def __init__(self, base: list, tpf: list[str], user: tuple, port: int, address: str,
                 rpc: str, engine: str):
        self.base, self.tpf, self.user, self.port = base, tpf, user, port
        self.address, self.rpc, self.engine = address, rpc, engine


def _vllm_node(ctx: _Job, nl: NodeLaunch) -> None:
    spec, job, jp = ctx.spec, ctx.job, ctx.jp
    nl.variables.append(("MODEL", spec.model, "the model path or name (job attribute: model)"))
    shared = ctx.vllm_shared(nl.mode)
    nl.comments += shared.comments
    sv = _Serve(shared.base, shared.tpf, ctx.user(nl.head), shared.port, shared.address,
                shared.rpc, f"{job.name}-{nl.server.name}")
    {"single": _single, "dp-internal": _dp_shared, "dp-hybrid": _dp_shared,
     "dp-external": _dp_external, "ray": _ray, "nnodes": _nnodes}[nl.mode](ctx, nl, sv)
    if ctx.side is not None and is_nixl(job):
        nl.env += nixl_env(job, nl.server, jp.kv_port if jp is not None else None,
                           env_map(job))


class _VllmShared:
    """The parts of a vLLM job's launch that are the same on every node, computed once
    per job: the version ``comments``, ``base`` (vllm serve "$MODEL" [--served-model-name
    N]), ``tpf``, the API ``port``, ``address`` / ``rpc`` (--data-parallel-address /
    -rpc-port). The lists are shared by the nodes: they are only concatenated, never
    changed."""

    def __init__(self, ctx: _Job, mode: str):
        job, jp, spec = ctx.job, ctx.jp, ctx.spec
        self.comments = _version_comments(ctx.topo, mode, job)
        self.base: list = ["vllm", "serve", Ref("MODEL")]
        if spec.served_name:
            self.base += ["--served-model-name", spec.served_name]
        self.tpf = _tp_flags(job)
        self.port = jp.port if jp.port is not None else DEFAULT_API_PORT
        self.address = str(jp.dp_address) if jp.dp_address is not None \
            else str(ctx.servers[0].host_ip)
        self.rpc = str(jp.dp_rpc_port if jp.dp_rpc_port is not None else DEFAULT_DP_RPC_PORT)


def _single(ctx: _Job, nl: NodeLaunch, sv: _Serve) -> None:
    job = ctx.job
    argv = sv.base + ["--port", str(sv.port)]
    if job.dp > 1:
        argv += ["--data-parallel-size", str(job.dp)]
    argv += sv.tpf + ctx.kv_flags(sv.engine)
    nl.procs.append(Proc(argv + list(sv.user), user_args=sv.user))
    kind = "GPUs" if ctx.topo.preset.is_gpu else "NPUs"
    nl.comments.insert(0, f"vLLM on one server ({nl.node.device_count} {kind}).")


def _dp_shared(ctx: _Job, nl: NodeLaunch, sv: _Serve) -> None:
    """dp-internal (head, or headless worker) and dp-hybrid: one vllm serve per server."""
    job, n = ctx.job, nl.node
    dp = ["--data-parallel-size", str(job.dp),
          "--data-parallel-size-local", str(n.dp_local),
          "--data-parallel-start-rank", str(n.dp_start),
          "--data-parallel-address", sv.address,
          "--data-parallel-rpc-port", sv.rpc]
    ranks = _rng(n.dp_start, n.dp_local)
    if nl.mode == "dp-hybrid":
        argv = sv.base + ["--port", str(sv.port)] + dp + ["--data-parallel-hybrid-lb"] + sv.tpf
        argv += ctx.kv_flags(sv.engine)
        nl.comments.insert(0, f"vLLM data parallel, hybrid load balancing: this server "
                           f"runs DP ranks {ranks} behind its own API server.")
    elif nl.head:
        # no --data-parallel-start-rank on the head: 0 is its default in every version, and
        # from vLLM 0.28 an explicit 0 selects hybrid/external LB (RTC531)
        head_dp = dp[:4] + dp[6:]
        argv = sv.base + ["--port", str(sv.port)] + head_dp + sv.tpf + ctx.kv_flags(sv.engine)
        nl.comments.insert(0, f"vLLM data parallel, internal load balancing: the head "
                           f"(API server, DP coordinator), DP ranks {ranks} (data parallel "
                           f"size {job.dp}).")
    else:
        argv = sv.base + ["--headless"] + dp + sv.tpf + ctx.kv_flags(sv.engine)
        argv += ["--api-server-count", "0"]
        nl.comments.insert(0, f"vLLM data parallel, internal load balancing: a headless "
                           f"worker, DP ranks {ranks} (data parallel size {job.dp}).")
    nl.procs.append(Proc(argv + list(sv.user), user_args=sv.user))


def _dp_external(ctx: _Job, nl: NodeLaunch, sv: _Serve) -> None:
    job, n, s = ctx.job, nl.node, nl.server
    w = ctx.pl.replica_size
    dense = job.model_kind == "dense"
    nl.comments.insert(0, f"vLLM data parallel, external load balancing: one server "
                       f"process per DP rank (ranks {_rng(n.dp_start, n.dp_local)}, data "
                       f"parallel size {job.dp})"
                       + (", independent dense replicas (no DP flags)" if dense else "")
                       + f", ports {sv.port}..{sv.port + max(n.dp_local, 1) - 1}.")
    for i in range(n.dp_local or 0):
        rank = n.dp_start + i
        devs = n.device_ids[i * w:(i + 1) * w]
        argv = sv.base + ["--port", str(sv.port + i)]
        if not dense:
            argv += ["--data-parallel-size", str(job.dp), "--data-parallel-rank", str(rank),
                     "--data-parallel-address", sv.address, "--data-parallel-rpc-port", sv.rpc]
        argv += sv.tpf + ctx.kv_flags(f"{sv.engine}-dp{rank}")
        env = [(ctx.topo.preset.visible_devices_var,
                container_list(s, ctx.topo.preset, devs))]
        nl.procs.append(Proc(argv + list(sv.user), env, background=True,
                             label=f"DP rank {rank}", user_args=sv.user))


def _ray(ctx: _Job, nl: NodeLaunch, sv: _Serve) -> None:
    jp, s = ctx.jp, nl.server
    ray_port = jp.ray_port if jp.ray_port is not None else DEFAULT_RAY_PORT
    npus = str(nl.node.device_count)
    if not ctx.topo.preset.is_gpu:  # Ray sets CUDA_VISIBLE_DEVICES itself on GPUs
        nl.env.append(("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "1"))
    if not nl.head:
        head = ctx.servers[0]
        nl.comments.insert(0, f"vLLM over Ray: this server joins the Ray cluster of "
                           f"{head.name}; start that one's `ray` step first.")
        nl.procs.append(Proc(["ray", "start", f"--address={head.host_ip}:{ray_port}",
                              f"--node-ip-address={s.host_ip}", f"--num-gpus={npus}"]))
        nl.variables = []
        return
    nl.steps = ("ray", "serve")
    nl.comments.insert(0, "vLLM over Ray: this server is the Ray head and runs "
                       "`vllm serve`; start it with `ray` first, then the other "
                       "servers' scripts, then run it again with `serve`.")
    nl.procs.append(Proc(["ray", "start", "--head", f"--node-ip-address={s.host_ip}",
                          f"--port={ray_port}", f"--num-gpus={npus}"], step="ray"))
    argv = sv.base + ["--port", str(sv.port), "--distributed-executor-backend", "ray"]
    argv += _pp_first(sv.tpf) + ctx.kv_flags(sv.engine)
    # RAY_ADDRESS: join the cluster started above, not another job's on this host.
    nl.procs.append(Proc(argv + list(sv.user), [("RAY_ADDRESS", f"{s.host_ip}:{ray_port}")],
                         step="serve", user_args=sv.user))


def _nnodes(ctx: _Job, nl: NodeLaunch, sv: _Serve) -> None:
    job, servers, s = ctx.job, ctx.servers, nl.server
    master_port = ctx.master_port(DEFAULT_MASTER_PORT["nnodes"])
    argv = sv.base + (["--port", str(sv.port)] if nl.head else ["--headless"])
    argv += ["--nnodes", str(len(servers)), "--node-rank", str(servers.index(s)),
             "--master-addr", str(servers[0].host_ip), "--master-port", str(master_port)]
    if job.dp > 1:
        argv += ["--data-parallel-size", str(job.dp), "--data-parallel-address", sv.address,
                 "--data-parallel-rpc-port", sv.rpc]
    argv += _pp_first(sv.tpf) + ["--distributed-executor-backend", "mp"]
    argv += ctx.kv_flags(sv.engine)
    nl.comments.insert(0, f"vLLM over {len(servers)} servers without Ray (--nnodes): node "
                       f"rank {servers.index(s)}" + (" (head)" if nl.head else " (headless)")
                       + ".")
    nl.procs.append(Proc(argv + list(sv.user), user_args=sv.user))


def _sglang_node(ctx: _Job, nl: NodeLaunch, k: int) -> None:
    """One SGLang server process on the node (see the module docstring)."""
    job, servers, npu = ctx.job, ctx.servers, not ctx.topo.preset.is_gpu
    nl.variables.append(("MODEL", ctx.spec.model, "the model path or name (job attribute: model)"))
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", Ref("MODEL"),
            "--tp-size", str(job.tp)]
    argv += ["--pp-size", str(job.pp)] * (job.pp > 1) + ["--dp-size", str(job.dp)] * (job.dp > 1)
    argv += ["--ep-size", str(job.tp)] * job.expert_parallel
    argv += ["--device", "npu", "--attention-backend", "ascend"] * npu
    if ctx.spec.served_name:
        argv += ["--served-model-name", ctx.spec.served_name]
    if nl.head:
        port = ctx.jp.port if ctx.jp is not None and ctx.jp.port is not None else 30000
        argv += ["--host", "0.0.0.0", "--port", str(port)]
    if len(servers) > 1:
        argv += ["--nnodes", str(len(servers)), "--node-rank", str(k), "--dist-init-addr",
                 f"{servers[0].host_ip}:{ctx.master_port(DEFAULT_MASTER_PORT['sglang-nnodes'])}"]
    argv += _sglang_pd(ctx, nl)
    where = f"node rank {k} of {len(servers)}" if len(servers) > 1 else "one server"
    nl.comments.insert(0, f"SGLang server ({where}): tp {job.tp}, pp {job.pp}, dp {job.dp}, "
                       f"{nl.node.device_count} {'NPUs' if npu else 'GPUs'} here"
                       + (" (the head: HTTP API)" if nl.head and len(servers) > 1 else "") + ".")
    user = ctx.user(nl.head)
    nl.procs.append(Proc(argv + list(user), user_args=user))


def _sglang_pd(ctx: _Job, nl: NodeLaunch) -> list[str]:
    """The prefill/decode flags of an SGLang node (and its MemFabric env on NPUs)."""
    if ctx.side is None:
        return []
    pair, role = ctx.side
    job = ctx.job
    backend = "ascend" if not ctx.topo.preset.is_gpu else \
        "nixl" if job.kv_connector == "nixl" else "mooncake"
    out = ["--disaggregation-mode", role, "--disaggregation-transfer-backend", backend]
    if role == "prefill" and nl.head:
        port = ctx.jp.kv_port if ctx.jp is not None and ctx.jp.kv_port is not None else 8998
        out += ["--disaggregation-bootstrap-port", str(port)]
    if backend == "ascend":
        pre = pair.prefill[0]
        head = pre.placements[0].server if pre.placements else None
        store = (pre.launch.master_port or DEFAULT_MASTER_PORT["sglang-nnodes"]) + 1
        nl.env += [("ASCEND_MF_STORE_URL", f"tcp://{head.host_ip if head else '127.0.0.1'}:"
                    f"{store}"), ("ASCEND_MF_TRANSFER_PROTOCOL", "device_rdma")]
    return out


def _ranktable_node(ctx: _Job, nl: NodeLaunch) -> None:
    job, pl, n = ctx.job, ctx.pl, nl.node
    nl.variables.append(("ENTRY", ctx.spec.entry,
                         "the script each rank runs (job attribute: entry)"))
    user = ctx.user(nl.head)
    nl.env.append(("RANK_SIZE", str(pl.world)))
    torch = job.framework == "torch_npu"
    if torch:
        host = ctx.servers[0].host_ip
        nl.env += [("WORLD_SIZE", str(pl.world)),
                   ("MASTER_ADDR", str(host) if host is not None else "127.0.0.1"),
                   ("MASTER_PORT", str(ctx.master_port(DEFAULT_MASTER_PORT["torchrun"])))]
    nl.comments.insert(0, f"{job.framework} from the rank table: one process per rank, ranks "
                       f"{_rng(n.first_rank, n.placed)} of {pl.world} (RANK_ID = rank_id, "
                       "DEVICE_ID = the device's position in ASCEND_RT_VISIBLE_DEVICES).")
    for i in range(n.placed):
        rank = n.first_rank + i
        env = [("RANK_ID", str(rank)), ("DEVICE_ID", str(i))]
        if torch:
            env += [("RANK", str(rank)), ("LOCAL_RANK", str(i))]
        nl.procs.append(Proc(["python3", Ref("ENTRY")] + list(user), env, background=True,
                             label=f"rank {rank}", user_args=user))


def _torchrun_node(ctx: _Job, nl: NodeLaunch, k: int) -> None:
    n, servers = nl.node, ctx.servers
    nl.variables.append(("ENTRY", ctx.spec.entry, "the training script (job attribute: entry)"))
    user = ctx.user(nl.head)
    host = servers[0].host_ip
    nl.comments.insert(0, f"Megatron-LM with torchrun: node rank {k} of {len(servers)}, "
                       f"{n.device_count} processes (ranks {_rng(n.first_rank, n.placed)}).")
    argv = ["torchrun", "--nnodes", str(len(servers)), "--node_rank", str(k),
            "--nproc_per_node", str(n.device_count),
            "--master_addr", str(host) if host is not None else "127.0.0.1",
            "--master_port", str(ctx.master_port(DEFAULT_MASTER_PORT["torchrun"])), Ref("ENTRY")]
    nl.procs.append(Proc(argv + list(user), user_args=user))


def extra_ports(ports: PortPlan, jl: JobLaunch) -> list[tuple[str, int, int, str]]:
    """Ports the launch binds that the port plan does not reserve: (server, lo, hi, what).
    (The Ray head and master ports are in the plan.)"""
    out = []
    jp = ports.jobs.get(jl.job.name)
    for nl in jl.nodes:
        name = nl.server.name
        if nl.mode == "dp-external" and jp is not None and jp.port is not None:
            count = len(nl.procs)
            lo = jp.port + (1 if nl.head else 0)
            hi = jp.port + count - 1
            if hi >= lo:
                out.append((name, lo, hi, "external-LB API servers (port + local index)"))
        if nl.mode == "dp-hybrid" and not nl.head and jp is not None and jp.port is not None:
            out.append((name, jp.port, jp.port, "hybrid-LB API server (port)"))
    return out


def needs_feature(topo: Topology, jl: JobLaunch) -> list[str]:
    """Version features the job's launch uses that the declared vllm_version lacks."""
    v = parse_version(topo.vllm_version)
    if v is None or jl.job.framework != "vllm":
        return []
    wanted = {"dp-internal": ["multi_node_dp"], "dp-external": ["external_lb"],
              "dp-hybrid": ["hybrid_lb"], "nnodes": ["nnodes"]}.get(jl.mode, [])
    return [f for f in wanted if has(v, f) is False]


def _mindie_node(ctx: _Job, nl: NodeLaunch) -> None:
    """One MindIE Server daemon on the node (:mod:`rtc.plan.mindie`); the env file has its
    addresses and rank table, ``mindie-<stem>.json`` the keys of its config.json."""
    from rtc.plan.mindie import DAEMON

    job, n = ctx.job, nl.node
    nl.variables.append(("MINDIE_DAEMON", DAEMON, "the MindIE Server binary"))
    multi = len(ctx.servers) > 1
    nl.comments.insert(0, f"MindIE Server on {len(ctx.servers)} server"
                       f"{'s' if multi else ''}: ranks {_rng(n.first_rank, n.placed)}"
                       + (" (the master: rank 0)" if nl.head and multi else "") + ".")
    nl.comments.append(f"Merge mindie-{nl.stem}.json into the config.json MindIE reads "
                       "(MIES_CONFIG_JSON_PATH, default $MIES_INSTALL_PATH/conf/config.json) "
                       "before starting.")
    if multi:
        nl.comments.append("interNodeTLSEnabled is true (MindIE's default): put the "
                           "interNodeTls* certificates in place, or set it false knowingly.")
    nl.procs.append(Proc([Ref("MINDIE_DAEMON")] + list(ctx.user(nl.head)),
                         user_args=ctx.user(nl.head)))
