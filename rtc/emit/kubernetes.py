"""Kubernetes manifests of a plan (``rtc compile --target k8s --out-dir DIR``): per job a
LeaderWorkerSet (``lws-<job>.yaml``) rendered from :func:`rtc.plan.kubernetes.plan_lws`,
and the ``rings-config-<job>`` ConfigMap (``rings-config-<job>.yaml``) holding the job's
rank table under ``hccl.json`` with ``status: completed``, in the form MindCluster's
ascend-operator mounts it (label ``ring-controller.atlas``, mounted at
``/user/serverid/devindex/config``; sources in :data:`rtc.plan.kubernetes.FACTS`).

Each pod runs ``/bin/sh -c SCRIPT``: ``set -eu``, a check that ``MODEL`` is set, the node's
commands of the shell launch with the pod-given values (``$LWS_WORKER_INDEX``,
``$LWS_LEADER_ADDRESS``, ``$POD_IP``), the last one ``exec``'d so that it is the container's
main process. The script holds no ``$(NAME)`` of a defined env variable, so kubelet's
``$(VAR)`` expansion of ``command`` leaves it as written.

Every manifest is validated before anything is written (:func:`manifest_problems`): the
ConfigMap and each pod template (as a ``v1`` ``PodTemplate``) against the Kubernetes API
schemas bundled with ``kubernetes-validate`` (version :data:`FACTS` ``k8s_version``), the
LeaderWorkerSet itself against ``schemas/lws.schema.json``, written from the LWS CRD's
field definitions (kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``).
"""

from __future__ import annotations

import shlex

from rtc.diagnostics import error
from rtc.plan.kubernetes import (CONFIGMAP_TOO_LARGE, FACTS, HOST_MOUNTS, K8S_BLOCKED, FieldRef, LwsPlan, PodProc,
                                 PodRole, Times, Var, fact, plan_lws)
from rtc.resources import load_schema
from rtc.rules import SCHEMA_SELF
from rtc.schema import schema_errors


#: The pod template label of each role.
ROLE_LABEL = "role"


def file_names(lp: LwsPlan) -> tuple[str, str]:
    """(LeaderWorkerSet file, ConfigMap file) of a job's plan."""
    return f"lws-{lp.name}.yaml", f"{lp.configmap}.yaml"


def blocked_diagnostic(lp: LwsPlan, span):
    """The RTC770 error of a job whose LWS plan is blocked."""
    return error(K8S_BLOCKED, f"job {lp.job} cannot be written as a LeaderWorkerSet: "
                 f"{lp.blocked}", span, subject=f"job {lp.job}",
                 hint="write this job with the shell launch (--target shell), or change "
                      "the job as the message says")


def configmap_doc(lp: LwsPlan, table_text: str) -> dict:
    """The ``rings-config-<job>`` ConfigMap with ``table_text`` (the rendered rank table)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": lp.configmap,
                         "labels": {fact("ring_label"): lp.ring_label,
                                    "app.kubernetes.io/managed-by": "rtc"}},
            "data": {fact("configmap_key"): table_text}}


def lws_doc(lp: LwsPlan, image: str) -> dict:
    """The LeaderWorkerSet document of a job's (unblocked) plan."""
    worker = lp.worker or lp.leader
    tmpl: dict = {"size": lp.size, "restartPolicy": fact("restart_policy")}
    if lp.worker is not None:
        tmpl["leaderTemplate"] = _template(lp, lp.leader, image)
    tmpl["workerTemplate"] = _template(lp, worker, image)
    meta: dict = {"name": lp.name, "labels": {"app.kubernetes.io/managed-by": "rtc"}}
    if lp.domain_label:
        meta["annotations"] = {fact("exclusive_topology"): lp.domain_label}
    return {"apiVersion": fact("lws_api"), "kind": "LeaderWorkerSet",
            "metadata": meta, "spec": {"replicas": 1, "leaderWorkerTemplate": tmpl}}


def compute_domain_doc(lp: LwsPlan) -> dict:
    """The ComputeDomain of a multi-tray NVLink group (NVIDIA's DRA driver, :data:`FACTS`
    ``compute_domain_api``): ``numNodes`` = the group's pods (one per tray); its controller
    creates the ResourceClaimTemplate ``lp.compute_domain`` each pod claims, which puts
    the pod's tray in the domain's IMEX channel (GPU memory shared over NVLink)."""
    return {"apiVersion": fact("compute_domain_api"), "kind": "ComputeDomain",
            "metadata": {"name": lp.compute_domain,
                         "labels": {"app.kubernetes.io/managed-by": "rtc"}},
            "spec": {"numNodes": lp.size,
                     "channel": {"resourceClaimTemplate": {"name": lp.compute_domain}}}}


def _template(lp: LwsPlan, role: PodRole, image: str) -> dict:
    mounts = HOST_MOUNTS if lp.npu else ()   # NVIDIA's container toolkit brings the driver
    container: dict = {
        "name": "vllm", "image": image, "command": ["/bin/sh", "-c", pod_script(role)],
        "env": [_env(n, v) for n, v in role.env],
        "resources": {"limits": {lp.resource: str(role.npus)},
                      "requests": {lp.resource: str(role.npus)}},
        "volumeMounts": [{"name": m.name, "mountPath": m.path, "readOnly": True}
                         for m in mounts] + [{"name": "dshm", "mountPath": "/dev/shm"}]}
    if role.port is not None:
        container["ports"] = [{"name": "http", "containerPort": role.port}]
    claim = fact("compute_domain_claim")
    if lp.compute_domain:
        container["resources"]["claims"] = [{"name": claim}]
    volumes = [{"name": m.name, "hostPath": {"path": m.path, "type": m.kind}}
               for m in mounts]
    volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory",
                                                 "sizeLimit": fact("shm_size")}})
    if lp.table:
        container["volumeMounts"].append({"name": fact("ranktable_volume"),
                                          "mountPath": fact("ranktable_dir"),
                                          "readOnly": True})
        volumes.append({"name": fact("ranktable_volume"),
                        "configMap": {"name": lp.configmap}})
    spec: dict = {}
    if lp.host_network:
        spec.update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": fact("hostname_label"), "operator": "In",
                 "values": list(role.servers)}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {fact("set_name_label"): lp.name}},
             "topologyKey": fact("hostname_label")}]}}
    spec["containers"] = [container]
    spec["volumes"] = volumes
    if lp.compute_domain:
        spec["resourceClaims"] = [{"name": claim,
                                   "resourceClaimTemplateName": lp.compute_domain}]
    meta: dict = {"labels": {ROLE_LABEL: role.role}}
    if lp.domain_label:
        meta["annotations"] = {fact("kueue_required_topology"): lp.domain_label}
    return {"metadata": meta, "spec": spec}


def _env(name: str, value) -> dict:
    if isinstance(value, FieldRef):
        return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": value.path}}}
    return {"name": name, "value": value}


def shell_word(word) -> str:
    """One argv word for ``sh``: literal parts quoted with :func:`shlex.quote`,
    :class:`Var` as ``"${NAME}"``, :class:`Times` as ``"$((NAME * N))"``."""
    out = []
    for part in word:
        if isinstance(part, Var):
            out.append(f'"${{{part.name}}}"')
        elif isinstance(part, Times):
            out.append(f'"$(({part.name} * {part.factor}))"')
        elif part:
            out.append(shlex.quote(part))
    return "".join(out) or "''"


def _is_flag(word) -> bool:
    return isinstance(word[0], str) and len(word[0]) > 1 and word[0].startswith("-")


def _command_lines(proc: PodProc, lead: str) -> list[str]:
    """The command as lines: one flag and its values per line, continued with ``\\``."""
    items = [(shell_word(w), _is_flag(w)) for w in proc.words]
    if proc.env:
        items = [("env", False)] + [(shell_word((f"{n}=",) + tuple(v)), False)
                                    for n, v in proc.env] + items
    lines: list[list[str]] = [[]]
    for word, flag in items:
        if flag and lines[-1]:
            lines.append([])
        lines[-1].append(word)
    return [(lead if i == 0 else "  ") + " ".join(ws) + (" \\" if i < len(lines) - 1 else "")
            for i, ws in enumerate(lines)]


def pod_script(role: PodRole) -> str:
    """The ``sh -c`` script of a pod template (see the module docstring)."""
    lines = ["set -eu"]
    if any(Var("MODEL") in w for p in role.procs for w in p.words):
        lines.append(': "${MODEL:?set MODEL: the model path or name (job attribute: model) '
                     'is not given}"')
    for i, proc in enumerate(role.procs):
        if proc.wait_group:
            lines.append(f'until [ "$(ray status 2>/dev/null | grep -c node_)" -ge '
                         f'"${{{fact("group_size")}}}" ]; do sleep 5; done')
        lines += _command_lines(proc, "exec " if i == len(role.procs) - 1 else "")
    return "\n".join(lines) + "\n"


def header(lp: LwsPlan, source: str, what: str) -> str:
    """The comment lines above a manifest: what it is, which servers its pods stand for."""
    names = lp.worker.servers if lp.worker else []
    workers = ", ".join(names) if len(names) <= 6 else \
        f"{', '.join(names[:3])}, ..., {names[-1]} ({len(names)} servers)"
    workers = workers or "none"
    domain = _placement_lines(lp) if what == "LeaderWorkerSet" else ""
    if not lp.npu:
        return (f"# rtc: {what} of job {lp.job}, from {source}.\n"
                f"# Pods: leader = server {lp.leader.servers[0]}, workers = {workers}; "
                "required node affinity on kubernetes.io/hostname (node names = rtc server\n"
                "# names) keeps them on the job's servers"
                + (", but LWS cannot pin worker index k to server k.\n" if len(names) > 1
                   else ".\n")
                + domain + "# Generated by `rtc compile --target k8s`; change the .rtc file and "
                "compile again instead of editing.\n")
    pin = ("# Required node affinity on kubernetes.io/hostname (node names = rtc server "
           "names) keeps the leader on its server\n"
           "# and the workers on theirs, but LWS has one template for all workers and cannot "
           "pin worker index k to server k:\n"
           "# check after every (re)start with `rtc validate --pods pods.json "
           f"{lp.configmap}.yaml`.\n") if len(names) > 1 else (
           "# Required node affinity on kubernetes.io/hostname (node names = rtc server "
           "names) keeps each pod on its server\n"
           f"# (check with `rtc validate --pods pods.json {lp.configmap}.yaml`).\n")
    return (f"# rtc: {what} of job {lp.job}, from {source}.\n"
            f"# Pods: leader = server {lp.leader.servers[0]}, workers = {workers}; the rank "
            "table names these servers, so each pod must run on its server.\n" + pin +
            domain + "# Generated by `rtc compile --target k8s`; change the .rtc file and compile "
            "again instead of editing.\n")


def _placement_lines(lp: LwsPlan) -> str:
    """The header's placement comment: the domain the group must stay inside (LWS
    exclusive topology and Kueue required topology on ``lp.domain_label``), and for an
    Ascend super pod how its nodes get that label; else, for NPU pods, that each TP group is
    one pod's NPUs on one node."""
    if not lp.domain_label:
        if lp.npu and lp.tp and lp.leader and lp.tp <= lp.leader.npus:
            return (f"# Placement: each TP group ({lp.tp} NPUs) is inside one pod, and a pod's "
                    "NPUs are on one node.\n")
        return ""
    out = (f"# Placement: {lp.domain_reason}: the {fact('exclusive_topology')} annotation "
           f"keeps the group inside one\n# {lp.domain_label} domain (LWS), and "
           f"{fact('kueue_required_topology')} asks Kueue for the same.\n")
    if lp.compute_domain:
        out += (f"# Multi-node NVLink: the ComputeDomain {lp.compute_domain} above (NVIDIA's DRA "
                "driver for GPUs, resource.nvidia.com) gives every pod\n# the domain's IMEX "
                f"channel (claim {fact('compute_domain_claim')}); without it CUDA/NCCL cannot "
                "share GPU memory across trays over NVLink.\n# Install the driver "
                "(helm chart nvidia-dra-driver-gpu, ComputeDomain support) before applying.\n")
    if lp.domain_label == fact("superpod_label"):
        out += (f"# Label every node with {lp.domain_label}=<its super pod id> (MindCluster's "
                "device plugin records it in the node\n# annotation superPodID); check where "
                "the pods landed with `kubectl get pods,nodes -o json > pods.json` and\n"
                f"# `rtc validate --pods pods.json {lp.configmap}.yaml`.\n")
    return out


def manifest_problems(doc: dict) -> list[str]:
    """Schema errors of one emitted manifest, as messages: ConfigMaps against the bundled
    Kubernetes schemas, LeaderWorkerSets against ``schemas/lws.schema.json`` and each of
    their pod templates as a ``v1`` PodTemplate. Raises nothing for a bad document;
    :class:`rtc.extras.MissingExtra` when kubernetes-validate is not installed."""
    from rtc.extras import kubernetes_validate as loaded

    kubernetes_validate = loaded("--target k8s")  # heavy: only when manifests are written

    version = FACTS["k8s_version"].value
    out: list[str] = []

    def check(d: dict, where: str) -> None:
        try:
            kubernetes_validate.validate(d, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = "/".join(str(p) for p in exc.path)
            out.append(f"{where}{path}: {exc.message}")

    if doc.get("kind") == "ComputeDomain":
        return [f"{'/'.join(str(p) for p in e.path)}: {e.message}"
                for e in schema_errors(doc, load_schema("computedomain"))]
    if doc.get("kind") != "LeaderWorkerSet":
        check(doc, "")
        return out
    out += [f"{'/'.join(str(p) for p in e.path)}: {e.message}"
            for e in schema_errors(doc, load_schema("lws"))]
    tmpl = doc.get("spec", {}).get("leaderWorkerTemplate", {})
    for key in ("leaderTemplate", "workerTemplate"):
        if key in tmpl:
            check({"apiVersion": "v1", "kind": "PodTemplate",
                   "metadata": {"name": f"{doc['metadata']['name']}-{key.lower()}"},
                   "template": tmpl[key]}, f"spec/leaderWorkerTemplate/{key}/")
    return out


def render(docs: list[dict], head: str) -> str:
    """YAML text of ``docs`` (one ``---`` separated document each) below ``head``;
    multi-line strings (the rank table, pod scripts) as literal blocks."""
    import yaml  # PyYAML, loaded only when manifests are written

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value: str):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    body = "---\n".join(yaml.dump(d, Dumper=Dumper, sort_keys=False, width=100,
                                  default_flow_style=False) for d in docs)
    return head + body


def compact(table_text: str) -> str:
    """The rank table without spaces (keys in the same order), as the operator writes it."""
    import json

    return json.dumps(json.loads(table_text), separators=(",", ":"), ensure_ascii=False) + "\n"


def fitting_table(table_text: str) -> str | None:
    """The table text for the ConfigMap: as rtc renders it when that fits in a ConfigMap
    (:data:`FACTS` ``configmap_limit``), else compact, else None."""
    limit = int(fact("configmap_limit"))
    if len(table_text.encode()) <= limit:
        return table_text
    small = compact(table_text)
    return small if len(small.encode()) <= limit else None


class K8sBundle:
    """What ``--target k8s`` writes: ``outputs`` ``(name, text)``, the LWS plans by job and
    ``diagnostics`` (RTC770 for blocked jobs, RTC003 for a manifest that fails its schema;
    nothing must be written when there are any). A plain class: see rtc.plan.launch._Serve."""

    def __init__(self):
        self.outputs: list[tuple[str, str]] = []
        self.plans: dict[str, LwsPlan] = {}
        self.diagnostics: list = []


def build_k8s(topo, plan, jobs, tables: dict, image: str, source: str) -> K8sBundle:
    """The manifests of ``jobs`` (Topology jobs with a launch in ``plan``): ``tables`` maps
    job names to their rendered rank table text, ``image`` is the container image."""
    out = K8sBundle()
    for job in jobs:
        jl = plan.launches.get(job.name)
        if jl is None:
            continue
        lp = plan_lws(topo, plan.ports, jl)
        out.plans[job.name] = lp
        same = next((other for other, o in out.plans.items()
                     if other != job.name and o.name == lp.name), None)
        if same is not None and not lp.blocked:
            lp.blocked = (f"its Kubernetes name {lp.name} is also job {same}'s; rename one "
                          "of them")
        if lp.blocked:
            out.diagnostics.append(blocked_diagnostic(lp, job.span))
            continue
        lws_name, cm_name = file_names(lp)
        if not lp.npu:   # NCCL has no rank table: the LeaderWorkerSet only
            _add_checked(out, [(lws_name, lws_doc(lp, image), "LeaderWorkerSet")], lp, source)
            continue
        table = fitting_table(tables[job.name])
        if table is None:
            out.diagnostics.append(error(
                CONFIGMAP_TOO_LARGE, f"job {job.name}: its rank table is "
                f"{len(compact(tables[job.name]).encode()):,} bytes even without spaces, over "
                f"the {int(fact('configmap_limit')):,} bytes a ConfigMap may hold", job.span,
                subject=f"job {job.name}", hint="serve the table from shared storage and "
                "mount that, or split the job"))
            continue
        _add_checked(out, [(lws_name, lws_doc(lp, image), "LeaderWorkerSet"),
                           (cm_name, configmap_doc(lp, table), "rank table ConfigMap")],
                     lp, source)
    return out


def _add_checked(out: K8sBundle, docs: list, lp: LwsPlan, source: str) -> None:
    """Add each (file name, document, what) of ``docs`` to ``out``, or an RTC003 error for
    one that fails its schema."""
    for name, doc, what in docs:
        both = [compute_domain_doc(lp), doc] if lp.compute_domain and \
            what == "LeaderWorkerSet" else [doc]
        problems = [p for d in both for p in manifest_problems(d)]
        if problems:
            out.diagnostics.append(error(
                SCHEMA_SELF, f"internal error: the {what} rtc built ({name}) fails its "
                f"schema: {problems[0]}", None,
                hint="please report this with your .rtc file; nothing was written"))
            continue
        out.outputs.append((name, render(both, header(lp, source, what))))
