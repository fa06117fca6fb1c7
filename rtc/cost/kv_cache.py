"""Will it fit: the memory budget of one rank and the KV cache it leaves, as vLLM sizes it.

vLLM (``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``, v0.9 .. v0.11; V0
``worker.py`` the same in its log line "the rest of the memory reserved for KV Cache")
gives the KV cache what is left of ``total HBM x gpu_memory_utilization`` after the
weights, the activation peak of a dummy forward pass of ``max_num_batched_tokens`` tokens,
and memory outside torch (CUDA/CANN context, NCCL/HCCL buffers). It then cuts that into
blocks (``vllm/v1/core/kv_cache_utils.py`` ``get_kv_cache_config``)::

    page      = block_size x kv_bytes_per_token_per_layer      (one layer, one block)
    blocks    = available // page // layers_of_the_rank
    tokens    = blocks x block_size                            ("GPU KV cache size")
    concurrency = tokens / max_model_len                       ("Maximum concurrency")

and refuses to start (``_check_enough_kv_cache_memory``, read in vllm-project/vllm at
commit 001cabc1; the length estimate came with PR #16168, April 2025, and is printed since
PR #18966, v0.9.1) in two cases, which :class:`KvBudget` follows exactly:

* ``available_memory <= 0``: "No available memory for the cache blocks" whatever the
  length (:attr:`KvBudget.no_room`);
* the bytes one sequence of ``max_model_len`` takes, in whole blocks
  (``FullAttentionSpec.max_memory_usage_bytes``: ``cdiv(cdiv(max_model_len, cp), block_size)
  x page`` per layer, ``cp`` the DCP x PCP world), exceed ``available_memory``: "To serve
  at least one request with the model's max seq len ..." (:attr:`KvBudget.one_sequence`).
  The length it then suggests (``estimate_max_model_len``, a binary search for the largest
  length whose blocks fit) is a whole number of blocks: ``available // (page x layers) x
  block_size x cp``, the KV tokens of the rank (:meth:`KvBudget.largest_len`).

KV bytes per token and layer on one rank (:func:`kv_bytes_per_token`): standard attention
``2 x kv_heads_per_rank x head_dim x b`` with ``kv_heads_per_rank = max(1, kv_heads //
TP)`` (vLLM replicates KV heads when TP exceeds them); MLA ``(kv_lora_rank + rope) x b``
on every TP rank (the latent is not split). ``b`` is the ``--kv-cache-dtype`` size
(``auto``: the model dtype; ``fp8*``: 1). A rank holds ``ceil(layers / PP)`` layers.

What is estimated, not read from the framework (each a named term in the result):

* activation peak: ``tokens x b x (4 H + 3 F)`` with ``F`` the MLP width per rank
  (dense ``intermediate / TP``; MoE ``top_k x moe_intermediate / TP``), plus the logits of
  ``max_num_seqs`` sequences in float32 (``max_num_seqs x vocab / TP x 4``). Against the
  "PyTorch activation peak memory" of real V0 logs it is from 3 % low (Qwen2.5-32B, TP2)
  to 13 % high (Llama-3.1-8B, TP1) (tests/data/kv_anchors.toml);
* runtime reserve: :data:`RUNTIME_RESERVE` (context and allocator slack; logs show
  0.07-0.43 GiB of "non_torch_memory");
* communicator buffers: every group of more than one rank a rank joins (TP, PP, DP, EP,
  and on Ascend the MC2 group of an expert-parallel MoE model) holds ``2 x HCCL_BUFFSIZE``
  MB on Ascend (HCCL docs: send and receive buffer per communicator, default 200 MB);
  on NVIDIA ``2 x NCCL_BUFFSIZE`` (default 4 MiB) per channel for :data:`NCCL_CHANNELS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.cost.layout import Layout
from rtc.cost.memory import weights_per_rank
from rtc.cost.models import ModelSpec
from rtc.cost.serving import DEFAULTS, ServingArgs, batch_defaults
from rtc.network.env import whole_number

GIB = 1024 ** 3
#: Memory outside torch that every rank keeps (bytes): context, allocator slack.
RUNTIME_RESERVE = int(0.5 * GIB)
#: HCCL_BUFFSIZE default, MB (HCCL environment variable reference).
HCCL_BUFFSIZE_DEFAULT_MB = 200
#: NCCL_BUFFSIZE default (bytes, NCCL docs "NCCL_BUFFSIZE: default 4 MiB") and the
#: channels assumed per communicator (NCCL_MAX_NCHANNELS unset on an NVLink node).
NCCL_BUFFSIZE_DEFAULT = 4 * 1024 ** 2
NCCL_CHANNELS = 32


def kv_dtype_bytes(model: ModelSpec, kv_cache_dtype: str | None) -> int:
    """Bytes per KV element for ``--kv-cache-dtype`` (None / ``auto``: the model dtype)."""
    if kv_cache_dtype and kv_cache_dtype.startswith(("fp8", "int8")):
        return 1
    if kv_cache_dtype in ("bfloat16", "float16", "half"):
        return 2
    return model.dtype_bytes


def kv_bytes_per_token(model: ModelSpec, tp: int, dtype_bytes: int) -> int:
    """KV-cache bytes one token adds to one layer on one TP rank (module docstring)."""
    if model.kv_lora_rank:
        return model.kv_bytes_per_token(dtype_bytes)
    heads = model.num_kv_heads or model.num_attention_heads
    return 2 * max(1, heads // tp) * model.q_head_dim * dtype_bytes


def layers_per_rank(model: ModelSpec, pp: int) -> int:
    """Layers of the most loaded PP stage: ``ceil(layers / PP)``."""
    return -(-model.num_layers // pp)


def tokens_in(available: float, model: ModelSpec, layout: Layout, dtype_bytes: int,
              block_size: int) -> int:
    """Tokens of KV cache ``available`` bytes hold on one rank, in whole blocks."""
    page = block_size * kv_bytes_per_token(model, layout.tp, dtype_bytes)
    if available <= 0 or page <= 0:
        return 0
    return int(available // page // layers_per_rank(model, layout.pp)) * block_size


def activation_peak(model: ModelSpec, tp: int, batched_tokens: int, seqs: int) -> float:
    """Estimated activation peak (bytes) of a forward pass of ``batched_tokens`` tokens
    and the logits of ``seqs`` sequences (module docstring)."""
    if model.is_moe:
        width = model.experts_per_token * (model.moe_intermediate_size or 0)
    else:
        width = model.intermediate_size or 4 * model.hidden_size
    per_token = model.dtype_bytes * (4 * model.hidden_size + 3 * width / tp)
    logits = seqs * (model.vocab_size or 0) / tp * 4
    return batched_tokens * per_token + logits


def communicators(layout: Layout, model: ModelSpec, ascend: bool) -> list[str]:
    """Groups of more than one rank a rank joins, each holding its own buffers."""
    groups = [("TP", layout.tp), ("PP", layout.pp), ("DP", layout.dp)]
    if layout.expert_parallel and model.is_moe:
        groups.append(("EP", layout.ep_size))
        if ascend:
            groups.append(("MC2", layout.ep_size))
    return [name for name, size in groups if size > 1]


def buffsize_number(buffsize: str | None) -> int | None:
    """``HCCL_BUFFSIZE`` / ``NCCL_BUFFSIZE`` as a positive whole number (ASCII digits, at
    most 20 of them), or None when unset or not one (RTC458 reports such a value; the
    default is used here). Never raises: ``'²'`` or 5,000 digits give None."""
    n = whole_number(buffsize.strip()) if buffsize else None
    return n if n is not None and n > 0 else None


def buffer_per_group(ascend: bool, buffsize: str | None) -> float:
    """Bytes of buffers one communicator holds: ``2 x HCCL_BUFFSIZE`` MB on Ascend, ``2 x
    NCCL_BUFFSIZE x`` :data:`NCCL_CHANNELS` on NVIDIA (defaults when unset or unreadable)."""
    n = buffsize_number(buffsize)
    if ascend:
        return 2 * (n or HCCL_BUFFSIZE_DEFAULT_MB) * 1024 ** 2
    return 2 * (n or NCCL_BUFFSIZE_DEFAULT) * NCCL_CHANNELS


def buffer_bytes(groups: int, ascend: bool, buffsize: str | None) -> float:
    """Communicator buffers (bytes) of ``groups`` communicators; ``buffsize`` the job's
    ``HCCL_BUFFSIZE`` (MB) / ``NCCL_BUFFSIZE`` (bytes) when set and a positive whole
    number (:func:`buffsize_number`)."""
    return groups * buffer_per_group(ascend, buffsize)


@dataclass(frozen=True)
class KvBudget:
    """One rank's memory (bytes unless said): ``usable`` = HBM x utilisation, and what
    takes it (``weights``, ``activation``, ``buffers`` of the ``groups`` communicators,
    ``reserve``); ``available`` what is left for the KV cache; ``tokens`` it holds;
    ``max_model_len`` and ``max_num_seqs`` as given or defaulted (``defaults`` names
    those defaulted); ``per_token`` KV bytes one token takes on the rank (all its layers)."""

    usable: float
    weights: float
    activation: float
    buffers: float
    reserve: float
    groups: tuple[str, ...]
    per_token: int
    block_size: int
    tokens: int
    max_model_len: int | None
    max_num_seqs: int
    defaults: tuple[str, ...]
    cp: int = 1

    @property
    def no_room(self) -> bool:
        """True when nothing is left for the KV cache: vLLM's ``available_memory <= 0``,
        "No available memory for the cache blocks" (module docstring)."""
        return self.available <= 0

    @property
    def available(self) -> float:
        """Bytes left for the KV cache (may be negative)."""
        return self.usable - self.weights - self.activation - self.buffers - self.reserve

    @property
    def concurrency(self) -> float | None:
        """Sequences of ``max_model_len`` the cache holds at once (None: no length)."""
        return self.tokens / self.max_model_len if self.max_model_len else None

    @property
    def one_sequence(self) -> float | None:
        """Bytes one sequence of ``max_model_len`` needs on the rank, in whole blocks as
        vLLM counts it (``cdiv(cdiv(len, cp), block_size) x block_size x per_token``)."""
        if not self.max_model_len:
            return None
        blocks = -(-(-(-self.max_model_len // self.cp)) // self.block_size)
        return blocks * self.block_size * self.per_token

    def largest_len(self) -> int:
        """The length vLLM suggests when one sequence does not fit ("the estimated maximum
        model length is N", ``estimate_max_model_len``): the largest length whose whole
        blocks fit, which is the rank's KV tokens; 0 when not one block fits (vLLM then
        suggests nothing). Tokens."""
        return self.tokens

    def dominant(self) -> str:
        """The largest consumer of the budget besides the KV cache, as a phrase."""
        terms = {"the weights": self.weights, "the activation peak": self.activation,
                 f"communicator buffers ({', '.join(self.groups)})": self.buffers}
        return max(terms, key=terms.get)


def kv_budget(model: ModelSpec, layout: Layout, args: ServingArgs, *, hbm: float,
              chip: str, ascend: bool, bytes_per_param: float,
              buffsize: str | None = None) -> KvBudget:
    """The :class:`KvBudget` of one rank of ``layout`` with HBM ``hbm`` bytes."""
    defaults = []
    seqs_default, batched_default = batch_defaults(hbm / GIB, chip)
    util = args.gpu_memory_utilization or DEFAULTS["gpu_memory_utilization"][0]
    if args.gpu_memory_utilization is None:
        defaults.append("gpu_memory_utilization")
    seqs = args.max_num_seqs or seqs_default
    if args.max_num_seqs is None:
        defaults.append("max_num_seqs")
    length = args.max_model_len or (model_max_len(model) or None)
    if args.max_model_len is None:
        defaults.append("max_model_len")
    batched = args.max_num_batched_tokens or batched_default
    block = args.block_size or DEFAULTS["block_size_npu" if ascend else "block_size_gpu"][0]
    dtype = kv_dtype_bytes(model, args.kv_cache_dtype)
    groups = tuple(communicators(layout, model, ascend))
    budget = KvBudget(
        usable=hbm * util, weights=weights_per_rank(model, layout, bytes_per_param),
        activation=activation_peak(model, layout.tp, batched, seqs),
        buffers=buffer_bytes(len(groups), ascend, buffsize),
        reserve=RUNTIME_RESERVE, groups=groups,
        per_token=kv_bytes_per_token(model, layout.tp, dtype) * layers_per_rank(model, layout.pp),
        block_size=block, tokens=0, max_model_len=length, max_num_seqs=seqs,
        defaults=tuple(defaults), cp=layout.dcp * layout.pcp)
    # vLLM multiplies the tokens by the context-parallel world (kv_cache_utils.py).
    tokens = tokens_in(budget.available, model, layout, dtype, block) * layout.dcp * layout.pcp
    return KvBudget(**{**budget.__dict__, "tokens": tokens})


def kv_fix(kv: KvBudget, ascend: bool) -> str:
    """How to free memory for ``kv``'s cache, by its largest consumer (a phrase)."""
    if kv.buffers >= max(kv.weights, kv.activation):
        return (f"lower {'HCCL_BUFFSIZE' if ascend else 'NCCL_BUFFSIZE'} (each of the "
                f"{len(kv.groups)} communicators holds 2 x the buffer size)")
    if kv.weights >= kv.activation:
        return "raise TP or PP (fewer weights per rank)"
    return "lower --max-num-batched-tokens or --max-num-seqs"


def kv_shortfall(kv: KvBudget) -> str:
    """``kv``'s consumers against its usable memory, largest first, as a phrase:
    "weights 43.0 GB + communicator buffers (TP, DP, EP, MC2) 335.5 GB + ... = 381.2 GB
    over 57.6 GB usable"."""
    terms = sorted({"weights": kv.weights, "activation peak": kv.activation,
                    f"communicator buffers ({', '.join(kv.groups)})": kv.buffers,
                    "reserve": kv.reserve}.items(), key=lambda t: -t[1])
    total = sum(v for _, v in terms)
    return (" + ".join(f"{k} {v / 1e9:.1f} GB" for k, v in terms if v)
            + f" = {total / 1e9:.1f} GB over {kv.usable / 1e9:.1f} GB usable")


def model_max_len(model: ModelSpec) -> int:
    """The model's own context length (``max_position_embeddings``; 0 when unknown),
    which vLLM uses as ``max_model_len`` when the flag is absent."""
    return model.max_context
