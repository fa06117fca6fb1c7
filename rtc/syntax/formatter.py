"""The canonical layout of rtc source (``rtc fmt``): a pure function of the text.

The file is parsed with :func:`rtc.syntax.parser.parse_text` (a file that does not parse
raises :class:`SourceSyntaxError` with the parser's diagnostics) and written back with:

* two spaces of indentation per block depth, one space between the words of a line,
  ``NAME = value`` and ``a, b`` lists with single spaces;
* the attributes of a block in the order its kind declares them
  (:data:`rtc.syntax.schema.BLOCK_SPECS`), a stable sort: repeated attributes (``env``,
  ``on``, ``policy``, ``args``) keep their relative order; unknown attributes and nested
  blocks (errors the formatter leaves to ``rtc check``) go last, in source order;
* one blank line between top-level blocks, no blank lines inside a block (at the top level
  a blank line between comment lines, or between comments and their block, is kept);
* comments where they were: a full-line comment moves with the line below it (before a
  closing ``}`` it stays inside the block); an end-of-line comment stays on its line,
  after two spaces;
* no trailing whitespace, ``\\n`` line ends, a final newline; line continuations joined.

Every word is copied from the source as written, so quoted strings and template groups
``{...}`` are kept byte for byte; comments are kept as written (trailing blanks removed).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span
from rtc.syntax.ast import Assign, Attribute, Block, ListArg, SourceFile, Word
from rtc.syntax.parser import parse_text
from rtc.syntax.schema import BLOCK_SPECS

INDENT = "  "

__all__ = ["INDENT", "SourceSyntaxError", "format_source"]


class SourceSyntaxError(ValueError):
    """The text does not parse; ``diagnostics`` are the parser's (RTC100-RTC109, RTC119)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics[0].message if diagnostics else "syntax error")
        self.diagnostics = diagnostics


@dataclass
class _Line:
    """One output line before indentation: its text, the source line it starts on (and
    whether a blank line is above that), the full-line comments above it (text, blank line
    before it) and its end-of-line comment."""

    text: str
    first: int
    blank_before: bool = False
    above: list = field(default_factory=list)
    trailing: str | None = None


@dataclass
class _Node:
    """An attribute (``close`` is None) or a block with its body, and its sort key."""

    head: _Line
    depth: int
    key: int = 0
    body: list = field(default_factory=list)
    close: _Line | None = None


class _Text:
    """The source lines, with the raw text of a token by its span."""

    def __init__(self, text: str):
        self.lines = text.split("\n")

    def raw(self, span: Span) -> str:
        """The characters of a one-line token as written."""
        return self.lines[span.line - 1][span.column - 1:span.end_column - 1]

    def blank_before(self, line: int) -> bool:
        """True when the physical line above ``line`` is empty or only blanks."""
        return line >= 2 and not self.lines[line - 2].strip()


def format_source(text: str, filename: str) -> str:
    """The canonical layout of rtc source ``text`` (see the module docstring); ``filename``
    is used in diagnostics only. The result parses to the same blocks and attributes, and
    formatting it again changes nothing. Raises :class:`SourceSyntaxError` (with the
    parser's diagnostics, as ``rtc check`` reports them) when ``text`` does not parse."""
    text = text.removeprefix("\ufeff")
    source, diags = parse_text(text, filename)
    if source is None:
        raise SourceSyntaxError(diags)
    src = _Text(text)
    units: list[_Line] = []
    nodes = [_block_node(block, 0, 0, src, units) for block in source.blocks]
    eof = _Line("", len(src.lines) + 1)
    _attach_comments(_comments(src, source), src, units, eof)
    out: list[str] = []
    for i, node in enumerate(nodes):
        _emit_top(out, node, first=i == 0)
    _emit_comments(out, eof.above, first=not out)
    return "\n".join(out) + "\n" if out else ""


def _block_node(block: Block, depth: int, key: int, src: _Text, units: list) -> _Node:
    """The node of ``block`` (and its body), appending its lines to ``units`` in source
    order (header, body, closing brace)."""
    label = f" {src.raw(block.label.span)}" if block.label else ""
    head = _Line(f"{block.kind}{label} {{", block.kind_span.line,
                 src.blank_before(block.kind_span.line))
    units.append(head)
    order = {name: i for i, name in enumerate(BLOCK_SPECS[block.kind].attrs)}
    node = _Node(head, depth, key)
    for item in block.body:
        if isinstance(item, Block):
            node.body.append(_block_node(item, depth + 1, len(order), src, units))
            continue
        line = _Line(_attribute_text(item, src), item.key_span.line)
        units.append(line)
        node.body.append(_Node(line, depth + 1, order.get(item.key, len(order))))
    node.body.sort(key=lambda n: n.key)
    node.close = _Line("}", block.span.end_line)
    units.append(node.close)
    return node


def _attribute_text(item: Attribute, src: _Text) -> str:
    """``key arg arg``: words as written, ``a, b`` lists, ``NAME = value``."""
    parts = [src.raw(item.key_span)]
    for arg in item.args:
        if isinstance(arg, ListArg):
            parts.append(", ".join(src.raw(w.span) for w in arg.items))
        elif isinstance(arg, Assign):
            parts.append(f"{src.raw(arg.name.span)} = {src.raw(arg.value.span)}")
        else:
            parts.append(src.raw(arg.span))
    return " ".join(parts)


def _words(source: SourceFile):
    """The span of every word and string token (keys, labels, values, list items)."""
    def of_block(block: Block):
        if block.label is not None:
            yield block.label.span
        for item in block.body:
            if isinstance(item, Block):
                yield from of_block(item)
                continue
            yield item.key_span
            for arg in item.args:
                words = (arg.items if isinstance(arg, ListArg) else
                         (arg.name, arg.value) if isinstance(arg, Assign) else (arg,))
                yield from (w.span for w in words if isinstance(w, Word))

    for block in source.blocks:
        yield from of_block(block)


def _comments(src: _Text, source: SourceFile) -> dict[int, int]:
    """Line number -> column (0-based) of the comment on that line: the first ``#`` that
    is not inside a word or string (a template group or a string may hold a ``#``)."""
    tokens: dict[int, list[tuple[int, int]]] = {}
    for span in _words(source):
        tokens.setdefault(span.line, []).append((span.column - 1, span.end_column - 1))
    found = {}
    for no, line in enumerate(src.lines, start=1):
        if "#" not in line:
            continue
        pos = 0
        for start, end in sorted(tokens.get(no, ())) + [(len(line), len(line))]:
            col = line.find("#", pos, start)
            if col >= 0:
                found[no] = col
                break
            pos = max(pos, end)
    return found


def _attach_comments(comments: dict[int, int], src: _Text, units: list, eof: _Line) -> None:
    """Give each comment to its line: a full-line comment to the first line that starts
    below it (``eof`` after the last block), an end-of-line comment to the last line that
    starts on or above its line."""
    firsts = [u.first for u in units]
    for no, col in sorted(comments.items()):
        line = src.lines[no - 1]
        text = line[col:].rstrip()
        if line[:col].strip():
            unit = units[bisect.bisect_right(firsts, no) - 1]
            unit.trailing = f"{unit.trailing}  {text}" if unit.trailing else text
            continue
        i = bisect.bisect_right(firsts, no)
        (units[i] if i < len(units) else eof).above.append((text, src.blank_before(no)))


def _emit_top(out: list[str], node: _Node, first: bool) -> None:
    """A top-level block: one blank line before it (and its comments) unless it opens the
    file; blank lines between its leading comments, and after them, kept."""
    head = node.head
    if not first:
        out.append("")
    _emit_comments(out, head.above, first=True)
    if head.above and head.blank_before:
        out.append("")
    out.append(_with_comment(head.text, head.trailing))
    _emit_body(out, node)


def _emit_node(out: list[str], node: _Node) -> None:
    """An attribute or nested block, its comments above it, at its depth."""
    pad = INDENT * node.depth
    out.extend(pad + text for text, _blank in node.head.above)
    out.append(pad + _with_comment(node.head.text, node.head.trailing))
    if node.close is not None:
        _emit_body(out, node)


def _emit_body(out: list[str], node: _Node) -> None:
    """A block's attributes (already sorted) and its closing brace, with the comments
    that sit above the brace indented as the body."""
    for child in node.body:
        _emit_node(out, child)
    close = node.close
    out.extend(INDENT * (node.depth + 1) + text for text, _blank in close.above)
    out.append(INDENT * node.depth + _with_comment(close.text, close.trailing))


def _emit_comments(out: list[str], comments: list, first: bool) -> None:
    """Full-line comments at the top level, keeping one blank line where the source had
    blank lines between them (and before the first unless ``first``)."""
    for i, (text, blank) in enumerate(comments):
        if blank and (i > 0 or not first):
            out.append("")
        out.append(text)


def _with_comment(text: str, comment: str | None) -> str:
    return f"{text}  {comment}" if comment else text
