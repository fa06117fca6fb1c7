"""Whether a text handed to another command is an rtc description (``rtc validate x.rtc``,
``rtc lint x.rtc``), so that the command says so instead of reading it as JSON or shell."""

from __future__ import annotations

import re

from rtc.syntax.parser import BLOCK_KINDS

# `KIND {` or `KIND NAME {`: how every rtc block opens (no `:`, unlike YAML's `cluster: x`).
_OPENS = re.compile(r"(\S+)(\s+[^\s{}:]+)?\s*\{")


def description_start(text: str, filename: str) -> tuple[int, int, str] | None:
    """``(line, column, first word)`` of ``text``'s first line when it is an rtc
    description: a ``.rtc`` name, or a first line (past blanks and ``#`` comments) that
    opens a block, ``KIND [NAME] {`` with KIND one of :data:`BLOCK_KINDS`. None otherwise
    (JSON text, YAML such as ``cluster: x``, a shell script)."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith(("{", "[")):
            return None
        word = stripped.split(None, 1)[0]
        opens = _OPENS.match(stripped)
        if not filename.endswith(".rtc") and not (opens and word in BLOCK_KINDS):
            return None
        return number, line.index(stripped) + 1, word
    return None
