"""Attributes that have no effect where they are written (RTC512): rtc reads them but
nothing it plans or writes uses them, so a user who wrote one believes something that will
not happen.

======================  ===================================================================
attribute               has no effect
======================  ===================================================================
``kv_connector``,       on a job that is in no prefill/decode pair (``role serve``/``train``
``kv_port``             without a ``disaggregation`` block naming it): no KV transfer
``entry``               on a vLLM job (vLLM serves ``model``; ``entry`` is the script of
                        mindspore / torch_npu / megatron jobs)
``model``,              on a job that is not vLLM (those run ``entry``)
``served_name``
``order``               on a job that is not Megatron-LM (vLLM's group order is fixed)
``kv_connector``,       on a MindIE job (MindIE moves the KV cache itself; rtc's config
``kv_port``,            fragment has no expert-parallel key)
``expert_parallel``,
``dcp``
``dcp``                 on a job that is not vLLM (only vLLM has decode context parallel)
``super_pod``,          on hardware without super pods (A2, 910A, generic): the rank table
``super_device_id``     is version 1.0 and carries neither
``device_ip``,          on NVIDIA GPU hardware: there is no rank table, and NCCL finds its
``gateway``, ``prefix`` peers through the host network and the HCAs
``ib_hca``,             on Ascend hardware: HCCL uses the NPUs' own RoCE ports (device_ip)
``nccl_topo_file``
``eid``, ``plane``,     on hardware whose rank table is not version 2.0 (all but Ascend
``port_eid``,           950): only 2.0 tables carry EIDs, planes, net layers and a backup
``level_ip``,           rank
``net_instance``,
``backup``
======================  ===================================================================
"""

from __future__ import annotations

from rtc.checks.a5_addresses import uses_eids
from rtc.diagnostics import warning
from rtc.model.topology import Job, Topology
from rtc.plan import Plan
from rtc.rules import rule

NOT_USED = rule("RTC512", "attribute-not-used", "warning",
                "An attribute has no effect on this job or hardware.", """
    What: e.g. `kv_connector` on a job that is in no prefill/decode pair, `entry` or
    `order` on a vLLM job, `model` on a Megatron job, `dcp` on a job that is not vLLM, or
    `super_pod` on A2 hardware.
    Why: rtc reads the value but nothing it writes uses it: the launch runs without the KV
    connector, the order, the model you named; the line only misleads the next reader.
    Example: `kv_connector mooncake` in a `role serve` job.
    Fix: remove the line, or make it apply (`role prefill` plus a decode job, `framework
    megatron`, hardware atlas-800-a3, ...).""")


def check(topo: Topology, plan: Plan):
    paired = {j.name for pair in plan.pairs if pair.prefill and pair.decode for j in pair.jobs}
    for job in topo.jobs:
        for key, why in _unused(job, job.name in paired):
            span = job.launch.span_of(key) or job.span_of(key)
            yield warning(NOT_USED, f"job {job.name}: `{key}` has no effect: {why}", span,
                          subject=f"job {job.name}", hint=f"remove `{key}`" + (
                              "" if job.framework == "mindie" and key in dict(_MINDIE_UNUSED)
                              else ", or " + _FIX[key]))
    pods = topo.preset.super_pod or any(lv.scope == "super_pod" for lv in topo.preset.levels)
    if not pods and topo.origin == "description":  # tables: RTC636
        yield from _super_pod_attributes(topo)
    if topo.preset.is_a5 and not uses_eids(topo.preset) and topo.origin == "description":
        yield from _ub_attributes(topo)
    if topo.origin == "description":
        yield from _vendor_attributes(topo)
    if not topo.preset.is_a5 and topo.origin == "description":
        yield from _rank_table_2_attributes(topo)


_FIX = {"kv_connector": "pair the job (`role prefill` / `role decode`, or a disaggregation "
                        "block)",
        "kv_port": "pair the job (`role prefill` / `role decode`, or a disaggregation block)",
        "entry": "use `framework mindspore`, `torch_npu` or `megatron`",
        "model": "use `framework vllm`", "served_name": "use `framework vllm`",
        "order": "use `framework megatron`", "dcp": "use `framework vllm`",
        "expert_parallel": "use `framework vllm`"}


_MINDIE_UNUSED = (
    ("kv_connector", "MindIE moves the KV cache between its prefill and decode instances "
     "itself (inferMode dmi); no connector is configured"),
    ("kv_port", "MindIE's prefill/decode traffic uses interCommPort, not a KV connector port"),
    ("expert_parallel", "rtc writes no MindIE expert-parallel key; set it in the model's "
     "ModelConfig of config.json"),
    ("dcp", "decode context parallel is vLLM's"),
)


def _unused(job: Job, paired: bool) -> list[tuple[str, str]]:
    """(attribute, why it does nothing) for the attributes of ``job`` without effect."""
    spec, given = job.launch, job.spans
    out = []
    if not paired and job.framework != "mindie":
        out += [(k, "the job is in no prefill/decode pair") for k in ("kv_connector", "kv_port")
                if k in given]
    vllm = job.framework in ("vllm", "sglang")      # both serve `model`
    if vllm and spec.entry is not None:
        out.append(("entry", f"{job.framework} jobs serve `model`"))
    if not vllm and job.framework != "mindie":  # MindIE: modelWeightPath / modelName
        out += [(k, f"framework {job.framework} runs `entry`") for k in ("model", "served_name")
                if getattr(spec, k) is not None]
        if "dcp" in given:
            out.append(("dcp", f"decode context parallel is vLLM's; framework {job.framework}"))
    if job.framework == "mindie":  # rtc's config fragment (rtc.plan.mindie) has no key for them
        out += [(k, why) for k, why in _MINDIE_UNUSED if k in given]
    if job.framework != "megatron" and "order" in given:
        out.append(("order", "only Megatron-LM reads an order string"))
    return out


def _super_pod_attributes(topo: Topology):
    """RTC512 once per server block (a family once) with super pod attributes on hardware
    without super pods."""
    seen: set = set()
    for s in topo.servers:
        key = s.family or s.name
        for attr in ("super_pod", "super_device_id"):
            if attr in s.spans and (key, attr) not in seen:
                seen.add((key, attr))
                yield warning(NOT_USED, f"server {s.name}: `{attr}` has no effect: "
                              f"{topo.preset.name} has no super pods (rank table "
                              f"{topo.preset.ranktable_version})", s.spans[attr],
                              subject=s.label, hint=f"remove `{attr}`, or use hardware "
                                                    + _POD_HARDWARE[topo.preset.is_a5])


#: Hardware with super pods, by whether the preset is an Ascend 950 one.
_POD_HARDWARE = {False: "atlas-800-a3", True: "atlas-950-superpod (or atlas-850 with super_pod)"}


def _ub_attributes(topo: Topology):
    """RTC512 once per server block for UB address attributes on Ascend 950 hardware
    without UB (the Atlas 350 card: no mesh, no super pod, no EID in its table)."""
    for s, attr in _written_once(topo, ("eid", "port_eid", "level_ip")):
        yield warning(NOT_USED, f"server {s.name}: `{attr}` has no effect: "
                      f"{topo.preset.name} has no UB level with ports, so its rank table "
                      "lists no EIDs (only the RoCE device_ip)", s.spans[attr],
                      subject=s.label, hint=f"remove `{attr}`, or use hardware "
                      "atlas-850 / atlas-950-superpod for UB-connected nodes")


def _vendor_attributes(topo: Topology):
    """RTC512 once per server block for attributes of the other vendor's hardware."""
    gpu = topo.preset.is_gpu
    attrs = ("device_ip", "gateway", "prefix") if gpu else ("ib_hca", "nccl_topo_file")
    why = ("NVIDIA GPU servers have no rank table; NCCL reaches its peers over the host "
           "network and the HCAs" if gpu else
           "HCCL uses the NPUs' own RoCE ports (device_ip), not host HCAs")
    for s, attr in _written_once(topo, attrs):
        yield warning(NOT_USED, f"server {s.name}: `{attr}` has no effect on "
                      f"{topo.preset.name}: {why}", s.spans[attr], subject=s.label,
                      hint=f"remove `{attr}`")


def _written_once(topo: Topology, attrs: tuple):
    """(server, attribute) for each of ``attrs`` written, once per server block (a
    family once)."""
    seen: set = set()
    for s in topo.servers:
        key = s.family or s.name
        for attr in attrs:
            if attr in s.spans and (key, attr) not in seen:
                seen.add((key, attr))
                yield s, attr


#: The rules this module reports (collected by rtc.catalogue).
RULES = (NOT_USED,)


_V2_ATTRS = ("eid", "port_eid", "level_ip", "plane", "net_instance", "backup")


def _rank_table_2_attributes(topo: Topology):
    """RTC512 once per server block for rank table 2.0 attributes on other hardware."""
    for s, attr in _written_once(topo, _V2_ATTRS):
        yield warning(NOT_USED, f"server {s.name}: `{attr}` has no effect: "
                      f"{topo.preset.name} uses rank table {topo.preset.ranktable_version}, "
                      "which has no UB addresses, net layers or backup rank", s.spans[attr],
                      subject=s.label, hint=f"remove `{attr}`, or use an Ascend 950 preset "
                      "(atlas-950-superpod, atlas-850, atlas-350)")
