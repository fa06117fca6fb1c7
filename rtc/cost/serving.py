"""The vLLM serving flags that size the memory of a rank, read from a launch's argv words.

``--max-model-len``, ``--gpu-memory-utilization``, ``--max-num-seqs``,
``--max-num-batched-tokens``, ``--kv-cache-dtype``, ``--block-size`` and
``--enforce-eager``, as ``--flag VALUE`` or ``--flag=VALUE`` (underscores accepted, as
vLLM's ``FlexibleArgumentParser`` does). ``--max-model-len`` and
``--max-num-batched-tokens`` take vLLM's human-readable integers (``human_readable_int``
in ``vllm/engine/arg_utils.py``: ``32k`` = 32,000, ``32K`` = 32,768, ``1m`` = 1,000,000,
``1M`` = 1,048,576).

Defaults when a flag is absent are release and hardware facts, kept as data in
:data:`DEFAULTS` with the file each was read in. A value that does not parse is listed
in :attr:`ServingArgs.unreadable` and left at its default: the memory checks then say
they skipped it (the value's own rule reports the typo).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

#: (what, value, where it was read) -- vLLM v0.9 .. v0.11 ``vllm/engine/arg_utils.py``
#: ``EngineArgs`` / ``get_batch_defaults`` and vllm-ascend ``vllm_ascend/platform.py``.
DEFAULTS = {
    "gpu_memory_utilization": (0.9, "vllm/engine/arg_utils.py: CacheConfig default 0.9"),
    "max_num_seqs_large": (1024, "vllm/engine/arg_utils.py get_batch_defaults: OPENAI_API_SERVER "
                                 "on a device of >= 70 GiB that is not an A100"),
    "max_num_seqs": (256, "vllm/engine/arg_utils.py get_batch_defaults: OPENAI_API_SERVER "
                          "otherwise"),
    "max_num_batched_tokens_large": (8192, "vllm/engine/arg_utils.py get_batch_defaults "
                                           "(>= 70 GiB, not A100)"),
    "max_num_batched_tokens": (2048, "vllm/engine/arg_utils.py get_batch_defaults otherwise"),
    "block_size_gpu": (16, "vllm/config/cache.py: BlockSize default 16 on CUDA"),
    "block_size_npu": (128, "vllm_ascend/platform.py check_and_update_config: block_size "
                            "128 on Ascend"),
}

#: GiB at and above which vLLM picks the larger batch defaults (``70 * GiB_bytes``).
LARGE_DEVICE_GIB = 70

_INT_FLAGS = {"--max-model-len": "max_model_len", "--max-num-seqs": "max_num_seqs",
              "--max-num-batched-tokens": "max_num_batched_tokens",
              "--block-size": "block_size"}
_HUMAN = {"--max-model-len", "--max-num-batched-tokens"}
_FLOAT_FLAGS = {"--gpu-memory-utilization": "gpu_memory_utilization"}
_STR_FLAGS = {"--kv-cache-dtype": "kv_cache_dtype"}
_BOOL_FLAGS = {"--enforce-eager": "enforce_eager"}
_SUFFIX = {"k": 1000, "K": 1024, "m": 1000 ** 2, "M": 1024 ** 2, "g": 1000 ** 3,
           "G": 1024 ** 3}


@dataclass
class ServingArgs:
    """The flags as written (None when absent): ``max_model_len`` tokens,
    ``gpu_memory_utilization`` share of HBM, ``max_num_seqs``, ``max_num_batched_tokens``
    tokens per step, ``kv_cache_dtype`` (``auto``, ``fp8``, ``fp8_e4m3`` ...),
    ``block_size`` tokens per KV block, ``enforce_eager``; ``unreadable`` the flags whose
    value did not parse, as ``(flag, value)``."""

    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    enforce_eager: bool = False
    unreadable: list = field(default_factory=list)


def human_int(text: str, human: bool = True) -> int:
    """``text`` as a positive whole number, with vLLM's suffixes when ``human``
    (``32k``, ``128K``, ``1.5m``). Raises ValueError otherwise."""
    text = text.strip()
    scale = 1
    if human and text and text[-1] in _SUFFIX:
        scale, text = _SUFFIX[text[-1]], text[:-1]
    if not text or not all(c.isdigit() or c == "." for c in text) or text.count(".") > 1:
        raise ValueError(text)
    value = float(text) * scale if "." in text else int(text) * scale
    if value != int(value) or int(value) < 1 or len(str(int(value))) > 12:
        raise ValueError(text)
    return int(value)


def _pairs(words: Iterable[str]):
    """(flag, value or None) for every ``--flag`` word, flags normalised to dashes."""
    words = list(words)
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, eq, value = word.partition("=")
        name = "--" + name[2:].replace("_", "-")
        if not eq:
            nxt = words[i + 1] if i + 1 < len(words) else None
            value = nxt if nxt is not None and not nxt.startswith("--") else None
        yield name, value


def serving_args(words: Iterable[str]) -> ServingArgs:
    """Read :class:`ServingArgs` from argv words (the last occurrence of a flag wins, as
    argparse does)."""
    out = ServingArgs()
    for name, value in _pairs(words):
        if name in _BOOL_FLAGS:
            out.enforce_eager = True
            continue
        attr = _INT_FLAGS.get(name) or _FLOAT_FLAGS.get(name) or _STR_FLAGS.get(name)
        if attr is None:
            continue
        if value is None:
            out.unreadable.append((name, ""))
            continue
        try:
            if name in _INT_FLAGS:
                got = human_int(value, name in _HUMAN)
            elif name in _FLOAT_FLAGS:
                got = float(value)
                if not 0 < got <= 1:
                    raise ValueError(value)
            else:
                got = value.strip().lower()
        except ValueError:
            out.unreadable.append((name, value))
            continue
        setattr(out, attr, got)
    return out


def batch_defaults(hbm_gib: float, chip: str) -> tuple[int, int]:
    """vLLM's (max_num_seqs, max_num_batched_tokens) for an OpenAI server on a device
    of ``hbm_gib`` GiB named ``chip`` (:data:`DEFAULTS`)."""
    if hbm_gib >= LARGE_DEVICE_GIB and "a100" not in chip.lower():
        return DEFAULTS["max_num_seqs_large"][0], DEFAULTS["max_num_batched_tokens_large"][0]
    return DEFAULTS["max_num_seqs"][0], DEFAULTS["max_num_batched_tokens"][0]
