"""Rank tables inside Kubernetes ConfigMaps: a ``rings-config-<job>`` manifest, or what
``kubectl get cm NAME -o yaml`` / ``kubectl get cm -o yaml`` (a ``List``) print.

:func:`embedded_tables` reads the YAML (PyYAML, with node positions) and returns each
ConfigMap's ``hccl.json`` text with a :class:`LineMap` that turns a position in that text
into a position in the YAML file, so that ``rtc validate``'s findings point into the YAML.
The map is exact for literal block scalars (``hccl.json: |``, which is how rtc,
MindCluster's examples and ``kubectl -o yaml`` write multi-line values) and for one-line
plain or quoted values without escapes; for other styles a finding points at the value's
first line.

Format (MindCluster ``docs/en/scheduling/api/hccl.json_file_description.md``; hccl-controller
``ConfigmapKey``; :data:`rtc.plan.kubernetes.FACTS`): ``kind: ConfigMap``, the table under
``data["hccl.json"]``; the operator writes ``{"status": "initializing"}`` first and the
full table with ``status: completed`` once every pod's devices are known.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Span, error, note
from rtc.rules import rule
from rtc.tables.jsonload import blank_describe_header

YAML_SYNTAX = rule("RTC771", "yaml-syntax", "error", "A YAML file cannot be parsed.", """
    What: the file given to `rtc validate` reads as YAML (a `.yaml` / `.yml` name, or text
    that is not JSON) and PyYAML cannot parse it; the message has the line and column.
    Why: kubectl and the API server reject it the same way.
    Example: a tab used for indentation, or a `hccl.json: |` block whose lines are
    indented less than the first one.
    Fix: correct the YAML at the position shown (or save `kubectl get cm NAME -o yaml`
    again).""")
NOT_A_CONFIGMAP = rule("RTC772", "not-a-configmap", "error",
                       "A YAML file holds no ConfigMap.", """
    What: `rtc validate` was given YAML with no `kind: ConfigMap` (nor a `List` of them).
    Why: rtc validates the rank table a ConfigMap carries under `hccl.json`; other
    manifests have none.
    Example: validating `lws-deepseek.yaml` instead of `rings-config-deepseek.yaml`.
    Fix: give the rings-config ConfigMap (`kubectl get cm rings-config-JOB -o yaml`).""")
NO_HCCL_JSON = rule("RTC773", "configmap-without-hccl-json", "error",
                    "A ConfigMap has no hccl.json key.", """
    What: the ConfigMap's `data` has no `hccl.json` entry.
    Why: MindCluster's operator fills, and pods mount, exactly that key
    (/user/serverid/devindex/config/hccl.json); without it RANK_TABLE_FILE points at
    nothing.
    Example: `data: {ranktable.json: ...}`.
    Fix: name the key `hccl.json` (and the ConfigMap `rings-config-<job>`).""")
INITIALIZING = rule("RTC774", "ranktable-initializing", "note",
                    "The rank table's status is still initializing.", """
    What: the table's `status` is `initializing`: the operator has not yet seen every
    pod's devices (or nobody completed a hand-written table).
    Why: HCCL re-reads the file every second until the status is `completed` and gives
    up after 30 minutes; a table that never completes is a job that hangs at start-up.
    The table's other fields are not checked until then.
    Reported for ConfigMaps, and for JSON tables with --require-completed or --wait (a
    plain JSON file that says initializing is RTC649: a static file never completes).
    Example: `hccl.json: '{"status":"initializing"}'`.
    Fix: wait for the operator (check that every pod got the
    ascend.kubectl.kubernetes.io/ascend-910-configuration annotation); in an init
    container, `rtc validate --wait SECONDS` does the waiting.""")
SKIPPED = rule("RTC775", "manifest-skipped", "note",
               "A YAML document that is not a ConfigMap was not checked.", """
    What: a document of the YAML file (a LeaderWorkerSet, a Service, ...) is not a
    ConfigMap; `rtc validate` checks only the rank tables of ConfigMaps.
    Why: said so that a file with several manifests is not thought fully checked.
    Example: a `kubectl apply` bundle with the LWS and its ConfigMap in one file.
    Fix: nothing; validate the manifests themselves with kubectl --dry-run=server.""")

RULES = (YAML_SYNTAX, NOT_A_CONFIGMAP, NO_HCCL_JSON, INITIALIZING, SKIPPED)

KEY = "hccl.json"


@dataclass(frozen=True)
class LineMap:
    """Where the embedded text sits in the YAML file: ``line`` / ``column`` (1-based) of
    its first character and ``indent`` (the block's indentation; None for a one-line
    value, whose text starts at ``column``; ``exact`` False: only the first line is
    known)."""

    line: int
    column: int
    indent: int | None
    exact: bool = True

    def position(self, line: int, column: int) -> tuple[int, int]:
        """(line, column) in the YAML of (line, column) in the embedded text."""
        if not self.exact:
            return self.line, self.column
        if self.indent is None:
            return self.line, self.column + column - 1 if line == 1 else self.column
        return self.line + line - 1, self.indent + column


@dataclass
class Embedded:
    """One ConfigMap's rank table: the ConfigMap's name, the ``hccl.json`` text and where
    it sits in the YAML."""

    name: str
    text: str
    where: LineMap


def looks_like_yaml(data: bytes, filename: str) -> bool:
    """Whether ``data`` goes to the ConfigMap reader: True for ``.yaml`` / ``.yml`` files,
    for JSON that is a ConfigMap or a ``List`` (:func:`is_json_configmap`: ``kubectl get cm
    NAME -o json``; YAML reads JSON), and for other text whose first character that is not
    blank or a ``#`` comment line is neither ``{`` nor ``[`` (JSON's first); False for a
    ``kubectl describe configmap`` dump (``hccl.json:`` / ``----`` then the JSON), which the
    JSON reader takes (:func:`rtc.tables.jsonload.blank_describe_header`), and for bytes
    that are not UTF-8 text (binary data: the JSON reader reports it as such)."""
    if filename.lower().endswith((".yaml", ".yml")):
        return True
    if is_json_configmap(data):
        return True
    if filename.lower().endswith(".json"):
        return False
    try:    # binary or not UTF-8: no YAML, whatever its name (the JSON reader says which)
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if b"\0" in data[:8192]:
        return False
    if blank_describe_header(text) != text:
        return False
    for raw in data.splitlines():
        s = raw.strip()
        if s and not s.startswith(b"#"):
            return not s.startswith((b"{", b"["))
    return False


def is_json_configmap(data: bytes) -> bool:
    """Whether ``data`` is JSON whose top level is a Kubernetes ``ConfigMap`` or ``List``
    (an object with a string ``apiVersion`` and that ``kind``), or an array of such
    objects: what ``kubectl get cm NAME -o json`` / ``kubectl get cm -o json`` print. A
    rank table has neither key, so no table is taken for one. False for anything that is
    not UTF-8 JSON of that shape; never raises."""
    import json

    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith((b"{", b"[")):
        return False
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return False
    objs = doc if isinstance(doc, list) and doc else [doc]
    return all(isinstance(o, dict) and isinstance(o.get("apiVersion"), str)
               and o.get("kind") in ("ConfigMap", "List") for o in objs)


def embedded_tables(text: str, filename: str) -> tuple[list[Embedded], list[Diagnostic]]:
    """The rank tables of every ConfigMap in ``text`` (YAML, several documents and
    ``List`` objects allowed) and the findings about the YAML itself (RTC771-773,
    RTC775). Never raises for bad input."""
    import yaml  # PyYAML: loaded only for YAML inputs

    if text.lstrip("\ufeff \t\r\n")[:1] in ("{", "["):
        # JSON (`kubectl get cm -o json`): a raw tab is only ever indentation there (one
        # inside a string is written \t), and YAML forbids tabs as indentation
        text = text.replace("\t", " ")
    try:
        roots = [n for n in yaml.compose_all(text, Loader=yaml.SafeLoader) if n is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        span = Span(filename, mark.line + 1, mark.column + 1) if mark else Span.whole_file(filename)
        problem = getattr(exc, "problem", None) or str(exc)
        return [], [error(YAML_SYNTAX, f"{filename} is not valid YAML: {problem}", span,
                          hint="fix the YAML at this position")]
    out: list[Embedded] = []
    diags: list[Diagnostic] = []
    for root in roots:
        for obj in _objects(root):
            _read_object(obj, filename, out, diags)
    if not out and not any(d.code in (NO_HCCL_JSON.code,) for d in diags):
        diags = [d for d in diags if d.code != SKIPPED.code]
        anchor = _span(roots[0], filename) if roots else Span.whole_file(filename)
        diags.append(error(NOT_A_CONFIGMAP, f"{filename} holds no ConfigMap "
                           f"({_kinds_text(_kinds(roots))})", anchor,
                           hint="give the rings-config ConfigMap: kubectl get cm "
                                "rings-config-JOB -o yaml > cm.yaml"))
    return out, diags


def _get(node, key: str):
    """The value node of ``key`` in a YAML mapping node (None when absent)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _objects(root):
    """The Kubernetes objects of a document: itself, the items of a ``List``, or the
    elements of a JSON array (each opened the same way)."""
    import yaml

    if isinstance(root, yaml.SequenceNode):
        return [obj for item in root.value for obj in _objects(item)]
    kind = _get(root, "kind")
    items = _get(root, "items")
    if kind is not None and getattr(kind, "value", None) == "List" \
            and isinstance(items, yaml.SequenceNode):
        return list(items.value)
    return [root]


def _kinds(roots) -> list[str]:
    kinds = []
    for root in roots:
        for obj in _objects(root):
            kind = _get(obj, "kind")
            kinds.append(str(getattr(kind, "value", "?")) if kind is not None else "no kind")
    return kinds


def _kinds_text(kinds: list[str]) -> str:
    """'kinds: Pod, Service', or what the documents lack: 'no document has a kind'."""
    named = [k for k in kinds if k != "no kind"]
    if not named:
        return "no document has a kind" if len(kinds) > 1 else \
            "the document has no kind" if kinds else "no documents"
    missing = len(kinds) - len(named)
    return f"kinds: {', '.join(named)}" + (f"; {missing} without a kind" if missing else "")


def _span(node, filename: str) -> Span:
    return Span(filename, node.start_mark.line + 1, node.start_mark.column + 1,
                node.end_mark.line + 1, node.end_mark.column + 1)


def _read_object(obj, filename: str, out: list, diags: list) -> None:
    import yaml

    kind = _get(obj, "kind")
    if kind is None or getattr(kind, "value", None) != "ConfigMap":
        what = getattr(kind, "value", "an object without kind") if kind is not None \
            else "an object without kind"
        diags.append(note(SKIPPED, f"{what} in {filename} is not a ConfigMap; not checked",
                          _span(obj, filename)))
        return
    name_node = _get(_get(obj, "metadata"), "name")
    name = str(name_node.value) if isinstance(name_node, yaml.ScalarNode) else "(no name)"
    data = _get(obj, "data")
    value = _get(data, KEY)
    if not isinstance(value, yaml.ScalarNode) or value.tag == "tag:yaml.org,2002:null":
        keys = [k.value for k, _v in data.value] if isinstance(data, yaml.MappingNode) else []
        if value is not None:
            why = (f"is not a string: data['{KEY}'] must hold the table's JSON text "
                   "(a `|` block)")
        elif keys:
            why = f"is missing (its keys: {', '.join(map(str, keys))})"
        else:
            why = "is missing (the ConfigMap has no data)"
        diags.append(error(NO_HCCL_JSON, f"ConfigMap {name}: data key {KEY} {why}",
                           _span(data if data is not None else obj, filename),
                           subject=f"ConfigMap {name}",
                           hint="MindCluster's operator fills, and the pods mount, "
                                "data['hccl.json']"))
        return
    out.append(Embedded(name, value.value, _line_map(value, filename)))


def _line_map(node, filename: str) -> LineMap:
    """Where a scalar's text starts in the YAML (see :class:`LineMap`)."""
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if node.style == "|":
        buf = node.start_mark.buffer
        content = buf.split("\n")[line:] if buf else []     # lines after the `|` line
        first = next((x for x in content if x.strip()), "")
        return LineMap(line + 1, 1, len(first) - len(first.lstrip(" ")))
    if node.style in (None, "", "'", '"') and node.start_mark.line == node.end_mark.line:
        quoted = node.style in ("'", '"')
        raw = node.start_mark.buffer[node.start_mark.pointer:node.end_mark.pointer] \
            if node.start_mark.buffer else ""
        exact = not quoted or ("\\" not in raw and "''" not in raw)
        return LineMap(line, column + (1 if quoted else 0), None, exact)
    return LineMap(line, column, None, exact=False)
