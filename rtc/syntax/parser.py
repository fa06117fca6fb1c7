"""Parse rtc source text into the generic AST, with friendly syntax errors.

The grammar (``grammar/rtc.lark``) is loaded once per process with lark's LALR parser and
contextual lexer, ``propagate_positions`` on. Lark errors never reach the user: a few error
shapes are recognised from the character or token itself (the case functions of
``_SHAPE_CASES``, tried in order), the rest get a label from the parser state or from
``UnexpectedInput.match_examples`` against a small catalog of labelled bad snippets (below),
and each is turned into a :class:`~rtc.diagnostics.Diagnostic` record with the location, a
plain-language message and a hint.
"""

from __future__ import annotations

import functools
import re
import shlex
from typing import NamedTuple

from rtc.diagnostics import Diagnostic, Span, error
from rtc.rules import rule
from rtc.syntax.values import show_text
from rtc.syntax.ast import Assign, Attribute, Block, ListArg, SourceFile, Word
from rtc.textfmt import printable, source_lines

SYNTAX = rule("RTC100", "syntax-error", "error", "The text does not follow the rtc grammar.", """
    What: a character or token appears where the grammar does not allow it.
    Why: rtc cannot know what you meant, so nothing is compiled.
    Example: `host 10.0.0.6 ;;` or a stray `@`.
    Fix: follow the caret; every fact is `key value ...` on its own line inside a block.""")
MISSING_CLOSE = rule("RTC101", "missing-closing-brace", "error",
                     "A block is not closed with '}'.", """
    What: the file ends while a `server`, `job`, ... block is still open.
    Why: everything after the opening brace would belong to that block.
    Example: `server a {` followed by attributes and no `}`.
    Fix: add `}` on its own line where the block ends.""")
MISSING_OPEN = rule("RTC102", "missing-opening-brace", "error",
                    "A block header is not followed by '{'.", """
    What: `server NAME` (or job, family, ...) must be followed by `{` on the same line.
    Why: the attributes that follow cannot be attached to the block.
    Example: `server atlas-01` then a newline then `host 10.0.0.6`.
    Fix: write `server atlas-01 {`.""")
MISSING_VALUE = rule("RTC103", "missing-value", "error", "An attribute has no value.", """
    What: a line holds a key with nothing after it, e.g. `tp`.
    Why: every fact needs a value; a missing one usually means a half-edited line.
    Example: `  tp` instead of `  tp 8`.
    Fix: give the value on the same line.""")
UNKNOWN_BLOCK = rule("RTC104", "unknown-block-kind", "error", "Unknown block keyword.", """
    What: a top-level block starts with a word that is not cluster, server, family, job,
    network, fabric or disaggregation.
    Why: rtc cannot tell what the block describes.
    Example: `sever atlas-01 {`.
    Fix: use one of the block keywords (`rtc explain --language-reference`, docs/language.md).""")
UNEXPECTED_CLOSE = rule("RTC105", "unexpected-closing-brace", "error",
                        "A '}' closes no block.", """
    What: there are more `}` than `{`.
    Why: the structure of the file is ambiguous.
    Example: an extra `}` after a job block.
    Fix: remove the extra brace or add the missing block header.""")
UNTERMINATED_STRING = rule("RTC106", "unterminated-string", "error",
                           "A quoted string is not closed on its line.", """
    What: a `"` opens a string that does not end before the line ends.
    Why: strings cannot span lines; the rest of the file would be swallowed.
    Example: `server_id "node-0`.
    Fix: close the string with `"` on the same line.""")
SAME_LINE = rule("RTC107", "fact-on-brace-line", "error",
                 "A fact is written on the same line as '{' or before '}'.", """
    What: `server a { host 10.0.0.6 }` puts facts on the brace lines.
    Why: rtc keeps one fact per line so that diffs stay readable and errors point at
    exactly one fact.
    Example: `job j { tp 8 }`.
    Fix: put each fact on its own line between the braces.""")
LIST_ITEM = rule("RTC108", "missing-list-item", "error", "A list has an empty item.", """
    What: a comma is not followed by a value (`devices 0, 1,`) or two commas meet.
    Why: a list item was probably deleted by mistake.
    Example: `servers atlas-01, , atlas-02`.
    Fix: remove the extra comma or add the missing item.""")
BAD_ASSIGN = rule("RTC109", "bad-assignment", "error", "An `=` is missing its name or value.", """
    What: `env = 1` or `env HCCL_BUFFSIZE =`.
    Why: environment settings are `env NAME = value`.
    Example: `env HCCL_BUFFSIZE =`.
    Fix: write `env HCCL_BUFFSIZE = 1024`.""")
BAD_CHARACTER = rule("RTC119", "bad-escape-or-control-character", "error",
                     "A string has an unknown backslash escape, or a value holds a raw "
                     "control character.", r"""
    What: a quoted string knows four escapes, `\"`, `\\`, `\n` and `\t`; any other `\X`
    (`\u001b`, `\d`) is refused, and so is a raw control character (ESC, BEL, DEL, a C1
    character; a tab is fine) in a string, a bare word or a key.
    Why: a mistyped escape would silently change the value (`"a\d"` is not `ad`), and a
    control character would reach server_id, hccl.json and the user's terminal.
    Example: `server_id "x\u001b[2J"`.
    Fix: write a literal backslash as `\\`; remove the control character.""")

BLOCK_KINDS = ("cluster", "server", "family", "job", "network", "fabric", "disaggregation",
               "links")

# Labelled bad snippets for UnexpectedInput.match_examples. Each example must fail at
# the same parser state as the real mistake it stands for.
_EXAMPLES: dict[str, list[str]] = {
    "missing-close": [
        "server a {\n",
        "server a {\n  host 1.2.3.4\n",
        "server a {\n  host 1.2.3.4\n  devices 0..7\n",
        "job j {\n  tp 8\n",
    ],
    "missing-open": [
        "server a\n",
        "server a\n  host 1.2.3.4\n}\n",
        "server\n",
        "job j\n  tp 8\n}\n",
        "server a b {\n}\n",
    ],
    "missing-value": [
        "server a {\n  host\n}\n",
        "server a {\n  host 1.2.3.4\n  nic\n}\n",
        "job j {\n  tp\n}\n",
    ],
    "unknown-block": [
        "sever a {\n}\n",
        "host 1.2.3.4\n",
        "clustr a {\n}\n",
        "a\n",
    ],
    "unexpected-close": [
        "}\n",
        "server a {\n}\n}\n",
    ],
    "same-line": [
        "server a { host 1.2.3.4 }\n",
        "server a {\n  host 1.2.3.4 }\n",
        "server a {\n  host 1.2.3.4 }",
        "server a { host\n}\n",
    ],
    "list-item": [
        "server a {\n  devices 0,\n}\n",
        "server a {\n  devices 0, , 1\n}\n",
        "server a {\n  devices , 1\n}\n",
    ],
    "bad-assign": [
        "job j {\n  env = 1\n}\n",
        "job j {\n  env A =\n}\n",
        "job j {\n  env A = = 1\n}\n",
        "job j {\n  env A = 1 = 2\n}\n",
    ],
}


def _cache_path() -> str | bool:
    """Where lark keeps the built parser between runs (in :func:`rtc.resources.cache_folder`,
    keyed by the grammar's hash, so an upgraded grammar never reuses a stale table). Falls
    back to lark's own temp-dir cache when the folder cannot be created."""
    import hashlib
    import os

    from rtc.resources import cache_folder, grammar_path

    folder = cache_folder()
    try:
        digest = hashlib.sha256(grammar_path().read_bytes()).hexdigest()[:16]
    except OSError:
        return True
    if folder is None:
        return True
    path = os.path.join(folder, f"grammar-{digest}.lark-cache")
    if not os.path.exists(path):  # a new grammar: lark writes it; older versions go
        from rtc.resources import CACHE_KEEP, prune_cache

        prune_cache(folder, "grammar-", ".lark-cache", CACHE_KEEP - 1)
    return path


@functools.lru_cache(maxsize=1)
def _lark():
    from lark import Lark

    from rtc.resources import grammar_path

    return Lark(grammar_path().read_text(encoding="utf-8"), parser="lalr",
                propagate_positions=True, maybe_placeholders=False, cache=_cache_path())


def _span(file: str, obj) -> Span:
    return Span(file, obj.line, obj.column, getattr(obj, "end_line", 0) or 0,
                getattr(obj, "end_column", 0) or 0)


#: The escapes a quoted string knows and what each stands for (docs/language.md).
STRING_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_ESCAPES = re.compile(r"\\(.)")
# Control characters a word or string may not hold: C0 but tab, DEL, C1.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_ESCAPE_NAMES = [f"`\\{k}`" for k in STRING_ESCAPES]
_KNOWN_ESCAPES = ", ".join(_ESCAPE_NAMES[:-1]) + " and " + _ESCAPE_NAMES[-1]   # for hints


class _BadText(Exception):
    """A word or string holds a raw control character or an unknown escape (RTC119)."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _check_text(file: str, tok, quoted: bool, what: str = "a value") -> None:
    """Raise :class:`_BadText` at the first raw control character of the token ``tok`` or,
    in a string (``quoted``), at the backslash of the first escape other than those of
    :data:`STRING_ESCAPES`, whichever comes first. ``what`` names an unquoted token in
    the message ("a value", "a key")."""
    raw = str(tok)
    control = _CONTROL.search(raw)
    escape = (next((m for m in _ESCAPES.finditer(raw) if m.group(1) not in STRING_ESCAPES),
                   None) if quoted and "\\" in raw else None)
    if control is None and escape is None:
        return
    where = "a string" if quoted else what
    if escape is not None and (control is None or escape.start() < control.start()):
        col = tok.column + escape.start()
        ch = escape.group(1)
        what = (f"`\\{ch}`" if ch.isprintable() else
                f"(a backslash before the control character {printable(ch)})")
        raise _BadText(error(
            BAD_CHARACTER, f"unknown escape {what} in {where}",
            Span(file, tok.line, col, tok.line, col + 2),
            hint=f"the escapes rtc knows are {_KNOWN_ESCAPES}; a literal backslash is "
                 "written `\\\\`"))
    raise _BadText(_control_character(control.group(), f"in {where}", Span(
        file, tok.line, tok.column + control.start(), tok.line, tok.column + control.start() + 1)))


def _control_character(ch: str, where: str, span: Span) -> Diagnostic:
    """RTC119 for the raw control character ``ch`` at ``span`` (``where``: "in a string")."""
    return error(BAD_CHARACTER, f"raw control character {printable(ch)} (U+{ord(ch):04X}) "
                 f"{where}", span,
                 hint="remove it: rtc values hold no control characters (a string may hold a "
                      "tab, and a newline written `\\n`)")


def _word(file: str, tree_or_token) -> Word:
    from lark import Tree

    if isinstance(tree_or_token, Tree):
        tok = tree_or_token.children[0]
        quoted = tree_or_token.data == "string"
    else:
        tok = tree_or_token
        quoted = tok.type == "STRING"
    _check_text(file, tok, quoted)
    text = str(tok)
    if quoted:
        text = _ESCAPES.sub(lambda m: STRING_ESCAPES[m.group(1)], text[1:-1])
    return Word(text, _span(file, tok), quoted)


#: Blocks deeper than this are not converted: no block may nest at all (RTC110 says so at
#: the first nested one), and converting 50,000 nested blocks would overflow the stack.
MAX_NESTING = 16


def _convert_block(file: str, tree, depth: int = 0) -> Block:
    from lark import Token, Tree

    kind_tree = tree.children[0]
    kind_tok = kind_tree.children[0]
    label = None
    body = []
    for child in tree.children[1:]:
        if isinstance(child, Tree) and child.data == "label":
            label = _word(file, child.children[0])
        elif isinstance(child, Tree) and child.data == "attribute":
            body.append(_convert_attribute(file, child))
        elif isinstance(child, Tree) and child.data == "block":
            if depth < MAX_NESTING:
                body.append(_convert_block(file, child, depth + 1))
        elif isinstance(child, Token):
            continue
    return Block(str(kind_tok), _span(file, kind_tok), label, tuple(body), _span(file, tree.meta))


def _convert_attribute(file: str, tree) -> Attribute:
    from lark import Tree

    key_tok = tree.children[0]
    _check_text(file, key_tok, False, "a key")
    args = []
    for child in tree.children[1:]:
        if not isinstance(child, Tree):
            continue
        if child.data == "list":
            items = tuple(_word(file, c) for c in child.children)
            args.append(ListArg(items, _span(file, child.meta)))
        elif child.data == "assign":
            name = _word(file, child.children[0])
            value = _word(file, child.children[1])
            args.append(Assign(name, value, _span(file, child.meta)))
        else:
            args.append(_word(file, child))
    return Attribute(str(key_tok), _span(file, key_tok), tuple(args), _span(file, tree.meta))


def parse_text(text: str, filename: str = "<input>") -> tuple[SourceFile | None, list[Diagnostic]]:
    """Parse rtc source ``text`` (``filename`` is used in spans only).

    Returns ``(SourceFile, [])`` on success, or ``(None, [diagnostic])`` with one friendly
    syntax diagnostic (RTC100-RTC109, RTC119) on failure. Never raises lark exceptions."""
    from lark.exceptions import UnexpectedInput

    if text.startswith("\ufeff"):  # a UTF-8 byte order mark some editors write
        text = text[1:]
    if "\r" in text and "\n" not in text:
        return None, [_cr_line_ends(text, filename)]
    if not text.endswith("\n"):
        text_for_parser = text + "\n"
    else:
        text_for_parser = text
    try:
        tree = _lark().parse(text_for_parser)
    except UnexpectedInput as exc:
        return None, [_friendly(exc, text_for_parser, filename)]
    try:
        blocks = tuple(_convert_block(filename, b) for b in tree.children
                       if getattr(b, "data", None) == "block")
    except _BadText as exc:
        return None, [exc.diagnostic]
    same_line = _fact_on_open_line(blocks)
    if same_line is not None:
        return None, [same_line]
    return SourceFile(filename, text, blocks), []


def _cr_line_ends(text: str, filename: str) -> Diagnostic:
    """RTC100 for a file whose lines end in a lone CR (classic Mac OS): read as one line,
    its first ``#`` comment would swallow the rest, and the error would be "no cluster"."""
    return error(SYNTAX, f"the lines of {filename} end in a carriage return alone (CR, old "
                 "Mac OS line ends): rtc reads lines ending in LF or CR LF",
                 Span(filename, 1, text.index("\r") + 1),
                 hint=f"convert the line ends: tr '\\r' '\\n' < {shlex.quote(filename)} "
                      "> fixed.rtc")


def _fact_on_open_line(blocks) -> Diagnostic | None:
    """RTC107 for `server a { host 10.0.0.6`: the grammar accepts a fact after the opening
    brace (the line break is optional there), but one fact per line is the rule on both
    brace lines (`devices 0..7 }` is rejected by the grammar)."""
    for block in blocks:
        header = block.label.span.line if block.label else block.kind_span.line
        for item in block.body:
            start = item.key_span if isinstance(item, Attribute) else item.kind_span
            if start.line == header:
                what = f"'{item.key}'" if isinstance(item, Attribute) else f"a {item.kind} block"
                return error(SAME_LINE, f"{what} is on the same line as the '{{' that opens "
                             f"{block.kind} {block.label.text if block.label else ''}".rstrip()
                             + "; facts must be on their own lines", start,
                             hint="break the line after '{': one fact per line between the "
                                  "braces")
            if isinstance(item, Block):
                inner = _fact_on_open_line((item,))
                if inner is not None:
                    return inner
    return None


def _enclosing_block(text: str, line: int) -> str | None:
    """The kind of the block that is open at the start of ``line`` (None at top level)."""
    lines = source_lines(text)
    opened = _unclosed_brace("\n".join(lines[: line - 1]) + "\n", "")
    if opened is None:
        return None
    words = lines[opened.line - 1].split()
    return words[0] if words else None


def _unclosed_brace(text: str, filename: str) -> Span | None:
    """The position of the last '{' that opens a block and is never closed."""
    stack: list[tuple[int, int]] = []
    for lineno, line in enumerate(source_lines(text), start=1):
        col = 0
        in_string = False
        while col < len(line):
            ch = line[col]
            if in_string:
                if ch == "\\":
                    col += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "#":
                break
            elif ch == "{":
                nxt = line[col + 1] if col + 1 < len(line) else "\n"
                if nxt.isspace():
                    stack.append((lineno, col + 1))
                else:  # a {template} group inside a word
                    close = line.find("}", col)
                    col = close if close >= 0 else len(line)
            elif ch == "}" and stack:
                stack.pop()
            col += 1
    if not stack:
        return None
    line, col = stack[-1]
    return Span(filename, line, col, line, col + 1)


class _Failure(NamedTuple):
    """Where and how lark stopped: the 1-based position (the end of the text for an
    UnexpectedEOF), the offending token and the terminals the parser expected there."""

    exc: Exception
    text: str
    filename: str
    lines: list[str]
    line: int
    column: int
    source_line: str
    token_type: str
    token_text: str
    expected: frozenset[str]
    ch: str  # the character at the error position ("" past the line end)
    before: str  # the line up to the error position, without a comment or trailing blanks

    @property
    def span(self) -> Span:
        return Span(self.filename, self.line, self.column, self.line, self.column + 1)

    @property
    def next_char(self) -> str:
        """The character after the error position ("" at the line end)."""
        return self.source_line[self.column] if self.column < len(self.source_line) else ""

    @property
    def glued(self) -> bool:
        """The parser stopped at a '{' written right after a word (a template group)."""
        return bool(self.ch == "{" and self.before and self.column >= 2
                    and not self.source_line[self.column - 2].isspace())


def _failure(exc, text: str, filename: str) -> _Failure:
    """Read the position, token and expected terminals off lark's ``exc``."""
    lines = source_lines(text)
    line = getattr(exc, "line", -1)
    column = getattr(exc, "column", -1)
    if line is None or line < 1:  # UnexpectedEOF reports -1
        line = max(1, len(lines))
        column = len(lines[-1]) + 1 if lines else 1
    source_line = lines[line - 1] if 0 < line <= len(lines) else ""
    token = getattr(exc, "token", None)
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
    return _Failure(
        exc, text, filename, lines, line, column, source_line,
        token_type=getattr(token, "type", ""),
        token_text=str(token) if token is not None else "",
        expected=frozenset(expected),
        ch=source_line[column - 1] if 0 < column <= len(source_line) else "",
        before=source_line[: max(0, column - 1)].split("#")[0].rstrip())


# Error shapes recognised by the character or the token itself, each a function that returns
# its diagnostic or None; _friendly tries them in the order of _SHAPE_CASES.

def _odd_space(f: _Failure) -> Diagnostic | None:
    """RTC100: the parser stopped at a space that is not a plain one (U+0020) or a tab: a
    no-break space U+00A0, an ideographic space U+3000, an em space U+2003, ... (pasted
    from a web page, a chat or a word processor; the excerpt cannot show it)."""
    import unicodedata

    ch = f.ch
    if not ch or ch in " \t" or not ch.isspace():
        return None
    name = unicodedata.name(ch, "").lower() or "unnamed space character"
    article = "an" if name[0] in "aeiou" else "a"
    return error(SYNTAX, f"{article} {name} (U+{ord(ch):04X}) here: rtc separates words "
                 "with plain spaces", Span(f.filename, f.line, f.column, f.line, f.column + 1),
                 hint=f"{article} {name} U+{ord(ch):04X}: replace it with a plain space "
                      "(it often comes with text pasted from a web page or a chat)")


def _raw_control(f: _Failure) -> Diagnostic | None:
    """RTC119: the parser stopped at a control character between words (a vertical tab, a
    lone carriage return)."""
    ch = f.ch   # the source line is cut at "\\n" only (source_lines), as lark counts lines
    if not (ch and _CONTROL.match(ch)):
        return None
    return _control_character(ch, "here", f.span)


def _unterminated_string(f: _Failure) -> Diagnostic | None:
    """RTC106: the parser stopped at a '"' whose string the line never closes."""
    if f.ch != '"':
        return None
    return error(UNTERMINATED_STRING, "this string is not closed before the end of the line",
                 f.span, hint='close it with " on the same line; strings cannot span lines')


def _empty_template_group(f: _Failure) -> Diagnostic | None:
    """`10.0.{}.1`: a template group with nothing inside."""
    if not (f.glued and f.next_char == "}"):
        return None
    return error(SYNTAX, "empty template group '{}'",
                 Span(f.filename, f.line, f.column, f.line, f.column + 2),
                 hint="put an expression inside, e.g. 10.1.{i/256}.{i%256}")


def _template_group_space(f: _Failure) -> Diagnostic | None:
    """`10.0.{ i}.1`: '{ ' after a word (a space after '{' opens a block)."""
    if not (f.glued and f.next_char == " "):
        return None
    return error(SYNTAX, "a template group cannot start with a space ('{ ' opens a block)",
                 f.span, hint="write the group without spaces after '{', e.g. {i} or "
                 "{(i%16)*16 + 2*d + 1}")


def _unbalanced_template(f: _Failure) -> Diagnostic | None:
    """`10.0.{i.1`: a template group that does not close on its line."""
    nxt = f.next_char
    if not (f.ch == "{" and nxt and not nxt.isspace() and f.before):
        return None
    return error(SYNTAX, "unbalanced '{' in a template: a {expression} must close with "
                 "'}' on the same line", f.span,
                 hint="templates look like 10.1.{i/256}.{i%256}")


def _nested_block(f: _Failure) -> Diagnostic | None:
    """A word followed by '{' inside a block: a nested block, which the language has not."""
    rest = f.source_line[f.column:].split("#")[0].strip() if f.column >= 1 else ""
    if not (f.token_type == "LBRACE" and f.before and not rest and "WORD" in f.expected):
        return None
    outer = _enclosing_block(f.text, f.line)
    if outer is None:
        return None
    head = f.before.split()
    start = len(f.source_line) - len(f.source_line.lstrip()) + 1
    return error(SYNTAX, f"blocks cannot be nested: '{head[0]} {{' is inside a "
                 f"{outer} block", Span(f.filename, f.line, start, f.line, f.column + 1),
                 hint="close the " + outer + " block with '}' first; only "
                 + ", ".join(BLOCK_KINDS) + " blocks exist, all at the top level")


def _comma_in_assignment(f: _Failure) -> Diagnostic | None:
    """`env A = 0,1`: a value with commas must be quoted."""
    before = f.before
    if not (f.token_type == "COMMA" and "=" in before):
        return None
    name, _eq, value = before.partition("=")
    value = value.strip()
    key_words = name.split()
    vstart = before.index("=") + 1 + (len(before.split("=", 1)[1]) -
                                      len(before.split("=", 1)[1].lstrip())) + 1
    full = f.source_line[vstart - 1:].split("#")[0].rstrip()
    shown = f'{" ".join(key_words)} = "{full}"' if key_words else f'NAME = "{full}"'
    return error(BAD_ASSIGN, f"the value after '=' contains a comma: a value with commas "
                 f"must be quoted ({value}, ... would be read as a list)",
                 Span(f.filename, f.line, vstart, f.line, vstart + len(full)),
                 hint=f"write `{shown}`")


_SHAPE_CASES = (_raw_control, _odd_space, _unterminated_string, _empty_template_group, _template_group_space,
                _unbalanced_template, _nested_block, _comma_in_assignment)


def _exact_label(f: _Failure) -> str | None:
    """The catalog label (a key of :data:`_EXAMPLES`) the parser state decides exactly, or
    None when match_examples must classify the error."""
    from lark.exceptions import UnexpectedEOF

    kinds = {k.upper() for k in BLOCK_KINDS}
    token_type, expected, before = f.token_type, f.expected, f.before
    if isinstance(f.exc, UnexpectedEOF) or token_type == "$END":
        return "missing-close"
    if token_type == "WORD" and expected and expected <= kinds | {"_NL"}:
        return "unknown-block"
    if token_type == "RBRACE" and kinds & expected:
        return "unexpected-close"
    if token_type in ("RBRACE", "LBRACE") and "WORD" in expected:
        return "same-line"
    if "LBRACE" in expected and token_type in ("_NL", "WORD", "STRING"):
        return "missing-open"
    if token_type == "COMMA" or (token_type == "_NL" and before.endswith(",")):
        return "list-item"
    if token_type == "EQUAL" or (token_type == "_NL" and before.endswith("=")):
        return "bad-assign"
    if token_type == "_NL" and expected <= {"WORD", "STRING"}:
        return "missing-value"
    return None


def _incomplete_span(f: _Failure, label: str | None) -> Span:
    """For an exact missing-value, list-item or bad-assign label at a line end: the span of
    what is incomplete (the key, the comma, the '='), not of the line end."""
    before = f.before
    if not (f.token_type == "_NL" and before
            and label in ("missing-value", "list-item", "bad-assign")):
        return f.span
    if label == "missing-value":
        start = len(before) - len(before.split()[-1]) + 1
    else:
        start = len(before)
    return Span(f.filename, f.line, start, f.line, len(before) + 1)


def _example_label(exc) -> str | None:
    """The label of the :data:`_EXAMPLES` snippet that fails like ``exc`` (None: no match)."""
    try:
        return exc.match_examples(_lark().parse, _EXAMPLES, use_accepts=True)
    except Exception:  # pragma: no cover - classification is best effort
        return None


def _labelled(f: _Failure, label: str | None, span: Span) -> Diagnostic:
    """The diagnostic for a catalog ``label`` (RTC100 for None or an unknown label)."""
    if label == "missing-close":
        opened = _unclosed_brace(f.text, f.filename)
        where = f" (opened at line {opened.line})" if opened else ""
        return error(MISSING_CLOSE, f"missing '}}': the file ends inside a block{where}",
                     opened or span, hint="add '}' on its own line where the block ends")
    if label == "missing-open":
        misspelt = _misspelt_kind(f)
        if misspelt is not None:
            return misspelt
        return error(MISSING_OPEN, "expected '{' after the block header", span,
                     hint="a block is written `server NAME {` with the brace on the header line")
    if label == "missing-value":
        prev = _previous_word(f.source_line, f.lines, f.line, f.column)
        return error(MISSING_VALUE, f"{show_text(prev)} has no value" if prev else "an attribute has no value",
                     span, hint="write the value on the same line, e.g. `tp 8`")
    if label == "unknown-block":
        return _unknown_block(f, span)
    if label == "unexpected-close":
        return error(UNEXPECTED_CLOSE, "this '}' closes no block", span,
                     hint="remove it, or add the block header it belongs to")
    if label == "same-line":
        return error(SAME_LINE, "facts must be on their own lines, not on a line with '{' or '}'",
                     span, hint="break the line: one fact per line between the braces")
    if label == "list-item":
        return error(LIST_ITEM, "empty list item (a comma with no value)", span,
                     hint="remove the extra comma or add the missing item")
    if label == "bad-assign":
        return error(BAD_ASSIGN, "an '=' must have a name on its left and a value on its right",
                     span, hint="write `env NAME = value`")
    shown = f" {show_text(f.token_text)}" if f.token_text and f.token_text.strip() else ""
    return error(SYNTAX, f"unexpected{shown or ' input'} here", span,
                 hint="every fact is `key value ...` on its own line inside a block")


def _misspelt_kind(f: _Failure) -> Diagnostic | None:
    """RTC104 for a header whose first word only begins with a block keyword (``jobs x {``,
    ``jobb x {``): the lexer reads ``job`` and takes the rest for the label, so the parser
    stops at the real label, expecting ``{``. None when the first word is a keyword."""
    words = f.source_line.split()
    if not words or words[0] in BLOCK_KINDS or not words[0].startswith(BLOCK_KINDS):
        return None
    column = f.source_line.index(words[0]) + 1
    return _unknown_block(f._replace(token_text=words[0]),
                          Span(f.filename, f.line, column, f.line, column + len(words[0])))


def _unknown_block(f: _Failure, span: Span) -> Diagnostic:
    """RTC104 under the whole unknown keyword, with the closest block keyword as the hint."""
    import difflib

    word = f.token_text or f.source_line.strip().split(" ")[0]
    if word[:1] in ("{", "["):   # no rtc line starts with a brace: JSON
        return error(UNKNOWN_BLOCK, f"unknown block keyword {show_text(word[:1])}: this looks like a "
                     "JSON file (a rank table?), not an rtc description", span,
                     hint="check a rank table with `rtc validate FILE`; `rtc import FILE` "
                          "writes the description of one")
    start = span.column - 1
    if word and f.source_line[start:start + len(word)] == word:  # underline the keyword
        span = span._replace(end_line=span.line, end_column=span.column + len(word))
    close = difflib.get_close_matches(word, BLOCK_KINDS, n=1)
    hint = (f"did you mean '{close[0]}'?" if close else
            "blocks are: " + ", ".join(BLOCK_KINDS))
    return error(UNKNOWN_BLOCK, f"unknown block keyword {show_text(word)}", span, hint=hint)


def _friendly(exc, text: str, filename: str) -> Diagnostic:
    """The one friendly diagnostic for lark's ``exc``: the first of :data:`_SHAPE_CASES`
    that recognises the error, else the message of the error's catalog label (decided by the
    parser state, then by ``match_examples`` against :data:`_EXAMPLES`)."""
    failure = _failure(exc, text, filename)
    for case in _SHAPE_CASES:
        found = case(failure)
        if found is not None:
            return found
    label = _exact_label(failure)
    span = _incomplete_span(failure, label)
    if label is None:
        label = _example_label(exc)
    return _labelled(failure, label, span)


def _previous_word(source_line: str, lines: list[str], line: int, column: int) -> str:
    """The last word before the error position (on this line, or the previous line when
    the error sits at a line start)."""
    before = source_line[: max(0, column - 1)].split("#")[0].strip()
    if not before and line >= 2:
        before = lines[line - 2].split("#")[0].strip()
    return before.split()[-1] if before else ""

#: The rules this module reports (collected by rtc.catalogue).
RULES = (SYNTAX, MISSING_CLOSE, MISSING_OPEN, MISSING_VALUE, UNKNOWN_BLOCK, UNEXPECTED_CLOSE,
         UNTERMINATED_STRING, SAME_LINE, LIST_ITEM, BAD_ASSIGN, BAD_CHARACTER)
