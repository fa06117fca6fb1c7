"""Expert parallel and the model kind: the EP (= vllm-ascend MC2) group per PP stage when
PP > 1 (RTC330), expert parallel on a dense model (RTC331), and the MoE default rtc assumed
for a DP job whose model it does not know (RTC332). All are notes."""

from __future__ import annotations

from rtc.textfmt import compact, plural
from rtc.diagnostics import note
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

EP_PER_STAGE = rule("RTC330", "ep-groups-per-pp-stage", "note",
                    "Expert parallel with PP > 1: one EP (MC2) group per pipeline stage.", """
    What: with `expert_parallel on` and `pp` > 1, vLLM builds one EP group per PP stage:
    the DP*PCP*TP ranks of that stage across all DP replicas. vllm-ascend's MC2 group is
    the same rank list (since v0.18). rtc lists the groups and their servers.
    Why: MoE dispatch/combine (MC2, all-to-all) runs inside these groups, so their size
    and the servers they span decide MoE communication cost and which MC2 path vllm-ascend
    picks. vllm-ascend before v0.18 built MC2 as consecutive rank blocks, which does not
    match the EP group when PP > 1 (`-dp 2 -pp 4 -ep` crashed).
    Example: `dp 2` `pp 2` `tp 4` `expert_parallel on`: EP groups 0..3, 8..11 and 4..7, 12..15.
    Fix: nothing to fix; check the groups match your plan, and use vllm-ascend v0.18 or
    later with PP > 1 and expert parallel.""")
EP_DENSE = rule("RTC331", "ep-on-dense-model", "note",
                "expert_parallel is on, but the model is dense.", """
    What: the job says `model_kind dense` and `expert_parallel on`.
    Why: a dense model has no experts; vLLM builds no EP group for it and
    --enable-expert-parallel has no effect. Its DP replicas are independent worlds.
    Example: `model_kind dense` with `expert_parallel on`.
    Fix: drop `expert_parallel on`, or set `model_kind moe` if the model is MoE.""")

KIND_ASSUMED = rule("RTC332", "model-kind-assumed", "note",
                    "rtc assumed a MoE model for a DP job whose model it does not know.", """
    What: a job with `dp` > 1 writes no `model_kind` nor `expert_parallel on`, and rtc does
    not recognise its model
    (no `cost_model`, and the folder of its `model` path starts with no model rtc knows:
    `rtc cost --list-models`), so rtc used the default, `model_kind moe`.
    Why: the kind decides the worlds: the DP replicas of a MoE model share one world
    (one rank table, DP flags on the launch line); those of a dense model are
    independent worlds of TP x PP ranks each. A dense model launched as MoE runs DP
    replicas that wait on each other.
    Example: `dp 2` `tp 8` `model "/models/my-finetune"` without `model_kind`.
    Fix: write `model_kind dense` or `model_kind moe` (or `cost_model` with a preset
    or the model's config.json, from which rtc reads the kind).""")


def check(topo: Topology, plan: Plan):
    yield from _assumed_kinds(topo)
    yield from _ep_notes(topo)


def _assumed_kinds(topo: Topology):
    """RTC332 for each DP job (vLLM, SGLang) whose kind is rtc's default."""
    for job in topo.jobs:
        if (job.model_kind_from != "default" or job.dp <= 1 or not job.placements
                or job.framework == "megatron" or job.world_size > job.device_count):
            continue   # (more ranks than devices: RTC210 says what is wrong first)
        known = f"model {job.launch.model!r} is not one rtc knows" if job.launch.model \
            else "it names no model"
        yield note(KIND_ASSUMED, f"job {job.name}: no `model_kind` and {known}; rtc assumed "
                   f"`model_kind moe` (its {job.dp} DP replicas share one world of "
                   f"{job.world_size} ranks)", job.span, subject=f"job {job.name}",
                   hint="write `model_kind dense` (independent replicas) or `model_kind moe`,"
                        " or `cost_model PRESET|config.json` (rtc cost --list-models)")


def _ep_notes(topo: Topology):
    for job in topo.jobs:
        if not job.expert_parallel or not job.placements:
            continue
        if job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue   # an error about the unreadable attribute was reported already
        span = job.span_of("expert_parallel")
        if job.model_kind == "dense":
            why = "" if job.model_kind_from == "model_kind" else f" ({job.model_kind_from})"
            yield note(EP_DENSE, f"job {job.name}: expert_parallel is on but model_kind is "
                       f"dense{why}; "
                       "vLLM ignores it (no EP group, every DP replica is its own world)", span,
                       subject=f"job {job.name}",
                       hint="drop `expert_parallel on`, or set `model_kind moe`")
            continue
        if job.pp <= 1 or job.framework != "vllm":
            continue
        pl = topo.placement(job)
        parts = []
        for stage, members in enumerate(pl.groups("ep")):
            servers = [s for s in dict.fromkeys(pl.server_of(r) for r in members)
                       if s is not None]
            where = ", ".join(servers[:3]) + (f" +{len(servers) - 3} more" if len(servers) > 3
                                              else "")
            parts.append(f"stage {stage}: ranks {compact(members, 4)} ({where or 'no device'})")
            if stage == 3 and job.pp > 4:
                parts.append(f"... ({job.pp} stages)")
                break
        size = job.dp * job.pcp * job.tp
        yield note(EP_PER_STAGE, f"job {job.name}: expert parallel with pp {job.pp} gives "
                   f"{plural(job.pp, 'EP (MC2) group')} of {size} ranks, one per PP stage: "
                   + "; ".join(parts), span, subject=f"job {job.name}",
                   hint="`rtc groups FILE --dim ep` lists every member; use vllm-ascend v0.18 "
                        "or later (older MC2 groups ignore PP)")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (EP_PER_STAGE, EP_DENSE, KIND_ASSUMED)
