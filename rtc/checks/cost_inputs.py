"""The cost model's inputs as written in the file: link parameters (RTC340), the model a
job is costed with (RTC341), a layout the model cannot run (RTC342), weights that do not
fit the NPUs' memory (RTC343).

Only jobs that name a model (``cost_model``, or a ``model`` path whose folder matches a
preset) are judged by RTC342/RTC343; the ``links`` block is judged whenever it is there.
The cost package is imported only then, so that files without cost inputs do not pay
for it at start-up.
"""

from __future__ import annotations

from rtc.diagnostics import error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

COST_PARAMETER = rule("RTC340", "cost-parameter", "error",
                      "A link parameter of the cost model is unknown or does not parse.", """
    What: a `param KEY = VALUE` line of the `links` block names no link class or field,
    or its value has no unit, a wrong unit or is negative or zero.
    Why: rtc cost, rtc advise and RTC310's numbers would otherwise use a parameter you
    did not mean; a calibrated value silently dropped makes every estimate wrong.
    Example: `param roce.alpha = 20` (no unit) or `param roce.latency = 20us`.
    Fix: `param roce.alpha = 20us`, `param hccs-910b.bandwidth = 150GB/s`;
    `rtc cost --list-params` lists the keys and units.""")
COST_MODEL = rule("RTC341", "cost-model", "error",
                  "The model named for the cost model cannot be read.", """
    What: `cost_model` names no preset, or its config.json is missing, not JSON, or
    lacks hidden_size / num_hidden_layers / num_attention_heads (and
    num_experts_per_tok for MoE models).
    Why: the communication volume of every layer comes from these sizes.
    Example: `cost_model deepseek-v9` or `cost_model "cfg/config.json"` without hidden_size.
    Fix: a preset from `rtc cost --list-models`, or the model's own Hugging Face config.json.""")
MODEL_LAYOUT = rule("RTC342", "model-layout", "error",
                    "The job's layout does not fit the model's heads or experts.", """
    What: the attention heads are not divisible by TP, the KV heads neither divide nor
    are divisible by TP, or the routed experts are not divisible by the EP size.
    Why: vLLM shards heads and experts evenly and refuses to start otherwise (the error
    comes only after the weights have started loading on every node).
    Example: Qwen2.5-72B (64 heads, 8 KV heads) with `tp 16` is fine; with `tp 12` not.
    Fix: a TP that divides the head count; an EP size (DP x TP) that divides the experts.
    A model guessed from the `model` path gives a warning: set `cost_model` to confirm.""")
WEIGHTS_HBM = rule("RTC343", "weights-exceed-hbm", "warning",
                   "The model's weights alone do not fit the NPUs' memory in this layout.", """
    What: the weights one rank holds (derived from the model's shape, sharded by TP, PP
    and EP as vLLM does) exceed 90% of the NPU's HBM.
    Why: loading fails with an out-of-memory error, or leaves no room for the KV cache.
    Example: DeepSeek-V3 W8A8 with `dp 2` `tp 8` and no expert parallel: every NPU would
    hold an eighth of all 256 experts (about 84 GB on a 64 GB 910B).
    Fix: turn on `expert_parallel`, raise TP or PP, or use more NPUs (rtc advise ranks the
    layouts that fit). The estimate ignores activations and KV cache: it is a lower bound.""")


def _links(topo: Topology):
    from rtc.cost.inputs import link_param_errors

    for exc in link_param_errors(topo):
        yield error(COST_PARAMETER, str(exc), exc.span or topo.links.span, hint=exc.hint)


def _job(topo: Topology, job):
    from rtc.cost.errors import CostInputError
    from rtc.cost.inputs import LocatedError, job_model
    from rtc.cost.layout import Layout, layout_problems
    from rtc.cost.memory import memory_problem

    try:
        choice = job_model(job)
    except LocatedError as exc:
        yield error(COST_MODEL, f"job {job.name}: {exc}", exc.span or job.span, hint=exc.hint)
        return
    if choice.spec is None:
        return
    explicit = job.cost.model is not None
    where = job.cost.spans.get("cost_model") if explicit else job.launch.span_of("model")
    try:
        layout = Layout(dp=job.dp, pp=job.pp, tp=job.tp, pcp=job.pcp,
                        expert_parallel=bool(job.expert_parallel))
    except CostInputError:
        return   # sizes the parallel checks already reported
    problems = layout_problems(layout, choice.spec)
    make = error if explicit else warning
    if problems:
        experts = all("expert" in p for p in problems)
        hint = ("turn expert_parallel off, or choose dp x tp that divides the routed "
                "experts" if experts else "choose a TP that divides the head count")
        yield make(MODEL_LAYOUT, f"job {job.name}: {choice.spec.name} cannot run "
                   f"{layout.label}: " + "; ".join(problems),
                   job.span_of("expert_parallel" if experts else "tp"),
                   hint=hint + " (rtc advise lists the layouts that fit)"
                   + ("" if explicit else f"; model {choice.source}"))
        return
    why = memory_problem(choice.spec, layout, choice.bytes_per_param, topo.preset.hbm_gb * 1e9)
    if why:
        first = "raise TP or PP" if job.expert_parallel else "turn on expert_parallel, raise TP or PP"
        yield warning(WEIGHTS_HBM, f"job {job.name}: {choice.spec.name} as {layout.label}: "
                      f"{why}", where or job.span,
                      hint=f"{first}, or add devices, or use 8-bit weights (rtc advise ranks "
                      "the layouts that fit)")


def costed_jobs(topo: Topology):
    """The vLLM jobs the cost checks judge: placed, complete, with a model (``cost_model``
    or a launch ``model`` path); shared by RTC341-343 and :mod:`rtc.checks.kv_capacity`."""
    for job in topo.jobs:
        if job.framework != "vllm" or not job.placements or job.incomplete:
            continue
        if job.cost.model is None and not job.launch.model:
            continue
        yield job


def check(topo: Topology, plan: Plan):
    """RTC340 for the ``links`` block; RTC341-343 for each vLLM job with a model."""
    if topo.links is not None:
        yield from _links(topo)
    for job in costed_jobs(topo):
        yield from _job(topo, job)


#: The rules this module reports (collected by rtc.catalogue).
RULES = (COST_PARAMETER, COST_MODEL, MODEL_LAYOUT, WEIGHTS_HBM)
