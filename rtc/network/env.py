"""Reading the launch environment a job declares (``env NAME = value``): HCCL / vLLM /
Ascend runtime variables that the network model needs, with their syntax.

Pure functions; no diagnostics here (the checks in ``rtc.checks`` turn problems into them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rtc.diagnostics import Span

#: HCCL_IF_BASE_PORT's documented range [1024, 65520] and default base.
HCCL_BASE_MIN, HCCL_BASE_MAX, HCCL_DEFAULT_BASE = 1024, 65520, 60000


def env_map(job) -> dict[str, tuple[str, Span]]:
    """NAME -> (value, span of the value) for a job's ``env`` lines (the last one wins)."""
    return {name: (value, span) for name, value, span in job.env}


def cann_version(text: str | None) -> tuple[int, int] | None:
    """``8.2.RC1`` -> (8, 2); ``8.0.0`` -> (8, 0); None when unknown or unreadable."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def hccl_window_size(cann: str | None) -> tuple[int, str]:
    """How many host ports HCCL takes from its base port, and why: 16 before CANN 8.2,
    32 from 8.2 on, and 32 when the version is unknown (the larger window is the safe
    assumption)."""
    v = cann_version(cann)
    if v is None:
        return 32, "CANN version unknown, assuming the 32-port window of CANN 8.2+"
    if v < (8, 2):
        return 16, f"CANN {cann} (before 8.2) uses 16 ports"
    return 32, f"CANN {cann} (8.2 or later) uses 32 ports"


def parse_port_ranges(text: str) -> tuple[list[tuple[int, int]] | None, str | None]:
    """``60000-60050`` / ``60000,60010-60020`` -> [(lo, hi)]; ``auto`` -> ([], None).
    Returns (ranges, problem)."""
    t = text.strip()
    if t.lower() == "auto":
        return [], None
    out = []
    for item in t.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not m:
            return None, f"'{item}' is not a port or a range LOW-HIGH"
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if not (1 <= lo <= hi <= 65535):
            return None, f"'{item}' is not a port range within 1..65535"
        out.append((lo, hi))
    return out, None


@dataclass(frozen=True)
class VisibleList:
    """``ASCEND_RT_VISIBLE_DEVICES`` as the runtime reads it.

    ``ids`` are the entries the runtime uses (it stops at the first invalid token);
    ``problem`` says what is wrong (None when the whole value is valid), ``offset`` the
    0-based character offset of the problem in the value."""

    ids: tuple[int, ...]
    problem: str | None = None
    offset: int = 0


def parse_visible_devices(text: str) -> VisibleList:
    """Parse a comma-separated, no-space list of decimal ids. The runtime stops at the
    first invalid token (``1, 2`` -> ``1``); rtc reports the token and what would be used."""
    ids: list[int] = []
    pos = 0
    if text == "":
        return VisibleList((), "the value is empty (the process would see no device)", 0)
    for token in text.split(","):
        if not re.fullmatch(r"\d+", token):
            used = ",".join(str(i) for i in ids) or "nothing"
            why = ("has a space" if token.strip() != token and re.fullmatch(r"\d+", token.strip())
                   else "is empty" if token == "" else "is not a whole number")
            return VisibleList(tuple(ids), f"entry '{token}' {why}; the runtime stops reading "
                               f"there and uses only {used}", pos)
        value = int(token)
        if value in ids:
            return VisibleList(tuple(ids), f"device {value} is listed twice", pos)
        ids.append(value)
        pos += len(token) + 1
    return VisibleList(tuple(ids))


@dataclass(frozen=True)
class IfnameSpec:
    """``HCCL_SOCKET_IFNAME`` (same syntax as NCCL_SOCKET_IFNAME): a comma list of NIC
    name prefixes, ``=`` in front for exact names, ``^`` in front to exclude (``^=`` exact
    exclusions). ``problem`` is None when the value is valid."""

    exclude: bool
    exact: bool
    names: tuple[str, ...]
    problem: str | None = None

    def selects(self, nic: str) -> bool:
        """True when the NIC named ``nic`` may be chosen under this setting."""
        hit = any(nic == n if self.exact else nic.startswith(n) for n in self.names)
        return not hit if self.exclude else hit


_NAME = re.compile(r"[A-Za-z0-9_.:@-]+")


def parse_socket_ifname(text: str) -> IfnameSpec:
    """Parse ``eth``, ``=eth0``, ``^eth``, ``^=eth0``, ``eth,enp`` ... The ``^`` / ``=``
    markers apply to the whole list and come first, ``^`` before ``=``."""
    rest = text
    exclude = rest.startswith("^")
    if exclude:
        rest = rest[1:]
    exact = rest.startswith("=")
    if exact:
        rest = rest[1:]
    names = tuple(rest.split(","))
    problem = None
    if text.startswith("=^"):
        problem = "'=^' is reversed: write '^=' (exclude these exact names)"
    elif rest == "":
        problem = "no interface name after the markers"
    else:
        for n in names:
            if n == "":
                problem = "an empty entry (two commas, or a comma at an end)"
            elif n != n.strip() or " " in n:
                problem = f"'{n}' has a space; write the list without spaces, e.g. eth0,eth1"
            elif n[0] in "^=":
                problem = (f"'{n}': '^' and '=' apply to the whole list and may only appear "
                           "at its start")
            elif "*" in n or "?" in n:
                problem = f"'{n}': wildcards are not supported; a plain name already matches " \
                          "as a prefix"
            elif not _NAME.fullmatch(n):
                problem = f"'{n}' is not an interface name"
            if problem:
                break
    return IfnameSpec(exclude, exact, names, problem)


def single_ifname_problem(text: str, allow_list: bool = False) -> str | None:
    """What is wrong with a value that names interfaces literally (GLOO_SOCKET_IFNAME:
    one name or a comma list used round-robin, ``allow_list``; TP_SOCKET_IFNAME: exactly
    one name), or None. Neither understands NCCL/HCCL's ``^`` / ``=`` markers."""
    if text == "":
        return "the value is empty"
    if text[0] in "^=":
        return (f"'{text}' uses the NCCL/HCCL selection syntax ('{text[0]}'), which this "
                "variable does not understand: it takes literal interface names")
    names = text.split(",")
    if len(names) > 1 and not allow_list:
        return f"'{text}' is a list; this variable takes exactly one interface name"
    for n in names:
        if not _NAME.fullmatch(n):
            return f"'{n}' is not an interface name" if n else "an empty entry in the list"
    return None
