"""Prefill/decode deployments as the scripts launch them: every instance of one KV
connector a producer, or every one a consumer (RTC711); NixlConnector instances on several
hosts that leave VLLM_NIXL_SIDE_CHANNEL_HOST at its default (RTC712).

vLLM's ``KVTransferConfig`` (vllm/config/kv_transfer.py) takes ``kv_role`` kv_producer,
kv_consumer or kv_both; ``is_kv_producer`` is producer or both, ``is_kv_consumer`` consumer
or both. A prefill instance produces the KV cache and a decode instance consumes it: the
Mooncake connectors start a sending thread on producers and a receiving one on consumers
(vllm-ascend ``mooncake_connector.py``), so with two producers the decode side never
receives and every request waits on its KV until the transfer timeout. A copied prefill
line on the decode node is the usual cause (vllm-project/recipes PR 385: the decode
worker of a MiniMax-M2 guide with kv_role kv_producer). rtc's own launches derive the
role from the job's side (:mod:`rtc.plan.launch`), so only lifted scripts are checked.
"""

from __future__ import annotations

import json

from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

ONE_SIDED = rule("RTC711", "pd-roles-one-sided", "error",
                 "Every instance of a KV connector is a producer, or every one a consumer.", """
    What: two or more vLLM instances given with one `kv_connector` in --kv-transfer-config,
    all with kv_role kv_producer (or all kv_consumer), none kv_both.
    Why: a prefill/decode pair needs one side that sends the KV cache (kv_producer) and
    one that receives it (kv_consumer): with two producers the decode instance never pulls
    the prefill's KV cache and requests hang until the transfer timeout (vLLM
    KVTransferConfig is_kv_consumer; vllm-project/recipes PR 385).
    Example: prefill and decode scripts both with '{"kv_connector": "NixlConnector",
    "kv_role": "kv_producer"}' (the decode line copied from the prefill one).
    Fix: give the decode instances kv_role kv_consumer (the prefill ones kv_producer).""")

NIXL_HOST = rule("RTC712", "nixl-side-channel-host-unset", "error",
                 "A NixlConnector instance on one of several hosts advertises localhost as its side channel.", """
    What: vLLM instances with kv_connector NixlConnector on two or more hosts, and a node
    that does not export VLLM_NIXL_SIDE_CHANNEL_HOST (or exports localhost / 127.0.0.1 /
    0.0.0.0).
    Why: the variable's default is "localhost" (vllm/envs.py; docs/features/
    nixl_connector_usage.md: "Set when prefiller and decoder are on different machines");
    the prefill hands that host to the decode in kv_transfer_params, the decode's handshake
    reaches its own host instead, fails ("Remote NIXL agent engine ID mismatch", vLLM issue
    27083) and the decode recomputes every prompt.
    Example: a 1P1D DeepSeek deployment on two nodes, neither exporting the variable.
    Fix: export VLLM_NIXL_SIDE_CHANNEL_HOST=<this node's IP that the other nodes reach> on
    every node.""")

_SIDE = {"kv_producer": "decode", "kv_consumer": "prefill"}
#: Side-channel hosts another node cannot reach.
_LOCAL = ("", "localhost", "127.0.0.1", "0.0.0.0", "::", "::1")


def _kv(jl):
    """(connector, role, span, node name) of a lifted vLLM job's --kv-transfer-config."""
    for nl in jl.nodes:
        for proc in nl.procs:
            text = proc.flags().get("--kv-transfer-config")
            try:
                doc = json.loads(text) if text else None
            except ValueError:
                doc = None
            if isinstance(doc, dict) and doc.get("kv_connector") and doc.get("kv_role"):
                span = proc.spans.get("--kv-transfer-config") or proc.spans.get("")
                return str(doc["kv_connector"]), str(doc["kv_role"]), span, nl.server.name
    return None


def check(topo: Topology, plan: Plan):
    groups: dict[str, list] = {}
    launches: dict[str, list] = {}
    for jl in plan.launches.values():
        if jl.origin == "script" and jl.job.framework == "vllm" and (kv := _kv(jl)):
            groups.setdefault(kv[0], []).append((jl.job, kv))
            launches.setdefault(kv[0], []).append(jl)
    yield from _nixl_hosts(launches.get("NixlConnector", []))
    for connector, members in groups.items():
        roles = {kv[1] for _job, kv in members}
        if len(members) < 2 or len(roles) != 1 or roles - set(_SIDE):
            continue
        role = roles.pop()
        other = "kv_consumer" if role == "kv_producer" else "kv_producer"
        verb = "receives" if role == "kv_producer" else "sends"
        # the instance named after the missing side (decode.sh, a `decode` job) is the
        # likely copy; else the last one given
        at = next((m for m in members if _SIDE[role] in f"{m[0].name} {m[1][3]}".lower()),
                  members[-1])
        job, (_c, _r, span, node) = at
        yield error(ONE_SIDED, f"{len(members)} instances use {connector} and all are "
                    f"{role}: no {_SIDE[role]} side ({other}) {verb} the KV cache (job "
                    f"{job.name} on {node} is one of them)", span,
                    subject=f"job {job.name}",
                    related=[Related(kv[2], f"job {j.name}: {role}") for j, kv in members
                             if kv[2] is not None and j is not at[0]],
                    hint="give the decode instances kv_role kv_consumer and the prefill ones "
                         "kv_producer")


def _nixl_hosts(jls: list):
    """RTC712 for each node of NixlConnector launches spread over two or more hosts that
    leaves the side-channel host at a local address."""
    nodes = [(jl, nl) for jl in jls for nl in jl.nodes]
    hosts = {str(nl.server.host_ip) for _jl, nl in nodes if nl.server.host_ip is not None}
    if len(hosts) < 2:
        return
    for jl, nl in nodes:
        value = str(dict(nl.env).get("VLLM_NIXL_SIDE_CHANNEL_HOST", "")).strip()
        if value.lower() not in _LOCAL:
            continue
        span = next((p.spans.get("") for p in nl.procs if p.spans.get("")), jl.job.span)
        said = f"sets VLLM_NIXL_SIDE_CHANNEL_HOST={value}" if value else \
            "leaves VLLM_NIXL_SIDE_CHANNEL_HOST at its default localhost"
        yield error(NIXL_HOST, f"job {jl.job.name}: {nl.server.name} runs NixlConnector on "
                    f"one of {len(hosts)} hosts and {said}: the other side's handshake "
                    "reaches its own host", span,
                    subject=f"job {jl.job.name}, server {nl.server.name}",
                    hint="export VLLM_NIXL_SIDE_CHANNEL_HOST="
                         f"{nl.server.host_ip or '<this node IP>'} before the launch")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (ONE_SIDED, NIXL_HOST)
