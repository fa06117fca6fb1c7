"""Shell conditions whose value is known without running anything: ``[ ... ]`` / ``test`` /
``[[ ... ]]`` comparisons of words the script (or the pod) sets, and ``case WORD in
PATTERN)`` branches, so that the shell reader (:mod:`rtc.scripts.shell`) follows only the
branch a pod takes (``if [ "$ORD" = 0 ]; then <head>; else <worker>; fi`` on a
StatefulSet pod whose ordinal is known).

Semantics follow bash's manual ("Bash Conditional Expressions", "Conditional
Constructs", test builtin) and bash's ``test.c`` (``posixtest``: the meaning of a ``[``
command is fixed by its number of arguments, 0 to 4). Every function returns ``None``
where the value is not known (a word left unexpanded, an operator not modelled: ``-f``,
``=~``, ``-a`` / ``-o``, ``<``), and the reader then reads every branch, as before.

``[[`` is not implemented by bashlex, so :func:`mark_double_brackets` rewrites the words
``[[`` / ``]]`` at a command's start and end into ``[@`` / ``@]`` (same length: offsets and
columns kept), plain words bashlex reads; :func:`test_value` reads those as ``[[``.
"""

from __future__ import annotations

import fnmatch
import re

#: A ``[[`` where a command starts (line start, after ``;``, ``&&``, ``||``, ``!``, ``(``,
#: ``{`` or a keyword), followed by a blank.
_DBL_OPEN = re.compile(r"(?:^|(?<=[;&|({!\s]))\[\[(?=[ \t])", re.M)
#: The ``]]`` that closes it: after a blank, before a blank, ``;``, ``&``, ``|``, ``)`` or
#: the line's end.
_DBL_CLOSE = re.compile(r"(?<=[ \t])\]\](?=[ \t;&|)]|$)", re.M)
#: The words the reader sees for ``[[`` and ``]]`` once marked.
DBL_OPEN, DBL_CLOSE = "[@", "@]"

_INT = re.compile(r"[ \t]*[-+]?\d+[ \t]*\Z")
_ARITH = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-gt": int.__gt__,
          "-le": int.__le__, "-ge": int.__ge__}


def mark_double_brackets(text: str) -> str:
    """``text`` with each ``[[ ... ]]`` test (open and close on one line) written
    ``[@ ... @]``, the same length; other text unchanged."""
    if "[[" not in text:
        return text
    out, pos = [], 0
    for m in _DBL_OPEN.finditer(text):
        if m.start() < pos:
            continue
        eol = text.find("\n", m.end())
        eol = len(text) if eol < 0 else eol
        close = _DBL_CLOSE.search(text, m.end(), eol)
        if close is None:
            continue
        out += [text[pos:m.start()], DBL_OPEN, text[m.end():close.start()], DBL_CLOSE]
        pos = close.end()
    out.append(text[pos:])
    return "".join(out)


def test_value(words: list[tuple[str, bool, bool]]) -> bool | None:
    """The exit status (True: 0) of the simple command ``words`` when it is a test whose
    value is known: each word is (text after expansion, known: no unset variable or
    ``$( )`` left, quoted: its source had quotes or ``\\``). ``[ ... ]`` / ``test ...``
    (an unquoted word that expands to nothing or to blanks is split by bash: unknown
    here), ``[[ ... ]]`` (marked ``[@ ... @]``: the right side of ``==`` / ``!=`` is a
    glob unless quoted), ``true`` / ``:`` / ``false``. None for any other command."""
    if not words:
        return None
    first, last = words[0][0], words[-1][0]
    if first in ("true", ":") and len(words) == 1:
        return True
    if first == "false" and len(words) == 1:
        return False
    if first == "[" and last == "]":
        args, double = words[1:-1], False
    elif first == "test":
        args, double = words[1:], False
    elif first == DBL_OPEN and last == DBL_CLOSE:
        args, double = words[1:-1], True
    else:
        return None
    if not all(known for _, known, _ in args):
        return None
    if not double and any(not q and (not t or t != t.strip() or " " in t) for t, _, q in args):
        return None
    return _expression([(t, q) for t, _, q in args], double)


def _expression(args: list[tuple[str, bool]], double: bool) -> bool | None:
    """``test``'s meaning by argument count (bash test.c ``posixtest``); ``[[`` is read the
    same way for the forms it shares (one operator, an optional leading ``!``)."""
    n = len(args)
    if n == 0:
        return False if not double else None
    if args[0][0] == "!" and not args[0][1] and n in (2, 4):
        inner = _expression(args[1:], double)
        return None if inner is None else not inner
    if n == 1:
        return args[0][0] != ""
    if n == 2:
        op, value = args[0][0], args[1][0]
        if op == "-z":
            return value == ""
        if op == "-n":
            return value != ""
        return None
    if n == 3:
        return _binary(args[0][0], args[1][0], args[2], double)
    return None


def _binary(left: str, op: str, right: tuple[str, bool], double: bool) -> bool | None:
    """``left OP right`` for the string and integer comparisons."""
    text, quoted = right
    if op in ("=", "==", "!="):
        if double and not quoted:
            same = glob_match(left, text)
        else:
            same = left == text
        return same if op != "!=" else not same
    if op in _ARITH:
        if not (_INT.match(left) and _INT.match(text)):
            return None                  # `[` fails on a non-number; `[[` does arithmetic
        return _ARITH[op](int(left), int(text))
    return None


def glob_match(text: str, pattern: str) -> bool:
    """Whether ``text`` matches the shell glob ``pattern`` (``*``, ``?``, ``[...]``, with
    ``[!...]`` and ``[^...]`` negated) as a whole, as ``case`` and ``[[ == ]]`` match."""
    return fnmatch.fnmatchcase(text, re.sub(r"\[\^", "[!", pattern))


#: A ``case`` block (the same text :func:`rtc.scripts.shell._blank` blanks) and its first
#: line's word.
CASE_BLOCK = re.compile(r"^[ \t]*case\b.*?^[ \t]*esac\b[^\n]*", re.S | re.M)
_CASE_HEAD = re.compile(r"[ \t]*case[ \t]+(\S+)[ \t]+in\b")
#: A branch's ``PATTERN)`` at a line's start (as ``_blank`` reads them).
CASE_PATTERN = re.compile(r"^[ \t]*([^\s()]+)\)", re.M)


class CaseBlock:
    """One ``case WORD in`` block of a script: ``start`` / ``end`` offsets, the ``word``
    as written, and its branches as (patterns as written, start offset, end offset)."""

    def __init__(self, start: int, end: int, word: str | None, branches: list):
        self.start, self.end, self.word, self.branches = start, end, word, branches

    def branch_at(self, offset: int) -> int | None:
        """The index of the branch holding ``offset``, or None (the ``case`` line)."""
        for k, (_, a, b) in enumerate(self.branches):
            if a <= offset < b:
                return k
        return None


def case_blocks(text: str) -> list[CaseBlock]:
    """The ``case`` blocks of ``text`` (offsets into it), one level deep."""
    out = []
    for m in CASE_BLOCK.finditer(text):
        head = _CASE_HEAD.match(m.group(0))
        first_nl = m.group(0).find("\n")
        body_start = m.start() + (first_nl + 1 if first_nl >= 0 else len(m.group(0)))
        starts = [(p.start(), p.group(1)) for p in CASE_PATTERN.finditer(text, body_start,
                                                                          m.end())]
        branches = []
        for k, (a, pats) in enumerate(starts):
            b = starts[k + 1][0] if k + 1 < len(starts) else m.end()
            branches.append((pats.split("|"), a, b))
        out.append(CaseBlock(m.start(), m.end(), head.group(1) if head else None, branches))
    return out


def case_choice(word: tuple[str, bool], patterns: list[list[tuple[str, bool, bool]]]):
    """The index of the branch ``case`` runs for ``word`` (text, known), -1 when no pattern
    matches, None when not known (the word or a pattern before the match is unknown).
    Each pattern is (text, known, quoted): a quoted pattern matches literally."""
    text, known = word
    if not known:
        return None
    for k, alternatives in enumerate(patterns):
        for pat, pknown, quoted in alternatives:
            if not pknown:
                return None
            if (text == pat) if quoted else glob_match(text, pat):
                return k
    return -1
