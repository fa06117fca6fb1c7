"""Deterministic, indented JSON text, fast.

:func:`dumps_indented` returns exactly what ``json.dumps(obj, indent=2, ensure_ascii=False)``
returns (a test holds it to that), but ``json.dumps`` with an indent falls back to the
pure-Python encoder; this writer uses the C string escaper and handles the rank table's
many small all-string objects in one step each, which roughly halves the time for a
65,536-rank table.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring as quote_json  # C implementation when available


def _scalar(value) -> str:
    if isinstance(value, str):
        return quote_json(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return json.dumps(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_indented(obj, indent: int = 2) -> str:
    """JSON text of ``obj`` (dicts, lists, str, int, float, bool, None) with ``indent``
    spaces per level and keys in insertion order, without a trailing newline.

    Raises TypeError for values JSON cannot hold."""
    out: list[str] = []
    emitter(out.append, indent)(obj, 0)
    return "".join(out)


def render(doc) -> str:
    """Deterministic JSON text of a rank table or topology file: 2-space indent, keys in
    insertion order, trailing newline (byte-identical to ``json.dumps(doc, indent=2,
    ensure_ascii=False)``)."""
    return dumps_indented(doc) + "\n"


def emitter(append, indent: int):
    """``emit(o, level)``: append the JSON text of ``o`` at nesting ``level``. (Closures,
    built once per call of :func:`dumps_indented`, so the per-value recursion pays no
    extra calls or attribute lookups.)"""
    emit_flat_objects = _flat_objects_emitter(append, indent)

    def emit(o, level: int) -> None:
        if isinstance(o, dict):
            if not o:
                append("{}")
                return
            pad = "\n" + " " * (indent * (level + 1))
            if all(type(v) is str for v in o.values()):
                append("{" + ",".join(pad + quote_json(k) + ": " + quote_json(v) for k, v in o.items())
                       + "\n" + " " * (indent * level) + "}")
                return
            append("{")
            sep = pad
            for k, v in o.items():
                if not isinstance(k, str):
                    raise TypeError("rtc writes only string keys")
                append(sep + quote_json(k) + ": ")
                emit(v, level + 1)
                sep = "," + pad
            append("\n" + " " * (indent * level) + "}")
        elif isinstance(o, (list, tuple)):
            if not o:
                append("[]")
                return
            if emit_flat_objects(o, level):
                return
            pad = "\n" + " " * (indent * (level + 1))
            append("[")
            sep = pad
            for v in o:
                append(sep)
                emit(v, level + 1)
                sep = "," + pad
            append("\n" + " " * (indent * level) + "]")
        else:
            append(_scalar(o))

    return emit


def _flat_objects_emitter(append, indent: int):
    """``emit_flat_objects(items, level)`` for lists of flat all-string objects with the
    same keys (the rank table's 65,536 device entries): one %-format per (keys, level),
    so one format operation per object."""
    formats: dict = {}

    def flat_format(keys: tuple, level: int) -> str:
        got = formats.get((keys, level))
        if got is None:
            pad = "\n" + " " * (indent * (level + 1))
            got = ("{" + ",".join(pad + quote_json(k).replace("%", "%%") + ": %s" for k in keys)
                   + "\n" + " " * (indent * level) + "}")
            formats[(keys, level)] = got
        return got

    def emit_flat_objects(items: list, level: int) -> bool:
        """Emit a list of same-keyed all-string dicts in one step each; False when the
        list is not that (the general path handles it)."""
        first = items[0]
        if type(first) is not dict or not first:
            return False
        keys = tuple(first)
        fmt = flat_format(keys, level + 1)
        pad = "\n" + " " * (indent * (level + 1))
        texts = []
        try:
            for d in items:
                if type(d) is not dict or tuple(d) != keys:
                    return False
                texts.append(fmt % tuple(map(quote_json, d.values())))
        except TypeError:  # a value that is not a string
            return False
        append("[" + pad + ("," + pad).join(texts) + "\n" + " " * (indent * level) + "]")
        return True

    return emit_flat_objects
