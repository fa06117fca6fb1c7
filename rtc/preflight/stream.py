"""Preflight results carried in a log: what Slurm's per-task output files and ``kubectl
logs`` bring back when the result folders stay on the nodes.

Format (written by the fleet scripts, :data:`DUMP`): after ``preflight-<server>.sh`` has
filled its results folder, every line of every file in it is printed as ::

    @rtc-preflight@ SERVER FILE TEXT

one line each, so lines of several nodes may interleave (``srun`` forwards whole lines)
and a prefix before the marker is ignored (``srun --label``'s ``0: ``, ``kubectl logs
--prefix``'s ``[pod/NAME/CONTAINER] ``). SERVER and FILE have no spaces or slashes.
:func:`unpack` writes the folders back, one per server, for :mod:`rtc.preflight.results` /
:mod:`rtc.preflight.nccl`.
"""

from __future__ import annotations

import os
import re

from rtc.readfile import read_bytes, read_text

MARKER = "@rtc-preflight@"

#: The shell lines that print the folder ``$results`` of server ``$server`` in this format
#: (awk adds the prefix; a last line without a newline is printed with one).
DUMP = ('for f in "$results"/*; do [ -f "$f" ] && awk -v p="' + MARKER
        + ' $server ${f##*/} " \'{ print p $0 }\' "$f"; done')

_LINE = re.compile(re.escape(MARKER) + r" ([^\s/]+) ([^\s/]+) ?(.*)$")


def is_log(path: str) -> bool:
    """True when ``path`` is a file holding at least one result line."""
    if not os.path.isfile(path):
        return False
    try:
        return MARKER.encode() in read_bytes(path)
    except OSError:     # too large, or gone: not a log rtc reads
        return False


#: Names a SERVER or FILE may not be: they would leave the folder :func:`unpack` writes.
_NOT_NAMES = (".", "..")


def scan(text: str) -> tuple[dict[str, dict[str, list[str]]], int]:
    """``({server: {file: [lines]}}, rejected)``: the result lines of ``text`` in order,
    and how many lines carry the marker but are rejected (no FILE, a name with a slash,
    or SERVER / FILE ``.`` or ``..``). Other lines are skipped. Raises nothing."""
    out: dict[str, dict[str, list[str]]] = {}
    rejected = 0
    for line in text.splitlines():
        at = line.find(MARKER)
        if at < 0:
            continue
        m = _LINE.match(line, at)
        if m is None or m.group(1) in _NOT_NAMES or m.group(2) in _NOT_NAMES:
            rejected += 1
            continue
        out.setdefault(m.group(1), {}).setdefault(m.group(2), []).append(m.group(3))
    return out, rejected


def split(text: str) -> dict[str, dict[str, list[str]]]:
    """``{server: {file: [lines]}}`` of the result lines in ``text`` (:func:`scan`)."""
    return scan(text)[0]


def why_unusable(path: str) -> str | None:
    """None when the log ``path`` carries at least one usable result line; else why not
    (all its result lines rejected, :func:`scan`). Raises OSError when it cannot be read."""
    found, rejected = scan(read_text(path, errors="replace"))
    if found:
        return None
    lines = "line" if rejected == 1 else "lines"
    return (f"it carries no usable preflight results: its {rejected} result {lines} "
            f"({MARKER} SERVER FILE TEXT) {'was' if rejected == 1 else 'were'} rejected "
            f"(no FILE, a slash in SERVER or FILE, or a name '.' or '..', which would "
            f"leave the results folder)")


def unpack(path: str, into: str) -> list[tuple[str, str]]:
    """Write the result folders carried in the log ``path`` into ``into/SERVER``; returns
    ``[(server, folder)]`` in the order the servers first appear. Raises OSError when the
    log cannot be read or a folder written."""
    found = split(read_text(path, errors="replace"))
    out = []
    for server, files in found.items():
        folder = os.path.join(into, server)
        os.makedirs(folder, exist_ok=True)
        for name, lines in files.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write("".join(x + "\n" for x in lines))
        out.append((server, folder))
    return out
