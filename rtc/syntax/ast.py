"""The generic syntax tree of an rtc file: frozen dataclasses with source spans.

Shape (see ``grammar/rtc.lark``)::

    SourceFile(blocks=(Block(kind="server", label=Word("atlas-01"), body=(
        Attribute(key="host", args=(Word("10.0.0.6"),)), ...)), ...))

Attribute arguments are :class:`Word` (a bare word or a quoted string), :class:`ListArg`
(``a, b, c``) or :class:`Assign` (``NAME = value``).
"""

from __future__ import annotations

from typing import NamedTuple, Union

from rtc.diagnostics import Span


class Word(NamedTuple):
    """A bare word (``10.0.0.6``, ``0..7``, ``{i/64}``) or a string (``quoted=True``,
    ``text`` without the quotes, escapes resolved)."""

    text: str
    span: Span
    quoted: bool = False


class ListArg(NamedTuple):
    """A comma-separated list ``a, b, c`` (at least two items)."""

    items: tuple[Word, ...]
    span: Span


class Assign(NamedTuple):
    """``NAME = value`` (used by ``env``)."""

    name: Word
    value: Word
    span: Span


Arg = Union[Word, ListArg, Assign]


class Attribute(NamedTuple):
    """One fact: ``key arg arg ...`` on one line."""

    key: str
    key_span: Span
    args: tuple[Arg, ...]
    span: Span


class Block(NamedTuple):
    """``kind label { ... }``; ``label`` is None when omitted."""

    kind: str
    kind_span: Span
    label: Word | None
    body: tuple[Union[Attribute, "Block"], ...]
    span: Span


class SourceFile(NamedTuple):
    """A parsed file: its name as given, its text, and its top-level blocks."""

    path: str
    text: str
    blocks: tuple[Block, ...]
