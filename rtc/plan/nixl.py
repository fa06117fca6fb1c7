"""Prefill/decode disaggregation on NVIDIA GPUs with vLLM's NixlConnector
(``kv_connector nixl``): the side-channel ports each host binds, the per-node environment,
and the proxy that sends each request to a prefill and then a decode instance.

The NIXL side channel (vLLM docs ``features/nixl_connector_usage.md``; facts with their
sources in :mod:`rtc.plan.versions`, rows ``nixl`` and ``nixl_dp_port``):

====================  ====================================================================
vLLM                  ports a host binds (``B`` = ``VLLM_NIXL_SIDE_CHANNEL_PORT``)
====================  ====================================================================
0.11.1 and later      ``B`` + DP rank, once per DP engine, on the host of its engine core
                      (for a TP group over several servers: its first server)
up to 0.11.0          ``B`` + DP rank x TP + TP rank, once per GPU worker, on its host
unknown               both (the smallest range that holds either), so that the plan is
                      right whichever release runs
====================  ====================================================================

``VLLM_NIXL_SIDE_CHANNEL_HOST`` (default ``localhost``) is the address the prefill side
advertises to the decode side: each node exports its own ``host``. rtc's ``kv_port`` is
``B`` for a NIXL job (the ``kv_port`` field of ``--kv-transfer-config`` is not read by the
NixlConnector); default 5600 (:data:`rtc.plan.versions.NIXL_DEFAULT_PORT`), moved past
other ports of the port plan. NIXL moves the KV cache over UCX, which reads
``UCX_NET_DEVICES`` and not NCCL's variables: a server with ``ib_hca`` gets
``UCX_NET_DEVICES=mlx5_0:1,...`` (port 1 of each HCA) unless the job sets it.

The proxy: vLLM's ``toy_proxy_server.py`` (``tests/v1/kv_connector/nixl_integration/``:
``--host``, ``--port``, ``--prefiller-hosts`` / ``--prefiller-ports``, ``--decoder-hosts``
/ ``--decoder-ports``, default host 127.0.0.1) on the head of the pair's first prefill job,
port 8192 (the docs' example) or the next free one; it lists every API server of each side
(internal load balancing: the head's; hybrid: each server's; external: each DP rank's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.model.topology import Job, Server, Topology
from rtc.plan.versions import Version, has

NIXL = "nixl"
DEFAULT_PROXY_PORT = 8192


def is_nixl(job: Job) -> bool:
    return job.kv_connector == NIXL


def side_channel_offsets(topo: Topology, job: Job,
                         version: Version | None) -> dict[str, tuple[int, int]]:
    """server name -> (lowest, highest) offset from ``VLLM_NIXL_SIDE_CHANNEL_PORT`` that the
    job's processes bind there (see the module table); empty when the job cannot be
    placed."""
    try:
        pl = topo.placement(job)
    except (ValueError, TypeError):
        return {}
    per_dp = has(version, "nixl_dp_port")
    out: dict[str, tuple[int, int]] = {}
    for n in pl.nodes:
        if not n.placed:
            continue
        spans = []
        if per_dp is not False:
            spans.append(_engine_offsets(n))
        if per_dp is not True:
            spans.append((n.first_rank, n.first_rank + n.placed - 1))
        spans = [s for s in spans if s is not None]
        if spans:
            out[n.name] = (min(lo for lo, _ in spans), max(hi for _, hi in spans))
    return out


def _engine_offsets(n) -> tuple[int, int] | None:
    """The DP ranks whose engine core runs on node ``n`` (0.11.1+ scheme)."""
    if n.replica is not None and n.replica[2] > 1:
        return (n.replica[0], n.replica[0]) if n.replica[1] == 0 else None
    if n.dp_local and n.dp_start is not None:
        return n.dp_start, n.dp_start + n.dp_local - 1
    return 0, 0


def nixl_env(job: Job, server: Server, base: int | None, env: dict) -> list[tuple[str, str]]:
    """The node-level variables of a NIXL prefill/decode job on ``server``: the side-channel
    host and port, and ``UCX_NET_DEVICES`` from ``ib_hca`` (unless the job's ``env`` sets
    it; ``env`` as :func:`rtc.network.env.env_map`)."""
    out = []
    if server.host_ip is not None:
        out.append(("VLLM_NIXL_SIDE_CHANNEL_HOST", str(server.host_ip)))
    if base is not None:
        out.append(("VLLM_NIXL_SIDE_CHANNEL_PORT", str(base)))
    if server.ib_hca and "UCX_NET_DEVICES" not in env:
        out.append(("UCX_NET_DEVICES", ",".join(f"{h}:1" for h in server.ib_hca)))
    return out


@dataclass
class PdProxy:
    """The proxy of one prefill/decode pair: where it runs (``server``, ``port``), the
    pair's job names and the API servers of each side as (host, port)."""

    name: str
    server: Server
    port: int
    jobs: tuple = ()
    prefill: list = field(default_factory=list)
    decode: list = field(default_factory=list)


def api_endpoints(launch) -> list[tuple[str, int]]:
    """(host, port) of every API server of a job's launch (:class:`JobLaunch`): processes
    that are not ``--headless`` and have a ``--port``."""
    out = []
    for nl in launch.nodes:
        for p in nl.procs:
            words = p.words()
            if "--headless" in words or "--port" not in words or "serve" not in words:
                continue
            k = words.index("--port")
            if k + 1 < len(words) and words[k + 1].isdigit():
                out.append((str(nl.server.host_ip), int(words[k + 1])))
    return out


def plan_proxies(topo: Topology, ports, pairs: list, launches: dict) -> list[PdProxy]:
    """One :class:`PdProxy` per complete pair of NIXL jobs whose launches exist, on the
    head of its first prefill job at the port plan's ``proxy_port``."""
    out = []
    for k, pair in enumerate(pairs):
        if not pair.prefill or not pair.decode or not all(is_nixl(j) for j in pair.jobs):
            continue
        first = pair.prefill[0]
        jp = ports.jobs.get(first.name)
        if jp is None or jp.proxy_port is None or jp.head is None:
            continue
        if any(j.name not in launches or not launches[j.name].nodes for j in pair.jobs):
            continue
        name = pair.name or ("pd" if len(pairs) == 1 else f"pd{k + 1}")
        px = PdProxy(name, topo.server(jp.head), jp.proxy_port,
                     tuple(j.name for j in pair.jobs))
        for j in pair.prefill:
            px.prefill += api_endpoints(launches[j.name])
        for j in pair.decode:
            px.decode += api_endpoints(launches[j.name])
        out.append(px)
    return out
