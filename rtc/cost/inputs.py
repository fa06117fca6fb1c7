"""The cost model's inputs read from a compiled Topology: the parameter set (the
``links`` block, then ``--preset`` / ``--param``), each job's model (``--model``, else
``cost_model``, else a preset whose name the ``model`` path's folder starts with) and its
workload (``decode_seqs``, ``prefill_tokens``, ``mtp_tokens``).

Errors are :class:`~rtc.cost.errors.CostInputError` subclasses; :class:`LocatedError`
carries the span of the line that wrote the bad value, so the check
:mod:`rtc.checks.cost_inputs` and the commands report it at ``file:line:col``.

:mod:`rtc.cost.params` is imported only by the functions that read parameters: a
``rtc check`` of a file without a ``links`` block needs just the model presets.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import TYPE_CHECKING, NamedTuple

from rtc.cost.errors import CostInputError, ModelConfigError, ParamError

if TYPE_CHECKING:
    from rtc.cost.params import CostParams
from rtc.cost.models import (ModelSpec, model_from_hf_config, model_preset, model_presets,
                             preset_names)
from rtc.cost.workload import Workload
from rtc.diagnostics import Span
from rtc.readfile import read_text

#: Checkpoint names that say the weights are 8-bit (vllm-ascend's W8A8 / W8A8-dynamic,
#: FP8 releases): 1 byte per parameter instead of the config's dtype.
_EIGHT_BIT = re.compile(r"w8a8|w8a16|int8|fp8|w8", re.IGNORECASE)


class LocatedError(CostInputError):
    """A bad cost input with the ``span`` of the line that wrote it (None: from the
    command line) and a ``hint``."""

    def __init__(self, message: str, span: Span | None, hint: str = "") -> None:
        super().__init__(message)
        self.span, self.hint = span, hint


class ModelChoice(NamedTuple):
    """The model a job is costed with (None: none known), how it was chosen (``source``,
    e.g. ``cost_model qwen2.5-72b``), and bytes per weight parameter."""

    @property
    def label(self) -> str:
        """``Qwen2.5-72B (cost_model qwen2.5-72b)``: the model and how it was chosen."""
        return f"{self.spec.name} ({self.source})" if self.spec else self.source

    spec: ModelSpec | None
    source: str
    bytes_per_param: float = 2.0


def link_param_errors(topology, preset: str | None = None) -> list[LocatedError]:
    """One :class:`LocatedError` per ``param`` line of the ``links`` block whose key is
    unknown or whose value does not parse (empty when all are good)."""
    from rtc.cost.params import load_params, param_keys, parse_override  # see module doc

    links = topology.links
    params = load_params(preset or (links.preset if links else None) or "nominal")
    keys = set(param_keys(params))
    out = []
    seen: dict[str, Span] = {}
    for line in links.params if links else ():
        key = line.key.strip().lower()
        if key in seen:
            out.append(LocatedError(f"parameter {key!r} is given twice (first on line "
                                    f"{seen[key].line})", line.key_span,
                                    "keep one of the two lines"))
            continue
        seen[key] = line.key_span
        try:
            parse_override(f"{line.key}={line.value}", params)
        except ParamError as exc:
            known = line.key.strip().lower() in keys
            out.append(LocatedError(str(exc), line.span if known else line.key_span,
                                    "rtc cost --list-params lists the keys and their "
                                    "units"))
    return out


def topology_params(topology, *, preset: str | None = None,
                    overrides: tuple[str, ...] = ()) -> CostParams:
    """The parameter set for ``topology``: ``preset`` (else the ``links`` block's, else
    ``nominal``), the block's ``param`` lines, then ``overrides`` (``KEY=VALUE`` from the
    command line; later wins). Raises :class:`LocatedError` at the first bad line, and
    ParamError for a bad override."""
    from rtc.cost.params import apply_overrides, load_params

    bad = link_param_errors(topology, preset)
    if bad:
        raise bad[0]
    links = topology.links
    name = preset or (links.preset if links else None) or "nominal"
    lines = tuple(f"{p.key}={p.value}" for p in (links.params if links else ()))
    return apply_overrides(load_params(name), lines + tuple(overrides))


@functools.lru_cache(maxsize=8)
def _read_config(path: str, mtime_ns: int, size: int):  # noqa: ARG001 - the cache key
    """The parsed JSON of the config.json at absolute ``path``, read once per process and
    version of the file (the RTC341-343 check, RTC310's numbers and `rtc cost` all ask for
    it). Raises OSError, UnicodeDecodeError or json.JSONDecodeError (not cached). Callers
    must not mutate it."""
    return json.loads(read_text(path, encoding="utf-8-sig"))


def read_model(text: str, span: Span | None = None) -> ModelSpec:
    """A model from a preset name or a Hugging Face ``config.json`` path (UTF-8, a BOM
    allowed). The model is named by the config's ``_name_or_path`` / ``model_type``, else
    the folder of a file called ``config.json``, else the file's stem. Raises
    :class:`LocatedError` (at ``span``) for an unknown preset, an unreadable or non-UTF-8
    file, bad JSON or a config without the needed keys."""
    if not text.strip():
        raise LocatedError("the model is empty", span, "a preset name or a config.json path")
    try:
        if not text.lower().endswith(".json"):
            return model_preset(text)
        path = os.path.abspath(text)
        st = os.stat(path)
        config = _read_config(path, st.st_mtime_ns, st.st_size)
        label = (os.path.basename(os.path.dirname(path))
                 if os.path.basename(path).lower() == "config.json"
                 else os.path.splitext(os.path.basename(path))[0])
        if isinstance(config, dict) and (config.get("_name_or_path") or config.get("model_type")):
            label = None
        return model_from_hf_config(config, name=label or None)
    except OSError as exc:
        raise LocatedError(f"cannot read config.json {text!r}: {exc.strerror or exc}",
                           span, "give a readable Hugging Face config.json or a preset "
                           "name") from None
    except UnicodeDecodeError as exc:
        raise LocatedError(f"{text}: not UTF-8 text (byte {exc.start})", span,
                           "give the model's config.json") from None
    except json.JSONDecodeError as exc:
        raise LocatedError(f"{text}: not JSON ({exc.msg} at line {exc.lineno})", span,
                           "give the model's config.json") from None
    except RecursionError:
        raise LocatedError(f"{text}: its JSON is nested too deeply to read", span,
                           "give the model's config.json") from None
    except ModelConfigError as exc:
        names = ", ".join(m.name.lower() for m in model_presets())
        raise LocatedError(str(exc), span, f"presets: {names}") from None


def guess_model(path: str | None) -> ModelSpec | None:
    """The preset whose name or alias the last folder of ``path`` starts with
    (``/models/DeepSeek-R1-W8A8`` -> DeepSeek-V3, whose alias is deepseek-r1), the
    longest match winning; None when none does."""
    if not path:
        return None
    base = os.path.basename(path.rstrip("/\\")).lower().replace("_", ".")
    names = sorted(preset_names().items(), key=lambda x: -len(x[0]))
    return next((m for a, m in names if base.startswith(a.replace("_", "."))), None)


def _bytes_per_param(spec: ModelSpec, *words: str | None) -> float:
    if any(w and _EIGHT_BIT.search(w) for w in words):
        return 1.0
    return float(spec.weight_bytes or spec.dtype_bytes)


def job_model(job, override: str | None = None) -> ModelChoice:
    """The :class:`ModelChoice` of ``job`` (a Topology job): ``override`` (``--model``),
    else ``cost_model``, else :func:`guess_model` of the launch ``model`` path. Raises
    :class:`LocatedError` for a model that cannot be read."""
    served = job.launch.model
    if override:
        spec = read_model(override)
        return ModelChoice(spec, f"--model {override}", _bytes_per_param(spec, override, served))
    if job.cost.model:
        spec = read_model(job.cost.model, job.cost.spans.get("cost_model"))
        return ModelChoice(spec, f"cost_model {job.cost.model}",
                           _bytes_per_param(spec, job.cost.model, served))
    spec = guess_model(served)
    if spec is None:
        return ModelChoice(None, "no model: set `cost_model` in the job or pass --model")
    return ModelChoice(spec, f"guessed from model {served!r}; set `cost_model` to "
                       f"choose", _bytes_per_param(spec, served))


def job_workload(job, *, decode_seqs: int | None = None,
                 prefill_tokens: int | None = None) -> Workload:
    """The :class:`Workload` of ``job``: the arguments, else the job's ``decode_seqs``,
    ``prefill_tokens``, ``mtp_tokens``, else the defaults (64 sequences, 4096 tokens)."""
    c = job.cost
    values = {"decode_seqs": decode_seqs or c.decode_seqs,
              "prefill_tokens": prefill_tokens or c.prefill_tokens,
              "mtp_tokens": c.mtp_tokens}
    return Workload(**{k: v for k, v in values.items() if v is not None})


def model_kind_of(job) -> tuple[str, str] | None:
    """``(kind, source)`` for a job that does not write ``model_kind``: ``dense`` or
    ``moe`` from the model rtc recognises (``cost_model``, else the preset the launch
    ``model`` path's folder starts with, :func:`guess_model`), and how it was recognised
    (``cost_model qwen3-32b``, ``model /models/Qwen3-32B``). None when rtc knows
    nothing of the model, or its ``cost_model`` cannot be read (RTC341 reports that)."""
    spec, source = None, ""
    if job.cost.model:
        try:
            spec, source = read_model(job.cost.model), f"cost_model {job.cost.model}"
        except CostInputError:
            return None
    elif job.launch.model:
        spec, source = guess_model(job.launch.model), f"model {job.launch.model}"
    if spec is None:
        return None
    return ("moe" if spec.is_moe else "dense"), f"{source} ({spec.name})"


def settle_model_kinds(topology) -> None:
    """Set ``model_kind`` of every job of ``topology`` that does not write it from what
    rtc knows of its model (:func:`model_kind_of`), with ``model_kind_from`` saying how;
    else ``moe`` from ``expert_parallel on`` (only a MoE model has experts); a job rtc knows
    nothing of keeps the default ``moe`` (``model_kind_from`` stays ``default``; RTC332
    says so where the kind matters)."""
    for job in topology.jobs:
        if job.model_kind_from != "default":
            continue
        found = model_kind_of(job)
        if found is not None:
            job.model_kind, job.model_kind_from = found
        elif job.expert_parallel:
            job.model_kind, job.model_kind_from = "moe", "expert_parallel on"
