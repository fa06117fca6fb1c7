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
    to be re-implemented. bashlex does not implement a few constructs (``$(( ))``,
    ``case``): the part of the script it cannot read is then read line by line (logical
    lines, continuations joined), and a line that still fails with ``shlex`` (words only,
    columns of the line's start); what cannot be read at all (an unterminated quote) is a
    :class:`ShellProblem`, never an exception.

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
import os
import re
import shlex
from dataclasses import dataclass, field

from rtc.diagnostics import Span

#: How deep ``source`` may nest (a file sourcing itself is stopped by the cycle check).
MAX_SOURCE_DEPTH = 8

_PARAM = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


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
        try:
            for node, lines, base in _parse(text, label, self.run.problems):
                self._node(node, label, lines, base)
        finally:
            self.stack.pop()

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
        elif kind in ("if", "for", "while", "until", "function"):
            for part in node.parts:
                if part.kind in ("list", "command", "compound", "pipeline", "if", "for",
                                 "while", "until"):
                    self._node(part, label, lines, base, background)

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
        name = words[0].text
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
        path = word.text if os.path.isabs(word.text) else \
            os.path.normpath(os.path.join(os.path.dirname(label), word.text))
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


def _has_params(part) -> bool:
    return any(p.kind in ("parameter", "commandsubstitution", "processsubstitution")
               for p in getattr(part, "parts", ()) or ())


def _parse(text: str, label: str, problems: list):
    """(bashlex node, line index, offset base) for each top-level command of ``text``;
    parts bashlex cannot read are read line by line (see the module docstring)."""
    import bashlex

    lines = _Lines(text)
    try:
        return [(node, lines, 0) for node in bashlex.parse(text)]
    except Exception:   # bashlex raises several types (ParsingError, NotImplementedError...)
        pass
    out = []
    for start, chunk in _logical_lines(text):
        if not chunk.strip() or chunk.lstrip().startswith("#"):
            continue
        try:
            out += [(node, lines, start) for node in bashlex.parse(chunk)]
        except Exception:   # noqa: BLE001 - any bashlex failure: try shlex on this line
            out += _shlex_line(chunk, start, lines, label, problems)
    return out


def _logical_lines(text: str):
    """(offset, text) of each logical line: physical lines joined at a trailing ``\\``."""
    start = 0
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
        start = m.end()
    if buf_start is not None:
        yield buf_start, text[buf_start:]


class _Fake:
    """A minimal stand-in for a bashlex node, built from shlex words."""

    def __init__(self, kind: str, pos: tuple[int, int], word: str = "", parts=()):
        self.kind, self.pos, self.word, self.parts = kind, pos, word, list(parts)


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
    reader = _Reader(loader or _load_file, run)
    if env:
        reader.vars.update(env)
    if first_line > 1:
        text = "\n" * (first_line - 1) + text
    reader.read(label, text)
    run.settings = dict(reader.vars)
    return run


def _load_file(path: str):
    try:
        with open(path, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"


__all__ = ["Word", "Setting", "Command", "ShellProblem", "ShellRun", "read_shell",
           "decode_script"]
