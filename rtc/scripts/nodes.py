"""The nodes a set of scripts describes: which script (or ``## node`` section of one file)
runs on which host.

A node is identified, in this order, by the host IP the script itself gives
(``HCCL_IF_IP``, ``VLLM_HOST_IP``, MindIE's ``MIES_CONTAINER_IP``, vLLM and SGLang
``--host``, ``ray start --node-ip-address``; not ``0.0.0.0``), else by the name given with ``--node NAME=FILE``, else by the section name,
else by the file name without its extension. Scripts with the same identity are one node
(two jobs on one host). Two scripts that give one host IP but plainly run on two machines
(each starts another DP rank of a DP launch of the same size on the same NPUs, or a Ray head and a
Ray worker) stay two nodes, named by file; the lifted servers then share a host IP, which
the duplicate-host-IP rule reports at the line that set it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Span
from rtc.scripts.commands import Launch, Recognised, recognise
from rtc.scripts.shell import ShellProblem, ShellRun, read_shell

_SECTION = re.compile(r"^##\s*([A-Za-z0-9_.:-]+)\s*$")
#: Node headers as tutorials print them, words after the name allowed: ``## node-a
#: (head)``, ``# Node 1 (worker):``, ``### On node 2``, ``## atlas-01 (head)``.
_NODE_WORD = re.compile(r"^#{1,4}\s*(?:on\s+)?(?:the\s+)?(node|server)"
                        r"[\s_-]*([0-9]+|[A-Za-z][0-9]*)(?![A-Za-z0-9])\s*(?:\([^)]*\))?"
                        r"\s*[:.]?\s*$", re.I)
_ROLE_HEADER = re.compile(r"^#{2,4}\s*([A-Za-z0-9_.:-]+)\s*\((?:head|worker|master|primary|"
                          r"secondary|prefill|decode|leader|follower)[^)]*\)\s*:?\s*$", re.I)


def section_name(line: str) -> str | None:
    """The node a header line starts (``## NAME``, or a tutorial's node header with a
    role or words around the name), else None."""
    m = _SECTION.match(line)
    if m:
        return m.group(1)
    m = _NODE_WORD.match(line.strip())
    if m:
        return f"{m.group(1).lower()}-{m.group(2)}"
    m = _ROLE_HEADER.match(line.strip())
    return m.group(1) if m else None
#: Variables that give the node's own host IP. ``MIES_CONTAINER_IP`` is MindIE Server's:
#: its rank table reader takes it as the machine's address and finds its own server by it
#: (Ascend/MindIE-LLM @8b4871ad, src/config_manager/ranktable_config.cpp
#: GetContainerIPAddress / InitFromJson; docs/zh/user_guide/user_manual/
#: rank_table_file_configuration.md: it is the machine's ``server_id``).
HOST_VARS = ("HCCL_IF_IP", "VLLM_HOST_IP", "MIES_CONTAINER_IP")


@dataclass
class Unit:
    """One script (or section): its label (file name), first line, text and the name the
    user gave it (``--node`` or the section heading), with what reading it gave."""

    label: str
    text: str
    first_line: int = 1
    given_name: str | None = None
    run: ShellRun | None = None
    found: Recognised | None = None

    @property
    def stem(self) -> str:
        base = os.path.basename(self.label)
        return base.rsplit(".", 1)[0] if "." in base[1:] else base


@dataclass
class Node:
    """A node: its name, host IP (and the span that set it, and by what), and its units."""

    name: str
    host_ip: object = None
    host_span: Span | None = None
    host_var: str = ""
    units: list[Unit] = field(default_factory=list)

    @property
    def launches(self) -> list[Launch]:
        return [la for u in self.units for la in (u.found.launches if u.found else [])]


def split_sections(label: str, text: str) -> list[Unit]:
    """The units of one file: one per node section (``## NAME`` or a tutorial's node header,
    :func:`section_name`) when it has any (lines before
    the first section are read as the start of every section), else the whole file."""
    lines = text.splitlines(keepends=True)
    marks = [(k, name) for k, line in enumerate(lines) if (name := section_name(line))]
    if not marks:
        return [Unit(label, text)]
    preamble = "".join(lines[:marks[0][0]])
    out = []
    for n, (k, name) in enumerate(marks):
        end = marks[n + 1][0] if n + 1 < len(marks) else len(lines)
        body = preamble + "\n" * (k + 1 - marks[0][0]) + "".join(lines[k + 1:end]) \
            if preamble.strip() else "".join(lines[k + 1:end])
        first = 1 if preamble.strip() else k + 2
        out.append(Unit(label, body, first, name))
    return out


def read_unit(unit: Unit, loader=None) -> None:
    """Read ``unit`` as shell and recognise its launches (filled in place)."""
    unit.run = read_shell(unit.label, unit.text, loader, first_line=unit.first_line)

    def reread(word, env):
        inner = read_shell(word.span.file, word.text, loader, env=dict(env))
        # spans of `bash -c` words: the string's own span (columns inside it are not kept)
        for c in inner.commands:
            c.span = word.span
            c.words = [type(w)(w.text, word.span, w.unresolved) for w in c.words]
        return inner.commands

    unit.found = recognise(unit.run.commands, reread)
    for la in unit.found.launches:
        for word in la.env_files:
            problem = _env_file(la, word, unit.label, loader)
            if problem is not None:
                unit.run.problems.append(problem)


def _env_file(la: Launch, word, label: str, loader) -> ShellProblem | None:
    """The ``docker run --env-file FILE`` lines (``NAME=VALUE``, ``NAME`` passes the host's
    value, ``#`` comments; docker's own format: no quotes, no expansion) added to the
    container's environment where ``-e`` did not set the name. Returns the RTC701 problem
    of a file that cannot be read here (None when it was read)."""
    from rtc.scripts.shell import Setting, load_file, path_from_script

    path = path_from_script(word.text, label)
    data, why = (loader or load_file)(path)
    if data is None:
        return ShellProblem("source", f"docker run --env-file {word.text}: {path}: {why}; the "
                            "variables it sets are not known", word.span)
    text = data.decode("utf-8", errors="replace")
    for k, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        if name and name not in la.env:
            la.env[name] = Setting(name, value, Span(path, k, 1), True) if eq else None
    la.env = {n: s for n, s in la.env.items() if s is not None}
    return None


def _ip(text: str | None):
    if not text:
        return None
    try:
        ip = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    return None if ip.is_unspecified else ip


def unit_host(unit: Unit) -> tuple[object, Span | None, str]:
    """(host IP, span, what gave it) of a unit, or (None, None, "")."""
    settings = unit.run.settings if unit.run else {}
    for var in HOST_VARS:
        s = settings.get(var)
        if s is not None and _ip(s.value):
            return _ip(s.value), s.span, var
    for la in unit.found.launches if unit.found else []:
        for var in HOST_VARS:
            s = la.env.get(var)
            if s is not None and _ip(s.value):
                return _ip(s.value), s.span, var
        flag = "--host" if la.kind in ("vllm", "sglang") else \
            "--node-ip-address" if la.kind == "ray" else None
        if flag and _ip(la.value(flag)):
            f = la.flags[flag]
            return _ip(f.value), f.value_span or f.span, flag
    return None, None, ""


def _two_machines(a: Unit, b: Unit) -> bool:
    """Whether two units with one host IP plainly run on two machines."""
    la, lb = a.found.launches, b.found.launches
    ray_a = {("head" if x.has("--head") else "worker") for x in la if x.kind == "ray"}
    ray_b = {("head" if x.has("--head") else "worker") for x in lb if x.kind == "ray"}
    if ray_a and ray_b and ray_a != ray_b:
        return True
    for x in la:
        for y in lb:
            # ranks of one DP group on the same NPUs (a worker that leaves out
            # --data-parallel-address is still the head's worker: RTC709)
            if x.kind == y.kind == "vllm" and x.value("--data-parallel-size") and \
                    x.value("--data-parallel-size") == y.value("--data-parallel-size") \
                    and x.value("--data-parallel-start-rank") != \
                    y.value("--data-parallel-start-rank") and _same_devices(x, y):
                return True
    return False


def _same_devices(x: Launch, y: Launch) -> bool:
    a = x.env.get("ASCEND_RT_VISIBLE_DEVICES")
    b = y.env.get("ASCEND_RT_VISIBLE_DEVICES")
    return a is None or b is None or \
        bool(set(a.value.split(",")) & set(b.value.split(",")))


def group_nodes(units: list[Unit]) -> list[Node]:
    """The nodes of ``units`` (read already), in the order they first appear."""
    nodes: dict[object, Node] = {}
    taken: set[str] = set()
    for u in units:
        ip, span, var = unit_host(u)
        key = ip if ip is not None else (u.given_name or u.stem)
        node = nodes.get(key)
        if node is not None and ip is not None and any(_two_machines(o, u) for o in node.units):
            key = u.given_name or u.stem
            node = nodes.get(key)
        if node is None:
            name = u.given_name or u.stem
            node = nodes[key] = Node(_unique(name, taken), ip, span, var)
            taken.add(node.name)
        node.units.append(u)
    return list(nodes.values())


def _unique(name: str, taken: set) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}-{k}" in taken:
        k += 1
    return f"{name}-{k}"


def problems_of(units: list[Unit]) -> list[ShellProblem]:
    """Every problem met while reading ``units`` (each once)."""
    out, seen = [], set()
    for u in units:
        for p in u.run.problems if u.run else []:
            if (p.kind, p.span) not in seen:
                seen.add((p.kind, p.span))
                out.append(p)
    return out


__all__ = ["Unit", "Node", "split_sections", "read_unit", "group_nodes", "unit_host",
           "problems_of"]
