"""Pods as inventory: ``kubectl get pods -o json`` checked against a rank table
(``rtc validate --pods pods.json TABLE``).

What a pod tells (Kubernetes core/v1 Pod; MindCluster's device plugin and ascend-operator,
:data:`rtc.plan.kubernetes.FACTS`): ``spec.nodeName`` (the machine), ``status.podIP`` /
``status.hostIP``, the NPUs the device plugin gave it in the annotation
``ascend.kubectl.kubernetes.io/ascend-910-configuration`` (JSON: ``pod_name``,
``server_id``, ``host_ip``, ``devices[{device_id, device_ip, super_device_id}]``, from
ascend-operator ``pkg/ranktable/common/server.go`` ``Instance``), its ``hccl/rankIndex``,
and each container's ``ASCEND_RT_VISIBLE_DEVICES``.

A table server is matched to the pod whose IP is its ``container_ip``, ``server_id`` or
``host_ip`` (with ``hostNetwork`` the pod IP is the host IP), else to the pod whose node
(``spec.nodeName``) is its ``server_id`` (rtc's own 1.0 tables name servers, not IPs), else
to the pod whose annotation names its ``server_id``. A pod of a LeaderWorkerSet (label
``leaderworkerset.sigs.k8s.io/worker-index``) without an operator's ``hccl/rankIndex`` must
be server k of the table when its worker index is k (RTC777): a fixed table lists the
servers in worker-index order, and one LWS template cannot pin each worker to its node.
Placement (issue 36): the pods of one LeaderWorkerSet group (labels
``leaderworkerset.sigs.k8s.io/name`` and ``/group-index``) that carry a topology requirement
- LWS's ``leaderworkerset.sigs.k8s.io/exclusive-topology`` annotation, which the LWS
controller copies onto every pod of the set (kubernetes-sigs/lws v0.10.0
``pkg/controllers/pod_controller.go``), or Kueue's ``kueue.x-k8s.io/podset-required-topology``
on the pod template - must run on nodes that share one value of that node label
(``nvidia.com/gpu.clique``, ``volcano.sh/hypernode``; :data:`rtc.plan.kubernetes.FACTS`).
Node labels are not part of a pod: the file may be ``kubectl get pods,nodes -o json`` (one
List of Pods and Nodes); without the Node of a pod the requirement is not checked (RTC788).

Findings point into the pods file (RTC777, RTC780-788).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Related, Span, error, warning
from rtc.rules import rule
from rtc.tables.jsonload import load_json
from rtc.textfmt import plural

DEVICE_ANNOTATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"
RANK_INDEX = "hccl/rankIndex"
NPU_RESOURCES = ("huawei.com/Ascend910",)
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
SET_NAME = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
#: Pod annotations that name a node label every pod of the group must share one value of:
#: LWS (api/leaderworkerset/v1 ExclusiveKeyAnnotationKey) and Kueue (topology-aware
#: scheduling, podset-required-topology).
DOMAIN_ANNOTATIONS = ("leaderworkerset.sigs.k8s.io/exclusive-topology",
                      "kueue.x-k8s.io/podset-required-topology")

PODS_INPUT = rule("RTC780", "pods-input", "error", "The --pods file is not a list of pods.", """
    What: the file given with --pods is not JSON, or is neither a Pod nor a List of Pods
    (`kubectl get pods -o json`).
    Why: rtc reads the pods' nodes, IPs and NPU annotations from it.
    Example: `kubectl get pods -o wide > pods.json` (a text table).
    Fix: `kubectl get pods -l leaderworkerset.sigs.k8s.io/name=JOB -o json > pods.json`.""")
NO_ANNOTATION = rule("RTC781", "pod-without-npu-annotation", "warning",
                     "A pod has no device-plugin annotation; its NPUs are not checked.", """
    What: a pod has no ascend.kubectl.kubernetes.io/ascend-910-configuration annotation.
    Why: that annotation is the device plugin's record of which NPUs the pod got, and
    the operator builds the rank table from it; without it rtc cannot compare the
    table's devices with the pod's, and the operator's table stays initializing.
    Example: pods scheduled by the default scheduler with a device plugin that does not
    write the annotation.
    Fix: run MindCluster's device plugin (and Volcano) for NPU pods, or check the
    devices by hand.""")
SHARED_NODE = rule("RTC782", "pods-share-a-node", "error",
                   "Two pods on one node are listed as two servers.", """
    What: the rank table has one server entry per pod, and two of those pods run on the
    same node (`spec.nodeName`).
    Why: HCCL treats two server entries as two machines and connects their NPUs over
    RoCE; NPUs of one machine have no RoCE path to each other, so initialisation fails
    (HCCL error 103900, vllm-ascend issue 14506).
    Example: two 4-NPU pods of one LeaderWorkerSet scheduled on one 8-NPU server.
    Fix: one pod per node (podAntiAffinity on kubernetes.io/hostname, as rtc's
    LeaderWorkerSets have, or whole-node NPU requests), or list the node once with the
    devices of both pods.""")
DEVICES_DIFFER = rule("RTC783", "pod-devices-differ", "error",
                      "A table server's devices are not the NPUs its pod was given.", """
    What: the device_id / device_ip list of a table server differs from the devices in
    its pod's device-plugin annotation.
    Why: each rank must run on the device its entry names ("ranktable config devId[x],
    but local devId[y]"), and peers connect to the device_ip listed.
    Example: a fixed table naming devices 0-3 while the device plugin gave the pod 4-7.
    Fix: let the operator fill the table from the annotations, or pin the pod to the NPUs
    the table names.""")
IP_DIFFERS = rule("RTC784", "pod-ip-differs", "error",
                  "A table server's container_ip is not its pod's IP.", """
    What: the server entry's container_ip (the pod IP the operator records) is not the
    IP of the pod that entry belongs to.
    Why: a stale table from an earlier run of the pods: the processes that read it look
    for peers at addresses that no longer exist.
    Example: the pods were recreated and the ConfigMap was not regenerated.
    Fix: regenerate the table (delete the pods so the operator rebuilds it).""")
VISIBLE = rule("RTC785", "pod-visible-devices", "error",
               "A pod's ASCEND_RT_VISIBLE_DEVICES names NPUs the container does not have.", """
    What: a container sets ASCEND_RT_VISIBLE_DEVICES to ids at or above the number of
    NPUs its pod was given (typically the physical ids, when the pod got non-first NPUs).
    Why: inside the container the device plugin's NPUs are numbered from 0; a higher id
    does not exist there and the runtime fails to open the device (vllm-ascend issue 9428,
    HAMi issue 1894).
    Example: the pod got NPUs 4-7 and the manifest sets ASCEND_RT_VISIBLE_DEVICES=4,5,6,7.
    Fix: use 0..n-1 inside the container (rtc's manifests do), or drop the variable.""")
NO_POD = rule("RTC786", "server-without-pod", "warning",
              "A table server matches no pod.", """
    What: no pod of the --pods file has the server's container_ip, server_id or host_ip
    as its IP, nor names its server_id in its annotation.
    Why: its devices and addresses could not be compared; a pod may be missing, or the
    table may be from other pods.
    Example: pods.json taken with a label selector that misses the workers.
    Fix: take all of the job's pods, or check the table's addresses.""")

WRONG_SERVER = rule("RTC777", "pod-on-wrong-server", "error",
                    "A LeaderWorkerSet pod runs on another server than its table entry.", """
    What: the pod with LWS worker index k runs on a node other than server k of the
    rank table (matched by pod IP or node name), e.g. leader and worker swapped.
    Why: each pod computes its ranks from its worker index (data-parallel start rank,
    node rank), while HCCL takes its devices and device IPs from the table's server k:
    the ranks then claim another machine's NPUs and initialisation fails or hangs.
    Example: table servers d1, d2; pod deepseek-0 (index 0) on d2, deepseek-0-1 on d1.
    Fix: delete the group's pods so they are scheduled again (rtc's manifests pin the
    leader and, for two servers, the worker by node affinity), or cordon the wrong
    nodes; check again with rtc validate --pods.""")

OUTSIDE_DOMAIN = rule("RTC787", "pods-outside-one-domain", "error",
                      "The pods of one group run on nodes of different topology domains.", """
    What: the pods of one LeaderWorkerSet group ask to stay inside one domain of a node
    label (the leaderworkerset.sigs.k8s.io/exclusive-topology or
    kueue.x-k8s.io/podset-required-topology annotation, e.g. nvidia.com/gpu.clique or
    volcano.sh/hypernode), but their nodes carry different values of that label, or none.
    Why: rtc's plan keeps the group's TP / EP traffic inside one NVLink domain or super
    pod; across domains it runs over the slower scale-out network (an A3 rank table's
    super_pod_list and its HCCS links no longer hold), or HCCL fails to connect.
    Example: the decode pods of an A3 job on nodes labelled volcano.sh/hypernode=sp0 and
    volcano.sh/hypernode=sp1.
    Fix: label the nodes with their real domain, check that the LWS webhook or Kueue is
    installed (they turn the annotation into affinity), then delete the group's pods so
    they are scheduled again; check with rtc validate --pods.""")
DOMAIN_UNCHECKED = rule("RTC788", "pod-domain-unchecked", "warning",
                        "A group's topology requirement could not be checked.", """
    What: the pods of a group must stay inside one domain of a node label, but the --pods
    file does not hold the Node objects of their nodes (kubectl get pods -o json lists no
    node labels).
    Why: without the nodes' labels rtc cannot tell whether the pods share the domain.
    Example: pods.json from kubectl get pods -o json alone.
    Fix: kubectl get pods,nodes -o json > pods.json (one List of both).""")

RULES = (WRONG_SERVER, PODS_INPUT, NO_ANNOTATION, SHARED_NODE, DEVICES_DIFFER, IP_DIFFERS, VISIBLE, NO_POD,
         OUTSIDE_DOMAIN, DOMAIN_UNCHECKED)


@dataclass
class Pod:
    """What rtc reads from one pod; ``path`` is its JSON path in the pods file."""

    name: str
    path: tuple
    node: str | None
    ip: str | None
    host_ip: str | None
    npus: int
    devices: list | None = None            # [(device_id, device_ip)] from the annotation
    server_id: str | None = None            # the annotation's
    visible: list = field(default_factory=list)   # [(JSON path in the pod, value)]
    index: int | None = None                # the LWS worker-index label
    rank_index: bool = False                # has the operator's hccl/rankIndex
    group: tuple | None = None              # (LWS set name, group index)
    domains: list = field(default_factory=list)   # [(annotation, node label key)]
    node_labels: dict | None = None         # its node's labels, when the file has the Node


def load_pods(data: bytes, filename: str) -> tuple[list[Pod], object, list[Diagnostic]]:
    """The pods of a ``kubectl get pods -o json`` file (or ``kubectl get pods,nodes -o
    json``: the Nodes' labels are set on their pods), its source map, and findings."""
    doc, smap, diags = load_json(data, filename=filename)
    if doc is None:
        first = diags[0] if diags else None
        return [], smap, [error(PODS_INPUT, f"{filename} is not JSON"
                                + (f": {first.message}" if first else ""),
                                first.span if first and first.span else Span.whole_file(filename),
                                hint="kubectl get pods -o json > pods.json")]
    lists = ("List", "PodList", "NodeList")  # kubectl prints List; the API server's own kinds
    items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") in lists else [doc]
    # a lone object must say it is a Pod (kubectl does); a List's items may not (the API
    # server's PodList leaves their kind out). A rank table, say, is none of them.
    bare = items == [doc] and not (isinstance(doc, dict) and doc.get("kind") == "Pod")
    if bare or not isinstance(items, list) or not all(
            isinstance(p, dict) and p.get("kind", "Pod") in ("Pod", "Node") for p in items) \
            or not any(p.get("kind", "Pod") == "Pod" for p in items):
        return [], smap, [error(PODS_INPUT, f"{filename} is not a kubectl pods list (a Pod or "
                                f"a List of Pods){_what_it_is(doc)}",
                                Span.whole_file(filename),
                                hint="kubectl get pods -o json > pods.json")]
    base = ("items",) if items is not doc else ()
    labels = {str(_obj(n.get("metadata")).get("name")): _obj(_obj(n.get("metadata")).get("labels"))
              for n in items if n.get("kind") == "Node"}
    pods = [_pod(p, base + ((i,) if base else ())) for i, p in enumerate(items)
            if p.get("kind", "Pod") == "Pod"]
    for pod in pods:
        pod.node_labels = labels.get(pod.node) if pod.node else None
    return pods, smap, diags


def _what_it_is(doc) -> str:
    """``: it looks like a rank table`` (and the like) for a document that is not pods."""
    if isinstance(doc, dict) and ("server_list" in doc or "group_list" in doc
                                  or "server_group_list" in doc):
        return "; it looks like a rank table: give that as the FILES argument"
    if isinstance(doc, dict) and doc.get("kind"):
        return f"; its kind is {str(doc.get('kind'))[:40]!r}"
    return f"; it is a JSON {type(doc).__name__ if not isinstance(doc, dict) else 'object'}" \
        " without kind: Pod"


def _obj(value) -> dict:
    """``value`` when it is a JSON object, else {} (a field of the wrong type reads as
    absent)."""
    return value if isinstance(value, dict) else {}


def _pod(p: dict, path: tuple) -> Pod:
    meta, spec, status = (_obj(p.get(k)) for k in ("metadata", "spec", "status"))
    containers = [_obj(c) for c in spec.get("containers") or []] \
        if isinstance(spec.get("containers"), list) else []
    pod = Pod(str(meta.get("name", "?")), path, spec.get("nodeName"), status.get("podIP"),
              status.get("hostIP"), _npus(containers))
    for i, c in enumerate(containers):
        for j, e in enumerate(c.get("env") if isinstance(c.get("env"), list) else []):
            if isinstance(e, dict) and e.get("name") == "ASCEND_RT_VISIBLE_DEVICES" and "value" in e:
                pod.visible.append((("spec", "containers", i, "env", j, "value"),
                                    str(e["value"])))
    labels, notes = _obj(meta.get("labels")), _obj(meta.get("annotations"))
    label = str(labels.get(WORKER_INDEX, ""))
    pod.index = int(label) if (label.isdigit() and len(label) <= 20) else None
    if labels.get(SET_NAME):
        pod.group = (str(labels[SET_NAME]), str(labels.get(GROUP_INDEX, "0")))
    pod.domains = [(a, str(notes[a])) for a in DOMAIN_ANNOTATIONS if notes.get(a)]
    pod.rank_index = RANK_INDEX in notes
    raw = notes.get(DEVICE_ANNOTATION)
    if raw is not None:
        try:
            inst = json.loads(raw)
            pod.devices = [(str(d.get("device_id")), d.get("device_ip"))
                           for d in inst.get("devices") or []]
            pod.server_id = inst.get("server_id")
        except (ValueError, AttributeError, RecursionError):
            pod.devices = None
    return pod


def _npus(containers: list) -> int:
    """The NPUs the pod's containers request (limits of :data:`NPU_RESOURCES`)."""
    total = 0
    for c in containers:
        limits = _obj(_obj(c.get("resources")).get("limits"))
        for name in NPU_RESOURCES:
            value = str(limits.get(name, "0"))
            total += int(value) if (value.isdigit() and len(value) <= 20) else 0
    return total


def check_pods(pods: list[Pod], smap, pods_file: str, table: dict, table_file: str
               ) -> list[Diagnostic]:
    """The findings of ``pods`` against the rank table document ``table`` (see the
    module docstring)."""
    out: list[Diagnostic] = []
    at = lambda pod, *more: smap.locate_nearest(pod.path + more) if smap.parsed \
        else Span.whole_file(pods_file)  # noqa: E731
    for pod in pods:
        out += _pod_findings(pod, at)
    out += placement_findings(pods, at, pods_file)
    servers = [s for s in table.get("server_list") or [] if isinstance(s, dict)] \
        if isinstance(table, dict) else []
    matched: dict[int, Pod] = {}
    for k, s in enumerate(servers):
        pod = _match(s, pods)
        if pod is None:
            out.append(warning(NO_POD, f"server {s.get('server_id')} of {table_file} matches "
                               f"no pod of {pods_file}", Span.whole_file(pods_file),
                               subject=f"server {s.get('server_id')}",
                               hint="take all of the job's pods with kubectl get pods -o json"))
            continue
        matched[k] = pod
        out += _server_findings(s, pod, at, table_file)
    out += _shared_nodes(servers, matched, at)
    out += _wrong_servers(servers, matched, at, table_file)
    return out


def _wrong_servers(servers: list, matched: dict, at, table_file: str) -> list[Diagnostic]:
    """RTC777: pods whose LWS worker index is not their table server's position."""
    out = []
    for k, pod in matched.items():
        if pod.index is None or pod.rank_index or pod.index == k:
            continue
        mine = servers[pod.index].get("server_id") if pod.index < len(servers) else None
        should = f"server {pod.index} of the table is {mine}" if mine is not None else \
            f"the table has only {len(servers)} servers"
        out.append(error(WRONG_SERVER, f"pod {pod.name} (LWS worker index {pod.index}) runs on "
                         f"{pod.node or pod.ip}, which is server {k} "
                         f"({servers[k].get('server_id')}) of {table_file}, but {should}; "
                         "its ranks would use another server's NPUs and device IPs",
                         at(pod, "metadata", "labels", WORKER_INDEX),
                         subject=f"pod {pod.name}, server {servers[k].get('server_id')}",
                         hint="delete the group's pods so they are scheduled on their "
                              "servers again (node affinity on kubernetes.io/hostname), "
                              "then check again"))
    return out


def _pod_findings(pod: Pod, at) -> list[Diagnostic]:
    out = []
    if pod.devices is None and pod.npus:
        out.append(warning(NO_ANNOTATION, f"pod {pod.name} requests {plural(pod.npus, 'NPU')} but has no "
                           f"{DEVICE_ANNOTATION} annotation; its NPUs are not checked",
                           at(pod, "metadata"), subject=f"pod {pod.name}",
                           hint="MindCluster's device plugin writes it when it allocates NPUs"))
    given = len(pod.devices) if pod.devices is not None else pod.npus
    for where, value in pod.visible:
        ids = [int(x) for x in value.split(",") if x.strip().isdigit() and len(x.strip()) <= 20]
        high = [x for x in ids if given and x >= given]
        if high:
            phys = f" (it was given devices {', '.join(d for d, _ip in pod.devices)})" \
                if pod.devices else ""
            out.append(error(VISIBLE, f"pod {pod.name} sets ASCEND_RT_VISIBLE_DEVICES={value}, "
                             f"but its container sees only NPUs 0..{given - 1}{phys}",
                             at(pod, *where), subject=f"pod {pod.name}",
                             hint="inside the container the NPUs are numbered from 0: use "
                                  + ",".join(str(x) for x in range(given))))
    return out


def _match(s: dict, pods: list[Pod]) -> Pod | None:
    for key in ("container_ip", "server_id", "host_ip"):
        value = s.get(key)
        pod = next((p for p in pods if value and p.ip == value), None)
        if pod is not None:
            return pod
    for key in ("server_id", "host_ip"):   # Ascend Operator's form: the node's IP
        value = s.get(key)
        on_host = [p for p in pods if value and p.host_ip == value]
        if len(on_host) == 1:
            return on_host[0]
    sid = s.get("server_id")
    pod = next((p for p in pods if sid and p.node == sid), None)
    if pod is not None:
        return pod
    return next((p for p in pods if p.server_id and p.server_id == s.get("server_id")
                 and sum(q.server_id == p.server_id for q in pods) == 1), None)


def _server_findings(s: dict, pod: Pod, at, table_file: str) -> list[Diagnostic]:
    out = []
    sid = s.get("server_id")
    if s.get("container_ip") and pod.ip and s["container_ip"] != pod.ip:
        out.append(error(IP_DIFFERS, f"server {sid} of {table_file} has container_ip "
                         f"{s['container_ip']}, but its pod {pod.name} has IP {pod.ip}",
                         at(pod, "status", "podIP"), subject=f"server {sid}, pod {pod.name}",
                         hint="the table is from earlier pods: let the operator rebuild it"))
    if pod.devices is None:
        return out
    table_devs = [(str(d.get("device_id")), d.get("device_ip"))
                  for d in s.get("device") or [] if isinstance(d, dict)]
    if sorted(table_devs) != sorted(pod.devices):
        out.append(error(DEVICES_DIFFER, f"server {sid} of {table_file} does not list the "
                         f"NPUs the device plugin gave its pod {pod.name}: "
                         + _difference(table_devs, pod.devices),
                         at(pod, "metadata", "annotations", DEVICE_ANNOTATION),
                         subject=f"server {sid}, pod {pod.name}",
                         hint="let the operator fill the table from the pods' annotations, "
                              "or pin the pod to the NPUs the table names"))
    return out


def _difference(table: list, pod: list) -> str:
    """What differs between the table's (device_id, device_ip) pairs and the pod's."""
    t, p = dict(table), dict(pod)
    if set(t) != set(p):
        return (f"the table lists devices {', '.join(sorted(t, key=_num))}, the pod was given "
                f"{', '.join(sorted(p, key=_num)) or 'none'}")
    diff = [d for d in sorted(t, key=_num) if t[d] != p[d]]
    first = diff[0]
    more = f" ({len(diff) - 1} more devices differ likewise)" if len(diff) > 1 else ""
    return (f"device {first} has device_ip {t[first]} in the table and {p[first]} on the "
            f"pod{more}")


def _num(text: str):
    return (0, int(text)) if (text.isdigit() and len(text) <= 20) else (1, text)


def _shared_nodes(servers: list, matched: dict, at) -> list[Diagnostic]:
    by_node: dict[str, list] = {}
    for k, pod in matched.items():
        if pod.node:
            by_node.setdefault(pod.node, []).append((servers[k].get("server_id"), pod))
    out = []
    for node, entries in by_node.items():
        if len({sid for sid, _p in entries}) < 2:
            continue
        (sid0, p0), (sid1, p1) = entries[0], entries[1]
        out.append(error(SHARED_NODE, f"pods {p0.name} ({p0.ip}) and {p1.name} ({p1.ip}) both "
                         f"run on node {node}, but the table lists them as two servers "
                         f"({sid0} and {sid1}); HCCL then needs RoCE between NPUs of one "
                         "machine and fails to initialise (103900)",
                         at(p1, "spec", "nodeName"), subject=f"node {node}",
                         related=[Related(at(p0, "spec", "nodeName"), f"pod {p0.name}")],
                         hint="run one pod per node (podAntiAffinity on "
                              "kubernetes.io/hostname), or list the node once with the "
                              "devices of both pods"))
    return out


def placement_findings(pods: list[Pod], at, pods_file: str) -> list[Diagnostic]:
    """RTC787 / RTC788: each LWS group whose pods carry a domain annotation (see the module
    docstring) against the labels of their nodes."""
    groups: dict[tuple, list[Pod]] = {}
    for pod in pods:
        if pod.group is not None:
            groups.setdefault(pod.group, []).append(pod)
    out = []
    for (name, index), members in groups.items():
        members.sort(key=lambda p: (p.index is None, p.index or 0, p.name))
        keys: dict[str, str] = {}      # node label key -> the first annotation naming it
        for a, k in (d for p in members for d in p.domains):
            keys.setdefault(k, a)
        for key, annotation in keys.items():
            out += _domain_finding(f"{name} (group {index})", members, annotation, key, at,
                                   pods_file)
    return out


def _domain_finding(group: str, members: list[Pod], annotation: str, key: str, at,
                    pods_file: str) -> list[Diagnostic]:
    """The finding of one group's pods against one required node label ``key``."""
    unknown = [p for p in members if p.node_labels is None]
    if unknown:
        p = unknown[0]
        return [warning(DOMAIN_UNCHECKED, f"pods of LeaderWorkerSet {group} must stay inside "
                        f"one {key} domain ({annotation}), but {pods_file} has no Node "
                        f"{p.node or '(not scheduled)'} of pod {p.name}: not checked",
                        at(p, "metadata", "annotations", annotation), subject=f"pod {p.name}",
                        hint="kubectl get pods,nodes -o json > pods.json")]
    value = {p.name: p.node_labels.get(key) for p in members}
    first = members[0]
    odd = [p for p in members if value[p.name] != value[first.name] or value[p.name] is None]
    if not odd:
        return []
    where = "; ".join(f"pod {p.name} on node {p.node}: "
                      + (f"{key}={value[p.name]}" if value[p.name] is not None else "no label")
                      for p in members)
    bad = odd[0]
    return [error(OUTSIDE_DOMAIN, f"the pods of LeaderWorkerSet {group} must share one {key} "
                  f"domain ({annotation}), but they run in "
                  f"{len({value[p.name] for p in members})} ({where})",
                  at(bad, "spec", "nodeName"), subject=f"pod {bad.name}, node {bad.node}",
                  related=[Related(at(first, "spec", "nodeName"), f"pod {first.name}")],
                  hint=f"label every node with its real {key}, make sure the LWS webhook or "
                       "Kueue turns the annotation into affinity, then delete the group's pods "
                       "so they are scheduled together again")]
