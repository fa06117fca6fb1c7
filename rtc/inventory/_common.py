"""Pieces shared by the inventory parsers: the :class:`Fact` record, reading capture files
tolerantly, splitting lines, value spans and address validation.

Columns are 1-based and count characters (a tab counts as one column, as most editors'
"column" readouts and the ``file:line:col`` convention of compilers do).
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Span, error, warning
from rtc.readfile import read_bytes
from rtc.inventory.rules import UNREADABLE


@dataclass(frozen=True)
class Fact:
    """One value read from the user's machine, with where it came from.

    ``span`` points at the value itself (file, line, column of its first character, end
    column one past its last). ``source`` is a short human label naming the command and the
    place, e.g. ``"hccn_tool -i 3 -ip -g (ip.txt:4)"`` or ``"hccn.conf address_3 (hccn.conf:4)"``.
    """

    value: object
    span: Span
    source: str


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Split on ``\\n``, ``\\r\\n`` and lone ``\\r`` only (``str.splitlines`` also splits on
    form feeds and Unicode separators, which would make line numbers disagree with editors).
    A leading BOM is dropped; a final newline does not create an extra empty line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def value_span(file: str, line_no: int, start: int, length: int) -> Span:
    """Span of a value that starts at 0-based character offset ``start`` of line ``line_no``."""
    return Span(file, line_no, start + 1, line_no, start + 1 + length)


def display_name(file: str) -> str:
    """The short name used inside :attr:`Fact.source` labels (the file's base name)."""
    base = os.path.basename(file.rstrip("/\\"))
    return base or file


def read_text(path: str | os.PathLike, file: str | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Read a capture file as text.

    Tolerates what captures pick up on their way to rtc: a UTF-8 BOM, UTF-16 (PowerShell's
    ``>`` writes UTF-16LE with a BOM) and stray undecodable bytes (replaced, with an RTC480
    warning at the first one). Returns ``(None, [RTC480 error])`` when the file cannot be read
    or is binary.
    """
    label = file if file is not None else os.fspath(path)
    try:
        data = read_bytes(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, [error(
            UNREADABLE,
            f"cannot read inventory file '{label}': {reason}; the facts it holds cannot be "
            "checked against the cluster description",
            Span.whole_file(label),
            hint="check the path and its permissions, or leave the file out of the inventory",
        )]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), []
        except UnicodeDecodeError:
            pass
    if b"\x00" in data:
        return None, [error(
            UNREADABLE,
            f"inventory file '{label}' is binary, not a text capture; rtc reads the text that "
            "hccn_tool, npu-smi or /etc/hccn.conf contain",
            Span.whole_file(label),
            hint="save the command's output as plain text (e.g. `hccn_tool -i 0 -ip -g > ip_0.txt`)",
        )]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        head = data[: exc.start]
        line = head.count(b"\n") + 1
        col = len(head[head.rfind(b"\n") + 1:].decode("utf-8", errors="replace")) + 1
        text = data.decode("utf-8-sig", errors="replace")
        return text, [warning(
            UNREADABLE,
            f"inventory file '{label}' is not valid UTF-8 (byte 0x{data[exc.start]:02x}); "
            "undecodable bytes were replaced, so a value containing them may be wrong",
            Span(label, line, col),
            hint="re-save the capture as UTF-8 text, or check this line for a corrupted value",
        )]


#: Most digits a number in a capture may have; more is garbage (and ``int()`` refuses over
#: 4,300 digits).
MAX_DIGITS = 20


def ascii_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """``text`` as an int when it is 1 to ``max_digits`` ASCII digits 0-9, else None.
    ``str.isdigit()``, ``\\d`` and ``int()`` also take Unicode digits (superscript '²',
    fullwidth '８'), which no tool prints; this never does, nor calls ``int()`` on a huge
    string. (The inventory package has its own copy: it imports nothing above it.)"""
    if 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def short_text(text: str, limit: int = 40) -> str:
    """``text`` for a message, cut to ``limit`` characters with its length when longer."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def parse_ip(raw: str) -> tuple[str | None, str | None]:
    """Canonical text of an IPv4/IPv6 address, or ``(None, reason)``."""
    try:
        return str(ipaddress.ip_address(raw)), None
    except ValueError as exc:
        return None, str(exc)


def parse_netmask(raw: str) -> tuple[str | None, int | None, str | None]:
    """A dotted IPv4 netmask -> ``(canonical, prefix length, None)`` or ``(None, None, reason)``.
    Non-contiguous masks (``255.0.255.0``) and host masks written as prefixes are rejected."""
    try:
        addr = ipaddress.IPv4Address(raw)
    except ValueError as exc:
        return None, None, str(exc)
    try:
        net = ipaddress.IPv4Network(f"0.0.0.0/{addr}")
    except ValueError:
        return None, None, f"'{raw}' is not a contiguous netmask"
    return str(addr), net.prefixlen, None

