"""The HCCL variables that choose links, against the hardware and its captured topology
(RTC227-RTC229, RTC459, RTC460).

* ``HCCL_INTRA_PCIE_ENABLE`` / ``HCCL_INTRA_ROCE_ENABLE`` pick the link between the NPUs of
  one server (:func:`rtc.network.env.intra_link`, HCCL's ParseIntraLinkType): three pairs
  are refused at start-up (RTC227); RoCE inside a server replaces HCCS (RTC228, with the
  cost) and needs every NPU's device_ip (RTC229). HCCL documents the pair as effective on
  the Atlas 300T Pro (910) and the Atlas 200T A2 Box16; on A3 only
  ``HCCL_INTRA_ROCE_ENABLE`` acts, for LLM-DataDist, and Ascend 950 reads neither (RTC460).
* ``HCCL_INTER_HCCS_DISABLE=TRUE`` sends the traffic between the servers of an A3 super pod
  over RoCE instead of HCCS / UB (RTC459, with the cost); other hardware ignores it.

RTC228 is a note, not a warning, where vllm-ascend needs intra-server RoCE: a prefill and a
decode instance on one machine (the maintainers' answer in vllm-ascend issue 4866, "Are your
P and D nodes deployed on the same machine? ... export HCCL_INTRA_ROCE_ENABLE=1"), and a KV
pool (``AscendStoreConnector``) on A2, for which the KV-pool guide sets it
(vllm-ascend docs/source/user_guide/feature_guide/kv_pool.md section 5.1, "Required by direct
transmission scheme on 800 I/T A2 series", main @ 182b75e, after v0.19.1rc1).

Sources: hicann/hccl docs/zh/user_guide/hccl_env/HCCL_INTRA_PCIE_ENABLE.md,
HCCL_INTRA_ROCE_ENABLE.md, HCCL_INTER_HCCS_DISABLE.md; src/common/alg_env_config.cc
(ParseIntraLinkType, ParseInterLinkType); device_ip with intra RoCE: rtc reference
ranktable-formats.md section 1 (HCOMM concise.cc GetSingleDeviceIp).
"""

from __future__ import annotations

from rtc.diagnostics import error, note, warning
from rtc.model.topology import Topology
from rtc.network.env import env_map, intra_link
from rtc.plan import Plan
from rtc.plan.disaggregation import pd_pairs, pd_side
from rtc.rules import rule
from rtc.textfmt import compact

INTRA_PAIR = rule("RTC227", "intra-link-env-refused", "error",
                  "HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE form a pair HCCL refuses.", """
    What: both set to 1; HCCL_INTRA_PCIE_ENABLE=0 without HCCL_INTRA_ROCE_ENABLE; or
    HCCL_INTRA_ROCE_ENABLE=0 without HCCL_INTRA_PCIE_ENABLE.
    Why: HCCL parses the pair when the first communicator is built (ParseIntraLinkType in
    hicann/hccl src/common/alg_env_config.cc) and fails with EI0001 "0 or 1 (but not both
    1)": every rank stops at start-up.
    Example: `env HCCL_INTRA_PCIE_ENABLE = 1` and `env HCCL_INTRA_ROCE_ENABLE = 1`.
    Fix: the NPUs' direct links inside the server (HCCS where the server has it, else
    PCIe; HCCL's docs call this mode "PCIe"): drop both, which is the default, or PCIE=1
    alone (ROCE unset or 0); RoCE: ROCE=1 (PCIE unset or 0).""")
INTRA_ROCE = rule("RTC228", "intra-roce-over-hccs", "warning",
                  "HCCL_INTRA_ROCE_ENABLE=1 sends the traffic between HCCS-joined NPUs of one server over RoCE.", """
    What: the job turns RoCE on inside servers whose NPUs are joined by HCCS (the preset's
    groups, or the server's `npu-smi info -t topo` capture).
    Why: every intra-server collective (TP's AllReduce in every layer) then leaves the NPU
    through its RoCE port and the switch instead of HCCS: more latency per step and one
    port's bandwidth instead of the mesh. The message gives rtc's estimate of a 1 MiB
    AllReduce both ways. HCCL documents the switch for the Atlas 300T Pro and Atlas 200T
    A2 Box16; Mooncake's Ascend transport reads it as well.
    Example: `env HCCL_INTRA_ROCE_ENABLE = 1` on atlas-800t-a2 with `tp 8`.
    Fix: drop it (by default HCCL uses the NPUs' direct links: HCCS where the server has
    it, else PCIe; HCCL's docs call this mode "PCIe"), unless RoCE inside the server is
    meant. vllm-ascend requires it in two cases, where rtc reports a note with the cost
    instead: a prefill and a decode job on one server (vllm-ascend issue 4866) and a KV
    pool (AscendStoreConnector) on A2 (vllm-ascend's kv_pool.md, section 5.1).""",
                  also={"note": "a prefill and a decode job on one server, or a KV pool on A2, "
                                "where vllm-ascend requires the variable"})
INTRA_ROCE_IP = rule("RTC229", "intra-roce-needs-device-ip", "error",
                     "RoCE inside a server (HCCL_INTRA_ROCE_ENABLE=1) but an NPU has no device_ip.", """
    What: the job sets HCCL_INTRA_ROCE_ENABLE=1 (PCIe off) and some of its NPUs have no
    device_ip in the rank table (a one-server table may leave it out otherwise).
    Why: with intra-server RoCE HCCL connects even the NPUs of one server through their
    RoCE addresses; the table's empty device_ip makes communicator init fail (HCOMM
    concise.cc GetSingleDeviceIp requires it with HCCL_INTRA_ROCE_ENABLE=1).
    Example: a one-server job without `device_ip` and `env HCCL_INTRA_ROCE_ENABLE = 1`.
    Fix: give the NPUs their RoCE addresses (`device_ip ...` or `device_ip inventory`), or
    drop HCCL_INTRA_ROCE_ENABLE.""")
INTER_HCCS = rule("RTC459", "inter-hccs-disabled", "warning",
                  "HCCL_INTER_HCCS_DISABLE=TRUE moves the traffic between A3 servers of one super pod to RoCE.", """
    What: `env HCCL_INTER_HCCS_DISABLE = TRUE` on a job whose servers share an A3 super
    pod (a warning, with the cost), or on hardware that does not read it (A2, 910A, Ascend
    950: a note, nothing changes) or on one server (a note).
    Why: inside a super pod HCCL joins servers over HCCS / UB (SDMA); TRUE sends the same
    traffic over the RoCE NICs (RDMA), several times slower per byte, and needs every NPU's
    device_ip even in one super pod. The message gives rtc's estimate of a 1 MiB AllReduce
    between two servers both ways.
    Example: `env HCCL_INTER_HCCS_DISABLE = TRUE` for DP2 x TP16 over two A3 servers of
    super pod 0.
    Fix: drop it (FALSE is the default) unless RoCE inside the super pod is meant (e.g.
    while debugging UB links).""", also={"note": "hardware that does not read the variable, or a job on one server"})
INTRA_NOT_READ = rule("RTC460", "intra-link-env-not-read", "note",
                      "HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE on hardware that ignores it.", """
    What: HCCL_INTRA_PCIE_ENABLE on A3 or Ascend 950, or HCCL_INTRA_ROCE_ENABLE on Ascend
    950 or on A3 without LLM-DataDist.
    Why: HCCL documents neither as supported on Ascend 950 nor PCIe on A3; on A3
    HCCL_INTRA_ROCE_ENABLE acts only for LLM-DataDist (kv_connector llmdatadist), not for
    HCCL's own traffic. Nothing changes, which surprises when it was meant to.
    Example: `env HCCL_INTRA_ROCE_ENABLE = 1` on atlas-800-a3 with `kv_connector mooncake`.
    Fix: remove it; on A3 use HCCL_INTER_HCCS_DISABLE for RoCE between the servers of a
    super pod.""")

#: Message size of the cost comparisons (bytes): 64 tokens x 8192 hidden x 2 bytes, as RTC312.
MESSAGE = 64 * 8192 * 2
_INTRA = ("HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE")


def intra_roce_applies(topo: Topology, job) -> bool:
    """True when ``job`` runs its intra-server traffic over RoCE: it selects RoCE
    (:func:`rtc.network.env.intra_link`) on hardware where the switch acts on HCCL's
    traffic (910A, A2, generic Ascend; not A3 / Ascend 950 / GPUs)."""
    if topo.preset.is_gpu or topo.preset.chip in ("Ascend910_93", "Ascend950"):
        return False
    env = {k: v for k, (v, _s) in env_map(job).items()}
    link, problem = intra_link(env)
    return link == "roce" and problem is None


def check(topo: Topology, plan: Plan):
    if topo.preset.is_gpu:
        return
    for job in topo.jobs:
        env = env_map(job)
        values = {k: v for k, (v, _s) in env.items()}
        _link, problem = intra_link(values)
        if problem:
            name = "HCCL_INTRA_ROCE_ENABLE" if "HCCL_INTRA_ROCE_ENABLE" in env else _INTRA[0]
            yield error(INTRA_PAIR, f"job {job.name}: {problem}; HCCL fails at start-up with "
                        "EI0001 (HCCL_INTRA_PCIE_ENABLE or HCCL_INTRA_ROCE_ENABLE: 0 or 1, but "
                        "not both 1)", env[name][1], subject=f"job {job.name}",
                        hint=f"for the NPUs' direct links inside the server ({_direct(topo)}; "
                             "HCCL's docs call this mode PCIe) drop both lines, which is the "
                             "default, or set HCCL_INTRA_PCIE_ENABLE=1 alone; for RoCE, "
                             "HCCL_INTRA_ROCE_ENABLE=1 alone")
            continue
        yield from _not_read(topo, job, env)
        if intra_roce_applies(topo, job):
            yield from _intra_roce(topo, job, env["HCCL_INTRA_ROCE_ENABLE"][1])
        if str(values.get("HCCL_INTER_HCCS_DISABLE", "")).strip().upper() == "TRUE":
            yield from _inter_hccs(topo, job, env["HCCL_INTER_HCCS_DISABLE"][1])


def _not_read(topo: Topology, job, env):
    """RTC460 for the intra switches on A3 / Ascend 950."""
    chip = topo.preset.chip
    if chip not in ("Ascend910_93", "Ascend950"):
        return
    for name in _INTRA:
        if name not in env:
            continue
        if chip == "Ascend910_93" and name == "HCCL_INTRA_ROCE_ENABLE" and \
                job.kv_connector == "llmdatadist":
            continue
        why = ("Ascend 950 does not support it" if chip == "Ascend950" else
               "A3 does not support it" if name == "HCCL_INTRA_PCIE_ENABLE" else
               "on A3 it acts only for LLM-DataDist, and this job does not use it")
        yield note(INTRA_NOT_READ, f"job {job.name}: {name} has no effect on "
                   f"{topo.preset.name}: {why}", env[name][1], subject=f"job {job.name}",
                   hint="remove it" + ("; HCCL_INTER_HCCS_DISABLE=TRUE moves traffic between "
                                       "the servers of a super pod to RoCE"
                                       if chip == "Ascend910_93" else ""))


def _intra_roce(topo: Topology, job, span):
    """RTC229 (NPUs without device_ip) and RTC228 (HCCS replaced by RoCE, with the cost)."""
    lacking = []
    for p in job.placements:
        by_id = {d.device_id: d for d in p.server.devices}
        lacking += [(p.server.name, i) for i in p.device_ids
                    if i in by_id and by_id[i].device_ip is None]
    if lacking:
        names = list(dict.fromkeys(n for n, _ in lacking))
        yield error(INTRA_ROCE_IP, f"job {job.name}: HCCL_INTRA_ROCE_ENABLE=1 connects the NPUs "
                    f"of one server over RoCE, but {len(lacking)} of them have no device_ip "
                    f"(on {', '.join(names[:4])}{' ...' if len(names) > 4 else ''}); "
                    "communicator init fails", span, subject=f"job {job.name}",
                    hint="give the NPUs their RoCE addresses (`device_ip ...` or `device_ip "
                         "inventory`), or drop HCCL_INTRA_ROCE_ENABLE")
    found = _hccs_server(topo, job)
    if found is None:
        return
    server, devices = found
    what = (f"job {job.name}: HCCL_INTRA_ROCE_ENABLE=1 sends the traffic between NPUs "
            f"{compact(devices)} of {server}, which HCCS joins, over RoCE"
            + _intra_cost(topo, job, devices))
    needed = roce_required(topo, job)
    if needed is not None:
        yield note(INTRA_ROCE, f"{what}; it is required here: {needed}", span,
                   subject=f"job {job.name}", hint="keep it; the cost above is the price of "
                   "the KV transfer path vllm-ascend needs")
        return
    yield warning(INTRA_ROCE, what, span, subject=f"job {job.name}",
                  hint="drop HCCL_INTRA_ROCE_ENABLE: by default HCCL uses the NPUs' direct "
                       f"links inside the server ({_direct(topo)}; HCCL's docs call this mode "
                       "PCIe), unless RoCE inside the server is meant")


#: kv_connector names of vLLM-Ascend's KV pool (AscendStoreConnector; its earlier name
#: MooncakeConnectorStoreV1), found in a job's --kv-transfer-config.
KV_POOL_CONNECTORS = ("AscendStoreConnector", "MooncakeConnectorStoreV1")


def roce_required(topo: Topology, job) -> str | None:
    """Why vllm-ascend needs HCCL_INTRA_ROCE_ENABLE=1 for ``job`` (a sentence), or None:
    a vLLM prefill / decode job sharing a server with a job of the other side of its
    disaggregation (vllm-ascend issue 4866), or a KV pool on A2 (kv_pool.md section 5.1)."""
    found = pd_side(pd_pairs(topo), job) if job.framework == "vllm" else None
    if found is not None:
        pair, side = found
        others = pair.decode if side == "prefill" else pair.prefill
        mine = {p.server.name for p in job.placements}
        for other in others:
            shared = [p.server.name for p in other.placements if p.server.name in mine]
            if shared:
                return (f"{side} job {job.name} and {other.role} job {other.name} share "
                        f"{shared[0]}, and vllm-ascend's maintainers require "
                        "HCCL_INTRA_ROCE_ENABLE=1 for the KV transfer between a prefill and "
                        "a decode instance on one machine (vllm-ascend issue 4866)")
    launch = job.launch
    args = " ".join((*launch.args, *launch.head_args, *launch.worker_args))
    pool = next((c for c in KV_POOL_CONNECTORS if c in args), None)
    if pool is not None and topo.preset.chip == "Ascend910B":
        return (f"the job uses a KV pool ({pool}) on A2, whose direct transmission needs "
                "HCCL_INTRA_ROCE_ENABLE=1 (vllm-ascend docs/source/user_guide/feature_guide/"
                "kv_pool.md, section 5.1)")
    return None


def _direct(topo: Topology) -> str:
    """The direct link between the NPUs of one server on ``topo``'s hardware, for hints:
    HCCL's "PCIe" mode (no RoCE) uses whatever joins the NPUs, HCCS where the preset has
    HCCS groups (on 910A HCCS inside each group of 4, PCIe between the groups)."""
    groups = topo.preset.hccs_groups
    if not groups:
        return f"PCIe on {topo.preset.name}"
    if len(groups) > 1:
        return f"HCCS inside each HCCS group, PCIe between them, on {topo.preset.name}"
    return f"HCCS on {topo.preset.name}"


def _hccs_server(topo: Topology, job):
    """(server name, devices) of the first server where the job has two or more NPUs in one
    HCCS group (captured islands first, else the preset's), or None."""
    from rtc.cost.captured import restricted, server_islands

    for p in job.placements:
        used = sorted(p.device_ids)
        islands = server_islands(p.server) or topo.preset.hccs_groups or (tuple(used),)
        best = max(restricted(islands, used), key=len, default=())
        if len(best) > 1:
            return p.server.name, list(best)
    return None


def _intra_cost(topo: Topology, job, devices) -> str:
    """'; rtc's estimate of a 1 MiB AllReduce ...' for ``devices`` of one server over
    HCCS and over RoCE ('' when the cost inputs are unusable)."""
    import dataclasses

    from rtc.cost.links import Site, hardware_of

    base = hardware_of(topo.preset, env=job.env)
    roce = dataclasses.replace(base, hccs_groups=tuple((d,) for d in range(max(devices) + 1)),
                               cross_group_link=base.nic)
    sites = [Site(0, d) for d in devices]
    return _compare(topo, sites, roce, base, "over RoCE", "over HCCS")


def _compare(topo: Topology, sites, slow_hw, fast_hw, slow: str, fast: str) -> str:
    from rtc.cost.collectives import allreduce
    from rtc.cost.errors import CostInputError
    from rtc.cost.inputs import topology_params
    from rtc.cost.spans import group_span
    from rtc.cost.units import human_time

    try:
        params = topology_params(topo)
    except CostInputError:
        return ""
    ranks = range(len(sites))
    a = allreduce(MESSAGE, group_span(ranks, sites, slow_hw), params)
    b = allreduce(MESSAGE, group_span(ranks, sites, fast_hw), params)
    if a.seconds <= 0 or b.seconds <= 0:
        return ""
    return (f"; rtc's estimate of a 1 MiB AllReduce on {len(sites)} NPUs: "
            f"{human_time(a.seconds)} {slow} vs {human_time(b.seconds)} {fast} "
            f"({a.seconds / b.seconds:.1f}x)")


def _inter_hccs(topo: Topology, job, span):
    """RTC459: a warning with the cost where the job spans servers of one A3 super pod,
    a note elsewhere."""
    preset = topo.preset
    if preset.chip != "Ascend910_93" or not preset.super_pod:
        yield note(INTER_HCCS, f"job {job.name}: HCCL_INTER_HCCS_DISABLE has no effect on "
                   f"{preset.name}: HCCL reads it only on A3 super pods", span,
                   subject=f"job {job.name}", hint="remove it")
        return
    pods: dict = {}
    for p in job.placements:
        pods.setdefault(p.server.super_pod_id, []).append(p.server)
    shared = next(((pod, ss) for pod, ss in pods.items() if pod is not None and len(ss) > 1),
                  None)
    if shared is None:
        yield note(INTER_HCCS, f"job {job.name}: HCCL_INTER_HCCS_DISABLE=TRUE changes nothing "
                   "here: no two servers of the job share a super pod (it only moves traffic "
                   "between the servers of one super pod to RoCE)", span,
                   subject=f"job {job.name}", hint="remove it")
        return
    pod, servers = shared
    import dataclasses

    from rtc.cost.links import Site, hardware_of

    fast = hardware_of(preset)
    slow = dataclasses.replace(fast, hccs_inter_disabled=True)
    sites = [Site(0, 0, str(pod)), Site(1, 0, str(pod))]
    cost = _compare(topo, sites, slow, fast, "over RoCE", "over UB")
    names = ", ".join(s.name for s in servers[:4]) + (" ..." if len(servers) > 4 else "")
    yield warning(INTER_HCCS, f"job {job.name}: HCCL_INTER_HCCS_DISABLE=TRUE sends the "
                  f"traffic between its servers of super pod {pod} ({names}) over RoCE instead "
                  f"of HCCS / UB, and needs every NPU's device_ip{cost}", span,
                  subject=f"job {job.name}",
                  hint="drop it (FALSE is the default) unless RoCE inside the super pod is meant")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (INTRA_PAIR, INTRA_ROCE, INTRA_ROCE_IP, INTER_HCCS, INTRA_NOT_READ)
