"""JSON paths: where a value sits in a document, as a tuple of keys and indices.

``("server_list", 1, "device", 3, "device_ip")`` is written
``server_list[1].device[3].device_ip`` (:func:`format_path`) and read back by
:func:`parse_path`. Schema findings (:mod:`rtc.schema.explain`) carry such paths; the JSON
front end (:class:`rtc.tables.jsonload.SourceMap`) turns them into line and column.
"""

from __future__ import annotations

import json
import re
from typing import Iterable, Union

PathElem = Union[str, int]
JsonPath = tuple  # tuple[str | int, ...]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PATH_TOKEN = re.compile(r"""\.?([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]""")


def format_path(path: Iterable[PathElem]) -> str:
    """``("server_list", 1, "device", 3, "device_ip")`` -> ``server_list[1].device[3].device_ip``.

    The root is ``$``. Keys that are not identifiers are written ``["key with space"]``."""
    out: list[str] = []
    for elem in path:
        if isinstance(elem, int):
            out.append(f"[{elem}]")
        elif _IDENT.match(elem):
            out.append(f".{elem}" if out else elem)
        else:
            out.append(f"[{json.dumps(elem, ensure_ascii=False)}]")
    return "".join(out) if out else "$"


def parse_path(text: str) -> JsonPath:
    """Inverse of :func:`format_path` (also accepts a leading ``$`` / ``$.``)."""
    s = text.strip()
    if s.startswith("$"):
        s = s[1:]
    out: list[PathElem] = []
    pos = 0
    while pos < len(s):
        m = _PATH_TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(f"bad JSON path {text!r} at character {pos + 1}")
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(int(m.group(2)))
        else:
            out.append(json.loads(m.group(3)))
        pos = m.end()
    return tuple(out)
