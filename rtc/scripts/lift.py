"""Lift what the scripts run into the compiler's model: a :class:`~rtc.model.topology.Topology`
(servers = nodes, jobs = the launches grouped as they meet at run time) and the launch plan
of each job (:class:`~rtc.plan.launch.JobLaunch` with ``origin "script"``: the processes,
flags and environment exactly as the scripts give them, each with its span).

How launches become jobs
    ========================================  ===========================================
    launch                                    job key
    ========================================  ===========================================
    ``vllm serve --nnodes``                   master address and port (vLLM's defaults
                                              127.0.0.1:29501 when not given)
    ``vllm serve`` with dp > 1                ``--data-parallel-address`` and
                                              ``--data-parallel-rpc-port`` (default 29550)
    ``ray start --head`` / ``--address``      the head's address and GCS port (default
                                              6379); ``vllm serve --distributed-executor-
                                              backend ray`` on a Ray head joins that job;
                                              a Ray cluster no launch uses is no job
    ``torchrun`` / ``msrun`` with nodes > 1   master address and port
    SGLang with ``--nnodes`` > 1              ``--dist-init-addr``, the model, ``--nnodes``
                                              and ``--disaggregation-mode`` (a node whose
                                              address differs stays in the job: RTC741)
    anything else                             a job of its own
    ========================================  ===========================================

A DP worker whose ``--data-parallel-address`` is its own host and whose group has no head
joins the group with the same rpc port and DP size that has one; the job's ``dp_address``
is then the worker's (wrong) value, which the dp-address rule reports at that flag.

Values the scripts leave to the frameworks' defaults are lifted *as those defaults* (vLLM
``--port`` 8000, ``--data-parallel-rpc-port`` 29550, Ray 6379, ``HCCL_IF_BASE_PORT`` 60000),
located at the launch line, so that two jobs on one host on the same defaults conflict in
the port plan like two written values. Devices: ``ASCEND_RT_VISIBLE_DEVICES`` (container
ids; with ``docker run --device /dev/davinciN`` the container's devices are those physical
ids in order, the server's ``visible_devices``), else the first devices the launch needs.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Span
from rtc.model.presets import MAX_GENERIC_DEVICES, Preset
from rtc.model.topology import Device, Job, LaunchSpec, Placement, Server, Topology
from rtc.network.env import parse_visible_devices
from rtc.parallel.placement import NodePlan
from rtc.plan import sglang_args
from rtc.plan.launch import JobLaunch, NodeLaunch, Proc
from rtc.plan.node_env import NVLINK_DOMAIN_VAR
from rtc.scripts.commands import Launch
from rtc.scripts.nodes import Node
from rtc.scripts.values import INT_MAX, NODE_DEVICES_MAX, NODE_PROC_FLAGS, WORLD_MAX, world_of
from rtc.syntax.decls import EnvLine

#: Variables that are per node (identity) or the shell's own: not lifted into job ``env``.
NOT_JOB_ENV = frozenset({"HCCL_IF_IP", "VLLM_HOST_IP", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH",
                         "HOME", "PWD", "MODEL", "ENTRY", "RTC_DIR", "RANK_TABLE_FILE",
                         "ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH",
                         "ASCEND_AICPU_PATH", "TOOLCHAIN_HOME", "ASCEND_CUSTOM_OPP_PATH"})
_CONNECTORS = {"MooncakeConnectorV1": "mooncake", "MooncakeConnector": "mooncake",
               "MooncakeLayerwiseConnector": "mooncake_layerwise",
               "LLMDataDistCMgrConnector": "llmdatadist"}


@dataclass
class Member:
    """One node's part of a job: the node and the launches it runs for it (the vLLM one
    first when there is one), and its place in the job (0 = head)."""

    node: Node
    launches: list[Launch]
    rank: int = 0

    @property
    def main(self) -> Launch:
        return next((la for la in self.launches if la.kind != "ray"), self.launches[0])


@dataclass
class Group:
    key: tuple
    kind: str
    members: list[Member] = field(default_factory=list)
    bad_address: object = None        # a worker's own address (Flag)
    #: workers that do not name the head's host (no --data-parallel-address, or the address
    #: of no given node), joined to the one DP head of their size and rpc port: (Member,
    #: the --data-parallel-address Flag or None); RTC709 reports them
    lost: list = field(default_factory=list)
    #: torchrun / msrun nodes joined to the job of node rank 0 although their master
    #: address differs (same node count, processes, port and script): (Member, the
    #: --master_addr Flag or None); RTC730 reports them
    masters: list = field(default_factory=list)
    _by_node: dict = field(default_factory=dict)

    def member(self, node: Node) -> Member:
        m = self._by_node.get(id(node))
        if m is None:
            m = self._by_node[id(node)] = Member(node, [])
            self.members.append(m)
        return m


@dataclass
class Lifted:
    """The lifted Topology, each job's lifted launch (job name -> JobLaunch) and the rank
    table's server each node is (node name -> table Server; see :func:`match_table`)."""

    topology: Topology
    launches: dict = field(default_factory=dict)
    table_servers: dict = field(default_factory=dict)
    #: True when the nodes were matched to a table without host IPs (2.0) by rank order.
    matched_by_order: bool = False


def int_value(text: str | None, default: int | None = None) -> int | None:
    """``text`` as an int >= 0 (a flag's value), ``default`` when it is None, not a whole
    number of ASCII digits, or over :data:`~rtc.scripts.values.INT_MAX`."""
    if text is None:
        return default
    t = text.strip()
    # ASCII digits only, 0..INT_MAX: a bad value is RTC720 (rtc.scripts.values), and the
    # rules then see the default (never a negative size or a 20-digit one)
    if not t.isascii() or not t.isdigit() or len(t) > 20 or int(t) > INT_MAX:
        return default
    return int(t)


def _ip(text: str | None):
    try:
        return ipaddress.ip_address(text) if text else None
    except ValueError:
        return None


#: DP addresses that only reach the node itself.
_LOOPBACK = ("127.0.0.1", "localhost")


def _key(node: Node, la: Launch, ray_heads: dict) -> tuple:
    if la.kind == "ray":
        if la.has("--head"):
            return ("ray", _ray_head_host(node, la), la.value("--port") or "6379")
        host, _, port = (la.value("--address") or "").rpartition(":")
        return ("ray", host or (la.value("--address") or ""), port or "6379")
    if la.kind == "vllm":
        if la.value("--distributed-executor-backend") == "ray" and node.name in ray_heads:
            return ray_heads[node.name]
        if la.has("--nnodes") and (int_value(la.value("--nnodes"), 1) or 1) > 1:
            return ("nnodes", la.value("--master-addr") or "127.0.0.1",
                    la.value("--master-port") or "29501")
        dp = int_value(la.value("--data-parallel-size"), 1) or 1
        if dp > 1:
            address = la.value("--data-parallel-address") or "127.0.0.1"
            if address in _LOOPBACK and _is_dp_head(la) and \
                    int_value(la.value("--data-parallel-size-local"), dp) == dp:
                # all its DP ranks on its own node, coordinated on that node's loopback
                # (ParallelConfig.data_parallel_master_ip defaults to 127.0.0.1): one
                # deployment per node, never joined with another node's (a prefill and
                # a decode instance on two nodes)
                address = f"{address}@{node.name}"
            return ("dp", address, la.value("--data-parallel-rpc-port") or "29550")
    if la.kind == "sglang" and sglang_int(la, "--nnodes") > 1:
        return ("sglang", la.value("--model-path") or "", la.value("--nnodes"),
                la.value("--disaggregation-mode") or "null")
    if la.kind in ("torchrun", "msrun"):
        nn = la.value("--nnodes") or la.value("--worker_num")
        if nn and nn not in ("1", "1:1"):
            return (la.kind, la.value("--master_addr") or la.value("--master-addr") or "",
                    la.value("--master_port") or la.value("--master-port") or "")
    return ("single", node.name, id(la))


def _ray_head_host(node: Node, la: Launch) -> str:
    """The address a Ray head is reached at: its node's host IP, else its own
    ``--node-ip-address`` (even unresolved, e.g. ``$(srun -w "$head" hostname
    --ip-address)`` in a Slurm script, which its workers' ``--address`` repeats), else
    the node's name."""
    return str(node.host_ip or la.value("--node-ip-address") or node.name)


def group_launches(nodes: list[Node]) -> list[Group]:
    """The jobs of ``nodes``' launches (see the module docstring), in order of appearance."""
    ray_heads = {n.name: ("ray", _ray_head_host(n, la), la.value("--port") or "6379")
                 for n in nodes for la in n.launches if la.kind == "ray" and la.has("--head")}
    groups: dict[tuple, Group] = {}
    for node in nodes:
        for la in node.launches:
            if la.kind == "sglang_router":      # a front end: no devices, no job
                continue
            key = _key(node, la, ray_heads)
            g = groups.get(key) or groups.setdefault(key, Group(key, key[0]))
            g.member(node).launches.append(la)
    _merge_self_addressed(groups)
    _merge_same_address(groups)
    hosts = {str(n.host_ip) for n in nodes if n.host_ip is not None}
    _merge_lost_workers(groups, hosts)
    _merge_other_masters(groups, hosts)
    _merge_ray_workers(groups)
    # a Ray cluster no vLLM launch uses starts no model: not a job (no TP / device rules)
    out = [g for g in groups.values() if g.kind != "ray" or
           any(la.kind != "ray" for m in g.members for la in m.launches)]
    for g in out:
        _rank_members(g)
    return out


def _is_dp_head(la: Launch) -> bool:
    return la.kind == "vllm" and not la.has("--headless") and \
        (int_value(la.value("--data-parallel-start-rank"), 0) or 0) == 0 and \
        not la.has("--data-parallel-rank")


def _merge_self_addressed(groups: dict) -> None:
    for key, g in list(groups.items()):
        if g.kind != "dp" or any(_is_dp_head(la) for m in g.members for la in m.launches):
            continue
        own = all(str(m.node.host_ip) == key[1] for m in g.members)
        target = next((o for k, o in groups.items() if o is not g and o.kind == "dp"
                       and k[2] == key[2] and any(_is_dp_head(la) for m in o.members
                                                  for la in m.launches)), None)
        if own and target is not None:
            for m in g.members:
                target.member(m.node).launches.extend(m.launches)
            la = g.members[0].main
            target.bad_address = la.flags.get("--data-parallel-address")
            del groups[key]


def _merge_same_address(groups: dict) -> None:
    """Join each DP group without a head to the one DP group with a head at the same
    ``--data-parallel-address`` (any rpc port, DP size): a deployment is not split because
    one node's value differs; the difference is RTC722's finding. With several heads at
    that address (a prefill and a decode group on one host), the one of the same model."""
    for key, g in list(groups.items()):
        if g.kind != "dp" or _has_head(g) or key[1] == "127.0.0.1":
            continue
        heads = [o for k, o in groups.items() if o is not g and o.kind == "dp" and
                 k[1] == key[1] and _has_head(o)]
        if len(heads) > 1:
            model = _model_of(g.members[0].main)
            heads = [o for o in heads if _model_of(o.members[0].main) == model]
        if len(heads) != 1:
            continue
        for m in g.members:
            heads[0].member(m.node).launches.extend(m.launches)
        del groups[key]


def _model_of(la: Launch) -> str | None:
    return la.positional[0].text if la.positional else la.value("--model")


def _has_head(g: Group) -> bool:
    return any(_is_dp_head(la) for m in g.members for la in m.launches)


def _merge_lost_workers(groups: dict, hosts: set) -> None:
    """Join each headless DP group whose address is vLLM's default (no
    ``--data-parallel-address``) or no given node's host to the one DP group with a head,
    the same ``--data-parallel-size`` and rpc port, when there is exactly one such group."""
    for key, g in list(groups.items()):
        if g.kind != "dp" or _has_head(g) or (key[1] in hosts and key[1] != "127.0.0.1"):
            continue
        size = g.members[0].main.value("--data-parallel-size")
        heads = [o for k, o in groups.items() if o is not g and o.kind == "dp" and
                 k[2] == key[2] and _has_head(o) and
                 o.members[0].main.value("--data-parallel-size") == size]
        if len(heads) != 1:
            continue
        for m in g.members:
            heads[0].member(m.node).launches.extend(m.launches)
            heads[0].lost.append((heads[0].member(m.node),
                                  m.main.flags.get("--data-parallel-address")))
        del groups[key]


def master_flag(la: Launch):
    """The ``--master_addr`` (``--master-addr``) Flag of a torchrun / msrun launch, or None."""
    return la.flags.get("--master_addr") or la.flags.get("--master-addr")


def node_rank(la: Launch) -> int | None:
    """The node rank a torchrun / msrun launch gives (torchrun's default 0 when left out:
    torch/distributed/run.py ``--node-rank`` default 0), None when unreadable."""
    text = la.value("--node_rank") or la.value("--node-rank")
    return int_value(text, 0 if text is None and la.kind == "torchrun" else None)


def _launcher_identity(la: Launch) -> tuple:
    """What the nodes of one torchrun / msrun job give alike besides the master address:
    the node count, the processes per node, the master port and the script it runs."""
    return (la.kind, la.value("--nnodes") or la.value("--worker_num"), _per_node(la),
            la.value("--master_port") or la.value("--master-port") or "",
            la.positional[0].text if la.positional else "")


def _merge_other_masters(groups: dict, hosts: set) -> None:
    """Join each torchrun / msrun group without node rank 0 to the one group of the same
    :func:`_launcher_identity` that has node rank 0 (else the one whose master address is
    a given node's host): one job whose nodes disagree on ``--master_addr`` (recorded in
    :attr:`Group.masters` for RTC730), not two half jobs (RTC461)."""
    by_identity: dict = {}
    for key, g in groups.items():
        if g.kind in ("torchrun", "msrun"):
            by_identity.setdefault(_launcher_identity(g.members[0].main), []).append((key, g))
    for found in by_identity.values():
        if len(found) < 2:
            continue
        has_head = {key: any(node_rank(m.main) == 0 for m in g.members) for key, g in found}
        heads = [(k, g) for k, g in found if has_head[k]] or \
            [(k, g) for k, g in found if k[1] in hosts]
        if len(heads) != 1:
            continue
        target = heads[0][1]
        for key, g in found:
            if g is target or has_head[key]:
                continue
            for m in g.members:
                tm = target.member(m.node)
                tm.launches.extend(m.launches)
                target.masters.append((tm, master_flag(m.main)))
            del groups[key]


def _ray_head(g: Group) -> bool:
    return any(la.kind == "ray" and la.has("--head") for m in g.members for la in m.launches)


def _merge_ray_workers(groups: dict) -> None:
    """Join each Ray worker group whose ``ray start --address`` is not the GCS address of
    the given Ray head (another host, or another port than the head's ``--port``, 6379
    when left out) to that head's job, when the scripts start exactly one Ray head: the
    nodes given together are one deployment, and the worker's wrong address is RTC709's
    finding (recorded in :attr:`Group.lost` with the worker's ``--address`` flag)."""
    heads = [g for g in groups.values() if g.kind == "ray" and _ray_head(g)]
    if len(heads) != 1:
        return
    head = heads[0]
    for key, g in list(groups.items()):
        if g.kind != "ray" or g is head or _ray_head(g):
            continue
        for m in g.members:
            ray = next((la for la in m.launches if la.kind == "ray"), None)
            member = head.member(m.node)
            member.launches.extend(m.launches)
            head.lost.append((member, ray.flags.get("--address") if ray else None))
        del groups[key]


def _rank_members(g: Group) -> None:
    for k, m in enumerate(g.members):
        la = m.main
        if g.kind == "dp":
            m.rank = 0 if _is_dp_head(la) else 1 + (int_value(la.value("--data-parallel-start-rank"))
                                                    or int_value(la.value("--data-parallel-rank")) or 0)
        elif g.kind in ("nnodes", "sglang"):
            m.rank = int_value(la.value("--node-rank"), 0) or 0
        elif g.kind == "ray":
            m.rank = 0 if any(x.has("--head") for x in m.launches if x.kind == "ray") else k + 1
        elif g.kind in ("torchrun", "msrun"):
            m.rank = int_value(la.value("--node_rank") or la.value("--node-rank"), k) or 0
    g.members.sort(key=lambda m: m.rank)


_DAVINCI = re.compile(r"/dev/davinci(\d+)")
#: The most devices the lift gives one node (more than any server rtc models).
MAX_NODE_DEVICES = NODE_DEVICES_MAX


def sglang_sizes(la: Launch) -> tuple[int, int, int, int]:
    """(tp, pp, dp, ep) of an SGLang launch (:mod:`rtc.plan.sglang_args`); dp counts
    device replicas: 1 with ``--enable-dp-attention`` (DP inside the TP group)."""
    tp, pp, dp, ep = (sglang_int(la, f) for f in ("--tp-size", "--pp-size", "--dp-size",
                                                  "--ep-size"))
    return tp, pp, 1 if la.has("--enable-dp-attention") else dp, ep


def sglang_int(la: Launch, flag: str) -> int:
    """The value of an SGLang integer flag as the lift uses it: SGLang's default when it
    is absent, not a whole number, or outside :data:`rtc.plan.sglang_args.RANGES` (the
    RTC745 rule reports those at the flag)."""
    lo, hi = sglang_args.RANGES[flag]
    default = int(sglang_args.DEFAULTS.get(flag, "1"))
    v = int_value(la.value(flag))
    return v if v is not None and lo <= v <= hi else default


def _visible(node: Node) -> list[int] | None:
    for la in node.launches:
        if la.devices:
            # /dev/davinciN only: the manager devices (davinci_manager, devmm_svm,
            # hisi_hdc) every vendor docker line mounts are no NPUs
            ids = [int(m.group(1)) for w in la.devices
                   if (m := _DAVINCI.fullmatch(w.text))]
            if ids and all(i is not None and i >= 0 for i in ids):
                return ids
    return None


def _replica(la: Launch) -> int:
    if la.kind == "sglang":
        tp, pp, _dp, _ep = sglang_sizes(la)
        return max(1, tp * pp)
    if world_of(la) > WORLD_MAX:
        return 1
    return max(1, (int_value(la.value("--tensor-parallel-size"), 1) or 1)
               * (int_value(la.value("--pipeline-parallel-size"), 1) or 1)
               * (int_value(la.value("--prefill-context-parallel-size"), 1) or 1))


def _devices(m: Member, g: Group, visible: list[int] | None, tp: int,
             gpu: bool = False, per_server: int = 0) -> tuple[int, ...]:
    """The physical device ids the member uses for the job: those of each of its vLLM DP
    engines (a head and a headless worker on one node are two engines of the job), each
    once, in order (:func:`_launch_devices`); two engines on the same devices are
    :func:`shared_engines`' finding."""
    out: dict[int, None] = {}
    for la in engines(m, g):
        out.update(dict.fromkeys(_launch_devices(m, la, g, visible, tp, gpu, per_server)))
    return tuple(out)


def _local_dp(m: Member, g: Group) -> int | None:
    """The member's local DP size: the sum of its engines' ``--data-parallel-size-local``
    (None when one leaves it out, or outside a DP group)."""
    if g.kind != "dp":
        return None
    found = [int_value(la.value("--data-parallel-size-local")) for la in engines(m, g)]
    return None if None in found else sum(found)


def engines(m: Member, g: Group) -> list[Launch]:
    """The launches of ``m`` that start engines of the job: every vLLM one of a DP group
    (a node may run the head and a headless worker), else the member's main launch."""
    found = [x for x in m.launches if x.kind == "vllm"] if g.kind == "dp" else []
    # two heads on one node are two deployments at one endpoint (RTC530), not two ranks
    return found if len(found) > 1 and sum(map(_is_dp_head, found)) <= 1 else [m.main]


def shared_engines(groups: list[Group], gpu: bool) -> list[tuple]:
    """(member, earlier launch, later launch, device ids both use) for each two vLLM DP
    engines of one job on one node whose devices overlap (vLLM's head and a headless
    worker pinned to one node by srun --nodelist, with no CUDA_VISIBLE_DEVICES apart)."""
    out = []
    for g in groups:
        for m in g.members:
            found = engines(m, g)
            if len(found) < 2:
                continue
            tp = int_value(g.members[0].main.value("--tensor-parallel-size"), 1) or 1
            seen: list = []
            for la in found:
                ids = set(_launch_devices(m, la, g, _visible(m.node), tp, gpu))
                for other, have in seen:
                    if ids & have:
                        out.append((m, other, la, sorted(ids & have)))
                        break
                seen.append((la, ids))
    return out


def _launch_devices(m: Member, la: Launch, g: Group, visible: list[int] | None, tp: int,
                    gpu: bool = False, per_server: int = 0) -> tuple[int, ...]:
    """The physical device ids launch ``la`` of the member uses: its
    ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES on ``gpu`` hardware), else the first
    devices it needs (a vLLM DP launch without ``--data-parallel-size-local`` runs the
    whole DP size on its node: vLLM's EngineArgs default, ``data_parallel_size_local =
    data_parallel_size``)."""
    env = la.env.get("CUDA_VISIBLE_DEVICES" if gpu else "ASCEND_RT_VISIBLE_DEVICES")
    ids: list[int] = []
    if env is not None:
        ids = list(parse_visible_devices(env.value).ids)
    if ids and g.kind == "ray":
        ray = next((x for x in m.launches if x.kind == "ray"), None)
        given = int_value(ray.value("--num-gpus") or ray.value("--num-npus")) if ray else None
        if given is not None:
            # Ray schedules on the --num-gpus it was told, not on every device visible
            ids = ids[:given]
    if not ids:
        if la.kind == "sglang":
            return _sglang_devices(la, visible)
        if world_of(la) > WORLD_MAX:    # RTC720: planned as one rank (_vllm_job)
            count = 1
        elif g.kind == "dp":
            dp = int_value(la.value("--data-parallel-size"), 1) or 1
            local = int_value(la.value("--data-parallel-size-local"), dp)
            count = (dp if local is None else local) * _replica(la)
        elif g.kind == "ray":
            ray = next((x for x in m.launches if x.kind == "ray"), None)
            # Ray counts the node's own accelerators: never more than its hardware has
            count = _ray_devices(ray, min(tp, per_server) if per_server else tp)
        elif g.kind == "nnodes":
            count = _replica(la) // max(1, int_value(la.value("--nnodes"), 1) or 1)
        elif la.kind in ("torchrun", "msrun"):
            count = _per_node(la)
        else:
            count = _replica(la) * (int_value(la.value("--data-parallel-size"), 1) or 1)
        # a server has at most MAX_NODE_DEVICES devices: a larger count is the world-size
        # rules' finding (RTC720), not a list of a hundred million device ids
        ids = list(range(min(count or 0, MAX_NODE_DEVICES)))
    if visible is not None:
        return tuple(visible[i] if 0 <= i < len(visible) else i for i in ids)
    return tuple(ids)


def _per_node(la: Launch) -> int:
    """The processes a torchrun / msrun launch starts on its node (``--nproc_per_node``,
    ``--local_worker_num``; 1 if unreadable). torchrun takes ``--nproc-per-node`` as the
    same option (pytorch torch/distributed/run.py, ``get_args_parser``, both spellings
    since 2.0). A count over NODE_DEVICES_MAX is RTC720's finding and is planned as one
    process, never as a hundred million."""
    per = int_value(next(filter(None, map(la.value, NODE_PROC_FLAGS)), None), 1) or 1
    return 1 if per > NODE_DEVICES_MAX else per


def _ray_devices(ray: Launch | None, tp: int) -> int:
    """The devices a Ray node offers: ``--num-gpus`` / ``--num-npus``; without them Ray
    counts the accelerators the container sees (ray-project/ray
    python/ray/_private/accelerators/nvidia_gpu.py
    ``NvidiaGPUAcceleratorManager.get_current_node_num_accelerators``: NVML's device
    count), which in a Kubernetes pod are the ones the device plugin gives its container
    (:attr:`Launch.accelerators`); else ``tp``, rtc's guess for a script."""
    if ray is None:
        return tp
    given = int_value(ray.value("--num-gpus") or ray.value("--num-npus"))
    if given is not None:
        return given
    return ray.accelerators if ray.accelerators else tp


def _sglang_devices(la: Launch, visible: list[int] | None) -> tuple[int, ...]:
    """The devices one node of an SGLang server uses: tp x pp x dp (device replicas) over
    ``--nnodes``, at ``--base-gpu-id`` + k x ``--gpu-id-step`` (ServerArgs; ids of the
    runtime, mapped through a container's devices)."""
    tp, pp, dp, _ep = sglang_sizes(la)
    nnodes = sglang_int(la, "--nnodes")
    base = sglang_int(la, "--base-gpu-id")
    step = sglang_int(la, "--gpu-id-step")
    # a server has at most MAX_NODE_DEVICES devices: larger sizes are the world-size
    # rules' finding, not a list of a billion device ids
    count = min(max(1, tp * pp * dp // nnodes), MAX_NODE_DEVICES)
    ids = [base + k * step for k in range(count)]
    if visible is not None:
        return tuple(visible[i] if 0 <= i < len(visible) else i for i in ids)
    return tuple(ids)


def lift(nodes: list[Node], groups: list[Group], preset: Preset, *, vllm_version=None,
         cann=None, table: Topology | None = None, files: dict | None = None) -> Lifted:
    """The :class:`Lifted` model of ``nodes`` and their job ``groups``. With ``table`` (a
    rank table lowered by :mod:`rtc.tables`), servers whose host IP is in the table take
    its devices (ids and device IPs) and its server order."""
    first = nodes[0].units[0] if nodes and nodes[0].units else None
    span = Span(first.label, first.first_line, 1) if first else Span("<scripts>", 1, 1)
    topo = Topology(name="scripts", preset=preset, servers=[], jobs=[], cann=cann,
                    vllm_version=vllm_version, span=span, files=dict(files or {}),
                    named=False, origin="scripts")
    matched, by_order = match_table(nodes, groups, table)
    order = _node_order(nodes, groups, matched)
    servers: dict[str, Server] = {}
    used: dict[str, set] = {}
    for g in groups:
        for m in g.members:
            tp = int_value(g.members[0].main.value("--tensor-parallel-size"), 1) or 1
            used.setdefault(m.node.name, set()).update(
                _devices(m, g, _visible(m.node), tp, preset.is_gpu, preset.devices_per_server))
    if preset.devices_per_server == 0:      # generic / generic-gpu: as many as the scripts use
        top = max([max(u) + 1 for u in used.values() if u] or [1])   # (at most 64: as tables)
        preset = preset.with_devices(min(top, MAX_GENERIC_DEVICES), ())
        topo.preset = preset
    for k, node in enumerate(order):
        servers[node.name] = _server(node, k, used.get(node.name, set()),
                                     matched.get(node.name))
    topo.servers = [servers[n.name] for n in order]
    out = Lifted(topo, table_servers=matched, matched_by_order=by_order)
    for g in groups:
        job, jl = _job(topo, g, servers)
        if job.name in out.launches:     # two DP groups headed on one node
            job.name = f"{job.name}:{job.span.line}"
        topo.jobs.append(job)
        out.launches[job.name] = jl
    return out


def _node_order(nodes: list[Node], groups: list[Group], matched: dict) -> list[Node]:
    place: dict[str, tuple] = {}
    for gi, g in enumerate(groups):
        for m in g.members:
            ts = matched.get(m.node.name)
            key = (ts.index if ts is not None else 1 << 30, gi, m.rank)
            place[m.node.name] = min(place.get(m.node.name, key), key)
    return sorted(nodes, key=lambda n: place.get(n.name, (1 << 30, 1 << 30, 0)))


def table_server(table: Topology | None, name: str, host_ip) -> Server | None:
    """The server of a rank table a node is: the one whose ``host_ip`` is the node's, else
    whose ``server_id`` is the node's host IP as text (HCCL's 1.0 tables name servers by
    it), else whose ``server_id`` is the node's name; None when there is none."""
    if table is None:
        return None
    for s in table.servers:
        if host_ip is not None and s.host_ip == host_ip:
            return s
    for s in table.servers:
        if host_ip is not None and s.server_id == str(host_ip):
            return s
    return next((s for s in table.servers if s.server_id == name), None)


def match_table(nodes: list[Node], groups: list[Group],
                table: Topology | None) -> tuple[dict, bool]:
    """The rank table's server each node is (node name -> Server, :func:`table_server`),
    and whether they were matched by order. A 2.0 table (Ascend 950) names no hosts: its
    servers are the level-0 instances in rank order, and a process's rank is its place in
    the launch, so when no node matches by address or name and the table has as many
    servers as there are nodes, node k of the launch order (job by job, head first) is
    the table's server k. The same when the nodes give no host IP at all (their env files
    were not read) and nothing else matches."""
    if table is None:
        return {}, False
    out = {}
    for n in nodes:
        ts = table_server(table, n.name, n.host_ip)
        if ts is not None:
            out[n.name] = ts
    if out or (any(s.host_ip is not None for s in table.servers)
               and any(n.host_ip is not None for n in nodes)):
        return out, False
    order: list[Node] = []
    for g in groups:
        order += [m.node for m in g.members if m.node not in order]
    order += [n for n in nodes if n not in order]
    if len(order) != len(table.servers):
        return {}, False
    return {n.name: ts for n, ts in zip(order, table.servers)}, True


def nvlink_domain(node: Node):
    """The ``RTC_NVLINK_DOMAIN`` setting a node's launches see (the NVLink domain of an
    NVL72-class tray, :mod:`rtc.plan.node_env`), or None when none sets it (or it is
    empty)."""
    return next((la.env[NVLINK_DOMAIN_VAR] for la in node.launches
                 if la.env.get(NVLINK_DOMAIN_VAR) is not None
                 and la.env[NVLINK_DOMAIN_VAR].value), None)


def _ib_hca(node: Node) -> tuple[str, ...] | None:
    """The HCAs a node's ``NCCL_IB_HCA`` names exactly (``=mlx5_0,mlx5_1:1``, as ``rtc
    compile`` writes it from ``ib_hca``; ports dropped), or None: not set, or a prefix or
    ``^`` exclusion list, which does not say which HCAs the node has."""
    found = next((la.env["NCCL_IB_HCA"] for la in node.launches
                  if la.env.get("NCCL_IB_HCA") is not None), None)
    text = (found.value or "").strip() if found is not None else ""
    if not text.startswith("=") or "^" in text:
        return None
    names = tuple(n.split(":")[0].strip() for n in text[1:].split(","))
    return names if names and all(names) else None


def _server(node: Node, index: int, used: set, ts: Server | None) -> Server:
    unit = node.units[0]
    span = Span(unit.label, unit.first_line, 1)
    if ts is not None:   # the table's devices with every address it gives (EIDs on 2.0)
        devices = [Device(d.device_id, d.device_ip, d.gateway, d.prefix, d.super_device_id,
                          d.eids, d.port_eids, d.port_ips, d.planes) for d in ts.devices]
    else:
        devices = [Device(i) for i in sorted(used)]
    spans = {"host": node.host_span} if node.host_span else {}
    visible = next((la.env["ASCEND_RT_VISIBLE_DEVICES"] for la in node.launches
                    if "ASCEND_RT_VISIBLE_DEVICES" in la.env), None)
    if visible is not None and ts is None:     # the devices are the ones it lists
        spans["devices"] = visible.span
    domain = nvlink_domain(node)
    if domain is not None and ts is None:
        spans["super_pod"] = domain.span
    return Server(name=node.name, server_id=ts.server_id if ts else node.name, index=index,
                  super_pod_id=ts.super_pod_id if ts else (domain.value if domain else None),
                  span=span, devices=devices, host_ip=node.host_ip, spans=spans,
                  visible_devices=_visible(node), ib_hca=None if ts else _ib_hca(node),
                  net_instances=dict(ts.net_instances) if ts else None,
                  backup=ts.backup if ts else None)


def _job(topo: Topology, g: Group, servers: dict) -> tuple[Job, JobLaunch]:
    head = g.members[0]
    la = head.main
    name = f"{la.kind}@{head.node.name}" if g.kind != "single" else \
        f"{la.kind}@{head.node.name}:{la.span.line}"
    framework = {"vllm": "vllm", "ray": "vllm", "torchrun": "megatron",
                 "msrun": "mindspore", "sglang": "sglang"}[la.kind]
    job = Job(name=name, span=la.span, placements=[], framework=framework)
    if la.kind == "vllm":
        _vllm_job(job, g, la)
    elif la.kind == "sglang":
        _sglang_job(job, la)
    elif la.kind in ("torchrun", "msrun"):
        # the world is nodes x processes per node; how the script splits it (tp/pp) is in
        # the training script's own arguments, which rtc does not read
        nodes = int_value((la.value("--nnodes") or "1").split(":")[-1], 1) or 1
        per = _per_node(la)
        job.dp = nodes * per if la.kind == "torchrun" else \
            (int_value(la.value("--worker_num"), per) or per)
    for m in g.members:
        s = servers[m.node.name]
        tp = int_value(la.value("--tensor-parallel-size"), 1) or 1
        ids = tuple(sorted(_devices(m, g, s.visible_devices, tp, topo.preset.is_gpu,
                                    topo.preset.devices_per_server)))
        local = _local_dp(m, g)
        job.placements.append(Placement(s, ids, m.main.span, local))
    job.placements.sort(key=lambda p: p.server.index)
    job.env = _job_env(g)
    hccl = not topo.preset.is_gpu     # NCCL has no HCCL port window
    if hccl and not any(e.name in ("HCCL_IF_BASE_PORT", "HCCL_HOST_SOCKET_PORT_RANGE")
                        for e in job.env):
        job.env.append(EnvLine("HCCL_IF_BASE_PORT", "60000", la.span))
    jl = JobLaunch(job, _mode(g, la), origin="script")
    for m in g.members:
        jl.nodes.append(_node_launch(job, jl.mode, m, servers[m.node.name], m is head))
    return job, jl


def _vllm_job(job: Job, g: Group, la: Launch) -> None:
    if world_of(la) > WORLD_MAX:     # RTC720: planned as one rank, not billions
        job.tp = job.pp = job.pcp = job.dcp = job.dp = 1
        job.launch = LaunchSpec(model=None, spans={"model": la.span})
        return
    job.tp = int_value(la.value("--tensor-parallel-size"), 1) or 1
    job.pp = int_value(la.value("--pipeline-parallel-size"), 1) or 1
    job.pcp = int_value(la.value("--prefill-context-parallel-size"), 1) or 1
    job.dcp = int_value(la.value("--decode-context-parallel-size"), 1) or 1
    job.dp = int_value(la.value("--data-parallel-size"), 1) or 1
    job.expert_parallel = la.has("--enable-expert-parallel")
    model = la.positional[0].text if la.positional else la.value("--model")
    job.launch = LaunchSpec(model=model, args=tuple(w.text for w in la.words[1:]),
                            spans={"model": la.span, "args": la.span})
    job.port = int_value(la.value("--port"), 8000)
    job.spans["port"] = la.span_of("--port")
    if job.dp > 1 and len(g.members) > 1:
        bad = g.bad_address
        addr = bad.value if bad is not None else la.value("--data-parallel-address")
        job.dp_address = _ip(addr)
        job.spans["dp_address"] = (bad.value_span or bad.span) if bad is not None else \
            la.span_of("--data-parallel-address")
        job.dp_rpc_port = int_value(la.value("--data-parallel-rpc-port"), 29550)
        job.spans["dp_rpc_port"] = la.span_of("--data-parallel-rpc-port")
    if g.kind == "ray":
        ray = next((x for m in g.members for x in m.launches
                    if x.kind == "ray" and x.has("--head")), None)
        job.ray_port = int_value(ray.value("--port"), 6379) if ray else 6379
        job.spans["ray_port"] = ray.span_of("--port") if ray else la.span
        job.launch.executor = "ray"
    kv = la.value("--kv-transfer-config")
    if kv:
        try:
            doc = json.loads(kv)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict):
            job.kv_connector = _CONNECTORS.get(str(doc.get("kv_connector")))
            job.kv_port = int_value(str(doc.get("kv_port")) if "kv_port" in doc else None)
            job.spans["kv_port"] = job.spans["kv_connector"] = la.span_of("--kv-transfer-config")


def _sglang_job(job: Job, la: Launch) -> None:
    """The sizes, model and port of an SGLang server (:mod:`rtc.plan.sglang_args`): world
    size tp x pp per replica, ``--dp-size`` replicas unless ``--enable-dp-attention``."""
    job.tp, job.pp, job.dp, ep = sglang_sizes(la)
    job.expert_parallel = ep > 1
    job.launch = LaunchSpec(model=la.value("--model-path"), spans={"model": la.span})
    job.port = sglang_int(la, "--port")
    job.spans["port"] = la.span_of("--port")
    addr = la.flags.get("--dist-init-addr")
    port = int_value(addr.value.rpartition(":")[2]) if addr is not None and addr.value else None
    if port is not None and 0 < port < 65536 and sglang_int(la, "--nnodes") > 1:
        # node rank 0 serves torch.distributed's TCP store there: a port like --port's
        job.launch.master_port = port
        job.launch.spans["master_port"] = addr.value_span or addr.span


def _job_env(g: Group) -> list[EnvLine]:
    """The job's env lines: each (name, value) once, at the first node that sets it (so
    4,096 nodes exporting the same line give one line, and nodes that differ give one
    line per value)."""
    out, seen = [], set()
    for m in g.members:
        for la in m.launches:
            for name, s in la.env.items():
                if name in NOT_JOB_ENV or (name, s.value) in seen:
                    continue
                seen.add((name, s.value))
                out.append(EnvLine(name, s.value, s.span))
    return out


def _mode(g: Group, la: Launch) -> str:
    if g.kind == "ray":
        return "ray"
    if g.kind == "nnodes":
        return "nnodes"
    if la.kind == "sglang":
        return "sglang"
    if la.kind in ("torchrun", "msrun"):
        return "torchrun" if la.kind == "torchrun" else "ranktable"
    if g.kind == "dp":
        if any(x.has("--data-parallel-rank") for m in g.members for x in m.launches):
            return "dp-external"
        if any(x.has("--data-parallel-hybrid-lb") for m in g.members for x in m.launches):
            return "dp-hybrid"
        return "dp-internal"
    return "single"


def _node_launch(job: Job, mode: str, m: Member, server: Server, head: bool) -> NodeLaunch:
    la = m.main
    local = int_value(la.value("--data-parallel-size-local"))
    start = int_value(la.value("--data-parallel-start-rank") or la.value("--data-parallel-rank"))
    ids = tuple(d.device_id for d in server.devices)
    plan = NodePlan(server.index, server.name, ids, (), 0, 0, len(ids), len(ids),
                    dp_local=local, dp_start=start)
    nl = NodeLaunch(job, server, plan, server.name, head, mode)
    for x in m.launches:
        spans = {name: f.span for name, f in x.flags.items()}
        spans[""] = x.span
        nl.procs.append(Proc([w.text for w in x.words], background=x.command.background,
                             spans=spans))
    nl.env = [(name, s.value) for name, s in la.env.items()]
    nl.env_spans = {name: s.span for name, s in la.env.items()}
    return nl


__all__ = ["Lifted", "Group", "Member", "group_launches", "engines", "shared_engines", "lift", "table_server", "match_table",
           "NOT_JOB_ENV"]
