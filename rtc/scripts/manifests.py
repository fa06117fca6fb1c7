"""Kubernetes manifests as a front end of ``rtc lint``: the pods a workload starts, each read
as one node (its containers' command, args and env, as the kubelet would run them), lifted
with the scripts' rules, plus the rules only a manifest can break (RTC790-RTC797).

Where each workload kind keeps its pod templates (read in each API's types / CRD schema):

==========================================  ===========================================  ==========
kind (group)                                pod templates                                 pods lifted
==========================================  ===========================================  ==========
``Pod`` (v1)                                ``spec``                                      1
``Deployment`` / ``ReplicaSet`` /           ``spec.template.spec``                        1 (the
``DaemonSet`` (apps/v1), ``Job`` (batch/v1)                                               replicas are
                                                                                          copies)
``StatefulSet`` (apps/v1)                   ``spec.template.spec``                        ``replicas``
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
``ENTRY_ADDRESS``), ``HOSTNAME`` where the pod's name is stable (StatefulSet, LWS, Volcano),
the downward API's ``metadata.name`` / ``metadata.namespace`` / ``metadata.labels['KEY']``
(with the labels the controller adds: a StatefulSet's ``apps.kubernetes.io/pod-index``,
LWS's ``leaderworkerset.sigs.k8s.io/*``), ``envFrom`` of a ConfigMap in the same files, and the ``<SERVICE>_PORT``
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
from rtc.scripts.shell import Command, Setting, ShellRun, Word, known_arithmetic, read_shell

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
    Not checked: a headless Service (`clusterIP: None`), which proxies nothing: its name
    resolves to the pods' own addresses and clients dial the pods' ports directly
    (Kubernetes docs, concepts/services-networking/service, "Headless Services": no
    cluster IP, kube-proxy does not handle it, no load balancing or proxying), so its
    ports may list any port of the pods (a dist-init port, say).
    Fix: point the target port at the engine's `--port`.""")

UNKNOWN_HOST = rule("RTC789", "k8s-address-names-no-pod", "error",
                    "A launch's address names no pod or Service of the manifests.", """
    What: a master / rendezvous address (`--master_addr`, `--dist-init-addr`,
    `--data-parallel-address`, `ray start --address`) is a cluster DNS name
    `HOST.SUBDOMAIN` whose subdomain is a headless Service of the manifests (a Volcano
    Job's, a LeaderWorkerSet's, a StatefulSet's serviceName, a Service) but whose host is
    none of its pods (`<job>-<task>-<index>`, `<lws>-0`, `<sts>-<ordinal>`).
    Why: the name does not resolve; every node waits for a rendezvous that never comes
    (torch.distributed's "failed to resolve" / a timeout), the job never starts.
    Example: `--master_addr mindspeed-pretrain-mastr-0.mindspeed-pretrain` for the pod
    `mindspeed-pretrain-master-0`.
    Fix: write the pod's name as the controller gives it (the message names the closest).""")
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
         ROCE_MOUNTS, TARGET_PORT, SCHEMA, IDLE, UNKNOWN_HOST)

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


class _AliasBomb(Exception):
    """Aliases expand the document past its budget of nodes (see :func:`_compose`)."""


def _compose(node, budget: list[int]):
    """The plain value of the YAML ``node`` (dicts, lists, located scalars). Aliases are
    expanded, each expansion counted against ``budget`` (a one-item list, nodes left):
    a document without aliases has fewer nodes than characters, so a budget of its
    length plus 100,000 only stops alias bombs ("billion laughs": nine anchors of nine
    aliases are 387 million nodes from 300 bytes). ``budget[1]``, when given, is the
    document's text (for a block scalar's indentation). Raises :class:`_AliasBomb`."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _AliasBomb
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            key = _compose(k, budget)
            out[key if isinstance(key, str) else str(key)] = _compose(v, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_compose(v, budget) for v in node.value]
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
    s.indent = _block_indent(node, budget[1] if len(budget) > 1 else None) if s.block else 0
    # a quoted scalar with escaped line ends on one source line (JSON's "a\\nb")
    s.flat = not s.block and node.end_mark.line == node.start_mark.line and "\n" in node.value
    return s


#: A block scalar's first non-blank line after its ``|`` / ``>`` header: its indentation.
_FIRST_LINE = re.compile(r"\n(?:[ \t]*\n)*( *)\S")


def _block_indent(node, src) -> int:
    """The indentation (in columns) of a block scalar's text: the blanks before its first
    non-blank line, which YAML removes from every line (0 when the source is not known)."""
    start, end = (getattr(mk, "index", None) for mk in (node.start_mark, node.end_mark))
    if not isinstance(src, str) or not isinstance(start, int) or not isinstance(end, int):
        return 0
    m = _FIRST_LINE.search(src, start, end + 1)
    return len(m.group(1)) if m else 0


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
    #: whether ``name`` is the pod's real name (a Deployment's pods get random suffixes)
    stable: bool = True
    #: the headless Service the pod's DNS name is under (StatefulSet ``serviceName``)
    subdomain: str = ""


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
    """True for ``.yaml`` / ``.yml`` files, text with top-level ``apiVersion:`` and
    ``kind:`` lines, and JSON that is a Kubernetes object or a list of them
    (:func:`json_kind`: ``kubectl get -o json`` output; YAML reads JSON, so the reader and
    its locations are the same)."""
    if label.endswith((".yaml", ".yml")):
        return True
    if json_kind(label, text) == "manifest":
        return True
    return bool(re.search(r"(?m)^apiVersion:\s*\S", text)) and \
        bool(re.search(r"(?m)^kind:\s*\S", text))


def _is_object(doc) -> bool:
    """Whether ``doc`` (parsed JSON) is a Kubernetes object with ``apiVersion`` and ``kind``,
    or a ``List`` / JSON array of them."""
    if isinstance(doc, list):
        return bool(doc) and all(_is_object(d) for d in doc)
    return isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and \
        isinstance(doc.get("kind"), str)


def json_kind(label: str, text: str) -> str | None:
    """What JSON ``text`` is: ``"manifest"`` (a Kubernetes object / List / array of them, or
    a ``.json`` file naming ``"apiVersion"`` and ``"kind"`` that does not parse: the YAML
    reader then says where), ``"json"`` (other JSON: a ``.json`` file, or text starting
    with ``{`` / ``[`` that parses as JSON), None (not JSON: read as shell, where ``{ a;
    }`` and ``[ -f x ]`` are commands)."""
    import json

    body = text.lstrip("\ufeff \t\r\n")
    named = label.lower().endswith(".json")
    if body[:1] not in ("{", "["):
        return "json" if named and body else None
    try:
        doc = json.loads(body)
    except RecursionError:
        return "json"
    except ValueError:
        if named and '"apiVersion"' in body and '"kind"' in body:
            return "manifest"
        return "json" if named else None
    return "manifest" if _is_object(doc) else "json"


def read(label: str, text: str, into: Manifests) -> tuple[list[Unit], list]:
    """The units (one per lifted pod) of the manifest ``text`` and its RTC790 errors;
    Services, pools and ConfigMaps are added to ``into``. Never raises for bad input."""
    if json_kind(label, text) == "manifest":
        text = text.replace("\t", " ")    # JSON's tab indentation; a tab in a string is \\t
    try:
        budget = [len(text) + 100_000, text]
        docs = [_compose(n, budget) for n in yaml.compose_all(text, Loader=_LOADER)
                if n is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        span = Span(label, mark.line + 1, mark.column + 1) if mark else Span(label, 1, 1)
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [], [error(UNREADABLE, f"{label} is not valid YAML: {why}", span,
                          hint="check the indentation (spaces, not tabs) and quotes; render "
                               "Helm templates first")]
    except RecursionError:
        return [], [error(UNREADABLE, f"{label} nests too deeply to read", Span(label, 1, 1))]
    except _AliasBomb:
        return [], [error(UNREADABLE, f"{label}'s YAML aliases expand to more than "
                          f"{len(text) + 100_000:,} nodes (an alias bomb?); not read",
                          Span(label, 1, 1),
                          hint="write the values out instead of nesting *aliases of "
                               "aliases; the Kubernetes API server refuses excessive "
                               "aliasing too (CVE-2019-11253)")]
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
    """The objects of ``docs`` (parsed documents): a ``kind: List``'s ``items`` and a JSON
    array's elements (``[{...}, {...}]``, as :func:`json_kind` accepts) are opened, nested
    ones too; an empty list (``[]``: an empty playbook, as ``rtc compile --target ansible``
    writes for a plan without jobs) holds nothing; anything else is yielded as it is (a
    non-object is then RTC790)."""
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            yield from _flatten(d["items"])
        elif isinstance(d, list):
            yield from _flatten(d)
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
    elif kind == "StatefulSet":
        _statefulset(add, spec, name, ns)
    elif kind in ("Deployment", "ReplicaSet", "DaemonSet") or \
            (kind == "Job" and group == "batch"):
        add.pod(f"{name}-0", spec.get("template"), {}, stable=False)
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

    def pod(self, pod_name: str, template, injected: dict, size: int = 1,
            labels: dict | None = None, stable: bool = True) -> None:
        """Adds the pod ``pod_name`` of ``template`` with the env ``injected`` and, over the
        template's labels, the ``labels`` its controller sets."""
        spec = _get(template, "spec") if isinstance(template, dict) and "spec" in template \
            else template
        if not isinstance(spec, dict):
            what = (f"{self.kind} {self.name} (no pod template)", self.where)
            if what not in self.into.skipped:
                self.into.skipped.append(what)
            return
        own = _get(template, "metadata", "labels") or {}
        own = {**(own if isinstance(own, dict) else {}), **(labels or {})}
        self.into.pods.append(PodT(pod_name, self.label, self.kind, self.name, self.ns, spec,
                                   own, injected, self.where, size, stable=stable))


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


def _statefulset(add: _Adder, spec: dict, name: str, ns: str) -> None:
    """One pod per replica (at most :data:`MAX_PODS`), named ``<name>-<ordinal>`` from
    ``spec.ordinals.start`` (default 0): the StatefulSet controller's names (kubernetes
    pkg/controller/statefulset/stateful_set_utils.go, getPodName), its hostname and so
    its ``HOSTNAME`` (``${HOSTNAME##*-}`` is the ordinal), with the labels it adds:
    ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index`` (the
    PodIndexLabel feature, beta and on by default since Kubernetes 1.28)."""
    replicas = max(0, min(_int(spec.get("replicas"), 1) or 0, MAX_PODS))
    start = max(0, _int(_get(spec, "ordinals", "start"), 0) or 0)
    for k in range(start, start + replicas):
        pod = f"{name}-{k}"
        add.pod(pod, spec.get("template"), {"HOSTNAME": pod}, replicas,
                {"statefulset.kubernetes.io/pod-name": pod, "apps.kubernetes.io/pod-index": str(k)})
        if add.into.pods and add.into.pods[-1].name == pod and spec.get("serviceName"):
            add.into.pods[-1].subdomain = str(spec["serviceName"])


#: Labels the LWS controller gives each pod of a group (kubernetes-sigs/lws,
#: api/leaderworkerset/v1/leaderworkerset_types.go at 024af084: SetNameLabelKey,
#: GroupIndexLabelKey, WorkerIndexLabelKey, GroupUniqueHashLabelKey; the group key is a
#: hash of the leader pod's namespace and name, stood for here by ``<ns>/<leader>``).
LWS_LABELS = ("leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/group-index",
              "leaderworkerset.sigs.k8s.io/worker-index", "leaderworkerset.sigs.k8s.io/group-key")


def _lws(add: _Adder, spec: dict, name: str, ns: str) -> None:
    """The first group of a LeaderWorkerSet: ``size`` pods, the leader ``<name>-0`` and the
    workers ``<name>-0-<k>``, in the headless Service ``<name>`` (their DNS names), with
    the env (LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX) and labels
    (:data:`LWS_LABELS`) the LWS controller sets."""
    lwt = _get(spec, "leaderWorkerTemplate") or {}
    size = max(1, min(_int(_get(lwt, "size"), 1) or 1, MAX_PODS))
    worker = _get(lwt, "workerTemplate")
    leader = _get(lwt, "leaderTemplate") or worker
    lead = f"{name}-0.{name}.{ns}"
    for k in range(size):
        host = f"{name}-0" if k == 0 else f"{name}-0-{k}"
        env = {"LWS_LEADER_ADDRESS": lead, "LWS_GROUP_SIZE": str(size),
               "LWS_WORKER_INDEX": str(k), "LWS_GROUP_INDEX": "0", "HOSTNAME": host}
        labels = dict(zip(LWS_LABELS, (name, "0", str(k), f"{ns}/{name}-0")))
        add.pod(f"{host}.{name}.{ns}", leader if k == 0 else worker, env, size, labels)


def _volcano(add: _Adder, spec: dict, name: str) -> None:
    tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
    total = sum(max(0, _int(_get(t, "replicas"), 1) or 0) for t in tasks if isinstance(t, dict))
    for t in tasks:
        if not isinstance(t, dict):
            continue
        task = str(t.get("name") or "task")
        for k in range(min(max(0, _int(t.get("replicas"), 1) or 0), MAX_PODS)):
            add.pod(f"{name}-{task}-{k}.{name}", t.get("template"),
                    {"VK_TASK_INDEX": str(k), "HOSTNAME": f"{name}-{task}-{k}"}, total)


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
            v = _downward(pod, str(field_path)) if field_path is not None else None
            v, unresolved = (v, ()) if v is not None else \
                (f"$({field_path or n})", (str(field_path or n),))
        values[n] = v
        settings[n] = Setting(n, v, _span(label, e.get("value") or n), True, unresolved)
    return settings, undefined


_LABEL_REF = re.compile(r"metadata\.labels\[['\"]([^'\"]+)['\"]\]\Z")


def _downward(pod: PodT, field_path: str) -> str | None:
    """The value of the downward API ``fieldRef`` ``field_path`` that is known before the
    pod runs: ``metadata.name`` (its hostname), ``metadata.namespace`` and
    ``metadata.labels['KEY']`` of a label the template or the controller gives (a
    StatefulSet's ``apps.kubernetes.io/pod-index``); None for the others (``status.podIP``,
    ``spec.nodeName``)."""
    if field_path == "metadata.name":
        return pod.name.split(".")[0] if pod.stable else None
    if field_path == "metadata.namespace":
        return pod.namespace
    m = _LABEL_REF.match(field_path)
    if m and m.group(1) in pod.labels:
        return str(pod.labels[m.group(1)])
    return None


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
        text = known_arithmetic(words[2].text, {k: getattr(v, "value", v)
                                                 for k, v in env.items()})
        inner = read_shell(label, text, None, env=dict(env))
        if getattr(raw, "flat", False):     # every line of the text is on the scalar's line
            return [_shifted(c, lambda sp: _pin_span(sp, raw, label)) for c in inner.commands]
        indent = getattr(raw, "indent", 0)
        return [_shifted(c, lambda sp: _shift_span(sp, first - 1, label, indent))
                for c in inner.commands]
    return [Command(words, words[0].span, dict(env))]


def _shift_span(span: Span, delta: int, label: str, indent: int = 0) -> Span:
    """``span`` of a script read from line 1, moved ``delta`` lines down and ``indent``
    columns right (a block scalar's text is indented in its file)."""
    if span is None or span.file != label or not (delta or indent):
        return span
    return span._replace(line=span.line + delta,
                         end_line=span.end_line + delta if span.end_line else 0,
                         column=span.column + indent,
                         end_column=span.end_column + indent if span.end_column else 0)


def _pin_span(span: Span, at, label: str) -> Span:
    """``span`` (in ``label``) placed at the scalar ``at``: its text's lines are escaped
    line ends of one source line, so no finer place is known."""
    if span is None or span.file != label:
        return span
    return Span(label, getattr(at, "line", 1), getattr(at, "col", 1))


def _shifted(c: Command, move) -> Command:
    """``c`` with each span moved by ``move`` (Span -> Span)."""
    def setting(x: Setting) -> Setting:
        return Setting(x.name, x.value, move(x.span), x.exported, x.unresolved)

    return Command([Word(w.text, move(w.span), w.unresolved)
                    for w in c.words], move(c.span),
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
    out += _unknown_hosts(m, lifted_units)
    return out


#: The flags whose value is the address of a job's master / rendezvous / head.
_ADDRESS_FLAGS = ("--master_addr", "--master-addr", "--dist-init-addr",
                  "--data-parallel-address", "--address")


def _dns_names(m: Manifests) -> tuple[dict, set]:
    """({subdomain: {pod hostnames under it}}, {Service names}) of the manifests."""
    under: dict = {}
    for pod in m.pods:
        host, _, rest = pod.name.partition(".")
        sub = rest.split(".")[0] or pod.subdomain
        if sub:
            under.setdefault(sub, set()).add(host)
    services = {str(_get(doc, "metadata", "name")) for doc, _w in m.services}
    return under, services


def _closest(name: str, hosts: set, order: dict) -> list[str]:
    """[the host of ``hosts`` most like ``name``] (difflib ratio >= 0.6, as
    ``difflib.get_close_matches``), or []; among equally close hosts the one whose pod
    comes first in ``order`` (node rank 0's: the leader, the first ordinal), where
    get_close_matches would take the lexicographically last."""
    import difflib

    best, score = None, 0.6
    for host in sorted(hosts, key=lambda h: (order.get(h, len(order)), h)):
        r = difflib.SequenceMatcher(None, name, host).ratio()
        if r > score or (best is None and r >= score):
            best, score = host, r
    return [best] if best is not None else []


def _unknown_hosts(m: Manifests, units: list) -> list:
    """RTC789 for each address ``HOST.SUB[...]`` whose ``SUB`` is a subdomain of the
    manifests' pods but ``HOST`` none of its pods nor a Service (once per value)."""
    under, services = _dns_names(m)
    order = {}
    for pod in m.pods:      # the controllers add node rank 0's pod (leader, first ordinal) first
        order.setdefault(pod.name.partition(".")[0], len(order))
    out, seen = [], set()
    for u in units:
        for la in u.found.launches if id(u) in m.unit_pod else []:
            for flag in _ADDRESS_FLAGS:
                f = la.flags.get(flag)
                text = str(f.value or "") if f is not None else ""
                host = text.rsplit(":", 1)[0] if text.count(":") == 1 else text
                first, _, rest = host.partition(".")
                sub = rest.split(".")[0]
                if not sub or "$" in host or sub not in under or first in under[sub] or \
                        first in services or (text, f.span) in seen:
                    continue
                seen.add((text, f.span))
                near = _closest(first, under[sub], order)
                out.append(error(UNKNOWN_HOST, f"{flag} {text}: {first} is no pod of "
                                 f"{sub} (its pods: {', '.join(sorted(under[sub])[:4])}"
                                 f"{', ...' if len(under[sub]) > 4 else ''})"
                                 + (f"; did you mean {near[0]}.{rest}?" if near else ""),
                                 f.value_span or f.span, subject=u.given_name,
                                 hint=f"name the pod as its controller does"
                                      + (f": {near[0]}.{rest}" if near else "")))
    return out


def _schemas(m: Manifests) -> list:
    """RTC798 for each distinct pod template (compose services are not Kubernetes): the
    first schema error of each, at the template's workload; templates with the same
    content are validated once (a 1,000-replica bundle repeats a few). Without
    kubernetes-validate (the ``k8s`` extra) one RTC006 error instead."""
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


def accelerator_kinds(kube: "Manifests") -> set[str]:
    """``{"gpu"}`` / ``{"npu"}`` (or both) for the device plugin resources the pods of
    ``kube`` ask for: ``nvidia.com/gpu`` (NVIDIA's device plugin), ``huawei.com/*``
    (Ascend's) - what the hardware is, as a Slurm header's ``--gres`` says it."""
    out = set()
    for pod in kube.pods:
        for c in _containers(pod):
            for part in ("limits", "requests"):
                for name in _accelerator_counts(_get(c, "resources", part)):
                    out.add("gpu" if name.startswith("nvidia.com/") else "npu")
    return out


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


def _headless(doc: dict) -> bool:
    """Whether ``doc`` is a headless Service (``spec.clusterIP: None``): DNS names for the
    selected pods, no proxy, so no target port to check (Kubernetes docs,
    concepts/services-networking/service, "Headless Services")."""
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    return doc.get("kind") == "Service" and spec.get("clusterIP") == "None"


def _target_ports(m: Manifests, units: list) -> list:
    out = []
    for doc, _where in m.services + m.pools:
        if _headless(doc):
            continue
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


__all__ = ["accelerator_kinds", "RULES", "Manifests", "PodT", "looks_like_manifest", "json_kind", "read", "check",
           "not_lifted_note"]
