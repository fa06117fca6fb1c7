"""Explain schema errors in rank-table terms: one finding per problem, with a rule id
(RTC610-RTC619), the JSON path and offending value in the message, and a hint.

:func:`check_schema` runs :func:`rtc.schema.validator.schema_errors` on a document and
explains every error (all of them, not only the first; where ``anyOf``/``oneOf`` produce a
tree of errors, ``jsonschema.exceptions.best_match`` picks the one to report).
:func:`validate_document` turns the findings into diagnostics, located by a source map when
the caller has one (:class:`rtc.tables.jsonload.SourceMap`: the key for unknown and
extension keys, the value otherwise).

The schema annotations rtc reads (``x-rtc-expect``, ``x-rtc-extension``,
``x-rtc-other-version``, ``x-rtc-severity``) are listed in :mod:`rtc.schema.validator`.

RTC620..RTC629 are reserved for this module.
"""

from __future__ import annotations

import dataclasses

import difflib
import json
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Severity, Span, sorted_diagnostics
from rtc.rules import rule
from rtc.schema.forms import FORM_DESCRIPTIONS, FORMS, schema_for
from rtc.schema.paths import JsonPath, format_path
from rtc.textfmt import number_pattern
from rtc.schema.validator import (ALWAYS_REPORT, KW_EXTENSION, KW_OTHER_VERSION, TYPE_TESTS,
                                  FastValidator, SchemaError, fast_validator, is_number,
                                  schema_errors)

RULE_TYPE = rule("RTC610", "wrong-json-type", "error",
                 "A value has the wrong JSON type (string vs number).", """
    What: e.g. `"rank_id": 0` in a v1.x table, `"rank_count": "2"` in a 2.0 table, an object
    where an array belongs.
    Why it breaks: HCCL's v1.x getters check `is_string()` ("json object property value of
    Name[rank_id] is not string!"), the 2.0 getters read JSON integers; either way
    initialisation fails. (MindSpore's merge_hccl.py shipped this exact bug once.)
    Fix: quote the number in v1.x / legacy / PD tables; unquote it in 2.0.""")
RULE_REQUIRED = rule("RTC611", "required-key-missing", "error",
                     "A key the form requires is missing.", """
    What: e.g. a device without `device_id` or `rank_id`, a table without `version`.
    Why: the parser requires the key and stops.
    Fix: add it; if a similar unknown key is present (a typo) the hint names it.""")
RULE_UNKNOWN_KEY = rule("RTC612", "unknown-key", "error",
                        "A key the form does not define (HCCL ignores it).", """
    What: a key the form does not define, e.g. `devcie_ip`; the message suggests the closest
    known key ("did you mean `device_ip`?").
    Why it breaks: HCCL silently ignores unknown keys, so whatever the key was meant to set
    is not set (a misspelt `device_ip` is a missing device IP).
    Fix: rename or remove it.""")
RULE_OTHER_VERSION = rule("RTC613", "key-of-other-version", "warning",
                          "A key that only another table version uses.", """
    What: a version-1.2 key (`super_device_id`, `super_pod_list`, `backup_device_ip`, ...)
    in a `"version": "1.0"` table.
    Why: HCCL reads these only in 1.2 tables, so they have no effect.
    Fix: set `"version": "1.2"` for an A3 SuperPoD table, or remove the keys. Reported once
    per key with the number of occurrences.""")
RULE_ENUM = rule("RTC614", "value-not-allowed", "error",
                 "A value outside the fixed set of allowed values.", """
    What: a value outside a fixed set, e.g. `"status": "complete"`, `"addr_type": "ipv4"`, a
    wrong `version` under `--schema`.
    Why: HCCL compares these strings exactly (`status` other than "completed" makes HCCL
    wait up to 30 minutes and give up).
    Fix: use one of the listed values (the hint suggests the closest).""")
RULE_FORMAT = rule("RTC615", "malformed-value", "error",
                   "A string value does not have the required shape.", """
    What: a string that does not have the required shape: a decimal string with other
    characters (`"rank_id": "r0"`, `"-1"`), a port outside 1..65535, an IP field with
    characters no IPv4/IPv6 address has (masked documentation placeholders such as
    `192.1.*.6`, spaces after commas), a 2.0 port not in "die/port" form.
    Why: the parser converts the string and fails.
    Fix: write the value as the message says. (The schema only checks the character set of
    IP fields; whether an address parses, is unique and is of the right family is left to
    the semantic checks.)""")
RULE_ITEMS = rule("RTC616", "wrong-item-count", "error",
                  "A list is empty or has too many items.", """
    What: an empty `server_list`/`device`/`rank_list`, more than 8 `level_list` entries,
    more than 16 `ports`, etc.
    Why: the parser rejects empty lists and enforces the limits.
    Fix: add the missing entries or split the list.""")
RULE_RANGE = rule("RTC617", "value-out-of-range", "error",
                  "A number or length is outside its bounds.", """
    What: a number or length outside its bounds: `server_id` longer than 64 characters or
    empty, `net_layer` above 7, `local_id` above 64, a 2.0 port outside 1..65535.
    Why: the parser range-checks these values.
    Fix: use a value within the stated range.""")
RULE_EXTENSION = rule("RTC618", "extension-key", "warning",
                      "A key another tool adds; HCCL ignores it.", """
    What: keys other tools add: MindSpore cross-cluster (`server_ip`, `pod_ip`, `dpu_ip`,
    `numa_id`, `cluster_list`), Ascend Operator's `IsMindIEEPJob`.
    Why: HCCL ignores them, so anything they are meant to achieve (e.g. cross-cluster
    placement) does not happen in HCCL; fine when the file is meant for that tool.
    Fix: none needed if intended; otherwise remove them. Reported once per key with the
    number of occurrences.""")
RULE_OTHER = rule("RTC619", "schema-violation", "error",
                  "Another JSON Schema violation.", """
    What: anything the rules above do not cover (e.g. no alternative of a `oneOf` matches
    and `best_match` cannot single one out, or `uniqueItems`); the message is
    `jsonschema`'s. rtc's own schemas do not produce it today; it keeps custom or future
    schemas from losing findings.
    Why it breaks: the value is not in a shape the reader of the file accepts.
    Fix: as the message says.""")

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
    #: When folded (``check_schema(fold_after=...)``): the paths of the further errors of
    #: the same keyword, path pattern and value type this finding stands for, and the
    #: findings of the first few of them (to show as examples).
    more: tuple = field(default=(), compare=False, repr=False)
    examples: tuple = field(default=(), compare=False, repr=False)


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
    return any(TYPE_TESTS[t](value) for t in ([types] if isinstance(types, str) else types))


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


#: Keys whose value is an IP address: a bare number there is no address, quoted or not.
_ADDRESS_KEYS = frozenset({"device_ip", "host_ip", "server_ip", "container_ip",
                           "backup_device_ip"})


def _explain_type(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``type``: RTC610, with a quoting hint for a number where a string belongs and back."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    expected = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
    if expected == ["string"] and is_number(inst) and name in _ADDRESS_KEYS:
        return [Finding(RULE_TYPE.code, Severity.ERROR, path,
                        f"{where}: `{name}` must be an IP address in a JSON string, not the "
                        f"bare number {json.dumps(inst)}",
                        hint=f"write the address in quotes, e.g. \"{name}\": \"10.0.0.6\" "
                             "(a number is no IP address)", value=inst)]
    if expected == ["string"] and is_number(inst):
        text = json.dumps(inst)
        quoted = str(int(inst)) if isinstance(inst, float) and inst.is_integer() and name != "version" else text
        if form in ("hccl-v2.0", "topo-v2.0"):
            hint = f"write \"{name}\": \"{quoted}\""
        else:
            hint = (f"write \"{name}\": \"{quoted}\"; in version 1.x tables every value is a string "
                    f"and HCCL fails with \"json object property value of Name[{name}] is not string!\"")
        return [Finding(RULE_TYPE.code, Severity.ERROR, path,
                        f"{where}: `{name}` must be a JSON string (\"{quoted}\"), not the bare number {text}",
                        hint=hint, value=inst)]
    if expected == ["integer"] and isinstance(inst, str) and re.fullmatch(r"\s*-?[0-9]+\s*", inst):
        return [Finding(RULE_TYPE.code, Severity.ERROR, path,
                        f"{where}: `{name}` must be a JSON integer in a {FORM_DESCRIPTIONS.get(form, form)}, "
                        f"not the string {_show(inst)}",
                        hint=f"write \"{name}\": {inst.strip()} (no quotes); version 2.0 reads "
                             f"numbers as JSON integers",
                        value=inst)]
    want = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
    return [Finding(RULE_TYPE.code, Severity.ERROR, path,
                    f"{where}: `{name}` must be {want}, found {_found(inst)}",
                    hint=None, value=inst)]


def _missing_key(err: SchemaError) -> str:
    """The key a ``required`` error reports missing (read from its message)."""
    for k in err.validator_value or ():
        if f"{k!r} is a required property" == err.message:
            return k
    return err.message.split("'")[1] if "'" in err.message else err.message


def _misspelling_hint(err: SchemaError, missing: str, form: str, info: _SchemaInfo) -> str | None:
    """"`x` is present: a misspelling of `missing`?" when an unknown key of the object is close."""
    inst, path = err.instance, err.path
    if not isinstance(inst, dict):
        return None
    known = set(info.known_keys(path))
    prop = info.at(path + (missing,))
    scored = sorted(
        ((difflib.SequenceMatcher(None, k, missing).ratio(), k) for k in inst
         if k not in known and _suggest(k, [missing], form)[0] == missing
         and (prop is None or _type_fits(inst[k], prop, info))), reverse=True)
    if scored:
        return f"`{scored[0][1]}` is present: a misspelling of `{missing}`? rename it"
    return None


def _explain_required(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``required``: RTC611, hinting at a misspelt key or a missing top-level ``version``."""
    path = err.path
    where = _where(path)
    missing = _missing_key(err)
    hint = _misspelling_hint(err, missing, form, info)
    if hint is None and missing == "version" and not path:
        ver = {"hccl-v1.0": "1.0", "hccl-v1.2": "1.2", "hccl-v2.0": "2.0"}.get(form)
        if ver:
            hint = (f"add \"version\": \"{ver}\"; without `version` HCCL reads the file as the "
                    f"legacy group_list form and fails")
    if hint is None:
        hint = f"add `{missing}` to {where}"
        if missing == "server_list" and not path:  # the global table's list is gone too
            hint += (" (a MindIE / MindCluster global rank table has `server_group_list` "
                     "instead: add that)")
    return [Finding(RULE_REQUIRED.code, Severity.ERROR, path,
                    f"{where}: required key `{missing}` is missing", hint=hint, value=None)]


def _explain_unknown_keys(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``additionalProperties``: RTC612 per unknown key, suggesting the closest known key."""
    path, inst = err.path, err.instance
    where = _where(path)
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
        out.append(Finding(RULE_UNKNOWN_KEY.code, Severity.ERROR, path + (k,), msg, hint=hint,
                           value=inst.get(k), at_key=True))
    return out


def _explain_other_version(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``x-rtc-other-version``: RTC613 at the key of another table version."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    ver = err.validator_value
    return [Finding(RULE_OTHER_VERSION.code, Severity.WARNING, path,
                    f"{where}: `{name}` is a version {ver} key; HCCL does not use it in a "
                    f"version {'1.0' if form == 'hccl-v1.0' else form} table",
                    hint=f"for an A3 SuperPoD table set \"version\": \"{ver}\"; otherwise remove `{name}`",
                    value=inst, at_key=True)]


def _explain_extension(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``x-rtc-extension``: RTC618 at another tool's key (a note where ``x-rtc-severity`` says so)."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    sev = Severity.NOTE if isinstance(err.schema, dict) and err.schema.get("x-rtc-severity") == "note" \
        else Severity.WARNING
    return [Finding(RULE_EXTENSION.code, sev, path,
                    f"{where}: `{name}` is an extension key of {err.validator_value}; HCCL ignores it",
                    hint="fine if the file is meant for that tool; HCCL itself does not act on it",
                    value=inst, at_key=True)]


def _explain_enum(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``enum``/``const``: RTC610 for a non-string where strings are listed, else RTC614."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    allowed = err.validator_value if err.validator == "enum" else [err.validator_value]
    if all(isinstance(a, str) for a in allowed) and not isinstance(inst, str):
        want = info.expect(path, err.schema) or " or ".join(json.dumps(a) for a in allowed)
        quoted = (str(int(inst)) if isinstance(inst, float) and inst.is_integer() else json.dumps(inst))
        hint = f"write \"{name}\": \"{quoted}\"" if is_number(inst) else None
        return [Finding(RULE_TYPE.code, Severity.ERROR, path,
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
    return [Finding(RULE_ENUM.code, Severity.ERROR, path,
                    f"{where}: `{name}` is {_show(inst)}; allowed: {shown}", hint=hint, value=inst)]


def _pattern_hint(inst, name: str) -> str | None:
    """What is likely wrong with a string that fails its ``pattern`` (placeholder, spaces, sign)."""
    if not isinstance(inst, str):
        return None
    if "*" in inst or re.search(r"(?i)(^|\.)x+(\.|$)", inst):
        return ("this looks like a masked documentation placeholder; fill in the real "
                "address (device IPs: /etc/hccn.conf address_<device_id> or "
                "`hccn_tool -i <device_id> -ip -g`)")
    if ", " in inst or inst != inst.strip():
        return "remove the spaces (several addresses are separated by a bare comma)"
    if re.fullmatch(r"-[0-9]+", inst):
        return "negative numbers are not allowed"
    if re.fullmatch(r"[0-9]+", inst) and "port" in name:
        return "ports are 1..65535 (0 is reserved)"
    return None


def _explain_pattern(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``pattern``: RTC615, a string without the required shape."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    expect = info.expect(path, err.schema) or f"a string matching {err.validator_value}"
    return [Finding(RULE_FORMAT.code, Severity.ERROR, path,
                    f"{where}: `{name}` is {_show(inst)}, which is not {expect}",
                    hint=_pattern_hint(inst, name), value=inst)]


def _explain_items(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``minItems``/``maxItems``: RTC616, a list that is empty or too long."""
    path, inst = err.path, err.instance
    name, where = _name(path), _where(path)
    n = err.validator_value
    size = len(inst) if isinstance(inst, list) else 0
    if err.validator == "minItems":
        msg = (f"{where}: `{name}` is empty" if size == 0 else
               f"{where}: `{name}` has {size} item(s); at least {n} required")
        hint = f"add at least {n} entr{'y' if n == 1 else 'ies'}"
    else:
        msg = f"{where}: `{name}` has {size} items; at most {n} allowed"
        hint = f"keep at most {n} entries"
    return [Finding(RULE_ITEMS.code, Severity.ERROR, path, msg, hint=hint, value=None)]


_BOUND_WORDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _explain_range(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """``minLength``/``maxLength``/``minimum``/``maximum``/``exclusive*``: RTC617."""
    v, path, inst = err.validator, err.path, err.instance
    name, where = _name(path), _where(path)
    expect = info.expect(path, err.schema)
    if v in ("minLength", "maxLength"):
        size = len(inst) if isinstance(inst, str) else 0
        if v == "minLength" and size == 0:
            msg = f"{where}: `{name}` is empty"
        else:
            msg = (f"{where}: `{name}` is {size} characters long; "
                   f"{'at least' if v == 'minLength' else 'at most'} {err.validator_value} allowed")
    else:
        msg = f"{where}: `{name}` is {_show(inst)}; it must be {_BOUND_WORDS[v]} {err.validator_value}"
    return [Finding(RULE_RANGE.code, Severity.ERROR, path, msg,
                    hint=(f"expected {expect}" if expect else None), value=inst)]


def _explain_other(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """Any other keyword: RTC619 with ``jsonschema``'s own message."""
    return [Finding(RULE_OTHER.code, Severity.ERROR, err.path, f"{_where(err.path)}: {err.message}",
                    value=err.instance)]


#: Validator keyword -> explainer of its errors (anything else: :func:`_explain_other`).
_EXPLAINERS = {
    "type": _explain_type,
    "required": _explain_required,
    "additionalProperties": _explain_unknown_keys,
    KW_OTHER_VERSION: _explain_other_version,
    KW_EXTENSION: _explain_extension,
    "enum": _explain_enum,
    "const": _explain_enum,
    "pattern": _explain_pattern,
    "minItems": _explain_items,
    "maxItems": _explain_items,
    "minLength": _explain_range,
    "maxLength": _explain_range,
    "minimum": _explain_range,
    "maximum": _explain_range,
    "exclusiveMinimum": _explain_range,
    "exclusiveMaximum": _explain_range,
}


def _explain(err: SchemaError, form: str, info: _SchemaInfo) -> list[Finding]:
    """The findings for one schema error, from the explainer of its validator keyword."""
    return _EXPLAINERS.get(err.validator, _explain_other)(err, form, info)


def _value_shape(value) -> object:
    """What folding may not merge across: a scalar's text with its numbers as ``#``
    (:func:`rtc.textfmt.number_pattern`: ``0`` and ``-20`` fold apart, as their messages
    would), a container's type."""
    if isinstance(value, (dict, list)):
        return type(value)
    text = repr(value)
    return (type(value), number_pattern(text) if len(text) <= 40 else f"long {len(text)}")


def _fold_groups(errors: list[SchemaError], fold_after: int | None) -> list[list[SchemaError]]:
    """``errors`` in order, as one-element lists, except that the errors sharing keyword,
    path pattern (array indexes as ``[]``) and value type are one list (at the first one's
    place) when there are more than ``fold_after`` of them."""
    if fold_after is None:
        return [[e] for e in errors]
    groups: dict[tuple, list[SchemaError]] = {}
    keys = []
    for e in errors:
        key = (e.validator, tuple("[]" if isinstance(p, int) else p for p in e.path),
               _value_shape(e.instance))
        keys.append(key)
        groups.setdefault(key, []).append(e)
    out = []
    for e, key in zip(errors, keys):
        group = groups[key]
        if len(group) <= fold_after:
            out.append([e])
        elif group[0] is e:
            out.append(group)
    return out


def check_schema(doc, form: str, *, schema: dict | None = None, fast: bool = True,
                 fold_after: int | None = None, examples: int = 3) -> list[Finding]:
    """Schema findings of ``doc`` for ``form`` (no spans yet; see :func:`validate_document`).

    ``schema`` replaces the form's own schema (``form`` then only shapes the wording).
    Errors on a path that also has a type error are dropped (the type error says it all);
    RTC613/RTC618 findings are merged per key (first occurrence, with a count). With
    ``fold_after``, the errors of one keyword, path pattern (``server_list[*].device[*].
    rank_id``) and value type that are more than ``fold_after`` are explained only for the
    first and ``examples`` more: the first finding carries the other paths in
    :attr:`Finding.more` and those findings in :attr:`Finding.examples`."""
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
        if e.validator in ALWAYS_REPORT:
            loc = (e.validator,) + tuple("[]" if isinstance(p, int) else p for p in e.path)
            g = groups.get(loc)
            if g is None:
                groups[loc] = [e, 1]
            else:
                g[1] += 1
        else:
            plain.append(e)
    findings: list[Finding] = []
    for group in _fold_groups(plain, fold_after):
        head = _explain(group[0], form, info)
        if len(group) > 1 and head:
            shown = [f for e in group[1:1 + examples] for f in _explain(e, form, info)[:1]]
            head[0] = dataclasses.replace(head[0], more=tuple(e.path for e in group[1:]),
                                          examples=tuple(shown))
        findings.extend(head)
    for e, count in groups.values():
        for f in _explain(e, form, info):
            if count > 1:
                f = Finding(f.code, f.severity, f.path, f"{f.message} (found {count} times; first here)",
                            f.hint, f.value, f.at_key, count)
            findings.append(f)
    return findings


def subject_of(doc, path: JsonPath) -> str | None:
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


def validate_document(doc, form: str, *, source_map=None,
                      filename: str | None = None, schema: dict | None = None,
                      fast: bool = True) -> list[Diagnostic]:
    """Validate ``doc`` against the schema of ``form`` and return diagnostics sorted by
    location (file, line, column).

    ``source_map`` (a :class:`rtc.tables.jsonload.SourceMap`, or anything with its
    ``filename``, ``parsed`` and ``locate_nearest``) gives each finding its line
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
        out.append(Diagnostic(f.code, f.severity, f.message, span, f.hint, (), subject_of(doc, f.path)))
    return sorted_diagnostics(out)

#: The rules this module reports (collected by rtc.catalogue).
RULES = (RULE_TYPE, RULE_REQUIRED, RULE_UNKNOWN_KEY, RULE_OTHER_VERSION, RULE_ENUM, RULE_FORMAT, RULE_ITEMS, RULE_RANGE, RULE_EXTENSION, RULE_OTHER)
