"""Read a shell script as shell, without running anything: the commands it would run, with
every word expanded from the variables the script itself sets, and every variable with the
place (file:line:col) that set it.

Why bashlex (with shlex as the fallback)
    bashlex is a port of bash's own parser: it knows quoting, ``\\`` line continuations,
    comments, here-documents, ``&&`` / ``;`` / ``&`` lists, pipelines, ``if`` / ``for`` /
    functions, prefix assignments (``A=1 cmd``) and which words contain parameter
    expansions (``$X`` in single quotes is not one), and it gives the source offset of every
    word, which is what a diagnostic at ``script:line:col`` needs. ``shlex`` knows quoting
    only: continuations, ``&&``, ``;``, redirections and where a word starts would all have
    to be re-implemented. bashlex does not implement a few constructs: ``case`` blocks are
    read branch by branch and ``$(( ))`` is blanked before it reads them. bashlex's yacc
    parser costs about 0.5 ms a line, so logical lines made of plain words (most of a launch
    script) are split by one regular expression instead, and bashlex reads the others, one
    logical line at a time, or the whole text when a construct spans lines; a line it still
    cannot read is split with ``shlex`` (columns of the line's start). What cannot be read at
    all (an unterminated quote) is a :class:`ShellProblem`, never an exception.

What is evaluated
    ``export A=b`` / ``export A`` / ``declare -x`` / ``readonly``, plain assignments
    ``A=b`` (a shell variable, exported when ``set -a`` is on or it was exported before),
    ``unset``, ``set -a`` / ``set +a``, ``source FILE`` / ``. FILE`` (relative to the
    script's folder, read with the same rules; a file that cannot be read is a problem),
    and ``$A`` / ``${A}`` / ``${A:-default}`` / ``${A-default}`` / ``${A##*-}`` (``#``,
    ``##``, ``%``, ``%%``) in every word. Variables the script does not set stay as written
    (``$1``, ``$(hostname -I)``) and the word says so (:attr:`Word.unresolved`). An ``if`` /
    ``case`` / ``&&`` / ``||`` whose condition is known (:mod:`rtc.scripts.conditions`)
    is read along the branch it takes; otherwise every branch is read, in order.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import shlex
from dataclasses import dataclass, field

from rtc.diagnostics import Span
from rtc.scripts.conditions import (CASE_BLOCK, case_blocks, case_choice, mark_double_brackets,
                                    test_value)
from rtc.textfmt import clipped

#: The longest value (in characters) a variable expansion may give one word: beyond it
#: the rest of the word's variables stay as written and unknown (``A=x`` then 30 lines of
#: ``A="$A$A"`` would otherwise build a 1 GiB string), with one RTC701 note per variable.
MAX_VALUE = 1 << 20

#: The most words and characters one command may have after expansion and word splitting
#: (``A`` doubled to 1 MiB of ``a b c ...`` and written 200 times unquoted would make 100
#: million words, about 10 GB): past either, the command's remaining words stay as written
#: and unknown, with one RTC701 note per command.
MAX_COMMAND_WORDS = 100_000
MAX_COMMAND_CHARS = 8 << 20

#: The most characters the values of the variables set at one time may hold together
#: (2,000 ``export Vi=$A`` of 512 KB each would hold 1 GB): a variable whose value would
#: pass it is not stored (read as unknown), with one RTC701 note per script.
MAX_STORED_CHARS = 64 << 20

#: How deep ``source`` may nest (a file sourcing itself is stopped by the cycle check).
MAX_SOURCE_DEPTH = 8

_PARAM = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=]|##?|%%?)([^}]*))?\}|"
                    r"([A-Za-z_][A-Za-z0-9_]*))")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: ``${A[@]}`` / ``${A[*]}`` / ``${A[0]}`` / ``${#A[@]}`` (groups: ``#``, name, index), then
#: the forms of :data:`_PARAM` (its groups 4 to 7).
_REF = re.compile(r"\$\{(#?)([A-Za-z_][A-Za-z0-9_]*)\[([^\]}]*)\]\}|" + _PARAM.pattern)
#: A double-quoted part that is ``"${A[@]}"``, text around it allowed: one word per element.
_QUOTED_ALL = re.compile(r'"([^"$`\\]*)\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}([^"$`\\]*)"\Z')
#: The start of an indexed array assignment ``NAME=(`` / ``NAME+=(`` (``declare -a`` too).
_ARRAY_START = re.compile(r"^[ \t]*(?:(?:declare|typeset|local|readonly)(?:[ \t]+-[A-Za-z]+)*"
                          r"[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)(\+?)=\(", re.M)
#: ``$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`` and the like: the script's own folder.
_OWN_DIR = re.compile(r'"?\$\((?:cd\s+)?"?\$\(dirname\s+"?(?:\$\{BASH_SOURCE(?:\[0\])?\}|\$0|'
                      r'\$\(readlink -f "?\$0"?\))"?\)"?(?:\s*&&\s*pwd(?:\s+-P)?)?\)"?')
#: The variable the script's own folder is read into (see :data:`_OWN_DIR`).
OWN_DIR_VAR = "_RTC_SCRIPT_DIR"

#: The parts of a word's source text, for word splitting (:meth:`_Reader.split_fields`):
#: '...', "...", a \\-escape, an unquoted $NAME / ${...}, other characters.
_SEGMENT = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*"|\\.|\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)|[^'"\\$]+|\$""", re.S)
#: bash's default IFS: the characters an unquoted expansion is split at.
_IFS = " \t\n"
#: Builtins whose NAME=value arguments bash does not split.
_DECLARE = frozenset({"export", "declare", "typeset", "readonly", "local"})

#: Constructs bashlex does not implement: ``case ... esac`` blocks
#: (:data:`rtc.scripts.conditions.CASE_BLOCK`) and ``$(( ))``.
_ARITH = re.compile(r"\$\(\((?:[^()]|\([^()]*\))*\)\)")
#: The node kinds of an ``if`` / ``for`` / ``while`` that hold commands.
_WALKED = ("list", "command", "compound", "pipeline", "if", "for", "while", "until")
#: Shell keywords that may stand alone on a line read by the line-by-line fallback.
_KEYWORDS = frozenset({"then", "else", "fi", "do", "done", "esac", ";;", "{", "}", "elif",
                       "if", "while", "until", "for", "case", "in"})


@dataclass(frozen=True)
class Word:
    """One word of a command after expansion: ``text`` (what the program receives), the
    ``span`` of the word in its file, and the variables it uses that the script never set
    (``unresolved``: the text keeps them as written)."""

    text: str
    span: Span
    unresolved: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    """A variable the script set: name, value (expanded), where the assignment is, and
    whether it is exported to the processes the script starts."""

    name: str
    value: str
    span: Span
    exported: bool
    unresolved: tuple[str, ...] = ()
    #: The elements of an indexed array (``A=( x y )``: ``("x", "y")``; ``value`` is
    #: element 0, what ``$A`` gives), None for a plain variable.
    items: tuple[str, ...] | None = None


@dataclass
class Command:
    """A simple command: its words (expanded), its prefix assignments (``A=1 cmd``: in
    the environment of that command only), where it starts, the environment exported at
    that point (``name -> Setting``), and whether it runs in the background (``&``)."""

    words: list[Word]
    span: Span
    env: dict
    prefix: list[Setting] = field(default_factory=list)
    background: bool = False

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass(frozen=True)
class ShellProblem:
    """Something of the script that could not be read (``kind``: ``syntax``, ``binary``,
    ``heredoc``, ``source``), with where and why."""

    kind: str
    message: str
    span: Span


@dataclass
class ShellRun:
    """What reading one script gave: the commands in order, every variable the script set
    (the last value of each name), and the problems met. ``files`` maps each file read
    (the script and what it sourced) to its text."""

    commands: list[Command] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    problems: list[ShellProblem] = field(default_factory=list)
    files: dict = field(default_factory=dict)


class _Lines:
    """Offset -> (line, column) for one file's text (1-based)."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, offset) - 1
        return k + 1, offset - self.starts[k] + 1


def decode_script(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) for a script's bytes (UTF-8, invalid bytes replaced, a BOM dropped), or
    (None, why) when it is not a text file (NUL bytes)."""
    if b"\x00" in data[:65536]:
        return None, "is a binary file (it holds NUL bytes), not a shell script"
    text = data.decode("utf-8", errors="replace")
    return (text[1:] if text.startswith("\ufeff") else text), None


def _trim(value: str, op: str, pattern: str) -> str:
    """bash's ``${VAR#pat}`` / ``##`` (shortest / longest prefix matching the glob ``pat``
    removed) and ``%`` / ``%%`` (suffix) of ``value``: ``${HOSTNAME##*-}`` is the text after
    the last ``-`` (a StatefulSet pod's ordinal)."""
    import fnmatch

    cuts = range(len(value) + 1)
    if op[0] == "#":
        for k in (reversed(cuts) if op == "##" else cuts):
            if fnmatch.fnmatchcase(value[:k], pattern):
                return value[k:]
        return value
    for k in (cuts if op == "%%" else reversed(cuts)):
        if fnmatch.fnmatchcase(value[k:], pattern):
            return value[:k]
    return value


class _Reader:
    """Evaluates one script and the files it sources (see the module docstring)."""

    def __init__(self, loader, run: ShellRun):
        self.loader = loader          # path -> (bytes | None, why | None)
        self.run = run
        self.vars: dict[str, Setting] = {}
        self.allexport = False
        self.stack: list[str] = []
        self.functions: dict[str, bool] = {}     # name -> runs its arguments ("$@")
        self.texts: dict[str, str] = {}          # label -> the text its offsets refer to
        self.too_long: set[str] = set()          # variables noted past MAX_VALUE
        self.stored = 0                          # characters of the values in self.vars
        self.store_noted = False                 # MAX_STORED_CHARS noted once
        self.cases: dict[str, list] = {}         # label -> its case blocks
        self.case_choice: dict = {}              # (label, offset) -> branch taken

    # -- expansion ---------------------------------------------------------------------
    def expand(self, text: str, expandable: bool,
               span: Span | None = None) -> tuple[str, tuple[str, ...]]:
        """``text`` with the variables the script set expanded, and the names left as
        written (unset, or past :data:`MAX_VALUE` characters: noted once at ``span``)."""
        if not expandable or "$" not in text:
            return text, ()
        missing: list[str] = []
        size = [0]

        def over(name: str, value: str) -> bool:
            """Whether ``value`` takes the word past MAX_VALUE (then ``name`` is noted)."""
            size[0] += len(value)
            if size[0] <= MAX_VALUE:
                return False
            self._too_long(name, span)
            missing.append(name)
            return True

        def sub(m: re.Match) -> str:
            if m.group(2):
                got = self._element(m.group(1), m.group(2), m.group(3))
                if got is None:
                    missing.append(m.group(2))
                    return m.group(0)
                return m.group(0) if over(m.group(2), got) else got
            name, op, arg = m.group(4) or m.group(7), m.group(5), m.group(6)
            got = self.vars.get(name)
            if op and op[0] in "#%":
                if got is not None:
                    return _trim(got.value, op, arg)
                missing.append(name)
                return m.group(0)
            if got is not None and got.unresolved and ("$(" in got.value or "`" in got.value):
                # set from a command's output: unknown, and kept as the one word `$NAME`
                # (not the command's text, which word splitting would cut at its blanks)
                missing.append(name)
                return m.group(0)
            if got is not None and (got.value or not op or op[0] != ":"):
                if over(name, got.value):
                    return m.group(0)
                missing.extend(got.unresolved)      # what its value left unknown
                return got.value
            if op:
                return arg
            missing.append(name)
            return m.group(0)

        out = _REF.sub(sub, text)
        if "$(" in out or "`" in out or re.search(r"\$[0-9@*#?]", out):
            missing.append("$(...)" if "$(" in out or "`" in out else "$N")
        return out, tuple(missing)

    def _element(self, count: str, name: str, index: str) -> str | None:
        """What ``${NAME[index]}`` (``count`` ``#``: ``${#NAME[index]}``) gives: ``@`` and
        ``*`` all elements joined by spaces (their number with ``#``), an integer (or a
        variable holding one; negative from the end) that element. A plain variable is an
        array of one element (bash). None when it is not known."""
        got = self.vars.get(name)
        if got is None:
            return None
        items = got.items if got.items is not None else (got.value,)
        if index in ("@", "*"):
            return str(len(items)) if count else " ".join(items)
        ref = self.vars.get(index.strip().lstrip("$").strip("{}"))
        k = (ref.value if ref is not None else index).strip()
        if not re.fullmatch(r"-?[0-9]+", k):
            return None
        k = int(k)
        if k >= len(items) or k < -len(items):
            return "0" if count else ""
        return str(len(items[k])) if count else items[k]

    def split_fields(self, raw: str, word: str) -> list[str] | None:
        """The fields bash makes of the word written ``raw`` (its source text; ``word``
        is bashlex's reading of it, quotes removed) when an unquoted ``$VAR`` / ``${VAR}``
        of it has a known value holding blanks (split at spaces, tabs and newlines: the
        default IFS) or is empty (an unquoted empty expansion alone is no word): bash's
        word splitting (bash manual, "Word Splitting"), so that ``ARGS="--nnodes 2 ..."``;
        ``torchrun $ARGS`` gives torchrun its flags one word each; a value holding an
        unknown ``$NAME`` (``ARGS="--data-parallel-address $HEAD_IP ..."`` after
        ``HEAD_IP=$(...)``) is split too, the unknown name staying one word. None when
        nothing is split (``"$VAR"``, a value without blanks, an unknown variable,
        ``$( )``, a script that sets IFS): the word stays one."""
        if "IFS" in self.vars or "$(" in raw or "`" in raw:
            return None
        segments = _SEGMENT.findall(raw)
        try:
            if "".join(segments) != raw or _unquote(raw)[0] != word:
                return None                   # not this word's source text, or odd quoting
        except (IndexError, ValueError):
            return None
        fields: list[str] = []
        cur: str | None = None
        split = False
        for seg in segments:
            if seg[0] == "$" and len(seg) > 1:
                value, missing = self.expand(seg, True)
                if missing and ("$(" in value or "`" in value or value == seg):
                    cur = (cur or "") + seg
                    continue
                split |= not value or value != value.strip() or any(c in value for c in _IFS)
                parts = value.split()
                if value[:1] in _IFS and cur is not None:
                    fields.append(cur)
                    cur = None
                for k, piece in enumerate(parts):
                    if k:
                        fields.append(cur)
                        cur = None
                    cur = (cur or "") + piece
                if value[-1:] in _IFS and cur is not None:
                    fields.append(cur)
                    cur = None
            elif seg[0] == '"' and (array := self._items(seg)) is not None:
                split = True
                before, items, after = array
                if not items:
                    cur = cur if not (before or after) else (cur or "") + before + after
                    continue
                items = [before + items[0]] + items[1:]
                items[-1] += after
                cur = (cur or "") + items[0]
                for item in items[1:]:
                    fields.append(cur)
                    cur = item
            else:
                text = self.expand(*_unquote(seg))[0] if seg[0] != "'" else seg[1:-1]
                cur = (cur or "") + text
        if cur is not None:
            fields.append(cur)
        return fields if split else None

    def _items(self, seg: str):
        """(text before, elements, text after) of the double-quoted part ``seg`` that is
        ``"...${A[@]}..."`` where ``A`` is an array the script set, else None."""
        m = _QUOTED_ALL.match(seg)
        got = self.vars.get(m.group(2)) if m else None
        if got is None or got.items is None:
            return None
        return m.group(1), list(got.items), m.group(3)

    def _too_long(self, name: str, span: Span | None) -> None:
        """One RTC701 note per variable whose expansion passed :data:`MAX_VALUE`."""
        if name in self.too_long or span is None:
            return
        self.too_long.add(name)
        self.run.problems.append(ShellProblem(
            "value", f"${name} is not expanded here: its value would make the word longer "
            f"than {MAX_VALUE >> 20} MiB (each assignment of {name} that uses ${name} twice "
            "doubles it); rtc reads "
            f"${name} as unknown where it would pass that", span))

    # -- reading -----------------------------------------------------------------------
    def read(self, label: str, text: str) -> None:
        self.run.files.setdefault(label, text)
        self.stack.append(label)
        own = self.vars.get(OWN_DIR_VAR)
        # What `$(cd "$(dirname "$0")" && pwd)` prints: an absolute path (see _source).
        self.vars[OWN_DIR_VAR] = Setting(OWN_DIR_VAR, os.path.abspath(os.path.dirname(label)),
                                         Span(label, 1, 1), False)
        try:
            text = _OWN_DIR.sub(lambda m: f"${OWN_DIR_VAR}".ljust(len(m.group(0))), text)
            self.texts[label] = text
            self.cases[label] = case_blocks(text) if "case" in text else []
            self.case_choice = {k: v for k, v in self.case_choice.items() if k[0] != label}
            for node, lines, base in _parse(text, label, self.run.problems):
                self._node(node, label, lines, base)
        finally:
            self.stack.pop()
            if own is not None:
                self.vars[OWN_DIR_VAR] = own

    def _span(self, label: str, lines: _Lines, base: int, pos: tuple[int, int]) -> Span:
        line, col = lines.at(base + pos[0])
        eline, ecol = lines.at(base + pos[1])
        return Span(label, line, col, eline, ecol)

    def _node(self, node, label: str, lines: _Lines, base: int, background: bool = False):
        """Read one bashlex node; returns its exit status when known (True: 0), for
        ``if`` / ``&&`` / ``||`` (see :mod:`rtc.scripts.conditions`), else None."""
        kind = node.kind
        if self._case_skips(label, base + node.pos[0]):
            return None
        if kind == "command":
            value = self._test(node, label, base)
            self._command(node, label, lines, base, background)
            return value
        if kind == "list":
            return self._list(node, label, lines, base)
        if kind == "pipeline":
            parts = [p for p in node.parts if p.kind not in ("pipe", "reservedword")]
            value = None
            for part in parts:
                value = self._node(part, label, lines, base, background)
            negate = any(p.kind == "reservedword" and p.word == "!" for p in node.parts)
            value = value if len(parts) == 1 else None
            return (not value) if negate and value is not None else value
        if kind == "compound":
            value = None
            for part in node.list:
                if part.kind != "reservedword":
                    value = self._node(part, label, lines, base, background)
            return value
        if kind == "arrayassign":
            self._array(node, label, lines, base)
        elif kind == "function":
            self._function(node)
        elif kind == "if":
            self._if(node, label, lines, base, background)
        elif kind in ("for", "while", "until"):
            for part in node.parts:
                if part.kind in _WALKED:
                    self._node(part, label, lines, base, background)
        return None

    def _list(self, node, label: str, lines: _Lines, base: int):
        """A ``;`` / ``&`` / ``&&`` / ``||`` list: a part after ``&&`` (``||``) is skipped
        when the status before it is known false (true), as bash does; unknown: read."""
        parts = node.parts
        status, op = None, ";"
        for k, part in enumerate(parts):
            if part.kind == "operator":
                op = part.op
                continue
            runs = {"&&": status, "||": None if status is None else not status}.get(op, True)
            if runs is False:
                continue
            bg = k + 1 < len(parts) and parts[k + 1].kind == "operator" and \
                parts[k + 1].op == "&"
            value = self._node(part, label, lines, base, bg)
            if op == "&&" and status is True and value is None:
                value = True        # `[ known ] && a || b`: the idiom of an if/else
            elif op == "&&" and status is None:
                value = False if value is False else None   # unknown && x
            elif op == "||" and status is None:
                value = True if value is True else None     # unknown || x
            status = value
        return status

    def _if(self, node, label: str, lines: _Lines, base: int, background: bool) -> None:
        """``if`` / ``elif`` / ``else``: every condition met is read (it runs); a body is
        read unless its condition is known false, and nothing after a body whose
        condition is known true is read (unknown conditions: every branch, in order)."""
        clauses: list[list] = []              # [conditions, body]; conditions None: else
        slot = 0
        for part in node.parts:
            if part.kind == "reservedword":
                if part.word in ("if", "elif"):
                    clauses.append([[], []])
                    slot = 0
                elif part.word == "then":
                    slot = 1
                elif part.word == "else":
                    clauses.append([None, []])
                    slot = 1
            elif part.kind in _WALKED and clauses:
                clauses[-1][slot].append(part)
        for cond, body in clauses:
            value = True
            if cond is not None:
                for part in cond:
                    value = self._node(part, label, lines, base, background)
            if value is False:
                continue
            for part in body:
                self._node(part, label, lines, base, background)
            if value is True:
                return

    def _test(self, node, label: str, base: int) -> bool | None:
        """The status of a command node that is a known test (``[ "$ORD" = 0 ]``)."""
        parts = [p for p in node.parts if p.kind == "word"]
        if not parts or len(parts) != len([p for p in node.parts if p.kind != "redirect"]):
            return None
        if parts[0].word not in ("[", "test", "[@", "true", "false", ":"):
            return None
        text = self.texts.get(label, "")
        words = []
        for p in parts:
            value, missing = self.expand(p.word, _has_params(p))
            raw = text[base + p.pos[0]:base + p.pos[1]]
            words.append((value, _known(value, missing), any(c in raw for c in "'\"\\")))
        return test_value(words)

    def _case_skips(self, label: str, offset: int) -> bool:
        """Whether ``offset`` lies in a ``case`` branch that the case's word (known when
        the reader first reaches the block) does not take."""
        for block in self.cases.get(label, ()):
            if not block.start <= offset < block.end:
                continue
            k = block.branch_at(offset)
            if k is None:
                return False
            key = (label, block.start)
            if key not in self.case_choice:
                self.case_choice[key] = self._case_choice(block)
            choice = self.case_choice[key]
            return choice is not None and choice != k
        return False

    def _case_choice(self, block) -> int | None:
        """The branch ``block`` takes with the variables known now (see
        :func:`rtc.scripts.conditions.case_choice`)."""
        if block.word is None:
            return None
        try:
            word, missing = self.expand(*_unquote(block.word))
            patterns = []
            for alternatives, _, _ in block.branches:
                pats = []
                for raw in alternatives:
                    text, pmissing = self.expand(*_unquote(raw))
                    pats.append((text, _known(text, pmissing), any(c in raw for c in "'\"\\")))
                patterns.append(pats)
        except (IndexError, ValueError):         # odd quoting: every branch is read
            return None
        return case_choice((word, _known(word, missing)), patterns)

    def _function(self, node) -> None:
        """Record a function; one whose body runs its arguments (``run() { echo "$@";
        "$@"; }``) is a wrapper: ``run vllm serve ...`` is read as ``vllm serve ...``."""
        if hasattr(node, "passthrough"):            # read by _fast_line
            self.functions[node.word] = node.passthrough
            return
        name = node.parts[0].word if node.parts and node.parts[0].kind == "word" else None
        if not name:
            return
        found: list = []

        def walk(n):
            if n.kind == "command":
                words = [p for p in n.parts if p.kind == "word"]
                if words and words[0].word in ('$@', '"$@"'):
                    found.append(n)
            for child in list(getattr(n, "parts", None) or []) + list(getattr(n, "list", None) or []):
                if hasattr(child, "kind"):
                    walk(child)
        walk(node)
        self.functions[name] = bool(found)

    def _command(self, node, label: str, lines: _Lines, base: int, background: bool):
        prefix: list[Setting] = []
        words: list[Word] = []
        budget = [MAX_COMMAND_WORDS, MAX_COMMAND_CHARS]     # words, characters left
        for part in node.parts:
            if part.kind == "assignment" and not words:
                name, _, value = part.word.partition("=")
                at = self._span(label, lines, base, part.pos)
                text, missing = self.expand(value, _has_params(part), at)
                prefix.append(Setting(name, text, at, False, missing))
            elif part.kind == "word":
                words += self._word(part, words, budget, label, lines, base)
            elif part.kind == "redirect" and getattr(part, "heredoc", None) is not None:
                self.run.problems.append(ShellProblem(
                    "heredoc", "a here-document is not read (its text is the input of "
                    f"`{clipped(words[0].text) if words else 'a command'}`, not commands)",
                    self._span(label, lines, base, part.pos)))
        span = self._span(label, lines, base, node.pos)
        if not words:
            for s in prefix:
                self._assign(s.name, s.value, s.span, None, s.unresolved)
            return
        self.eval_words(words, prefix, span, background, label)

    def _word(self, part, words: list[Word], budget: list, label: str, lines: _Lines,
              base: int) -> list[Word]:
        """The words bashlex's ``part`` (a word of a command whose ``words`` are read so
        far) expands to, split as bash splits them. ``budget`` (words, characters left of
        :data:`MAX_COMMAND_WORDS` / :data:`MAX_COMMAND_CHARS`) is spent; once it is spent,
        this word and the rest stay as written and unknown (one RTC701 note)."""
        span = self._span(label, lines, base, part.pos)
        if budget[0] >= 0:
            text, missing = self.expand(part.word, _has_params(part), span)
            fields = None
            if _has_params(part) and (not words or words[0].text not in _DECLARE):
                raw = self.texts.get(label, "")[base + part.pos[0]:base + part.pos[1]]
                fields = self.split_fields(raw, part.word)
            got = [Word(text, span, missing)] if fields is None else \
                [Word(f, span, missing) for f in fields]
            budget[0] -= len(got)
            budget[1] -= sum(len(w.text) for w in got)
            if budget[0] >= 0 and budget[1] >= 0:
                return got
            budget[0] = -1
            self.run.problems.append(ShellProblem(
                "value", f"this command's words are not expanded from here on: they would "
                f"make more than {MAX_COMMAND_WORDS:,} words or {MAX_COMMAND_CHARS >> 20} MiB "
                "(a long variable written unquoted many times); rtc reads them as unknown",
                span))
        names = tuple(dict.fromkeys(m.group(1) or m.group(4) for m in _PARAM.finditer(part.word)))
        return [Word(part.word, span, names or ("$...",))]

    def eval_words(self, words: list[Word], prefix: list[Setting], span: Span,
                   background: bool, label: str) -> None:
        """Evaluate one simple command whose words are read (builtins change the state;
        everything else becomes a :class:`Command`)."""
        while len(words) > 1 and self.functions.get(words[0].text):
            words = words[1:]                    # a wrapper function: run vllm serve ...
        name = words[0].text
        if self.functions.get(name) is False:
            return                               # a call of the script's own function
        if name in ("export", "declare", "typeset", "readonly", "local"):
            exported = name == "export" or any(w.text.startswith("-") and "x" in w.text
                                               for w in words[1:])
            for w in words[1:]:
                if w.text.startswith("-"):
                    continue
                var, eq, value = w.text.partition("=")
                if not _NAME.match(var):
                    continue
                if eq:
                    self._assign(var, value, w.span, exported or None, w.unresolved)
                elif exported and var in self.vars:
                    old = self.vars[var]
                    self.vars[var] = Setting(var, old.value, old.span, True, old.unresolved)
        elif name == "unset":
            for w in words[1:]:
                gone = self.vars.pop(w.text, None)
                self.stored -= _size(gone) if gone is not None else 0
        elif name == "set":
            for w in words[1:]:
                if w.text.startswith("-") and "a" in w.text[1:] and w.text != "-o":
                    self.allexport = True
                elif w.text.startswith("+") and "a" in w.text[1:]:
                    self.allexport = False
        elif name in ("source", ".") and len(words) > 1:
            self._source(words[1], label)
        else:
            env = {k: v for k, v in self.vars.items() if v.exported}
            for s in prefix:
                env[s.name] = Setting(s.name, s.value, s.span, True, s.unresolved)
            self.run.commands.append(Command(words, span, env, prefix, background))

    def _assign(self, name: str, value: str, span: Span, exported, unresolved=(),
                items: tuple[str, ...] | None = None) -> None:
        """Set ``name`` (an indexed array when ``items`` is given: ``value`` is ignored);
        past :data:`MAX_STORED_CHARS` of values in all, unset it instead (its later uses
        stay as written and unknown) with one RTC701 note per script."""
        old = self.vars.get(name)
        flag = bool(exported) or self.allexport or (old is not None and old.exported)
        self.stored -= _size(old) if old is not None else 0
        if items is not None:
            value = items[0] if items else ""
        size = len(value) if items is None else sum(len(x) for x in items)
        if self.stored + size > MAX_STORED_CHARS:
            self.vars.pop(name, None)
            if not self.store_noted:
                self.store_noted = True
                self.run.problems.append(ShellProblem(
                    "value", f"${name} and any variable set after it whose value would pass "
                    f"the total are not stored: the variables set here would hold more than "
                    f"{MAX_STORED_CHARS >> 20} MiB of values in all; rtc reads them as unknown",
                    span))
            return
        self.stored += size
        self.vars[name] = Setting(name, value, span, flag, tuple(unresolved), items)

    def _array(self, node, label: str, lines: _Lines, base: int) -> None:
        """``NAME=( words )`` / ``NAME+=( words )`` (read by :func:`_take_arrays`): each
        word expanded and split like a command's words (bash manual, "Arrays")."""
        words: list[Word] = []
        budget = [MAX_COMMAND_WORDS, MAX_COMMAND_CHARS]
        for part in node.parts:
            words += self._word(part, words, budget, label, lines, base)
        items = tuple(w.text for w in words)
        old = self.vars.get(node.word)
        if node.op == "+=" and old is not None:
            items = (old.items if old.items is not None else (old.value,)) + items
        missing = tuple(dict.fromkeys(n for w in words for n in w.unresolved))
        self._assign(node.word, "", self._span(label, lines, base, node.pos), None,
                     missing, items)

    def _source(self, word: Word, label: str) -> None:
        if word.unresolved:
            self.run.problems.append(ShellProblem(
                "source", f"`source {clipped(word.text)}` is not read: the path uses "
                f"{', '.join(word.unresolved)}, which the script does not set", word.span))
            return
        path = path_from_script(word.text, label)
        if path in self.stack or len(self.stack) >= MAX_SOURCE_DEPTH:
            self.run.problems.append(ShellProblem(
                "source", f"`source {clipped(word.text)}` is not read again (it is already being "
                "read, or files source each other more than "
                f"{MAX_SOURCE_DEPTH} deep)", word.span))
            return
        data, why = self.loader(path)
        text = None
        if data is not None:
            text, why = decode_script(data)
        if text is None:
            self.run.problems.append(ShellProblem(
                "source", f"`source {clipped(word.text)}`: {path} {_why_words(why)}; the "
                "variables it sets are not known", word.span))
            return
        self.read(path, text)


def path_from_script(text: str, label: str) -> str:
    """The file ``source TEXT`` in the script ``label`` reads. A relative path is taken from
    the script's folder (operators start scripts from there). An absolute path inside that
    folder, as ``"$RTC_DIR"/x.env`` gives (the script's own folder is an absolute path, see
    :meth:`_Reader.read`), is written from the script's label again, so that a script
    named ``out/a.sh`` sources ``out/x.env``, not ``/cwd/out/x.env`` or ``out/out/x.env``."""
    here = os.path.dirname(label)
    if not os.path.isabs(text):
        return os.path.normpath(os.path.join(here, text))
    own = os.path.abspath(here)
    if os.path.isabs(here) or os.path.commonpath([own, text]) != own:
        return os.path.normpath(text)
    return os.path.normpath(os.path.join(here, os.path.relpath(text, own)))


def _size(setting: Setting) -> int:
    """Characters a stored variable holds (all elements of an array)."""
    return len(setting.value) if setting.items is None else sum(len(x) for x in setting.items)


def _known(value: str, missing) -> bool:
    """Whether an expanded word is fully known: no variable left unset, and no expansion
    left as written (``${1:-all}``, ``$@``: the script's arguments are not known)."""
    return not missing and not re.search(r"\$[{(\w@*#?!$-]", value)


def _has_params(part) -> bool:
    return any(p.kind in ("parameter", "commandsubstitution", "processsubstitution")
               for p in getattr(part, "parts", ()) or ())


def _parse(text: str, label: str, problems: list):
    """(node, line index, offset base) for each top-level command of ``text``.

    Logical lines made of plain words (quotes, ``$VAR``, redirections, a final ``&``) are
    split by :func:`_fast_line` (a regular expression: bashlex's yacc parser costs ~0.5 ms a
    line); the others by bashlex, one line at a time. When one of those cannot be read on
    its own (an ``if`` or ``for`` over several lines), bashlex reads the whole text; if it
    cannot, those lines are read with shlex (see the module docstring). Indexed array
    assignments (``A=( ... )``, which bashlex does not read) are taken out first
    (:func:`_take_arrays`) and put back in their place."""
    lines = _Lines(text)
    text = mark_double_brackets(_blank_heredocs(_blank(text), lines, label, problems))
    # the same open quote once, where it opens (not again at the start of each line after)
    fallback = [] if _check_quotes(text, lines, label, problems) else problems
    text, arrays = _take_arrays(text)
    out = _parse_commands(text, lines, label, fallback)
    keys = [b + n.pos[0] for n, _, b in out]
    for node in reversed(arrays):
        k = bisect.bisect_left(keys, node.pos[0])
        out[k:k] = [(node, lines, 0)]
    return out


def _take_arrays(text: str) -> tuple[str, list]:
    """``text`` with each indexed array assignment ``NAME=( words )`` / ``NAME+=( ... )``
    at the start of a line (over several lines, with comments) blanked (newlines and
    columns kept), and an ``arrayassign`` :class:`_Fake` node for each (``word`` the name,
    ``op`` ``=`` or ``+=``, ``parts`` its words, offsets from the text's start). An
    assignment whose ``)`` is never found is left as it is."""
    out: list = []
    pieces: list[str] = []          # the text up to ``pos``, arrays blanked
    pos = 0
    while True:
        m = _ARRAY_START.search(text, pos)
        if m is None:
            return "".join(pieces) + text[pos:], out
        words, end = _array_words(text, m.end())
        if end is None:
            pieces.append(text[pos:m.end()])
            pos = m.end()
            continue
        parts = []
        for a, b in words:
            try:
                word, expandable = _unquote(text[a:b])
            except (IndexError, ValueError):
                word, expandable = text[a:b], "$" in text[a:b]
            parts.append(_Fake("word", (a, b), word,
                               [_Fake("parameter", (a, a))] if expandable else []))
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        out.append(_Fake("arrayassign", (start, end), m.group(1), parts,
                         op=m.group(2) + "="))
        pieces += [text[pos:start], re.sub(r"[^\n]", " ", text[start:end])]
        pos = end


def _array_words(text: str, pos: int) -> tuple[list, int | None]:
    """The (start, end) offsets of the words of an array's ``( ... )`` from ``pos`` (just
    after ``(``), and the offset after its ``)`` (None when it is not closed). A ``#`` at
    a word's start is a comment to the end of the line; quotes, ``\\``, ``$( )`` and
    ``${ }`` are kept inside a word."""
    words = []
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\n" or text.startswith("\\\n", pos):
            pos += 2 if c == "\\" else 1
        elif c == ")":
            return words, pos + 1
        elif c == "#":
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl
        else:
            end = _array_word_end(text, pos)
            if end is None or end == pos:       # `(`, `;`, `|`... : not an array's word
                return words, None
            words.append((pos, end))
            pos = end
    return words, None


def _array_word_end(text: str, pos: int) -> int | None:
    """Where the word starting at ``pos`` inside an array's ``( )`` ends (see
    :func:`_array_words`), None when a quote or ``$(`` is not closed."""
    depth, n = 0, len(text)
    while pos < n:
        c = text[pos]
        if depth == 0 and (c in " \t\n);|&<>" or c == "("):
            return pos
        if c == "\\":
            pos += 2
            continue
        if c in "'\"":
            close = pos + 1
            while close < n and text[close] != c:
                close += 2 if c == '"' and text[close] == "\\" else 1
            if close >= n:
                return None
            pos = close + 1
            continue
        if text.startswith("$(", pos) or text.startswith("${", pos):
            depth += 1
            pos += 2
            continue
        if depth and c in "({":
            depth += 1
        elif depth and c in ")}":
            depth -= 1
        pos += 1
    return None


def _parse_commands(text: str, lines: _Lines, label: str, fallback: list):
    """(node, line index, offset base) of each command of ``text`` (see :func:`_parse`)."""
    import bashlex

    out, failed = [], []
    for start, chunk in _logical_lines(text):
        fast = _fast_line(chunk, start)
        if fast is not None:
            out += [(node, lines, 0) for node in fast]
            continue
        try:
            out += [(node, lines, start) for node in _parse_chunk(chunk)]
        except Exception:   # noqa: BLE001 - bashlex raises several types
            failed.append((len(out), start, chunk))
    if not failed:
        return out
    try:
        return [(node, lines, 0) for node in bashlex.parse(text)]
    except Exception:   # noqa: BLE001 - not readable as a whole: line by line
        pass
    for k, start, chunk in reversed(failed):
        out[k:k] = _shlex_line(chunk, start, lines, label, fallback)
    return out


#: The next token that changes the quoting state, by state: ``T`` commands (the top level,
#: inside ``$( )`` too), ``D`` between double quotes, ``B`` inside ``${ }``.
_QUOTE_TOKENS = {
    "T": re.compile(r"\\[\s\S]|\$'|\$\{|\$\(|['\"`()#]"),
    "D": re.compile(r"\\[\s\S]|\$\{|\$\(|[\"`]"),
    "B": re.compile(r"\\[\s\S]|\$'|\$\{|\$\(|['\"`}]"),
}
_ANSI_BODY = re.compile(r"(?:[^'\\]|\\[\s\S])*'")
_BACKQUOTE_BODY = re.compile(r"(?:[^`\\]|\\[\s\S])*`")
#: The state each opening token enters.
_OPENS = {'"': "D", "${": "B", "$(": "T", "(": "T"}


def _check_quotes(text: str, lines: _Lines, label: str, problems: list) -> bool:
    """Add an RTC700 problem when a quote, ``${`` or ``$(`` of ``text`` is never closed
    the way bash pairs them (``bash -n`` fails with "unexpected EOF while looking for
    matching"). bashlex and shlex miss one rule of bash's parser (parse.y,
    ``parse_matched_pair``): inside ``${ }`` a ``'`` opens a single-quoted string even
    between double quotes, so ``"${PROXY:?vLLM's proxy}"`` leaves a quote open; and
    shlex takes a ``#`` inside a word (``a#'b``) for a comment. ``case`` patterns,
    ``$(( ))`` and here-documents are blanked already. Returns whether it added one (about
    0.2 ms for a 2 KB script, a few per cent of reading it)."""
    opened = _unclosed(text)
    if opened is None:
        return False
    (pos, tok), suspect = opened
    line, col = lines.at(pos)
    if suspect is None:
        message = (f"the `{tok}` at {line}:{col} is never closed, so bash cannot read the "
                   "script (`bash -n` fails: unexpected end of file)")
    else:
        line, col = lines.at(suspect)
        message = (f"the `'` at {line}:{col}, inside `${{...}}` between double quotes, opens "
                   "a single-quoted string (bash pairs quotes inside `${...}` even there: an "
                   "apostrophe in `${VAR:?message}` or `${VAR:-default}` is one), so bash "
                   "cannot read the script (`bash -n` fails: unexpected end of file; the "
                   f"last quote or expansion left open is at {lines.at(pos)[0]}:"
                   f"{lines.at(pos)[1]})")
    problems.append(ShellProblem("syntax", message, Span(label, line, col)))
    return True


def _unclosed(text: str):
    """((offset, token) of the innermost quote or expansion of ``text`` left open, offset
    of the first ``'`` met inside ``${ }`` between double quotes or None), or None when
    everything is closed (see :func:`_check_quotes`). A stack of (state, offset, token
    that opened it)."""
    stack: list[tuple[str, int, str]] = [("T", -1, "")]
    closes = {"D": '"', "B": "}", "T": ")"}
    pos, suspect = 0, None
    while True:
        state = stack[-1][0]
        m = _QUOTE_TOKENS[state].search(text, pos)
        if m is None:
            break
        tok, start, pos = m.group(0), m.start(), m.end()
        if tok[0] == "\\":
            continue
        if tok == "#":
            if start == 0 or text[start - 1].isspace() or text[start - 1] in ";&|()<>":
                nl = text.find("\n", pos)                  # a comment
                pos = len(text) if nl < 0 else nl
        elif tok in ("'", "$'", "`"):
            if tok == "'":
                end = text.find("'", pos) + 1
                if state == "B" and suspect is None and any(s[0] == "D" for s in stack) \
                        and (end <= 0 or "\n" in text[start:end]):
                    suspect = start                         # closed lines later, if at all
            else:
                body = (_ANSI_BODY if tok == "$'" else _BACKQUOTE_BODY).match(text, pos)
                end = body.end() if body else 0
            if end <= 0:
                return (start, tok), suspect
            pos = end
        elif tok == closes[state] and len(stack) > 1:
            stack.pop()
        elif tok in _OPENS and not (tok in "()" and len(stack) == 1):
            stack.append((_OPENS[tok], start, tok))
    if len(stack) > 1:
        return (stack[-1][1], stack[-1][2]), suspect
    return None


@functools.lru_cache(maxsize=1024)
def _parse_chunk(chunk: str) -> tuple:
    """bashlex's nodes of one logical line (cached: generated scripts repeat their helper
    functions; the nodes are only read, and their offsets are relative to the line)."""
    import bashlex

    return tuple(bashlex.parse(chunk))


#: ``name() { cmd; cmd; }`` on one line, and a body command that runs the arguments.
_ONE_LINE_FUNCTION = re.compile(r"[ \t]*(?:function[ \t]+)?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\(\)"
                                r"[ \t]*\{(.*)\}[ \t]*\n?\Z")
_PASSTHROUGH = re.compile(r'(?:^|[;{])[ \t]*"?\$@"?[ \t]*(?:;|$)')

#: One word of a plain line: unquoted characters, '...' and "..." parts, \-escapes.
_WORD = re.compile(r"""(?:[^\s'"\\|&;<>()`#]|\\.|'[^']*'|"(?:[^"\\`]|\\.)*"|(?<=\S)#)+""", re.S)
_REDIRECT = re.compile(r"(?:[0-9]*|&)(?:>>?|<)(?:&[0-9]+|&-)?")
_SPACE = re.compile(r"[ \t]+|\\\n")


def _fast_line(chunk: str, start: int):
    """The command of a plain logical line as :class:`_Fake` nodes (offsets from the
    text's start), ``[]`` for a blank or comment line, or None when the line needs a real
    parser (``|``, ``;``, ``&&``, ``(``, ``{``, backquotes, ``$(``, a here-document)."""
    if chunk.lstrip().startswith("#") or not chunk.strip():
        return []
    f = _ONE_LINE_FUNCTION.match(chunk)
    if f and "$(" not in chunk and "`" not in chunk:
        node = _Fake("function", (start + f.start(1), start + f.end()), f.group(1))
        node.passthrough = bool(_PASSTHROUGH.search(f.group(2)))
        return [node]
    if "$(" in chunk or "`" in chunk or "<<" in chunk:
        return None
    pos, end = 0, len(chunk.rstrip())
    parts: list = []
    background = False
    while pos < end:
        m = _SPACE.match(chunk, pos)
        if m:
            pos = m.end()
            continue
        if chunk[pos] == "#":
            break
        r = _REDIRECT.match(chunk, pos)
        if r and r.end() > pos and chunk[r.end() - 1] in "<>-0123456789":
            pos = r.end()
            if chunk[pos - 1] in "<>":          # the target is the next word
                m = _SPACE.match(chunk, pos)
                pos = m.end() if m else pos
                w = _WORD.match(chunk, pos)
                if not w:
                    return None
                pos = w.end()
            continue
        if chunk[pos] == "&" and not chunk[pos + 1:end].strip():
            background = True
            break
        w = _WORD.match(chunk, pos)
        if not w or w.start() != pos:
            return None
        raw = w.group(0)
        text, expandable = _unquote(raw)
        kind = "assignment" if not any(p.kind == "word" for p in parts) and \
            re.match(r"[A-Za-z_][A-Za-z0-9_]*=", raw) else "word"
        a, b = start + pos, start + w.end()
        parts.append(_Fake(kind, (a, b), text, [_Fake("parameter", (a, a))] if expandable else []))
        pos = w.end()
    if not parts:
        return []
    node = _Fake("command", (start + len(chunk) - len(chunk.lstrip()), start + end), parts=parts)
    if background:
        return [_Fake("list", node.pos, parts=[node, _Fake("operator", (0, 0), op="&")])]
    return [node]


def _unquote(raw: str) -> tuple[str, bool]:
    """A word's text without its quotes, and whether it has a ``$`` outside '...'."""
    if "'" not in raw and '"' not in raw and "\\" not in raw:
        return raw, "$" in raw
    out, k, expandable = [], 0, False
    while k < len(raw):
        c = raw[k]
        if c == "'":
            j = raw.index("'", k + 1)
            out.append(raw[k + 1:j])
            k = j + 1
        elif c == '"':
            k += 1
            while raw[k] != '"':
                if raw[k] == "\\" and raw[k + 1] in '"\\$`\n':
                    out.append("" if raw[k + 1] == "\n" else raw[k + 1])
                    k += 2                  # backslash-newline: a line continuation
                    continue
                expandable |= raw[k] == "$"
                out.append(raw[k])
                k += 1
            k += 1
        elif c == "\\":
            out.append("" if raw[k + 1:k + 2] == "\n" else raw[k + 1:k + 2])
            k += 2
        else:
            expandable |= c == "$"
            out.append(c)
            k += 1
    return "".join(out), expandable


def _blank(text: str) -> str:
    """``text`` with each ``case`` block turned into its branches' commands (the ``case``
    and ``esac`` lines and the ``PATTERN)`` / ``;;`` marks blanked, newlines and columns
    kept: every branch is read, like both branches of an ``if``) and ``$(( ))`` replaced by
    ``0`` and spaces, so that bashlex can read the rest."""
    def line(text_line: str) -> str:
        m = re.match(r"^([ \t]*(?:case\b.*|esac\b.*|[^\s()]+\)))", text_line)
        if m:
            text_line = " " * len(m.group(1)) + text_line[m.end():]
        return re.sub(r";;\s*$", lambda x: " " * len(x.group(0)), text_line)

    def case(m: re.Match) -> str:
        return "\n".join(line(x) for x in m.group(0).split("\n"))

    out = CASE_BLOCK.sub(case, text)
    return _ARITH.sub(lambda m: "0" + " " * (len(m.group(0)) - 1), out)


def known_arithmetic(text: str, values: dict) -> str:
    """``text`` with each ``$(( ))`` whose operands are integers or variables of ``values``
    (name -> str) holding integers evaluated, as bash would (``+ - * / %`` and
    parentheses; ``/`` and ``%`` truncate toward zero), the result padded with spaces to
    the expression's length so that columns are kept. Used where each pod's values are
    known (a LeaderWorkerSet's ``LWS_WORKER_INDEX``: leader 0, worker i); the other
    ``$(( ))`` stay for :func:`_blank`."""
    def one(m: re.Match) -> str:
        got = _arith_value(m.group(0)[3:-2], values)
        if got is None or len(str(got)) > len(m.group(0)):
            return m.group(0)
        return str(got).ljust(len(m.group(0)))

    return _ARITH.sub(one, text) if "$((" in text else text


def _arith_value(expr: str, values: dict) -> int | None:
    """The integer value of the arithmetic ``expr``, or None when it uses anything else."""
    import ast

    def name(m: re.Match) -> str:
        v = str(values.get(m.group(1), "")).strip()
        return v if re.fullmatch(r"-?\d+", v) else "@"

    src = re.sub(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?", name, expr)
    if "@" in src or not re.fullmatch(r"[\d\s+\-*/%()]*", src) or "**" in src:
        return None
    try:
        tree = ast.parse(src.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    return _arith_node(tree)


def _arith_node(node) -> int | None:
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _arith_node(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if not isinstance(node, ast.BinOp):
        return None
    a, b = _arith_node(node.left), _arith_node(node.right)
    if a is None or b is None:
        return None
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and b != 0:
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q if not isinstance(node.op, ast.Mod) else a - q * b
    return None


_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def _blank_heredocs(text: str, lines: "_Lines", label: str, problems: list) -> str:
    """``text`` with every here-document's body and terminator line blanked (newlines and
    columns kept) and its ``<<WORD`` operator too, so its text is never read as commands
    (bashlex does not read quoted delimiters such as ``<<'EOF'``); one RTC701 note each."""
    out, pending, strip_tabs = [], None, False
    for m in re.finditer(r"[^\n]*\n?", text):
        line = m.group(0)
        if not line:
            break
        body = line.rstrip("\n")
        if pending is not None:
            done = (body.lstrip("\t") if strip_tabs else body) == pending
            out.append(" " * len(body) + line[len(body):])
            pending = None if done else pending
            continue
        h = _HEREDOC.search(body) if "<<" in body and not body.lstrip().startswith("#") else None
        if h is not None:
            pending, strip_tabs = h.group(3), bool(h.group(1))
            ln, col = lines.at(m.start() + h.start())
            problems.append(ShellProblem(
                "heredoc", "a here-document is not read (its text is the input of a "
                "command, not commands)", Span(label, ln, col)))
            line = line[:h.start()] + " " * (h.end() - h.start()) + line[h.end():]
        out.append(line)
    return "".join(out)


def _logical_lines(text: str):
    """(offset, text) of each logical line: physical lines joined at a trailing ``\\``."""
    buf_start = None
    for m in re.finditer(r"[^\n]*(?:\n|\Z)", text):
        line = m.group(0)
        if not line:
            break
        if buf_start is None:
            buf_start = m.start()
        body = line.rstrip("\n")
        if body.endswith("\\") and not body.endswith("\\\\"):
            continue
        yield buf_start, text[buf_start:m.end()]
        buf_start = None
    if buf_start is not None:
        yield buf_start, text[buf_start:]


class _Fake:
    """A minimal stand-in for a bashlex node, built from shlex words."""

    def __init__(self, kind: str, pos: tuple[int, int], word: str = "", parts=(), op=""):
        self.kind, self.pos, self.word, self.parts, self.op = kind, pos, word, list(parts), op


def _shlex_line(chunk: str, start: int, lines: _Lines, label: str, problems: list):
    """A line bashlex cannot read, split with shlex into one command (or a problem)."""
    try:
        lexer = shlex.shlex(chunk.replace("\\\n", "  "), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError as exc:
        line, col = lines.at(start)
        problems.append(ShellProblem("syntax", f"this line cannot be read as shell: {exc} "
                                     "(an unterminated quote?)", Span(label, line, col)))
        return []
    parts, at = [], 0
    for w in words:
        if w in (";", "&", "&&", "||", "|"):
            continue
        k = chunk.find(w.split("=")[0][:8] or w, at)
        k = at if k < 0 else k
        at = k + 1
        param = "$" in w
        kind = "assignment" if not parts and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", w) else "word"
        parts.append(_Fake(kind, (k, k + len(w)), w,
                           [_Fake("parameter", (k, k))] if param else []))
    while parts and parts[0].word in _KEYWORDS:
        parts = parts[1:]
    if not parts:
        return []
    return [(_Fake("command", (0, len(chunk.rstrip())), parts=parts), lines, start)]


def read_shell(label: str, text: str, loader=None, *, first_line: int = 1,
               env: dict | None = None) -> ShellRun:
    """Read ``text`` (the script named ``label``; line numbers from ``first_line``) as shell
    and return a :class:`ShellRun`. ``loader(path) -> (bytes | None, why | None)`` reads the
    files it sources (default: the file system). ``env`` presets variables (a section of a
    file continues the variables of the lines above it). Never raises for bad input."""
    run = ShellRun()
    reader = _Reader(loader or load_file, run)
    if env:
        reader.vars.update(env)
    if first_line > 1:
        text = "\n" * (first_line - 1) + text
    reader.read(label, text)
    reader.vars.pop(OWN_DIR_VAR, None)
    run.settings = dict(reader.vars)
    return run


def quote_problems(label: str, text: str) -> list[ShellProblem]:
    """The RTC700 ``syntax`` problem of ``text`` when bash cannot pair its quotes (see
    :func:`_check_quotes`), without reading its commands: for scripts that are not linted
    (rtc's own tool scripts). [] when every quote is closed."""
    problems: list[ShellProblem] = []
    lines = _Lines(text)
    _check_quotes(_blank_heredocs(_blank(text), lines, label, []), lines, label, problems)
    return problems


def _why_words(why: str | None) -> str:
    """A loader's reason as the rest of a sentence after the path: ``cannot be read (it
    is a FIFO ...)``; a reason that already says so (``is binary``) as it is."""
    if not why:
        return "cannot be read"
    if why.startswith(("cannot", "is ", "does ", "has ")):
        return why
    return f"cannot be read ({why})"


def load_file(path: str):
    """(bytes, None) of a sourced file, or (None, why): only a regular file is read, and
    at most :func:`rtc.readfile.max_input_bytes` (``. /dev/zero`` or ``source
    /dev/urandom`` is refused before anything is opened)."""
    from rtc.readfile import read_bytes

    try:
        return read_bytes(path), None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"


__all__ = ["Word", "Setting", "Command", "ShellProblem", "ShellRun", "read_shell",
           "decode_script", "path_from_script", "quote_problems"]
