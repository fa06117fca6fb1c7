"""Kubernetes: a job's launch as a LeaderWorkerSet - the same plan as the shell launch
(:mod:`rtc.plan.launch`), with what differs from pod to pod taken from the pod's own
environment instead of written in.

One LeaderWorkerSet (LWS) per job, one pod per server of the job: the job's first server
is the leader (LWS worker index 0), the others are workers 1..N-1 in the order of the plan.
Every worker pod is made from one template, so a value that differs between servers must
come from the pod: :func:`plan_lws` rewrites each node's argv and env with

============================  ================================================================
shell launch (server k)       pod
============================  ================================================================
``--data-parallel-start-rank  ``$((LWS_WORKER_INDEX * L))`` on workers (L = the local DP size
S``                           every server shares; the leader keeps 0)
``--data-parallel-address`` / ``$LWS_LEADER_ADDRESS`` when it is the head's host (the default)
``--master-addr`` HEAD
``--node-rank K``             ``$LWS_WORKER_INDEX``
``--address=HEAD:P`` (Ray)    ``--address=$LWS_LEADER_ADDRESS:P``
``--node-ip-address=HOST``    ``--node-ip-address=$POD_IP``
``RAY_ADDRESS=HOST:P``        ``RAY_ADDRESS=$POD_IP:P``
``engine_id`` JOB-SERVER      JOB-``$LWS_WORKER_INDEX`` (inside ``--kv-transfer-config``)
``HCCL_IF_IP`` /              the pod IP (downward API ``status.podIP``); with
``VLLM_HOST_IP``              ``hostNetwork`` it is the node's host IP, as in the shell launch
``ASCEND_RT_VISIBLE_DEVICES`` ``0..n-1``: the device plugin hands the container its n NPUs
                              numbered from 0 (equal to the shell's value when the job uses
                              devices 0..n-1, or declares ``visible_devices``)
``RANK_TABLE_FILE``           the mounted ``rings-config-<job>`` ConfigMap
                              (``/user/serverid/devindex/config/hccl.json``)
============================  ================================================================

and then requires every worker's rewritten launch to be identical (else the job is
``blocked`` with the reason). Ray workers get ``--block`` (a container ends when its command
does), and the Ray leader waits until ``LWS_GROUP_SIZE`` nodes have joined before
``vllm serve``. Everything else - ports, flags, the job's ``env`` - is the shell launch's.

``hostNetwork`` is used when the job spans servers or names a host NIC (``nic``, for the
``*_SOCKET_IFNAME`` variables): HCCL, Gloo and the DP coordinator then bind the host's
interfaces and the port plan's ports, as in the shell launch.

Facts about the formats are data with their sources (:data:`FACTS`, :data:`HARDWARE`,
:data:`HOST_MOUNTS`); :mod:`rtc.emit.kubernetes` renders the plan as YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rtc.model.topology import Topology
from rtc.plan.launch import JobLaunch, NodeLaunch, Proc, Ref
from rtc.plan.node_env import node_env
from rtc.plan.ports import PortPlan
from rtc.rules import rule

K8S_BLOCKED = rule("RTC770", "k8s-not-renderable", "error",
                   "A job's launch cannot be written as one LeaderWorkerSet.", """
    What: `rtc compile --target k8s` was asked for a job whose launch has no LeaderWorkerSet
    form: a framework other than vLLM, `lb external` (one process per DP rank with its own
    NPUs), the LLMDataDist connector, hardware without a known device resource,
    servers whose pods would need different templates (different NPU counts or dp_local),
    or a server name that cannot be its node's `kubernetes.io/hostname` label (upper case,
    over 63 characters, not alphanumeric at both ends).
    Why: every worker pod of a LeaderWorkerSet comes from one template; what differs
    between pods can only come from the pod's index and address.
    Example: `job j { servers a, b  dp 3 }` with 2 replicas on a and 1 on b.
    Fix: give every worker server the same devices and dp_local, or use the shell
    launch (`--target shell`) for this job.""")

CONFIGMAP_TOO_LARGE = rule("RTC776", "configmap-too-large", "error",
                          "A job's rank table does not fit in a ConfigMap.", """
    What: the job's hccl.json, even written without spaces, is larger than the 1 MiB of
    data a Kubernetes ConfigMap may hold.
    Why: the API server rejects the ConfigMap, so the pods' rank table volume never
    appears and the pods never start.
    Example: a job over 1,024 A3 servers (16,384 ranks, about 1.5 MB of compact JSON).
    Fix: serve the table from shared storage (MindCluster's ascend-operator has a
    shared-storage variant, /user/mindx-dl/ranktable/<namespace>.<job>) and mount that
    instead, or split the deployment into smaller jobs.""")

RULES = (K8S_BLOCKED, CONFIGMAP_TOO_LARGE)

_LWS_DOC = ("kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go "
            "(LwsLeaderAddress, LwsWorkerIndex, LwsGroupSize, SetNameLabelKey)")
_MC_DOC = ("Ascend/mind-cluster docs/en/scheduling/api/hccl.json_file_description.md and the "
           "job YAML examples; ascend-common api (Pod910DeviceAnno, JobKindKey)")


_CD_DOC = ("NVIDIA/k8s-dra-driver-gpu v25.8.1 deployments/helm/nvidia-dra-driver-gpu/crds/"
           "resource.nvidia.com_computedomains.yaml (ComputeDomain: spec.numNodes, "
           "spec.channel.resourceClaimTemplate.name; the controller creates that "
           "ResourceClaimTemplate, whose claim injects the IMEX channel); docs.nvidia.com/"
           "datacenter/cloud-native/gpu-operator/latest/dra-cds.html (multi-node NVLink in "
           "pods needs a ComputeDomain)")


@dataclass(frozen=True)
class Fact:
    """One format fact: its value and where it comes from."""

    value: str
    source: str


#: Names and paths of the formats the manifests follow, each with its source.
FACTS: dict[str, Fact] = {
    "lws_api": Fact("leaderworkerset.x-k8s.io/v1", _LWS_DOC),
    "leader_address": Fact("LWS_LEADER_ADDRESS", _LWS_DOC),
    "worker_index": Fact("LWS_WORKER_INDEX", _LWS_DOC + "; injected since LWS 0.6.0"),
    "group_size": Fact("LWS_GROUP_SIZE", _LWS_DOC),
    "set_name_label": Fact("leaderworkerset.sigs.k8s.io/name", _LWS_DOC),
    "restart_policy": Fact("RecreateGroupOnPodRestart", _LWS_DOC + " (RestartPolicyType)"),
    "configmap_prefix": Fact("rings-config-", _MC_DOC),
    "configmap_key": Fact("hccl.json", _MC_DOC + "; hccl-controller ConfigmapKey"),
    "ranktable_dir": Fact("/user/serverid/devindex/config", _MC_DOC + "; volcano "
                          "ringsconfigmap plugin default MountPath"),
    "ranktable_volume": Fact("ascend-910-config", _MC_DOC + "; volcano ringsconfigmap "
                             "plugin default VolumeName"),
    "ring_label": Fact("ring-controller.atlas", _MC_DOC),
    "device_annotation": Fact("ascend.kubectl.kubernetes.io/ascend-910-configuration",
                              _MC_DOC + "; ascend-operator pkg/ranktable/common/common.go "
                              "parseDeviceInfo (Instance: pod_name, server_id, host_ip, "
                              "devices[device_id, device_ip, super_device_id])"),
    "rank_index_annotation": Fact("hccl/rankIndex", "ascend-operator pkg/ranktable/common/"
                                  "common.go buildServerInfo (rank_id = rankIndex x devices "
                                  "+ index)"),
    "shm_size": Fact("15Gi", "vllm-ascend tests/e2e/nightly/multi_node/scripts/lws-a2.yaml"
                     ".jinja2 (dshm emptyDir, medium Memory)"),
    "configmap_limit": Fact("1048576", "Kubernetes docs, concepts/configuration/configmap: "
                            "the data stored in a ConfigMap cannot exceed 1 MiB"),
    "hostname_label": Fact("kubernetes.io/hostname", "Kubernetes docs, reference/labels-"
                           "annotations-taints (the node's hostname, set by kubelet)"),
    "worker_index_label": Fact("leaderworkerset.sigs.k8s.io/worker-index", _LWS_DOC
                               + " (WorkerIndexLabelKey, on every pod of a group)"),
    "gpu_resource": Fact("nvidia.com/gpu", "NVIDIA/k8s-device-plugin README (the "
                         "resource the device plugin advertises; the container sees its "
                         "GPUs numbered from 0)"),
    "exclusive_topology": Fact("leaderworkerset.sigs.k8s.io/exclusive-topology", _LWS_DOC
                               + " (ExclusiveKeyAnnotationKey: a node label key; the LWS "
                               "webhook gives each group's pods an affinity to one domain of "
                               "that label and an anti-affinity to other groups)"),
    "kueue_required_topology": Fact("kueue.x-k8s.io/podset-required-topology",
                                    "kubernetes-sigs/kueue docs, concepts/topology_aware_"
                                    "scheduling (a pod-template annotation: the PodSet must "
                                    "land inside one domain of the named level)"),
    "nvlink_domain_label": Fact("nvidia.com/gpu.clique", "NVIDIA GPU Feature Discovery / "
                                "GPU Operator (docs.nvidia.com/datacenter/cloud-native/gpu-"
                                "operator/latest/dra-cds.html: the label names a node's "
                                "multi-node NVLink domain, <cluster UUID>.<clique id>)"),
    "superpod_label": Fact("volcano.sh/hypernode", "volcano-sh/volcano docs/user-guide/how_to_"
                           "use_hypernode_auto_discovery.md (label discovery, topologyA3: the "
                           "node label naming the hypernode, i.e. the A3 super pod, a node "
                           "belongs to; since v1.13.0). MindCluster's device plugin writes "
                           "the super pod id as the node annotation superPodID (Ascend/mind-"
                           "cluster component/ascend-device-plugin pkg/server/manager.go "
                           "getNewNodeAnnotation, v7.3.x), not as a label"),
    "volcano_spblock": Fact("sp-block", "Ascend/mind-cluster component/ascend-for-volcano "
                            "common/util/type.go SuperPodAnnoKey (a job annotation: the NPUs "
                            "of one logical super pod; read from the PodGroup, which an LWS "
                            "fills only with its volcano.sh/ annotations - kubernetes-sigs/"
                            "lws pkg/schedulerprovider/volcano_provider.go)"),
    "compute_domain_api": Fact("resource.nvidia.com/v1beta1", _CD_DOC),
    "compute_domain_claim": Fact("imex-channel", _CD_DOC + "; the claim's name in the pod "
                                 "spec's resourceClaims and the container's resources.claims "
                                 "(demo/specs/imex/channel-injection.yaml)"),
    "k8s_version": Fact("1.33", "the Kubernetes API version the manifests are validated "
                        "against (kubernetes-validate's bundled schemas)"),
}


@dataclass(frozen=True)
class HardwareRow:
    """The device plugin's resource name and the ConfigMap's ``ring-controller.atlas``
    label for one hardware preset."""

    preset: str
    resource: str
    ring_label: str
    source: str


HARDWARE: tuple[HardwareRow, ...] = (
    HardwareRow("atlas-800-910a", "huawei.com/Ascend910", "ascend-910",
                _MC_DOC + " (JobKind910Value; resources huawei.com/Ascend910)"),
    HardwareRow("atlas-800t-a2", "huawei.com/Ascend910", "ascend-910b",
                _MC_DOC + " (JobKind910BValue; Atlas 800T A2 examples request "
                "huawei.com/Ascend910)"),
    HardwareRow("atlas-800-a3", "huawei.com/Ascend910", "ascend-910b",
                _MC_DOC + " (JobKind910BValue); vllm-ascend kubernetes_pd_disaggregation.md"),
)


@dataclass(frozen=True)
class HostMount:
    """A host path every NPU pod mounts at the same path (``kind``: the hostPath type)."""

    name: str
    path: str
    kind: str
    source: str


_VA_DOCKER = ("vllm-ascend docs/source/tutorials (multi-node `docker run` mounts); "
              "vllm-ascend kubernetes_pd_disaggregation.md (hccn.conf hostPath)")
HOST_MOUNTS: tuple[HostMount, ...] = (
    HostMount("ascend-dcmi", "/usr/local/dcmi", "Directory", _VA_DOCKER),
    HostMount("hccn-tool", "/usr/local/Ascend/driver/tools/hccn_tool", "File", _VA_DOCKER),
    HostMount("npu-smi", "/usr/local/bin/npu-smi", "File", _VA_DOCKER),
    HostMount("driver-lib64", "/usr/local/Ascend/driver/lib64", "Directory", _VA_DOCKER),
    HostMount("driver-version", "/usr/local/Ascend/driver/version.info", "File", _VA_DOCKER),
    HostMount("ascend-install-info", "/etc/ascend_install.info", "File", _VA_DOCKER),
    HostMount("hccn-conf", "/etc/hccn.conf", "File", _VA_DOCKER),
)


def fact(name: str) -> str:
    """The value of :data:`FACTS` ``name``."""
    return FACTS[name].value


@dataclass(frozen=True)
class Var:
    """A variable of the pod's shell (``$NAME``)."""

    name: str


@dataclass(frozen=True)
class Times:
    """``$((NAME * factor))`` in the pod's shell."""

    name: str
    factor: int


@dataclass(frozen=True)
class FieldRef:
    """An env value from the downward API (``status.podIP``)."""

    path: str


#: One argv word: literal strings, :class:`Var` and :class:`Times` parts, concatenated.
Word = tuple


@dataclass
class PodProc:
    """One command of the pod: its words and per-command env (name, Word); ``wait_group``:
    a wait until ``LWS_GROUP_SIZE`` Ray nodes have joined, before this command."""

    words: list
    env: list = field(default_factory=list)
    wait_group: bool = False


@dataclass
class PodRole:
    """The leader's or the workers' pod template: the servers it stands for, its commands
    (the last one is the pod's main process), its env ``(name, str | FieldRef)``, its NPU
    count and whether it serves the API (``port``)."""

    role: str
    servers: list[str]
    procs: list[PodProc]
    env: list
    npus: int
    port: int | None = None


@dataclass
class LwsPlan:
    """The LeaderWorkerSet of one job: its name, size, pod templates, whether pods use the
    host network, the device plugin resource, the ConfigMap name and label, and
    ``blocked`` (why no LWS can be written; then the templates are None)."""

    job: str
    name: str
    size: int = 0
    leader: PodRole | None = None
    worker: PodRole | None = None
    host_network: bool = False
    resource: str = ""
    ring_label: str = ""
    configmap: str = ""
    table: bool = False
    npu: bool = True
    blocked: str | None = None
    #: A node label key every pod of the group must share one value of (the NVLink domain
    #: of a GB200/GB300 NVL72 job that spans trays), and why; None when hostnames suffice.
    domain_label: str | None = None
    domain_reason: str = ""
    #: The job's TP size (each TP group that fits a pod's NPUs stays on its node).
    tp: int = 0
    #: The ComputeDomain whose IMEX channel every pod claims (NVIDIA multi-node NVLink:
    #: a GB200/GB300 NVL72 group over several trays of one domain), else None.
    compute_domain: str | None = None


class _Blocked(Exception):
    pass


def k8s_name(name: str) -> str | None:
    """``name`` as a Kubernetes object name (DNS-1123 label: lower case, ``_`` and ``.``
    as ``-``), or None when that is still not a valid label (RFC 1123, at most 63
    characters; the ConfigMap's ``rings-config-`` prefix must fit too)."""
    out = name.lower().replace("_", "-").replace(".", "-")
    ok = out and len(out) + len(fact("configmap_prefix")) <= 63 \
        and out[0].isalnum() and out[-1].isalnum() \
        and all(c.isalnum() and c.isascii() or c == "-" for c in out)
    return out if ok else None


#: A label value (apimachinery pkg/util/validation IsValidLabelValue: at most 63
#: characters, alphanumerics at both ends, ``-_.`` between).
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def node_name_problem(name: str) -> str | None:
    """Why server ``name`` cannot be the ``kubernetes.io/hostname`` label of a node (None
    when it can): not a label value (:data:`_LABEL_VALUE`), or upper-case letters (kubelet
    lower-cases the host name it labels the node with: kubernetes pkg/util/node
    GetHostname)."""
    if not _LABEL_VALUE.fullmatch(name):
        return ("is not a Kubernetes label value (at most 63 characters, letters or digits "
                "at both ends, -_. between)")
    if name != name.lower():
        return "has upper-case letters, and kubelet labels each node with its lower-case name"
    return None


def _placement_domain(topo: Topology, jl: JobLaunch) -> tuple[str | None, str]:
    """The node label the group must stay inside, and why (issue 36: placement constraints
    in the scheduler's terms), for a job over several servers of one ``super_pod``:

    * NVIDIA multi-node NVLink domains (GB200/GB300 NVL72 trays): ``nvidia.com/gpu.clique``;
      TP / EP traffic stays on NVLink only if every pod lands in that domain.
    * Ascend super pods (Atlas 900 A3 SuperPoD, Atlas 800 A3 in a super pod): the rank
      table's ``super_pod_list`` and HCCS between servers hold only inside one super pod;
      the label is Volcano's ``volcano.sh/hypernode`` (:data:`FACTS` ``superpod_label``).
      MindCluster's device plugin records the super pod id as a node *annotation*
      (``superPodID``), which no node affinity can select on.

    A job on one server, or over servers of several super pods, needs no domain: its pods
    are pinned by hostname (and each TP group that fits a server is one pod's NPUs)."""
    servers = [nl.server for nl in jl.nodes]
    if not topo.preset.super_pod or len(servers) < 2:
        return None, ""
    domains = {s.super_pod_id for s in servers}
    if len(domains) != 1 or None in domains:
        return None, ""
    job = jl.job
    ep = f"EP {'on' if job.expert_parallel else 'off'}"
    if topo.preset.is_gpu:
        return fact("nvlink_domain_label"), (
            f"TP {job.tp} x {ep} over {len(servers)} trays of NVLink domain {domains.pop()}")
    return fact("superpod_label"), (
        f"TP {job.tp} x DP {job.dp} x {ep} over {len(servers)} servers of super pod "
        f"{domains.pop()} (HCCS between them only inside it)")


def plan_lws(topo: Topology, ports: PortPlan, jl: JobLaunch) -> LwsPlan:
    """The :class:`LwsPlan` of one job's launch (see the module docstring). Never raises:
    a job that cannot be one LeaderWorkerSet gets ``blocked`` with the reason."""
    job = jl.job
    out = LwsPlan(job.name, k8s_name(job.name) or job.name)
    try:
        row = _check_launchable(topo, jl)
        if k8s_name(job.name) is None:
            raise _Blocked(f"'{job.name}' cannot be made a Kubernetes name (lower-case "
                           "letters, digits and '-', at most 50 characters)")
        out.resource, out.ring_label = row.resource, row.ring_label
        out.npu = not topo.preset.is_gpu
        out.configmap = fact("configmap_prefix") + out.name
        out.size = len(jl.nodes)
        out.host_network = len(jl.nodes) > 1 or any(nl.server.nic for nl in jl.nodes)
        roles = [_role(topo, ports, jl, k, nl) for k, nl in enumerate(jl.nodes)]
    except _Blocked as exc:
        out.blocked = str(exc)
        return out
    out.leader = roles[0]
    out.table = any(name == "RANK_TABLE_FILE" for name, _v in roles[0].env)
    out.domain_label, out.domain_reason = _placement_domain(topo, jl)
    if out.domain_label == fact("nvlink_domain_label"):
        out.compute_domain = out.name   # its ResourceClaimTemplate has the same name
    out.tp = job.tp
    if len(roles) > 1:
        out.worker = roles[1]
        for other in roles[2:]:
            if (other.procs, other.env, other.npus) != (out.worker.procs, out.worker.env,
                                                         out.worker.npus):
                out.blocked = (f"servers {out.worker.servers[0]} and {other.servers[0]} "
                               "need different pod templates (their NPU counts, flags or "
                               "env differ beyond what the pod's index gives)")
                out.leader = out.worker = None
                return out
            out.worker.servers.append(other.servers[0])
    return out


def _check_launchable(topo: Topology, jl: JobLaunch) -> HardwareRow:
    job = jl.job
    if jl.blocked:
        raise _Blocked(jl.blocked)
    if job.framework != "vllm":
        raise _Blocked(f"framework {job.framework}: rtc writes LeaderWorkerSets for vLLM "
                       "jobs only")
    if jl.mode == "dp-external":
        raise _Blocked("lb external runs one server process per DP rank with its own NPUs; "
                       "use lb internal or lb hybrid for a LeaderWorkerSet")
    if job.kv_connector == "llmdatadist":
        raise _Blocked("kv_connector llmdatadist reads a PD rank table file; use mooncake "
                       "or mooncake_layerwise on Kubernetes")
    if not jl.nodes:
        raise _Blocked("the job has no devices")
    for nl in jl.nodes:
        why = node_name_problem(nl.server.name)
        if why:
            raise _Blocked(f"server name '{nl.server.name}' {why}; the pods find their "
                           f"node by its {fact('hostname_label')} label, so name the server "
                           "as the node is named")
    if topo.preset.is_gpu:
        return HardwareRow(topo.preset.name, fact("gpu_resource"), "",
                           FACTS["gpu_resource"].source)
    row = next((r for r in HARDWARE if r.preset == topo.preset.name), None)
    if row is None:
        raise _Blocked(f"no Kubernetes device resource is known for hardware "
                       f"{topo.preset.name}")
    return row


def _role(topo: Topology, ports: PortPlan, jl: JobLaunch, k: int, nl: NodeLaunch) -> PodRole:
    """The pod template of node ``k`` of the launch (index 0: the leader)."""
    head = jl.nodes[0].server
    dp_local = jl.nodes[1].node.dp_local if len(jl.nodes) > 1 else nl.node.dp_local
    ctx = _Ctx(jl.job.name, nl.server.name, str(head.host_ip), str(nl.server.host_ip), k,
               dp_local)
    procs = [PodProc([ctx.word(a, p) for a, p in zip(proc.argv, [None] + proc.argv[:-1])],
                     [(n, ctx.env_word(v)) for n, v in proc.env])
             for proc in nl.procs]
    if jl.mode == "ray":
        _ray_adjust(procs, nl)
    n = nl.node.device_count
    return PodRole("leader" if k == 0 else "worker", [nl.server.name], procs,
                   _pod_env(topo, ports, jl, nl), n, _api_port(nl.procs[-1]))


def _ray_adjust(procs: list[PodProc], nl: NodeLaunch) -> None:
    """Ray in a pod: a worker's ``ray start`` blocks (the container lives as long as its
    command); the leader waits for the whole group before ``vllm serve``."""
    if not nl.head:
        procs[-1].words.append(("--block",))
    elif len(procs) > 1:
        procs[-1].wait_group = True


def _api_port(proc: Proc) -> int | None:
    words = [a for a in proc.argv if isinstance(a, str)]
    if "serve" not in words or "--headless" in words or "--port" not in words:
        return None
    i = words.index("--port")
    return int(words[i + 1]) if i + 1 < len(words) and words[i + 1].isdigit() \
        and len(words[i + 1]) <= 20 else None


class _Ctx:
    """Rewrites one node's argv words for its pod (see the module docstring's table)."""

    def __init__(self, job: str, server: str, head_host: str, own_host: str, index: int,
                 dp_local: int):
        self.job, self.server, self.head, self.index = job, server, head_host, index
        self.own = own_host
        self.dp_local = dp_local
        self.leader, self.windex = Var(fact("leader_address")), Var(fact("worker_index"))

    def word(self, a, prev) -> Word:
        if isinstance(a, Ref):
            return (Var(a.name),)
        if prev == "--data-parallel-start-rank":
            if int(a) != self.index * self.dp_local:
                raise _Blocked(f"server {self.server} starts at DP rank {a}, not at its pod "
                               f"index x the local DP size ({self.index} x {self.dp_local}); "
                               "every worker needs the same dp_local")
            return (a,) if self.index == 0 else (Times(self.windex.name, self.dp_local),)
        if prev in ("--data-parallel-address", "--master-addr") and a == self.head:
            return (self.leader,)
        if prev == "--node-rank":
            return (self.windex,)
        if a.startswith(f"--address={self.head}:"):
            return ("--address=", self.leader, a[len(f"--address={self.head}"):])
        if a.startswith("--node-ip-address="):
            return ("--node-ip-address=", Var("POD_IP"))
        if prev == "--kv-transfer-config":
            engine = f'"engine_id": "{self.job}-{self.server}'
            if engine in a:
                before, after = a.split(engine, 1)
                return (before + f'"engine_id": "{self.job}-', self.windex, after)
        return (a,)

    def env_word(self, value: str) -> Word:
        """A per-process env value: ``HOST:PORT`` of this node (Ray's RAY_ADDRESS) takes
        the pod IP."""
        if value.startswith(self.own + ":"):
            return (Var("POD_IP"), value[len(self.own):])
        return (value,)


def _pod_env(topo: Topology, ports: PortPlan, jl: JobLaunch, nl: NodeLaunch) -> list:
    """The container env of node ``nl``'s pod: POD_IP, then the node env of the shell
    launch with the pod-given values (module docstring), then MODEL when the job names
    one."""
    job = jl.job
    ne = node_env(topo, ports, job, nl.server, nl.node.device_ids, stem=nl.stem,
                  head=nl.head, launch_env=nl.env, table=fact("configmap_key"))
    out: list = [("POD_IP", FieldRef("status.podIP"))]
    for v in ne.variables:
        if v.name in ("HCCL_IF_IP", "VLLM_HOST_IP"):
            out.append((v.name, FieldRef("status.podIP")))
        elif v.name in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
            out.append((v.name, ",".join(str(i) for i in range(nl.node.device_count))))
        elif v.path:
            out.append((v.name, f"{fact('ranktable_dir')}/{v.value}"))
        else:
            out.append((v.name, v.value))
    if job.launch.model:
        out.append(("MODEL", job.launch.model))
    return out


__all__ = ["RULES", "K8S_BLOCKED", "CONFIGMAP_TOO_LARGE", "FACTS", "HARDWARE", "HOST_MOUNTS", "LwsPlan", "PodRole", "PodProc", "Var",
           "Times", "FieldRef", "plan_lws", "k8s_name", "fact"]
