"""Load a JSON rank table with precise, friendly syntax errors and a path -> line/column map.

:func:`load_json` parses the text with Python's C JSON decoder (a 65,536-rank v1.0
table of 8.4 MB loads in ~0.1 s) and returns ``(document, SourceMap, diagnostics)``.
Nothing is located up front: :class:`SourceMap` finds where a value sits only when a finding
asks for it (see "Locating values" below).

Rules RTC600-RTC604 are declared below with their explanations (``rtc explain RTC600``).

Locating values
    :meth:`SourceMap.locate` maps a JSON path (``("server_list", 1, "device", 3, "device_ip")``
    or the string ``"server_list[1].device[3].device_ip"``) to a :class:`~rtc.diagnostics.Span`.
    It walks the text container by container: in an object it reads keys with the C string
    scanner, in an array it steps over elements; a value is skipped (parsed by the C JSON
    scanner) only when a later member is needed. Member offsets are remembered per container
    and scanning resumes where it stopped, and container offsets are remembered per path, so
    sibling lookups start from the parent. Measured on a 65,536-rank table (8.4 MB): load plus
    locating the last device's ``device_ip`` ~0.17 s; locating all 65,536 ``device_ip`` values
    ~1.3 s (about 20 us each). Line numbers come from a line-start index built on first use.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from itertools import accumulate
from json.decoder import scanstring as _scanstring
from typing import Union

from rtc.rules import rule
from rtc.diagnostics import Diagnostic, Related, Span, error, warning
from rtc.readfile import read_bytes
from rtc.schema.paths import JsonPath, format_path, parse_path

__all__ = [
    "JsonPath",
    "SourceMap",
    "format_path",
    "parse_path",
    "load_json",
    "strip_comments_and_trailing_commas",
]


RULE_SYNTAX = rule("RTC600", "json-syntax-error", "error",
                   "The file is not valid JSON.", """
    What: the file is not JSON: a missing comma or colon, an unclosed string or bracket,
    single quotes, unquoted keys, `True`/`None`, `NaN`/`Infinity`, text after the document,
    an empty file. The diagnostic points at the first character the parser could not accept.
    Why it breaks: HCCL reads the table with `nlohmann::json`; a parse error makes
    `HcclCommInitClusterInfo` fail before any rank is created, on every node.
    Fix: correct the text at the reported line and column (the hint says what was expected).""")
RULE_COMMENT = rule("RTC601", "json-comment", "error",
                    "The JSON contains // or /* */ comments.", """
    What: `//` or `/* */` comments, usually copied with a documentation example (the HCCL
    docs annotate their samples with `//` and warn that the comments must be removed). The
    diagnostic points at the FIRST comment and counts the rest.
    Why it breaks: JSON has no comments; `nlohmann::json` stops at the first `/`.
    Fix: delete every comment. When comments (and trailing commas) are the only problem, the
    loader blanks them out (offsets and line numbers unchanged) and still returns the
    document so later checks can run.""")
RULE_TRAILING_COMMA = rule("RTC602", "json-trailing-comma", "error",
                           "A comma stands right before a closing bracket.", """
    What: a `,` right before `}` or `]`. The diagnostic points at the first one.
    Why it breaks: not JSON; `nlohmann::json` rejects it.
    Fix: remove the comma after the last element. Recovery as for RTC601.""")
RULE_ENCODING = rule("RTC603", "unreadable-or-not-utf8", "error",
                     "The file cannot be read or is not UTF-8 text.", """
    What: the file cannot be read, is not UTF-8 (e.g. UTF-16 written by some Windows
    editors, or Latin-1 bytes in a comment), contains a NUL byte, or a string holds a
    lone surrogate escape (`"\\ud800"` without its low half), which is no Unicode text.
    Why it breaks: `nlohmann::json` accepts only UTF-8 and rejects ill-formed byte
    sequences and unpaired surrogate escapes.
    Fix: save the file as UTF-8; write the character itself, or both halves of its
    surrogate pair (`"\\ud83d\\ude00"`). (A UTF-8 byte-order mark is accepted silently, as
    `nlohmann::json` skips it.) A lone surrogate is reported where its string is, and the
    rest of the file is still checked.""")
RULE_DUPLICATE_KEY = rule("RTC604", "json-duplicate-key", "warning",
                          "The same key appears twice in one object.", """
    What: the same key twice in one object, e.g. two `device_ip` entries in one device.
    Why it matters: the JSON parsers involved keep only one value (`nlohmann::json` and
    Python keep the last), so the other one is silently ignored, and tools may disagree on
    which one wins.
    Fix: keep exactly one. The diagnostic points at the later occurrence and names the first
    one as related.""")

_WS = re.compile(r"[ \t\n\r]*")
# between members: optional comma, then the next key's quote or the closing brace
_MEMBER = re.compile(r'[ \t\n\r]*,?[ \t\n\r]*(?:(")|\})')
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_ELEMENT = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*(\])?")

# String-aware lexers used only on the error path (after the fast parse failed).
# A string never spans a raw newline in JSON, so an unterminated one stops at the line end
# and cannot swallow the rest of the file.
_COMMENT_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)')
_TRAILING_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"?|,(?=[ \t\r\n]*[\]}])')
_CONST_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"?|(-?Infinity|NaN)')
_NOT_NEWLINE = re.compile(r"[^\n]")
# A surrogate escape somewhere in the text (~5 ms on 8 MB; one alternation with the raw
# range would take ~130 ms): only then are the parsed strings searched for lone surrogates.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# `kubectl describe configmap` prints each data key as `<key>:` over a `----` rule, then the
# value (kubectl's describe.go, describeConfigMap); the describe preamble (Name:, Labels:,
# Data / ====) may come before it and `BinaryData` / `Events:` after it.
_DESCRIBE_HEADER = re.compile(r"\A(?:[^\n]*\n)*?[ \t]*[A-Za-z0-9_.-]+:[ \t\r]*\n-{3,}[ \t\r]*\n(?=\s*[\[{])")
_DESCRIBE_TAIL = re.compile(r"^(?:BinaryData|Events:)", re.M)
#: At most this many lone-surrogate strings get their own RTC603.
_MAX_SURROGATE_REPORTS = 20


def _as_path(path) -> JsonPath:
    if isinstance(path, str):
        return parse_path(path)
    return tuple(path)


# --------------------------------------------------------------------------- source map

class _ObjIndex:
    __slots__ = ("members", "pos", "pending", "done", "dups")

    def __init__(self, pos: int):
        self.members: dict[str, tuple[int, int]] = {}  # key -> (key offset, value offset)
        self.pos = pos  # where to resume scanning
        self.pending = -1  # offset of a value not skipped yet (skipped only when needed)
        self.done = False
        self.dups: list[tuple[str, int, int]] = []  # (key, first key offset, later key offset)


class _ArrIndex:
    __slots__ = ("offsets", "pos", "pending", "done")

    def __init__(self, pos: int):
        self.offsets: list[int] = []
        self.pos = pos
        self.pending = -1
        self.done = False


class SourceMap:
    """The text of a JSON file plus lazy lookups from JSON paths to line/column.

    ``text`` is the text that was parsed (for a file with comments that were blanked out by
    recovery, the blanked text: offsets, lines and columns are those of the original file).
    Columns are 1-based and count characters (code points), not bytes; a tab is one column.
    """

    def __init__(self, text: str, filename: str, *, parsed: bool = True,
                 duplicate_keys: bool = True, recovered: bool = False):
        self.text = text
        self.filename = filename
        self.parsed = parsed  # False when the text is not valid JSON (no value lookups)
        self.recovered = recovered  # True when comments/trailing commas were blanked out
        self._dups_possible = duplicate_keys
        self._line_starts: list[int] | None = None
        self._objs: dict[int, _ObjIndex] = {}
        self._arrs: dict[int, _ArrIndex] = {}
        self._scan = json.JSONDecoder().scan_once  # C scanner: (text, idx) -> (value, end)
        self._root: int | None = None
        self._containers: dict[tuple, int] = {}  # path -> offset of an object/array value

    # ---- offsets -> line/column
    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        if self._line_starts is None:
            self._line_starts = list(accumulate((len(line) + 1 for line in self.text.split("\n")),
                                                initial=0))
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def span(self, start: int, end: int | None = None) -> Span:
        line, col = self.line_col(start)
        if end is None or end <= start:
            return Span(self.filename, line, col)
        end_line, end_col = self.line_col(end)
        return Span(self.filename, line, col, end_line, end_col)

    # ---- container scanning
    def _ws(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def root_offset(self) -> int | None:
        if not self.parsed:
            return None
        if self._root is None:
            self._root = self._ws(0)
        return self._root

    def _obj(self, start: int) -> _ObjIndex:
        idx = self._objs.get(start)
        if idx is None:
            idx = self._objs[start] = _ObjIndex(start + 1)
        return idx

    def _obj_member(self, start: int, key: str | None) -> tuple[int, int] | None:
        """(key offset, value offset) of ``key`` in the object at ``start`` (None: scan all)."""
        idx = self._objs.get(start)
        if idx is None:
            idx = self._objs[start] = _ObjIndex(start + 1)
        members = idx.members
        if key is not None and (idx.done or not self._dups_possible):
            hit = members.get(key)
            if hit is not None or idx.done:
                return hit
        text = self.text
        scan = self._scan
        member = _MEMBER.match
        colon = _COLON.match
        while not idx.done:
            if idx.pending >= 0:  # skip the value found last time (parse it with the C scanner)
                idx.pos = scan(text, idx.pending)[1]
                idx.pending = -1
            m = member(text, idx.pos)
            if m.group(1) is None:  # '}'
                idx.done = True
                break
            i = m.end() - 1  # the key's opening quote
            k, j = _scanstring(text, i + 1)
            v = colon(text, j).end()
            idx.pending = v
            prev = members.get(k)
            if prev is not None:
                idx.dups.append((k, prev[0], i))
            members[k] = (i, v)  # last one wins, as in the parsed document
            if k == key and not self._dups_possible:
                return members[k]
        return members.get(key) if key is not None else None

    def _arr_element(self, start: int, n: int) -> int | None:
        idx = self._arrs.get(start)
        if idx is None:
            idx = self._arrs[start] = _ArrIndex(start + 1)
        offsets = idx.offsets
        if n < len(offsets):
            return offsets[n]
        text = self.text
        scan = self._scan
        element = _ELEMENT.match
        while not idx.done and len(offsets) <= n:
            if idx.pending >= 0:
                idx.pos = scan(text, idx.pending)[1]
                idx.pending = -1
            m = element(text, idx.pos)
            if m.group(1) is not None:  # ']'
                idx.done = True
                break
            i = m.end()
            offsets.append(i)
            idx.pending = i
        return offsets[n] if n < len(offsets) else None

    def _walk(self, path: JsonPath) -> tuple[int | None, int | None, int]:
        """(value offset, key offset, depth reached) for ``path``; offsets None if absent.

        Offsets of containers already walked through are remembered by path, so locating
        siblings (the common case: many findings in one device list) starts from the parent."""
        start = 0
        off = None
        containers = self._containers
        for n in range(len(path) - 1, 0, -1):
            off = containers.get(path[:n])
            if off is not None:
                start = n
                break
        if off is None:
            off = self.root_offset()
            if off is None:
                return None, None, 0
            start = 0
        key_off = None
        text = self.text
        for depth in range(start, len(path)):
            elem = path[depth]
            c = text[off]
            if isinstance(elem, str) and c == "{":
                hit = self._obj_member(off, elem)
                if hit is None:
                    return None, None, depth
                key_off, off = hit
            elif isinstance(elem, int) and not isinstance(elem, bool) and c == "[":
                nxt = self._arr_element(off, elem) if elem >= 0 else None
                if nxt is None:
                    return None, None, depth
                key_off, off = None, nxt
            else:
                return None, None, depth
            if text[off] in "{[" and depth + 1 < len(path):
                containers[path[:depth + 1]] = off
        return off, key_off, len(path)

    # ---- public lookups
    def value_offset(self, path) -> int | None:
        """Character offset where the value at ``path`` starts, or None."""
        return self._walk(_as_path(path))[0]

    def key_offset(self, path) -> int | None:
        """Offset of the opening quote of the last key of ``path`` (None for array items)."""
        return self._walk(_as_path(path))[1]

    def locate(self, path, *, key: bool = False) -> Span | None:
        """Span of the value at ``path`` (of its key if ``key``); None when it does not exist.

        Scalars and keys get an end position; objects and arrays only a start."""
        p = _as_path(path)
        off, key_off, depth = self._walk(p)
        if off is None:
            return None
        if key and key_off is not None:
            _, end = _scanstring(self.text, key_off + 1)
            return self.span(key_off, end)
        if self.text[off] in "{[":
            return self.span(off)
        _, end = self._scan(self.text, off)
        return self.span(off, end)

    def locate_nearest(self, path, *, key: bool = False) -> Span:
        """Like :meth:`locate` but falls back to the deepest existing ancestor, then to
        line 1 column 1 — always returns a span."""
        p = _as_path(path)
        for n in range(len(p), -1, -1):
            s = self.locate(p[:n], key=key and n == len(p))
            if s is not None:
                return s
        return Span.whole_file(self.filename)

    def object_duplicates(self, path) -> list[tuple[str, int, int]]:
        """Duplicate keys of the object at ``path``: ``(key, first offset, later offset)``."""
        off = self.value_offset(path)
        if off is None or self.text[off] != "{":
            return []
        self._obj_member(off, None)
        return list(self._obj(off).dups)


# --------------------------------------------------------------------------- relaxed syntax

def blank_describe_header(text: str) -> str:
    """``text`` with a ``kubectl describe configmap`` header (``hccl.json:`` over ``----``,
    and any describe lines above it) and the ``BinaryData`` / ``Events:`` lines after the
    document blanked with spaces, so line and column numbers stay those of the file; the
    text unchanged when it starts with JSON or has no such header. Source of the shape:
    kubectl ``describeConfigMap``; real dumps in tests/ecosystem/ranktable/*configmap_dump*."""
    if text.lstrip()[:1] in ("{", "[", ""):
        return text
    head = _DESCRIBE_HEADER.match(text)
    if head is None:
        return text
    spans = [(0, head.end())]
    end = max(text.rfind("}"), text.rfind("]"))
    tail = _DESCRIBE_TAIL.search(text, max(end, head.end()))
    if tail is not None:
        spans.append((tail.start(), len(text)))
    return _blank(text, spans)


def _find_comments(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _COMMENT_LEX.finditer(text) if text[m.start()] == "/"]


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts = []
    last = 0
    for a, b in spans:
        parts.append(text[last:a])
        parts.append(_NOT_NEWLINE.sub(" ", text[a:b]))
        last = b
    parts.append(text[last:])
    return "".join(parts)


def strip_comments_and_trailing_commas(text: str) -> tuple[str, list[int], list[int]]:
    """Blank out ``//`` / ``/* */`` comments and trailing commas (outside strings) with spaces,
    keeping every newline, so offsets, lines and columns stay valid.

    Returns ``(new_text, comment_offsets, trailing_comma_offsets)``."""
    comments = _find_comments(text)
    text1 = _blank(text, comments)
    commas = [m.start() for m in _TRAILING_LEX.finditer(text1) if text1[m.start()] == ","]
    text2 = _blank(text1, [(c, c + 1) for c in commas])
    return text2, [a for a, _ in comments], commas


# --------------------------------------------------------------------------- loading

def _describe_char(c: str) -> str:
    """``c`` as a message names it; a control or other unprintable character escaped
    (`\\x1b`) so that it never reaches the terminal raw."""
    if c == "":
        return "the end of the file"
    if c == "\n" or c == "\r":
        return "the end of the line"
    if c == "\t":
        return "a tab"
    if not c.isprintable():
        return f"the control character U+{ord(c):04X} (`{_escaped(c)}`)"
    return f"`{c}`"


def _escaped(c: str) -> str:
    """``c`` written as a Python/JSON-style escape: \\x1b, \\x7f, \\u2028."""
    return c.encode("unicode_escape").decode("ascii")


def _control_in_string(c: str) -> tuple[str, str]:
    """(message, hint) for the raw control character ``c`` inside a JSON string."""
    if c in "\r\n":
        return ("raw control character (a line break) inside a string",
                "close the string on its line, or escape the break as \\n")
    if c == "\t":
        return "raw control character (a tab) inside a string", "escape it as \\t"
    return (f"raw control character U+{ord(c):04X} (`{_escaped(c)}`) inside a string",
            f"remove it, or escape it as \\u{ord(c):04x}")


def _line_col_of(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# (start(s) of the decoder's message, our message, hint) for errors the text there does not refine
_FIXED_MESSAGES = (
    ("Unterminated string", "this string is never closed",
     "add the closing `\"` (a string cannot span lines)"),
    (("Invalid \\escape", "Invalid \\u"), "invalid escape sequence in a string",
     "a backslash must start one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write \\\\ for a literal backslash"),
)


def _expecting_value(c: str, word: str) -> tuple[str, str | None]:
    """(message, hint) for "Expecting value" at a character ``c`` / identifier ``word``."""
    if c == "":
        return ("the file ends where a value was expected (truncated file?)",
                "check that the file was written completely and that every `{` and `[` is closed")
    if c == "'":
        return "strings must use double quotes, not single quotes", "replace 'value' with \"value\""
    if word in ("True", "False", "None"):
        js = {"True": "true", "False": "false", "None": "null"}[word]
        return (f"`{word}` is Python, not JSON",
                f"write `{js}`; rank tables normally use strings such as \"0\"")
    if word in ("NaN", "Infinity"):
        return f"`{word}` is not allowed in JSON", "write a number or a string"
    if word:
        return (f"unquoted text `{word}` where a value was expected",
                f"strings must be in double quotes: \"{word}\"")
    if c in "]}":
        return (f"a value is missing before {_describe_char(c)}",
                "remove the stray `,` or add the missing value")
    return (f"expected a JSON value (string, number, object, array, true, false or null), found {_describe_char(c)}",
            None)


def _expecting_key(c: str, word: str) -> tuple[str, str | None]:
    """(message, hint) for "Expecting property name enclosed in double quotes"."""
    if c == "":
        return ("the file ends where a key was expected (truncated file?)",
                "check that the file was written completely and that every `{` and `[` is closed")
    if c == "'":
        return "object keys must use double quotes, not single quotes", "replace 'key' with \"key\""
    if word:
        return f"object key `{word}` is not in double quotes", f"write \"{word}\""
    return f"expected a key in double quotes, found {_describe_char(c)}", None


def _expecting_comma(text: str, pos: int, c: str) -> tuple[str, str | None, int]:
    """(message, hint, offset) for "Expecting ',' delimiter": the offset is where the comma
    belongs, right after the previous value, when there is blank space before ``pos``."""
    hint = "add the comma, or close the bracket or string that was left open before it"
    prev = len(text[:pos].rstrip(" \t\r\n"))
    if pos >= len(text.rstrip(" \t\r\n")):      # nothing follows: the file ends early
        return _ends_early(text, prev), ("check that the file was written completely; a "
                                         "cut-off copy misses its last lines"), prev
    if 0 < prev < pos:
        line, col = _line_col_of(text, pos)
        return (f"missing `,` after this value (the next one starts at line {line}, "
                f"column {col})"), hint, prev
    return f"expected `,` or a closing bracket, found {_describe_char(c)}", hint, pos


def _ends_early(text: str, end: int) -> str:
    """The message for a document that stops after a value at ``end`` with brackets still
    open: how many, and where the innermost was opened."""
    stack: list[int] = []
    in_string = escaped = False
    for k, ch in enumerate(text[:end]):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(k)
        elif ch in "]}" and stack:
            stack.pop()
    if not stack:
        return "the file ends after this value, before the document is closed (truncated file?)"
    line, col = _line_col_of(text, stack[-1])
    closing = "".join("}" if text[k] == "{" else "]" for k in reversed(stack))
    return (f"the file ends after this value with {len(stack)} bracket"
            f"{'s' if len(stack) > 1 else ''} still open (the innermost `{text[stack[-1]]}` at "
            f"line {line}, column {col}; `{closing}` would close them): truncated file?")


def _syntax_message(e: json.JSONDecodeError, text: str) -> tuple[str, str | None, int]:
    """(message, hint, offset) for a JSON decode error, in plain words."""
    pos = e.pos
    msg = e.msg
    c = text[pos] if pos < len(text) else ""
    word_m = _WORD.match(text, pos)
    word = word_m.group(0) if word_m else ""
    if msg.startswith("Expecting value"):
        if not text.strip():
            return "the file is empty: a rank table must be a JSON object", \
                "write the rank table as a JSON object `{...}`", 0
        return (*_expecting_value(c, word), pos)
    if msg.startswith("Expecting property name enclosed in double quotes"):
        return (*_expecting_key(c, word), pos)
    if msg.startswith("Expecting ':' delimiter"):
        return f"expected `:` after the key, found {_describe_char(c)}", None, pos
    if msg.startswith("Expecting ',' delimiter"):
        return _expecting_comma(text, pos, c)
    if msg.startswith("Invalid control character") and c:
        return (*_control_in_string(c), pos)
    for start, message, hint in _FIXED_MESSAGES:
        if msg.startswith(start):
            return message, hint, pos
    if msg.startswith("Extra data"):
        return (f"unexpected text after the end of the JSON document: {_describe_char(c)}",
                "a rank table is a single JSON object; look for an extra `}` or a second pasted document", pos)
    return f"invalid JSON: {msg}", None, pos


def _decode(data: bytes, filename: str) -> tuple[str | None, Diagnostic | None]:
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        return None, error(RULE_ENCODING, "the file is UTF-16 encoded; HCCL reads rank tables as UTF-8",
                           Span.whole_file(filename), hint="save the file as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8 IN > OUT`)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        bom = 3
    else:
        bom = 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if b"\0" in data[:8192]:   # NUL bytes and not UTF-8: a program, archive or noise
            return None, error(RULE_ENCODING, "the file is binary (it holds NUL bytes and "
                               "is not UTF-8 text), not a rank table", Span.whole_file(filename),
                               hint="give the rank table's JSON file (hccl.json, "
                                    "ranktable.json) or its ConfigMap YAML")
        before = data[:e.start].decode("utf-8", "replace")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        return None, error(
            RULE_ENCODING,
            f"the file is not valid UTF-8: byte 0x{data[e.start]:02x} at byte offset {e.start + bom}",
            Span(filename, line, col),
            hint="save the file as UTF-8 (non-ASCII text usually comes from a comment or a "
                 "server name typed in another encoding)")
    return text, None


def _nan_offset(text: str) -> int:
    for m in _CONST_LEX.finditer(text):
        if m.group(1):
            return m.start()
    return 0


def _find_paths(doc, targets: dict[int, object]) -> dict[int, JsonPath]:
    """Paths of the objects whose id() is in ``targets`` (only used when duplicates exist)."""
    found: dict[int, JsonPath] = {}
    stack: list[tuple[object, JsonPath]] = [(doc, ())]
    while stack and len(found) < len(targets):
        node, path = stack.pop()
        if isinstance(node, dict):
            if id(node) in targets:
                found[id(node)] = path
            stack.extend((v, path + (k,)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(node))
    return found


_VALUE_AFTER_KEY = re.compile(r'"(?:[^"\\]|\\.)*"\s*:\s*("(?:[^"\\]|\\.)*"|[^,}\s]+)')


def _two_versions(text: str, first: int, later: int) -> str:
    """``: "2.0" first, then "1.0": the table is read as version "1.0"...`` for two
    top-level ``version`` keys (at offsets ``first`` and ``later``) with different values;
    "" when they agree. The version decides which form every other key is checked against."""
    a, b = (_VALUE_AFTER_KEY.match(text, k) for k in (first, later))
    if a is None or b is None or a.group(1) == b.group(1):
        return ""
    return (f": {a.group(1)} first, then {b.group(1)}, so the table is read as version "
            f"{b.group(1)} and its other keys are checked against that form")


def _duplicate_diagnostics(doc, dup_objs: list[dict], smap: SourceMap) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    paths = _find_paths(doc, {id(d): d for d in dup_objs})
    for path in sorted(paths.values(), key=lambda p: smap.value_offset(p) or 0):
        for key, first, later in smap.object_duplicates(path):
            _, end = _scanstring(smap.text, later + 1)
            where = format_path(path)
            out.append(warning(
                RULE_DUPLICATE_KEY,
                f"{format_path(path + (key,))}: duplicate key `{key}` in "
                f"{'the top-level object' if not path else where}; only one value survives "
                f"parsing (nlohmann::json, used by HCCL, and Python keep the last one)"
                + (_two_versions(smap.text, first, later) if not path and key == "version"
                   else ""),
                smap.span(later, end),
                hint=f"keep exactly one `{key}` in this object",
                related=[Related(smap.span(first, _scanstring(smap.text, first + 1)[1]),
                                 f"first `{key}` here")]))
    return out


class _Parser:
    """``json.loads`` with hooks that record the objects with a repeated key and the
    NaN / Infinity constants met and the numbers too large for a float (``1e99999``,
    read as infinity); the lists are cleared at each :meth:`parse`."""

    def __init__(self):
        self.dup_objs: list[dict] = []
        self.bad_constants: list[str] = []
        self.overflows: list[str] = []

    def _pairs(self, pairs):
        d = dict(pairs)
        if len(d) != len(pairs):
            self.dup_objs.append(d)
        return d

    def _constant(self, name):
        self.bad_constants.append(name)
        return None

    def _float(self, literal: str) -> float:
        value = float(literal)
        if value in (_INF, -_INF):
            self.overflows.append(literal)
        return value

    def parse(self, t: str):
        self.dup_objs.clear()
        self.bad_constants.clear()
        self.overflows.clear()
        return json.loads(t, object_pairs_hook=self._pairs, parse_constant=self._constant,
                          parse_float=self._float)


_INF = float("inf")
#: a JSON string (skipped) or a number literal (group 1), for locating an overflowing one
_NUMBER_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"?|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def _overflow(smap: SourceMap, literal: str) -> Diagnostic:
    """RTC600 at the first number ``literal`` (outside strings) that a float cannot hold."""
    off = next((m.start() for m in _NUMBER_LEX.finditer(smap.text) if m.group(1) == literal), 0)
    shown = literal if len(literal) <= 40 else literal[:37] + "..."
    return error(RULE_SYNTAX, f"the number {shown} is too large for a JSON number: readers "
                 "turn it into infinity", smap.span(off, off + len(literal)),
                 hint="write the value you meant (in a rank table, a string such as "
                      "\"2\")")


def _source_text(source, filename: str | None) -> tuple[str, str, Diagnostic | None]:
    """(text, filename for spans, None), or ("", filename, RTC603) when the file cannot be
    read or decoded. A UTF-8 byte order mark is dropped."""
    if isinstance(source, os.PathLike):
        filename = filename or os.fspath(source)
        try:
            source = read_bytes(source)
        except OSError as e:
            return "", filename, error(RULE_ENCODING, f"cannot read the file: {e.strerror or e}",
                                       Span.whole_file(filename))
    filename = filename or "<string>"
    if isinstance(source, (bytes, bytearray)):
        text, diag = _decode(bytes(source), filename)
        return text or "", filename, diag
    return (source[1:] if source.startswith("\ufeff") else source), filename, None


def _unparseable(text: str, filename: str, e: Exception) -> tuple[None, SourceMap, list[Diagnostic]]:
    """RTC600 when the decoder gives up without a position (deep nesting, a huge number)."""
    smap = SourceMap(text, filename, parsed=False)
    if isinstance(e, RecursionError):
        return None, smap, [error(RULE_SYNTAX, "the JSON is nested too deeply to parse",
                                  Span.whole_file(filename))]
    huge = re.search(r"\d{1000,}", text)
    if huge is not None:
        return None, smap, [error(RULE_SYNTAX, f"a number with {len(huge.group(0))} digits "
                                  "is too long to read", smap.span(huge.start()),
                                  hint="rank table numbers are small (ranks, ports, counts)")]
    return None, smap, [error(RULE_SYNTAX, f"invalid JSON: {e}", Span.whole_file(filename))]


def load_json(source: Union[str, bytes, os.PathLike], *, filename: str | None = None,
              recover: bool = True) -> tuple[object | None, SourceMap, list[Diagnostic]]:
    """Parse a JSON document and report syntax problems precisely.

    ``source`` is the JSON text (``str`` or ``bytes``) or a path (``os.PathLike``, e.g.
    :class:`pathlib.Path`; a plain ``str`` is always treated as text). ``filename`` labels the
    spans (default: the path, or ``<string>``).

    Returns ``(document, source_map, diagnostics)``. ``document`` is None when the text cannot
    be parsed. When the only problems are comments (RTC601) and/or trailing commas (RTC602)
    and ``recover`` is true, those errors are reported *and* the document parsed from the
    blanked-out text is returned (``source_map.recovered`` is then True) so later checks can
    still run and point at the right lines. A ``kubectl describe configmap`` dump of the
    table (``hccl.json:`` / ``----`` before the JSON) is read as the JSON it holds
    (:func:`blank_describe_header`).
    """
    text, filename, unreadable = _source_text(source, filename)
    if unreadable is not None:
        return None, SourceMap("", filename, parsed=False), [unreadable]
    text = blank_describe_header(text)
    nul = text.find("\x00")
    if nul >= 0:
        smap = SourceMap(text, filename, parsed=False)
        return None, smap, [error(RULE_ENCODING, "the file contains a NUL character (binary or UTF-16 data?)",
                                  smap.span(nul), hint="save the file as UTF-8 text")]

    parser = _Parser()
    diags: list[Diagnostic] = []
    try:
        doc = parser.parse(text)
        smap = SourceMap(text, filename, duplicate_keys=bool(parser.dup_objs))
    except json.JSONDecodeError as first_error:
        doc, smap, diags = _load_relaxed(text, filename, first_error, parser.parse, recover,
                                         parser.dup_objs)
    except (RecursionError, ValueError) as e:  # ValueError: e.g. an integer with thousands of digits
        return _unparseable(text, filename, e)

    if parser.bad_constants:
        off = _nan_offset(smap.text)
        smap.parsed = False
        diags.append(error(RULE_SYNTAX, f"`{parser.bad_constants[0]}` is not allowed in JSON", smap.span(off),
                           hint="write a number or a string; HCCL's JSON parser rejects NaN and Infinity"))
        return None, smap, diags
    if parser.overflows:
        smap.parsed = False
        return None, smap, diags + [_overflow(smap, parser.overflows[0])]
    if doc is not None and parser.dup_objs:
        diags.extend(_duplicate_diagnostics(doc, parser.dup_objs, smap))
    if doc is not None and _may_hold_surrogates(smap.text):
        diags.extend(_surrogate_diagnostics(doc, smap))
    return doc, smap, diags


def _may_hold_surrogates(text: str) -> bool:
    """True when ``text`` has a surrogate escape, or a raw surrogate (only text given as
    ``str`` can: decoded UTF-8 never holds one)."""
    if _SURROGATE_ESCAPE.search(text):
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _lone_surrogates(doc):
    """(path, is a key, text) of every key and string value that holds a lone surrogate
    (the decoder joins a valid pair into one character, so any surrogate left is lone)."""
    stack: list[tuple[object, JsonPath]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if _SURROGATE.search(k):
                    yield path + (k,), True, k
                stack.append((v, path + (k,)))
        elif isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(node))
        elif isinstance(node, str) and _SURROGATE.search(node):
            yield path, False, node


def _surrogate_diagnostics(doc, smap: SourceMap) -> list[Diagnostic]:
    """RTC603 at each string (or key) with a lone surrogate escape, in file order."""
    found = []
    for path, is_key, text in _lone_surrogates(doc):
        span = smap.locate_nearest(path, key=is_key)
        found.append(((span.line, span.column), path, is_key, text, span))
    found.sort(key=lambda f: f[0])
    out = []
    for n, (_, path, is_key, text, span) in enumerate(found[:_MAX_SURROGATE_REPORTS]):
        code = ord(_SURROGATE.search(text).group(0))
        where = format_path(path).encode("utf-8", "backslashreplace").decode("utf-8")
        what = f"{where}: the key" if is_key else f"{where or 'the document'}: the string"
        more = len(found) - _MAX_SURROGATE_REPORTS
        tail = f" (and {more} more strings like it)" if more > 0 and n == _MAX_SURROGATE_REPORTS - 1 else ""
        out.append(error(
            RULE_ENCODING,
            f"{what} holds a lone surrogate escape `\\u{code:04x}`, which is not valid "
            f"Unicode and has no UTF-8 form{tail}",
            span,
            hint="write the character itself, or both halves of its surrogate pair "
                 "(a high \\ud800-\\udbff escape followed by a low \\udc00-\\udfff one); "
                 "HCCL's JSON parser rejects an unpaired one"))
    return out


def _load_relaxed(text, filename, first_error, parse, recover, dup_objs):
    """Error path: explain comments / trailing commas / other syntax errors."""
    stripped, comments, commas = strip_comments_and_trailing_commas(text)
    diags: list[Diagnostic] = []
    if not comments and not commas:
        smap = SourceMap(text, filename, parsed=False)
        message, hint, pos = _syntax_message(first_error, text)
        diags.append(error(RULE_SYNTAX, message, smap.span(pos), hint=hint))
        return None, smap, diags

    second_error = None
    doc = None
    try:
        doc = parse(stripped)
    except json.JSONDecodeError as e:
        second_error = e
    except (ValueError, RecursionError) as e:  # pragma: no cover - exotic
        second_error = json.JSONDecodeError(str(e), stripped, 0)
    limit = second_error.pos if second_error is not None else len(text)
    comments = [c for c in comments if c < limit]
    commas = [c for c in commas if c < limit]
    smap = SourceMap(stripped, filename, parsed=second_error is None,
                     duplicate_keys=bool(dup_objs), recovered=second_error is None)
    if comments:
        first = comments[0]
        kind = "//" if text.startswith("//", first) else "/* */"
        more = f" (and {len(comments) - 1} more)" if len(comments) > 1 else ""
        diags.append(error(
            RULE_COMMENT,
            f"JSON does not allow comments: `{kind}` comment here{more}",
            smap.span(first, first + 2),
            hint="delete every comment: HCCL's JSON parser (nlohmann::json) rejects them; the `//` "
                 "notes in the HCCL documentation examples are explanations only"))
    if commas:
        first = commas[0]
        more = f" (and {len(commas) - 1} more)" if len(commas) > 1 else ""
        diags.append(error(
            RULE_TRAILING_COMMA,
            f"trailing comma before a closing bracket{more}",
            smap.span(first, first + 1),
            hint="remove the `,` after the last element of the object or array"))
    if second_error is not None:
        message, hint, pos = _syntax_message(second_error, stripped)
        diags.append(error(RULE_SYNTAX, message, smap.span(pos), hint=hint))
        return None, smap, diags
    if not recover:
        smap.parsed = False
        smap.recovered = False
        return None, smap, diags
    return doc, smap, diags

#: The rules this module reports (collected by rtc.catalogue).
RULES = (RULE_SYNTAX, RULE_COMMENT, RULE_TRAILING_COMMA, RULE_ENCODING, RULE_DUPLICATE_KEY)
