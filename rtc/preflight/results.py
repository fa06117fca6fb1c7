"""Reading a preflight results folder (written by ``preflight-<server>.sh``, see
:mod:`rtc.emit.preflight_script`): ``expect.json`` (the plan's side), ``pings.txt`` (planned pings),
``exit-codes.txt`` and one capture per check, parsed with the inventory parsers
(:func:`rtc.inventory.load_hccn_tool`; the ``$ hccn_tool -i N ...`` first line names device
and command).

``pings.txt`` and ``exit-codes.txt`` are read like the captures (a BOM, UTF-16 and stray
undecodable bytes are tolerated, the latter with a warning); one that cannot be read at
all is a problem of the folder (:attr:`ServerResults.bad`). ``expect.json`` must have the
shape :func:`rtc.emit.preflight_script.expectations` writes; a key that is missing or
malformed is a problem too, and the folder is still judged with what can be used: the
folder's name for a missing ``server``, the NPUs that have captures for unusable
``devices``, the well-formed entries of ``devices`` and ``ports``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span
from rtc.inventory._common import read_text as read_capture_text
from rtc.readfile import read_text as read_file_text


@dataclass
class Ping:
    device: int
    target: str
    peer_server: str
    peer_device: int | None
    file: str


@dataclass
class ServerResults:
    """One server's results folder."""

    folder: str
    server: str = "?"
    plan: str | None = None
    host: str | None = None
    devices: list = field(default_factory=list)    # [{"device_id", "ip", "gateway"}]
    ports: list = field(default_factory=list)      # [(lo, hi, job)]
    pings: list = field(default_factory=list)      # [Ping]
    exit_codes: dict = field(default_factory=dict)  # file -> int
    problem: str | None = None                     # unusable folder
    problem_span: Span | None = None               # where in expect.json, when known
    texts: dict = field(default_factory=dict)      # file path -> text (for reports)
    bad: list = field(default_factory=list)        # [(message, Span)]: usable folder, bad file
    diagnostics: list = field(default_factory=list)  # reader findings (RTC480 warnings)
    bandwidth: dict | None = None                  # expect.json's planned sweep, if any
    measured: object = None                        # its result (npu_bandwidth.Measured)

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)


#: A number in captured text: 1 to 20 ASCII digits (``\d`` and ``int()`` also take
#: Unicode digits such as '²' or '８', and ``int()`` refuses more than 4,300 digits). Lines
#: with anything else are passed over, like other malformed lines.
_DIGITS = re.compile(r"[0-9]{1,20}")


def _number(text: str) -> int | None:
    """``text`` as an int when it is 1 to 20 ASCII digits, else None."""
    return int(text) if _DIGITS.fullmatch(text) else None


def ping_file(device: int, ip: str) -> str:
    return f"npu{device}_ping_{ip.replace(':', '-')}.txt"


def load_results(folder: str) -> ServerResults:
    """Read ``folder``; ``problem`` says why it cannot be used (no expect.json, or not one
    of this format), ``bad`` what is wrong in a folder that can still be judged."""
    r = ServerResults(folder)
    if not os.path.isdir(folder):
        r.problem = "is not a folder" if os.path.exists(folder) else "does not exist"
        return r
    doc = _load_expect(r)
    if doc is None:
        return r
    _apply_expect(r, doc)
    if isinstance(doc.get("bandwidth"), dict):
        r.bandwidth = doc["bandwidth"]
    text = _side_file(r, "pings.txt", "the planned pings are unknown")
    for line in (text or "").splitlines():
        parts = line.split()
        dev = _number(parts[0]) if len(parts) >= 3 else None
        if dev is not None:
            peer_dev = _number(parts[3]) if len(parts) > 3 else None
            r.pings.append(Ping(dev, parts[1], parts[2], peer_dev, ping_file(dev, parts[1])))
    text = _side_file(r, "exit-codes.txt", "the exit codes of the checks are unknown")
    for line in (text or "").splitlines():
        m = re.match(r"^(\S+)\s+(-?)([0-9]{1,20})\s*$", line)
        if m:
            r.exit_codes[m.group(1)] = -int(m.group(3)) if m.group(2) else int(m.group(3))
    _check_skipped(r)
    return r


def _check_skipped(r: ServerResults) -> None:
    """Add each line of ``skipped.txt`` that is not ``WHAT<TAB>WHY<TAB>FALLBACK`` (what
    :mod:`rtc.emit.npu_bandwidth_script` writes) to ``r.bad``, naming the line."""
    text = _side_file(r, "skipped.txt", "what the AllReduce sweep skipped is unknown")
    for no, line in enumerate((text or "").splitlines(), 1):
        parts = line.split("\t")
        if line.strip() and (len(parts) != 3 or not parts[0].strip()):
            r.bad.append((f"{r.server}: skipped.txt line {no} cannot be read: {line[:60]!r} is "
                          f"not WHAT<TAB>WHY<TAB>FALLBACK ({len(parts)} tab-separated field"
                          f"{'s' if len(parts) != 1 else ''}); what it says is not used",
                          Span(r.path("skipped.txt"), no, 1)))


def _load_expect(r: ServerResults) -> dict | None:
    """The parsed expect.json, or None after setting ``r.problem``."""
    expect = r.path("expect.json")
    try:
        text = read_file_text(expect)
        doc = json.loads(text)
    except FileNotFoundError:
        r.problem = "has no expect.json (not written by an rtc preflight script, or the " \
                    "script stopped before its first check)"
        return None
    except json.JSONDecodeError as exc:
        r.problem = f"has an unreadable expect.json ({exc.msg} at line {exc.lineno}, column " \
                    f"{exc.colno})"
        r.problem_span = Span(expect, exc.lineno, exc.colno)
        r.texts[expect] = text
        return None
    except RecursionError:
        r.problem = "has an unreadable expect.json (nested too deeply)"
        return None
    except (OSError, ValueError) as exc:
        r.problem = f"has an unreadable expect.json ({getattr(exc, 'strerror', None) or exc})"
        return None
    if not isinstance(doc, dict) or doc.get("rtc_preflight") != 1:
        r.problem = "has an expect.json of another format (rtc_preflight must be 1)"
        return None
    r.texts[expect] = text
    return doc


#: The keys of expect.json (:func:`rtc.emit.preflight_script.expectations`) and what each
#: must be, in words.
_EXPECT_SHAPE = {
    "plan": "the .rtc file's name (a string)",
    "server": "the server's name (a non-empty string)",
    "host": "the host IP (a string, or null)",
    "devices": 'a list of NPUs ({"device_id": N, "ip": "...", "gateway": "..."})',
    "ports": 'a list of port windows ({"lo": N, "hi": N, "job": "..."})',
    "pings": "the number of planned pings (an integer)",
}


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_text(v, null: bool = True) -> bool:
    return (v is None and null) or isinstance(v, str)


def _apply_expect(r: ServerResults, doc: dict) -> None:
    """Take the plan's side from expect.json ``doc``; each missing or malformed key is
    added to ``r.bad`` and replaced by what the folder itself shows."""
    expect = r.path("expect.json")
    text = r.texts.get(expect)
    missing = [k for k in _EXPECT_SHAPE if k not in doc]
    fine = {k: ok for k, ok in (
        ("plan", _is_text(doc.get("plan"), null=False)),
        ("server", isinstance(doc.get("server"), str) and doc.get("server") != ""),
        ("host", _is_text(doc.get("host"))),
        ("devices", isinstance(doc.get("devices"), list)),
        ("ports", isinstance(doc.get("ports"), list)),
        ("pings", _is_count(doc.get("pings"))))}
    fallback = os.path.basename(os.path.normpath(r.folder)) or "?"
    r.server = doc["server"] if fine["server"] else fallback
    r.plan = doc["plan"] if fine["plan"] else None
    r.host = doc.get("host") if fine["host"] else None
    if fine["devices"]:
        r.devices = _devices(doc["devices"], r, expect, text)
    else:
        r.devices = [{"device_id": d, "ip": None, "gateway": None} for d in _captured_npus(r)]
    if fine["ports"]:
        r.ports = _ports(doc["ports"], r, expect, text)
    if missing:
        r.bad.append((f"{r.server}: expect.json lacks {_keys(missing)}{_instead(missing, r)}",
                      Span.whole_file(expect)))
    for key in _EXPECT_SHAPE:
        if key not in missing and not fine[key]:
            r.bad.append((f"{r.server}: expect.json: `{key}` is {_json_kind(doc[key])}, not "
                          f"{_EXPECT_SHAPE[key]}{_instead([key], r)}",
                          _key_span(expect, text, key)))


def _keys(keys: list) -> str:
    shown = [f"`{k}`" for k in keys]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _instead(keys: list, r: ServerResults) -> str:
    """What is used instead of the unusable ``keys``."""
    parts = []
    if "server" in keys:
        parts.append(f"the folder's name {r.server!r} names the server")
    if "devices" in keys:
        ids = ", ".join(str(d["device_id"]) for d in r.devices) or "none"
        parts.append(f"the NPUs with captures are judged without planned addresses ({ids})")
    if "ports" in keys:
        parts.append("the HCCL port windows are not checked")
    return "; " + "; ".join(parts) if parts else ""


def _json_kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {json.dumps(v)}"
    if isinstance(v, (int, float)):
        return f"the number {json.dumps(v)}"
    if isinstance(v, str):
        return f"the string {json.dumps(v[:40])}"
    return "a list" if isinstance(v, list) else "an object"


def _devices(items: list, r: ServerResults, expect: str, text: str | None) -> list:
    """The well-formed entries of ``devices`` (an unusable ``ip`` / ``gateway`` is dropped:
    that capture is then not compared); the others are added to ``r.bad``."""
    out = []
    for n, d in enumerate(items):
        if not isinstance(d, dict) or not _is_count(d.get("device_id")):
            what = "not an object" if not isinstance(d, dict) else \
                "without a device_id (a non-negative integer)"
            r.bad.append((f"{r.server}: expect.json: devices[{n}] is {what}; it is not "
                          "judged", _key_span(expect, text, "devices")))
            continue
        dev = {"device_id": d["device_id"], "ip": None, "gateway": None}
        for key in ("ip", "gateway"):
            if _is_text(d.get(key)):
                dev[key] = d.get(key)
            else:
                r.bad.append((f"{r.server}: expect.json: devices[{n}].{key} is "
                              f"{_json_kind(d[key])}, not an address (a string, or null); "
                              f"NPU {d['device_id']}'s {key} is not compared",
                              _key_span(expect, text, "devices")))
        out.append(dev)
    return out


def _ports(items: list, r: ServerResults, expect: str, text: str | None) -> list:
    """(lo, hi, job) of the well-formed entries of ``ports``; the others are added to
    ``r.bad``."""
    out = []
    for n, p in enumerate(items):
        if isinstance(p, dict) and _is_count(p.get("lo")) and _is_count(p.get("hi")) \
                and p["lo"] <= p["hi"] and _is_text(p.get("job")):
            out.append((p["lo"], p["hi"], p.get("job")))
            continue
        r.bad.append((f"{r.server}: expect.json: ports[{n}] is not a port window "
                      '({"lo": N, "hi": N, "job": "..."} with lo <= hi); it is not checked',
                      _key_span(expect, text, "ports")))
    return out


_CAPTURE = re.compile(r"npu([0-9]+)_(?:link|net_health|ip|gateway)\.txt")


def _captured_npus(r: ServerResults) -> list[int]:
    """The NPUs that have an hccn_tool capture in the folder."""
    try:
        names = os.listdir(r.folder)
    except OSError:
        return []
    return sorted({int(m.group(1)) for m in map(_CAPTURE.fullmatch, names) if m})


def _key_span(path: str, text: str | None, key: str) -> Span:
    """Where the top-level ``key`` of expect.json is (its first occurrence as a key: the
    format's nested keys have other names); the whole file when not found."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text or "")
    if m is None:
        return Span.whole_file(path)
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return Span(path, line, col, line, col + len(key) + 2)


def _unreadable_reason(message: str) -> str:
    """Why the capture reader could not read a file, from its finding's message."""
    if "is binary" in message:
        return "it is binary, not text"
    m = re.search(r"cannot read [^;]*?': ([^;]*)", message)
    return m.group(1) if m else "it cannot be read"


def _side_file(r: ServerResults, name: str, unknown: str) -> str | None:
    """The text of ``pings.txt`` / ``exit-codes.txt`` (None when missing or unreadable: the
    latter is added to ``r.bad``, saying what is ``unknown`` then)."""
    path = r.path(name)
    if not os.path.lexists(path):
        return None
    text, diags = read_capture_text(path)
    if text is None:
        why = _unreadable_reason(diags[0].message if diags else "")
        r.bad.append((f"{r.server}: {name} cannot be read ({why}); {unknown}",
                      Span.whole_file(path)))
        return None
    r.diagnostics.extend(keep(diags))
    r.texts[path] = text
    return text


def read_capture(r: ServerResults, name: str, device: int | None):
    """(HccnToolOutput or None when the file is missing, parser diagnostics)."""
    from rtc.inventory import load_hccn_tool

    path = r.path(name)
    if not os.path.exists(path):
        return None, []
    out, diags = load_hccn_tool(path, device=device)
    try:
        r.texts[path] = read_file_text(path, errors="replace")
    except OSError:
        pass
    return out, diags


def read_text(r: ServerResults, name: str) -> tuple[str | None, Span]:
    path = r.path(name)
    try:
        text = read_file_text(path, errors="replace")
    except OSError:
        return None, Span.whole_file(path)
    r.texts[path] = text
    return text, Span.whole_file(path)


def parse_reserved_ports(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """``60000-60031,50000`` (sysctl output, after the ``$ ...`` line) -> ranges, and the
    1-based line number of the value (None when there is none)."""
    ranges: list[tuple[int, int]] = []
    line_no = None
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("$"):
            continue
        line_no = line_no or no
        for item in s.split(","):
            item = item.strip()
            m = re.fullmatch(r"([0-9]{1,20})(?:-([0-9]{1,20}))?", item)
            if m:
                lo = int(m.group(1))
                ranges.append((lo, int(m.group(2)) if m.group(2) else lo))
    return ranges, line_no


def keep(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Parser findings worth passing on (errors and warnings)."""
    return [d for d in diags if int(d.severity) >= 1]
