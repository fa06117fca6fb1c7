"""Validate a parsed rank table against the JSON Schema of its form and explain each error.

:func:`validate_document` runs JSON Schema draft 2020-12 validation (``jsonschema``'s
``Draft202012Validator`` extended with rtc's two annotation keywords, see below) and turns
every error — all of them, not only the first — into a :class:`~rtc.diagnostics.Diagnostic`
with a rule id, the JSON path and offending value in the message, a hint, and the line and
column of the value (or key) in the file. Where ``anyOf``/``oneOf`` produce a tree of errors,
``jsonschema.exceptions.best_match`` picks the one to report.

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

Rule ids (RTC610..RTC619):

``RTC610`` wrong JSON type (error)
    What: e.g. ``"rank_id": 0`` in a v1.x table, ``"rank_count": "2"`` in a 2.0 table, an
    object where an array belongs. Why it breaks: HCCL's v1.x getters check ``is_string()``
    ("json object property value of Name[rank_id] is not string!"), the 2.0 getters read JSON
    integers; either way initialisation fails. (MindSpore's merge_hccl.py shipped this exact
    bug once.) Fix: quote the number in v1.x / legacy / PD tables; unquote it in 2.0.

``RTC611`` required key missing (error)
    What: e.g. a device without ``device_id`` or ``rank_id``, a table without ``version``.
    Why: the parser requires the key and stops. Fix: add it; if a similar unknown key is
    present (a typo) the hint names it.

``RTC612`` unknown key (error)
    What: a key the form does not define, e.g. ``devcie_ip``; the message suggests the closest
    known key ("did you mean `device_ip`?"). Why it breaks: HCCL silently ignores unknown keys,
    so whatever the key was meant to set is not set (a misspelt ``device_ip`` is a missing
    device IP). Fix: rename or remove it.

``RTC613`` key of another version (warning)
    What: a version-1.2 key (``super_device_id``, ``super_pod_list``, ``backup_device_ip``, ...)
    in a ``"version": "1.0"`` table. Why: HCCL reads these only in 1.2 tables, so they have no
    effect. Fix: set ``"version": "1.2"`` for an A3 SuperPoD table, or remove the keys.
    Reported once per key with the number of occurrences.

``RTC614`` value not allowed (error)
    What: a value outside a fixed set, e.g. ``"status": "complete"``, ``"addr_type": "ipv4"``,
    a wrong ``version`` under ``--schema``. Why: HCCL compares these strings exactly
    (``status`` other than "completed" makes HCCL wait up to 30 minutes and give up).
    Fix: use one of the listed values (the hint suggests the closest).

``RTC615`` malformed value (error)
    What: a string that does not have the required shape: a decimal string with other
    characters (``"rank_id": "r0"``, ``"-1"``), a port outside 1..65535, an IP field with
    characters no IPv4/IPv6 address has (masked documentation placeholders such as
    ``192.1.*.6``, spaces after commas), a 2.0 port not in "die/port" form. Why: the parser
    converts the string and fails. Fix: write the value as the message says. (The schema only
    checks the character set of IP fields; whether an address parses, is unique and is of the
    right family is left to the semantic checks.)

``RTC616`` wrong number of items (error)
    What: an empty ``server_list``/``device``/``rank_list``, more than 8 ``level_list``
    entries, more than 16 ``ports``, etc. Why: the parser rejects empty lists and enforces the
    limits. Fix: add the missing entries or split the list.

``RTC617`` out of range (error)
    What: a number or length outside its bounds: ``server_id`` longer than 64 characters or
    empty, ``net_layer`` above 7, ``local_id`` above 64, a 2.0 port outside 1..65535. Why: the
    parser range-checks these values. Fix: use a value within the stated range.

``RTC618`` extension key ignored by HCCL (warning; note for keys written by official tooling)
    What: keys other tools add: MindSpore cross-cluster (``server_ip``, ``pod_ip``,
    ``dpu_ip``, ``numa_id``, ``cluster_list``), Ascend Operator's ``IsMindIEEPJob``. Why: HCCL
    ignores them, so anything they are meant to achieve (e.g. cross-cluster placement) does not
    happen in HCCL; fine when the file is meant for that tool. Fix: none needed if intended;
    otherwise remove them. Reported once per key with the number of occurrences.

``RTC619`` other schema violation (error)
    What: anything the rules above do not cover (e.g. no alternative of a ``oneOf`` matches
    and ``best_match`` cannot single one out, or ``uniqueItems``); the message is
    ``jsonschema``'s. rtc's own schemas do not produce it today; it keeps custom or future
    schemas from losing findings. Why it breaks: the value is not in a shape the reader of
    the file accepts. Fix: as the message says.

RTC620..RTC629 are reserved for this module.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Callable

import functools

from rtc.diagnostics import Diagnostic, Severity, Span, sorted_diagnostics

from .forms import FORM_DESCRIPTIONS, FORMS, schema_for
from .jsonload import JsonPath, SourceMap, format_path

__all__ = [
    "rtc_validator_class",
    "FastValidator",
    "SchemaError",
    "Finding",
    "schema_errors",
    "fast_validator",
    "check_schema",
    "validate_document",
]

RULE_TYPE = "RTC610"
RULE_REQUIRED = "RTC611"
RULE_UNKNOWN_KEY = "RTC612"
RULE_OTHER_VERSION = "RTC613"
RULE_ENUM = "RTC614"
RULE_FORMAT = "RTC615"
RULE_ITEMS = "RTC616"
RULE_RANGE = "RTC617"
RULE_EXTENSION = "RTC618"
RULE_OTHER = "RTC619"

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
_ALWAYS_REPORT = frozenset({KW_EXTENSION, KW_OTHER_VERSION})
# keywords that only look at the instance itself (or an object's key set), never descend
_SHALLOW = frozenset({
    "type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
    "required", "additionalProperties", "minProperties", "maxProperties",
}) | _ALWAYS_REPORT
_KEY_ONLY = frozenset({"type", "required", "additionalProperties", "properties"})


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPE_TESTS: dict[str, Callable[[object], bool]] = {
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool))
    or (isinstance(x, float) and x.is_integer()),
    "number": _is_number,
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
            if k in _ALWAYS_REPORT:
                return lambda x: False
            if k == "type":
                tests = [_TYPE_TESTS[t] for t in ([v] if isinstance(v, str) else v)]
                checks.append(tests[0] if len(tests) == 1 else (lambda x, ts=tuple(tests): any(t(x) for t in ts)))
            elif k == "enum":
                if not all(isinstance(e, str) for e in v):
                    raise _Unsupported()
                allowed = frozenset(v)
                checks.append(lambda x, a=allowed: isinstance(x, str) and x in a)
            elif k == "const":
                if not isinstance(v, str):
                    raise _Unsupported()
                checks.append(lambda x, c=v: isinstance(x, str) and x == c)
            elif k == "pattern":
                search = re.compile(v).search
                checks.append(lambda x, s=search: not isinstance(x, str) or s(x) is not None)
            elif k == "minLength":
                checks.append(lambda x, n=v: not isinstance(x, str) or len(x) >= n)
            elif k == "maxLength":
                checks.append(lambda x, n=v: not isinstance(x, str) or len(x) <= n)
            elif k == "minimum":
                checks.append(lambda x, n=v: not _is_number(x) or x >= n)
            elif k == "maximum":
                checks.append(lambda x, n=v: not _is_number(x) or x <= n)
            elif k == "exclusiveMinimum":
                checks.append(lambda x, n=v: not _is_number(x) or x > n)
            elif k == "exclusiveMaximum":
                checks.append(lambda x, n=v: not _is_number(x) or x < n)
            elif k == "minItems":
                checks.append(lambda x, n=v: not isinstance(x, list) or len(x) >= n)
            elif k == "maxItems":
                checks.append(lambda x, n=v: not isinstance(x, list) or len(x) <= n)
            elif k == "required":
                req = tuple(v)
                checks.append(lambda x, r=req: not isinstance(x, dict) or all(q in x for q in r))
            elif k == "properties":
                subs = {name: self._sub(s) for name, s in v.items()}

                checks.append(lambda x, subs=subs: not isinstance(x, dict)
                              or _members_valid(subs, x))
            elif k == "additionalProperties":
                if "patternProperties" in schema:
                    raise _Unsupported()
                if v is False:
                    allowed = frozenset(schema.get("properties", ()))
                    checks.append(lambda x, a=allowed: not isinstance(x, dict) or a.issuperset(x))
                elif v is not True:
                    sub = self._sub(v)
                    known = frozenset(schema.get("properties", ()))
                    checks.append(lambda x, s=sub, a=known: not isinstance(x, dict)
                                  or all(s(val) for name, val in x.items() if name not in a))
            elif k == "items":
                if "prefixItems" in schema:
                    raise _Unsupported()
                sub = self._sub(v)
                checks.append(lambda x, s=sub: not isinstance(x, list) or all(map(s, x)))
            elif k == "$ref":
                checks.append(self._sub(self._resolve(v)))
            elif k == "allOf":
                checks.append(_all([self._sub(s) for s in v]))
            elif k == "anyOf":
                subs_l = [self._sub(s) for s in v]
                checks.append(lambda x, ss=subs_l: any(s(x) for s in ss))
            elif k == "oneOf":
                subs_l = [self._sub(s) for s in v]
                checks.append(lambda x, ss=subs_l: sum(1 for s in ss if s(x)) == 1)
            elif k == "not":
                sub = self._sub(v)
                checks.append(lambda x, s=sub: not s(x))
            elif k == "if":
                p_if = self._sub(v)
                p_then = self._sub(schema["then"]) if "then" in schema else (lambda x: True)
                p_else = self._sub(schema["else"]) if "else" in schema else (lambda x: True)
                checks.append(lambda x, i=p_if, t=p_then, e=p_else: t(x) if i(x) else e(x))
            elif k in ("then", "else"):
                continue  # handled with "if" (ignored without it, as in jsonschema)
            else:
                raise _Unsupported(k)
        return _all(checks)

    def _compile_fused(self, schema: dict) -> Callable[[object], bool] | None:
        """One predicate for the two shapes a rank table repeats per device: a string with
        a ``pattern`` / ``const`` / ``enum``, and an object with ``properties``,
        ``required`` and a boolean ``additionalProperties``. Same verdict as the general
        path (one closure per keyword), with one call per value instead of several and no
        repeated type tests. None for any other shape."""
        keys = [k for k in schema if k not in _ANNOTATIONS]
        kind = schema.get("type")
        if kind == "string" and set(keys) <= {"type", "pattern", "const", "enum"}:
            if "pattern" in keys and len(keys) == 2:
                search = re.compile(schema["pattern"]).search
                return lambda x: isinstance(x, str) and search(x) is not None
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
        required = tuple(schema.get("required", ()))

        def obj(x):
            if not isinstance(x, dict):
                return False
            if allowed is not None and not allowed.issuperset(x):
                return False
            for q in required:
                if q not in x:
                    return False
            return _members_valid(subs, x)
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
                if isinstance(sub, dict) and any(k in _ALWAYS_REPORT for k in sub) and all(
                        k in _ALWAYS_REPORT or k in _ANNOTATIONS for k in sub):
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

    ``form_or_schema`` is a form name (see :data:`rtc.tables.forms.FORMS`) or a schema dict.
    ``fast=False`` runs plain ``rtc_validator_class()(schema).iter_errors`` (the reference behaviour)."""
    fv = fast_validator(form_or_schema)
    if not fast:
        return [_record(e) for e in rtc_validator_class()(fv.schema).iter_errors(doc)]
    return fv.iter_errors(doc)


# --------------------------------------------------------------------------- explaining errors

@dataclass(frozen=True)
class Finding:
    """A schema finding before it becomes a :class:`Diagnostic`: the rule id, the JSON path,
    the offending value, and whether the span should point at the key rather than the value."""

    code: str
    severity: Severity
    path: JsonPath
    message: str
    hint: str | None = None
    value: object = field(default=None, compare=False, repr=False)
    at_key: bool = False
    count: int = 1


_JSON_TYPE = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
              int: "a number", float: "a number", type(None): "null"}
_TYPE_WORDS = {"string": "a JSON string", "integer": "a JSON integer", "number": "a JSON number",
               "object": "a JSON object", "array": "a JSON array", "boolean": "true or false",
               "null": "null"}


def _jtype(x) -> str:
    return _JSON_TYPE.get(type(x), type(x).__name__)


def _show(x, limit: int = 60) -> str:
    if isinstance(x, (dict, list)):
        s = "{...}" if isinstance(x, dict) else "[...]"
        return s
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= limit else s[: limit - 4] + "...\""


def _found(x) -> str:
    """The offending value for a message: ``string "8"``, ``number 8``, ``null``."""
    return "null" if x is None else f"{_jtype(x)} {_show(x)}"


def _where(path: JsonPath) -> str:
    return "the top level" if not path else format_path(path)


def _name(path: JsonPath) -> str:
    for elem in reversed(path):
        if isinstance(elem, str):
            return elem
    return "$"


class _SchemaInfo:
    """Looks up property subschemas by instance path (for x-rtc-expect and key lists)."""

    def __init__(self, schema: dict, fv: FastValidator):
        self.schema = schema
        self.fv = fv

    def at(self, path: JsonPath):
        """The property/items subschema that applies at ``path`` (not dereferenced)."""
        s = self.schema
        for elem in path:
            s = self.fv._deref(s)
            if not isinstance(s, dict):
                return None
            s = s.get("items") if isinstance(elem, int) else (s.get("properties") or {}).get(elem)
            if s is None:
                return None
        return s

    def expect(self, path: JsonPath, err_schema) -> str | None:
        raw = self.at(path)
        for s in (err_schema, raw, self.fv._deref(raw) if raw is not None else None):
            if isinstance(s, dict) and s.get("x-rtc-expect"):
                return s["x-rtc-expect"]
        return None

    def known_keys(self, path: JsonPath) -> list[str]:
        s = self.fv._deref(self.at(path)) if path else self.fv._deref(self.schema)
        if isinstance(s, dict):
            return list((s.get("properties") or {}).keys())
        return []


_OTHER_FORM_KEYS: dict[str, list[str]] | None = None


def _keys_by_form() -> dict[str, list[str]]:
    """Every property name used anywhere in each form's schema (for 'belongs to' hints)."""
    global _OTHER_FORM_KEYS
    if _OTHER_FORM_KEYS is None:
        out: dict[str, list[str]] = {}

        def collect(node, acc: set):
            if isinstance(node, dict):
                props = node.get("properties")
                if isinstance(props, dict):
                    for k, v in props.items():
                        if not (isinstance(v, dict) and (KW_OTHER_VERSION in v)):
                            acc.add(k)
                for v in node.values():
                    collect(v, acc)
            elif isinstance(node, list):
                for v in node:
                    collect(v, acc)
        for form in FORMS:
            acc: set = set()
            collect(schema_for(form), acc)
            out[form] = sorted(acc)
        _OTHER_FORM_KEYS = out
    return _OTHER_FORM_KEYS


def _type_fits(value, schema, info: _SchemaInfo) -> bool:
    """Could ``value`` be meant for a property with ``schema`` (judging by JSON type only)?"""
    s = info.fv._deref(schema)
    types = s.get("type") if isinstance(s, dict) else None
    if types is None:
        return True
    return any(_TYPE_TESTS[t](value) for t in ([types] if isinstance(types, str) else types))


def _suggest(key: str, candidates: list[str], form: str) -> tuple[str | None, str | None]:
    """(closest known key, other form that defines ``key``) for an unknown key. A very close
    match wins (a typo); otherwise a key of another form is reported as such."""
    scored = sorted(((difflib.SequenceMatcher(None, key, c).ratio(), c) for c in candidates), reverse=True)
    best = scored[0] if scored else (0.0, None)
    elsewhere = [f for f, keys in _keys_by_form().items() if f != form and key in keys]
    if best[0] >= 0.8:
        return best[1], None
    if elsewhere:
        return None, elsewhere[0]
    return (best[1] if best[0] >= 0.6 else None), None


def _explain(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    v = err.validator
    path = err.path
    inst = err.instance
    name = _name(path)
    where = _where(path)
    E = Severity.ERROR

    if v == "type":
        expected = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        if expected == ["string"] and _is_number(inst):
            text = json.dumps(inst)
            quoted = str(int(inst)) if isinstance(inst, float) and inst.is_integer() and name != "version" else text
            if form in ("hccl-v2.0", "topo-v2.0"):
                hint = f"write \"{name}\": \"{quoted}\""
            else:
                hint = (f"write \"{name}\": \"{quoted}\"; in version 1.x tables every value is a string "
                        f"and HCCL fails with \"json object property value of Name[{name}] is not string!\"")
            return [Finding(RULE_TYPE, E, path,
                            f"{where}: `{name}` must be a JSON string (\"{quoted}\"), not the bare number {text}",
                            hint=hint, value=inst)]
        if expected == ["integer"] and isinstance(inst, str) and re.fullmatch(r"\s*-?[0-9]+\s*", inst):
            return [Finding(RULE_TYPE, E, path,
                            f"{where}: `{name}` must be a JSON integer in a {FORM_DESCRIPTIONS.get(form, form)}, "
                            f"not the string {_show(inst)}",
                            hint=f"write \"{name}\": {inst.strip()} (no quotes); version 2.0 reads "
                                 f"numbers as JSON integers",
                            value=inst)]
        want = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        return [Finding(RULE_TYPE, E, path,
                        f"{where}: `{name}` must be {want}, found {_found(inst)}",
                        hint=None, value=inst)]

    if v == "required":
        missing = None
        for k in err.validator_value or ():
            if f"{k!r} is a required property" == err.message:
                missing = k
                break
        if missing is None:
            missing = err.message.split("'")[1] if "'" in err.message else err.message
        hint = None
        if isinstance(inst, dict):
            known = set(info.known_keys(path))
            prop = info.at(path + (missing,))
            scored = sorted(
                ((difflib.SequenceMatcher(None, k, missing).ratio(), k) for k in inst
                 if k not in known and _suggest(k, [missing], form)[0] == missing
                 and (prop is None or _type_fits(inst[k], prop, info))), reverse=True)
            if scored:
                hint = f"`{scored[0][1]}` is present: a misspelling of `{missing}`? rename it"
        if hint is None and missing == "version" and not path:
            ver = {"hccl-v1.0": "1.0", "hccl-v1.2": "1.2", "hccl-v2.0": "2.0"}.get(form)
            if ver:
                hint = (f"add \"version\": \"{ver}\"; without `version` HCCL reads the file as the "
                        f"legacy group_list form and fails")
        if hint is None:
            hint = f"add `{missing}` to {where}"
        return [Finding(RULE_REQUIRED, E, path,
                        f"{where}: required key `{missing}` is missing", hint=hint, value=None)]

    if v == "additionalProperties":
        known = info.known_keys(path)
        extras = [k for k in inst if k not in set(known)] if isinstance(inst, dict) else []
        out = []
        props = info.fv._deref(info.at(path) if path else info.schema)
        props = props.get("properties", {}) if isinstance(props, dict) else {}
        for k in extras:
            # candidates: known keys that are absent here and could hold this value
            free = [c for c in known if c not in inst and (c not in props or _type_fits(inst[k], props[c], info))]
            close, elsewhere = _suggest(k, free, form)
            msg = f"{_where(path + (k,))}: unknown key `{k}` in {where}"
            if close:
                msg += f"; did you mean `{close}`?"
                hint = f"rename `{k}` to `{close}`; HCCL silently ignores unknown keys"
            else:
                if elsewhere:
                    hint = (f"`{k}` is a key of {FORM_DESCRIPTIONS[elsewhere]}; check `version` "
                            f"(this file is checked as {FORM_DESCRIPTIONS.get(form, form)})")
                else:
                    shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
                    hint = f"known keys here: {shown}; HCCL silently ignores unknown keys"
            out.append(Finding(RULE_UNKNOWN_KEY, E, path + (k,), msg, hint=hint,
                               value=inst.get(k), at_key=True))
        return out

    if v == KW_OTHER_VERSION:
        ver = err.validator_value
        return [Finding(RULE_OTHER_VERSION, Severity.WARNING, path,
                        f"{where}: `{name}` is a version {ver} key; HCCL does not use it in a "
                        f"version {'1.0' if form == 'hccl-v1.0' else form} table",
                        hint=f"for an A3 SuperPoD table set \"version\": \"{ver}\"; otherwise remove `{name}`",
                        value=inst, at_key=True)]

    if v == KW_EXTENSION:
        sev = Severity.NOTE if isinstance(err.schema, dict) and err.schema.get("x-rtc-severity") == "note" \
            else Severity.WARNING
        return [Finding(RULE_EXTENSION, sev, path,
                        f"{where}: `{name}` is an extension key of {err.validator_value}; HCCL ignores it",
                        hint="fine if the file is meant for that tool; HCCL itself does not act on it",
                        value=inst, at_key=True)]

    if v in ("enum", "const"):
        allowed = err.validator_value if v == "enum" else [err.validator_value]
        if all(isinstance(a, str) for a in allowed) and not isinstance(inst, str):
            want = info.expect(path, err.schema) or " or ".join(json.dumps(a) for a in allowed)
            quoted = (str(int(inst)) if isinstance(inst, float) and inst.is_integer() else json.dumps(inst))
            hint = f"write \"{name}\": \"{quoted}\"" if _is_number(inst) else None
            return [Finding(RULE_TYPE, E, path,
                            f"{where}: `{name}` must be a JSON string ({want}), found {_found(inst)}",
                            hint=hint, value=inst)]
        shown = ", ".join(json.dumps(a) for a in allowed)
        hint = None
        if isinstance(inst, str):
            close = difflib.get_close_matches(inst, [a for a in allowed if isinstance(a, str)], n=1, cutoff=0.5)
            if close:
                hint = f"did you mean {json.dumps(close[0])}?"
            elif inst.lower() in {str(a).lower() for a in allowed}:
                hint = "values are case-sensitive"
        if name == "status" and hint is None:
            hint = 'use "completed" for a finished table'
        return [Finding(RULE_ENUM, E, path,
                        f"{where}: `{name}` is {_show(inst)}; allowed: {shown}", hint=hint, value=inst)]

    if v == "pattern":
        expect = info.expect(path, err.schema) or f"a string matching {err.validator_value}"
        hint = None
        if isinstance(inst, str):
            if "*" in inst or re.search(r"(?i)(^|\.)x+(\.|$)", inst):
                hint = ("this looks like a masked documentation placeholder; fill in the real "
                        "address (device IPs: /etc/hccn.conf address_<device_id> or "
                        "`hccn_tool -i <device_id> -ip -g`)")
            elif ", " in inst or inst != inst.strip():
                hint = "remove the spaces (several addresses are separated by a bare comma)"
            elif re.fullmatch(r"-[0-9]+", inst):
                hint = "negative numbers are not allowed"
            elif re.fullmatch(r"[0-9]+", inst) and "port" in name:
                hint = "ports are 1..65535 (0 is reserved)"
        return [Finding(RULE_FORMAT, E, path,
                        f"{where}: `{name}` is {_show(inst)}, which is not {expect}", hint=hint, value=inst)]

    if v in ("minItems", "maxItems"):
        n = err.validator_value
        size = len(inst) if isinstance(inst, list) else 0
        if v == "minItems":
            msg = (f"{where}: `{name}` is empty" if size == 0 else
                   f"{where}: `{name}` has {size} item(s); at least {n} required")
            hint = f"add at least {n} entr{'y' if n == 1 else 'ies'}"
        else:
            msg = f"{where}: `{name}` has {size} items; at most {n} allowed"
            hint = f"keep at most {n} entries"
        return [Finding(RULE_ITEMS, E, path, msg, hint=hint, value=None)]

    if v in ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        expect = info.expect(path, err.schema)
        if v in ("minLength", "maxLength"):
            size = len(inst) if isinstance(inst, str) else 0
            if v == "minLength" and size == 0:
                msg = f"{where}: `{name}` is empty"
            else:
                msg = (f"{where}: `{name}` is {size} characters long; "
                       f"{'at least' if v == 'minLength' else 'at most'} {err.validator_value} allowed")
        else:
            bound = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[v]
            msg = f"{where}: `{name}` is {_show(inst)}; it must be {bound} {err.validator_value}"
        return [Finding(RULE_RANGE, E, path, msg, hint=(f"expected {expect}" if expect else None), value=inst)]

    return [Finding(RULE_OTHER, E, path, f"{where}: {err.message}", value=inst)]


def check_schema(doc, form: str, *, schema: dict | None = None, fast: bool = True) -> list[Finding]:
    """Schema findings of ``doc`` for ``form`` (no spans yet; see :func:`validate_document`).

    ``schema`` replaces the form's own schema (``form`` then only shapes the wording).
    Errors on a path that also has a type error are dropped (the type error says it all);
    RTC613/RTC618 findings are merged per key (first occurrence, with a count)."""
    fv = fast_validator(schema if schema is not None else form)
    errors = schema_errors(doc, fv.schema, fast=fast)
    info = _SchemaInfo(fv.schema, fv)
    typed = {e.path for e in errors if e.validator == "type"}
    # Report keywords (RTC613/RTC618) are merged per key location before explaining them:
    # one finding at the first occurrence, with a count.
    groups: dict[tuple, list] = {}
    plain: list[SchemaError] = []
    for e in errors:
        if e.path in typed and e.validator != "type":
            continue
        if e.validator in _ALWAYS_REPORT:
            loc = (e.validator,) + tuple("[]" if isinstance(p, int) else p for p in e.path)
            g = groups.get(loc)
            if g is None:
                groups[loc] = [e, 1]
            else:
                g[1] += 1
        else:
            plain.append(e)
    findings: list[Finding] = []
    for e in plain:
        findings.extend(_explain(e, form, info))
    for e, count in groups.values():
        for f in _explain(e, form, info):
            if count > 1:
                f = Finding(f.code, f.severity, f.path, f"{f.message} (found {count} times; first here)",
                            f.hint, f.value, f.at_key, count)
            findings.append(f)
    return findings


def _subject(doc, path: JsonPath) -> str | None:
    """"server node_0, device 3, rank 11" for v1.x paths; "rank 5" for v2.0 paths."""
    try:
        if len(path) >= 2 and path[0] == "server_list" and isinstance(path[1], int):
            server = doc["server_list"][path[1]]
            parts = [f"server {server.get('server_id', path[1])}" if isinstance(server, dict)
                     else f"server #{path[1]}"]
            if len(path) >= 4 and path[2] == "device" and isinstance(path[3], int) and isinstance(server, dict):
                dev = server["device"][path[3]]
                if isinstance(dev, dict):
                    parts.append(f"device {dev.get('device_id', '?')}")
                    if "rank_id" in dev:
                        parts.append(f"rank {dev['rank_id']}")
            return ", ".join(str(p) for p in parts)
        if len(path) >= 2 and path[0] == "rank_list" and isinstance(path[1], int):
            rank = doc["rank_list"][path[1]]
            if isinstance(rank, dict) and "rank_id" in rank:
                return f"rank {rank['rank_id']}"
            return f"rank_list entry #{path[1]}"
    except (KeyError, IndexError, TypeError):
        return None
    return None


def validate_document(doc, form: str, *, source_map: SourceMap | None = None,
                      filename: str | None = None, schema: dict | None = None,
                      fast: bool = True) -> list[Diagnostic]:
    """Validate ``doc`` against the schema of ``form`` and return diagnostics sorted by
    location (file, line, column).

    ``source_map`` (from :func:`rtc.tables.jsonload.load_json`) gives each finding its line
    and column (the key for unknown/extension keys, the value otherwise; for a missing key the
    object that lacks it). Without it spans are ``filename:1:1`` (or None without a filename);
    the JSON path is always in the message."""
    if filename is None and source_map is not None:
        filename = source_map.filename
    out: list[Diagnostic] = []
    for f in check_schema(doc, form, schema=schema, fast=fast):
        if source_map is not None and source_map.parsed:
            span: Span | None = source_map.locate_nearest(f.path, key=f.at_key)
        elif filename:
            span = Span.whole_file(filename)
        else:
            span = None
        out.append(Diagnostic(f.code, f.severity, f.message, span, f.hint, (), _subject(doc, f.path)))
    return sorted_diagnostics(out)

