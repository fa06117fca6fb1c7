"""Validate a parsed JSON document against one of rtc's JSON Schemas, fast.

:func:`schema_errors` returns every JSON Schema (draft 2020-12) error of a document as flat
:class:`SchemaError` records with their JSON paths; :mod:`rtc.schema.explain` turns them into
findings in rank-table terms. ``jsonschema``'s ``Draft202012Validator`` is extended with rtc's
two reporting keywords (``x-rtc-extension``, ``x-rtc-other-version``, see
:mod:`rtc.schema.explain`).

Speed. Plain ``jsonschema`` needs ~4.5-5 s for a valid 65,536-rank v1.0 table on the 2-core
development machine; :class:`FastValidator` gives the same error set in ~0.15 s (load + detect +
validate ~0.25 s). With every one of the 65,536 ``rank_id`` s wrong it still runs ``jsonschema``
once per distinct bad value (~1.7 s), plus explaining and locating 65,536 findings (~5 s in all).
How:

* every subschema is compiled once into an exact Python predicate ("would jsonschema report
  no error here?") covering the keywords rtc's schemas use; a valid subtree costs one
  predicate call and no ``jsonschema`` work;
* a subtree whose predicate fails is decomposed: the object's own keywords (``type``,
  ``required``, ``additionalProperties``) are checked by ``jsonschema`` on a shallow copy of the
  subschema (``properties`` replaced by ``true``), cached by the object's key sequence, and the
  members are walked recursively with their subschemas; arrays likewise with ``items``;
* a failing leaf (or a subtree using keywords that are not decomposed, e.g. ``if``/``then``)
  is validated by ``jsonschema`` itself; leaf results are cached by (subschema, value).

Errors are therefore produced by ``jsonschema`` in every case, only on smaller instances; the
tests compare the two paths on the corpus and on randomly mutated tables.

Schema annotations used by rtc (ignored by other validators):

``x-rtc-expect``
    Plain words for the expected value, used in messages.
``x-rtc-extension`` (keyword)
    The key is another tool's extension that HCCL ignores; presence yields RTC618.
``x-rtc-other-version`` (keyword)
    The key belongs to another table version; presence yields RTC613.
``x-rtc-severity``
    ``"note"`` to lower RTC618 for keys written by official tooling (``IsMindIEEPJob``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Callable

from rtc.schema.forms import schema_for
from rtc.schema.paths import JsonPath

KW_EXTENSION = "x-rtc-extension"
KW_OTHER_VERSION = "x-rtc-other-version"


# --------------------------------------------------------------------------- validator class

# jsonschema is imported on first use: a valid table (every compile's output) is decided
# by the compiled predicates alone, and importing jsonschema costs ~35 ms per run.

def _kw_extension(validator, tool, instance, schema):
    from jsonschema import ValidationError

    yield ValidationError(f"extension key used by {tool}; HCCL ignores it")


def _kw_other_version(validator, version, instance, schema):
    from jsonschema import ValidationError

    yield ValidationError(f"key of version {version} rank tables")


@functools.lru_cache(maxsize=None)
def rtc_validator_class():
    """``jsonschema.Draft202012Validator`` plus rtc's two reporting keywords."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    return extend(Draft202012Validator, validators={
        KW_EXTENSION: _kw_extension,
        KW_OTHER_VERSION: _kw_other_version,
    })


# --------------------------------------------------------------------------- error records

@dataclass(frozen=True)
class SchemaError:
    """One ``jsonschema`` error, flattened (after ``best_match`` for ``anyOf``/``oneOf``)."""

    path: JsonPath
    validator: str
    validator_value: object
    message: str
    instance: object = field(compare=False, repr=False)
    schema: object = field(compare=False, repr=False)


def _record(e, prefix: JsonPath = ()) -> SchemaError:
    """Flatten a ``jsonschema.ValidationError``."""
    best = e
    if e.context and e.validator in ("anyOf", "oneOf"):
        from jsonschema.exceptions import best_match

        best = best_match([e]) or e
    return SchemaError(prefix + tuple(best.absolute_path), str(best.validator), best.validator_value,
                       best.message, best.instance, best.schema)


# --------------------------------------------------------------------------- fast validation

_ANNOTATIONS = frozenset({
    "description", "title", "$comment", "examples", "default", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$defs", "definitions", "$anchor", "x-rtc-expect",
    "x-rtc-severity",
})
#: rtc's reporting keywords: a match is a finding even where the rest of the schema passes.
ALWAYS_REPORT = frozenset({KW_EXTENSION, KW_OTHER_VERSION})
# keywords that ignore every instance but a string (JSON Schema: they "apply to strings")
_STRING_ONLY = frozenset({"pattern", "minLength", "maxLength", "format", "contentEncoding",
                          "contentMediaType"})
# keywords that only look at the instance itself (or an object's key set), never descend
_SHALLOW = frozenset({
    "type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
    "required", "additionalProperties", "minProperties", "maxProperties",
}) | ALWAYS_REPORT
_KEY_ONLY = frozenset({"type", "required", "additionalProperties", "properties"})


def is_number(x) -> bool:
    """True for a JSON number (an int or float that is not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


#: JSON Schema type name -> test of a parsed JSON value.
TYPE_TESTS: dict[str, Callable[[object], bool]] = {
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool))
    or (isinstance(x, float) and x.is_integer()),
    "number": is_number,
    "boolean": lambda x: isinstance(x, bool),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "null": lambda x: x is None,
}


def _all(checks: list[Callable[[object], bool]]) -> Callable[[object], bool]:
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda x: a(x) and b(x)

    def pred(x):
        for c in checks:
            if not c(x):
                return False
        return True
    return pred


def _members_valid(subs: dict, x: dict) -> bool:
    """Every member of object ``x`` that has a predicate in ``subs`` (property name ->
    predicate) passes it."""
    for name, val in x.items():
        p = subs.get(name)
        if p is not None and not p(val):
            return False
    return True


class _Unsupported(Exception):
    pass


class FastValidator:
    """Same error set as ``rtc_validator_class()(schema).iter_errors(doc)``, computed faster for
    tables with many repeated, mostly valid objects (see the module docstring)."""

    def __init__(self, schema: dict):
        self.schema = schema
        self._validator = None
        self._preds: dict[int, tuple[object, Callable | None]] = {}
        self._compiling: set[int] = set()
        self._derefs: dict[int, tuple[object, object]] = {}
        self._evolved: dict[int, tuple[object, object]] = {}
        self._report_only_cache: dict[int, tuple[object, frozenset]] = {}
        self._lenient: dict[int, tuple[object, dict]] = {}
        self._shallow: dict[int, tuple[object, dict | None]] = {}
        self._key_cache: dict[tuple, list[SchemaError]] = {}
        self._leaf_cache: dict[tuple, list[SchemaError]] = {}
        self._type_cache: dict[tuple, object] = {}
        #: predicate of a ``{"type": "string", "pattern": P}`` schema -> P's search
        self._searches: dict[Callable, Callable] = {}

    @property
    def validator(self):
        """The ``jsonschema`` validator for this schema, built on first use."""
        if self._validator is None:
            self._validator = rtc_validator_class()(self.schema)
        return self._validator

    # ---- $ref
    def _resolve(self, ref: str):
        if not ref.startswith("#"):
            raise _Unsupported(ref)
        node = self.schema
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def _deref(self, schema):
        """Follow a ``$ref`` that has only annotations beside it (cached)."""
        hit = self._derefs.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        target = self._deref_uncached(schema)
        self._derefs[id(schema)] = (schema, target)
        return target

    def _deref_uncached(self, schema):
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 32 and all(
                k == "$ref" or k in _ANNOTATIONS for k in schema):
            schema = self._resolve(schema["$ref"])
            seen += 1
        return schema

    # ---- predicates
    def predicate(self, schema) -> Callable[[object], bool] | None:
        """An exact validity test for ``schema``, or None when it uses other keywords
        (or is recursive)."""
        key = id(schema)
        hit = self._preds.get(key)
        if hit is not None:
            return hit[1]
        if key in self._compiling:
            raise _Unsupported("recursive schema")
        self._compiling.add(key)
        try:
            pred = self._compile(schema)
        except _Unsupported:
            pred = None
        finally:
            self._compiling.discard(key)
        self._preds[key] = (schema, pred)
        return pred

    def _sub(self, schema) -> Callable[[object], bool]:
        p = self.predicate(schema)
        if p is None:
            raise _Unsupported()
        return p

    def _compile(self, schema) -> Callable[[object], bool]:
        """The exact predicate of ``schema``: fused for common shapes, else all keyword checks."""
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise _Unsupported()
        fused = self._compile_fused(schema)
        if fused is not None:
            return fused
        checks: list[Callable[[object], bool]] = []
        for k, v in schema.items():
            if k in _ANNOTATIONS:
                continue
            if k in ALWAYS_REPORT:
                return lambda x: False
            compile_keyword = _KEYWORD_COMPILERS.get(k)
            if compile_keyword is None:
                raise _Unsupported(k)
            check = compile_keyword(self, k, v, schema)
            if check is not None:
                checks.append(check)
        return _all(checks)

    def _compile_fused(self, schema: dict) -> Callable[[object], bool] | None:
        """One predicate for the two shapes a rank table repeats per device: a string with
        a ``pattern`` / ``const`` / ``enum``, and an object with ``properties``,
        ``required`` and a boolean ``additionalProperties``. Same verdict as the general
        path (one closure per keyword), with one call per value instead of several and no
        repeated type tests; an object tests its patterned string members itself, without
        a call each. None for any other shape."""
        keys = [k for k in schema if k not in _ANNOTATIONS]
        kind = schema.get("type")
        if kind == "string" and set(keys) <= {"type", "pattern", "const", "enum"}:
            if "pattern" in keys and len(keys) == 2:
                search = re.compile(schema["pattern"]).search
                pred = lambda x: isinstance(x, str) and search(x) is not None  # noqa: E731
                self._searches[pred] = search  # objects inline it (below)
                return pred
            if "const" in keys and len(keys) == 2 and isinstance(schema["const"], str):
                const = schema["const"]
                return lambda x: isinstance(x, str) and x == const
            if "enum" in keys and len(keys) == 2 and all(isinstance(e, str) for e in schema["enum"]):
                allowed_values = frozenset(schema["enum"])
                return lambda x: isinstance(x, str) and x in allowed_values
            return None
        if kind != "object" or not set(keys) <= {"type", "properties", "required",
                                                   "additionalProperties"}:
            return None
        extra = schema.get("additionalProperties", True)
        if not isinstance(extra, bool):
            return None
        subs = {name: self._sub(sub) for name, sub in schema.get("properties", {}).items()}
        allowed = None if extra else frozenset(subs)
        required = frozenset(schema.get("required", ()))
        # Members that are patterned strings (a rank table's every scalar) are tested
        # here, without a call to their predicate; the others through it.
        searches = {name: self._searches[p] for name, p in subs.items() if p in self._searches}
        others = {name: p for name, p in subs.items() if name not in searches}

        def obj(x):
            if not isinstance(x, dict):
                return False
            if allowed is not None and not allowed.issuperset(x):
                return False
            if not required <= x.keys():
                return False
            for name, val in x.items():
                search = searches.get(name)
                if search is not None:
                    if not isinstance(val, str) or search(val) is None:
                        return False
                    continue
                p = others.get(name)
                if p is not None and not p(val):
                    return False
            return True
        return obj

    # ---- decomposition
    def _shallow_schema(self, schema) -> dict | None:
        """``schema`` without its member-applying keywords, or None if not decomposable."""
        key = id(schema)
        hit = self._shallow.get(key)
        if hit is not None:
            return hit[1]
        shallow: dict | None = None
        if isinstance(schema, dict):
            ok = True
            shallow = {}
            for k, v in schema.items():
                if k in _ANNOTATIONS or k in _SHALLOW:
                    if k == "additionalProperties" and not isinstance(v, bool):
                        ok = False
                        break
                    if k != "$defs":
                        shallow[k] = v
                elif k == "properties":
                    shallow[k] = {name: True for name in v}
                elif k == "items":
                    if "prefixItems" in schema:
                        ok = False
                        break
                    shallow[k] = True
                else:
                    ok = False
                    break
            if not ok:
                shallow = None
        self._shallow[key] = (schema, shallow)
        return shallow

    def _report_only(self, schema) -> frozenset:
        """Names of the properties whose subschema only reports (x-rtc-extension /
        x-rtc-other-version plus annotations)."""
        hit = self._report_only_cache.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        names = []
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            for name, sub in props.items():
                sub = self._deref(sub)
                if isinstance(sub, dict) and any(k in ALWAYS_REPORT for k in sub) and all(
                        k in ALWAYS_REPORT or k in _ANNOTATIONS for k in sub):
                    names.append(name)
        result = frozenset(names)
        self._report_only_cache[id(schema)] = (schema, result)
        return result

    def _lenient_predicate(self, schema) -> Callable[[object], bool] | None:
        """Exact predicate of ``schema`` with its report-only properties accepted."""
        hit = self._lenient.get(id(schema))
        if hit is not None and hit[0] is schema:
            return self.predicate(hit[1])
        report_only = self._report_only(schema)
        relaxed = dict(schema)
        relaxed["properties"] = {k: (True if k in report_only else v)
                                 for k, v in schema["properties"].items()}
        self._lenient[id(schema)] = (schema, relaxed)
        return self.predicate(relaxed)

    def iter_errors(self, instance) -> list[SchemaError]:
        out: list[SchemaError] = []
        self._walk(instance, self.schema, (), out)
        return out

    def _full(self, instance, schema, path: JsonPath, out: list[SchemaError]) -> None:
        """Plain jsonschema validation of ``instance`` against a subschema. The validator
        for the subschema is evolved from the root one once (same registry and resolver, so
        ``$ref``s resolve against the root schema, exactly as in ``descend``)."""
        if schema is self.schema:
            v = self.validator
        else:
            hit = self._evolved.get(id(schema))
            if hit is None or hit[0] is not schema:
                hit = (schema, self.validator.evolve(schema=schema))
                self._evolved[id(schema)] = hit
            v = hit[1]
        out.extend(_record(e, path) for e in v.iter_errors(instance))

    def _walk(self, inst, schema, path: JsonPath, out: list[SchemaError]) -> None:
        pred = self.predicate(schema)
        if pred is not None and pred(inst):
            return
        s = self._deref(schema)
        if isinstance(inst, (dict, list)):
            shallow = self._shallow_schema(s)
            if shallow is None:
                self._full(inst, s, path, out)
                return
            if isinstance(inst, dict):
                props = s.get("properties")
                report_only = self._report_only(s)
                if report_only:
                    # Common case: the object is valid except for extension / other-version
                    # keys, which always report. Check the rest with the lenient predicate
                    # and walk only those keys.
                    lenient = self._lenient_predicate(s)
                    if lenient is not None and lenient(inst):
                        for k, v in inst.items():
                            if k in report_only:
                                self._walk(v, props[k], path + (k,), out)
                        return
                self._shallow_object(inst, s, shallow, path, out)
                if props:
                    for k, v in inst.items():
                        sub = props.get(k)
                        if sub is not None:
                            self._walk(v, sub, path + (k,), out)
            else:
                sp = self.predicate(shallow)
                if sp is None or not sp(inst):
                    self._full(inst, shallow, path, out)
                items = s.get("items")
                if items is not None and items is not True:
                    for i, v in enumerate(inst):
                        self._walk(v, items, path + (i,), out)
            return
        if not isinstance(inst, str) and self._type_only_leaf(inst, s, path, out):
            return
        # scalar leaf: cache by (schema, type, value)
        try:
            ck = (id(s), type(inst), inst)
            hit = self._leaf_cache.get(ck)
        except TypeError:  # pragma: no cover - scalars are hashable
            ck, hit = None, None
        if hit is None:
            hit = []
            self._full(inst, s, (), hit)
            if ck is not None:
                self._leaf_cache[ck] = hit
        out.extend(SchemaError(path + e.path, e.validator, e.validator_value, e.message, e.instance, e.schema)
                   for e in hit)

    def _type_only_leaf(self, inst, s: dict, path: JsonPath, out: list[SchemaError]) -> bool:
        """A number, boolean or null where a schema of only ``type`` and string keywords
        expects a string (65,536 ``"rank_id": 0`` in one merged table): the one possible
        error is the type error, whatever the value, so jsonschema runs once per (schema,
        Python type) and the record is rebuilt for the next values. False when the
        shortcut does not apply (then the caller validates the leaf itself)."""
        key = (id(s), type(inst))
        hit = self._type_cache.get(key)
        if hit is None:
            hit = False
            if "type" in s and all(k == "type" or k in _STRING_ONLY or k in _ANNOTATIONS
                                   for k in s):
                first: list[SchemaError] = []
                self._full(inst, s, (), first)
                lead = repr(inst)
                if (len(first) == 1 and first[0].validator == "type" and not first[0].path
                        and first[0].message.startswith(lead)):
                    hit = (s, first[0].message[len(lead):])
            self._type_cache[key] = hit
        if hit is False or hit[0] is not s:
            return False
        out.append(SchemaError(path, "type", s["type"], repr(inst) + hit[1], inst, s))
        return True

    def _shallow_object(self, inst: dict, s: dict, shallow: dict, path: JsonPath, out: list[SchemaError]) -> None:
        types = s.get("type")
        cacheable = (types == "object" or (isinstance(types, list) and "object" in types)) and all(
            k in _KEY_ONLY or k in _ANNOTATIONS for k in shallow)
        if not cacheable:
            sp = self.predicate(shallow)
            if sp is None or not sp(inst):
                self._full(inst, shallow, path, out)
            return
        ck = (id(s), tuple(inst))
        hit = self._key_cache.get(ck)
        if hit is None:
            hit = []
            self._full(inst, shallow, (), hit)
            self._key_cache[ck] = hit
        out.extend(SchemaError(path + e.path, e.validator, e.validator_value, e.message, inst, s) for e in hit)


# --------------------------------------------------------------------------- keyword compilers

# One compiler per keyword group: ``(validator, keyword, value, schema)`` -> the keyword's check,
# or None when the keyword adds no check of its own; ``_Unsupported`` when it cannot be compiled.

def _compile_type(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``type``: one JSON type test, or any of several."""
    tests = [TYPE_TESTS[t] for t in ([v] if isinstance(v, str) else v)]
    return tests[0] if len(tests) == 1 else (lambda x, ts=tuple(tests): any(t(x) for t in ts))


def _compile_value(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``enum``/``const`` of strings (other values are not compiled)."""
    if k == "enum":
        if not all(isinstance(e, str) for e in v):
            raise _Unsupported()
        allowed = frozenset(v)
        return lambda x, a=allowed: isinstance(x, str) and x in a
    if not isinstance(v, str):
        raise _Unsupported()
    return lambda x, c=v: isinstance(x, str) and x == c


def _compile_string(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``pattern``/``minLength``/``maxLength`` (non-strings pass)."""
    if k == "pattern":
        search = re.compile(v).search
        return lambda x, s=search: not isinstance(x, str) or s(x) is not None
    if k == "minLength":
        return lambda x, n=v: not isinstance(x, str) or len(x) >= n
    return lambda x, n=v: not isinstance(x, str) or len(x) <= n


def _compile_number(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum`` (non-numbers pass)."""
    if k == "minimum":
        return lambda x, n=v: not is_number(x) or x >= n
    if k == "maximum":
        return lambda x, n=v: not is_number(x) or x <= n
    if k == "exclusiveMinimum":
        return lambda x, n=v: not is_number(x) or x > n
    return lambda x, n=v: not is_number(x) or x < n


def _compile_array(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``minItems``/``maxItems``/``items`` (non-arrays pass; not with ``prefixItems``)."""
    if k == "minItems":
        return lambda x, n=v: not isinstance(x, list) or len(x) >= n
    if k == "maxItems":
        return lambda x, n=v: not isinstance(x, list) or len(x) <= n
    if "prefixItems" in schema:
        return None  # checked with prefixItems (it applies to the items after the prefix)
    sub = fv._sub(v)
    return lambda x, s=sub: not isinstance(x, list) or all(map(s, x))


def _compile_prefix(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``prefixItems`` (with ``items`` for the items after the prefix, JSON Schema
    2020-12 §10.3.1; non-arrays pass)."""
    subs = tuple(fv._sub(sub) for sub in v)
    rest = fv._sub(schema["items"]) if "items" in schema else None
    n = len(subs)

    def check(x):
        if not isinstance(x, list):
            return True
        for sub, item in zip(subs, x):
            if not sub(item):
                return False
        return rest is None or len(x) <= n or all(map(rest, x[n:]))
    return check


def _compile_names(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``propertyNames``: every key of an object (non-objects pass)."""
    sub = fv._sub(v)
    return lambda x: not isinstance(x, dict) or all(map(sub, x))


def _compile_object(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool] | None:
    """``required``/``properties``/``additionalProperties`` (non-objects pass; not with
    ``patternProperties``)."""
    if k == "required":
        req = tuple(v)
        return lambda x, r=req: not isinstance(x, dict) or all(q in x for q in r)
    if k == "properties":
        subs = {name: fv._sub(s) for name, s in v.items()}
        return lambda x, subs=subs: not isinstance(x, dict) or _members_valid(subs, x)
    if "patternProperties" in schema:
        raise _Unsupported()
    if v is False:
        allowed = frozenset(schema.get("properties", ()))
        return lambda x, a=allowed: not isinstance(x, dict) or a.issuperset(x)
    if v is True:
        return None
    sub = fv._sub(v)
    known = frozenset(schema.get("properties", ()))
    return lambda x, s=sub, a=known: not isinstance(x, dict) or all(
        s(val) for name, val in x.items() if name not in a)


def _compile_ref(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``$ref``: the predicate of the (local) target."""
    return fv._sub(fv._resolve(v))


def _compile_combinator(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool]:
    """``allOf``/``anyOf``/``oneOf``/``not`` over the subschemas' predicates."""
    if k == "allOf":
        return _all([fv._sub(s) for s in v])
    if k == "anyOf":
        subs_l = [fv._sub(s) for s in v]
        return lambda x, ss=subs_l: any(s(x) for s in ss)
    if k == "oneOf":
        subs_l = [fv._sub(s) for s in v]
        return lambda x, ss=subs_l: sum(1 for s in ss if s(x)) == 1
    sub = fv._sub(v)
    return lambda x, s=sub: not s(x)


def _compile_conditional(fv: FastValidator, k: str, v, schema: dict) -> Callable[[object], bool] | None:
    """``if`` with its ``then``/``else``; None for ``then``/``else`` (ignored without ``if``)."""
    if k != "if":
        return None  # handled with "if" (ignored without it, as in jsonschema)
    p_if = fv._sub(v)
    p_then = fv._sub(schema["then"]) if "then" in schema else (lambda x: True)
    p_else = fv._sub(schema["else"]) if "else" in schema else (lambda x: True)
    return lambda x, i=p_if, t=p_then, e=p_else: t(x) if i(x) else e(x)


#: Keyword -> compiler of its check (:meth:`FastValidator._compile`); other keywords are not
#: compiled (annotations aside), and rtc's reporting keywords always fail.
_KEYWORD_COMPILERS: dict[str, Callable[..., Callable[[object], bool] | None]] = {
    "type": _compile_type,
    "enum": _compile_value,
    "const": _compile_value,
    "pattern": _compile_string,
    "minLength": _compile_string,
    "maxLength": _compile_string,
    "minimum": _compile_number,
    "maximum": _compile_number,
    "exclusiveMinimum": _compile_number,
    "exclusiveMaximum": _compile_number,
    "minItems": _compile_array,
    "maxItems": _compile_array,
    "items": _compile_array,
    "prefixItems": _compile_prefix,
    "propertyNames": _compile_names,
    "required": _compile_object,
    "properties": _compile_object,
    "additionalProperties": _compile_object,
    "$ref": _compile_ref,
    "allOf": _compile_combinator,
    "anyOf": _compile_combinator,
    "oneOf": _compile_combinator,
    "not": _compile_combinator,
    "if": _compile_conditional,
    "then": _compile_conditional,
    "else": _compile_conditional,
}


_FAST: dict[object, tuple[dict, FastValidator]] = {}


def fast_validator(form_or_schema) -> FastValidator:
    """The (cached) :class:`FastValidator` of a form name or a schema dict."""
    schema = schema_for(form_or_schema) if isinstance(form_or_schema, str) else form_or_schema
    key = form_or_schema if isinstance(form_or_schema, str) else id(schema)
    hit = _FAST.get(key)
    if hit is None or hit[0] is not schema:
        hit = _FAST[key] = (schema, FastValidator(schema))
    return hit[1]


def schema_errors(doc, form_or_schema, *, fast: bool = True) -> list[SchemaError]:
    """All schema errors of ``doc`` (unsorted), as flattened :class:`SchemaError` records.

    ``form_or_schema`` is a form name (see :data:`rtc.schema.forms.FORMS`) or a schema dict.
    ``fast=False`` runs plain ``rtc_validator_class()(schema).iter_errors`` (the reference behaviour)."""
    fv = fast_validator(form_or_schema)
    if not fast:
        return [_record(e) for e in rtc_validator_class()(fv.schema).iter_errors(doc)]
    return fv.iter_errors(doc)
