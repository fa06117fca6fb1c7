"""Will it start: whether a vLLM job's layout leaves any memory for the KV cache (RTC348),
the KV cache it leaves for ``max_model_len`` (RTC344, RTC345) and the concurrency it allows
(RTC346), from :mod:`rtc.cost.kv_cache`.

Inputs: the job's model (``cost_model``, or guessed from its ``model`` path), its layout,
the NPU/GPU HBM of the hardware preset, the job's ``HCCL_BUFFSIZE`` / ``NCCL_BUFFSIZE``
and the vLLM flags in its ``args`` / ``head_args`` (``--max-model-len``,
``--gpu-memory-utilization``, ``--max-num-seqs``, ``--max-num-batched-tokens``,
``--kv-cache-dtype``, ``--block-size``); the same rules apply to hand-written launches
through ``rtc lint``, whose lift keeps the launch's argv words. RTC344 (an error) only
when the model is named and the shortfall is larger than what the estimated terms could
be off by (:data:`MARGIN` of the activation peak plus the runtime reserve); otherwise
RTC345 (a warning) says the same with the reason it is not certain. RTC348 (an error)
when nothing is left at all and the weights plus the communicator buffers alone exceed the
usable memory (whether the model is named or guessed: vLLM refuses to start whatever the
length), or the model is named and the shortfall is beyond the margin; RTC345 otherwise.
A job that names
neither its model (``cost_model``) nor ``--max-model-len`` is not judged: both would be
guesses (``rtc cost`` still shows its budget); RTC346, a note about throughput, only for a
job that names its model.
"""

from __future__ import annotations

from rtc.checks.cost_inputs import costed_jobs
from rtc.diagnostics import error, note, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

KV_TOO_SMALL = rule("RTC344", "kv-cache-below-one-sequence", "error",
                    "The KV cache left on a rank cannot hold one sequence of max_model_len.", """
    What: after the weights, the activation peak, the communicator buffers (HCCL_BUFFSIZE
    or NCCL_BUFFSIZE per TP / PP / DP / EP / MC2 group) and the runtime reserve, the
    memory left at --gpu-memory-utilization holds fewer tokens of KV cache than one
    sequence of --max-model-len (the model's own context length when the flag is absent).
    Why: vLLM refuses to start after loading the weights on every node: "To serve at least
    one request with the model's max seq len (...), (... GiB KV cache is needed, which is
    larger than the available KV cache memory".
    Example: DeepSeek-R1 W8A8 on 2 x A2 at DP2 x TP8 + EP with HCCL_BUFFSIZE 1024 and
    --max-model-len 131072.
    Fix: the largest --max-model-len the message gives, a larger TP or PP, a smaller
    HCCL_BUFFSIZE, --kv-cache-dtype fp8, or a higher --gpu-memory-utilization.""")
KV_TIGHT = rule("RTC345", "kv-cache-may-not-hold-one-sequence", "warning",
                "The KV cache may not hold one sequence of max_model_len (estimate).", """
    What: as RTC344 (or RTC348: no memory left for the KV cache at all), but the model was
    guessed from the model path, or the shortfall is within what rtc's estimate of the
    activation peak and reserve could be off by.
    Why: vLLM may refuse to start ("... KV cache is needed, which is larger than the
    available KV cache memory").
    Example: a job whose `model` path names Qwen3-32B, on one 64 GB NPU, with
    --max-model-len 40960.
    Fix: as RTC344; set `cost_model` to confirm the model.""")
KV_CONCURRENCY = rule("RTC346", "kv-concurrency-below-max-num-seqs", "note",
                      "The KV cache holds fewer full-length sequences than --max-num-seqs.", """
    What: the KV cache holds N sequences of --max-model-len at once, fewer than the
    --max-num-seqs the launch asks for.
    Why: vLLM admits sequences while KV blocks are free; when that many requests reach
    their full length at once it preempts and recomputes some, and latency jumps at peak
    load. Short requests never notice, so this is a note (tutorials run DeepSeek W8A8 on
    2 x A2 with --max-num-seqs 24 where about 7 full sequences fit).
    Example: --max-num-seqs 64 where the cache holds 12 sequences of 32,768 tokens.
    Fix: lower --max-num-seqs or --max-model-len, or add KV memory (TP, fp8 KV cache).""")
KV_NO_ROOM = rule("RTC348", "no-memory-for-kv-cache", "error",
                  "Weights and communicator buffers leave no memory for the KV cache.", """
    What: the weights one rank holds plus its communicator buffers (2 x HCCL_BUFFSIZE MB,
    or 2 x NCCL_BUFFSIZE per channel, for each TP / PP / DP / EP / MC2 group it joins)
    exceed the memory vLLM may use (HBM x --gpu-memory-utilization), so nothing is left for
    the KV cache, whatever --max-model-len.
    Why: vLLM refuses to start after loading the weights on every node: "No available
    memory for the cache blocks" (vllm/v1/core/kv_cache_utils.py
    _check_enough_kv_cache_memory: available_memory <= 0, whatever the length; vLLM V1,
    read at commit 001cabc1); buffers larger than the HBM
    already fail when HCCL / NCCL allocates them.
    Example: D1 (DeepSeek-R1 W8A8, 2 x A2, DP2 x TP8 + EP) with `env HCCL_BUFFSIZE =
    40000`: 4 communicators x 2 x 40,000 MB = 335.5 GB of buffers on a 64 GB 910B.
    Fix: the term the message names as the largest: a smaller HCCL_BUFFSIZE (the hint gives
    the largest that leaves room; the default is 200), a larger TP or PP, 8-bit weights.""")
KV_SKIPPED = rule("RTC347", "kv-check-skipped", "note",
                  "The KV-cache check was skipped for lack of data.", """
    What: a job sets --max-model-len but rtc does not know the HBM of its hardware, or a
    memory flag's value does not parse.
    Why: the start-up memory check needs both.
    Example: `hardware generic` with --max-model-len 32768.
    Fix: a hardware preset with HBM, and numeric flag values.""")

#: Share of the estimated activation peak the estimate may be off by (real logs: 11-13 %
#: high, tests/data/kv_anchors.toml).
MARGIN = 0.15
_GB = 1e9
_GIB = 1024 ** 3


def _words(job) -> tuple[str, ...]:
    return tuple(job.launch.args) + tuple(job.launch.head_args)


def _span(job):
    spec = job.launch
    return spec.span_of("args") or spec.span_of("head_args") or job.span


def _budget(topo: Topology, job, choice, args, layout=None):
    """(layout, KvBudget) of ``job`` (or of ``layout`` on the job's hardware and env)."""
    from rtc.cost.kv_cache import kv_budget
    from rtc.cost.layout import Layout
    from rtc.cost.links import env_value

    layout = layout or Layout(dp=job.dp, pp=job.pp, tp=job.tp, pcp=job.pcp,
                              expert_parallel=bool(job.expert_parallel))
    ascend = not topo.preset.is_gpu
    buffsize = env_value(job.env, "HCCL_BUFFSIZE" if ascend else "NCCL_BUFFSIZE")
    return layout, kv_budget(choice.spec, layout, args, hbm=topo.preset.hbm_gb * _GB,
                             chip=topo.preset.chip, ascend=ascend,
                             bytes_per_param=choice.bytes_per_param, buffsize=buffsize)


def _terms(b) -> str:
    return (f"of {b.usable / _GB:.1f} GB usable: weights {b.weights / _GB:.1f} GB, "
            f"activation peak ~{b.activation / _GB:.1f} GB, communicator buffers "
            f"{b.buffers / _GB:.1f} GB ({', '.join(b.groups) or 'none'}), reserve "
            f"{b.reserve / _GIB:.1f} GiB")


def _smaller_fix(topo, job, choice, args, layout) -> str:
    """A larger TP (same world, fewer DP replicas) whose rank holds one sequence."""
    from rtc.cost.layout import Layout, layout_problems

    world, tp = layout.world, layout.tp * 2
    while tp <= world // layout.pp and world % (tp * layout.pp) == 0:
        bigger = Layout(dp=world // (tp * layout.pp), pp=layout.pp, tp=tp,
                        expert_parallel=layout.expert_parallel)
        if not layout_problems(bigger, choice.spec):
            _, b = _budget(topo, job, choice, args, bigger)
            if b.one_sequence and b.available >= b.one_sequence:
                return f"; {bigger.label} holds {b.tokens:,} tokens per rank"
        tp *= 2
    return ""


def _buffsize_hint(job, b) -> str:
    """What the job's own HCCL_BUFFSIZE costs, when it raised it above the default."""
    from rtc.cost.kv_cache import HCCL_BUFFSIZE_DEFAULT_MB
    from rtc.cost.links import env_value

    raw = env_value(job.env, "HCCL_BUFFSIZE")
    if not raw or not raw.isdigit() or len(raw) > 20 or int(raw) <= HCCL_BUFFSIZE_DEFAULT_MB or not b.groups:
        return ""
    default = b.buffers * HCCL_BUFFSIZE_DEFAULT_MB / int(raw)
    return (f"; HCCL_BUFFSIZE {raw} takes {b.buffers / _GB:.1f} GB in {len(b.groups)} "
            f"communicators (the default {HCCL_BUFFSIZE_DEFAULT_MB}: {default / _GB:.1f} GB)")


def _job(topo: Topology, job):
    from rtc.cost.errors import CostInputError
    from rtc.cost.inputs import LocatedError, job_model
    from rtc.cost.memory import USABLE_SHARE
    from rtc.cost.serving import serving_args

    args = serving_args(_words(job))
    if args.unreadable:
        flags = ", ".join(f"{f} {v!r}" for f, v in args.unreadable)
        yield note(KV_SKIPPED, f"job {job.name}: KV-cache check skipped: {flags} is not a "
                   "value vLLM reads", _span(job), subject=f"job {job.name}")
        return
    if topo.preset.hbm_gb <= 0:
        if args.max_model_len:
            yield note(KV_SKIPPED, f"job {job.name}: KV-cache check skipped: the HBM of "
                       f"{topo.preset.name} is not known", _span(job), subject=f"job {job.name}")
        return
    try:
        choice = job_model(job)
        if choice.spec is None:
            return
        layout, b = _budget(topo, job, choice, args)
    except (LocatedError, CostInputError):
        return     # RTC341 / RTC342 report the model and layout
    if b.weights > USABLE_SHARE * topo.preset.hbm_gb * _GB:
        return     # RTC343: the weights alone do not fit
    if b.no_room:
        yield _no_room(topo, job, choice, layout, b)
        return     # nothing left whatever the length: vLLM's first refusal
    if job.cost.model is None and args.max_model_len is None:
        return     # a guessed model at its own context length: two guesses, no finding
    yield from _findings(topo, job, choice, args, layout, b)


def _buffers_phrase(topo, job, b) -> str:
    """The buffer term spelled out: "335.5 GB (2 x HCCL_BUFFSIZE 40000 MB x 4
    communicators: TP, DP, EP, MC2)"."""
    from rtc.cost.kv_cache import buffsize_number
    from rtc.cost.links import env_value

    name = "NCCL_BUFFSIZE" if topo.preset.is_gpu else "HCCL_BUFFSIZE"
    raw = env_value(job.env, name)
    n = buffsize_number(raw)
    size = (f"{n} MB" if not topo.preset.is_gpu else f"{n} B x 32 channels") if n \
        else "the default"
    return (f"{b.buffers / _GB:,.1f} GB (2 x {name} {size} x {len(b.groups)} "
            f"communicators: {', '.join(b.groups) or 'none'})")


def _buffsize_room(topo, b) -> str:
    """The largest HCCL_BUFFSIZE (MB) that leaves room for the KV cache, as a fix."""
    if topo.preset.is_gpu or not b.groups:
        return ""
    from rtc.cost.kv_cache import HCCL_BUFFSIZE_DEFAULT_MB

    room = b.usable - b.weights - b.activation - b.reserve
    mb = int(room / (2 * len(b.groups)) // 1024 ** 2)
    if mb < 1:
        return ""
    left = room - 2 * len(b.groups) * HCCL_BUFFSIZE_DEFAULT_MB * 1024 ** 2
    return (f"set HCCL_BUFFSIZE (MB) below {mb}, where the buffers would leave no KV cache; "
            f"the default {HCCL_BUFFSIZE_DEFAULT_MB} leaves {max(left, 0) / _GIB:.1f} GiB "
            "for it")


def _no_room(topo, job, choice, layout, b):
    """RTC348 (weights + buffers alone over the usable memory, or a named model beyond the
    estimate's margin) or RTC345: nothing is left for the KV cache."""
    from rtc.cost.kv_cache import kv_fix

    over = b.weights + b.buffers > b.usable
    sure = over or (job.cost.model is not None
                    and -b.available > MARGIN * b.activation + b.reserve)
    name = "NCCL_BUFFSIZE" if topo.preset.is_gpu else "HCCL_BUFFSIZE"
    line = next((e for e in job.env if e.name == name), None)
    buffers_top = b.buffers >= b.weights
    where = line.span if buffers_top and line is not None else _span(job)
    terms = (f"weights {b.weights / _GB:.1f} GB + communicator buffers "
             f"{_buffers_phrase(topo, job, b)}")
    if not over:
        total = b.weights + b.buffers + b.activation + b.reserve
        terms += (f" + activation peak and reserve ~{(b.activation + b.reserve) / _GB:.1f} "
                  f"GB = {total / _GB:.1f} GB")
    message = (f"job {job.name}: {choice.spec.name} as {layout.label} leaves no memory for "
               f"the KV cache: {terms} exceed the {b.usable / _GB:.1f} GB usable "
               f"({topo.preset.hbm_gb:g} GB x {b.usable / (topo.preset.hbm_gb * _GB):.2f});"
               f" the {'buffers' if buffers_top else 'weights'} take the most. vLLM stops: "
               "\"No available memory for the cache blocks\"")
    if not sure:
        message += "; estimated: " + ("model guessed from its path" if job.cost.model
                                      is None else "within the estimate's margin")
    fix = (_buffsize_room(topo, b) if buffers_top else "") or kv_fix(b, not topo.preset.is_gpu)
    return (error if sure else warning)(KV_NO_ROOM if sure else KV_TIGHT, message, where,
                                         subject=f"job {job.name}", hint=fix)


def _findings(topo, job, choice, args, layout, b):
    where, subject = _span(job), f"job {job.name}"
    head = f"job {job.name}: {choice.spec.name} as {layout.label}"
    length = "" if args.max_model_len else " (the model's own context length; " \
        "--max-model-len is not given)"
    if b.one_sequence and b.available < b.one_sequence:
        short = b.one_sequence - max(b.available, 0)
        sure = job.cost.model is not None and short > MARGIN * b.activation + b.reserve
        largest = b.largest_len()
        fix = (f"--max-model-len {largest} (what vLLM itself suggests: "
               f"{largest // (b.block_size * b.cp):,} blocks of {b.block_size} tokens)"
               if largest else f"free memory first: {b.dominant()} take the most")
        yield (error if sure else warning)(
            KV_TOO_SMALL if sure else KV_TIGHT,
            f"{head}: one sequence of {b.max_model_len:,} tokens{length} needs "
            f"{b.one_sequence / _GIB:.1f} GiB of KV cache per rank, but "
            f"{max(b.available, 0) / _GIB:.1f} GiB is left {_terms(b)}"
            + ("" if sure else "; an estimate (" + ("model guessed from its path"
               if job.cost.model is None else "within the estimate's margin") + ")"),
            where, subject=subject,
            hint=fix + _smaller_fix(topo, job, choice, args, layout)
            + _buffsize_hint(job, b))
        return
    if args.max_num_seqs and job.cost.model is not None and b.concurrency is not None \
            and b.concurrency < args.max_num_seqs:
        yield note(KV_CONCURRENCY,
                      f"{head}: the KV cache holds {b.tokens:,} tokens per rank, "
                      f"{b.concurrency:.2f} sequences of {b.max_model_len:,}, fewer than "
                      f"--max-num-seqs {args.max_num_seqs}", where, subject=subject,
                      hint=f"--max-num-seqs {max(1, int(b.concurrency))} keeps every "
                      "sequence's full length in memory, or raise the KV memory")


def check(topo: Topology, plan: Plan):
    """RTC344-RTC347 for each vLLM job with a model (module docstring)."""
    for job in costed_jobs(topo):
        yield from _job(topo, job)


#: The rules this module reports (collected by rtc.catalogue).
RULES = (KV_TOO_SMALL, KV_TIGHT, KV_CONCURRENCY, KV_SKIPPED, KV_NO_ROOM)
