"""Layout search core (for a later ``rtc advise``): enumerate the layouts of N NPUs on
given servers and rank them by communication time per generated token at equal total
load (reference ``cost-model.md`` §5.5 item 4).

A layout is (DP, PP, PCP, TP, EP on/off) with DP·PP·PCP·TP = N. It is kept when:

* the model's attention heads divide by TP, its KV heads divide or are divided by TP
  (vLLM ``QKVParallelLinear``), its routed experts divide by the EP size
  (:func:`rtc.cost.schedule.layout_problems`);
* PCP = 1 (vllm-ascend: ``prefill_context_parallel_size`` must stay 1, reference §3.8);
* a DP replica (TP·PP·PCP ranks) fills whole servers or a server holds whole replicas
  (vLLM's node placement, :mod:`rtc.parallel.placement`);
* on A3, no TP group splits a die pair (TP = 1 or even: TP groups are consecutive ranks,
  MindCluster allocates dies 2k and 2k+1 together, RT-REF §8);
* not PP > 1 with DP > 1 for an expert-parallel MoE model across RoCE servers
  (VLLMA ``pipeline_parallel.md``: not supported by the ``MoeDistributeDispatch`` path).

vllm-ascend's MC2 thresholds (experts per device ≤ 24, EP ≥ 16, tokens ≤ capacity) pick
the MoE method of each layout (:mod:`rtc.cost.moe`); the method is reported with it.

Equal total load: ``total_load`` sequences (decode) or prompt tokens (prefill) are split
across the DP ranks (each gets ceil(total / DP)), so DP2 × TP8 at 64 sequences compares
with TP16 at 64 sequences (reference §5.7 Example B). With ``bytes_per_param`` a layout
whose weights alone exceed 90% of HBM is rejected (:mod:`rtc.cost.memory`). With
``memory`` (:class:`MemoryInputs`) every layout also gets its KV-cache budget
(:mod:`rtc.cost.kv_cache`): tokens per rank and sequences of ``max_model_len`` at once;
when the launch gives ``--max-model-len``, a layout that cannot hold one such sequence is
rejected, with the communication time it would have had so the advisor can say why a
cheaper layout was dropped. Compute balance is not checked; the ranking is by
communication only.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.deployment import Layout, deployment_on_grid, job_hardware
from rtc.cost.errors import LayoutError
from rtc.cost.hccl_algo import DEFAULT_OPTIONS, HcclOptions, hccl_options
from rtc.cost.kv_cache import KvBudget, kv_budget, kv_fix, kv_shortfall
from rtc.cost.links import Hardware
from rtc.cost.memory import memory_problem
from rtc.cost.models import ModelSpec
from rtc.cost.params import CostParams
from rtc.cost.layout import layout_problems
from rtc.cost.schedule import StepCost, schedule
from rtc.cost.serving import ServingArgs
from rtc.cost.workload import Workload, check_phase


@dataclass(frozen=True)
class MemoryInputs:
    """What the KV-cache budget of a layout needs besides the model and hardware: the
    launch's vLLM flags, the vendor (HCCL or NCCL buffers), the chip name (vLLM's batch
    defaults) and the job's ``HCCL_BUFFSIZE`` / ``NCCL_BUFFSIZE``."""

    args: ServingArgs
    ascend: bool
    chip: str
    buffsize: str | None = None


@dataclass(frozen=True)
class Rejected:
    """A layout that was not scored, and why; ``per_token`` the communication time it
    would have had when it was dropped for memory only (None otherwise)."""

    layout: Layout
    reason: str
    per_token: float | None = None


@dataclass(frozen=True)
class LayoutScore:
    """A scored layout: ``per_token`` seconds of communication per generated token,
    ``step`` the full schedule, ``dominant`` a one-line name of its largest term."""

    layout: Layout
    per_token: float
    step: StepCost
    dominant: str
    kv: KvBudget | None = None

    @property
    def bubble(self) -> float:
        """Share of a step each PP stage idles with one micro-batch in flight,
        (PP-1)/PP: not communication, not in ``per_token`` (reference §5.4), shown so a
        PP layout's rank is read with it."""
        return (self.layout.pp - 1) / self.layout.pp

    @property
    def moe_method(self) -> str | None:
        """vllm-ascend's MoE method for the layout (None for dense models)."""
        return self.step.moe.method if self.step.moe else None


@dataclass(frozen=True)
class Ranking:
    """Scored layouts best first, and the rejected ones with reasons."""

    scores: tuple[LayoutScore, ...]
    rejected: tuple[Rejected, ...]

    def index(self, layout: Layout) -> int | None:
        """Position (0 = best) of ``layout`` among the scores, None if not scored."""
        return next((i for i, s in enumerate(self.scores) if s.layout == layout), None)

    def rank(self, i: int) -> int:
        """The 1-based rank of ``scores[i]``, ties sharing one (competition ranking,
        "1 1 1 4"): 1 + the number of layouts with a strictly smaller ``per_token``.
        Layouts tie when their per-token seconds are the same float."""
        mine = self.scores[i].per_token
        return 1 + sum(1 for s in self.scores[:i] if s.per_token < mine)

    def tied(self, i: int) -> tuple[Layout, ...]:
        """The other layouts whose ``per_token`` equals that of ``scores[i]``."""
        mine = self.scores[i].per_token
        return tuple(s.layout for j, s in enumerate(self.scores)
                     if j != i and s.per_token == mine)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def enumerate_layouts(world: int, model: ModelSpec, *, pcps: tuple[int, ...] = (1,),
                      max_pp: int | None = None) -> list[Layout]:
    """Every (DP, PP, PCP, TP, EP) with DP·PP·PCP·TP = ``world``; PCP from ``pcps`` (the
    ones that divide), PP up to ``max_pp`` (default: the layer count); EP on only for a
    MoE model whose EP group has more than one rank; never more PP stages than layers.
    No constraint is checked here."""
    if world < 1:
        raise LayoutError(f"world size must be >= 1, got {world}")
    out = []
    most = min(max_pp or model.num_layers, model.num_layers)
    for tp in _divisors(world):
        for pp in _divisors(world // tp):
            if pp > most:
                continue
            for pcp in (c for c in pcps if (world // tp // pp) % c == 0):
                dp = world // (tp * pp * pcp)
                eps = (False, True) if model.is_moe and dp * pcp * tp > 1 else (False,)
                out.extend(Layout(dp=dp, pp=pp, tp=tp, pcp=pcp, expert_parallel=e)
                           for e in eps)
    return out


def layout_rejection(layout: Layout, model: ModelSpec, hardware: Hardware,
                     npus_per_server: int, servers: int,
                     bytes_per_param: float | None = None) -> str | None:
    """Why ``layout`` is not scored (module docstring), or None. With
    ``bytes_per_param``, also when the weights alone do not fit the NPU's HBM
    (:func:`rtc.cost.memory.memory_problem`)."""
    problems = layout_problems(layout, model)
    if problems:
        return "; ".join(problems)
    if bytes_per_param:
        why = memory_problem(model, layout, bytes_per_param, hardware.hbm)
        if why:
            return why
    if layout.pcp > 1:
        return "PCP > 1: vllm-ascend requires prefill_context_parallel_size = 1"
    if hardware.die_pairs and layout.tp > 1 and layout.tp % 2:
        return f"TP {layout.tp} is odd: its groups would split A3 die pairs"
    replica = layout.tp * layout.pp * layout.pcp
    if replica % npus_per_server and npus_per_server % replica:
        return (f"a DP replica of {replica} ranks neither fills whole servers of "
                f"{npus_per_server} NPUs nor divides one")
    roce = hardware.super_pod_link is None or hardware.hccs_inter_disabled
    if (model.is_moe and layout.expert_parallel and layout.pp > 1 and layout.dp > 1
            and servers > 1 and roce):
        return ("PP > 1 with DP > 1 for cross-node MoE over RoCE is not supported by "
                "MoeDistributeDispatch (VLLMA pipeline_parallel.md)")
    return None


def _describe(step: StepCost) -> str:
    top = step.dominant
    if top is None:
        return "no communication"
    return (f"{top.kind.upper()} {top.op} over {top.bottleneck} ({top.span}, "
            f"{top.cost.regime})")


def _kv(model: ModelSpec, layout: Layout, hardware: Hardware,
        bytes_per_param: float | None, memory: MemoryInputs | None) -> KvBudget | None:
    if memory is None or not bytes_per_param or hardware.hbm <= 0:
        return None
    return kv_budget(model, layout, memory.args, hbm=hardware.hbm, chip=memory.chip,
                     ascend=memory.ascend, bytes_per_param=bytes_per_param,
                     buffsize=memory.buffsize)


def _kv_short(kv: KvBudget | None, memory: MemoryInputs | None) -> str | None:
    """Why vLLM would refuse to start ``kv`` (None when it would not, or when the budget is
    unknown): nothing left for the KV cache ("No available memory for the cache blocks",
    whatever the length), or less than one sequence of the launch's ``--max-model-len``
    (only when the flag is given). :mod:`rtc.cost.kv_cache` cites vLLM's check."""
    if kv is None or memory is None:
        return None
    if kv.no_room:
        return (f"no memory is left for its KV cache ({kv_shortfall(kv)}; vLLM refuses to "
                f"start: \"No available memory for the cache blocks\"); "
                f"{kv_fix(kv, memory.ascend)}")
    if memory.args.max_model_len is None or kv.available >= kv.one_sequence:
        return None
    return (f"its KV cache holds {kv.tokens:,} tokens per rank, less than one sequence "
            f"of {kv.max_model_len:,} ({kv.dominant()} take the most)")


def rank_layouts(servers: int, npus_per_server: int, hardware: Hardware,
                 model: ModelSpec, workload: Workload, params: CostParams, *,
                 phase: str = "decode", total_load: int | None = None,
                 super_pod_servers: int | None = None,
                 options: HcclOptions = DEFAULT_OPTIONS, pcps: tuple[int, ...] = (1,),
                 max_pp: int | None = None,
                 bytes_per_param: float | None = None,
                 memory: MemoryInputs | None = None) -> Ranking:
    """Rank the layouts of ``servers × npus_per_server`` NPUs for ``model`` in ``phase``
    by communication seconds per generated token, best first (ties: the smaller
    per-step time, then fewer PP stages, then the label).

    ``total_load``: global sequences (decode) or prompt tokens per step (prefill);
    default ``workload.decode_seqs`` / ``workload.prefill_tokens``. ``super_pod_servers``:
    servers per A3 super pod (None: one pod). ``bytes_per_param``: reject layouts whose
    weights do not fit HBM (None: memory not checked); with it and ``memory``, the KV-cache
    budget of each layout (module docstring). A pure function of its inputs."""
    check_phase(phase)
    total = total_load or (workload.decode_seqs if phase == "decode"
                           else workload.prefill_tokens)
    scores, rejected = [], []
    for layout in enumerate_layouts(servers * npus_per_server, model, pcps=pcps,
                                    max_pp=max_pp):
        why = layout_rejection(layout, model, hardware, npus_per_server, servers,
                               bytes_per_param)
        if why:
            rejected.append(Rejected(layout, why))
            continue
        dep = deployment_on_grid(layout, servers, npus_per_server, hardware,
                                 super_pod_servers=super_pod_servers, options=options,
                                 moe=model.is_moe)
        step = schedule(dep, model, workload.per_rank(phase, total, layout.dp), params, phase)
        kv = _kv(model, layout, hardware, bytes_per_param, memory)
        short = _kv_short(kv, memory)
        if short:
            rejected.append(Rejected(layout, short, step.per_token))
            continue
        scores.append(LayoutScore(layout, step.per_token, step, _describe(step), kv))
    scores.sort(key=lambda s: (s.per_token, s.step.total, s.layout.pp, s.layout.label))
    return Ranking(tuple(scores), tuple(rejected))


@dataclass(frozen=True)
class Cluster:
    """The simple inputs of :func:`rank_layouts` read from a compiled Topology job:
    servers it uses, NPUs per server (the fullest), hardware (with the job's env), HCCL
    options, servers per super pod (the largest pod; None without pods)."""

    servers: int
    npus_per_server: int
    hardware: Hardware
    options: HcclOptions
    super_pod_servers: int | None


def cluster_of(topology, job) -> Cluster:
    """:class:`Cluster` of ``job`` in ``topology`` (so ``rtc advise`` can call
    :func:`rank_layouts` with plain values). Reads the hardware and HCCL options only:
    the job's own placement is not built."""
    hardware = job_hardware(topology, job)
    servers = sorted({p.server.index for p in job.placements})
    npus = max((len(p.device_ids) for p in job.placements), default=0)
    pods: dict[str | None, int] = {}
    for p in job.placements:
        pods[p.server.super_pod_id] = pods.get(p.server.super_pod_id, 0) + 1
    pod_size = max(pods.values()) if hardware.super_pod_link and None not in pods \
        else None
    return Cluster(len(servers), npus, hardware, hccl_options(job.env), pod_size)
