"""The MindCluster / MindIE global rank table of a prefill/decode pair
(``global-ranktable.json``; ``global-ranktable-<name>.json`` when several pairs have one),
written by ``rtc compile --out-dir DIR --global-ranktable``.

Format (MindCluster best practice ``dl_bestpractice_010``, "global-ranktable Description";
Ascend/mind-cluster @22bb3d98 ``docs/en/scheduling/api/clusterd/05_service_configuration_apis.md``;
``schemas/mindie-global.schema.json``)::

    {"version": "1.0", "status": "completed",
     "server_group_list": [
       {"group_id": "1", "deploy_server": "0", "server_count": "1",
        "server_list": [{"device": [{"device_id": "0", "device_ip": "...",
                                     ["super_device_id": "...",]
                                     "device_logical_id": "0", "rank_id": "0"}, ...],
                         "server_id": "node0", "server_ip": "10.0.0.6"}],
        ["super_pod_list": [{"super_pod_id": "0", "server_list": [{"server_id": ...}]}]]},
       ...]}

Group numbering, as the consumers read it (:data:`NUMBERINGS`):

* ``mindie-motor`` (the default; MindCluster's ClusterD writes the same): group "0" the
  coordinator, "1" the controller, the instances from "2", prefill jobs first. Motor's
  ``RankTableLoader`` refuses a table without group "0" and reads instances only from group
  "2" on (Ascend/MindIE-Motor @5dfb024e ``ControllerConstant.cpp`` GetMindIECoordinatorGroup
  "0", GetMindIEServerGroup "2"; ``RankTableLoader.cpp`` IsValidCoordinatorGroup,
  ParseMultiNodeServer; Ascend/mind-cluster @22bb3d98 ``clusterd/pkg/domain/epranktable/
  ranktable_util.go`` GenerateServerGroup0Or1, GenerateServerGroupList with GroupIdOffset).
  rtc starts no coordinator or controller, so groups "0" and "1" have no servers (Motor
  then warns "Coordinator nodes list is empty"; add the pods' server_ip there by hand, or
  let ClusterD write the table).
* ``omniinfer``: prefill instances "0".."P-1", decode instances "P".."P+D-1" and nothing
  else (omniinfer ``omni/accelerators/pd/ranktable/rank_table.py`` (mirror zhengjinhuan/omni-infer
  @d8b878c0)
  GlobalRankTable.get_server_role, "Unknown group id." for any other id).

Inside a group servers and devices are in the job's rank order and ``rank_id`` counts from
0, as in the job's own table. ``server_id`` is the server's table server_id (its host IP:
Motor's IsValidServer requires an IP there); ``server_ip`` is the server's ``container_ip``
(the pod IP: Motor's controller reads ``server_ip`` as the node's address) or, without one,
its ``host`` (pods sharing the host network); ClusterD's form has no ``container_ip`` key,
so rtc writes none, ``device_logical_id`` the id the container sees (``visible_devices``),
``deploy_server`` "0" (ClusterD copies it from the instance's ConfigMap label; Motor reads
it as "instance spans nodes with distributed DP" when non-zero, ``GetDeployConfig``).
Version and super pod fields follow the hardware's 1.x table; Ascend 950 (2.0) has no
documented global table form and is refused by the caller. Every value is a string.
"""

from __future__ import annotations

from rtc.model.topology import Job, Topology, container_ids
from rtc.schema import validate_document


def table_names(pairs) -> dict:
    """id(pair) -> file name, for the pairs that have both prefill and decode jobs."""
    using = [p for p in pairs if p.prefill and p.decode]
    return {id(p): "global-ranktable.json" if len(using) == 1 else
            f"global-ranktable-{p.name or i + 1}.json" for i, p in enumerate(using)}


#: Global rank table group numberings: name -> (first instance group id, whether the
#: coordinator "0" and controller "1" groups are written). The first is the default.
NUMBERINGS = {"mindie-motor": (2, True), "omniinfer": (0, False)}


def _group(topo: Topology, job: Job, group_id: int) -> dict:
    a3 = topo.preset.ranktable_version == "1.2"
    servers, pods = [], {}
    rank = 0
    for server, devs in topo.rank_table_members(job):
        logical, _n = container_ids(server, topo.preset)
        items = []
        for d in devs:
            item = {"device_id": str(d.device_id),
                    "device_ip": str(d.device_ip) if d.device_ip is not None else ""}
            if a3 and d.super_device_id is not None:
                item["super_device_id"] = str(d.super_device_id)
            item["device_logical_id"] = str(logical.get(d.device_id, d.device_id))
            item["rank_id"] = str(rank)
            rank += 1
            items.append(item)
        ip = server.container_ip if server.container_ip is not None else server.host_ip
        servers.append({"device": items, "server_id": server.server_id,
                        "server_ip": str(ip) if ip is not None else ""})
        if a3 and server.super_pod_id is not None:
            pods.setdefault(server.super_pod_id, []).append({"server_id": server.server_id})
    group = {"group_id": str(group_id), "deploy_server": "0",
             "server_count": str(len(servers)), "server_list": servers}
    if pods:
        group["super_pod_list"] = [{"super_pod_id": pid, "server_list": members}
                                   for pid, members in pods.items()]
    return group


def build(topo: Topology, pair, numbering: str = "mindie-motor") -> dict:
    """The global table of ``pair`` (prefill jobs, then decode jobs) in canonical key order,
    its groups numbered per ``numbering`` (a key of :data:`NUMBERINGS`; KeyError else)."""
    first, service_groups = NUMBERINGS[numbering]
    groups = [{"group_id": str(n), "server_count": "0", "server_list": []}
              for n in ((0, 1) if service_groups else ())]
    groups += [_group(topo, job, first + n) for n, job in enumerate(pair.jobs)]
    return {"version": topo.preset.ranktable_version, "status": "completed",
            "server_group_list": groups}


def validate(doc: dict, name: str) -> list:
    """Schema findings (rtc's own validator, mindie-global form)."""
    return validate_document(doc, "mindie-global", filename=name)
