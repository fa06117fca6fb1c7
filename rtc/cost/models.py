"""Model descriptions for the cost model: a :class:`ModelSpec` dataclass, a loader for a
Hugging Face ``config.json`` dict, and built-in presets (``models.toml``, reference
``cost-model.md`` §3.7).

Only what communication volume depends on is kept: hidden size H, layer counts (all and
MoE), experts and top-k, attention heads and KV heads (TP limits), head sizes (DCP
traffic), vocabulary (logits), dtype bytes.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, NamedTuple

from rtc.cost.errors import ModelConfigError
from rtc.resources import package_toml

#: ``torch_dtype`` / ``dtype`` values -> bytes per element.
DTYPE_BYTES: dict[str, int] = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4,
                               "float": 4, "float8_e4m3fn": 1, "float8_e5m2": 1,
                               "int8": 1}


class ModelSpec(NamedTuple):
    """A transformer as the cost model sees it.

    Counts are element counts (``hidden_size`` H, ``*_intermediate_size``, head sizes);
    ``dtype_bytes`` bytes per element of the checkpoint dtype; ``moe_layers`` layers with
    a routed MoE block (``num_layers - moe_layers`` are dense); ``num_kv_heads`` None
    when unknown; ``attention`` ``gqa``, ``mla`` or another family name."""

    name: str
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    moe_layers: int = 0
    routed_experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_intermediate_size: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    v_head_dim: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    mtp_layers: int = 0
    attention: str = "gqa"
    dtype_bytes: int = 2
    source: str = ""
    #: Bytes per weight of the released checkpoint when it differs from ``dtype_bytes``
    #: (DeepSeek-V3/R1 ship FP8 weights: 1); 0 = ``dtype_bytes``.
    weight_bytes: int = 0
    #: The model's context length (``max_position_embeddings``), vLLM's default
    #: ``max_model_len``; 0 = unknown.
    max_context: int = 0

    @property
    def is_moe(self) -> bool:
        """The model has routed experts in at least one layer."""
        return self.routed_experts > 0 and self.moe_layers > 0

    @property
    def dense_layers(self) -> int:
        """Layers with a dense MLP (``num_layers - moe_layers``)."""
        return self.num_layers - self.moe_layers

    @property
    def q_head_dim(self) -> int:
        """Elements per query head (``head_dim``, else H / heads)."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def kv_bytes_per_token(self, dtype_bytes: int | None = None) -> int:
        """KV-cache bytes one token adds per layer: MLA ``(kv_lora_rank + rope) · b``,
        else ``2 · kv_heads · head_dim · b`` (reference §3.8, DCP prefill gathers it)."""
        b = dtype_bytes or self.dtype_bytes
        if self.kv_lora_rank:
            return (self.kv_lora_rank + (self.qk_rope_head_dim or 0)) * b
        return 2 * (self.num_kv_heads or self.num_attention_heads) * self.q_head_dim * b


@functools.lru_cache(maxsize=1)
def _presets() -> dict[str, ModelSpec]:
    names = set(ModelSpec._fields)
    out: dict[str, ModelSpec] = {}
    for key, row in package_toml("cost", "models.toml").items():
        spec = ModelSpec(**{k: v for k, v in row.items() if k in names})
        for alias in (key, spec.name, *row.get("aliases", ())):
            out[alias.lower()] = spec
    return out


def preset_names() -> dict[str, ModelSpec]:
    """Every preset key, name and alias in lower case -> its model."""
    return dict(_presets())


def model_presets() -> tuple[ModelSpec, ...]:
    """The built-in models (reference §3.7), each once, in file order."""
    return tuple(dict.fromkeys(_presets().values()))


def model_preset(name: str) -> ModelSpec:
    """A built-in model by name or alias, case-insensitive (``DeepSeek-V3``,
    ``deepseek-r1``, ``Qwen2.5-72B``). ModelConfigError lists the known ones."""
    got = _presets().get(name.strip().lower())
    if got is None:
        known = ", ".join(m.name for m in model_presets())
        raise ModelConfigError(f"unknown model preset {name!r}; known: {known} "
                               f"(or give a Hugging Face config.json)")
    return got


# --------------------------------------------------------------------------- config.json

_NEEDED = ("hidden_size", "num_hidden_layers", "num_attention_heads")
_EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


def _int(cfg: Mapping, key: str, where: str, default: Any = None) -> Any:
    """``cfg[key]`` as a whole number >= 0; ``default`` when absent or null."""
    if cfg.get(key) is None:
        return default
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelConfigError(f"{where}: {key} = {value!r}; expected a whole number >= 0")
    return value


def _moe_layers(cfg: Mapping, layers: int, where: str) -> int:
    """Layers with a routed MoE block: DeepSeek ``first_k_dense_replace`` and
    ``moe_layer_freq``; Qwen-MoE ``decoder_sparse_step`` and ``mlp_only_layers``."""
    first = _int(cfg, "first_k_dense_replace", where, 0) or 0
    freq = _int(cfg, "moe_layer_freq", where, 1) or 1
    step = _int(cfg, "decoder_sparse_step", where, 1) or 1
    dense = set(cfg.get("mlp_only_layers") or ())
    return sum(1 for i in range(layers) if i >= first and (i - first) % freq == 0
               and (i + 1) % step == 0 and i not in dense)


def _dtype_bytes(cfg: Mapping, where: str) -> int:
    raw = cfg.get("torch_dtype", cfg.get("dtype"))
    if raw is None:
        return 2
    got = DTYPE_BYTES.get(str(raw).lower().removeprefix("torch."))
    if got is None:
        raise ModelConfigError(f"{where}: torch_dtype = {raw!r}; expected one of "
                               f"{', '.join(DTYPE_BYTES)}")
    return got


def _experts(cfg: Mapping, where: str) -> int:
    for key in _EXPERT_KEYS:
        value = _int(cfg, key, where, 0)
        if value:
            return value
    return 0


def _head_dim(cfg: Mapping, where: str) -> int | None:
    """``head_dim``, or MLA's ``qk_nope_head_dim + qk_rope_head_dim``."""
    nope = _int(cfg, "qk_nope_head_dim", where)
    if cfg.get("head_dim") is None and nope:
        return nope + (_int(cfg, "qk_rope_head_dim", where, 0) or 0)
    return _int(cfg, "head_dim", where)


def _spec(cfg: Mapping, label: str, where: str, experts: int) -> ModelSpec:
    layers = _int(cfg, "num_hidden_layers", where)
    heads = _int(cfg, "num_attention_heads", where)
    if not layers or not heads or not _int(cfg, "hidden_size", where):
        raise ModelConfigError(f"{where}: hidden_size, num_hidden_layers and "
                               f"num_attention_heads must be above 0")
    top_k = _int(cfg, "num_experts_per_tok", where, 0) or 0
    if experts and not top_k:
        raise ModelConfigError(f"{where}: num_experts_per_tok must be above 0 for a model "
                               f"with {experts} routed experts")
    if experts and top_k > experts:
        raise ModelConfigError(f"{where}: num_experts_per_tok {top_k} is more than the "
                               f"{experts} routed experts")
    for key in ("num_key_value_heads", "head_dim"):
        if cfg.get(key) is not None and _int(cfg, key, where) == 0:
            raise ModelConfigError(f"{where}: {key} must be above 0 (or left out)")
    return ModelSpec(
        name=label, hidden_size=cfg["hidden_size"], num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=_int(cfg, "num_key_value_heads", where, heads),
        head_dim=_head_dim(cfg, where),
        moe_layers=_moe_layers(cfg, layers, where) if experts else 0,
        routed_experts=experts, experts_per_token=top_k,
        shared_experts=_int(cfg, "n_shared_experts", where, 0) or 0,
        moe_intermediate_size=_int(cfg, "moe_intermediate_size", where),
        intermediate_size=_int(cfg, "intermediate_size", where),
        vocab_size=_int(cfg, "vocab_size", where), v_head_dim=_int(cfg, "v_head_dim", where),
        kv_lora_rank=_int(cfg, "kv_lora_rank", where),
        qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", where),
        mtp_layers=_int(cfg, "num_nextn_predict_layers", where, 0) or 0,
        attention="mla" if cfg.get("kv_lora_rank") else "gqa",
        dtype_bytes=_dtype_bytes(cfg, where), source=f"Hugging Face config.json ({label})",
        weight_bytes=_weight_bytes(cfg),
        max_context=_int(cfg, "max_position_embeddings", where, 0) or 0)


def _weight_bytes(cfg: Mapping) -> int:
    """1 for a checkpoint whose ``quantization_config`` stores 8-bit weights (``fp8``,
    or ``bits`` 8), else 0 (the dtype's bytes)."""
    q = cfg.get("quantization_config")
    if not isinstance(q, Mapping):
        return 0
    method = str(q.get("quant_method", "")).lower()
    return 1 if method == "fp8" or q.get("bits") == 8 or "fp8" in str(q.get("fmt", "")) else 0


def model_from_hf_config(config: Mapping, name: str | None = None) -> ModelSpec:
    """A :class:`ModelSpec` from a Hugging Face ``config.json`` dict.

    Needed keys: ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``, and
    ``num_experts_per_tok`` when the model has routed experts (``n_routed_experts``,
    ``num_experts`` or ``num_local_experts``). Optional: ``num_key_value_heads``
    (default: the attention heads), ``head_dim``, ``first_k_dense_replace``,
    ``moe_intermediate_size``, ``n_shared_experts``, ``kv_lora_rank``,
    ``qk_rope_head_dim``, ``v_head_dim``, ``vocab_size``, ``num_nextn_predict_layers``,
    ``torch_dtype`` (default bfloat16). A multimodal config's ``text_config`` is used
    when the top level lacks the text keys. Raises :class:`ModelConfigError` naming
    every missing key, or a key whose value is not a whole number."""
    if not isinstance(config, Mapping):
        raise ModelConfigError(f"config.json must be an object, got {type(config).__name__}")
    cfg: Mapping = config
    if "hidden_size" not in cfg and isinstance(cfg.get("text_config"), Mapping):
        cfg = {**cfg, **cfg["text_config"]}
    label = name or cfg.get("_name_or_path") or cfg.get("model_type") or "model"
    where = f"config.json of {label}"
    experts = _experts(cfg, where)
    missing = [k for k in _NEEDED if k not in cfg]
    if experts and "num_experts_per_tok" not in cfg:
        missing.append("num_experts_per_tok")
    if missing:
        raise ModelConfigError(f"{where} lacks {', '.join(missing)} (the cost model needs "
                               f"{', '.join(_NEEDED)}, and num_experts_per_tok for MoE)")
    return _spec(cfg, str(label), where, experts)
