"""Cost and advice for the jobs of a compiled Topology (``rtc cost``, ``rtc advise``,
RTC310's numbers): read the cost inputs of each job (:mod:`rtc.cost.inputs`), then cost
the job's own layout per phase (:func:`cost_jobs`) or rank every layout of its NPUs
(:func:`advise_job`).

Both take a compiled Topology (the caller reports the compile's diagnostics first) and
raise :class:`~rtc.cost.errors.CostInputError` (with a span when the bad value is in the
file: :class:`~rtc.cost.inputs.LocatedError`) for inputs the model cannot use.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.deployment import Layout, deployment_of_job
from rtc.cost.errors import CostInputError, LayoutError, NoLinkData
from rtc.cost.inputs import ModelChoice, job_model, job_workload, topology_params
from rtc.cost.layouts import Cluster, MemoryInputs, Ranking, cluster_of, rank_layouts
from rtc.cost.links import env_value
from rtc.cost.params import CostParams
from rtc.cost.schedule import StepCost, job_schedule, schedule, with_nccl_note
from rtc.cost.serving import serving_args
from rtc.model.topology import Job, Topology

#: Jobs larger than this are not searched by the advisor in a check (RTC310's numbers);
#: ``rtc advise`` itself has no limit.
CHECK_SEARCH_MAX_RANKS = 2048
#: Default largest PP the advisor searches per phase (and at most one stage per server,
#: and at least the job's own PP). A pipeline trades a (PP-1)/PP bubble per micro-batch,
#: which is not communication, for smaller groups, so a communication-only score would
#: put deep pipelines first in decode; ``--max-pp`` widens the search.
DEFAULT_MAX_PP = {"decode": 1, "prefill": 4}


@dataclass(frozen=True)
class CostOptions:
    """What the command line adds to the file: ``preset`` and ``params`` (``KEY=VALUE``)
    over the ``links`` block, ``model`` over ``cost_model``, workload overrides
    (``decode_seqs`` sequences and ``prefill_tokens`` tokens per DP rank)."""

    preset: str | None = None
    params: tuple[str, ...] = ()
    model: str | None = None
    decode_seqs: int | None = None
    prefill_tokens: int | None = None


@dataclass(frozen=True)
class JobCost:
    """One job's cost: the model it was costed with and one :class:`StepCost` per phase."""

    job: Job
    model: ModelChoice
    steps: tuple[StepCost, ...]


@dataclass(frozen=True)
class Advice:
    """The advisor's answer for one job: the ranking, the job's own layout and its
    position in it (None when it is rejected or not enumerated), the cluster searched,
    the model and parameter set."""

    job: Job
    model: ModelChoice
    params: CostParams
    cluster: Cluster
    phase: str
    current: Layout
    ranking: Ranking
    max_pp: int = 1

    @property
    def current_index(self) -> int | None:
        """0-based position of the job's own layout among the scored ones."""
        return self.ranking.index(self.current)


def _model(job: Job, options: CostOptions) -> ModelChoice:
    choice = job_model(job, options.model)
    if choice.spec is None:
        raise CostInputError(f"job {job.name}: no model to cost: set `cost_model` in the job "
                             "or pass --model (a preset from rtc cost --list-models, or a "
                             "config.json)")
    return choice


def cost_jobs(topology: Topology, jobs: list[Job], phases: tuple[str, ...],
              options: CostOptions = CostOptions()) -> list[JobCost]:
    """Each job's :class:`StepCost` per phase (``decode`` / ``prefill``). Raises
    CostInputError for a bad parameter, an unknown model or a layout the model cannot
    run (heads not divisible by TP, ...)."""
    params = topology_params(topology, preset=options.preset, overrides=options.params)
    out = []
    for job in jobs:
        choice = _model(job, options)
        work = job_workload(job, decode_seqs=options.decode_seqs,
                            prefill_tokens=options.prefill_tokens)
        dep = deployment_of_job(topology, job)      # once: its spans are cached on it
        try:
            steps = tuple(_with_load_note(
                with_nccl_note(schedule(dep, choice.spec, work, params, phase), dep, params,
                               _declared_nics(job)),
                load_note(topology, job, choice, dep.layout, work.decode_seqs)
                if phase == "decode" else None) for phase in phases)
        except LayoutError as exc:
            raise CostInputError(f"job {job.name}: {exc} (model {choice.label})") from None
        out.append(JobCost(job, choice, steps))
    return out


def _with_load_note(step: StepCost, note: str | None) -> StepCost:
    """``step`` with ``note`` before its last note (the limits line), when there is one."""
    from dataclasses import replace

    if not note:
        return step
    return replace(step, notes=step.notes[:-1] + (note,) + step.notes[-1:])


def load_note(topology: Topology, job: Job, choice: ModelChoice, layout: Layout,
              decode_seqs: int) -> str | None:
    """A warning-worded note when ``decode_seqs`` sequences per DP rank are more than the
    job can run at once: more than vLLM's ``--max-num-seqs`` (its scheduler never batches
    more; the flag from the job's ``args``, else vLLM's default for the chip), or more
    than its KV cache holds even at one block per sequence (``tokens // block_size``,
    :mod:`rtc.cost.kv_cache`). None when the load fits, or when the HBM is unknown."""
    from rtc.cost.kv_cache import kv_budget

    if topology.preset.hbm_gb <= 0:
        return None
    memory = memory_inputs(topology, job)
    b = kv_budget(choice.spec, layout, memory.args, hbm=topology.preset.hbm_gb * 1e9,
                  chip=memory.chip, ascend=memory.ascend,
                  bytes_per_param=choice.bytes_per_param, buffsize=memory.buffsize)
    room = b.tokens // b.block_size
    why = []
    if decode_seqs > b.max_num_seqs:
        whose = "vLLM's default for this chip: the job's args do not set it" \
            if "max_num_seqs" in b.defaults else "from the job's args"
        why.append(f"more than --max-num-seqs {b.max_num_seqs} ({whose}), the most vLLM "
                   "runs at once")
    if decode_seqs > room:
        full = (f"; {b.concurrency:.2f} sequences at the full {b.max_model_len:,} tokens"
                if b.concurrency is not None else "")
        why.append(f"more than the {room:,} sequences its KV cache holds even at one "
                   f"{b.block_size}-token block each ({b.tokens:,} tokens per rank{full})")
    if not why:
        return None
    return (f"outside what the job can hold: {decode_seqs:,} decode sequences per DP rank "
            f"of {layout.label} is " + "; ".join(why) + ". The step time is for a batch "
            "vLLM never runs; pass --decode-seqs within these limits")


def _declared_nics(job: Job) -> int | None:
    """The fewest HCAs a server of ``job`` declares (``ib_hca``), or None when none of its
    servers declares them (the preset's NIC count is used then)."""
    counts = [len(p.server.ib_hca) for p in job.placements if p.server.ib_hca]
    return min(counts) if counts else None


def default_phase(job: Job) -> str:
    """The phase a job is costed in without ``--phase``: prefill for ``role prefill``,
    decode otherwise."""
    return "prefill" if job.role == "prefill" else "decode"


def current_layout(job: Job) -> Layout:
    """The job's own layout as the advisor enumerates them (DCP is not searched)."""
    return Layout(dp=job.dp, pp=job.pp, tp=job.tp, pcp=job.pcp,
                  expert_parallel=bool(job.expert_parallel))


def default_max_pp(job: Job, phase: str, servers: int) -> int:
    """The PP the advisor searches up to without ``--max-pp``: :data:`DEFAULT_MAX_PP`
    of the phase, at most the servers, at least the job's own PP."""
    return max(job.pp, min(DEFAULT_MAX_PP[phase], servers))


def memory_inputs(topology: Topology, job: Job) -> MemoryInputs:
    """The :class:`MemoryInputs` of ``job``: the vLLM flags of its ``args`` and
    ``head_args``, its vendor and chip, its ``HCCL_BUFFSIZE`` / ``NCCL_BUFFSIZE``."""
    ascend = not topology.preset.is_gpu
    return MemoryInputs(serving_args(tuple(job.launch.args) + tuple(job.launch.head_args)),
                        ascend, topology.preset.chip,
                        env_value(job.env, "HCCL_BUFFSIZE" if ascend else "NCCL_BUFFSIZE"))


def advise_job(topology: Topology, job: Job, *, phase: str = "decode",
               options: CostOptions = CostOptions(), max_pp: int | None = None,
               choice: ModelChoice | None = None) -> Advice:
    """Rank every layout of ``job``'s servers for its model at the job's total load
    (``decode_seqs`` x DP sequences, or ``prefill_tokens`` x DP tokens). PP is searched
    up to ``max_pp`` (default: :func:`default_max_pp`). Raises CostInputError as
    :func:`cost_jobs` does."""
    params = topology_params(topology, preset=options.preset, overrides=options.params)
    choice = choice or _model(job, options)
    work = job_workload(job, decode_seqs=options.decode_seqs,
                        prefill_tokens=options.prefill_tokens)
    cluster = cluster_of(topology, job)
    per_rank = work.decode_seqs if phase == "decode" else work.prefill_tokens
    ranking = rank_layouts(cluster.servers, cluster.npus_per_server, cluster.hardware,
                           choice.spec, work, params, phase=phase,
                           total_load=per_rank * job.dp,
                           super_pod_servers=cluster.super_pod_servers,
                           options=cluster.options,
                           max_pp=max_pp or default_max_pp(job, phase, cluster.servers),
                           bytes_per_param=choice.bytes_per_param,
                           memory=memory_inputs(topology, job))
    return Advice(job, choice, params, cluster, phase, current_layout(job), ranking,
                  max_pp or default_max_pp(job, phase, cluster.servers))


@dataclass(frozen=True)
class CrossServerCost:
    """What a TP group across servers costs (RTC310's numbers): the job's own per-token
    communication in decode, the best layout that keeps TP inside one server and its
    per-token time, with the model and parameter set used."""

    current: StepCost
    best: StepCost
    model: str
    params: str

    @property
    def ratio(self) -> float:
        """Job's per-token time over the best in-server layout's (inf when that is 0)."""
        return self.current.per_token / self.best.per_token if self.best.per_token \
            else float("inf")


def cross_server_tp_cost(topology: Topology, job: Job,
                         per_server: int) -> CrossServerCost | str | None:
    """RTC310's numbers for ``job``: a :class:`CrossServerCost`; a sentence saying why
    none were computed (no model, too many ranks); or None when no layout keeps TP
    within ``per_server`` NPUs. Never raises for bad cost inputs (RTC340/341 report
    them): those give the sentence."""
    if job.world_size > CHECK_SEARCH_MAX_RANKS:
        return (f"not costed above {CHECK_SEARCH_MAX_RANKS} ranks in a check; run "
                f"`rtc cost` / `rtc advise --job {job.name}`")
    try:
        choice = job_model(job)
        if choice.spec is None:
            return "set `cost_model` in the job to see what it costs"
        advice = advise_job(topology, job, options=CostOptions(), choice=choice)
        params = advice.params       # read once, for both sides
        current = job_schedule(topology, job, choice.spec, job_workload(job), params)
    except NoLinkData:
        return f"not costed: rtc has no link figures for {topology.preset.chip} yet"
    except CostInputError:
        return "the cost inputs have errors (see RTC340-RTC342)"
    best = next((s for s in advice.ranking.scores if s.layout.tp <= per_server), None)
    if best is None:
        return None
    return CrossServerCost(current, best.step, choice.spec.name, params.name)
