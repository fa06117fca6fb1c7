"""Per-layer communication schedule of a vLLM / vllm-ascend deployment, and its per-step
totals (reference ``cost-model.md`` §3, §5.4-5.5).

Per forward step of one DP rank (T tokens, H hidden, b activation bytes):

* **TP** (TP > 1): one AllReduce of T·H·b after attention (``o_proj``) in every layer and
  one after the MLP (``down_proj``) in every dense layer (``RowParallelLinear``, VLLM) —
  2 per layer for dense models. MoE layers: with ``ALLGATHER`` one more TP AllReduce
  after the MoE block; with ``MC2`` / ``ALLTOALL`` / ``FUSED_MC2`` a TP AllGather of
  T·H·b after the combine (``PrepareAndFinalizeWithAll2All.finalize``, VLLMA).
  Sequence parallelism turns each AllReduce into ReduceScatter + AllGather (§3.1).
* **EP** (MC2 / ALLTOALL / FUSED_MC2): dispatch and combine per MoE layer over the EP
  group, bytes per rank from :mod:`rtc.cost.moe`, the receive side scaled by the
  imbalance factor ι.
* **DP** (MoE, DP > 1): with ``ALLGATHER`` a DP AllGather and ReduceScatter of
  T·H·b·DP per MoE layer (VLLMA ``PrepareAndFinalizeWithAllGather``); every step a
  host-side (gloo) all_reduce of the DP token counts, α only (VLLM
  ``DPMetadata.num_tokens_across_dp``). Dense DP replicas do not talk.
* **PP** (PP > 1): per stage boundary, send-allgather: every TP rank sends 2·T·H·b/TP
  (hidden states and residual) to its peer of the next stage, which all-gathers the
  2·T·H·b inside its TP group (VLLM ``send_tensor_dict``); the bubble is not
  communication and is not counted.
* **DCP** (DCP > 1, inside TP): decode gathers the query heads and reduce-scatters the
  partial outputs with their LSE per layer; prefill all-gathers the context KV
  (VLLMA ``Design_Documents/context_parallel.md``; sizes **derived**, O(T·heads·dim)).
* **PCP > 1** is not supported by vllm-ascend (§3.8): reported as a note, not costed.

For every group kind the **slowest** group of that kind is costed (all groups of a kind
run at once and the step waits for the slowest). Steps are sequential: one micro-batch
of a DP rank goes through all L layers, so with PP the critical path holds all layers
plus PP-1 boundaries (reference §5.7 Example B). Per generated token = per-step total ÷
tokens generated per step by all DP ranks together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rtc.cost.collectives import (CollectiveCost, Stage, alltoall, collective,
                                  moe_exchange, send_recv)
from rtc.cost.deployment import Deployment, deployment_of_job
from rtc.cost.layout import Layout, layout_problems
from rtc.cost.errors import LayoutError
from rtc.cost.models import ModelSpec
from rtc.cost.moe import (MoeChoice, allgather_method_bytes, combine_bytes, dispatch_bytes,
                          mc2_capacity, select_moe_method, tokens_per_ep_rank)
from rtc.cost.params import CostParams
from rtc.cost.spans import GroupSpan, bottleneck, group_span, span_shape
from rtc.cost.units import human_bytes, human_time
from rtc.cost.workload import Workload, check_phase
from rtc.textfmt import compact

#: What every schedule result says about its own limits (reference §5.8).
LIMITS = ("communication only: no compute model, no TPOT prediction; absolute times are "
          "+-2x until calibrated with hccl_test (rankings are more robust); congestion, "
          "PFC/ECN and link faults are not modelled")
#: :data:`LIMITS` on NVIDIA GPUs, where nccl-tests (not hccl_test) is the measurement.
GPU_LIMITS = ("communication only: no compute model, no TPOT prediction; absolute times are "
              "+-2x until compared with nccl-tests on the servers (all_reduce_perf in "
              "preflight-<server>.sh, read by rtc preflight nccl; rankings are more "
              "robust); congestion, PFC/ECN and link faults are not modelled")


def limits_of(step) -> str:
    """The limits line of ``step`` (:data:`GPU_LIMITS` for a GPU deployment, else
    :data:`LIMITS`)."""
    return GPU_LIMITS if GPU_LIMITS in step.notes else LIMITS


@dataclass(frozen=True)
class GroupCost:
    """One kind of traffic of one group kind, costed on the slowest group of the kind.

    ``kind`` (``tp``, ``ep``, ``dp``, ``pp``, ``dcp``), ``op`` (AllReduce, AllGather,
    ReduceScatter, dispatch, combine, Send/Recv, host all_reduce), ``groups`` how many
    groups of the kind exist, ``ranks`` the costed group, ``span`` its span class,
    ``bottleneck`` its slowest link class, ``bytes_per_call`` (bytes, in the operator's
    meaning), ``calls_per_layer`` (averaged over all layers) and ``calls_per_step``,
    ``cost`` one call (seconds, α/β parts, stages), ``why`` the source of the traffic."""

    kind: str
    op: str
    groups: int
    ranks: tuple[int, ...]
    span: str
    bottleneck: str
    bytes_per_call: float
    calls_per_layer: float
    calls_per_step: float
    cost: CollectiveCost
    why: str
    overlap: float = 0.0

    @property
    def time_per_call(self) -> float:
        """Seconds of one call on the costed group."""
        return self.cost.seconds

    @property
    def time_per_layer(self) -> float:
        """Seconds per layer (calls per layer · time per call, after the overlap φ)."""
        return self.calls_per_layer * self.cost.seconds * (1 - self.overlap)

    @property
    def time_per_step(self) -> float:
        """Seconds per step on the critical path (after the overlap share φ)."""
        return self.calls_per_step * self.cost.seconds * (1 - self.overlap)


@dataclass(frozen=True)
class StepCost:
    """Communication of one forward step: ``rows`` per group kind and op, ``tokens`` T
    per DP rank, ``generated`` tokens produced per step by all DP ranks, the MoE method
    (None for dense models) and notes (assumptions and :data:`LIMITS`)."""

    phase: str
    layout: Layout
    model: str
    params: str
    tokens: int
    generated: float
    moe: MoeChoice | None
    rows: tuple[GroupCost, ...]
    notes: tuple[str, ...]

    @property
    def total(self) -> float:
        """Seconds of communication per step (sum of the rows)."""
        return sum(r.time_per_step for r in self.rows)

    @property
    def per_token(self) -> float:
        """Seconds of communication per generated token (decode) or prompt token
        (prefill), all DP ranks together."""
        return self.total / self.generated if self.generated else 0.0

    @property
    def dominant(self) -> GroupCost | None:
        """The row with the largest time per step (None without rows)."""
        return max(self.rows, key=lambda r: r.time_per_step, default=None)


# --------------------------------------------------------------------------- helpers

@dataclass(frozen=True)
class _Ctx:
    dep: Deployment
    model: ModelSpec
    work: Workload
    params: CostParams
    phase: str
    tokens: int
    choice: MoeChoice | None

    @property
    def act(self) -> float:
        """T·H·b bytes: one activation tensor of the step."""
        return float(self.tokens * self.model.hidden_size * self.work.activation_bytes)


def _span_key(span: GroupSpan) -> tuple:
    return (span.size, span.levels, span.peers, span.classes, span.servers,
            span.super_pods, span.span)


def unique_spans(dep: Deployment, kind: str,
                 groups=None) -> tuple[tuple[GroupSpan, ...], int]:
    """The spans of ``dep``'s groups of ``kind``, one per shape
    (:func:`rtc.cost.spans.span_shape`: the first group of a shape stands for all), and
    the number of groups; ``groups`` given: those rank tuples, cached under ``kind``.
    Computed once per deployment and kind (cached on ``dep``)."""
    got = dep.span_cache.get(kind)
    if got is None:
        groups = dep.groups.get(kind, ()) if groups is None else groups
        shapes: set[tuple] = set()
        spans = []
        for g in groups:
            if len(g) < 2:
                continue
            shape = span_shape(g, dep.sites)
            if shape in shapes:
                continue
            shapes.add(shape)
            span = group_span(g, dep.sites, dep.hardware)
            if span.size >= 2:
                spans.append(span)
        got = dep.span_cache[kind] = (tuple(spans), len(groups))
    return got


def _worst(ctx: _Ctx, kind: str, cost_of,
           groups=None) -> tuple[GroupSpan, CollectiveCost, int] | None:
    """The slowest group of ``kind`` (or of ``groups``, cached under ``kind``) under
    ``cost_of(span)``, its cost and the number of groups; None when no group has two
    placed ranks. Spans of the same key are costed once."""
    spans, count = unique_spans(ctx.dep, kind, groups)
    seen: dict[tuple, tuple[GroupSpan, CollectiveCost]] = {}
    best = None
    for span in spans:
        key = _span_key(span)
        if key not in seen:
            seen[key] = (span, cost_of(span))
            if best is None or seen[key][1].seconds > best[1].seconds:
                best = seen[key]
    return None if best is None else (best[0], best[1], count)


def _row(ctx: _Ctx, kind: str, op: str, nbytes: float, calls: float, why: str, *,
         group_kind: str | None = None, per_layer: bool = True) -> GroupCost | None:
    """A :class:`GroupCost` for ``calls`` calls per step of collective ``op``."""
    if calls <= 0 or nbytes <= 0:
        return None
    got = _worst(ctx, group_kind or kind,
                 lambda s: collective(op, nbytes, s, ctx.params, ctx.dep.options))
    return _as_row(ctx, kind, op, nbytes, calls, why, got, per_layer=per_layer)


def _as_row(ctx: _Ctx, kind: str, op: str, nbytes: float, calls: float, why: str, got,
            overlap: float = 0.0, per_layer: bool = True) -> GroupCost | None:
    """``calls`` per step; per layer = calls / layers, or 0 for per-step traffic."""
    if got is None:
        return None
    span, cost, count = got
    link = _time_bottleneck(cost) or bottleneck(span, ctx.params)
    return GroupCost(kind, _OP_LABEL.get(op, op), count, span.ranks, span.span, link, nbytes,
                     calls / ctx.model.num_layers if per_layer else 0.0, calls, cost, why,
                     overlap)


def _time_bottleneck(cost: CollectiveCost) -> str | None:
    """The link class the call spends most time on (its stages' seconds summed per
    link): what the α and β shown come from. None without stages."""
    per_link: dict[str, float] = {}
    for st in cost.stages:
        per_link[st.link] = per_link.get(st.link, 0.0) + st.seconds
    return max(per_link, key=per_link.get) if per_link else None


_OP_LABEL = {"allreduce": "AllReduce", "allgather": "AllGather",
             "reduce_scatter": "ReduceScatter", "alltoall": "AlltoAll",
             "send_recv": "Send/Recv"}


# --------------------------------------------------------------------------- rows

def _moe_choice(dep: Deployment, model: ModelSpec, work: Workload,
                tokens: int) -> MoeChoice | None:
    if not (dep.moe and model.is_moe):
        return None
    lay = dep.layout
    cap = mc2_capacity(lay.tp, work.mc2_base_tokens(), fused=work.fused_mc2)
    if work.moe_method is not None:
        return MoeChoice(work.moe_method, "forced by the workload", cap)
    return select_moe_method(dep.hardware.family, expert_parallel=lay.expert_parallel,
                             ep_size=lay.ep_size, experts=model.routed_experts,
                             tokens=tokens, capacity=cap, fused_mc2=work.fused_mc2)


def _tp_rows(ctx: _Ctx) -> list[GroupCost | None]:
    if ctx.dep.layout.tp <= 1:
        return []
    m = ctx.model
    method = ctx.choice.method if ctx.choice else None
    moe_layers = m.moe_layers if ctx.choice else 0
    ar_calls = m.num_layers + (m.num_layers - moe_layers) + \
        (moe_layers if method == "ALLGATHER" else 0)
    why = "RowParallelLinear all-reduce after o_proj and the MLP (VLLM linear.py)"
    rows: list[GroupCost | None] = []
    if ctx.work.sequence_parallel:
        rows += [_row(ctx, "tp", "reduce_scatter", ctx.act, ar_calls, why + ", SP: RS"),
                 _row(ctx, "tp", "allgather", ctx.act, ar_calls, why + ", SP: AG")]
    else:
        rows.append(_row(ctx, "tp", "allreduce", ctx.act, ar_calls, why))
    if method in ("MC2", "ALLTOALL", "FUSED_MC2"):
        rows.append(_row(ctx, "tp", "allgather", ctx.act, moe_layers,
                         "TP all-gather after the MoE combine (VLLMA prepare_finalize.py)"))
    return rows


def _ep_rows(ctx: _Ctx) -> list[GroupCost | None]:
    if ctx.choice is None or ctx.choice.method == "ALLGATHER":
        return []
    m, w, lay = ctx.model, ctx.work, ctx.dep.layout
    t_r = tokens_per_ep_rank(ctx.tokens, lay.tp)
    sizes = {"dispatch": dispatch_bytes(t_r, m.experts_per_token, m.hidden_size,
                                        w.dispatch_bytes, w.scale_bytes),
             "combine": combine_bytes(t_r, m.experts_per_token, m.hidden_size,
                                      w.combine_bytes)}
    rows = []
    for op, nbytes in sizes.items():
        if ctx.choice.method == "ALLTOALL":
            def cost_of(s, n=nbytes):
                return alltoall(n, s, ctx.params, ctx.dep.options, imbalance=w.imbalance)
        else:
            def cost_of(s, n=nbytes, o=op):
                return moe_exchange(o, n, s, ctx.params, imbalance=w.imbalance)
        got = _worst(ctx, "ep", cost_of)
        why = (f"{ctx.choice.method} {op}: {t_r} tokens x top-{m.experts_per_token} per EP "
               f"rank ({ctx.choice.reason}; VLLMA ascend_forward_context.py)")
        rows.append(_as_row(ctx, "ep", op, nbytes, m.moe_layers, why, got, w.overlap))
    return rows


def _dp_rows(ctx: _Ctx) -> list[GroupCost | None]:
    lay = ctx.dep.layout
    if ctx.choice is None or lay.dp <= 1:
        return []
    rows: list[GroupCost | None] = []
    if ctx.choice.method == "ALLGATHER":
        n = allgather_method_bytes(ctx.tokens, ctx.model.hidden_size,
                                   ctx.work.activation_bytes, lay.dp)
        kind = "moe" if ctx.work.sequence_parallel else "dp"
        why = "ALLGATHER MoE: DP all-gather / reduce-scatter of T_max.H.b.DP (VLLMA)"
        rows += [_row(ctx, "dp", "allgather", n, ctx.model.moe_layers, why, group_kind=kind),
                 _row(ctx, "dp", "reduce_scatter", n, ctx.model.moe_layers, why,
                      group_kind=kind)]
    rows.append(_host_row(ctx))
    return rows


def _host_row(ctx: _Ctx) -> GroupCost | None:
    """vLLM's per-step CPU (gloo) all_reduce of the DP token counts: α only,
    2⌈log₂DP⌉ host steps (**derived**; host α is an assumption, links.toml)."""
    dp = ctx.dep.layout.dp
    groups = ctx.dep.groups.get("dp", ())
    if not groups:
        return None
    steps = 2 * math.ceil(math.log2(dp))
    stage = Stage("host", "allreduce", "host-gloo", "host-tcp", dp, 4.0 * dp, steps,
                  steps * ctx.params.host_alpha, 0.0)
    cost = CollectiveCost("allreduce", 4.0 * dp, dp, "host-gloo", (stage,),
                          ("host-side: CPU gloo all_reduce over TCP",))
    return GroupCost("dp", "host all_reduce", len(groups), tuple(groups[0]), "host",
                     "host-tcp", 4.0 * dp, 0.0, 1.0, cost,
                     "DPMetadata.num_tokens_across_dp (VLLM forward_context.py)")


def _pp_rows(ctx: _Ctx) -> list[GroupCost | None]:
    lay = ctx.dep.layout
    if lay.pp <= 1:
        return []
    boundary = 2 * ctx.act
    pairs = tuple((g[i], g[i + 1]) for g in ctx.dep.groups.get("pp", ())
                  for i in range(len(g) - 1))
    got = _worst(ctx, "pp-boundary", lambda s: send_recv(boundary / lay.tp, s, ctx.params),
                 pairs)
    why = "PP boundary: hidden states + residual, send-allgather (VLLM parallel_state.py)"
    rows = [_as_row(ctx, "pp", "send_recv", boundary / lay.tp, lay.pp - 1, why, got,
                    per_layer=False)]
    if lay.tp > 1:
        rows.append(_row(ctx, "pp", "allgather", boundary, lay.pp - 1,
                         "PP boundary: receiver all-gathers inside its TP group (VLLM)",
                         group_kind="tp", per_layer=False))
    return rows


def _dcp_rows(ctx: _Ctx) -> list[GroupCost | None]:
    lay, m = ctx.dep.layout, ctx.model
    if lay.dcp <= 1:
        return []
    heads = m.num_attention_heads * lay.dcp / lay.tp
    b = ctx.work.activation_bytes
    why = "DCP (derived from VLLMA Design_Documents/context_parallel.md)"
    if ctx.phase == "prefill":
        ctx_tokens = ctx.work.context_tokens or ctx.tokens
        return [_row(ctx, "dcp", "allgather", ctx_tokens * m.kv_bytes_per_token(b),
                     m.num_layers, why + ": context KV all-gather")]
    q = ctx.tokens * heads * m.q_head_dim * b
    out = ctx.tokens * heads * ((m.v_head_dim or m.q_head_dim) * b + 4)
    return [_row(ctx, "dcp", "allgather", q, m.num_layers, why + ": query heads"),
            _row(ctx, "dcp", "reduce_scatter", out, m.num_layers,
                 why + ": partial outputs + LSE")]


# --------------------------------------------------------------------------- entry points

def schedule(dep: Deployment, model: ModelSpec, workload: Workload, params: CostParams,
             phase: str = "decode") -> StepCost:
    """The communication of one forward step of ``dep`` running ``model`` in ``phase``
    (``decode`` or ``prefill``): rows per group kind (module docstring), totals, and
    the MoE method. Raises :class:`LayoutError` when the layout does not fit the model
    (:func:`layout_problems`). Times in seconds, sizes in bytes."""
    check_phase(phase)
    problems = layout_problems(dep.layout, model)
    if problems:
        raise LayoutError(f"{dep.layout.label} cannot run {model.name}: " + "; ".join(problems))
    tokens = workload.tokens(phase)
    ctx = _Ctx(dep, model, workload, params, phase, tokens,
               _moe_choice(dep, model, workload, tokens))
    rows = [r for fn in (_tp_rows, _ep_rows, _dp_rows, _pp_rows, _dcp_rows)
            for r in fn(ctx) if r is not None]
    notes = list(dep.problems)
    if dep.layout.pcp > 1:
        notes.append("PCP > 1 is not supported by vllm-ascend (context_parallel.md); "
                     "its traffic is not costed")
    notes.append("vocab-parallel embedding and logits gathers are not included "
                 "(reference 3.1: derived, not checked)")
    if dep.hardware.family == "nvidia" and ctx.choice is not None:
        notes.append("NVIDIA GPUs: the MoE method and its dispatch/combine are vllm-ascend's "
                     "(MC2 / ALLGATHER / ALLTOALL); vLLM on GPUs uses its own all2all "
                     "backends, so read the EP rows as indicative")
    notes.append(GPU_LIMITS if dep.hardware.family == "nvidia" else LIMITS)
    label = params.name + "".join(f" {o}" for o in params.overrides)
    return StepCost(phase, dep.layout, model.name, label, tokens,
                    dep.layout.dp * workload.generated(phase), ctx.choice, tuple(rows),
                    tuple(notes))


#: Row operators NCCL runs as collectives (their HCCL algorithm names are replaced on GPUs).
_NCCL_OPS = ("AllReduce", "AllGather", "ReduceScatter", "Broadcast")


def with_nccl_note(step: StepCost, dep: Deployment, params: CostParams,
                   nics: int | None = None) -> StepCost:
    """``step`` told in NCCL's terms for a GPU deployment (``step`` itself otherwise):
    the collective rows name the algorithm NCCL picks (``NCCL ring`` / ``nvls`` / ``tree``
    for an AllReduce, :func:`rtc.cost.nccl.nccl_choice`; ``NCCL`` for the others) instead
    of HCCL's, with a note that their times are rtc's common formulas; and, when a TP
    group, or the EP group of a DP job with expert parallel, spans servers, the line of
    :func:`rtc.cost.nccl.cross_server_note` for the largest such group before the
    limits. ``nics``: NICs per server (the servers' ``ib_hca``; None: the preset's). For
    ``rtc cost`` (the advisor, which scores many layouts, does not pay for it)."""
    from dataclasses import replace

    from rtc.cost.nccl import cross_server_note, nccl_choice

    if dep.hardware.family != "nvidia":
        return step
    rows, spans = [], []
    for r in step.rows:
        span = group_span(r.ranks, dep.sites, dep.hardware)
        if r.op in _NCCL_OPS and span.size > 1 and r.cost.stages:
            algo = "NCCL" if r.op != "AllReduce" else \
                f"NCCL {nccl_choice(r.bytes_per_call, span, params, nics=nics).algorithm}"
            r = replace(r, cost=replace(r.cost, algorithm=algo))
        rows.append(r)
        ep_ar = r.kind == "ep" and dep.layout.dp > 1 and dep.layout.expert_parallel
        if span.servers > 1 and ((r.kind == "tp" and r.op == "AllReduce") or ep_ar):
            spans.append((span.size, r.kind, r.ranks, span))
    notes = list(step.notes[:-1])
    if any(r.cost.algorithm.startswith("NCCL") for r in rows):
        notes.append("NVIDIA GPUs: the algorithm of a collective row is the one NCCL picks "
                     "(rtc/cost/nccl.py); its time is rtc's common collective formula over "
                     "the NCCL link classes")
    if spans:
        _size, kind, ranks, span = max(spans, key=lambda x: x[0])
        line = cross_server_note(span, params, nics=nics,
                                 group=f"the {kind.upper()} group {compact(ranks)}")
        notes += [line] if line else []
    return replace(step, rows=tuple(rows), notes=tuple(notes) + step.notes[-1:])


def job_schedule(topology, job, model: ModelSpec, workload: Workload, params: CostParams,
                 phase: str = "decode") -> StepCost:
    """:func:`schedule` for a job of a compiled rtc Topology."""
    return schedule(deployment_of_job(topology, job), model, workload, params, phase)


def explain(step: StepCost) -> str:
    """A short explanation of the bottleneck: which group and link class dominate the
    step, whether the call is α-bound or β-bound, and the message size against the
    crossover size (where the β part would equal the α part)."""
    top = step.dominant
    if top is None or step.total <= 0:
        return f"{step.layout.label}: no communication in {step.phase}."
    c = top.cost
    share = top.time_per_step / step.total
    link = top.bottleneck
    lines = [
        f"{top.kind.upper()} group ({compact(top.ranks)}, {top.span}) dominates over {link}: "
        f"{top.calls_per_step:g} x {human_bytes(top.bytes_per_call)} {top.op} per step = "
        f"{human_time(top.time_per_step)} ({share:.0%} of {human_time(step.total)}).",
        f"Per call {human_time(c.seconds)} = alpha {human_time(c.alpha)} + beta "
        f"{human_time(c.beta + c.gamma)} ({c.algorithm}): {c.regime}, message "
        f"{human_bytes(top.bytes_per_call)} vs crossover "
        f"{human_bytes(c.crossover) if math.isfinite(c.crossover) else 'none'}."]
    if c.regime == "alpha-bound" and top.span in ("cross-server", "cross-superpod"):
        lines.append("The cost grows with the number of slow steps over the network, not "
                     "with bytes: a layout that keeps this group inside one server (or "
                     "super pod) avoids them.")
    elif c.regime == "beta-bound":
        lines.append(f"The cost grows with bytes over {link}; fewer bytes per call or a "
                     f"faster link class helps.")
    return "\n".join(lines)


def _num(x: float) -> float | None:
    """A number for JSON: None for inf / nan (strict JSON has no Infinity)."""
    return x if math.isfinite(x) else None


def to_dict(step: StepCost) -> dict:
    """Plain data for JSON output (seconds and bytes as numbers; an infinite crossover,
    where nothing is transferred, as null)."""
    return {
        "phase": step.phase, "layout": step.layout.label, "model": step.model,
        "params": step.params, "tokens_per_dp_rank": step.tokens,
        "generated_per_step": step.generated, "moe_method": step.moe.method if step.moe else None,
        "total_s": step.total, "per_token_s": step.per_token, "explain": explain(step),
        "notes": list(step.notes),
        "groups": [{"kind": r.kind, "op": r.op, "groups": r.groups, "ranks": list(r.ranks),
                    "span": r.span, "bottleneck": r.bottleneck, "bytes_per_call": r.bytes_per_call,
                    "calls_per_layer": r.calls_per_layer, "calls_per_step": r.calls_per_step,
                    "algorithm": r.cost.algorithm, "time_per_call_s": r.time_per_call,
                    "alpha_s": r.cost.alpha, "beta_s": r.cost.beta + r.cost.gamma,
                    "time_per_layer_s": r.time_per_layer, "time_per_step_s": r.time_per_step,
                    "regime": r.cost.regime, "crossover_bytes": _num(r.cost.crossover),
                    "why": r.why,
                    "stages": [{"label": s.label, "algorithm": s.algorithm, "link": s.link,
                                "bytes": s.nbytes, "alpha_s": s.alpha, "beta_s": s.beta,
                                "gamma_s": s.gamma} for s in r.cost.stages]}
                   for r in step.rows]}


__all__ = ["GroupCost", "LIMITS", "StepCost", "explain", "job_schedule", "layout_problems",
           "schedule", "to_dict"]
