"""Prefill/decode disaggregation with vLLM's own connectors (RTC533-RTC537): `kv_connector
nixl` where vLLM's NixlConnector cannot run or cannot hand the KV cache on, env lines that
fight the planned NIXL side channel, and `--kv-transfer-config` documents vLLM rejects or
that give a job the other side's role - in the plan's launches, so in `.rtc` files and in
lifted scripts alike. Facts and their sources: :mod:`rtc.plan.nixl`, :mod:`rtc.plan.versions`.
"""

from __future__ import annotations

import json

from rtc.diagnostics import error, note, warning
from rtc.model.topology import Topology
from rtc.network.env import env_map
from rtc.plan import Plan
from rtc.plan.disaggregation import pd_side
from rtc.plan.modes import spans_servers
from rtc.plan.versions import (FEATURES, KV_ROLES, SOURCES, VLLM_CONNECTORS, has,
                               parse_version, version_text)
from rtc.rules import rule

NIXL_ON_ASCEND = rule("RTC533", "nixl-on-ascend", "error",
                      "`kv_connector nixl` on Ascend NPU hardware.", """
    What: a prefill/decode job with `kv_connector nixl` on an Ascend preset.
    Why: vLLM's NixlConnector moves GPU memory with the NIXL library (UCX); vllm-ascend
    does not run it on NPUs, and the engine fails when it registers its KV caches.
    Example: `kv_connector nixl` with `hardware atlas-800-a3`.
    Fix: use `kv_connector mooncake_layerwise` or `mooncake` on Ascend.""")
NIXL_VERSION = rule("RTC534", "nixl-version", "error",
                    "The declared vLLM release has no NixlConnector.", """
    What: `kv_connector nixl` with a `vllm_version` before 0.9.0.
    Why: vLLM stops at start-up with "Unsupported connector type: NixlConnector".
    Example: `vllm_version 0.8.5` with `kv_connector nixl`.
    Fix: upgrade vLLM to 0.9.0 or later (0.11.1 or later for a TP group over several
    servers) and set `vllm_version` to it.""")
NIXL_SPLIT_TP = rule("RTC535", "nixl-tp-across-servers", "error",
                     "A NIXL job's TP group spans servers on a vLLM release whose handshake cannot serve it.", """
    What: `kv_connector nixl` in a job whose replica (TP x PP) runs on more than one server,
    with `vllm_version` before 0.11.1 (an error), or without `vllm_version` (a note).
    Why: up to vLLM 0.11.0 each worker advertises VLLM_NIXL_SIDE_CHANNEL_HOST of the
    replica's first server; the workers on the other servers are never reached and the
    decode side's handshake fails (vLLM issue 25981, fixed by PR 26338 in 0.11.1).
    Example: prefill `tp 16` over two 8-GPU servers with `vllm_version 0.10.2`.
    Fix: use vLLM 0.11.1 or later, or keep each replica inside a server (tp 8, dp 2).""", also={"note": "vllm_version is not set, so the release is not known"})
NIXL_ENV = rule("RTC536", "nixl-side-channel-env", "warning",
                "A NIXL job's `env` sets the side-channel host or port that rtc writes per node.", """
    What: `env VLLM_NIXL_SIDE_CHANNEL_HOST = ...` or `env VLLM_NIXL_SIDE_CHANNEL_PORT = ...`
    in a `kv_connector nixl` job.
    Why: rtc writes each node's own host and the port the port plan reserved; one value
    for every server advertises one server's address for all of them (or `localhost`,
    vLLM's default), and a hand-picked port bypasses the port plan. The job's line is not
    written.
    Example: `env VLLM_NIXL_SIDE_CHANNEL_HOST = 10.0.0.21` in a job on two servers.
    Fix: drop the line; set the port with `kv_port`.""")
KV_CONFIG = rule("RTC537", "kv-transfer-config", "error",
                 "A --kv-transfer-config vLLM rejects, or with the other side's kv_role.", """
    What: a `--kv-transfer-config` (in `args`, or in a launch script) that is not a JSON
    object, names a `kv_connector` without a `kv_role`, a `kv_role` other than
    kv_producer / kv_consumer / kv_both, or a connector vLLM does not register without a
    `kv_connector_module_path` (on NVIDIA GPUs); or, in a prefill job, kv_role kv_consumer (kv_producer in a
    decode job).
    Why: vLLM stops at start-up ("Unsupported kv_role", "Unsupported connector type"); a
    prefill engine that only consumes never hands its KV cache on, so every request is
    computed again on the decode side.
    Example: `args "--kv-transfer-config {\\"kv_connector\\":\\"NixlConnector\\"}"`.
    Fix: write `kv_role` kv_producer on prefill, kv_consumer on decode (or use
    `kv_connector nixl` and let rtc write it).""")


def check(topo: Topology, plan: Plan):
    version = parse_version(topo.vllm_version)
    for job in topo.jobs:
        if job.kv_connector == "nixl" and job.framework != "mindie" \
                and pd_side(plan.pairs, job) is not None:   # MindIE: RTC512
            yield from _nixl_job(topo, job, version)
    for jl in plan.launches.values():
        side = pd_side(plan.pairs, jl.job)
        found = (_kv_config(jl.job, side, p, topo.preset.is_gpu)
                 for nl in jl.nodes for p in nl.procs)
        first = next((d for d in found if d is not None), None)   # one finding per job
        if first is not None:
            yield first


def _nixl_job(topo: Topology, job, version):
    """RTC533-RTC536 for one NIXL job of a complete prefill/decode pair."""
    span, subject = job.span_of("kv_connector"), f"job {job.name}"
    if not topo.preset.is_gpu:
        yield error(NIXL_ON_ASCEND, f"job {job.name}: kv_connector nixl is vLLM's "
                    f"NixlConnector for GPUs; it does not run on {topo.preset.name}", span,
                    subject=subject, hint="use `kv_connector mooncake_layerwise` or `mooncake`")
        return
    if has(version, "nixl") is False:
        yield error(NIXL_VERSION, f"job {job.name}: vLLM {topo.vllm_version} has no "
                    f"NixlConnector (first in {version_text(FEATURES['nixl'].first)})", span,
                    subject=subject, hint="upgrade vLLM and `vllm_version` to 0.9.0 or later")
    yield from _split_tp(topo, job, version, span, subject)
    env = env_map(job)
    for name in ("VLLM_NIXL_SIDE_CHANNEL_HOST", "VLLM_NIXL_SIDE_CHANNEL_PORT"):
        if name in env:
            value, at = env[name]
            what = ("the port plan's kv_port" if name.endswith("PORT")
                    else "each server's own host")
            yield warning(NIXL_ENV, f"job {job.name}: env {name}={value} is ignored: rtc "
                          f"writes {what} on every node", at, subject=subject,
                          hint="drop the line" + ("; set the port with `kv_port`"
                                                  if name.endswith("PORT") else ""))


def _split_tp(topo: Topology, job, version, span, subject):
    """RTC535: a replica over several servers on a release before the 0.11.1 handshake."""
    try:
        split = spans_servers(topo.placement(job))
    except (ValueError, TypeError):
        return
    if not split or has(version, "nixl_dp_port"):
        return
    first = version_text(FEATURES["nixl_dp_port"].first)
    if version is None:
        yield note(NIXL_SPLIT_TP, f"job {job.name}: a replica spans servers; the NIXL "
                   f"handshake serves that from vLLM {first} on, and vllm_version is not set",
                   span, subject=subject, hint=f"set `vllm_version` (>= {first}) in the "
                   "cluster block")
        return
    yield error(NIXL_SPLIT_TP, f"job {job.name}: a replica spans servers, and the NIXL "
                f"handshake of vLLM {topo.vllm_version} reaches only the workers of its "
                f"first server (fixed in {first}: {SOURCES['nixl_dp_port'].split(':')[0]})",
                span, subject=subject, hint=f"use vLLM {first} or later, or keep each "
                "replica inside a server")


def _kv_config(job, side, proc, gpu: bool):
    """RTC537 for one process's --kv-transfer-config, or None when it is fine or absent.
    Connector names are judged on GPUs only: on Ascend, vllm-ascend registers its own
    (MooncakeConnectorV1, ...) with vLLM's factory when its plugin loads."""
    flags = proc.flags()
    text = flags.get("--kv-transfer-config")
    if "--kv-transfer-config" not in flags:
        return None
    span = proc.spans.get("--kv-transfer-config") or job.launch.span_of("args", job.span)
    subject = f"job {job.name}"
    try:
        doc = json.loads(text or "")
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        return error(KV_CONFIG, f"job {job.name}: --kv-transfer-config {text!r} is not a "
                     "JSON object", span, subject=subject,
                     hint="quote the JSON: '{\"kv_connector\":\"NixlConnector\",...}'")
    role, name = doc.get("kv_role"), doc.get("kv_connector")
    if name is not None and role is None or role is not None and role not in KV_ROLES:
        return error(KV_CONFIG, f"job {job.name}: --kv-transfer-config kv_role "
                     f"{role!r} is not one of vLLM's ({', '.join(KV_ROLES)})", span,
                     subject=subject, hint="kv_producer on prefill, kv_consumer on decode")
    if gpu and name is not None and name not in VLLM_CONNECTORS \
            and not doc.get("kv_connector_module_path"):
        return error(KV_CONFIG, f"job {job.name}: kv_connector {name!r} is not a connector "
                     "vLLM registers, and no kv_connector_module_path says where it is",
                     span, subject=subject, hint="e.g. NixlConnector, or add "
                     "kv_connector_module_path")
    wrong = {"prefill": "kv_consumer", "decode": "kv_producer"}
    if side is not None and role == wrong[side[1]]:
        return error(KV_CONFIG, f"job {job.name} is a {side[1]} job but its "
                     f"--kv-transfer-config has kv_role {role}", span, subject=subject,
                     hint="kv_producer on prefill, kv_consumer on decode")
    return None


#: The rules this module reports (collected by rtc.catalogue).
RULES = (NIXL_ON_ASCEND, NIXL_VERSION, NIXL_SPLIT_TP, NIXL_ENV, KV_CONFIG)
