"""The shape of the language: which attributes each block accepts and what their words mean.

The grammar only knows blocks, attributes and words; this module turns a generic
:class:`~rtc.syntax.ast.SourceFile` into typed declarations (:mod:`rtc.syntax.decls`: one
record per block, one field per attribute: integers, device sets,
:class:`~rtc.syntax.values.Template`, address plans, ...), with the span of every value.
Unknown keys get "did you mean"; bad literals get a precise column. Adding an attribute is
one entry in :data:`BLOCK_SPECS` and one field of its block's declaration class.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from rtc.diagnostics import Diagnostic, Related, Span, error
from rtc.rules import rule
from rtc.syntax.ast import Attribute, Block, SourceFile
from rtc.syntax.attribute_values import (MAX_PARALLEL, check_quotes, p_address,
                                         p_address_plan, p_args, p_bool, p_choice, p_cidr,
                                         p_cidr_list, p_devset, p_eid_plan, p_env, p_int,
                                         p_job_refs, p_level_ip, p_net_instance, p_nic, p_nic_list, p_param,
                                         p_plane, p_port_eid, p_backup,
                                         p_path, p_placement, p_policy, p_port, p_prefix,
                                         p_server_refs, p_super_device_plan, p_template,
                                         p_word, value_span)
from rtc.syntax.decls import (ClusterDecl, Decl, DisaggregationDecl, FabricDecl, JobDecl,
                              LinksDecl, NetworkDecl, ServerDecl)
from rtc.syntax.values import BAD_VALUE, ValueProblem, parse_family_name, show_text

UNKNOWN_ATTRIBUTE = rule("RTC110", "unknown-attribute", "error",
                         "A block holds an attribute it does not know.", """
    What: e.g. `hots 10.0.0.6` in a server, or `tpp 8` in a job.
    Why: a misspelt fact would otherwise be silently ignored and the plan would differ
    from what you wrote.
    Example: `tpp 8` -> did you mean `tp`?
    Fix: use one of the block's attributes (rtc lists the closest one).""")
DUPLICATE_ATTRIBUTE = rule("RTC115", "duplicate-attribute", "error",
                           "An attribute that may appear once appears twice.", """
    What: e.g. two `host` lines in one server.
    Why: only one of them can be right, and rtc will not pick one silently.
    Example: `tp 8` and later `tp 16` in one job.
    Fix: delete one of them.""")
MISSING_ATTRIBUTE = rule("RTC116", "missing-attribute", "error",
                         "A required attribute is missing.", """
    What: e.g. a server without `devices` (when the hardware preset cannot supply them).
    Why: the rank table cannot be built without it.
    Example: a `cluster` block without `hardware`.
    Fix: add the attribute named in the message.""")
BAD_LABEL = rule("RTC117", "bad-block-label", "error", "A block's name is missing or invalid.", """
    What: `server {` without a name, or a family whose name has no `[FIRST..LAST]`.
    Why: servers and jobs are referred to by name; families expand their name range.
    Example: `family node {`.
    Fix: write `server NAME {` or `family node[0..15] {`.""")


class AttrSpec(NamedTuple):
    """How one attribute is read: its value parser, whether it may repeat, and what the
    language reference (``docs/language.md``, ``rtc explain NAME``) says about it: a
    one-line description (``doc``, also used in "did you mean" hints), the value in words,
    the default when the line is left out, what it becomes in the outputs, and a one-line
    example. The reference fields are text only: the parser reads ``parse`` and
    ``repeat``."""

    parse: Callable
    repeat: bool = False
    doc: str = ""
    value: str = ""
    default: str = ""
    becomes: str = ""
    example: str = ""


class BlockSpec(NamedTuple):
    """Which attributes a block kind accepts, the declaration class they fill (one field
    per attribute, same name), whether the block needs a label, a one-line description and
    a short example for the language reference."""

    decl: type
    attrs: dict
    label: str = "required"      # required | optional | family
    doc: str = ""
    example: str = ""

#: Largest world size dp*pp*pcp*tp of one job (131,072 servers x 16 NPUs).
MAX_WORLD = 2_097_152
WORLD_KEYS = ("dp", "pp", "pcp", "tp")

_INVENTORY_OR_NONE = "taken from the `inventory` captures when the server has them, else none"
_PORT = "TCP port 1..65535"
_PARALLEL = f"integer 1..{MAX_PARALLEL}"
_POLICY = "RULE LEVEL: a rule id or name as `rtc rules` prints it, then error, warn or allow"

_SERVER_ATTRS = {
    "server_id": AttrSpec(
        p_template, doc="server_id in the rank table",
        value="word, or a template in i",
        default="the host IP (as Ascend Operator writes it); the server's name without `host`",
        becomes="the rank table's server_id (and its entry in super_pod_list)",
        example="server_id 10.0.0.6"),
    "host": AttrSpec(
        p_address, doc="host IP of the server",
        value="IP address, or a template in i", default="none (a job on several servers "
        "then gets no launch scripts: RTC456, RTC509)",
        becomes="HCCL_IF_IP and VLLM_HOST_IP; the head's host is --data-parallel-address, "
        "--master-addr / MASTER_ADDR and the Ray head address; host_ip in a 1.2 rank table",
        example="host 10.0.0.6"),
    "nic": AttrSpec(
        p_nic, doc="host NIC name",
        value="interface name (up to 15 letters, digits, - _ .)",
        default="none (no HCCL / GLOO / TP_SOCKET_IFNAME is exported)",
        becomes="HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME (a job `env` line "
        "for one of them replaces it); matched against `network` blocks",
        example="nic eno0"),
    "devices": AttrSpec(
        p_devset, doc="physical device ids",
        value="device set such as 0..7 or 0, 2, 4..7", default="all the preset's devices "
        "(0..N-1)",
        becomes="the rank table's device_id; ASCEND_RT_VISIBLE_DEVICES of the jobs",
        example="devices 0..7"),
    "device_ip": AttrSpec(
        p_address_plan, doc="RoCE IP per device",
        value="address plan: list (one per device), START step N, template in i/d/k, "
        "inventory (inventory vnic: the A3 vNIC address of `hccn_tool -vnic -g`)",
        default=_INVENTORY_OR_NONE + " (RTC211 on a multi-server table that "
        "needs it)",
        becomes="the rank table's device_ip", example="device_ip 6.0.2.1 step 2"),
    "gateway": AttrSpec(
        p_address_plan, doc="RoCE gateway per device",
        value="address plan like device_ip; one address applies to every NPU",
        default=_INVENTORY_OR_NONE,
        becomes="the reachability model (routed subnets, `fabric`); the gateway the "
        "preflight script expects", example="gateway 6.0.2.0 step 2"),
    "prefix": AttrSpec(
        p_prefix, doc="RoCE prefix length of every device",
        value="integer 1..128 (0 is refused: netmask 0.0.0.0)", default=_INVENTORY_OR_NONE + " (reachability is not judged)",
        becomes="each device's subnet in the reachability model and the preflight plan",
        example="prefix 31"),
    "super_pod": AttrSpec(
        p_template, doc="super_pod_id (A3, rank table 1.2)",
        value="word, or a template in i", default="none (RTC212 on a multi-server A3 table)",
        becomes="the 1.2 rank table's super_pod_id (super_pod_list)",
        example="super_pod {i/64}"),
    "super_device_id": AttrSpec(
        p_super_device_plan, doc="SDID per device (A3, rank table 1.2)",
        value="base N (N + device id), a list, or a template in i/d/k; unsigned 32-bit",
        default="none (RTC212 on a multi-server A3 table)",
        becomes="the 1.2 rank table's super_device_id",
        example="super_device_id base {(i%64)*16}"),
    "inventory": AttrSpec(
        p_path, doc="folder of hccn_tool / npu-smi captures for this server",
        value="folder, relative to the .rtc file; a template in i is allowed",
        default="none",
        becomes="device_ip / gateway / prefix not written (or written `inventory`) come from "
        "the captures; written ones are compared with them (RTC420); link and health checks",
        example='inventory "captures/node{i:02}"'),
    "visible_devices": AttrSpec(
        p_devset, doc="physical ids the container mounts (the container numbers them 0..k-1 "
        "by ascending physical id, in whatever order they are listed)",
        value="device set such as 4..7 (any order; RTC435 notes one that is not ascending)",
        default="none (container ids are the physical ids)",
        becomes="the container ids in ASCEND_RT_VISIBLE_DEVICES (always written ascending, "
        "as CANN requires)",
        example="visible_devices 4..7"),
    "eid": AttrSpec(
        p_eid_plan, doc="UB EID per die (Ascend 950, rank table 2.0)",
        value="base HEX (die e of the device at position k: HEX + k*dies + e; HEX up to 32 "
        "hex digits, a template in i allowed), or one EID per die in device order",
        default="none (the UB levels' rank_addr_list stays empty: RTC221 when the table has "
        "more than one device)",
        becomes="the 2.0 rank table's EID addresses at the UB levels (0, and 1 in a super "
        "pod), each with its die's ports", example="eid base 000000000000000000100000dfdf0000"),
    "net_instance": AttrSpec(
        p_net_instance, repeat=True, doc="net_instance_id at one network layer (rank table 2.0)",
        value="LAYER NAME: layer 0..7, a name (template in i), at most 1024 characters",
        default="layer 0: SUPERPOD_N (N = the server's place in its super pod) or the "
        "server_id; super pod layer: the super_pod; cluster layers: CLUSTER",
        becomes="net_instance_id of every rank of the server at that layer",
        example="net_instance 0 pod{i/8}_{i%8}"),
    "plane": AttrSpec(
        p_plane, repeat=True, doc="plane_id at one network layer (rank table 2.0)",
        value="LAYER NAME[, NAME]: layer 0..7, one name for every die or one per die (die "
        "order); templates in i, d, k",
        default="the preset's: the die number at the UB levels, CLUSTER at the RoCE level",
        becomes="plane_id of the server's rank_addr_list entries at that layer",
        example="plane 1 plane{2*k}, plane{2*k+1}"),
    "port_eid": AttrSpec(
        p_port_eid, repeat=True, doc="one UB EID per port at one layer (rank table 2.0)",
        value="LAYER HEX: the device's EID with port number 0 (a template in i, d, k); "
        "port p of die e adds 1 + e*ports_per_die + p (MindCluster's physical EIDs)",
        default="none (the layer lists one EID per die, from `eid`)",
        becomes="one rank_addr_list entry per port at that layer, each with its own EID",
        example="port_eid 0 00000000000000000100000dfdf{i:02}{k}00"),
    "level_ip": AttrSpec(
        p_level_ip, repeat=True, doc="IPv4/IPv6 per die at one UB layer (rank table 2.0)",
        value="LAYER ADDR[, ADDR]: one address for every die or one per die; templates "
        "in i, d, k",
        default="none (the layer lists EIDs)",
        becomes="IPV4 / IPV6 rank_addr_list entries (with the die's ports) at that layer "
        "instead of EIDs",
        example="level_ip 1 172.16.{i}.{d*2+5}, 172.16.{i}.{d*2+6}"),
    "backup": AttrSpec(
        p_backup, doc="the server's spare NPU: a rank table 2.0 backup rank",
        value="DEVICE replaces LOCAL_ID: a device id of the server and the local_id 0..63 "
        "it stands in for (one backup rank per table)",
        default="none",
        becomes="that device's rank gets local_id 64 and replaced_local_id LOCAL_ID (HCCL's "
        "backup rank; HCOMM's 64 + 1 spare of a level-0 domain)",
        example="backup 7 replaces 3"),
    "nccl_topo_file": AttrSpec(
        p_bool, doc="write an NCCL_TOPO_FILE for this NVIDIA GPU server (VMs)",
        value="on or off", default="off (NCCL detects the topology from /sys)",
        becomes="nccl-topo-SERVER.xml from the server's nvidia-smi captures (`inventory`: "
        "topo -m and --query-gpu) and NCCL_TOPO_FILE in its env file (RTC476 without them)",
        example="nccl_topo_file on"),
    "ib_hca": AttrSpec(
        p_nic_list, doc="InfiniBand / RoCE HCAs NCCL may use (NVIDIA GPU servers)",
        value="HCA names, comma-separated (as in the NIC Legend of `nvidia-smi topo -m`)",
        default="none (NCCL_IB_HCA is not exported; NCCL picks the HCAs itself)",
        becomes="NCCL_IB_HCA in the env files; the HCA count is the NIC count of the cost "
        "model; job `env NCCL_IB_HCA` is checked against it (RTC472)",
        example="ib_hca mlx5_0, mlx5_1"),
    "container_ip": AttrSpec(
        p_address, doc="the pod / container IP when pods have their own IPs",
        value="IP address, or a template in i", default="none (the pod shares the host's "
        "network: MindIE jobs use the host IP)",
        becomes="container_ip of the server in the rank table; server_ip of the global rank "
        "table (which has no container_ip key); MIES_CONTAINER_IP and HCCL_IF_IP of MindIE "
        "jobs (RTC209, RTC656, RTC657)",
        example="container_ip 172.16.0.6"),
}

_SERVER_EXAMPLE = """server atlas-01 {
  host 10.0.0.6
  nic eno0
  devices 0..7
  device_ip 6.0.2.1 step 2
  gateway 6.0.2.0 step 2
  prefix 31
}"""

_FAMILY_EXAMPLE = """family node[0000..1023] {
  host 10.1.{i/256}.{i%256}
  nic eth0
  devices 0..15
  device_ip 172.{16 + i/256}.{i%256}.{d+1}
  super_pod {i/64}
  super_device_id base {(i%64)*16}
}"""

_CLUSTER_ATTRS = {
    "hardware": AttrSpec(
        p_word, doc="hardware preset",
        value="preset name: atlas-800t-a2, atlas-800-a3, atlas-800-910a, atlas-950-superpod, "
        "atlas-850, atlas-350, generic, hgx-h100, hgx-h200, hgx-b200, hgx-a100, gb200-nvl72, "
        "gb300-nvl72, pcie-nvlink-2x2, pcie-nvlink-4x2, gpu-pcie, l40s-pcie, "
        "gpu-vm-1, generic-gpu",
        default="required (RTC116)",
        becomes="the valid device ids, the rank table version (1.2 for atlas-800-a3, 2.0 and "
        "a topology file per server for atlas-950-superpod / atlas-850 / atlas-350, none for "
        "the NVIDIA "
        "GPU presets, whose outputs are env files, launch and preflight scripts; else 1.0) "
        "and the hardware rules", example="hardware atlas-800t-a2"),
    "cann": AttrSpec(
        p_word, doc="CANN version", value="version word, e.g. 8.2.RC1",
        default="unknown (HCCL's 32-port host window is assumed)",
        becomes="HCCL's host port window in the port plan (16 ports before CANN 8.2, else "
        "32); plan.json", example="cann 8.2.RC1"),
    "devices_per_server": AttrSpec(
        p_int(1, 64), doc="NPUs per server (generic hardware)", value="integer 1..64",
        default="the preset's count (required with hardware generic)",
        becomes="the device ids 0..N-1 of a generic server", example="devices_per_server 8"),
    "nvlink_island": AttrSpec(
        p_devset, repeat=True, doc="one NVLink island of a generic-gpu server",
        value="device set such as 0..3 (one line per island)",
        default="none (hardware generic-gpu: every GPU on its own, PCIe only)",
        becomes="the GPU sets joined by NVLink (the RTC312/RTC313 island checks, the cost "
        "model's link classes)", example="nvlink_island 0..3"),
    "policy": AttrSpec(
        p_policy, repeat=True, doc="change the severity of one rule", value=_POLICY,
        default="each rule's own severity",
        becomes="the severity of that rule's findings in the whole file",
        example="policy idle-npus allow"),
    "vllm_version": AttrSpec(
        p_word, doc="vLLM version the launch scripts target", value="version, e.g. 0.11.0",
        default="none (the conservative flags of vLLM 0.9 and later, with a comment)",
        becomes="which vLLM flags the launch scripts use and the version checks (RTC501)",
        example="vllm_version 0.11.0"),
}

_JOB_ATTRS = {
    "role": AttrSpec(
        p_choice("serve", "prefill", "decode", "train"), doc="what the job does",
        value="serve, prefill, decode or train", default="serve",
        becomes="prefill / decode: the prefill/decode pairing and kv_role kv_producer / "
        "kv_consumer; train: no vLLM API port in the port plan", example="role prefill"),
    "framework": AttrSpec(
        p_choice("vllm", "mindspore", "torch_npu", "megatron", "mindie", "sglang"),
        doc="framework",
        value="vllm, mindspore, torch_npu, megatron, mindie or sglang", default="vllm",
        becomes="the launch: vllm serve per server (vllm), python3 ENTRY per rank "
        "(mindspore, torch_npu), torchrun per server (megatron), the MindIE daemon per "
        "server with its env and a config.json fragment (mindie), sglang.launch_server per "
        "server with --nnodes / --node-rank / --dist-init-addr (sglang)",
        example="framework megatron"),
    "servers": AttrSpec(
        p_server_refs, doc="servers whose devices the job uses (all devices)",
        value="server names, family ranges such as node[0..3], or all; comma-separated",
        default="none (a job needs `servers` or `on`: RTC116)",
        becomes="every device of those servers is in the job's rank table",
        example="servers atlas-01, atlas-02"),
    "on": AttrSpec(
        p_placement, repeat=True, doc="some devices of one server",
        value="on SERVER [devices SET] [dp_local N]", default="none",
        becomes="those devices are in the job's rank table; dp_local is "
        "--data-parallel-size-local there", example="on atlas-01 devices 0..3 dp_local 1"),
    "dp": AttrSpec(p_int(1, MAX_PARALLEL), doc="data parallel size", value=_PARALLEL,
                   default="1", becomes="--data-parallel-size", example="dp 2"),
    "tp": AttrSpec(p_int(1, MAX_PARALLEL), doc="tensor parallel size", value=_PARALLEL,
                   default="1", becomes="--tensor-parallel-size", example="tp 8"),
    "pp": AttrSpec(p_int(1, MAX_PARALLEL), doc="pipeline parallel size", value=_PARALLEL,
                   default="1", becomes="--pipeline-parallel-size (when > 1)",
                   example="pp 2"),
    "pcp": AttrSpec(p_int(1, MAX_PARALLEL), doc="prefill context parallel size",
                    value=_PARALLEL, default="1",
                    becomes="--prefill-context-parallel-size (when > 1)", example="pcp 2"),
    "dcp": AttrSpec(p_int(1, MAX_PARALLEL), doc="decode context parallel size",
                    value=_PARALLEL, default="1",
                    becomes="--decode-context-parallel-size (when > 1)", example="dcp 2"),
    "expert_parallel": AttrSpec(
        p_bool, doc="expert parallel on/off", value="on or off (also true / false, yes / no)",
        default="off", becomes="--enable-expert-parallel; the EP groups the checks judge",
        example="expert_parallel on"),
    "model_kind": AttrSpec(
        p_choice("moe", "dense"), doc="MoE or dense model", value="moe or dense",
        default="the kind of the model rtc knows (`cost_model`, else the preset the `model` "
        "path's folder starts with: dense for /models/Qwen3-32B; rtc cost --list-models), "
        "else moe (RTC332 says so for a job with dp > 1)", becomes="dense with dp > 1: independent replicas (no RANK_TABLE_FILE; "
        "no DP flags with lb external)", example="model_kind dense"),
    "order": AttrSpec(
        p_word, doc="Megatron-LM order string",
        value="axes tp, cp, ep, dp, pp joined by -, fastest first",
        default="tp-cp-ep-dp-pp (megatron jobs)",
        becomes="the rank coordinates and groups of a megatron job (checks, rtc groups, "
        "diagrams)", example="order tp-cp-ep-dp-pp"),
    "env": AttrSpec(
        p_env, repeat=True, doc="an environment variable of the job",
        value="NAME = value", default="none",
        becomes="an export line in each server's .env file, after the computed ones",
        example="env HCCL_BUFFSIZE = 1024"),
    "policy": AttrSpec(
        p_policy, repeat=True, doc="change the severity of one rule for this job",
        value=_POLICY, default="the cluster's policy, else the rule's own severity",
        becomes="the severity of that rule's findings about this job",
        example="policy idle-npus allow"),
    "port": AttrSpec(
        p_port, doc="vLLM API server port", value=_PORT,
        default="8000 (the next free port when another job on the head has it)",
        becomes="--port (lb external: port + local DP index)", example="port 8077"),
    "dp_address": AttrSpec(
        p_address, doc="the DP coordinator's address", value="IP address",
        default="the head's host (the job's first server)",
        becomes="--data-parallel-address", example="dp_address 10.0.0.6"),
    "dp_rpc_port": AttrSpec(
        p_port, doc="the DP coordinator's RPC port", value=_PORT,
        default="29550 (the next free port when another job on that host has it)",
        becomes="--data-parallel-rpc-port", example="dp_rpc_port 12980"),
    "kv_connector": AttrSpec(
        p_choice("mooncake", "mooncake_layerwise", "llmdatadist", "nixl"),
        doc="KV transfer connector (PD disaggregation)",
        value="mooncake, mooncake_layerwise or llmdatadist (Ascend); nixl (NVIDIA GPUs)",
        default="none (no --kv-transfer-config)",
        becomes="--kv-transfer-config: kv_connector MooncakeConnectorV1, "
        "MooncakeLayerwiseConnector or LLMDataDistCMgrConnector, and its module path; "
        "NixlConnector with VLLM_NIXL_SIDE_CHANNEL_HOST/PORT in each node's env",
        example="kv_connector mooncake_layerwise"),
    "kv_port": AttrSpec(
        p_port, doc="KV transfer port", value=_PORT,
        default="14579 with a Mooncake connector, 5600 with nixl (the next free one when "
        "taken), else none",
        becomes="kv_port in --kv-transfer-config; Mooncake binds kv_port + global rank; "
        "nixl: VLLM_NIXL_SIDE_CHANNEL_PORT (+ DP rank per engine)",
        example="kv_port 14579"),
    "ray_port": AttrSpec(
        p_port, doc="Ray head (GCS) port; Ray is used when given", value=_PORT,
        default="6379 when the job runs over Ray",
        becomes="ray start --head --port, the workers' --address HEAD:PORT, RAY_ADDRESS",
        example="ray_port 6379"),
    "model": AttrSpec(
        p_path, doc="model path or name", value="path or name (quoted if it has spaces)",
        default="none (the launch script's MODEL must be set at run time)",
        becomes="vllm serve MODEL", example='model "/models/DeepSeek-R1-W8A8"'),
    "served_name": AttrSpec(
        p_word, doc="the model name the API serves", value="word", default="none",
        becomes="--served-model-name", example="served_name deepseek-r1"),
    "entry": AttrSpec(
        p_path, doc="script run per rank / by torchrun (mindspore, torch_npu, megatron)",
        value="script path (quoted if it has spaces)",
        default="none (the launch script's ENTRY must be set at run time)",
        becomes="python3 ENTRY per rank (mindspore, torch_npu); torchrun ... ENTRY "
        "(megatron)", example='entry "pretrain_gpt.py"'),
    "args": AttrSpec(
        p_args, repeat=True, doc="extra arguments on every node",
        value="a quoted string (split like sh) or bare words", default="none",
        becomes="appended to every server's command, after rtc's flags",
        example='args "--max-model-len 8192"'),
    "head_args": AttrSpec(
        p_args, repeat=True, doc="extra arguments on the head only",
        value="a quoted string (split like sh) or bare words", default="none",
        becomes="appended to the head's command (the job's first server), after `args`",
        example='head_args "--api-server-count 1"'),
    "worker_args": AttrSpec(
        p_args, repeat=True, doc="extra arguments on the other nodes",
        value="a quoted string (split like sh) or bare words", default="none",
        becomes="appended to the other servers' commands, after `args`",
        example='worker_args "--port 8078"'),
    "executor": AttrSpec(
        p_choice("mp", "ray"), doc="vLLM executor", value="mp or ray",
        default="ray when ray_port is given or a replica spans servers with dp 1, else mp",
        becomes="ray: ray start on every server, then --distributed-executor-backend ray; "
        "mp with a replica over servers: --nnodes, --node-rank, --master-addr, "
        "--master-port", example="executor mp"),
    "lb": AttrSpec(
        p_choice("internal", "external", "hybrid"), doc="DP load balancing",
        value="internal, external or hybrid", default="internal",
        becomes="internal: one vllm serve per server, workers --headless; hybrid: "
        "--data-parallel-hybrid-lb; external: one process per DP rank "
        "(--data-parallel-rank, its own --port)", example="lb external"),
    "master_port": AttrSpec(
        p_port, doc="the master port of a multi-node launch", value=_PORT,
        default="29501 for vLLM --nnodes, 29500 for torchrun / torch_npu (the next free "
        "port when taken)",
        becomes="--master-port (vLLM), torchrun --master_port (megatron), MASTER_PORT "
        "(torch_npu)", example="master_port 29600"),
    "cost_model": AttrSpec(
        p_path, doc="the model the cost model assumes (rtc cost, rtc advise, RTC310)",
        value="a model preset (rtc cost --list-models) or a Hugging Face config.json path",
        default="guessed from `model` when its folder name matches a preset "
        "(/models/DeepSeek-R1-W8A8 -> deepseek-v3); else none: RTC310 gives no numbers",
        becomes="hidden size, layers, experts and heads of the cost estimate",
        example="cost_model qwen2.5-72b"),
    "decode_seqs": AttrSpec(
        p_int(1, 1_000_000), doc="decode concurrency per DP rank (cost model)",
        value="integer 1..1000000", default="64",
        becomes="T = tokens per decode step of one DP rank in rtc cost / rtc advise",
        example="decode_seqs 32"),
    "prefill_tokens": AttrSpec(
        p_int(1, 10_000_000), doc="prefill chunk tokens per DP rank (cost model)",
        value="integer 1..10000000", default="4096",
        becomes="T = tokens per prefill step of one DP rank in rtc cost / rtc advise",
        example="prefill_tokens 8192"),
    "mtp_tokens": AttrSpec(
        p_int(0, 16), doc="speculative (MTP) tokens per sequence per step (cost model)",
        value="integer 0..16", default="0",
        becomes="decode tokens per step = decode_seqs x (1 + mtp_tokens)",
        example="mtp_tokens 1"),
}

_JOB_EXAMPLE = """job deepseek {
  servers atlas-01, atlas-02
  dp 2
  tp 8
  expert_parallel on
  model "/models/DeepSeek-R1-W8A8"
  env HCCL_BUFFSIZE = 1024
}"""

BLOCK_SPECS: dict[str, BlockSpec] = {
    "cluster": BlockSpec(ClusterDecl, _CLUSTER_ATTRS, label="optional",
                         doc="the cluster (exactly one per file): hardware preset, CANN version, "
                             "policies",
                         example="cluster deepseek-a2 {\n  hardware atlas-800t-a2\n"
                                 "  cann 8.2.RC1\n}"),
    "server": BlockSpec(ServerDecl, dict(_SERVER_ATTRS), doc="one server",
                        example=_SERVER_EXAMPLE),
    "family": BlockSpec(ServerDecl, dict(_SERVER_ATTRS), label="family",
                        doc="N alike servers, named PREFIX + index padded like FIRST "
                            "(node[00..15]: node00..node15); templates use i, the index",
                        example=_FAMILY_EXAMPLE),
    "job": BlockSpec(JobDecl, _JOB_ATTRS,
                     doc="a job: which devices, parallel sizes, role, framework, environment",
                     example=_JOB_EXAMPLE),
    "network": BlockSpec(NetworkDecl, {
        "cidr": AttrSpec(
            p_cidr, doc="the host network", value="network ADDRESS/PREFIX (host bits zero)",
            default="required (RTC406)",
            becomes="the check that each server with a listed `nic` has its `host` inside "
            "(RTC405)", example="cidr 10.0.0.0/24"),
        "nic": AttrSpec(
            p_nic_list, doc="host NIC name(s) on this network",
            value="interface names, comma-separated", default="none (no server is matched)",
            becomes="which servers' `host` must be inside `cidr`", example="nic eno0, eno1"),
    }, doc="a host network: servers whose `nic` is listed have their `host` in `cidr`",
        example="network mgmt {\n  cidr 10.0.0.0/24\n  nic eno0\n}"),
    "fabric": BlockSpec(FabricDecl, {
        "subnets": AttrSpec(
            p_cidr_list, doc="device networks routed to each other",
            value="networks ADDRESS/PREFIX, comma-separated",
            default="required (RTC406); with no fabric block at all, every routed subnet is "
            "in one assumed fabric (RTC411)",
            becomes="the reachability model: NPUs with a gateway in these subnets reach each "
            "other", example="subnets 6.0.0.0/16, 6.1.0.0/16"),
    }, doc="a routed RoCE fabric: device subnets (with gateways) in it reach each other",
        example="fabric roce {\n  subnets 6.0.0.0/16\n}"),
    "disaggregation": BlockSpec(DisaggregationDecl, {
        "prefill": AttrSpec(
            p_job_refs, repeat=True, doc="prefill job(s)", value="job names, comma-separated",
            default="required (RTC522)",
            becomes="the kv_producer side of the pair; kv_connector_extra_config prefill sizes",
            example="prefill p1, p2"),
        "decode": AttrSpec(
            p_job_refs, repeat=True, doc="decode job(s)", value="job names, comma-separated",
            default="required (RTC522)",
            becomes="the kv_consumer side of the pair; kv_connector_extra_config decode sizes",
            example="decode d1"),
    }, label="optional", doc="prefill/decode pairing: which prefill jobs feed which decode "
        "jobs (without a block: every `role prefill` job with every `role decode` job)",
        example="disaggregation {\n  prefill p1, p2\n  decode d1\n}"),
    "links": BlockSpec(LinksDecl, {
        "preset": AttrSpec(
            p_choice("nominal", "hccl-plan"), doc="the cost model's parameter set",
            value="nominal or hccl-plan", default="nominal",
            becomes="the alpha (latency) and bandwidth of every link class in rtc cost, "
            "rtc advise and RTC310", example="preset hccl-plan"),
        "param": AttrSpec(
            p_param, repeat=True, doc="one measured link parameter",
            value="LINK.FIELD = VALUE with a unit: alpha in us/ms, bandwidth in GB/s or "
            "Gb/s (rtc cost --list-params lists the keys)",
            default="the preset's value",
            becomes="that link class's alpha or bandwidth in the cost estimates "
            "(rtc calibrate prints these lines)", example="param roce.alpha = 20us"),
    }, label="optional", doc="the cost model's link parameters for this cluster (at most "
        "one block; rtc calibrate writes one from HCCL Test results)",
        example="links {\n  preset nominal\n  param roce.alpha = 20us\n}"),
}


def elaborate(source: SourceFile) -> tuple[list[Decl], list[Diagnostic]]:
    """Turn the generic AST into typed declarations (:mod:`rtc.syntax.decls`), one per
    top-level block, in source order. Every problem becomes a diagnostic (RTC110-RTC117); a
    block with errors is still returned with the attributes that could be read."""
    diags: list[Diagnostic] = []
    decls = [_elaborate_block(b, diags) for b in source.blocks]
    return decls, diags


def _elaborate_block(block: Block, diags: list[Diagnostic]) -> Decl:
    spec = BLOCK_SPECS[block.kind]
    name = block.label.text if block.label else None
    name_span = block.label.span if block.label else block.kind_span
    _check_label(block, spec, diags)
    where = f"{block.kind} '{name}'" if name else f"the {block.kind} block"
    values: dict = {}
    spans: dict[str, Span] = {}
    lines: dict[str, list[Span]] = {}    # repeatable attribute -> the span of each line
    failed: set[str] = set()
    guessed: set[str] = set()   # what misspelt keys probably meant
    for item in block.body:
        aspec = _attribute_spec(item, block, spec, where, diags, guessed)
        if aspec is None:
            continue
        try:
            check_quotes(item)
            value = aspec.parse(item)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))
            failed.add(item.key)
            continue
        span = value_span(item)
        if not aspec.repeat and item.key in spans:
            diags.append(error(DUPLICATE_ATTRIBUTE, f"'{item.key}' is given twice in "
                               f"{where}", item.key_span, hint="keep one of them",
                               related=[Related(spans[item.key], "first given here")]))
        elif not aspec.repeat:
            values[item.key], spans[item.key] = value, span
        elif item.key == "env" and _env_twice(value, values, lines, item, where, diags):
            failed.add(item.key)
        else:
            values[item.key] = values.get(item.key, ()) + (value,)
            lines.setdefault(item.key, []).append(span)
            spans.setdefault(item.key, span)
    # A misspelt key (`TP 8`) leaves the attribute it meant unread, not absent: lowering
    # must not judge its default (tp 1) as if nothing had been written.
    failed |= {key for key in guessed if key not in values}
    if block.kind == "job":
        _check_world(values, spans, failed, diags, name)
    decl = spec.decl(kind=block.kind, name=name, name_span=name_span, span=block.span,
                     spans=spans, failed=frozenset(failed), **values)
    decl.line_spans = lines    # repeatable attribute -> the value span of each of its lines
    return decl


def _check_label(block: Block, spec: BlockSpec, diags: list[Diagnostic]) -> None:
    """RTC117 for a block without the label its kind needs, or a bad family name."""
    if spec.label in ("required", "family") and block.label is None:
        diags.append(error(BAD_LABEL, f"this {block.kind} block has no name", block.kind_span,
                           hint=f"write `{block.kind} NAME {{`" if spec.label == "required"
                           else "write `family node[0..15] {`"))
    if spec.label == "family" and block.label is not None:
        try:
            parse_family_name(block.label.text, block.label.span, BAD_LABEL)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))


def _attribute_spec(item, block: Block, spec: BlockSpec, where: str,
                    diags: list[Diagnostic], guessed: set) -> AttrSpec | None:
    """The spec of one body item, or None after reporting it (RTC110: a nested block or an
    unknown attribute, with the closest known one, which is added to ``guessed``)."""
    if isinstance(item, Block):
        diags.append(error(UNKNOWN_ATTRIBUTE, f"a {item.kind} block cannot be nested inside "
                           f"a {block.kind} block", item.kind_span,
                           hint="write blocks at the top level of the file"))
        return None
    aspec = spec.attrs.get(item.key)
    if aspec is None:
        import difflib  # only for a misspelt key

        close = difflib.get_close_matches(item.key, list(spec.attrs), n=1, cutoff=0.6)
        lower = item.key.lower()
        if lower in spec.attrs and lower not in close:
            close = [lower]
        guessed.update(close)
        hint = (f"did you mean '{close[0]}'?" if close else
                f"a {block.kind} block accepts: " + ", ".join(spec.attrs) if spec.attrs else
                f"{block.kind} blocks take no attributes yet")
        diags.append(error(UNKNOWN_ATTRIBUTE, f"unknown attribute {show_text(item.key)} in "
                           f"{where}", item.key_span, hint=hint))
    return aspec


def _env_twice(line, values: dict, lines: dict, item: Attribute, where: str,
               diags: list[Diagnostic]) -> bool:
    """RTC115 when ``env NAME`` was already set in this block (True: the line is dropped)."""
    firsts = [span for old, span in zip(values.get("env", ()), lines.get("env", ()))
              if old.name == line.name]
    if not firsts:
        return False
    diags.append(error(DUPLICATE_ATTRIBUTE, f"env {line.name} is set twice in {where}",
                       item.args[0].span,
                       hint=f"keep one `env {line.name} = ...` line; rtc will not pick one of "
                            "two values silently",
                       related=[Related(firsts[0], "first set here")]))
    return True


def _check_world(values: dict, spans: dict, failed: set, diags: list[Diagnostic],
                 name: str | None) -> None:
    """Reject a job whose dp*pp*pcp*tp is larger than any cluster rtc can describe (each
    size alone is capped by its parser); the error sits at the largest size."""
    given = [k for k in WORLD_KEYS if k in values]
    world = 1
    for k in given:
        world *= values[k]
    if world <= MAX_WORLD or not given:
        return
    key = max(given, key=lambda k: values[k])
    sizes = " x ".join(f"{k} {values[k]}" for k in given)
    diags.append(error(BAD_VALUE, f"job {name or ''} asks for a world of {world:,} devices "
                       f"({sizes}); rtc handles at most {MAX_WORLD:,} per job", spans[key],
                       hint=f"check '{key}' for a typo; dp*pp*pcp*tp must equal the number of "
                            "devices the job is given"))
    for k in given:
        failed.add(k)
        del values[k], spans[k]  # never lower an absurd world


#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNKNOWN_ATTRIBUTE, DUPLICATE_ATTRIBUTE, MISSING_ATTRIBUTE, BAD_LABEL)
