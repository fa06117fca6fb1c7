"""The environment of each node of a job: what ``<server>.env`` exports (rendered by
:mod:`rtc.emit.env_file`) and what the checks compare the job's ``env`` lines with.

Variables, in this order:

1. ``HCCL_IF_IP`` (and ``VLLM_HOST_IP`` for vLLM) - the server's ``host`` (a MindIE job on
   a server with ``container_ip``: that pod IP, the address its network namespace has);
2. ``HCCL_SOCKET_IFNAME``, ``GLOO_SOCKET_IFNAME``, ``TP_SOCKET_IFNAME`` - the server's
   ``nic`` (a job ``env`` line for one of them replaces it, in place);
3. ``ASCEND_RT_VISIBLE_DEVICES`` - the job's devices on the server, as container ids when
   the server declares ``visible_devices`` (physical ids otherwise);
4. ``HCCL_IF_BASE_PORT`` - from the port plan, when it is not HCCL's default 60000;
5. ``RANK_TABLE_FILE`` - the job's rank table in the same folder
   (``"${RTC_DIR:-.}"/hccl.json``; the launch script sets ``RTC_DIR`` to its own folder),
   except for a dense vLLM job with DP > 1, whose replicas are independent worlds;
6. what the launch mode needs on the node: ``RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES``
   (Ray), ``RANK_SIZE`` (rank-table launches), ``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``
   (torch_npu), ``DISAGGREGATED_PREFILL_RANK_TABLE_PATH`` (LLMDataDist); MindIE
   (``framework mindie``, :mod:`rtc.plan.mindie`): ``MIES_CONTAINER_IP`` and
   ``MIES_CONTAINER_MANAGEMENT_IP`` (the server's ``container_ip``, else its ``host``) and
   ``RANKTABLEFILE`` (the rank table under MindIE 1.0's name, beside ``RANK_TABLE_FILE``);
7. the job's own ``env`` lines, in the order written (a name written twice is an error,
   RTC115).

On NVIDIA GPU hardware (``preset.is_gpu``) the variables are those of NCCL, Gloo and the
CUDA runtime: ``VLLM_HOST_IP``; ``NCCL_SOCKET_IFNAME`` and ``GLOO_SOCKET_IFNAME`` (the
server's ``nic``; NCCL reads a prefix list, Gloo one name); ``NCCL_IB_HCA`` (the server's
``ib_hca``, as exact names ``=mlx5_0,mlx5_1``); ``CUDA_VISIBLE_DEVICES`` (as 3);
``NCCL_TOPO_FILE`` (``nccl_topo_file on``: ``nccl-topo-<server>.xml`` of the folder);
``RTC_NVLINK_DOMAIN`` (NVL72-class hardware, the preset's ``super_pod``: the server's
``super_pod``, the NVLink domain its GPUs share with other trays, as Kubernetes labels it
``nvidia.com/gpu.clique``; read by no runtime, but by ``rtc lint``, so that TP across the
trays of one domain is not cross-server there either); then 6-7.
No HCCL variable and no rank table. (NCCL env docs; reference targets.md section 6.)

rtc computes 1, 3-6 per node; a job ``env`` line for one of those names is not written
again (:mod:`rtc.checks.launch_settings` warns, RTC507, when its value differs from the
computed one). Per-rank values (``RANK_ID``, ``DEVICE_ID``) are on each process's command line in
the launch script.
"""

from __future__ import annotations

from typing import NamedTuple

from rtc.model.topology import Job, Server, Topology
from rtc.network.env import HCCL_DEFAULT_BASE, env_map
from rtc.plan.launch import container_list
from rtc.plan.ports import PortPlan

IFNAME_VARS = ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
#: The interface variables of NCCL / Gloo on NVIDIA GPU servers.
GPU_IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
#: variables rtc computes per node; a job `env` line cannot change them.
COMPUTED = ("HCCL_IF_IP", "VLLM_HOST_IP", "ASCEND_RT_VISIBLE_DEVICES", "HCCL_IF_BASE_PORT",
            "RANK_TABLE_FILE", "RANK_SIZE", "RANK_ID", "DEVICE_ID", "RANK", "LOCAL_RANK",
            "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
            "DISAGGREGATED_PREFILL_RANK_TABLE_PATH", "CUDA_VISIBLE_DEVICES",
            "MIES_CONTAINER_IP", "MIES_CONTAINER_MANAGEMENT_IP", "RANKTABLEFILE",
            "RTC_NVLINK_DOMAIN")
#: The variable naming a GPU server's NVLink domain (NVL72-class trays; rtc lint reads it).
NVLINK_DOMAIN_VAR = "RTC_NVLINK_DOMAIN"


class EnvVar(NamedTuple):
    """One variable; ``path`` True means ``value`` is a file name in the output folder."""

    name: str
    value: str
    origin: str          # "rtc" | "job"
    path: bool = False


class NodeEnv:
    """The variables of ``job`` on ``server``, in the order they are exported; ``stem`` is
    the node's file stem, ``head`` whether it is the job's first server."""

    job: Job
    server: Server
    stem: str
    head: bool
    variables: list[EnvVar]

    def __init__(
            self, job: Job, server: Server, stem: str, head: bool,
            variables: list[EnvVar] | None = None) -> None:
        self.job = job
        self.server = server
        self.stem = stem
        self.head = head
        self.variables = [] if variables is None else variables

    def get(self, name: str) -> str | None:
        return next((v.value for v in self.variables if v.name == name), None)


def _independent_replicas(topo: Topology, job: Job) -> bool:
    """A dense vLLM job with DP > 1 runs DP independent engines, each its own torch world;
    the job's rank table describes all of them at once, so exporting it as
    ``RANK_TABLE_FILE`` (which torch_npu uses to build its default HCCL group) would give
    every engine's rank 0 the same table rank. Such jobs get no ``RANK_TABLE_FILE``."""
    try:
        return topo.placement(job).independent_replicas
    except ValueError:  # no placement: the checks report it
        return False


def node_env(topo: Topology, ports: PortPlan, job: Job, server: Server, device_ids, *,
             stem: str, head: bool, launch_env=(), table: str | None = None,
             pd_table: str | None = None) -> NodeEnv:
    """The environment of ``job`` on ``server`` (see the module docstring): ``device_ids``
    are the job's physical ids there, ``launch_env`` the node-level variables of its launch
    (:attr:`rtc.plan.launch.NodeLaunch.env`), ``table`` / ``pd_table`` the file names of the
    rank tables the node reads (None: not exported)."""
    if topo.preset.is_gpu:
        return _gpu_env(topo, job, server, device_ids, NodeEnv(job, server, stem, head),
                        launch_env)
    out = NodeEnv(job, server, stem, head)
    vs = out.variables
    env = env_map(job)
    if job.framework == "mindie" and server.container_ip is not None:
        # the pod's own network namespace has the pod IP, not the host's (FACTS HCCL_IF_IP)
        vs.append(EnvVar("HCCL_IF_IP", str(server.container_ip), "rtc"))
    elif server.host_ip is not None:
        vs.append(EnvVar("HCCL_IF_IP", str(server.host_ip), "rtc"))
        if job.framework == "vllm":
            vs.append(EnvVar("VLLM_HOST_IP", str(server.host_ip), "rtc"))
    _interfaces(vs, env, IFNAME_VARS, server.nic)
    if device_ids:
        vs.append(EnvVar("ASCEND_RT_VISIBLE_DEVICES",
                         container_list(server, topo.preset, device_ids), "rtc"))
    jp = ports.jobs.get(job.name)
    if jp is not None and not jp.hccl_ranges and jp.hccl_base is not None \
            and jp.hccl_base != HCCL_DEFAULT_BASE:
        vs.append(EnvVar("HCCL_IF_BASE_PORT", str(jp.hccl_base), "rtc"))
    if table and not _independent_replicas(topo, job):
        vs.append(EnvVar("RANK_TABLE_FILE", table, "rtc", path=True))
        if job.framework == "mindie":
            vs.append(EnvVar("RANKTABLEFILE", table, "rtc", path=True))
    if job.framework == "mindie":
        _mindie_addresses(vs, server)
    for name, value in launch_env:
        vs.append(EnvVar(name, value, "rtc"))
    if pd_table:
        vs.append(EnvVar("DISAGGREGATED_PREFILL_RANK_TABLE_PATH", pd_table, "rtc", path=True))
    _job_lines(vs, env)
    return out


def _mindie_addresses(vs: list[EnvVar], server: Server) -> None:
    """MIES_CONTAINER_IP / MIES_CONTAINER_MANAGEMENT_IP of a MindIE node (none without an
    address: RTC656 says so)."""
    from rtc.plan.mindie import service_ip

    ip = service_ip(server)
    if ip is not None:
        vs.append(EnvVar("MIES_CONTAINER_IP", ip, "rtc"))
        vs.append(EnvVar("MIES_CONTAINER_MANAGEMENT_IP", ip, "rtc"))


def _interfaces(vs: list[EnvVar], env: dict, names, value: str | None) -> None:
    """Each of ``names``: the job's ``env`` line when it has one, else ``value`` (rtc's)."""
    for name in names:
        if name in env:
            vs.append(EnvVar(name, env[name][0], "job"))
        elif value:
            vs.append(EnvVar(name, value, "rtc"))


def _job_lines(vs: list[EnvVar], env: dict) -> None:
    """Append the job's own ``env`` lines not already written."""
    written = {v.name for v in vs}
    for name, (value, _span) in env.items():
        if name in written:
            continue
        vs.append(EnvVar(name, value, "job"))
        written.add(name)


def nccl_topo_name(server: Server) -> str | None:
    """The NCCL_TOPO_FILE of a GPU server in the output folder (None unless it has
    ``nccl_topo_file on`` and both nvidia-smi captures)."""
    inv = server.inventory_facts
    if not server.nccl_topo_file or inv is None or inv.gpu_topo is None or inv.gpu_list is None:
        return None
    return f"nccl-topo-{server.name}.xml"


def _gpu_env(topo: Topology, job: Job, server: Server, device_ids, out: NodeEnv,
             launch_env) -> NodeEnv:
    """The NVIDIA GPU node environment (see the module docstring)."""
    vs = out.variables
    env = env_map(job)
    if server.host_ip is not None and job.framework == "vllm":
        vs.append(EnvVar("VLLM_HOST_IP", str(server.host_ip), "rtc"))
    _interfaces(vs, env, GPU_IFNAME_VARS, server.nic)
    _interfaces(vs, env, ("NCCL_IB_HCA",), "=" + ",".join(server.ib_hca) if server.ib_hca
                else None)
    if device_ids:
        vs.append(EnvVar("CUDA_VISIBLE_DEVICES",
                         container_list(server, topo.preset, device_ids), "rtc"))
    if nccl_topo_name(server) is not None and "NCCL_TOPO_FILE" not in env:
        vs.append(EnvVar("NCCL_TOPO_FILE", nccl_topo_name(server), "rtc", path=True))
    if topo.preset.super_pod and server.super_pod_id is not None:
        vs.append(EnvVar(NVLINK_DOMAIN_VAR, str(server.super_pod_id), "rtc"))
    for name, value in launch_env:
        vs.append(EnvVar(name, value, "rtc"))
    _job_lines(vs, env)
    return out
