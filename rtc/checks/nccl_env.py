"""NCCL_IB_HCA against the servers' declared HCAs (RTC472) and what an NCCL_TOPO_FILE is
written from (RTC476), vllm-ascend KV connectors on GPUs (RTC477), NVIDIA GPU servers only.

``NCCL_IB_HCA`` (NCCL environment docs) selects the InfiniBand / RoCE HCAs NCCL may use:
a comma list of HCA-name prefixes with an optional ``:port`` each, led by ``=`` for exact
names and / or ``^`` to exclude (``mlx5``, ``=mlx5_0:1,mlx5_1:1``, ``^=mlx5_4``): the
syntax of NCCL_SOCKET_IFNAME plus ports (reference ``targets.md`` section 6). Servers
declare their HCAs with ``ib_hca`` (the NIC Legend of ``nvidia-smi topo -m``).
"""

from __future__ import annotations

import re

from rtc.diagnostics import error, note, warning
from rtc.model.topology import Topology
from rtc.network.env import env_map, parse_socket_ifname
from rtc.plan import Plan
from rtc.rules import rule

IB_HCA = rule("RTC472", "nccl-ib-hca-mismatch", "warning",
              "NCCL_IB_HCA is malformed or selects none of a server's declared HCAs.", """
    What: a job's `env NCCL_IB_HCA` does not follow NCCL's syntax (a comma list of HCA
    prefixes with optional `:port`, led by `=` for exact names and / or `^` to exclude;
    an error), or it selects none of the HCAs a server declares with `ib_hca`, or names
    exact HCAs a server does not have (warnings); or `ib_hca` names HCAs that the server's
    `nvidia-smi topo -m` capture (NIC Legend) does not show (warning). Without any `ib_hca`
    the value is not checked (a note says so).
    Why: NCCL then finds no usable HCA on that node and falls back to TCP sockets (a
    fraction of the bandwidth) or fails to connect ("NET/IB : No device found").
    Example: `env NCCL_IB_HCA = "=mlx5_8"` for servers with `ib_hca mlx5_0, mlx5_1`.
    Fix: list the servers' HCAs (`nvidia-smi topo -m`, NIC Legend), or leave NCCL_IB_HCA
    out: rtc writes it from `ib_hca`.""", also={"error": "a value that does not follow NCCL's syntax",
                    "note": "no server declares `ib_hca`, so the value is not checked"})

TOPO_FILE = rule("RTC476", "nccl-topo-file-needs-captures", "error",
                 "`nccl_topo_file on` on a server without the nvidia-smi captures it is written from.", """
    What: a server asks for an NCCL_TOPO_FILE (`nccl_topo_file on`) but its `inventory`
    lacks an `nvidia-smi topo -m` or a `--query-gpu=index,name,pci.bus_id,uuid` capture
    or a GPU's product has no known compute capability.
    Why: the XML needs each GPU's PCI bus id, NUMA node, CPU affinity and NVLink peers;
    without them rtc cannot write it, and a made-up one would mislead NCCL.
    Example: `nccl_topo_file on` with `inventory "captures/vm-01"` holding only topo.txt.
    Fix: capture both commands into the inventory folder, or remove `nccl_topo_file on`.""")

ASCEND_CONNECTOR = rule("RTC477", "ascend-kv-connector-on-gpu", "error",
                        "A prefill/decode job on NVIDIA GPUs names a vllm-ascend KV connector.", """
    What: `kv_connector mooncake`, `mooncake_layerwise` or `llmdatadist` on an NVIDIA GPU
    preset. rtc writes these as vllm-ascend's connectors (MooncakeConnectorV1 in
    vllm_ascend.distributed..., LLMDataDistCMgrConnector), which exist only in vllm-ascend.
    Why: vLLM on GPUs fails at start-up when it imports the connector module.
    Example: `kv_connector mooncake` in a `role prefill` job on hardware hgx-h100.
    Fix: use `kv_connector nixl` (vLLM's NixlConnector, planned by rtc), or write another
    connector's `--kv-transfer-config` yourself with `args` and leave `kv_connector` out.""")

_PORT = re.compile(r":[0-9]{1,3}$")


def _selected(spec, hca: str) -> bool:
    hit = any(hca == n if spec.exact else hca.startswith(n) for n in spec.names)
    return hit != spec.exclude


def check(topo: Topology, plan: Plan):
    if not topo.preset.is_gpu:
        return
    yield from _topo_files(topo)
    yield from _captured_hcas(topo)
    for job in topo.jobs:
        if job.kv_connector is not None and job.kv_connector != "nixl":
            yield error(ASCEND_CONNECTOR, f"job {job.name}: kv_connector {job.kv_connector} is "
                        f"a vllm-ascend connector; vLLM on {topo.preset.name} cannot load it",
                        job.span_of("kv_connector"), subject=f"job {job.name}",
                        hint="use `kv_connector nixl` (vLLM's NixlConnector), or pass another "
                             "--kv-transfer-config with `args` and remove `kv_connector`")
        env = env_map(job)
        if "NCCL_IB_HCA" not in env:
            continue
        text, span = env["NCCL_IB_HCA"]
        names = ",".join(_PORT.sub("", n) for n in text.split(","))
        spec = parse_socket_ifname(names)
        subject = f"job {job.name}"
        if spec.problem:
            yield error(IB_HCA, f"job {job.name}: NCCL_IB_HCA=\"{text}\": {spec.problem}", span,
                        subject=subject, hint="e.g. \"=mlx5_0,mlx5_1\" or \"mlx5\" (quote the "
                                              "value)")
            continue
        servers = [p.server for p in job.placements if p.server.ib_hca]
        if not servers and topo.origin == "scripts":
            continue   # rtc lint: the scripts' value is all there is (nothing to compare)
        if not servers:
            yield note(IB_HCA, f"job {job.name}: NCCL_IB_HCA is not checked: no server of the "
                       "job declares `ib_hca`", span, subject=subject,
                       hint="add `ib_hca mlx5_0, ...` to the servers (the NIC Legend of "
                            "`nvidia-smi topo -m`)")
            continue
        yield from _per_server(job, text, span, spec, servers)


def _topo_files(topo: Topology):
    """RTC476 for each server whose NCCL_TOPO_FILE cannot be written (on Ascend hardware the
    attribute has no effect: RTC512)."""
    for s in topo.servers:
        if not s.nccl_topo_file:
            continue
        inv = s.inventory_facts
        lacking = ("an `inventory`" if inv is None else
                   "an `nvidia-smi topo -m` capture" if inv.gpu_topo is None else
                   "a `--query-gpu=index,name,pci.bus_id,uuid --format=csv` capture"
                   if inv.gpu_list is None else
                   "the GPUs' PCI bus ids, which its `--query-gpu` capture lacks (query "
                   "index,name,pci.bus_id,uuid)"
                   if not all(g.bus_id for g in inv.gpu_list.gpus.values()) else None)
        if lacking is None:
            from rtc.inventory.nvidia_smi import product

            odd = sorted({g.name for g in inv.gpu_list.gpus.values() if product(g.name) is None})
            if not odd:
                continue
            lacking = f"a GPU product rtc knows the compute capability of ({odd[0]})"
        yield error(TOPO_FILE, f"{s.name}: `nccl_topo_file on` needs {lacking}",
                    s.span_of("nccl_topo_file"), subject=s.label,
                    hint="capture `nvidia-smi topo -m` and `nvidia-smi --query-gpu=index,name,"
                         "pci.bus_id,uuid --format=csv` into the inventory folder, or remove "
                         "`nccl_topo_file on`")


def _captured_hcas(topo: Topology):
    """RTC472: a server's ``ib_hca`` names HCAs its nvidia-smi topo -m NIC Legend lacks."""
    for s in topo.servers:
        inv = s.inventory_facts
        gt = inv.gpu_topo if inv is not None else None
        if not s.ib_hca or gt is None or not gt.nics:
            continue
        have = gt.nic_names()
        absent = [h for h in s.ib_hca if h not in have]
        if absent:
            yield warning(IB_HCA, f"{s.name}: ib_hca {', '.join(absent)} "
                          f"{'is' if len(absent) == 1 else 'are'} not among the NICs of its "
                          f"nvidia-smi topo -m capture ({', '.join(have)})",
                          s.span_of("ib_hca"), subject=s.label,
                          hint="use the HCA names of the NIC Legend, or capture this server")


def _per_server(job, text: str, span, spec, servers):
    for s in servers:
        chosen = [h for h in s.ib_hca if _selected(spec, h)]
        unknown = [n for n in spec.names if spec.exact and not spec.exclude
                   and n not in s.ib_hca]
        if not chosen:
            yield warning(IB_HCA, f"job {job.name}: NCCL_IB_HCA={text} selects none of "
                          f"{s.name}'s HCAs ({', '.join(s.ib_hca)})", span,
                          subject=f"job {job.name}, server {s.name}",
                          hint=f"use \"={','.join(s.ib_hca)}\", or leave it out (rtc writes "
                               "it from `ib_hca`)")
            return
        if unknown:
            yield warning(IB_HCA, f"job {job.name}: NCCL_IB_HCA={text} names "
                          f"{', '.join(unknown)}, which {s.name} does not have (its HCAs: "
                          f"{', '.join(s.ib_hca)})", span,
                          subject=f"job {job.name}, server {s.name}",
                          hint="list only HCAs the servers have, or correct `ib_hca`")
            return


#: The rules this module reports (collected by rtc.catalogue).
RULES = (IB_HCA, TOPO_FILE, ASCEND_CONNECTOR)
