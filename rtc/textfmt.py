"""Small text helpers shared by diagnostics, reports and emitters."""

from __future__ import annotations

import re
from ipaddress import IPv4Address
try:  # the C module socket.py wraps: importing socket.py itself costs ~2 ms of start-up
    from _socket import inet_ntoa as _ntoa
except ImportError:  # pragma: no cover - a Python without the _socket module
    from socket import inet_ntoa as _ntoa
from typing import Iterable

# JSON indexes first ([12] -> [*]), then IPv6-looking runs, numbers and dotted numbers (-> #).
_INDEX = re.compile(r"\[\d+\]")
_NUMBERISH = re.compile(r"(?:[0-9A-Fa-f]*:){2,}[0-9A-Fa-f:.]*|\d+(?:\.\d+)*")
# In a long text, _NUMBERISH runs on each run of the characters it can match, and its
# IPv6 branch only on runs that could be an address (two colons, at most _LONGEST_RUN
# characters): tried at every letter of a 100,000-letter hex word it backtracks over the
# rest of the word each time (the fuzzer's 100 KB rank table took 23 s to report).
_RUN = re.compile(r"[0-9A-Fa-f:.]+")
_DIGITS = re.compile(r"\d+(?:\.\d+)*")
_LONGEST_RUN = 200
_SHORT_TEXT = 1000


# Control characters (C0, DEL, C1), lone surrogates, and the invisible characters that
# change how a terminal shows a line (zero-width spaces and joiners, bidi marks and
# overrides, line and paragraph separators, the BOM): never written out as they are.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200b-\u200f\u2028-\u202e"
                          "\u2060-\u2064\u2066-\u2069\ufeff]")


def unprintable_character(text: str) -> str | None:
    """The first character of ``text`` that :func:`printable` escapes (a control
    character, a lone surrogate, an invisible layout character such as the bidi override
    U+202E), or None."""
    m = _UNPRINTABLE.search(text)
    return None if m is None else m.group()


def source_lines(text: str) -> list[str]:
    """``text`` cut into lines at ``"\n"`` only, the ``"\r"`` of a CRLF line end dropped:
    the lines lark and rtc's JSON reader count. (``str.splitlines`` also cuts at a form
    feed, U+0085 or U+2028, which a comment may hold, and numbers every later line one
    off.) No empty line follows a final line break, as with ``splitlines``."""
    lines = text.split("\n")
    if not lines[-1]:   # after a final line break, or an empty text
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def printable(text: str, keep: str = "") -> str:
    """``text`` with control characters, lone surrogates and invisible layout characters
    written as backslash escapes (``\\x1b``, ``\\ud800``, ``\\u202e``). A table's values
    reach messages as they are: an escape sequence in a ``server_id`` would otherwise
    retitle or clear the user's terminal, or hide the lines before it; a bidi override or
    a zero-width space would show a name other than the one written; a lone surrogate
    (from a JSON ``\\ud800`` escape or an undecodable file name) cannot be encoded by any
    stream. Characters of ``keep`` (e.g. line breaks a format encodes itself) are left."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(lambda m: _escape(m.group(), keep), text)


def _escape(c: str, keep: str) -> str:
    if c in keep:
        return c
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def number_pattern(text: str) -> str:
    """``text`` with every JSON array index written ``[*]`` and every number, dotted
    number (an IPv4 address, a version) and IPv6-looking run written ``#``: what repeated
    findings (and the values behind them) are grouped by.

    >>> number_pattern('server_list[3].device[7].rank_id: must be "31", not 31')
    'server_list[*].device[*].rank_id: must be "#", not #'
    """
    text = _INDEX.sub("[*]", text)
    if len(text) <= _SHORT_TEXT:
        return _NUMBERISH.sub("#", text)
    return _RUN.sub(_numberish_run, text)


def _numberish_run(m: re.Match) -> str:
    """One run of :data:`_RUN` as :data:`_NUMBERISH` writes it (matches never cross the
    run's ends); numbers only when it cannot hold an IPv6-looking address."""
    run = m.group()
    if run.count(":") < 2 or len(run) > _LONGEST_RUN:
        return _DIGITS.sub("#", run)
    return _NUMBERISH.sub("#", run)


def format_ids(ids: Iterable[int], limit: int | None = None) -> str:
    """Ids as compact ranges, ascending and without repeats: [5, 0, 1, 2, 3, 7, 8] ->
    '0..3, 5, 7, 8' (runs of three or more become FIRST..LAST, which is also how the rtc
    language writes device sets). With ``limit``, at most that many pieces are shown,
    then '... (N in all)'."""
    vals = sorted(set(ids))
    parts: list[str] = []
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{vals[i]}..{vals[j]}")
        else:
            parts.extend(str(x) for x in vals[i:j + 1])
        i = j + 1
    if limit is not None and len(parts) > limit:
        return ", ".join(parts[:limit]) + f", ... ({len(vals)} in all)"
    return ", ".join(parts)


def compact(ids: Iterable[int], limit: int = 6) -> str:
    """Ids as ranges: [0,1,2,3,5] -> '0..3, 5'; more than ``limit`` pieces are cut with
    '... (N in all)' (:func:`format_ids`)."""
    return format_ids(ids, limit)


def span_range(first: int, count: int) -> str:
    """'0..7' for (0, 8); '5' for (5, 1)."""
    return str(first) if count == 1 else f"{first}..{first + count - 1}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 group', '2 groups'."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _not_json(o):
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def one_line_encoder(ensure_ascii: bool = False):
    """``encode(x) -> str``: what ``json.dumps(x, ensure_ascii=ensure_ascii)`` returns
    (one line, ``", "`` and ``": "`` separators), for writers that encode many small
    values. ``json.dumps`` and ``JSONEncoder.encode`` build a new C encoder on every call
    of a dict or list, which costs more than encoding a rank's few fields; this one is
    built once. No check for circular references (rtc's documents are trees)."""
    import json

    c_encode = _c_encoder(ensure_ascii)
    plain = json.JSONEncoder(ensure_ascii=ensure_ascii, check_circular=False).encode
    if c_encode is None:  # no C accelerator: the standard encoder
        return plain

    def encode(x) -> str:
        if type(x) is dict or type(x) is list:
            return "".join(c_encode(x, 0))
        return plain(x)  # a scalar (the C encoder takes containers only)

    return encode


def one_line_many_encoder(ensure_ascii: bool = False):
    """``encode_many(items) -> iterator of str``: :func:`one_line_encoder`'s text of each
    item of ``items``, which must all be dicts or lists, with no Python-level call per
    item (``map`` over the C encoder): for the ~100,000 ranks, devices and groups of a
    65,536-NPU plan."""
    from itertools import repeat

    c_encode = _c_encoder(ensure_ascii)
    if c_encode is None:
        encode = one_line_encoder(ensure_ascii)
        return lambda items: map(encode, items)
    join = "".join
    return lambda items: map(join, map(c_encode, items, repeat(0)))


def _c_encoder(ensure_ascii: bool):
    """CPython's C encoder for one-line JSON (``c_encoder(x, 0)`` returns the chunks of a
    dict or list), None without the C accelerator."""
    import json

    make = json.encoder.c_make_encoder
    if make is None:
        return None
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    return make(None, _not_json, quote, None, ": ", ", ", False, False, True)


def ip_text(ip) -> str | None:
    """``str(ip)`` (None for None); an IPv4 address through ``socket.inet_ntoa`` of its
    packed bytes: the same text, ~3x faster than ``IPv4Address.__str__`` (emitters write
    one per device, tens of thousands per run)."""
    if ip is None:
        return None
    if type(ip) is IPv4Address:
        return _ntoa(ip.packed)
    return str(ip)


#: The text of 0..255 (device ids, octets), looked up instead of formatted.
SMALL_INTS = tuple(map(str, range(256)))


def ip_text_memo():
    """A function ``text(ip) -> str(ip)`` (None for None), faster than :func:`ip_text`
    for the many addresses of one emitter run (hccl.json, plan.json, the preflight
    expectations: ~131,000 device IPs and gateways at 65,536 NPUs): an IPv4 address is
    its first three octets, computed once per /24 (a server's devices share them in most
    plans), and its last one from :data:`SMALL_INTS`; IPv6 addresses are ``str``. Each
    address object is converted once (plan.json and the preflight expectations name the
    same ones); the memo's keys are ``id``, so use one function only while the addresses
    it saw live (one topology's emitters)."""
    heads: dict[int, str] = {}
    seen: dict[int, str] = {}

    def text(ip):
        got = seen.get(id(ip))
        if got is not None:
            return got
        if type(ip) is not IPv4Address:
            return None if ip is None else str(ip)
        n = int(ip)
        head = heads.get(n >> 8)
        if head is None:
            head = heads[n >> 8] = "%d.%d.%d." % (n >> 24, n >> 16 & 255, n >> 8 & 255)
        got = seen[id(ip)] = head + SMALL_INTS[n & 255]
        return got

    return text


def clipped(text: str, limit: int = 80) -> str:
    """``text`` on one line, at most ``limit`` characters: a longer one ends in an ellipsis
    (for command text echoed in a message)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"
