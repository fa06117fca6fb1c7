"""``--target k8s``: the preflight as an Indexed Job, one pod on each server of the plan
(text in, text out; written beside the LeaderWorkerSets by ``rtc compile --target k8s``).

``preflight-job.yaml`` holds ConfigMaps ``rtc-preflight-scripts-K`` (the servers'
``preflight-<server>.sh``, split so that none exceeds the 1 MiB a ConfigMap may hold) and
a ``batch/v1`` Job with ``completionMode: Indexed``, ``completions`` = ``parallelism`` =
the number of servers; required node affinity on ``kubernetes.io/hostname`` (node names
= rtc server names, as for the LeaderWorkerSets) and pod anti-affinity on the same key put
one pod on each server. A pod runs the script of the node it landed on (``$NODE_NAME``,
downward API ``spec.nodeName``) with the host network (the host's
``ip_local_reserved_ports``), the server's NPUs / GPUs from the device plugin and the
driver's host paths (:data:`rtc.plan.kubernetes.HOST_MOUNTS`), then prints its results
folder in the log format of :mod:`rtc.preflight.stream` and exits 0 (a failed check is a
finding, not a failed pod). Collect and judge::

    kubectl logs -l job-name=rtc-preflight --tail=-1 --prefix \\
        --max-log-requests=N > preflight.log
    rtc preflight report preflight.log

Job fields: Kubernetes docs, "Jobs" (Indexed completion mode, ``JOB_COMPLETION_INDEX``,
``backoffLimit``, ``ttlSecondsAfterFinished``); validated with kubernetes-validate.
"""

from __future__ import annotations

import json

from rtc.emit.kubernetes import manifest_problems, render
from rtc.plan.fleet import RESULTS_DIR, FleetPlan
from rtc.plan.kubernetes import HOST_MOUNTS, fact
from rtc.preflight.stream import DUMP

NAME = "rtc-preflight"
FILE = "preflight-job.yaml"
SCRIPTS_DIR = "/rtc"
#: The start of the header line saying how to judge the Job's logs.
JUDGE = "# When it completes: "
#: bytes of scripts per ConfigMap, below the 1 MiB limit with room for keys and metadata
_CHUNK = 900 * 1024

_POD_SCRIPT = f"""\
server="$NODE_NAME"
script={SCRIPTS_DIR}/preflight-$server.sh
if [ ! -f "$script" ]; then
  echo "rtc preflight: node $server is not a server of the plan" >&2
  exit 2
fi
results=/tmp/{RESULTS_DIR}/$server
bash "$script" "$results" >&2 || echo "rtc preflight: $server: the script exited $?" >&2
{DUMP}
"""


def _chunks(scripts: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The scripts grouped into ConfigMap data maps of at most :data:`_CHUNK` bytes each."""
    out: list[dict[str, str]] = [{}]
    size = 0
    for name, text in scripts:
        n = len(text.encode())
        if out[-1] and size + n > _CHUNK:
            out.append({})
            size = 0
        out[-1][name] = text
        size += n
    return out


def build(fp: FleetPlan, scripts: list[tuple[str, str]], resource: str,
          image: str) -> tuple[str, list[str]]:
    """``(YAML text, schema problems)`` of the preflight Job of ``fp``; ``scripts`` are
    ``(preflight-<server>.sh, text)``, ``resource`` the device plugin's resource name."""
    maps = _chunks(scripts)
    docs = [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": f"{NAME}-scripts-{k}",
                          "labels": {"app.kubernetes.io/managed-by": "rtc"}},
             "data": data} for k, data in enumerate(maps)]
    job = job_doc(fp, resource, image, len(maps))
    problems = [p for d in docs + [job] for p in manifest_problems(d)]
    head = (f"# rtc: preflight of {len(fp.preflight)} servers as an Indexed Job, from "
            f"{fp.source}.\n# Run it before the LeaderWorkerSets (its pods take the same "
            f"devices on the same nodes): kubectl apply -f {FILE} && kubectl wait "
            f"--for=condition=complete --timeout=30m job/{NAME}\n{JUDGE}kubectl logs "
            f"-l job-name={NAME} --tail=-1 --prefix --max-log-requests={len(fp.preflight)} "
            f"> preflight.log; rtc preflight {fp.report} preflight.log\n")
    return head + "---\n".join([configmap_text(d) for d in docs]
                                + [render([job], "")]), problems


def _block(text: str, indent: str) -> str:
    """``text`` as a YAML literal block scalar (``|``, ``|+`` when it ends in blank lines,
    ``|-`` without a final newline); JSON-quoted when it holds a character a block
    cannot carry (YAML 1.2 section 8.1: printable characters only) or starts with a
    space."""
    if not text or text[0] in " \n" or any(
            (c < " " and c not in "\t\n") or c in "\x7f\ufeff" for c in text):
        return " " + json.dumps(text, ensure_ascii=False) + "\n"
    chomp = "+" if text.endswith("\n\n") else "" if text.endswith("\n") else "-"
    body = "".join(indent + x + "\n" if x else "\n" for x in text.splitlines())
    return f" |{chomp}\n" + body


def configmap_text(doc: dict) -> str:
    """A ConfigMap of scripts as YAML, written directly (PyYAML's emitter takes seconds
    for the megabytes of a 1,024-server plan): metadata, then each script as a literal
    block."""
    meta = doc["metadata"]
    lines = [f"apiVersion: {doc['apiVersion']}", f"kind: {doc['kind']}", "metadata:",
             f"  name: {json.dumps(meta['name'])}", "  labels:"]
    lines += [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in meta["labels"].items()]
    out = "\n".join(lines) + "\ndata:\n"
    return out + "".join(f"  {json.dumps(k)}:" + _block(v, "    ")
                         for k, v in doc["data"].items())


def job_doc(fp: FleetPlan, resource: str, image: str, maps: int) -> dict:
    """The Job: one pod per server, each on its own node."""
    servers = [h.server for h in fp.preflight]
    count = max(h.devices for h in fp.preflight)
    mounts = () if fp.gpu else HOST_MOUNTS
    container = {
        "name": "preflight", "image": image, "command": ["/bin/bash", "-c", _POD_SCRIPT],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "resources": {"limits": {resource: str(count)}, "requests": {resource: str(count)}},
        "volumeMounts": [{"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}]
        + [{"name": m.name, "mountPath": m.path, "readOnly": True} for m in mounts]}
    volumes = [{"name": "scripts", "projected": {"defaultMode": 0o755, "sources": [
        {"configMap": {"name": f"{NAME}-scripts-{k}"}} for k in range(maps)]}}]
    volumes += [{"name": m.name, "hostPath": {"path": m.path, "type": m.kind}} for m in mounts]
    host = fact("hostname_label")
    spec = {"restartPolicy": "Never", "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": host, "operator": "In", "values": servers}]}]}},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"rtc-preflight": NAME}},
                     "topologyKey": host}]}},
            "containers": [container], "volumes": volumes}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": NAME, "labels": {"app.kubernetes.io/managed-by": "rtc"}},
            "spec": {"completionMode": "Indexed", "completions": len(servers),
                     "parallelism": len(servers), "backoffLimit": 0,
                     "ttlSecondsAfterFinished": 86400,
                     "template": {"metadata": {"labels": {"rtc-preflight": NAME}},
                                  "spec": spec}}}
