"""What each real consumer of a rank table requires, as data: one :class:`Contract` per
consumer and table form, each requirement read in the consumer's source (repository, file
and commit in ``source``). :func:`broken` judges a parsed document against a contract;
:mod:`rtc.tables.semantic.consumers` reports what it finds (RTC678) for ``rtc validate``
and for the tables ``rtc compile`` writes, and ``tests/contracts`` runs every example's
outputs through every contract.

A requirement is ``(path, kind)``: ``path`` a tuple of keys where ``"*"`` stands for every
item of a list; ``kind`` one of

* ``list``: a non-empty JSON array; ``str``: a JSON string; ``decimal``: a string of
  digits; ``ip``: a string that is one IPv4/IPv6 address; ``ips``: IP addresses separated
  by commas (HCCL's multi-NIC form); ``range:LO:HI``: a decimal within LO..HI;
* a trailing ``?`` (``ip?``): checked only when the key is there and not ``""`` (HCCL
  takes an empty ``device_ip`` in a one-server table: its TF example does).

Group numbering of a global rank table is a contract of its own (``groups`` below).
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

_HCOMM = "libochao-huawei/hcomm (mirror of cann/hcomm) @8958adbf"
_MC = "Ascend/mind-cluster @22bb3d98"
_MOTOR = "Ascend/MindIE-Motor @5dfb024e"
_LLM_CPP = "Ascend/MindIE-LLM @8b4871ad"


class Contract(NamedTuple):
    """One consumer's requirements on one table ``form`` (``hccl-v1``: 1.0 and 1.2;
    ``pd-ranktable``; ``mindie-global``). ``applies``: ``all`` tables of the form,
    ``container`` only tables with a ``container_ip`` (the tables of MindIE jobs: rtc and
    Ascend Operator write it there, and MindIE finds its own server by it), ``motor`` / ``omniinfer`` global tables numbered for that consumer."""

    consumer: str
    form: str
    source: str
    requires: tuple
    applies: str = "all"
    groups: str | None = None


_DEV = ("server_list", "*", "device", "*")
_GDEV = ("server_group_list", "*", "server_list", "*", "device", "*")

CONTRACTS: tuple[Contract, ...] = (
    Contract("HCCL", "hccl-v1", f"{_HCOMM} src/legacy/ascend910/framework/common/src/topo/"
             "topoinfo_ranktableConcise.cc, topoinfo_ranktableParser.cc (string getters, "
             "SERVERID_MAX_LENGTH 64)", (
                 (("status",), "str"), (("version",), "str"), (("server_count",), "decimal?"),
                 (("server_list",), "list"), (("server_list", "*", "server_id"), "str"),
                 (("server_list", "*", "host_ip"), "ip?"),
                 (("server_list", "*", "device"), "list"), (_DEV + ("device_id",), "decimal"),
                 (_DEV + ("device_ip",), "ips?"), (_DEV + ("rank_id",), "decimal"))),
    Contract("MindSpore merge_hccl.py", "hccl-v1", "mindspore-ai/models @af532740 "
             "utils/hccl_tools/merge_hccl.py (int(server_count), server_list[].device[]."
             "rank_id)", (
                 (("server_count",), "decimal"), (("server_list",), "list"),
                 (("server_list", "*", "device"), "list"), (_DEV + ("rank_id",), "decimal"))),
    Contract("MindIE-LLM Python (atb_llm EnvVar.check_ranktable)", "hccl-v1",
             "Ascend/MindIE-LLM atb_llm/utils/env.py EnvVar.check_ranktable (int(rank_id) < "
             "world size, ipaddress.ip_address(device_ip), ipaddress.ip_address(server_id); "
             "commit not identified, text of 2025-2026)", (
                 (("server_list", "*", "server_id"), "ip"),
                 (_DEV + ("device_ip",), "ip"), (_DEV + ("rank_id",), "decimal")),
             applies="container"),
    Contract("MindIE-LLM C++ (RanktableConfigManager)", "hccl-v1",
             f"{_LLM_CPP} src/config_manager/ranktable_config.cpp CheckParam / InitFromJson "
             "(container_ip per server, device_id 0..63, rank_id 0..511)", (
                 (("server_count",), "decimal"), (("server_list",), "list"),
                 (("server_list", "*", "container_ip"), "ip"),
                 (_DEV + ("device_id",), "range:0:63"), (_DEV + ("device_ip",), "ip"),
                 (_DEV + ("rank_id",), "range:0:511")), applies="container"),
    Contract("MindCluster (Ascend Operator / ClusterD)", "hccl-v1",
             f"{_MC} component/ascend-operator/pkg/ranktable/common/common.go buildServerInfo "
             "and server.go (server_id = host IP for MindIE, container_ip always; host_ip "
             "written by newer releases only: the operator-written MindIE EP table in "
             "shared/corpus/ranktables has none); "
             "component/clusterd/pkg/domain/epranktable/ranktable_util.go (reads server_id, "
             "container_ip, device)", (
                 (("server_list", "*", "server_id"), "ip"),
                 (("server_list", "*", "host_ip"), "ip?"),
                 (("server_list", "*", "container_ip"), "ip"),
                 (_DEV + ("device_ip",), "ip")), applies="container"),
    Contract("vllm-ascend LLMDataDist", "pd-ranktable", "vllm-project/vllm-ascend @848419d1 "
             "vllm_ascend/distributed/llmdatadist_c_mgr_connector.py (server_id compared with "
             "the worker's IP, int(device_id), device_ip into a 2-rank HCCL table)", (
                 (("prefill_device_list",), "list"), (("decode_device_list",), "list"),
                 (("prefill_device_list", "*", "server_id"), "ip"),
                 (("decode_device_list", "*", "server_id"), "ip"),
                 (("prefill_device_list", "*", "device_id"), "decimal"),
                 (("decode_device_list", "*", "device_id"), "decimal"),
                 (("prefill_device_list", "*", "device_ip"), "ip"),
                 (("decode_device_list", "*", "device_ip"), "ip"),
                 (("prefill_device_list", "*", "cluster_id"), "decimal"),
                 (("decode_device_list", "*", "cluster_id"), "decimal"))),
    Contract("MindIE Motor (RankTableLoader)", "mindie-global",
             f"{_MOTOR} mindie_motor/src/controller/node_scheduler/rank_table_loader/"
             "RankTableLoader.cpp IsValidServer / IsValidDeviceInfo / IsValidCoordinatorGroup; "
             "constant/ControllerConstant.cpp (coordinator group \"0\", servers from \"2\")", (
                 (("server_group_list",), "list"),
                 (("server_group_list", "*", "group_id"), "decimal"),
                 (("server_group_list", "*", "server_list", "*", "server_ip"), "ip"),
                 (_GDEV + ("device_id",), "range:0:2048"), (_GDEV + ("device_ip",), "ip"),
                 (_GDEV + ("device_logical_id",), "range:0:2048"),
                 (_GDEV + ("rank_id",), "range:0:2048")),
             applies="motor", groups="motor"),
    Contract("MindCluster ClusterD (global rank table)", "mindie-global",
             f"{_MC} component/clusterd/pkg/domain/epranktable/ranktable_util.go "
             "GenerateServerGroup0Or1 / GenerateServerGroupList (groups \"0\", \"1\", then "
             "GroupIdOffset 2; server_ip = container_ip; device_logical_id)", (
                 (("version",), "str"), (("status",), "str"),
                 (("server_group_list", "*", "server_count"), "decimal"),
                 (_GDEV + ("device_logical_id",), "decimal")),
             applies="motor", groups="motor"),
    Contract("omniinfer (GlobalRankTable)", "mindie-global",
             "omniinfer omni/accelerators/pd/ranktable/rank_table.py (mirror zhengjinhuan/"
             "omni-infer @d8b878c0) GlobalRankTable.init_server_groups / get_server_role", (
                 (("server_group_list",), "list"),
                 (("server_group_list", "*", "group_id"), "decimal"),
                 (("server_group_list", "*", "server_list", "*", "server_ip"), "ip"),
                 (_GDEV + ("device_ip",), "ip"), (_GDEV + ("device_id",), "decimal")),
             applies="omniinfer", groups="omniinfer"),
)


def form_of(form: str | None) -> str | None:
    """The contract form of an rtc table form (``hccl-v1.0`` -> ``hccl-v1``)."""
    return "hccl-v1" if form in ("hccl-v1.0", "hccl-v1.2") else form


def numbering(doc: dict) -> str:
    """``omniinfer`` when group "0" of a global table holds devices (a prefill instance),
    else ``motor`` (group "0" is MindIE Motor's coordinator, without devices)."""
    groups = doc.get("server_group_list")
    for g in groups if isinstance(groups, list) else ():
        if isinstance(g, dict) and g.get("group_id") == "0":
            servers = g.get("server_list")
            if isinstance(servers, list) and any(isinstance(s, dict) and s.get("device")
                                                 for s in servers):
                return "omniinfer"
    return "motor"


def applies(contract: Contract, doc: dict) -> bool:
    """Whether ``contract`` judges ``doc`` (a document of the contract's form)."""
    if contract.applies == "container":
        servers = doc.get("server_list")
        return isinstance(servers, list) and any(isinstance(s, dict) and "container_ip" in s
                                                 for s in servers)
    if contract.applies in ("motor", "omniinfer"):
        return numbering(doc) == contract.applies
    return True


def broken(contract: Contract, doc) -> list[tuple[tuple, str]]:
    """(path, what is wrong) for each requirement of ``contract`` that ``doc`` breaks; []
    when it meets them all."""
    out: list = []
    for path, kind in contract.requires:
        optional = kind.endswith("?")
        for where, value in _walk(doc, path, ()):
            if value is _MISSING or (optional and value == ""):
                if not optional:
                    out.append((where, "is missing"))
                continue
            problem = _judge(kind.rstrip("?"), value)
            if problem:
                out.append((where, problem))
    if contract.groups:
        out += _groups(contract.groups, doc)
    return out


_MISSING = object()


def _walk(node, path: tuple, where: tuple):
    """(path, value or _MISSING) of every place ``path`` names in ``node``."""
    if not path:
        yield where, node
        return
    key, rest = path[0], path[1:]
    if key == "*":
        for i, item in enumerate(node if isinstance(node, list) else ()):
            yield from _walk(item, rest, where + (i,))
        return
    if not isinstance(node, dict):
        return
    if key not in node:
        yield where + (key,), _MISSING
        return
    yield from _walk(node[key], rest, where + (key,))


def _judge(kind: str, value) -> str | None:
    """What is wrong with ``value`` for ``kind`` (None: nothing)."""
    if kind == "list":
        return None if isinstance(value, list) and value else "is not a non-empty list"
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a string"
    if kind == "decimal" or kind.startswith("range:"):
        if not value.isdecimal():
            return f'"{value}" is not a decimal number'
        if kind.startswith("range:"):
            lo, hi = (int(x) for x in kind.split(":")[1:])
            if not lo <= int(value) <= hi:
                return f"{value} is outside {lo}..{hi}"
    elif kind in ("ip", "ips"):
        for part in (value.split(",") if kind == "ips" else [value]):
            try:
                ipaddress.ip_address(part.strip())
            except ValueError:
                return f'"{value}" is not an IP address'
    return None


def _groups(kind: str, doc) -> list[tuple[tuple, str]]:
    """Group numbering: ``motor`` needs a coordinator group "0" (without devices) and its
    instances from "2"; ``omniinfer`` needs the instance groups numbered 0..n-1."""
    listed = doc.get("server_group_list")
    groups = [g for g in (listed if isinstance(listed, list) else ()) if isinstance(g, dict)]
    ids = [g.get("group_id") for g in groups]
    where = ("server_group_list",)
    if kind == "motor":
        if "0" not in ids:
            return [(where, 'has no coordinator group "0"')]
        low = [i for i, g in zip(ids, groups) if i in ("0", "1") and any(
            isinstance(s, dict) and s.get("device") for s in g.get("server_list") or ())]
        if low:
            return [(where, f'group "{low[0]}" holds devices: instances start at group "2"')]
        return [((*where, g, "server_list", s, "server_id"), f'"{srv.get("server_id")}" is '
                 "not an IP address (IsValidServer)")
                for g, (gid, group) in enumerate(zip(ids, groups)) if gid not in ("0", "1")
                for s, srv in enumerate(group.get("server_list") or ())
                if isinstance(srv, dict) and _judge("ip", srv.get("server_id"))]
    want = [str(n) for n in range(len(ids))]
    if sorted(ids, key=lambda x: int(x) if isinstance(x, str) and x.isdecimal() else -1) != want:
        return [(where, f"group ids are {', '.join(map(str, ids))}, not 0..{len(ids) - 1} "
                 "(prefill instances first)")]
    return []
