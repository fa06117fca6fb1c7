"""Reading a preflight results folder (written by ``preflight-<server>.sh``, see
:mod:`rtc.emit.preflight_script`): ``expect.json`` (the plan's side), ``pings.txt`` (planned pings),
``exit-codes.txt`` and one capture per check, parsed with the inventory parsers
(:func:`rtc.inventory.load_hccn_tool`; the ``$ hccn_tool -i N ...`` first line names device
and command).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span


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
    texts: dict = field(default_factory=dict)      # file path -> text (for reports)

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)


def ping_file(device: int, ip: str) -> str:
    return f"npu{device}_ping_{ip.replace(':', '-')}.txt"


def load_results(folder: str) -> ServerResults:
    """Read ``folder``; ``problem`` says why it cannot be used (no or bad expect.json)."""
    r = ServerResults(folder)
    expect = r.path("expect.json")
    if not os.path.isdir(folder):
        r.problem = "is not a folder" if os.path.exists(folder) else "does not exist"
        return r
    try:
        with open(expect, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        r.problem = "has no expect.json (not written by an rtc preflight script, or the " \
                    "script stopped before its first check)"
        return r
    except (OSError, ValueError) as exc:
        r.problem = f"has an unreadable expect.json ({exc})"
        return r
    if not isinstance(doc, dict) or doc.get("rtc_preflight") != 1:
        r.problem = "has an expect.json of another format (rtc_preflight must be 1)"
        return r
    r.server = str(doc.get("server") or "?")
    r.plan = doc.get("plan")
    r.host = doc.get("host")
    r.devices = [d for d in doc.get("devices") or [] if isinstance(d, dict)]
    r.ports = [(p.get("lo"), p.get("hi"), p.get("job")) for p in doc.get("ports") or []
               if isinstance(p, dict)]
    try:
        with open(r.path("pings.txt"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[0].isdigit():
                    dev = int(parts[0])
                    peer_dev = int(parts[3]) if len(parts) > 3 and parts[3].isdigit() else None
                    r.pings.append(Ping(dev, parts[1], parts[2], peer_dev,
                                        ping_file(dev, parts[1])))
    except FileNotFoundError:
        pass
    try:
        with open(r.path("exit-codes.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^(\S+)\s+(-?\d+)\s*$", line)
                if m:
                    r.exit_codes[m.group(1)] = int(m.group(2))
    except FileNotFoundError:
        pass
    return r


def read_capture(r: ServerResults, name: str, device: int | None):
    """(HccnToolOutput or None when the file is missing, parser diagnostics)."""
    from rtc.inventory import load_hccn_tool

    path = r.path(name)
    if not os.path.exists(path):
        return None, []
    out, diags = load_hccn_tool(path, device=device)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            r.texts[path] = f.read()
    except OSError:
        pass
    return out, diags


def read_text(r: ServerResults, name: str) -> tuple[str | None, Span]:
    path = r.path(name)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
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
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
            if m:
                lo = int(m.group(1))
                ranges.append((lo, int(m.group(2)) if m.group(2) else lo))
    return ranges, line_no


def keep(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Parser findings worth passing on (errors and warnings)."""
    return [d for d in diags if int(d.severity) >= 1]
