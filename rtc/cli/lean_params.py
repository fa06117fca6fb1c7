"""Command-line values without pydantic: typer (0.2x) converts every parameter's value
through a pydantic ``TypeAdapter``, so each run imports pydantic and builds adapters
before rtc does anything -- about a third of ``rtc compile``'s start-up on the 2-server
example (measured with ``python -X importtime``; see benchmarks/bench_startup.py).

rtc's parameters are all ``str``, ``int`` or ``float`` (optionally with ``min``/``max``),
``bool``, ``Path`` or ``list[...]`` of those (``Optional[...]`` is unwrapped by typer before it gets
here). For exactly those annotations :func:`install` gives typer a plain conversion with
typer's own rules: strings stay strings, integers are parsed from decimal text and
range-checked, floats are parsed with ``float`` (not NaN) and range-checked, paths go through typer's own ``coerce_cli_path`` (the same exists /
readable checks and messages) and become ``Path``. Any other annotation, and any value
of an unexpected kind, is handed to typer's original pydantic conversion, so behaviour
never changes -- only what is imported.

:func:`install` does nothing when typer lacks the internals it relies on
(``typer.core.build_runtime_param``, ``typer._coercion.RuntimeParam``,
``typer._param_types.coerce_cli_path``): an older or newer typer then runs as it is,
slower to start but the same.
"""

from __future__ import annotations

import re
from pathlib import Path

_DECIMAL = re.compile(r"[+-]?[0-9]+")
_installed = False


def install() -> bool:
    """Route rtc's simple parameter types around pydantic; True when installed."""
    global _installed
    if _installed:
        return True
    try:
        import typer.core as core
        from typer._coercion import RuntimeParam
        from typer._param_types import coerce_cli_path
    except ImportError:
        return False
    original = getattr(core, "build_runtime_param", None)
    if original is None or not isinstance(RuntimeParam, type):
        return False
    lean = _lean_class(RuntimeParam, original, coerce_cli_path)

    def build_runtime_param(descriptor):
        kind = _kind(descriptor)
        if kind is None:
            return original(descriptor)
        return lean(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation,
                    kind=kind, descriptor=descriptor)

    build_runtime_param.typer_original = original  # for tests: the conversion replaced
    core.build_runtime_param = build_runtime_param
    _installed = True
    return True


def _kind(descriptor) -> str | None:
    """'str', 'int', 'float', 'path', 'list[str]' or 'list[path]' for the annotations handled here
    ('bool' too: typer skips conversion of flags that are already booleans); None for
    everything else (typer converts those itself)."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None:
        return None
    if getattr(info, "clamp", False):
        return None
    annotation = descriptor.annotation
    args = getattr(annotation, "__args__", None)
    if getattr(annotation, "__origin__", None) is list and args and len(args) == 1:
        inner = _scalar_kind(args[0])
        return f"list[{inner}]" if inner in ("str", "path") else None
    return _scalar_kind(annotation)


def _scalar_kind(annotation) -> str | None:
    if annotation is str:
        return "str"
    if annotation is int:
        return "int"
    if annotation is float:
        return "float"
    if annotation is bool:
        return "bool"
    if annotation is Path:
        return "path"
    return None


def _lean_class(base, original, coerce_cli_path):
    """A ``RuntimeParam`` subclass (typer's interface: ``_coerce_value(value, param, ctx)``)
    converting values of the :func:`_kind` kinds; others go to ``original``."""
    from typer._click.exceptions import BadParameter

    class LeanRuntimeParam(base):
        # a plain subclass of typer's frozen dataclass: no dataclass code generation at
        # start-up (that is what this module saves time on)
        def __init__(self, *, parameter_info, annotation, kind: str, descriptor):
            base.__init__(self, parameter_info=parameter_info, annotation=annotation)
            object.__setattr__(self, "kind", kind)
            object.__setattr__(self, "descriptor", descriptor)

        def _coerce_value(self, value, param, ctx):
            kind = self.kind
            if kind.startswith("list[") and isinstance(value, (list, tuple)):
                item = kind[5:-1]
                return [self._one(item, v, param, ctx) for v in value]
            if not kind.startswith("list["):
                return self._one(kind, value, param, ctx)
            return self._typer(value, param, ctx)

        def _one(self, kind, value, param, ctx):
            if kind == "str" and isinstance(value, str):
                return value
            if kind == "int" and isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
                return _in_range(int(value.strip()), self.parameter_info, param, ctx)
            if kind == "int" and type(value) is int:
                return _in_range(value, self.parameter_info, param, ctx)
            if kind == "int" and isinstance(value, str):
                raise BadParameter(f"{value!r} is not a whole number.", ctx=ctx, param=param)
            if kind == "float" and (isinstance(value, str) or type(value) in (int, float)):
                return _in_range(_number(value, param, ctx), self.parameter_info, param, ctx)
            if kind == "bool" and isinstance(value, bool):
                return value
            if kind == "path" and isinstance(value, (str, Path)):
                rv = coerce_cli_path(str(value), self.parameter_info, path_type=None,
                                     param=param, ctx=ctx)
                return Path(rv) if isinstance(rv, str) else rv
            return self._typer(value, param, ctx)

        def _typer(self, value, param, ctx):
            """typer's own conversion (pydantic), for values of an unexpected kind."""
            return original(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    return LeanRuntimeParam


def _number(value, param, ctx) -> float:
    """``value`` as a float, as pydantic's lax mode reads it (decimal or exponent
    text, surrounding spaces, ``_`` between digits, ``inf``); NaN is refused (no
    range holds it)."""
    try:
        n = float(value)
    except ValueError:
        n = float("nan")
    if n != n:
        raise _bad(f"{value!r} is not a number.", ctx=ctx, param=param)
    return n


def _in_range(n, info, param, ctx):
    """``n`` when it is inside the parameter's ``min``/``max``, else BadParameter."""
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    if low is not None and n < low:
        raise _bad(f"{n} is less than the smallest allowed value, {low}.", ctx=ctx,
                   param=param)
    if high is not None and n > high:
        raise _bad(f"{n} is more than the largest allowed value, {high}.", ctx=ctx,
                   param=param)
    return n


def _bad(message: str, *, ctx, param):
    """typer's BadParameter (the parser reports it as a usage error, exit 2)."""
    from typer._click.exceptions import BadParameter

    return BadParameter(message, ctx=ctx, param=param)
