"""Kubernetes manifests as a front end of ``rtc lint``: the pods a workload starts, each read
as one node (its containers' command, args and env, as the kubelet would run them), lifted
with the scripts' rules, plus the rules only a manifest can break (RTC790-RTC797).

Where each workload kind keeps its pod templates (read in each API's types / CRD schema):

==========================================  ===========================================  ==========
kind (group)                                pod templates                                 pods lifted
==========================================  ===========================================  ==========
``Pod`` (v1)                                ``spec``                                      1
``Deployment`` / ``ReplicaSet`` /           ``spec.template.spec``                        1 (the
``StatefulSet`` / ``DaemonSet`` (apps/v1),                                                replicas are
``Job`` (batch/v1)                                                                        copies)
``LeaderWorkerSet`` (leaderworkerset.       ``spec.leaderWorkerTemplate.leaderTemplate``  one group:
x-k8s.io; kubernetes-sigs/lws api/...       (else the worker template), ``.workerTemplate``  ``size``
leaderworkerset_types.go)                                                                 pods
``Job`` (batch.volcano.sh; volcano-sh/apis  ``spec.tasks[].template``                     ``replicas``
batch/v1alpha1/job.go)                                                                    per task
``ModelServing`` (workload.serving.volcano  ``spec.template.roles[].entryTemplate``,      one group
.sh; vLLM docs/deployment/integrations/     ``.workerTemplate`` x ``workerReplicas``     per role
kthena.md)
``RayCluster`` / ``RayService`` /           ``headGroupSpec.template``,                   head +
``RayJob`` (ray.io; KubeRay                 ``workerGroupSpecs[].template`` (under        ``replicas``
ray-operator/apis/ray/v1)                   ``spec``, ``spec.rayClusterConfig``,
                                            ``spec.rayClusterSpec``)
``InferenceService`` (serving.kserve.io/    ``spec.predictor`` (its ``containers``, or    head +
v1beta1)                                    ``model`` as one container),                  workers
                                            ``spec.predictor.workerSpec``
``LLMInferenceService`` (serving.kserve.io  ``spec.template``, ``spec.worker``,           head +
v1alpha1/v1alpha2)                          ``spec.prefill.template`` / ``.worker``       workers
``InferencePool`` (inference.networking.    none: ``spec.selector`` and                   -
x-k8s.io / k8s.io, llm-d)                   ``targetPortNumber`` / ``targetPorts``
``Service`` (v1)                            none: ``spec.selector``, ``ports``            -
docker compose file (no ``kind``)           each of ``services``: ``entrypoint`` +        one per
                                            ``command``, ``environment``, ``devices``     service
==========================================  ===========================================  ==========

The env a pod gets besides its containers' ``env``: the operator's (LWS ``LWS_LEADER_ADDRESS``
/ ``LWS_GROUP_SIZE`` / ``LWS_WORKER_INDEX``; Volcano ``VK_TASK_INDEX``; Kthena
``ENTRY_ADDRESS``), ``envFrom`` of a ConfigMap in the same files, and the ``<SERVICE>_PORT``
/ ``<SERVICE>_SERVICE_HOST`` variables the kubelet adds for each Service of the namespace
(``enableServiceLinks``, default true). ``$(VAR)`` in command, args and env values is
expanded from those (Kubernetes' ``expansion.go``: ``$$`` escapes, an unknown name stays as
written: RTC791). Pods are named by their stable DNS names where the workload gives them
(``<lws>-0.<lws>.<ns>``), so a Ray worker's ``--address=$(LWS_LEADER_ADDRESS):6379`` meets its
head.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from rtc.diagnostics import Related, Span, error, note, warning
from rtc.rules import rule
from rtc.scripts.commands import Recognised, recognise
from rtc.scripts.nodes import Unit
from rtc.scripts.shell import Command, Setting, ShellRun, Word, read_shell

UNREADABLE = rule("RTC790", "manifest-unreadable", "error",
                  "A Kubernetes manifest cannot be read.", """
    What: the file is not YAML (or JSON), or a document of it is not a mapping with `kind`.
    Why: `kubectl apply` rejects it too; nothing of it is checked.
    Example: a tab used for indentation, or a Helm template with `{{ }}` not rendered.
    Fix: render the chart (`helm template`) and lint the output.""")
UNDEFINED_VAR = rule("RTC791", "k8s-undefined-variable", "error",
                     "A $(VAR) in a container's command, args or env is defined nowhere.", """
    What: `$(NAME)` in command, args or an env value, where NAME is not an env variable of
    the container defined before it, nor one the workload's operator injects.
    Why: Kubernetes leaves an unknown `$(NAME)` as written, so the process receives the
    literal text `$(NAME)` (e.g. `--dist-init-addr $(LEADER_ADDR):5000`) and fails to
    resolve it, or treats it as a model path.
    Example: `$(LWS_LEADER_ADRESS)` (a typo of LWS_LEADER_ADDRESS).
    Fix: define the variable in `env` above its use, or spell the injected name right.""")
NOT_LIFTED = rule("RTC792", "k8s-pods-not-lifted", "note",
                  "Pods or kinds of the manifests that start nothing rtc reads.", """
    What: pod templates whose containers run no launch rtc recognises (the image's own
    entrypoint, a proxy), and kinds that carry no pod template rtc knows.
    Why: what they start is not checked.
    Example: a KServe predictor that runs the image's default command.
    Fix: nothing; the note lists them.""")
SERVICE_ENV = rule("RTC793", "k8s-service-env-collision", "error",
                   "A Service's name makes the kubelet set a variable the engine reads.", """
    What: a Service named `vllm` in the pods' namespace: the kubelet gives every pod of the
    namespace `VLLM_PORT=tcp://<cluster IP>:<port>` (service links).
    Why: vLLM reads VLLM_PORT as its own port number and stops with "VLLM_PORT ... appears to
    be a URI" (vllm/envs.py, get_vllm_port).
    Example: `kind: Service` `name: vllm` beside the vLLM Deployment.
    Fix: rename the Service (e.g. `vllm-server`), or set `enableServiceLinks: false` in the
    pod spec.""")
ACCELERATORS = rule("RTC794", "k8s-accelerators-vs-launch", "error",
                    "A pod is given fewer NPUs/GPUs than its launch uses.", """
    What: the pod's `huawei.com/Ascend910*` / `nvidia.com/gpu` limit is below the devices
    its launch needs on that pod (tp x pp x local DP, over the nodes it spans).
    Why: the device plugin mounts only that many devices; the engine stops with "World size
    ... is larger than the number of available devices" or an invalid-device error.
    Example: `--tensor-parallel-size 8` with `huawei.com/Ascend910: 4`.
    Fix: request as many devices as the pod's part of the job uses, or lower the sizes.""")
IDLE = rule("RTC799", "k8s-accelerators-idle", "note",
            "A pod is given more NPUs/GPUs than its launches use.", """
    What: the pod's `nvidia.com/gpu` / `huawei.com/Ascend910*` limit is above the devices
    all the launches in it use (tp x pp x local DP of each, over the pods it spans).
    Why: the device plugin reserves every requested device for the pod; the ones no rank
    uses sit idle and no other pod can have them. It usually means a parallel size that
    did not reach the launch: KServe issue 5773, an LLMInferenceService whose
    `spec.parallelism.tensor: 2` never became `--tensor-parallel-size`, so vLLM ran TP 1
    on one of the pod's two GPUs.
    Example: `nvidia.com/gpu: 2` for `vllm serve /mnt/models` without
    `--tensor-parallel-size`.
    Fix: pass the parallel size the devices are for (`--tensor-parallel-size 2`), or
    request only the devices the launch uses. A note: a pod may be given spare devices on
    purpose.""")
REQUEST_LIMIT = rule("RTC795", "k8s-device-request-not-limit", "error",
                     "An NPU/GPU request differs from its limit.", """
    What: `resources.requests` and `resources.limits` give different counts of an extended
    resource (`huawei.com/Ascend910`, `nvidia.com/gpu`).
    Why: extended resources cannot be overcommitted; the API server rejects the pod
    ("must be equal to ... limit").
    Example: requests `nvidia.com/gpu: 4`, limits `nvidia.com/gpu: 8`.
    Fix: give the same count in both (or only the limit).""")
ROCE_MOUNTS = rule("RTC796", "k8s-roce-mounts", "warning",
                   "A pod of a multi-pod Ascend job does not mount what HCCL over RoCE needs.", """
    What: a pod of a job spanning several pods on NPUs mounts neither `/etc/hccn.conf` nor
    the driver (`/usr/local/Ascend/driver`) from the host.
    Why: HCCL reads the NPUs' RoCE addresses from the driver (hccn.conf, hccn_tool); without
    them cross-pod collectives fail at init (vllm-ascend docs kubernetes_pd_disaggregation.md
    mounts both by hostPath).
    Example: an LWS whose pods only request `huawei.com/Ascend910: 8`.
    Fix: add hostPath volumes for /etc/hccn.conf and /usr/local/Ascend/driver.""")
TARGET_PORT = rule("RTC797", "k8s-target-port", "error",
                   "A Service or InferencePool sends traffic to a port the selected pods' engine does not serve.", """
    What: the `targetPort` of a Service (or an InferencePool's target port) selecting the
    pods is not the port their engine listens on (`--port`; vLLM's default 8000, SGLang's
    30000), nor a named container port that maps to it.
    Why: requests reach a closed port: connection refused, and the gateway marks every
    endpoint unhealthy.
    Example: `targetPort: 8000` for pods running `sglang.launch_server` without `--port`.
    Fix: point the target port at the engine's `--port`.""")

SCHEMA = rule("RTC798", "k8s-pod-template-schema", "error",
              "A pod template is not a valid Kubernetes pod template.", """
    What: a pod template (of any workload kind) fails the Kubernetes API schema of a v1
    PodTemplate (kubernetes-validate, strict: unknown fields are errors too).
    Why: the API server (or the operator creating the pods) rejects it, or silently drops
    a misspelt field (`args` written `arg`, `resource` for `resources`), so what runs is
    not what the manifest says.
    Example: `env: [{name: PORT, value: 8000}]` (env values must be strings).
    Fix: correct the field the message names (`kubectl apply --dry-run=server` agrees).""")

RULES = (UNREADABLE, UNDEFINED_VAR, NOT_LIFTED, SERVICE_ENV, ACCELERATORS, REQUEST_LIMIT,
         ROCE_MOUNTS, TARGET_PORT, SCHEMA, IDLE)

#: Extended resources that are accelerators (device plugins of Ascend and NVIDIA;
#: ``huawei.com/ascend-1980`` is the Atlas A3 resource of Huawei Cloud CCE's device plugin,
#: used by vllm-ascend's multi-node e2e manifests and Kthena's examples).
ACCELERATOR_PREFIXES = ("huawei.com/Ascend", "huawei.com/ascend-", "huawei.com/npu",
                        "nvidia.com/gpu")
#: Variables engines read that a Service's links can set: name -> where it is read.
ENGINE_VARS = {"VLLM_PORT": "vllm/envs.py get_vllm_port"}
#: Pods lifted per template at most (a 1,000-replica set is 1,000 copies of one).
MAX_PODS = 64
_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class S(str):
    """A YAML string scalar, with the 1-based line and column where it is written."""

    line: int = 1
    col: int = 1


class I(int):
    """A YAML integer scalar, with the 1-based line and column where it is written."""

    line: int = 1
    col: int = 1


_CONSTRUCT = yaml.constructor.SafeConstructor()


def _compose(node):
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            key = _compose(k)
            out[key if isinstance(key, str) else str(key)] = _compose(v)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_compose(v) for v in node.value]
    if node.tag.endswith(":null") or (node.value in ("", "~", "null") and node.style is None):
        return None
    if node.tag.endswith((":bool", ":float")):
        try:
            return _CONSTRUCT.construct_object(node)
        except (yaml.YAMLError, ValueError):
            pass
    s = S(node.value)
    if node.tag.endswith(":int"):
        try:
            s = I(_CONSTRUCT.construct_yaml_int(node))
        except (yaml.YAMLError, ValueError):
            pass
    s.line, s.col = node.start_mark.line + 1, node.start_mark.column + 1
    s.block = node.style in ("|", ">")
    return s


def _plain(v):
    """``v`` with the located scalars as plain str / int (for the schema validator)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, I):
        return int(v)
    return str(v) if isinstance(v, S) else v


def _get(d, *path):
    for p in path:
        if isinstance(p, int):
            d = d[p] if isinstance(d, list) and 0 <= p < len(d) else None
        else:
            d = d.get(p) if isinstance(d, dict) else None
        if d is None:
            return None
    return d


def _int(v, default: int | None = None) -> int | None:
    try:
        return int(str(v)) if v is not None else default
    except ValueError:
        return default


def _span(label: str, v) -> Span:
    return Span(label, getattr(v, "line", 1), getattr(v, "col", 1))


@dataclass
class PodT:
    """One pod rtc lifts: its name (node), the manifest it came from (label, kind, name,
    namespace), its pod spec, labels, the env its operator injects and its place."""

    name: str
    label: str
    kind: str
    workload: str
    namespace: str
    spec: dict
    labels: dict
    injected: dict
    span: Span
    group_size: int = 1
    #: docker compose ``devices`` (host paths as Words): the container's device files
    devices: list | None = None
    #: whether ``spec`` is a Kubernetes PodSpec (KServe's predictor and compose services
    #: carry other fields: not checked against the PodTemplate schema)
    podspec: bool = True


@dataclass
class Manifests:
    """What the manifests of one lint give beyond the units: the pods, the Services and
    InferencePools (documents), the ConfigMaps (name -> data) and what was not lifted."""

    pods: list = field(default_factory=list)
    services: list = field(default_factory=list)
    pools: list = field(default_factory=list)
    configmaps: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)       # (what, Span)
    unit_pod: dict = field(default_factory=dict)      # id(Unit) -> PodT


def looks_like_manifest(label: str, text: str) -> bool:
    """True for ``.yaml`` / ``.yml`` files and text with top-level ``apiVersion:`` and
    ``kind:`` lines."""
    if label.endswith((".yaml", ".yml")):
        return True
    return bool(re.search(r"(?m)^apiVersion:\s*\S", text)) and \
        bool(re.search(r"(?m)^kind:\s*\S", text))


def read(label: str, text: str, into: Manifests) -> tuple[list[Unit], list]:
    """The units (one per lifted pod) of the manifest ``text`` and its RTC790 errors;
    Services, pools and ConfigMaps are added to ``into``. Never raises for bad input."""
    try:
        docs = [_compose(n) for n in yaml.compose_all(text, Loader=_LOADER) if n is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        span = Span(label, mark.line + 1, mark.column + 1) if mark else Span(label, 1, 1)
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [], [error(UNREADABLE, f"{label} is not valid YAML: {why}", span,
                          hint="check the indentation (spaces, not tabs) and quotes; render "
                               "Helm templates first")]
    except RecursionError:
        return [], [error(UNREADABLE, f"{label} nests too deeply to read", Span(label, 1, 1))]
    diags: list = []
    for doc in _flatten(docs):
        if isinstance(doc, dict) and "kind" not in doc and isinstance(doc.get("services"), dict):
            _compose_file(label, doc["services"], into)
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
            diags.append(error(UNREADABLE, f"a document of {label} is not a Kubernetes object "
                               "(no `kind`)", _span(label, _first_scalar(doc)),
                               hint="each document needs apiVersion, kind and metadata"))
            continue
        _document(label, doc, into)
    units = []
    for pod in [p for p in into.pods if p.label == label]:
        unit = _unit(pod, into)
        if unit is not None:
            into.unit_pod[id(unit)] = pod
            units.append(unit)
    return units, diags


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _flatten(docs: list):
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            yield from d["items"]
        else:
            yield d


def _first_scalar(doc):
    if isinstance(doc, dict):
        return next(iter(doc.values()), None) if doc else None
    if isinstance(doc, list):
        return doc[0] if doc else None
    return doc


def _document(label: str, doc: dict, into: Manifests) -> None:
    kind = str(doc["kind"])
    group = str(doc.get("apiVersion") or "").split("/")[0]
    name = str(_get(doc, "metadata", "name") or kind.lower())
    ns = str(_get(doc, "metadata", "namespace") or "default")
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    where = _span(label, doc["kind"])
    add = _Adder(label, kind, name, ns, into, where)
    if kind == "Service":
        into.services.append((doc, where))
    elif kind == "InferencePool":
        into.pools.append((doc, where))
    elif kind == "ConfigMap":
        data = doc.get("data") if isinstance(doc.get("data"), dict) else {}
        into.configmaps[(ns, name)] = data
    elif kind == "Pod":
        add.pod(name, doc, {})
    elif kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") or \
            (kind == "Job" and group == "batch"):
        add.pod(f"{name}-0", spec.get("template"), {})
    elif kind == "LeaderWorkerSet":
        _lws(add, spec, name, ns)
    elif kind == "Job" and group == "batch.volcano.sh":
        _volcano(add, spec, name)
    elif kind == "ModelServing":
        _kthena(add, spec, name)
    elif kind in ("RayCluster", "RayService", "RayJob"):
        _ray(add, spec.get("rayClusterConfig") or spec.get("rayClusterSpec") or spec, name)
    elif kind == "InferenceService":
        _kserve(add, spec, name)
    elif kind in ("LLMInferenceService", "LLMInferenceServiceConfig"):
        _llmisvc(add, spec, name)
    else:
        into.skipped.append((f"{kind} {name}", where))


class _Adder:
    """Adds the pods of one workload to ``into`` (at most :data:`MAX_PODS` a template)."""

    def __init__(self, label, kind, name, ns, into: Manifests, where: Span):
        self.label, self.kind, self.name, self.ns, self.into = label, kind, name, ns, into
        self.where = where

    def pod(self, pod_name: str, template, injected: dict, size: int = 1) -> None:
        spec = _get(template, "spec") if isinstance(template, dict) and "spec" in template \
            else template
        if not isinstance(spec, dict):
            self.into.skipped.append((f"{self.kind} {self.name} (no pod template)", self.where))
            return
        labels = _get(template, "metadata", "labels") or {}
        self.into.pods.append(PodT(pod_name, self.label, self.kind, self.name, self.ns, spec,
                                   labels if isinstance(labels, dict) else {}, injected,
                                   self.where, size))


def _compose_file(label: str, services: dict, into: Manifests) -> None:
    """Each service of a docker compose file as one pod (compose spec: ``entrypoint`` +
    ``command`` as a list or a string split like a shell, ``environment`` as a map or
    ``A=b`` list, ``devices`` as ``HOST[:CONTAINER]``)."""
    import shlex

    for name, svc in services.items():
        if not isinstance(svc, dict):
            continue
        argv = []
        for key in ("entrypoint", "command"):
            v = svc.get(key)
            if isinstance(v, str):
                try:
                    parts = shlex.split(v)
                except ValueError:
                    parts = v.split()
                argv += [_like(p, v) for p in parts]
            elif isinstance(v, list):
                argv += [x for x in v if isinstance(x, str)]
        env = svc.get("environment")
        pairs = [(k, v, v) for k, v in env.items()] if isinstance(env, dict) else \
            [(*(str(e).partition("=")[::2]), e) for e in env] if isinstance(env, list) else []
        container = {"name": name, "command": argv,
                     "env": [{"name": str(k), "value": _like(str(v or ""), at)}
                             for k, v, at in pairs]}
        devs = svc.get("devices") if isinstance(svc.get("devices"), list) else []
        where = _span(label, name)
        into.pods.append(PodT(str(name), label, "compose service", str(name), "compose",
                              {"containers": [container]}, {}, {}, where,
                              devices=[Word(str(d).split(":")[0], _span(label, d))
                                       for d in devs] or None, podspec=False))


def _like(text: str, at) -> S:
    """``text`` as a scalar located where ``at`` is."""
    s = S(text)
    s.line, s.col = getattr(at, "line", 1), getattr(at, "col", 1)
    return s


def _lws(add: _Adder, spec: dict, name: str, ns: str) -> None:
    lwt = _get(spec, "leaderWorkerTemplate") or {}
    size = max(1, min(_int(_get(lwt, "size"), 1) or 1, MAX_PODS))
    worker = _get(lwt, "workerTemplate")
    leader = _get(lwt, "leaderTemplate") or worker
    lead = f"{name}-0.{name}.{ns}"
    for k in range(size):
        env = {"LWS_LEADER_ADDRESS": lead, "LWS_GROUP_SIZE": str(size),
               "LWS_WORKER_INDEX": str(k), "LWS_GROUP_INDEX": "0"}
        add.pod(lead if k == 0 else f"{name}-0-{k}.{name}.{ns}", leader if k == 0 else worker,
                env, size)


def _volcano(add: _Adder, spec: dict, name: str) -> None:
    tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
    total = sum(max(0, _int(_get(t, "replicas"), 1) or 0) for t in tasks if isinstance(t, dict))
    for t in tasks:
        if not isinstance(t, dict):
            continue
        task = str(t.get("name") or "task")
        for k in range(min(max(0, _int(t.get("replicas"), 1) or 0), MAX_PODS)):
            add.pod(f"{name}-{task}-{k}.{name}", t.get("template"),
                    {"VK_TASK_INDEX": str(k)}, total)


def _kthena(add: _Adder, spec: dict, name: str) -> None:
    roles = _get(spec, "template", "roles")
    for r in roles if isinstance(roles, list) else []:
        if not isinstance(r, dict):
            continue
        role = str(r.get("name") or "role")
        workers = min(max(0, _int(r.get("workerReplicas"), 0) or 0), MAX_PODS)
        entry = f"{name}-0-{role}-0-0"
        env = {"ENTRY_ADDRESS": entry}
        add.pod(entry, r.get("entryTemplate"), env, workers + 1)
        for k in range(workers):
            add.pod(f"{name}-0-{role}-0-{k + 1}", r.get("workerTemplate"), env, workers + 1)


def _ray(add: _Adder, spec: dict, name: str) -> None:
    add.pod(f"{name}-head", _get(spec, "headGroupSpec", "template"), {})
    groups = spec.get("workerGroupSpecs") if isinstance(spec, dict) else None
    for g in groups if isinstance(groups, list) else []:
        if not isinstance(g, dict):
            continue
        gname = str(g.get("groupName") or "workers")
        for k in range(min(max(0, _int(g.get("replicas"), 1) or 0), MAX_PODS)):
            add.pod(f"{name}-{gname}-{k}", g.get("template"), {})


def _kserve(add: _Adder, spec: dict, name: str) -> None:
    pred = spec.get("predictor") if isinstance(spec.get("predictor"), dict) else {}
    podspec = dict(pred)
    if not isinstance(podspec.get("containers"), list) and isinstance(pred.get("model"), dict):
        podspec["containers"] = [pred["model"]]
    add.pod(f"{name}-predictor", podspec, {})
    worker = pred.get("workerSpec")
    if isinstance(worker, dict):
        size = max(1, _int(worker.get("pipelineParallelSize"), 1) or 1)
        for k in range(1, min(size, MAX_PODS)):
            add.pod(f"{name}-predictor-worker-{k}", worker, {}, size)
    for pod in add.into.pods:
        if pod.workload == name and pod.kind == "InferenceService":
            pod.podspec = False     # predictor: PodSpec fields plus KServe's own


def _llmisvc(add: _Adder, spec: dict, name: str) -> None:
    for side, part in (("", spec), ("-prefill", spec.get("prefill"))):
        if not isinstance(part, dict) or not isinstance(part.get("template"), dict):
            continue
        add.pod(f"{name}{side}", part["template"], {})
        if isinstance(part.get("worker"), dict):
            add.pod(f"{name}{side}-worker-1", part["worker"], {})


def _service_env(pod: PodT, into: Manifests) -> dict:
    """The service-link variables the kubelet sets in ``pod`` (name -> (value, Service
    document)), unless the pod spec sets ``enableServiceLinks: false``."""
    if str(pod.spec.get("enableServiceLinks", "true")).lower() == "false":
        return {}
    out = {}
    for doc, _where in into.services:
        ns = str(_get(doc, "metadata", "namespace") or "default")
        sname = _get(doc, "metadata", "name")
        if ns != pod.namespace or not isinstance(sname, str):
            continue
        port = _get(doc, "spec", "ports", 0, "port") or "80"
        var = sname.upper().replace("-", "_")
        out[f"{var}_PORT"] = (f"tcp://<cluster IP of {sname}>:{port}", doc)
        out[f"{var}_SERVICE_HOST"] = (f"<cluster IP of {sname}>", doc)
    return out


def _expand(text: str, env: dict) -> tuple[str, list[str]]:
    """Kubernetes' $(VAR) expansion of ``text`` from ``env`` (name -> value): ``$$`` is
    ``$``; an unknown name stays as written and is returned."""
    missing: list[str] = []

    def one(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        if m.group(1) in env:
            return env[m.group(1)]
        missing.append(m.group(1))
        return m.group(0)

    return _VAR.sub(one, text), missing


def _container_env(pod: PodT, c: dict, into: Manifests, label: str):
    """(name -> Setting, [(name, span)] of undefined $(VAR)s) of container ``c``."""
    values: dict = {k: v for k, (v, _d) in _service_env(pod, into).items()}
    values.update(pod.injected)
    settings = {k: Setting(k, v, pod.span, True) for k, v in values.items()}
    undefined = []
    for ref in c.get("envFrom") if isinstance(c.get("envFrom"), list) else []:
        cm = _get(ref, "configMapRef", "name")
        data = into.configmaps.get((pod.namespace, str(cm))) if cm is not None else None
        for k, v in (data or {}).items():
            values[k] = str(v)
            settings[k] = Setting(k, str(v), _span(label, v), True)
    for e in c.get("env") if isinstance(c.get("env"), list) else []:
        n = _get(e, "name")
        if not isinstance(n, str):
            continue
        if isinstance(e.get("value"), str):
            v, missing = _expand(e["value"], values)
            undefined += [(m, _span(label, e["value"])) for m in missing]
            unresolved = ()
        else:
            field_path = _get(e, "valueFrom", "fieldRef", "fieldPath")
            v, unresolved = f"$({field_path or n})", (str(field_path or n),)
        values[n] = v
        settings[n] = Setting(n, v, _span(label, e.get("value") or n), True, unresolved)
    return settings, undefined


def _unit(pod: PodT, into: Manifests) -> Unit | None:
    """The pod as a unit: each container's launch read as shell (``sh -c`` text) or as
    words (exec form), with the container env; None when the pod has no containers."""
    label = pod.label
    containers = pod.spec.get("containers")
    if not isinstance(containers, list):
        return None
    run = ShellRun(files={})
    found = Recognised()
    pod.undefined = []
    for c in containers:
        if not isinstance(c, dict):
            continue
        env, undefined = _container_env(pod, c, into, label)
        argv = [w for w in (c.get("command") or _entrypoint(c)) + (c.get("args") or [])
                if isinstance(w, str)] if isinstance(c.get("command") or [], list) and \
            isinstance(c.get("args") or [], list) else []
        words = []
        values = {k: s.value for k, s in env.items()}
        for w in argv:
            text, missing = _expand(w, values)
            undefined += [(m, _span(label, w)) for m in missing]
            words.append(Word(text, _span(label, w)))
        pod.undefined += undefined
        commands = _commands(label, words, env, argv)
        run.commands += commands
        run.settings.update(env)
        sub = recognise(commands, _reread(label, env))
        for la in sub.launches:
            la.container = c
            la.accelerators = _container_accelerators(c)
            if pod.devices is not None and la.devices is None:
                la.devices = pod.devices
        found.launches += sub.launches
        for k, v in sub.unknown.items():
            found.unknown.setdefault(k, v)
    unit = Unit(label, "", pod.span.line, pod.name, run, found)
    return unit


def _entrypoint(c: dict) -> list:
    """The command a container without ``command`` runs: its image's ENTRYPOINT, known
    here for vLLM's OpenAI server image (``vllm/vllm-openai``; vLLM docker/Dockerfile, the
    ``vllm-openai`` stage: ``python3 -m vllm.entrypoints.openai.api_server``, later ``vllm
    serve``: both read the container's ``args`` as server flags); else none (the args
    alone, as before)."""
    image, args = c.get("image"), c.get("args")
    if isinstance(args, list) and args and str(args[0]).rsplit("/", 1)[-1] in (
            "vllm", "python", "python3", "sh", "bash"):
        return []           # the args spell out a command of their own
    if isinstance(image, str) and args and \
            image.rsplit("/", 1)[-1].split(":")[0].split("@")[0] == "vllm-openai":
        return ["vllm", "serve"]
    return []


def _commands(label: str, words: list, env: dict, argv: list) -> list[Command]:
    if not words:
        return []
    prog = words[0].text.rsplit("/", 1)[-1]
    if prog in ("sh", "bash") and len(words) >= 3 and words[1].text in ("-c", "-ec", "-xc"):
        raw = argv[2]
        first = getattr(raw, "line", 1) + (1 if getattr(raw, "block", False) else 0)
        # read from line 1 and shifted: read_shell's first_line pads the text with that
        # many blank lines, which a 1,000-document file would parse again for every pod
        inner = read_shell(label, words[2].text, None, env=dict(env))
        return [_shifted(c, first - 1, label) for c in inner.commands]
    return [Command(words, words[0].span, dict(env))]


def _shift_span(span: Span, delta: int, label: str) -> Span:
    if span is None or span.file != label or not delta:
        return span
    return span._replace(line=span.line + delta,
                         end_line=span.end_line + delta if span.end_line else 0)


def _shifted(c: Command, delta: int, label: str) -> Command:
    """``c`` with the spans in ``label`` moved down ``delta`` lines."""
    def setting(x: Setting) -> Setting:
        return Setting(x.name, x.value, _shift_span(x.span, delta, label), x.exported,
                       x.unresolved)

    return Command([Word(w.text, _shift_span(w.span, delta, label), w.unresolved)
                    for w in c.words], _shift_span(c.span, delta, label),
                   {k: setting(v) for k, v in c.env.items()},
                   [setting(x) for x in c.prefix], c.background)


def _reread(label: str, env: dict):
    def reread(word, env2):
        inner = read_shell(label, word.text, None, env=dict(env2))
        for c in inner.commands:
            c.span = word.span
        return inner.commands
    return reread


def check(m: Manifests, lifted_units: list, topo) -> list:
    """RTC791-RTC797 of the manifests ``m`` (read by :func:`read`); ``lifted_units`` the
    units given to the lift (pods with a launch) and ``topo`` the lifted Topology."""
    out = []
    seen = set()
    for pod in m.pods:
        for var, span in getattr(pod, "undefined", []):
            if (var, span) not in seen:
                seen.add((var, span))
                out.append(error(UNDEFINED_VAR, f"$({var}) in {pod.kind} {pod.workload} is "
                                 "defined nowhere: Kubernetes passes the text `$(" + var +
                                 ")` as it is", span, subject=f"pod {pod.name}",
                                 hint=f"define {var} in the container's env before it is "
                                      "used, or correct the name"))
        out += _request_limit(pod)
    out += _schemas(m)
    pods = {m.unit_pod[id(u)].name: m.unit_pod[id(u)] for u in lifted_units
            if id(u) in m.unit_pod}
    out += _service_links(m, lifted_units)
    out += _accelerators(pods, topo)
    out += _roce(pods, topo)
    out += _target_ports(m, lifted_units)
    return out


def _schemas(m: Manifests) -> list:
    """RTC798 for each distinct pod template (compose services are not Kubernetes): the
    first schema error of each, at the template's workload; templates with the same
    content are validated once (a 1,000-replica bundle repeats a few). Without
    kubernetes-validate (the ``k8s`` extra) one RTC005 error instead."""
    import json

    from rtc.extras import MissingExtra, kubernetes_validate

    if any(pod.podspec for pod in m.pods):
        try:
            kubernetes_validate("checking Kubernetes pod templates (rtc lint)")
        except MissingExtra as exc:
            return [exc.diagnostic]
    out, seen = [], {}
    for pod in m.pods:
        if not pod.podspec or id(pod.spec) in seen:
            continue
        key = json.dumps(_plain(pod.spec), sort_keys=True, default=str)
        problem = seen.get(key)
        if key not in seen:
            problem = seen[key] = _template_problem(_plain(pod.spec))
        seen[id(pod.spec)] = problem
        if problem is not None:
            path, message = problem
            out.append(error(SCHEMA, f"{pod.kind} {pod.workload}: pod template "
                             f"{'/'.join(map(str, path)) or '(spec)'}: {message}",
                             _span(pod.label, _at(pod.spec, path)), subject=f"pod {pod.name}",
                             hint="correct the field (kubectl apply --dry-run=server shows "
                                  "the same)"))
    return out


def _template_problem(spec: dict):
    """(path inside the pod spec, message) of the first schema error, or None."""
    import kubernetes_validate  # installed: _schemas checked

    from rtc.plan.kubernetes import FACTS

    doc = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
           "template": {"spec": spec}}
    try:
        kubernetes_validate.validate(doc, FACTS["k8s_version"].value, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return list(exc.path)[2:], exc.message
    except Exception:  # noqa: BLE001 - the validator's own failure is no finding
        return None
    return None


def _at(spec, path):
    """The deepest located value along ``path`` in ``spec`` (for the finding's line)."""
    best, node = None, spec
    for p in path:
        node = _get(node, p) if isinstance(p, (int, str)) else None
        if node is None:
            break
        if hasattr(node, "line"):
            best = node
        elif isinstance(node, dict) and node:
            best = next((v for v in node.values() if hasattr(v, "line")), best)
    return best


def not_lifted_note(m: Manifests, idle: list) -> list:
    """The RTC792 note of skipped kinds and of pods (``idle`` units) that start nothing."""
    items = [(what, span) for what, span in m.skipped] + \
        [(f"pod {u.given_name}", m.unit_pod[id(u)].span) for u in idle if id(u) in m.unit_pod]
    if not items:
        return []
    shown = ", ".join(w for w, _ in items[:6]) + (f" and {len(items) - 6} more"
                                                  if len(items) > 6 else "")
    return [note(NOT_LIFTED, f"not checked (no pod template rtc knows, or no launch rtc "
                 f"reads in its containers): {shown}", items[0][1],
                 hint="what they start is not linted")]


def _containers(pod: PodT) -> list[dict]:
    """The pod's containers that are mappings (a malformed entry is skipped)."""
    cs = pod.spec.get("containers")
    return [c for c in cs if isinstance(c, dict)] if isinstance(cs, list) else []


def _accelerator_counts(res) -> dict:
    if not isinstance(res, dict):
        return {}
    return {str(k): v for k, v in res.items() if str(k).startswith(ACCELERATOR_PREFIXES)}


def _request_limit(pod: PodT) -> list:
    out = []
    for c in _containers(pod):
        req = _accelerator_counts(_get(c, "resources", "requests"))
        lim = _accelerator_counts(_get(c, "resources", "limits"))
        for k, v in req.items():
            if k in lim and _int(v) != _int(lim[k]):
                out.append(error(REQUEST_LIMIT, f"pod {pod.name}: requests {k}: {v} but "
                                 f"limits {k}: {lim[k]}; extended resources cannot be "
                                 "overcommitted and the API server rejects the pod",
                                 _span(pod.label, v), subject=f"pod {pod.name}",
                                 related=[Related(_span(pod.label, lim[k]), "the limit")],
                                 hint=f"give {k} the same count in requests and limits"))
    return out


def _container_accelerators(c: dict) -> int | None:
    """The NPUs/GPUs container ``c`` is given: its accelerator limits (else requests)
    summed; None when it names none."""
    res = _get(c, "resources")
    counts = _accelerator_counts(_get(res, "limits")) or _accelerator_counts(_get(res, "requests"))
    found = [n for n in (_int(v) for v in counts.values()) if n is not None]
    return sum(found) if found else None


def _pod_accelerators(pod: PodT) -> tuple[int | None, object]:
    total, where = None, None
    for c in _containers(pod):
        res = _get(c, "resources")
        counts = _accelerator_counts(_get(res, "limits")) or \
            _accelerator_counts(_get(res, "requests"))
        for _k, v in counts.items():
            n = _int(v)
            if n is not None:
                total, where = (total or 0) + n, where or v
    return total, where


def _accelerators(pods: dict, topo) -> list:
    out = []
    for job in topo.jobs if topo is not None else []:
        for p in job.placements:
            pod = pods.get(p.server.name)
            have, where = _pod_accelerators(pod) if pod is not None else (None, None)
            if have is not None and have < len(p.device_ids):
                out.append(error(ACCELERATORS, f"pod {pod.name} is given {have} device"
                                 f"{'s' if have != 1 else ''} but its launch of job {job.name} "
                                 f"uses {len(p.device_ids)} on it (tp {job.tp} x pp {job.pp}"
                                 f" x dp {job.dp} over {len(job.placements)} pod"
                                 f"{'s' if len(job.placements) != 1 else ''})",
                                 _span(pod.label, where), subject=f"pod {pod.name}",
                                 related=[Related(p.span, "the launch")],
                                 hint=f"request {len(p.device_ids)} devices per pod, or lower "
                                      "the parallel sizes"))
    return out + _idle(pods, topo)


def _idle(pods: dict, topo) -> list:
    """RTC799 for each pod whose accelerator limit is above what all its launches use."""
    used: dict = {}
    for job in topo.jobs if topo is not None else []:
        for p in job.placements:
            used.setdefault(p.server.name, []).append((job, p))
    out = []
    for name, placed in used.items():
        pod = pods.get(name)
        have, where = _pod_accelerators(pod) if pod is not None else (None, None)
        need = sum(len(p.device_ids) for _job, p in placed)
        if have is None or have <= need:
            continue
        job, p = placed[0]
        out.append(note(IDLE, f"pod {pod.name} is given {have} devices but its launch of "
                           f"job {job.name} uses {need} of them (tp {job.tp} x pp {job.pp} x "
                           f"dp {job.dp}): {have - need} sit idle", _span(pod.label, where),
                           subject=f"pod {pod.name}", related=[Related(p.span, "the launch")],
                           hint=f"pass the parallel size meant for {have} devices to the "
                                f"launch, or request {need}"))
    return out


def _host_paths(pod: PodT) -> list[str]:
    vols = pod.spec.get("volumes") if isinstance(pod.spec.get("volumes"), list) else []
    return [str(_get(v, "hostPath", "path")) for v in vols if _get(v, "hostPath", "path")]


def _roce(pods: dict, topo) -> list:
    out = []
    for job in topo.jobs if topo is not None else []:
        if topo.preset.is_gpu or len(job.placements) < 2:
            continue
        for p in job.placements:
            pod = pods.get(p.server.name)
            if pod is None:
                continue
            paths = _host_paths(pod)
            if not any(x.startswith(("/etc/hccn.conf", "/usr/local/Ascend/driver"))
                       for x in paths):
                out.append(warning(ROCE_MOUNTS, f"pod {pod.name} of job {job.name} (over "
                                   f"{len(job.placements)} pods on NPUs) mounts neither "
                                   "/etc/hccn.conf nor /usr/local/Ascend/driver from the host",
                                   pod.span, subject=f"pod {pod.name}",
                                   hint="add hostPath volumes for /etc/hccn.conf and "
                                        "/usr/local/Ascend/driver (HCCL's RoCE set-up)"))
                break
    return out


def _service_links(m: Manifests, units: list) -> list:
    out, seen = [], set()
    for u in units:
        pod = m.unit_pod.get(id(u))
        if pod is None or not any(la.kind == "vllm" for la in u.found.launches):
            continue
        for var, (_value, doc) in _service_env(pod, m).items():
            if var in ENGINE_VARS and id(doc) not in seen:
                seen.add(id(doc))
                name = _get(doc, "metadata", "name")
                out.append(error(SERVICE_ENV, f"Service {name} makes the kubelet set {var}="
                                 f"tcp://... in pod {pod.name}, which vLLM reads as its own "
                                 f"port ({ENGINE_VARS[var]})", _span(pod.label, name),
                                 subject=f"Service {name}",
                                 related=[Related(pod.span, f"pod {pod.name}")],
                                 hint="rename the Service (e.g. vllm-server) or set "
                                      "enableServiceLinks: false in the pod spec"))
    return out


_DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000}


def _engine_ports(u) -> set:
    return {_int(la.value("--port"), _DEFAULT_PORTS[la.kind]) for la in u.found.launches
            if la.kind in _DEFAULT_PORTS}


def _named_ports(pod: PodT) -> dict:
    out = {}
    for c in _containers(pod):
        for p in c.get("ports") if isinstance(c.get("ports"), list) else []:
            if isinstance(p, dict) and p.get("name") is not None:
                out[str(p["name"])] = _int(p.get("containerPort"))
    return out


def _targets(doc: dict) -> tuple[dict, list]:
    """(selector, [target port values]) of a Service or InferencePool document."""
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    sel = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    if isinstance(sel.get("matchLabels"), dict):
        sel = sel["matchLabels"]
    if doc.get("kind") == "Service":
        ports = spec.get("ports") if isinstance(spec.get("ports"), list) else []
        return sel, [p.get("targetPort", p.get("port")) for p in ports if isinstance(p, dict)]
    tps = spec.get("targetPorts") if isinstance(spec.get("targetPorts"), list) else []
    return sel, [spec.get("targetPortNumber")] if spec.get("targetPortNumber") is not None \
        else [_get(t, "number") for t in tps]


def _target_ports(m: Manifests, units: list) -> list:
    out = []
    for doc, _where in m.services + m.pools:
        sel, targets = _targets(doc)
        if not sel or not targets:
            continue
        chosen = [u for u in units if id(u) in m.unit_pod and _engine_ports(u) and
                  all(str(m.unit_pod[id(u)].labels.get(k)) == str(v) for k, v in sel.items())]
        if not chosen:
            continue
        for t in targets:
            if t is None:
                continue
            for u in chosen:
                pod = m.unit_pod[id(u)]
                port = _named_ports(pod).get(str(t)) if _int(t) is None else _int(t)
                serves = _engine_ports(u)
                if port not in serves:
                    name = _get(doc, "metadata", "name")
                    out.append(error(TARGET_PORT, f"{doc.get('kind')} {name} sends to port "
                                     f"{t} of pod {pod.name}, whose engine serves "
                                     f"{', '.join(map(str, sorted(serves)))}",
                                     _span(pod.label, t), subject=f"{doc.get('kind')} {name}",
                                     related=[Related(u.found.launches[0].span, "the launch")],
                                     hint=f"use target port {min(serves)} (the engine's "
                                          "--port)"))
                    break
    return out


__all__ = ["RULES", "Manifests", "PodT", "looks_like_manifest", "read", "check",
           "not_lifted_note"]
