"""MindIE as a launch target (``framework mindie``): the facts rtc uses, as data with their
sources, and the per-node fragment of MindIE Server's ``config.json``.

Each node of a MindIE job runs one MindIE Server daemon on the job's NPUs. rtc writes, per
node, the environment (:mod:`rtc.plan.node_env`: ``MIES_CONTAINER_IP`` and
``MIES_CONTAINER_MANAGEMENT_IP`` = the server's ``container_ip``, else its ``host``;
``RANK_TABLE_FILE`` and ``RANKTABLEFILE`` = the job's rank table), the launch script
(``mindieservice_daemon``) and ``mindie-<stem>.json``, the keys of ``config.json`` that
depend on the cluster (:func:`config_fragment`), to be merged into the node's own
``config.json`` (``MIES_CONFIG_JSON_PATH``, default ``$MIES_INSTALL_PATH/conf/config.json``).
A job on several servers gets ``container_ip`` on every server of its ``hccl.json``
(MindIE refuses a multi-node table without it, and finds its own server by it).

:data:`FACTS` lists every name and value with where it was read; ``verified`` False marks
a fact rtc could not confirm in MindIE's code or docs (it is then not used, only noted).
"""

from __future__ import annotations

from typing import NamedTuple

_LLM = "Ascend/MindIE-LLM @8b4871ad (2026-04-23)"
_MOTOR = "Ascend/MindIE-Motor @5dfb024e (2026-03-31)"
_DOC_OLD = ("MindIE 1.0.RC2 / 1.0.RC3 / 1.0.0 docs, 'Multi-node inference' (mindie_instg_0026/0027) "
            "and 'Environment variables' (mindie_service0300)")
_DOC_230 = "MindIE 2.3.0 docs, 'Multi-node inference' (envdeployment/instg/mindie_instg_0027)"


class Fact(NamedTuple):
    """One MindIE fact: ``name`` (env variable or config key), what it is, the value rtc
    writes (or the limit it checks), the releases it holds for, its source, and whether it
    was verified in MindIE's own code or docs."""

    name: str
    what: str
    value: str
    releases: str
    source: str
    verified: bool = True


FACTS: tuple[Fact, ...] = (
    Fact("RANK_TABLE_FILE", "env: absolute path of the rank table", "the job's hccl.json",
         "2.x (2.3.0 docs; code of 2026)",
         f"{_LLM} src/config_manager/ranktable_config.cpp (RanktableConfigManager); {_DOC_230}"),
    Fact("RANKTABLEFILE", "env: the same path under its earlier name", "the job's hccl.json",
         "1.0.RC2 .. 1.0.0 (docs)",
         f"{_DOC_OLD}; {_MOTOR} boot_helper/boot.sh exports both names (and MIES_RANKTABLEFILE)"),
    Fact("MIES_CONTAINER_IP", "env: the pod's IP (the host IP when the pod shares it): "
         "service-plane REST address and the gRPC address between nodes; matched with each "
         "server's container_ip to find the local server",
         "the server's container_ip, else its host", "1.0.RC2 .. 2.x",
         f"{_LLM} ranktable_config.cpp GetContainerIPAddress / InitFromJson, "
         f"server_config.cpp GetIPAddress; {_DOC_OLD}; {_DOC_230}"),
    Fact("MIES_CONTAINER_MANAGEMENT_IP", "env: management-plane REST address",
         "as MIES_CONTAINER_IP", "1.0.RC2 .. 2.x",
         f"{_LLM} server_config.cpp GetManagementIPAddress; {_MOTOR} boot.sh (both = POD_IP)"),
    Fact("HCCL_IF_IP", "env: the address HCCL's host-side sockets bind; inside a pod with its "
         "own network namespace only the pod IP is there", "the server's container_ip, else "
         "its host", "CANN 8.x", "hicann HCCL env docs (HCCL_IF_IP: an address of the "
         "environment HCCL runs in); rtc's k8s target uses status.podIP likewise"),
    Fact("HOST_IP", "env: bare-metal deployments only (matched with server_id); not set in "
         "containers", "not written", "1.0.RC2 .. 2.x",
         f"{_LLM} ranktable_config.cpp GetHostIPAddress; {_DOC_OLD}"),
    Fact("HCCL_DETERMINISTIC", "env: recommended true for multi-node inference (a numerics "
         "choice)", "not written (add `env HCCL_DETERMINISTIC = true`)", "1.0.0 .. 2.3.0 docs",
         f"{_DOC_230}; MindIE 1.0.0 docs mindie_instg_0027"),
    Fact("GLOBAL_RANK_TABLE_FILE_PATH", "env of ms_controller / ms_coordinator: the global "
         "rank table", "not written (rtc starts no controller)", "Motor 2026",
         f"{_MOTOR} src/controller/constant/ControllerConstant.cpp, docs controller.md"),
    Fact("BackendConfig.multiNodesInferEnabled", "the multi-node switch (the only one: not "
         "RANK_TABLE_FILE nor MIES_CONTAINER_IP)", "true when the job spans servers",
         "1.0.RC2 .. 2.x", f"{_LLM} config_manager_impl.cpp IsMultiNodeInfer, "
         "backend_config.cpp"),
    Fact("BackendConfig.multiNodesInferPort", "gRPC port between the nodes; 1024..65535, not "
         "ServerConfig.port", "1120 (MindIE's default)", "1.0.RC2 .. 2.x",
         f"{_LLM} include/config/config_info.h, backend_config.cpp, config_manager_impl.cpp "
         "CheckAllParam"),
    Fact("BackendConfig.interNodeTLSEnabled", "TLS between the nodes (needs the interNodeTls* "
         "certificates)", "true (MindIE's default)", "1.0.RC2 .. 2.x",
         f"{_LLM} include/config/config_info.h, executor/grpc_communicator.cpp"),
    Fact("BackendConfig.npuDeviceIds", "NPUs of the instance, numbered from 0 (ids the "
         "container sees); ignored with multiNodesInferEnabled (taken from the rank table)",
         "[[0, .., n-1]] for the node's n NPUs", "1.0.RC2 .. 2.x",
         f"{_MOTOR} docs pd_separation_service_deployment.md table 2; {_DOC_OLD}"),
    Fact("ModelConfig.worldSize", "NPUs of the instance on one node (= len(npuDeviceIds[0]))",
         "the node's NPU count", "1.0.RC2 .. 2.x",
         f"{_LLM} ranktable_config.cpp (worldSize = devices per server); {_MOTOR} "
         "deploy_scripts/user_config.json"),
    Fact("ModelConfig.tp / dp", "parallel sizes of the whole instance", "the job's tp and dp",
         "2.x", f"{_MOTOR} deploy_scripts/user_config.json (worldSize 8, dp 2, tp 8 on 2 nodes)"),
    Fact("ServerConfig.inferMode", "'dmi' for a prefill or decode instance, else 'standard'",
         "dmi / standard", "2.x", f"{_LLM} include/config/config_info.h INFER_MODE_DMI; "
         f"{_MOTOR} docs pd_separation_service_deployment.md"),
    Fact("ServerConfig.port", "service-plane REST port, 1024..65535", "the job's port, else "
         "1025", "1.0.RC2 .. 2.x", f"{_LLM} server_config.cpp; MindIE 2.0.RC1 docs "
         "mindie_service0285 (defaults 1025 / 1026 / 1027)"),
    Fact("ServerConfig.managementPort / metricsPort", "management and metrics ports",
         "1026 / 1027 (MindIE's defaults)", "1.0.RC2 .. 2.x",
         "MindIE 2.0.RC1 docs mindie_service0285"),
    Fact("ServerConfig.interCommPort", "port between P and D instances (dmi), 1024..65535; "
         "the struct default 1211 applies only when config.json lacks the key, and the "
         "shipped config.json always has it", "1121 (the shipped config.json's value)", "2.x",
         "Ascend/MindIE-LLM @653bca61 src/server/conf/config.json (\"interCommPort\" : 1121, "
         "the file MindIE installs); @017f9abe src/include/config/config_info.h "
         "(ServerConfig::interCommPort = 1211, the in-code fallback); the MindIE docs' and "
         "Motor's config examples all show 1121"),
    Fact("rank table limits", "server_count 2..60, 1..32 devices per server and the same "
         "number on every server, container_ip on every server, device_id 0..63, rank_id "
         "0..511 (multi-node)", "checked: RTC656, RTC658", "2.x",
         f"{_LLM} ranktable_config.cpp CheckParam"),
    Fact("mindieservice_daemon", "the MindIE Server binary, started in its install folder",
         "/usr/local/Ascend/mindie/latest/mindie-service/bin/mindieservice_daemon (MINDIE_DAEMON)",
         "1.0.RC2 .. 2.x", f"MIES_INSTALL_PATH default in {_DOC_OLD}; newer images also have "
         f"`mindie_llm_server --config-file` ({_MOTOR} boot.sh)"),
    Fact("global table container_ip", "ClusterD's documented global table has no container_ip; "
         "Motor's controller reads server_ip as the node's address", "server_ip = the pod IP",
         "Motor 2026", f"{_MOTOR} controller/node_scheduler/rank_table_loader/RankTableLoader.cpp"
         "; MindCluster dl_bestpractice_010", verified=True),
)

#: MindIE's defaults and limits rtc writes and checks (sources in :data:`FACTS`).
DEFAULT_PORT = 1025
MANAGEMENT_PORT = 1026
METRICS_PORT = 1027
MULTI_NODE_PORT = 1120
INTER_COMM_PORT = 1121
MAX_SERVERS = 60
MAX_LOCAL_DEVICES = 32
MAX_DEVICE_ID = 63
MAX_RANK_ID = 511
DAEMON = "/usr/local/Ascend/mindie/latest/mindie-service/bin/mindieservice_daemon"


def fixed_ports(pd: bool) -> dict[str, int]:
    """The ports rtc's fragment gives MindIE besides ``ServerConfig.port``: config key -> port."""
    out = {"ServerConfig.managementPort": MANAGEMENT_PORT,
           "ServerConfig.metricsPort": METRICS_PORT,
           "BackendConfig.multiNodesInferPort": MULTI_NODE_PORT}
    if pd:
        out["ServerConfig.interCommPort"] = INTER_COMM_PORT
    return out


def service_ip(server) -> str | None:
    """MIES_CONTAINER_IP of a server: its ``container_ip``, else its ``host`` (None: neither)."""
    ip = server.container_ip if server.container_ip is not None else server.host_ip
    return None if ip is None else str(ip)


def config_fragment(job, server, device_count: int, *, multi_node: bool, pd: bool) -> dict:
    """The keys of MindIE Server's ``config.json`` rtc decides for ``job`` on ``server``
    (``device_count`` NPUs there): ``ServerConfig`` addresses, ports and ``inferMode``;
    ``BackendConfig`` ``npuDeviceIds``, the multi-node switch, its port and TLS; one
    ``ModelConfig`` with ``worldSize``, ``tp``, ``dp`` (and the model path / name when the
    job gives them). Values and sources: :data:`FACTS`."""
    ip = service_ip(server) or "127.0.0.1"
    srv: dict = {"ipAddress": ip, "managementIpAddress": ip,
                 "port": job.port or DEFAULT_PORT, "managementPort": MANAGEMENT_PORT,
                 "metricsPort": METRICS_PORT, "inferMode": "dmi" if pd else "standard"}
    if pd:
        srv["interCommPort"] = INTER_COMM_PORT
    model: dict = {}
    if job.launch.served_name:
        model["modelName"] = job.launch.served_name
    if job.launch.model:
        model["modelWeightPath"] = job.launch.model
    model.update({"worldSize": device_count, "tp": job.tp, "dp": job.dp})
    backend = {"npuDeviceIds": [list(range(device_count))],
               "multiNodesInferEnabled": multi_node,
               "multiNodesInferPort": MULTI_NODE_PORT,
               "interNodeTLSEnabled": True,
               "ModelDeployConfig": {"ModelConfig": [model]}}
    return {"ServerConfig": srv, "BackendConfig": backend}


def needs_global_table(topo, pairs) -> bool:
    """True when a complete prefill/decode pair has a ``framework mindie`` job on 1.x
    hardware: ``--out-dir`` then writes the global rank table without being asked."""
    if topo.preset.is_a5 or topo.preset.is_gpu:
        return False
    return any(p.prefill and p.decode and any(j.framework == "mindie" for j in p.jobs)
               for p in pairs)
