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
    and ``$A`` / ``${A}`` / ``${A:-default}`` / ``${A-default}`` in every word. Variables
    the script does not set stay as written (``$1``, ``$(hostname -I)``) and the word says
    so (:attr:`Word.unresolved`). Both branches of an ``if`` are read, in order.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import shlex
from dataclasses import dataclass, field

from rtc.diagnostics import Span

#: How deep ``source`` may nest (a file sourcing itself is stopped by the cycle check).
MAX_SOURCE_DEPTH = 8

_PARAM = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: ``$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`` and the like: the script's own folder.
_OWN_DIR = re.compile(r'"?\$\((?:cd\s+)?"?\$\(dirname\s+"?(?:\$\{BASH_SOURCE(?:\[0\])?\}|\$0|'
                      r'\$\(readlink -f "?\$0"?\))"?\)"?(?:\s*&&\s*pwd(?:\s+-P)?)?\)"?')
#: The variable the script's own folder is read into (see :data:`_OWN_DIR`).
OWN_DIR_VAR = "_RTC_SCRIPT_DIR"

#: Constructs bashlex does not implement: ``case ... esac`` blocks and ``$(( ))``.
_CASE = re.compile(r"^[ \t]*case\b.*?^[ \t]*esac\b[^\n]*", re.S | re.M)
_ARITH = re.compile(r"\$\(\((?:[^()]|\([^()]*\))*\)\)")
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


class _Reader:
    """Evaluates one script and the files it sources (see the module docstring)."""

    def __init__(self, loader, run: ShellRun):
        self.loader = loader          # path -> (bytes | None, why | None)
        self.run = run
        self.vars: dict[str, Setting] = {}
        self.allexport = False
        self.stack: list[str] = []
        self.functions: dict[str, bool] = {}     # name -> runs its arguments ("$@")

    # -- expansion ---------------------------------------------------------------------
    def expand(self, text: str, expandable: bool) -> tuple[str, tuple[str, ...]]:
        if not expandable or "$" not in text:
            return text, ()
        missing: list[str] = []

        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(4)
            got = self.vars.get(name)
            if got is not None and (got.value or not m.group(2) or m.group(2)[0] != ":"):
                return got.value
            if m.group(2):
                return m.group(3)
            missing.append(name)
            return m.group(0)

        out = _PARAM.sub(sub, text)
        if "$(" in out or "`" in out or re.search(r"\$[0-9@*#?]", out):
            missing.append("$(...)" if "$(" in out or "`" in out else "$N")
        return out, tuple(missing)

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
        kind = node.kind
        if kind == "command":
            self._command(node, label, lines, base, background)
        elif kind == "list":
            parts = node.parts
            for k, part in enumerate(parts):
                if part.kind == "operator":
                    continue
                bg = k + 1 < len(parts) and parts[k + 1].kind == "operator" and \
                    parts[k + 1].op == "&"
                self._node(part, label, lines, base, bg)
        elif kind == "pipeline":
            for part in node.parts:
                if part.kind != "pipe":
                    self._node(part, label, lines, base, background)
        elif kind == "compound":
            for part in node.list:
                self._node(part, label, lines, base, background)
        elif kind == "function":
            self._function(node)
        elif kind in ("if", "for", "while", "until"):
            for part in node.parts:
                if part.kind in ("list", "command", "compound", "pipeline", "if", "for",
                                 "while", "until"):
                    self._node(part, label, lines, base, background)

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
        for part in node.parts:
            if part.kind == "assignment" and not words:
                name, _, value = part.word.partition("=")
                text, missing = self.expand(value, _has_params(part))
                prefix.append(Setting(name, text, self._span(label, lines, base, part.pos),
                                      False, missing))
            elif part.kind == "word":
                text, missing = self.expand(part.word, _has_params(part))
                words.append(Word(text, self._span(label, lines, base, part.pos), missing))
            elif part.kind == "redirect" and getattr(part, "heredoc", None) is not None:
                self.run.problems.append(ShellProblem(
                    "heredoc", "a here-document is not read (its text is the input of "
                    f"`{words[0].text if words else 'a command'}`, not commands)",
                    self._span(label, lines, base, part.pos)))
        span = self._span(label, lines, base, node.pos)
        if not words:
            for s in prefix:
                self._assign(s.name, s.value, s.span, None, s.unresolved)
            return
        self.eval_words(words, prefix, span, background, label)

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
                self.vars.pop(w.text, None)
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

    def _assign(self, name: str, value: str, span: Span, exported, unresolved=()) -> None:
        old = self.vars.get(name)
        flag = bool(exported) or self.allexport or (old is not None and old.exported)
        self.vars[name] = Setting(name, value, span, flag, tuple(unresolved))

    def _source(self, word: Word, label: str) -> None:
        if word.unresolved:
            self.run.problems.append(ShellProblem(
                "source", f"`source {word.text}` is not read: the path uses "
                f"{', '.join(word.unresolved)}, which the script does not set", word.span))
            return
        path = path_from_script(word.text, label)
        if path in self.stack or len(self.stack) >= MAX_SOURCE_DEPTH:
            self.run.problems.append(ShellProblem(
                "source", f"`source {word.text}` is not read again (it is already being "
                "read, or files source each other more than "
                f"{MAX_SOURCE_DEPTH} deep)", word.span))
            return
        data, why = self.loader(path)
        text = None
        if data is not None:
            text, why = decode_script(data)
        if text is None:
            self.run.problems.append(ShellProblem(
                "source", f"`source {word.text}`: {path} {why or 'cannot be read'}; the "
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


def _has_params(part) -> bool:
    return any(p.kind in ("parameter", "commandsubstitution", "processsubstitution")
               for p in getattr(part, "parts", ()) or ())


def _parse(text: str, label: str, problems: list):
    """(node, line index, offset base) for each top-level command of ``text``.

    Logical lines made of plain words (quotes, ``$VAR``, redirections, a final ``&``) are
    split by :func:`_fast_line` (a regular expression: bashlex's yacc parser costs ~0.5 ms a
    line); the others by bashlex, one line at a time. When one of those cannot be read on
    its own (an ``if`` or ``for`` over several lines), bashlex reads the whole text; if it
    cannot, those lines are read with shlex (see the module docstring)."""
    import bashlex

    lines = _Lines(text)
    text = _blank_heredocs(_blank(text), lines, label, problems)
    # the same open quote once, where it opens (not again at the start of each line after)
    fallback = [] if _check_quotes(text, lines, label, problems) else problems
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

    out = _CASE.sub(case, text)
    return _ARITH.sub(lambda m: "0" + " " * (len(m.group(0)) - 1), out)


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


def load_file(path: str):
    try:
        with open(path, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"


__all__ = ["Word", "Setting", "Command", "ShellProblem", "ShellRun", "read_shell",
           "decode_script", "path_from_script", "quote_problems"]
