"""What ``rtc cost`` and ``rtc advise`` print: text (the tables of
:mod:`rtc.report.cost_tables` with a header saying which model and parameters were
used), JSON documents (``schemas/cost-report.schema.json``,
``schemas/advice.schema.json``) and the advisor's best layouts as ready ``.rtc`` job
blocks. Pure string and dict building; no printing."""

from __future__ import annotations

import json

from rtc.cost.jobs import Advice, JobCost
from rtc.cost.layouts import LayoutScore
from rtc.cost.schedule import LIMITS, explain, limits_of, to_dict
from rtc.cost.units import human_bytes, human_time
from rtc.report.cost_tables import rank_label, ranking_table, step_table

COST_FORMAT = "rtc-cost/1"
ADVICE_FORMAT = "rtc-advice/1"


def cost_text(costs: list[JobCost]) -> str:
    """One block per job and phase: ``job NAME: model ...`` then the step table."""
    out = []
    for jc in costs:
        for step in jc.steps:
            out.append(f"job {jc.job.name}: model {jc.model.label}\n{step_table(step)}")
    return "\n\n".join(out) + "\n"


def group_cost_lines(jc: JobCost) -> tuple[str, ...]:
    """One line per row of the job's first phase: ``TP AllReduce: 34.2 us per call
    (918 KB over hccs-910b, intra-server), 2.19 ms per decode step``, then the total."""
    step = jc.steps[0]
    out = [f"{r.kind.upper()} {r.op}: {human_time(r.time_per_call)} per call "
           f"({human_bytes(r.bytes_per_call)} over {r.bottleneck}, {r.span}), "
           f"{human_time(r.time_per_step)} per {step.phase} step" for r in step.rows]
    out.append(f"communication {human_time(step.total)} per {step.phase} step "
               f"({jc.model.spec.name}, params {step.params}; rtc cost for details)")
    return tuple(out)


def cost_document(costs: list[JobCost], source: str) -> dict:
    """The JSON form: format tag, source file, and per job its model and one schedule
    per phase (:func:`rtc.cost.schedule.to_dict`: seconds and bytes as numbers)."""
    steps = [s for jc in costs for s in jc.steps]
    return {"format": COST_FORMAT, "source": source,
            "limits": limits_of(steps[0]) if steps else LIMITS,
            "jobs": [{"job": jc.job.name, "model": jc.model.spec.name,
                      "model_source": jc.model.source,
                      "phases": [to_dict(s) for s in jc.steps]} for jc in costs]}


def _with_ties(ranking, i: int) -> str:
    """``scores[i]``'s label, then the layouts it ties with: ``TP8 (tied with DP2 x TP4)``."""
    tied = ranking.tied(i)
    label = ranking.scores[i].layout.label
    return label + (f" (tied with {', '.join(t.label for t in tied)})" if tied else "")


def _verdict(advice: Advice) -> str:
    ranking = advice.ranking
    scores = ranking.scores
    i = advice.current_index
    label = advice.current.label
    reason = next((r.reason for r in ranking.rejected
                   if r.layout == advice.current), "it was not enumerated")
    if not scores:
        return ("no layout could be scored: every one was rejected (the reasons are "
                f"above); your layout {label}: {reason}")
    best = scores[0]
    if i is None:
        return (f"your layout {label} is not scored: {reason}. Best: {_with_ties(ranking, 0)} "
                f"({human_time(best.per_token)} per token).")
    mine, rank, tied = scores[i], ranking.rank(i), ranking.tied(i)
    if rank == 1 and tied:
        return (f"your layout {label} is tied best of {len(scores)} with "
                f"{', '.join(t.label for t in tied)} ({human_time(mine.per_token)} per token "
                "each: the same communication time, so the model does not choose between "
                "them).")
    if rank == 1:
        return f"your layout {label} is the best of {len(scores)} ({human_time(mine.per_token)} per token)."
    where = (f"your layout {_with_ties(ranking, i)} ranks {'=' if tied else ''}{rank} of "
             f"{len(scores)}")
    if not best.per_token:
        return (f"{where}: {human_time(mine.per_token)} per token; the best, "
                f"{_with_ties(ranking, 0)}, does not communicate at all in this phase (its "
                "replicas share nothing).")
    ratio = mine.per_token / best.per_token
    return (f"{where}: {human_time(mine.per_token)} per token, {ratio:.1f}x the best, "
            f"{_with_ties(ranking, 0)} ({human_time(best.per_token)}). Why the best wins:\n  "
            + explain(best.step).replace("\n", "\n  "))


def advice_text(advice: Advice, top: int) -> str:
    """The ranking table (best ``top``), the job's own layout marked, and a verdict."""
    c = advice.cluster
    servers = f"{c.servers} server{'s' if c.servers != 1 else ''}"
    devices = "GPUs" if c.hardware.family == "nvidia" else "NPUs"
    head = (f"rtc advise: job {advice.job.name}, {servers} x {c.npus_per_server} "
            f"{devices} ({c.hardware.preset}), {advice.phase}, model {advice.model.label}, "
            f"params {advice.params.name}"
            + "".join(f" {o}" for o in advice.params.overrides)
            + f"; PP up to {advice.max_pp}"
            + (" (--max-pp N searches pipelines: their bubble is not communication and "
               "is not in the score)" if advice.max_pp == 1 else ""))
    table = ranking_table(advice.ranking, top, limits=False)
    i = advice.current_index
    if i is not None and i < top:
        lines = table.split("\n")
        lines[i + 1] = lines[i + 1] + "   <- your layout"
        table = "\n".join(lines)
    return (f"{head}\n{table}\nverdict: {_verdict(advice)}{_dropped(advice)}\n"
            f"limits: {LIMITS}\n")


def _dropped(advice: Advice) -> str:
    """Lines for layouts that communicate less than the best scored one but were
    dropped because their KV cache cannot hold one sequence of max_model_len."""
    scores = advice.ranking.scores
    best = scores[0].per_token if scores else float("inf")
    cheaper = sorted((r for r in advice.ranking.rejected
                      if r.per_token is not None and r.per_token < best),
                     key=lambda r: r.per_token)
    return "".join(f"\n  dropped though cheaper: {r.layout.label} "
                   f"({human_time(r.per_token)} per token): {r.reason}" for r in cheaper[:3])


def _score(s: LayoutScore, rank: int, current: bool, tied: tuple = ()) -> dict:
    lay = s.layout
    return {"rank": rank, "tied_with": [t.label for t in tied], "layout": lay.label, "dp": lay.dp, "pp": lay.pp, "tp": lay.tp,
            "pcp": lay.pcp, "expert_parallel": lay.expert_parallel,
            "per_token_s": s.per_token, "per_step_s": s.step.total,
            "moe_method": s.moe_method, "pp_bubble": s.bubble, "dominant": s.dominant,
            "current": current,
            "kv_tokens_per_rank": s.kv.tokens if s.kv else None,
            "max_concurrency": s.kv.concurrency if s.kv else None,
            "max_model_len": s.kv.max_model_len if s.kv else None}


def advice_document(advice: Advice, top: int, source: str) -> dict:
    """The JSON form: every scored layout up to ``top`` best first, the job's own rank
    (1-based, null when not scored; tied layouts share a rank and list each other in
    ``tied_with``), and the rejected layouts with reasons."""
    i = advice.current_index
    return {"format": ADVICE_FORMAT, "source": source, "job": advice.job.name,
            "phase": advice.phase, "model": advice.model.spec.name,
            "model_source": advice.model.source, "params": advice.params.name,
            "overrides": list(advice.params.overrides),
            "servers": advice.cluster.servers,
            "npus_per_server": advice.cluster.npus_per_server, "max_pp": advice.max_pp,
            "current": {"layout": advice.current.label,
                        "rank": None if i is None else advice.ranking.rank(i)},
            "scored": len(advice.ranking.scores),
            "layouts": [_score(s, advice.ranking.rank(n), n == i, advice.ranking.tied(n))
                        for n, s in enumerate(advice.ranking.scores[:top])],
            "rejected": [{"layout": r.layout.label, "reason": r.reason,
                          "per_token_s": r.per_token} for r in advice.ranking.rejected],
            "limits": LIMITS}


def advice_rtc(advice: Advice, top: int) -> str:
    """The best ``top`` layouts as ``job`` blocks to paste into the .rtc file (the
    job's servers, sizes and model lines; other attributes of the job are not copied)."""
    job = advice.job
    servers = ", ".join(p.server.name for p in job.placements)
    blocks = []
    for n, s in enumerate(advice.ranking.scores[:top], 1):
        lay = s.layout
        rank = rank_label(advice.ranking, n - 1)
        lines = [f"# rtc advise #{rank}: {lay.label}, {human_time(s.per_token)} communication "
                 f"per token ({advice.phase}, params {advice.params.name})",
                 f"job {job.name}-{n} {{", f"  servers {servers}"]
        lines += [f"  {k} {v}" for k, v in (("dp", lay.dp), ("pp", lay.pp), ("tp", lay.tp))
                  if v > 1 or k == "tp"]
        if lay.expert_parallel:
            lines.append("  expert_parallel on")
        if job.launch.model:
            lines.append(f"  model {json.dumps(job.launch.model)}")
        lines.append(f"  cost_model {advice.model.spec.name.lower()}")
        blocks.append("\n".join(lines + ["}"]))
    return "\n\n".join(blocks) + "\n"


def links_block(fits, sources: list[str]) -> str:
    """A ``links`` block with one ``alpha`` and ``bandwidth`` line per fitted link (three
    significant digits)
    (:class:`rtc.cost.calibrate.LinkFit`), to paste into the .rtc file, with a comment
    per fit (samples, R², algorithm assumed) and the files it came from."""
    from rtc.cost.units import format_bandwidth, format_duration

    lines = [f"# rtc calibrate: {', '.join(sources)}"]
    for f in fits:
        lines.append(f"# {f.link}: {f.samples} sizes, R^2 {f.r2:.4f}, {f.algorithm} "
                     "algorithm assumed")
    lines.append("links {")
    for f in fits:
        lines.append(f"  param {f.link}.alpha = {format_duration(float(f'{f.alpha:.3g}'))}")
        lines.append(f"  param {f.link}.bandwidth = "
                     f"{format_bandwidth(float(f'{f.bandwidth:.3g}'))}")
    return "\n".join(lines + ["}"]) + "\n"
