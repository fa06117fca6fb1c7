"""Write rtc source text (``cluster.rtc``) from a plan of blocks: the inverse of the parser,
used by ``rtc import``.

The writer knows the language's surface only: block layout, quoting of labels and
values, compact device sets. What goes into each attribute (address plans, templates)
is decided by :mod:`rtc.tables.importer`. Output is deterministic: a header comment, the
cluster block, then the server and family blocks in rank order, two-space indent, one
blank line between blocks, a trailing newline.
"""

from __future__ import annotations

from rtc.textfmt import format_ids

import re
from dataclasses import dataclass, field

__all__ = ["Block", "ClusterSource", "render_source", "label", "word", "device_set", "is_word"]

# A bare word of the grammar (rtc.lark WORD) without template groups.
_PLAIN_WORD = re.compile(r'[^\s,={}"#\\]+\Z')


def is_word(text: str) -> bool:
    """True when ``text`` can be written as a bare word (no quotes needed)."""
    return bool(_PLAIN_WORD.match(text)) and text not in ("{", "}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def label(text: str) -> str:
    """A block label: bare when possible, else a quoted string."""
    return text if is_word(text) else _quote(text)


def word(text: str) -> str:
    """An attribute value that is not a template: bare when possible, else quoted."""
    return text if is_word(text) else _quote(text)


def device_set(ids: list[int]) -> str:
    """[0,1,2,3,5] -> '0..3, 5', a device set in the rtc language
    (:func:`rtc.textfmt.format_ids`)."""
    return format_ids(ids)


@dataclass
class Block:
    """One ``server`` or ``family`` block. ``attrs`` are (key, value text) in output order;
    ``comment`` is written on the line above the block."""

    kind: str          # "server" | "family"
    name: str          # the label text (a family name already has its [FIRST..LAST])
    attrs: list = field(default_factory=list)
    comment: str | None = None


@dataclass
class ClusterSource:
    """A whole description: header comment lines, the cluster block, server blocks."""

    name: str
    hardware: str
    devices_per_server: int | None = None
    blocks: list[Block] = field(default_factory=list)
    header: list[str] = field(default_factory=list)


def render_source(src: ClusterSource) -> str:
    """The description as text."""
    out: list[str] = [f"# {h}" if h else "#" for h in src.header]
    if out:
        out.append("")
    out.append(f"cluster {label(src.name)} {{")
    out.append(f"  hardware {src.hardware}")
    if src.devices_per_server is not None:
        out.append(f"  devices_per_server {src.devices_per_server}")
    out.append("}")
    for b in src.blocks:
        out.append("")
        if b.comment:
            out.append(f"# {b.comment}")
        out.append(f"{b.kind} {label(b.name) if b.kind == 'server' else b.name} {{")
        for key, value in b.attrs:
            out.append(f"  {key} {value}")
        out.append("}")
    return "\n".join(out) + "\n"
