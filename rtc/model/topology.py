"""The Topology: the lowered, fully expanded cluster that checks and emitters work on.

Servers keep their declared order; each holds its devices (ascending physical
``device_id``) with RoCE address, gateway, prefix and, on A3, ``super_device_id``. Jobs
name the devices they use; :meth:`Topology.rank_table_members` gives them in rank order
(servers in declared order, devices ascending), which is how ``rank_id`` 0..N-1 is
assigned. Each job carries its launch attributes as written (:class:`LaunchSpec`); what
runs where, on which ports, is planned from here by :mod:`rtc.plan`.

Attributes that were written but could not be read (an error was already reported) are in
the ``incomplete`` set of their server, job, network or fabric: a check that depends on one
must skip the object instead of judging defaults (``tp eight`` leaves tp at 1, and a
world-size error about tp 1 would be wrong advice).
"""

from __future__ import annotations

import ipaddress
import operator
import re
import unicodedata
from typing import TYPE_CHECKING, Iterator

from rtc.diagnostics import Span
from rtc.model.presets import Preset
from rtc.network.addressing import Fabric, HostNetwork, address_key
from rtc.parallel.placement import JobPlacement, place_job
from rtc.syntax.decls import EnvLine, ParamLine, PolicyLine

_DEVICE_ID = operator.attrgetter("device_id")  # sort key: a device's physical id

if TYPE_CHECKING:  # the inventory parsers are imported only when a server has captures
    from rtc.inventory.facts import ServerInventory

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Device:
    """One NPU (an HCCL device; on A3 one die). ``device_id`` is the physical id
    (``/dev/davinciN``), the rank table's ``device_id``."""

    device_id: int
    device_ip: IPAddress | None
    gateway: IPAddress | None
    prefix: int | None
    super_device_id: int | None
    #: Ascend 950: the UB EID of each die (32 hex digits), die 0 first; None when not given.
    eids: tuple[str, ...] | None
    #: Ascend 950: per-port EIDs ``((layer, "die/port", eid), ...)`` where a level lists one
    #: address per port (``port_eid``; MindCluster's physical EIDs); None when not given.
    port_eids: tuple[tuple[int, str, str], ...] | None
    #: Ascend 950: IPv4 / IPv6 addresses a UB level lists instead of EIDs (``level_ip``, the
    #: host NIC form of HCCL rank_table_config_a5.md), ``((layer, die, address), ...)``.
    port_ips: tuple[tuple[int, int, object], ...] | None
    #: Ascend 950: ``plane`` lines, layer -> plane_id per die (one name: every die).
    planes: dict | None

    __slots__ = (
        "device_id", "device_ip", "gateway", "prefix", "super_device_id", "eids", "port_eids",
        "port_ips", "planes",
    )

    def __init__(
            self, device_id: int, device_ip: IPAddress | None = None,
            gateway: IPAddress | None = None, prefix: int | None = None,
            super_device_id: int | None = None, eids: tuple[str, ...] | None = None,
            port_eids: tuple[tuple[int, str, str], ...] | None = None,
            port_ips: tuple[tuple[int, int, object], ...] | None = None,
            planes: dict | None = None) -> None:
        self.device_id = device_id
        self.device_ip = device_ip
        self.gateway = gateway
        self.prefix = prefix
        self.super_device_id = super_device_id
        self.eids = eids
        self.port_eids = port_eids
        self.port_ips = port_ips
        self.planes = planes


class Server:
    """One server. ``index`` is its position in declaration order; ``family_index`` the
    ``i`` of a family member (None for a plain server). ``spans`` maps attribute names
    (``host``, ``devices``, ``device_ip``, ...) to where they were written (for a family,
    the family's attribute; one dict shared by the members of a family: read-only)."""

    name: str
    server_id: str
    index: int
    span: Span
    devices: list[Device]
    host_ip: IPAddress | None
    nic: str | None
    super_pod_id: str | None
    family: str | None
    family_index: int | None
    inventory: str | None
    spans: dict
    incomplete: frozenset
    # Network model: physical ids the container sees, in order (container id = position;
    # None: the host's own numbering), the captures read from `inventory`, and where
    # device_ip / gateway / prefix came from ("dsl" or "inventory").
    visible_devices: list[int] | None
    #: NVIDIA GPU servers: the HCAs NCCL may use (``ib_hca``; None: not declared).
    ib_hca: tuple[str, ...] | None
    #: NVIDIA GPU servers: write an NCCL_TOPO_FILE from the captures (``nccl_topo_file on``).
    nccl_topo_file: bool
    inventory_facts: ServerInventory | None
    address_sources: dict
    #: Ascend 950: ``net_instance`` lines as written, layer -> net_instance_id.
    net_instances: dict
    #: The pod / container IP (``container_ip``; None: the pod shares the host network).
    container_ip: IPAddress | None
    #: Ascend 950: the backup rank, (device id, replaced local_id) (``backup``); None: none.
    backup: tuple[int, int] | None

    __slots__ = (
        "name", "server_id", "index", "span", "devices", "host_ip", "nic", "super_pod_id",
        "family", "family_index", "inventory", "spans", "incomplete", "visible_devices",
        "ib_hca", "nccl_topo_file", "inventory_facts", "address_sources", "net_instances",
        "container_ip", "backup",
    )

    def __init__(
            self, name: str, server_id: str, index: int, span: Span, devices: list[Device],
            host_ip: IPAddress | None = None, nic: str | None = None,
            super_pod_id: str | None = None, family: str | None = None,
            family_index: int | None = None, inventory: str | None = None,
            spans: dict | None = None, incomplete: frozenset = frozenset(),
            visible_devices: list[int] | None = None, ib_hca: tuple[str, ...] | None = None,
            nccl_topo_file: bool = False, inventory_facts: ServerInventory | None = None,
            address_sources: dict | None = None, net_instances: dict | None = None,
            container_ip: IPAddress | None = None, backup: tuple[int, int] | None = None) -> None:
        self.name = name
        self.server_id = server_id
        self.index = index
        self.span = span
        self.devices = devices
        self.host_ip = host_ip
        self.nic = nic
        self.super_pod_id = super_pod_id
        self.family = family
        self.family_index = family_index
        self.inventory = inventory
        self.spans = {} if spans is None else spans
        self.incomplete = incomplete
        self.visible_devices = visible_devices
        self.ib_hca = ib_hca
        self.nccl_topo_file = nccl_topo_file
        self.inventory_facts = inventory_facts
        self.address_sources = {} if address_sources is None else address_sources
        self.net_instances = {} if net_instances is None else net_instances
        self.container_ip = container_ip
        self.backup = backup

    def span_of(self, attr: str) -> Span:
        return self.spans.get(attr, self.span)

    def device(self, device_id: int) -> Device | None:
        for d in self.devices:
            if d.device_id == device_id:
                return d
        return None

    @property
    def label(self) -> str:
        return f"server {self.name}"


class LaunchSpec:
    """A job's launch attributes as written (None / () when not given): the model path or
    name, ``served_name``, the per-rank ``entry`` script, extra argv words (``args`` on
    every node, ``head_args`` / ``worker_args``), ``executor`` (mp | ray), ``lb``
    (internal | external | hybrid), ``master_port``; ``spans`` says where each was written."""

    model: str | None
    served_name: str | None
    entry: str | None
    args: tuple[str, ...]
    head_args: tuple[str, ...]
    worker_args: tuple[str, ...]
    executor: str | None
    lb: str | None
    master_port: int | None
    spans: dict

    def __init__(
            self, model: str | None = None, served_name: str | None = None,
            entry: str | None = None, args: tuple[str, ...] = (),
            head_args: tuple[str, ...] = (), worker_args: tuple[str, ...] = (),
            executor: str | None = None, lb: str | None = None, master_port: int | None = None,
            spans: dict | None = None) -> None:
        self.model = model
        self.served_name = served_name
        self.entry = entry
        self.args = args
        self.head_args = head_args
        self.worker_args = worker_args
        self.executor = executor
        self.lb = lb
        self.master_port = master_port
        self.spans = {} if spans is None else spans

    def span_of(self, key: str, default: Span | None = None) -> Span | None:
        return self.spans.get(key, default)


class CostSpec:
    """A job's cost-model settings as written (None when not given): ``model`` the
    ``cost_model`` word (a preset name or a config.json path, relative paths already
    joined to the .rtc file's folder), ``decode_seqs`` / ``prefill_tokens`` tokens per DP
    rank per step, ``mtp_tokens`` speculative tokens per sequence; ``spans`` says where."""

    model: str | None
    decode_seqs: int | None
    prefill_tokens: int | None
    mtp_tokens: int | None
    spans: dict

    def __init__(
            self, model: str | None = None, decode_seqs: int | None = None,
            prefill_tokens: int | None = None, mtp_tokens: int | None = None,
            spans: dict | None = None) -> None:
        self.model = model
        self.decode_seqs = decode_seqs
        self.prefill_tokens = prefill_tokens
        self.mtp_tokens = mtp_tokens
        self.spans = {} if spans is None else spans


class LinksSpec:
    """The ``links`` block: the parameter set (``nominal`` / ``hccl-plan``, None: nominal)
    and the ``param KEY = VALUE`` lines in source order, with the block's span."""

    span: Span
    preset: str | None
    params: tuple[ParamLine, ...]
    preset_span: Span | None

    def __init__(
            self, span: Span, preset: str | None = None, params: tuple[ParamLine, ...] = (),
            preset_span: Span | None = None) -> None:
        self.span = span
        self.preset = preset
        self.params = params
        self.preset_span = preset_span


class Disaggregation:
    """One ``disaggregation`` block as written: job names with their spans (resolved into
    jobs by :func:`rtc.plan.disaggregation.pd_pairs`)."""

    name: str | None
    span: Span
    prefill: list[tuple[str, Span]]
    decode: list[tuple[str, Span]]

    def __init__(
            self, name: str | None, span: Span, prefill: list[tuple[str, Span]] | None = None,
            decode: list[tuple[str, Span]] | None = None) -> None:
        self.name = name
        self.span = span
        self.prefill = [] if prefill is None else prefill
        self.decode = [] if decode is None else decode


def container_ids(server: Server, preset: Preset) -> tuple[dict[int, int], int]:
    """(physical id -> id the container / host runtime sees, how many devices it sees), for
    the server's devices. Without ``visible_devices`` the runtime numbers devices like the
    host: id = physical. With it, the container numbers the NPUs it mounts 0..k-1 by
    ascending physical id, whatever order ``visible_devices`` (a device plugin's
    ``ASCEND_VISIBLE_DEVICES``) lists them in: vllm-ascend PR 16256 (host NPUs 3..7 are
    0..4 in the container); CANN takes ASCEND_RT_VISIBLE_DEVICES only in ascending order
    (EE1001, gpustack issue 2527), which this numbering keeps for any ascending device
    list."""
    if server.visible_devices is not None:
        mounted = sorted(set(server.visible_devices))
        return {p: pos for pos, p in enumerate(mounted)}, len(mounted)
    count = max([preset.devices_per_server] + [d.device_id + 1 for d in server.devices])
    return {d.device_id: d.device_id for d in server.devices}, count


#: Longest server or job name kept as a file stem: file systems allow 255 bytes for a whole
#: name, and rtc adds up to a job name and a suffix (``<server>.<job>.env``).
MAX_NAME_CHARS = 100


def file_name_problem(name: str) -> str | None:
    """Why a server or job ``name`` cannot be a file name in an output folder (None when it
    can): ``rtc compile --out-dir`` names files after servers and jobs."""
    if "/" in name or "\\" in name:
        return "holds a path separator"
    if name in (".", ".."):
        return "is a folder name"
    if name.isascii():  # the usual name: ASCII has no format characters nor surrogates
        if not name.isprintable():  # an ASCII character is printable unless < 32 or 127
            return "holds a control or invisible formatting character"
    elif any(ord(c) < 32 or ord(c) == 127 or unicodedata.category(c) == "Cf" for c in name):
        return "holds a control or invisible formatting character"
    elif any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return "holds a lone surrogate (not a character)"
    if name.startswith("-"):
        return "starts with '-'"
    if len(name) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    return None


#: What a server name may hold: it names the node to Kubernetes (a ConfigMap key
#: ``preflight-<server>.sh`` must match ``[-._a-zA-Z0-9]+``; the ``kubernetes.io/hostname``
#: label value ``(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?``: Kubernetes docs,
#: overview/working-with-objects/labels and concepts/configuration/configmap; apimachinery
#: pkg/util/validation IsConfigMapKey, IsValidLabelValue) and to Slurm (``--nodelist``
#: splits at commas and spaces; node names are host names, slurm.conf(5) NodeName).
_HOST_NAME_CHARS = re.compile(r"[-._A-Za-z0-9]+")


def host_name_problem(name: str) -> str | None:
    """Why a server ``name`` cannot name a node in Kubernetes manifests and Slurm files
    (None when it can): a character other than ASCII letters, digits and ``-_.``
    (:data:`_HOST_NAME_CHARS`). Checked after :func:`file_name_problem`."""
    if _HOST_NAME_CHARS.fullmatch(name):
        return None
    bad = []
    for c in name:
        if not _HOST_NAME_CHARS.fullmatch(c) and c not in bad:
            bad.append(c)
    shown = ", ".join("a space" if c == " " else repr(c) for c in bad[:3])
    return f"holds {shown}"


class Placement:
    """The part of a job on one server: the device ids it uses there (ascending) and the
    user's local DP count if given (``on SERVER devices SET dp_local N``)."""

    server: Server
    device_ids: tuple[int, ...]
    span: Span
    dp_local: int | None

    __slots__ = ("server", "device_ids", "span", "dp_local")

    def __init__(
            self, server: Server, device_ids: tuple[int, ...], span: Span,
            dp_local: int | None = None) -> None:
        self.server = server
        self.device_ids = device_ids
        self.span = span
        self.dp_local = dp_local


class Job:
    """A job: its devices (per server), parallel sizes, role and framework.

    ``placements`` are in server declaration order. World size is dp*pp*pcp*tp."""

    name: str
    span: Span
    placements: list[Placement]
    role: str
    framework: str
    dp: int
    tp: int
    pp: int
    pcp: int
    dcp: int
    expert_parallel: bool
    model_kind: str
    # Where model_kind came from: "model_kind" (written), "default" (nothing known: rtc
    # assumed moe), or what rtc recognised the model by (``cost_model qwen3-32b``,
    # ``model /models/Qwen3-32B``), set by rtc.cost.inputs.settle_model_kinds.
    model_kind_from: str
    order: str | None
    env: list[EnvLine]
    policies: tuple[PolicyLine, ...]
    spans: dict
    incomplete: frozenset
    # Every `servers` / `on` reference in source order: (server name, device ids, span, via,
    # devices span).
    claims: list
    # Launch settings: the values the user wrote, None when not given; the values rtc
    # chose are in the plan (rtc.plan.Plan.ports.jobs[name]).
    port: int | None            # vLLM --port
    dp_address: IPAddress | None  # --data-parallel-address
    dp_rpc_port: int | None     # --data-parallel-rpc-port
    kv_connector: str | None    # mooncake | mooncake_layerwise | llmdatadist
    kv_port: int | None         # kv_transfer_config kv_port
    ray_port: int | None        # ray start --head --port
    launch: LaunchSpec
    cost: CostSpec

    __slots__ = (
        "name", "span", "placements", "role", "framework", "dp", "tp", "pp", "pcp", "dcp",
        "expert_parallel", "model_kind", "model_kind_from", "order", "env", "policies",
        "spans", "incomplete",
        "claims", "port", "dp_address", "dp_rpc_port", "kv_connector", "kv_port", "ray_port",
        "launch", "cost",
    )

    def __init__(
            self, name: str, span: Span, placements: list[Placement], role: str = "serve",
            framework: str = "vllm", dp: int = 1, tp: int = 1, pp: int = 1, pcp: int = 1,
            dcp: int = 1, expert_parallel: bool = False, model_kind: str = "moe",
            order: str | None = None, env: list[EnvLine] | None = None,
            policies: tuple[PolicyLine, ...] = (), spans: dict | None = None,
            incomplete: frozenset = frozenset(), claims: list | None = None,
            port: int | None = None, dp_address: IPAddress | None = None,
            dp_rpc_port: int | None = None, kv_connector: str | None = None,
            kv_port: int | None = None, ray_port: int | None = None,
            launch: LaunchSpec | None = None, cost: CostSpec | None = None,
            model_kind_from: str = "model_kind") -> None:
        self.name = name
        self.span = span
        self.placements = placements
        self.role = role
        self.framework = framework
        self.dp = dp
        self.tp = tp
        self.pp = pp
        self.pcp = pcp
        self.dcp = dcp
        self.expert_parallel = expert_parallel
        self.model_kind = model_kind
        self.model_kind_from = model_kind_from
        self.order = order
        self.env = [] if env is None else env
        self.policies = policies
        self.spans = {} if spans is None else spans
        self.incomplete = incomplete
        self.claims = [] if claims is None else claims
        self.port = port
        self.dp_address = dp_address
        self.dp_rpc_port = dp_rpc_port
        self.kv_connector = kv_connector
        self.kv_port = kv_port
        self.ray_port = ray_port
        self.launch = LaunchSpec() if launch is None else launch
        self.cost = CostSpec() if cost is None else cost

    @property
    def world_size(self) -> int:
        return self.dp * self.pp * self.pcp * self.tp

    @property
    def device_count(self) -> int:
        return sum(len(p.device_ids) for p in self.placements)

    def span_of(self, attr: str) -> Span:
        return self.spans.get(attr, self.span)


class Topology:
    """The whole lowered cluster. ``name`` is the cluster block's label (``cluster`` when
    it has none: ``named`` False); ``files`` maps file names to their text (for reports)."""

    name: str
    preset: Preset
    servers: list[Server]
    jobs: list[Job]
    cann: str | None
    vllm_version: str | None
    policies: tuple[PolicyLine, ...]
    span: Span | None
    files: dict
    named: bool
    spans: dict      # cluster attribute -> where written
    origin: str                    # or "table": lowered by rtc.tables
    networks: list[HostNetwork]
    fabrics: list[Fabric]
    disaggregations: list[Disaggregation]
    links: LinksSpec | None                 # the `links` block (cost model)
    _by_name: dict | None
    _placements: dict
    _members: dict
    _address_keys: list | None

    def __init__(
            self, name: str, preset: Preset, servers: list[Server], jobs: list[Job],
            cann: str | None = None, vllm_version: str | None = None,
            policies: tuple[PolicyLine, ...] = (), span: Span | None = None,
            files: dict | None = None, named: bool = True, spans: dict | None = None,
            origin: str = "description", networks: list[HostNetwork] | None = None,
            fabrics: list[Fabric] | None = None,
            disaggregations: list[Disaggregation] | None = None,
            links: LinksSpec | None = None, _by_name: dict | None = None,
            _placements: dict | None = None, _members: dict | None = None,
            _address_keys: list | None = None) -> None:
        self.name = name
        self.preset = preset
        self.servers = servers
        self.jobs = jobs
        self.cann = cann
        self.vllm_version = vllm_version
        self.policies = policies
        self.span = span
        self.files = {} if files is None else files
        self.named = named
        self.spans = {} if spans is None else spans
        self.origin = origin
        self.networks = [] if networks is None else networks
        self.fabrics = [] if fabrics is None else fabrics
        self.disaggregations = [] if disaggregations is None else disaggregations
        self.links = links
        self._by_name = _by_name
        self._placements = {} if _placements is None else _placements
        self._members = {} if _members is None else _members
        self._address_keys = _address_keys

    def span_of(self, attr: str) -> Span | None:
        """Where the cluster block's attribute ``attr`` was written (its label if not)."""
        return self.spans.get(attr, self.span)

    def placement(self, job: Job) -> JobPlacement:
        """The job's rank -> device placement (:func:`rtc.parallel.placement.place_job`),
        computed on first use and cached. Raises what ``place_job`` raises for a job whose
        sizes cannot be placed (the RTC3xx checks report those)."""
        got = self._placements.get(id(job))
        if got is None or got[0] is not job:
            got = (job, place_job(self, job))
            self._placements[id(job)] = got
        return got[1]

    def address_keys(self) -> list[tuple[Server, Device, int | None, int | None]]:
        """``(server, device, device_ip key, gateway key)`` for every device, servers in
        declared order and devices as listed; a key is :func:`address_key` of the address
        (None when there is none). Computed on first use and cached: the address checks
        compare and hash these ints instead of ``ipaddress`` objects (whose ``__hash__``,
        ``__int__`` and ``version`` are Python-level calls, ~10x slower per device)."""
        if self._address_keys is None:
            v4 = ipaddress.IPv4Address  # its key is its value: no address_key() call
            self._address_keys = [
                (s, d, None if (ip := d.device_ip) is None else
                 int(ip) if type(ip) is v4 else address_key(ip),
                 None if (gw := d.gateway) is None else
                 int(gw) if type(gw) is v4 else address_key(gw))
                for s in self.servers for d in s.devices]
        return self._address_keys

    @property
    def npu_count(self) -> int:
        """The NPUs (GPUs) of every server."""
        return sum(len(s.devices) for s in self.servers)

    def server(self, name: str) -> Server | None:
        if self._by_name is None:
            self._by_name = {s.name: s for s in self.servers}
        return self._by_name.get(name)

    def job(self, name: str) -> Job | None:
        return next((j for j in self.jobs if j.name == name), None)

    def no_job(self, name: str) -> str:
        """The message for a ``--job`` that names no job: ``no job named 'prefil' (jobs:
        prefill, decode); did you mean 'prefill'?`` (the closest name by difflib, if any is
        close)."""
        import difflib

        names = [j.name for j in self.jobs]
        close = difflib.get_close_matches(name, names, n=1)
        return (f"no job named '{name}' (jobs: {', '.join(names) or 'none'})"
                + (f"; did you mean '{close[0]}'?" if close else ""))

    def rank_table_members(self, job: Job | None = None) -> list[tuple[Server, list[Device]]]:
        """The (server, devices) pairs of a rank table in rank order: servers in declared
        order, devices ascending. ``job=None`` means every device of every server.

        Computed on first use and cached like :meth:`placement` (a dozen checks and
        emitters ask; at 65,536 NPUs each build costs ~30 ms): callers must not modify
        the lists."""
        got = self._members.get(id(job))
        if got is None or got[0] is not job:
            got = (job, self._rank_table_members(job))
            self._members[id(job)] = got
        return got[1]

    def _rank_table_members(self, job: Job | None) -> list[tuple[Server, list[Device]]]:
        if job is None:
            return [(s, sorted(s.devices, key=_DEVICE_ID)) for s in self.servers if s.devices]
        out = []
        for p in sorted(job.placements, key=lambda p: p.server.index):
            wanted = set(p.device_ids)
            devs = [d for d in p.server.devices if d.device_id in wanted]
            devs.sort(key=_DEVICE_ID)
            if devs:
                out.append((p.server, devs))
        return out

    def iter_ranks(self, job: Job | None = None) -> Iterator[tuple[int, Server, Device]]:
        """(rank_id, server, device) in rank order."""
        rank = 0
        for server, devs in self.rank_table_members(job):
            for d in devs:
                yield rank, server, d
                rank += 1
