"""`rtc cost` and `rtc advise`: communication cost of a job's layout, and every layout of
its NPUs ranked (rtc.cost; reference cost-model.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import checked_topology, fail_usage, write_stdout
from rtc.checks.cost_inputs import MODEL_LAYOUT
from rtc.checks.kv_capacity import KV_NO_ROOM, KV_TOO_SMALL

_PHASES = {"decode": ("decode",), "prefill": ("prefill",), "both": ("decode", "prefill")}
_MAX_TOKENS = 10_000_000   # the language's prefill_tokens limit (decode_seqs: 1,000,000)


#: Errors ``rtc advise`` reports and goes on after: the layout does not fit the model's
#: heads or experts (RTC342), its KV cache (RTC344) or leaves no memory for one (RTC348),
#: which is what it ranks layouts for.
_ADVISE_TOLERATES = frozenset({MODEL_LAYOUT.code, KV_TOO_SMALL.code, KV_NO_ROOM.code})


def _compiled(file: Path, job: str | None, tolerated: frozenset = frozenset()):
    """The checked Topology and the chosen jobs; reports and exits on errors (1, except
    ``tolerated`` rule codes) or a bad --job (2)."""
    from rtc.api import compile_file
    from rtc.api.cost import JobChoiceError, chosen_jobs

    topology = checked_topology(compile_file(str(file)), tolerated)
    try:
        return topology, chosen_jobs(topology, job)
    except JobChoiceError as exc:
        fail_usage(str(exc))


def _options(preset, params, model, decode_seqs, prefill_tokens):
    from rtc.cost.jobs import CostOptions

    if model is not None and not model.strip():
        fail_usage("--model is empty", "a preset (rtc cost --list-models) or a config.json")
    if preset is not None and preset not in ("nominal", "hccl-plan"):
        fail_usage(f"--preset must be nominal or hccl-plan (not '{preset}')")
    return CostOptions(preset=preset, params=tuple(params or ()), model=model,
                       decode_seqs=decode_seqs, prefill_tokens=prefill_tokens)


def _listing(models: bool, params: bool, preset: str | None) -> bool:
    """Print the model presets or the parameter table; True when something was listed."""
    from rtc.cost.models import model_presets
    from rtc.cost.params import link_table, load_params, param_keys

    if models:
        write_stdout("".join(f"{m.name.lower():20} {m.source}\n" for m in model_presets()))
    if params:
        p = load_params(preset or "nominal")
        rows = "".join(f"{r['class']:12} alpha {r['alpha']:>8}  bandwidth {r['bandwidth']:>12}"
                       f"  {r['source']}\n" for r in link_table(p))
        write_stdout(f"parameter set {p.name}: {p.description}\n{rows}keys: "
                     + ", ".join(param_keys(p)) + "\n")
    return models or params


@app.command("cost")
def cost_command(
    file: Optional[Path] = typer.Argument(None, metavar="FILE", help="The .rtc cluster description."),
    job: Optional[str] = typer.Option(None, "--job", help="Only this job (default: every job)."),
    phase: Optional[str] = typer.Option(None, "--phase", help="decode, prefill or both (default: prefill for role prefill jobs, else decode)."),
    preset: Optional[str] = typer.Option(None, "--preset", help="Parameter set: nominal or hccl-plan (default: the links block's, else nominal)."),
    param: Optional[List[str]] = typer.Option(None, "--param", metavar="KEY=VALUE", help="Override one link parameter, e.g. roce.alpha=20us (repeatable; after the links block)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model preset or config.json (default: the job's cost_model)."),
    decode_seqs: Optional[int] = typer.Option(None, "--decode-seqs", min=1, max=1_000_000, help="Decode sequences per DP rank."),
    prefill_tokens: Optional[int] = typer.Option(None, "--prefill-tokens", min=1, max=_MAX_TOKENS, help="Prefill chunk tokens per DP rank."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    list_models: bool = typer.Option(False, "--list-models", help="List the model presets and exit."),
    list_params: bool = typer.Option(False, "--list-params", help="List the link parameters of the set and exit."),
) -> None:
    """Communication time per group, per layer and per step of FILE's jobs.

    One table per job and phase: group kind, op, ranks, span, bottleneck link, bytes per
    call, calls per layer, time per call (alpha + beta), per layer and per step; the
    totals and why the largest term is what it is. Communication only: no compute, and
    absolute times are +-2x until calibrated (rtc calibrate).

    Examples:

      rtc cost examples/a2-2node-dp2-tp8.rtc

      rtc cost cluster.rtc --phase both --param roce.alpha=20us --format json
    """
    from rtc.cost.errors import CostInputError

    if preset is not None and preset not in ("nominal", "hccl-plan"):
        fail_usage(f"--preset must be nominal or hccl-plan (not '{preset}')")
    if _listing(list_models, list_params, preset):
        return
    if file is None:
        fail_usage("missing FILE", "rtc cost FILE.rtc (or --list-models / --list-params)")
    if phase is not None and phase not in _PHASES:
        fail_usage(f"--phase must be decode, prefill or both (not '{phase}')")
    if fmt not in ("text", "json"):
        fail_usage(f"--format must be text or json (not '{fmt}')")
    options = _options(preset, param, model, decode_seqs, prefill_tokens)
    topo, jobs = _compiled(file, job)
    from rtc.cost.jobs import cost_jobs, default_phase
    from rtc.report.cost_report import cost_document, cost_text

    try:
        costs = [c for j in jobs for c in cost_jobs(
            topo, [j], _PHASES[phase] if phase else (default_phase(j),), options)]
    except CostInputError as exc:
        fail_usage(str(exc), getattr(exc, "hint", None) or None)
    if fmt == "json":
        write_stdout(json.dumps(cost_document(costs, str(file)), indent=2,
                                allow_nan=False) + "\n")
    else:
        write_stdout(cost_text(costs))


@app.command("advise")
def advise_command(
    file: Path = typer.Argument(..., metavar="FILE", help="The .rtc cluster description."),
    job: Optional[str] = typer.Option(None, "--job", help="The job (needed when the file has several)."),
    top: int = typer.Option(10, "--top", min=1, help="How many layouts to show."),
    phase: Optional[str] = typer.Option(None, "--phase", help="decode or prefill (default: prefill for a role prefill job, else decode)."),
    preset: Optional[str] = typer.Option(None, "--preset", help="Parameter set: nominal or hccl-plan."),
    param: Optional[List[str]] = typer.Option(None, "--param", metavar="KEY=VALUE", help="Override one link parameter (repeatable)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model preset or config.json (default: the job's cost_model)."),
    max_pp: Optional[int] = typer.Option(None, "--max-pp", min=1, help="Largest PP searched (default: 1 in decode, 4 in prefill, at most one stage per server and at least the job's own PP; a value given here is searched as given)."),
    fmt: str = typer.Option("text", "--format", help="text, json, or rtc (the best layouts as job blocks)."),
) -> None:
    """Rank every layout of a job's NPUs by communication time per generated token.

    Layouts (DP, PP, TP, EP on/off) are kept when the model can run them (heads divide
    by TP, experts by EP), a DP replica fills whole servers or divides one, A3 die pairs
    stay whole, and the weights fit HBM; the job's own layout is marked. `--format rtc`
    prints the best ones as job blocks to paste.

    Examples:

      rtc advise examples/a2-2node-dp2-tp8.rtc

      rtc advise examples/pd-a3.rtc --job decode --model deepseek-v3 --format json
    """
    from rtc.cost.errors import CostInputError

    if phase is not None and phase not in ("decode", "prefill"):
        fail_usage(f"--phase must be decode or prefill (not '{phase}')")
    if fmt not in ("text", "json", "rtc"):
        fail_usage(f"--format must be text, json or rtc (not '{fmt}')")
    options = _options(preset, param, model, None, None)
    topo, jobs = _compiled(file, job, _ADVISE_TOLERATES)
    if len(jobs) > 1:
        fail_usage(f"{file} has {len(jobs)} jobs; choose one with --job "
                   f"({', '.join(j.name for j in jobs)})")
    from rtc.cost.jobs import advise_job, default_phase
    from rtc.report.cost_report import advice_document, advice_rtc, advice_text

    try:
        advice = advise_job(topo, jobs[0], phase=phase or default_phase(jobs[0]),
                            options=options, max_pp=max_pp)
    except CostInputError as exc:
        fail_usage(str(exc), getattr(exc, "hint", None) or None)
    if fmt == "json":
        write_stdout(json.dumps(advice_document(advice, top, str(file)), indent=2,
                                allow_nan=False) + "\n")
    elif fmt == "rtc":
        write_stdout(advice_rtc(advice, top))
    else:
        write_stdout(advice_text(advice, top))
