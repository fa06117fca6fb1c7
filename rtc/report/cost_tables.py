"""Plain-text tables of a communication-cost schedule and of a layout ranking (rtc.cost; reference ``cost-model.md``
§5.5, §5.7), for a later ``rtc cost`` / ``rtc advise`` command. Pure string building; no
printing."""

from __future__ import annotations

from rtc.cost.layouts import Ranking
from rtc.cost.schedule import LIMITS, StepCost, explain, limits_of
from rtc.cost.units import human_bytes, human_time
from rtc.textfmt import compact

_HEAD = ("kind", "op", "groups", "ranks", "span", "bottleneck", "bytes/call", "calls/layer",
         "t/call (alpha + beta)", "t/layer", "t/step")


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def step_table(step: StepCost) -> str:
    """The per-group table of ``step`` with per-step totals, the bottleneck explanation
    and the model's limits. Times with units (us, ms, s); sizes in decimal bytes."""
    rows = [_HEAD]
    for r in step.rows:
        c = r.cost
        rows.append((r.kind, r.op, str(r.groups), compact(r.ranks, 3), r.span, r.bottleneck,
                     human_bytes(r.bytes_per_call), f"{r.calls_per_layer:.3g}",
                     f"{human_time(c.seconds)} ({human_time(c.alpha)} + "
                     f"{human_time(c.beta + c.gamma)})", human_time(r.time_per_layer),
                     human_time(r.time_per_step)))
    method = f", MoE {step.moe.method}" if step.moe else ""
    lines = [f"rtc cost ({step.phase}, {step.model}, {step.layout.label}{method}, "
             f"params {step.params}, {step.tokens} tokens per DP rank)"]
    lines += _columns(rows) if step.rows else ["(no communication)"]
    unit = "generated token" if step.phase == "decode" else "prompt token"
    lines.append(f"total per step {human_time(step.total)}; per {unit} "
                 f"{human_time(step.per_token)} ({step.generated:g} tokens per step)")
    lines.append("explain: " + explain(step).replace("\n", "\n         "))
    limits = limits_of(step)
    lines += [f"note: {n}" for n in step.notes if n != limits]
    lines.append(f"limits: {limits}")
    return "\n".join(lines)


def _kv_cells(kv) -> tuple[str, str]:
    """KV tokens per rank and sequences of max_model_len at once ("-" when unknown)."""
    if kv is None:
        return "-", "-"
    seqs = f"{kv.concurrency:.2f} x {kv.max_model_len:,}" if kv.concurrency is not None \
        else "-"
    return f"{kv.tokens:,}", seqs


def rank_label(ranking: Ranking, i: int) -> str:
    """``scores[i]``'s rank as shown: ``3``, or ``=1`` when it ties with another layout
    (same per-token seconds)."""
    return ("=" if ranking.tied(i) else "") + str(ranking.rank(i))


def ranking_table(ranking: Ranking, limit: int = 10, *, rejected: int = 5,
                  limits: bool = True) -> str:
    """The best ``limit`` layouts of ``ranking`` (per-token and per-step communication,
    MoE method, the PP bubble share -- not communication, not in the score -- and the
    dominant term), then how many were rejected and the first ``rejected`` reasons, then
    the model's limits (unless ``limits`` is False). Tied layouts share a rank, shown
    ``=1`` (:func:`rank_label`)."""
    kv = any(s.kv is not None for s in ranking.scores[:limit])
    rows = [("#", "layout", "per token", "per step", "MoE", "PP bubble")
            + (("KV tokens/rank", "seqs at max len") if kv else ()) + ("dominant",)]
    for i, s in enumerate(ranking.scores[:limit]):
        rows.append((rank_label(ranking, i), s.layout.label, human_time(s.per_token),
                     human_time(s.step.total), s.moe_method or "-",
                     f"{s.bubble:.0%}" if s.bubble else "-")
                    + (_kv_cells(s.kv) if kv else ()) + (s.dominant,))
    lines = _columns(rows) if len(rows) > 1 else ["(no layout could be scored)"]
    if len(ranking.scores) > limit:
        lines.append(f"... {len(ranking.scores) - limit} more")
    if ranking.rejected:
        shown = ranking.rejected[:rejected]
        more = (f" (the first {len(shown)}; --format json lists all)"
                if len(shown) < len(ranking.rejected) else "")
        lines.append(f"rejected: {len(ranking.rejected)}{more}")
        lines += [f"  {r.layout.label}: {r.reason}" for r in shown]
    if limits:
        lines.append(f"limits: {LIMITS}")
    return "\n".join(lines)
