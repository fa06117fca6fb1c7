"""Errors of the cost model: every bad input raises a :class:`CostInputError` (a
``ValueError``) whose message says what was given, where, and what is accepted."""

from __future__ import annotations


class CostInputError(ValueError):
    """Bad input to the cost model (a parameter, a model config, a layout)."""


class ParamError(CostInputError):
    """An unknown parameter key, a negative value or a unit that does not parse
    (``--param roce.alpha=20us``, or a row of ``links.toml``)."""


class NoLinkData(ParamError):
    """Hardware whose chip has no link classes in ``links.toml`` (Ascend 950 today): the
    cost model has no figures to cost it with. ``hint`` says what the user can do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


class HcclAlgoError(CostInputError):
    """An ``HCCL_ALGO`` value that does not follow HCCL's format
    (``level0:NA;level1:<algo>[;level2:<algo>]``, optionally per operator)."""


class ModelConfigError(CostInputError):
    """A model description (Hugging Face ``config.json`` dict or preset name) that lacks
    a needed key or holds a value of the wrong kind."""


class LayoutError(CostInputError):
    """A parallel layout the model or the framework cannot run (attention heads not
    divisible by TP, experts not divisible by EP, sizes that do not fill the world)."""
