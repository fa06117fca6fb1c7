"""A small, deterministic DOT writer.

Statements come out exactly in the order they were added, attributes in the order of
their dict (defaults first, then overrides: see :func:`merge`), and every identifier and
value is quoted, so the same input always gives the same bytes. Ids are chosen by the
caller from names (``npu:atlas-01:3``), never generated.

    >>> g = Graph("demo", graph={"rankdir": "TB"}, node={"shape": "box"})
    >>> c = g.subgraph("cluster_srv:a", {"label": "a"})
    >>> c.node("npu:a:0", {"label": Html("<b>NPU 0</b>")})
    >>> g.edge("npu:a:0", ("npu:a:1", "p"), {"style": "invis"})
    >>> print(g.source(), end="")
    digraph "demo" {
      graph [rankdir="TB"];
      node [shape="box"];
      subgraph "cluster_srv:a" {
        label="a";
        "npu:a:0" [label=<<b>NPU 0</b>>];
      }
      "npu:a:0" -> "npu:a:1":"p" [style="invis"];
    }
"""

from __future__ import annotations

import html
from typing import Mapping, Union

from rtc.textfmt import printable


class Html(str):
    """An HTML-like label: written between ``<`` and ``>`` as is (escape text with
    :func:`text`)."""


def text(value: object) -> str:
    """Escape ``value`` for use inside an :class:`Html` label: markup characters as
    entities, control characters (C0, DEL, C1: Graphviz reads labels as XML) as visible
    ``\\x1b`` text (:func:`rtc.textfmt.printable`)."""
    return html.escape(printable(str(value)), quote=True)


def quote(value: object) -> str:
    """A DOT string: HTML labels in angle brackets, everything else double-quoted with
    backslashes and quotes escaped, real newlines turned into ``\\n`` and other control
    characters (C0, DEL, C1, e.g. an ESC in a server_id from a rank table) into visible
    ``\\x1b`` text, so the DOT never carries raw terminal control bytes."""
    if isinstance(value, Html):
        return f"<{value}>"
    if isinstance(value, bool):
        value = "true" if value else "false"
    s = printable(str(value), keep="\n")
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def merge(*dicts: Mapping | None) -> dict:
    """Defaults merged with overrides, left to right; a value of None removes the key.
    Keys keep the position of their first appearance, so output order is stable."""
    out: dict = {}
    for d in dicts:
        if not d:
            continue
        for k, v in d.items():
            out[k] = v
    return {k: v for k, v in out.items() if v is not None}


Endpoint = Union[str, tuple]   # node id, or (node id, port)


def _endpoint(e: Endpoint) -> str:
    if isinstance(e, tuple):
        return f"{quote(e[0])}:{quote(e[1])}"
    return quote(e)


def _attrs(attrs: Mapping) -> str:
    return ", ".join(f"{k}={quote(v)}" for k, v in attrs.items())


class Graph:
    """A digraph or a subgraph (clusters are subgraphs whose name starts with
    ``cluster``)."""

    def __init__(self, name: str, attrs: Mapping | None = None, *, graph: Mapping | None = None,
                 node: Mapping | None = None, edge: Mapping | None = None,
                 root: bool = True):
        self.name = name
        self.root = root
        self.attrs = dict(attrs or {})       # subgraph: written as `key=value;` lines
        self.defaults = [(kind, dict(d)) for kind, d in
                         (("graph", graph), ("node", node), ("edge", edge)) if d]
        self.body: list = []

    def set_graph(self, key: str, value) -> None:
        """Set a graph attribute after the fact (keeps its position if already set)."""
        for kind, d in self.defaults:
            if kind == "graph":
                d[key] = value
                return
        self.defaults.insert(0, ("graph", {key: value}))

    def subgraph(self, name: str, attrs: Mapping | None = None, *,
                 node: Mapping | None = None, edge: Mapping | None = None) -> "Graph":
        g = Graph(name, attrs, node=node, edge=edge, root=False)
        self.body.append(("sub", g))
        return g

    def node(self, node_id: str, attrs: Mapping | None = None) -> None:
        self.body.append(("node", node_id, dict(attrs or {})))

    def edge(self, a: Endpoint, b: Endpoint, attrs: Mapping | None = None) -> None:
        self.body.append(("edge", a, b, dict(attrs or {})))

    def same_rank(self, node_ids: list[str]) -> None:
        """Keep these nodes on one rank (``{rank=same; ...}``)."""
        self.body.append(("same", list(node_ids)))

    def lines(self, indent: str = "") -> list[str]:
        inner = indent + "  "
        head = "digraph" if self.root else "subgraph"
        out = [f"{indent}{head} {quote(self.name)} {{"]
        for k, v in self.attrs.items():
            out.append(f"{inner}{k}={quote(v)};")
        for kind, d in self.defaults:
            out.append(f"{inner}{kind} [{_attrs(d)}];")
        for item in self.body:
            kind = item[0]
            if kind == "sub":
                out.extend(item[1].lines(inner))
            elif kind == "node":
                _, nid, attrs = item
                out.append(f"{inner}{quote(nid)} [{_attrs(attrs)}];" if attrs
                           else f"{inner}{quote(nid)};")
            elif kind == "edge":
                _, a, b, attrs = item
                tail = f" [{_attrs(attrs)}]" if attrs else ""
                out.append(f"{inner}{_endpoint(a)} -> {_endpoint(b)}{tail};")
            else:
                ids = "; ".join(quote(n) for n in item[1])
                out.append(f"{inner}{{rank=same; {ids};}}")
        out.append(f"{indent}}}")
        return out

    def source(self) -> str:
        """The DOT text (ends with a newline)."""
        return "\n".join(self.lines()) + "\n"
