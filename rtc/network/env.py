"""Reading the launch environment a job declares (``env NAME = value``): HCCL / vLLM /
Ascend runtime variables that the network model needs, with their syntax.

Pure functions; no diagnostics here (the checks in ``rtc.checks`` turn problems into them).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rtc.diagnostics import Span

#: HCCL_IF_BASE_PORT's documented range [1024, 65520] and default base.
HCCL_BASE_MIN, HCCL_BASE_MAX, HCCL_DEFAULT_BASE = 1024, 65520, 60000


#: A whole number as rtc reads one from a value: an optional '-' and 1 to 20 ASCII digits.
#: (``\d`` and ``int()`` also take Unicode digits such as '²' or '８', and ``int()``
#: refuses more than 4,300 digits.)
_WHOLE = re.compile(r"-?[0-9]{1,20}")


def whole_number(text: str) -> int | None:
    """``text`` as an int when it is an optional '-' and 1 to 20 ASCII digits, else None."""
    return int(text) if _WHOLE.fullmatch(text) else None


def _digits_note(text: str) -> str:
    """' (write ASCII digits 0-9)' when ``text`` holds a Unicode digit such as '８', else ''."""
    return " (write ASCII digits 0-9)" if any(c.isdigit() and not c.isascii() for c in text) \
        else ""


def shown_value(text: str, limit: int = 40) -> str:
    """``text`` for a message, cut to ``limit`` characters (with its length) when longer."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def env_map(job) -> dict[str, tuple[str, Span]]:
    """NAME -> (value, span of the value) for a job's ``env`` lines (the last one wins)."""
    return {name: (value, span) for name, value, span in job.env}


#: CANN release lines rtc knows, with the HCCL host-port window (HCCL_IF_BASE_PORT ..
#: + N - 1) of each and where that comes from (rtc reference ranktable-formats.md, the
#: HCCL_IF_BASE_PORT row). Lines marked "rule" had no page read: they follow the rule of
#: :func:`hccl_window_size` (16 before 8.2, 32 from 8.2).
CANN_RELEASES: tuple[tuple[tuple[int, int], int, str], ...] = (
    ((6, 3), 16, "doc: canncommercial/63RC2 ptmigr_0161, 16 ports (60000-60015)"),
    ((7, 0), 16, "rule"),
    ((8, 0), 16, "doc: canncommercial/800 envref_07_0074, 16 ports"),
    ((8, 1), 16, "rule"),
    ((8, 2), 32, "doc: canncommercial/82RC1 envref_07_0074, 32 ports"),
    ((8, 3), 32, "rule"),
    ((8, 5), 32, "doc: CANNCommunityEdition/850alpha002 hcclug_000090, 32 ports"),
    ((9, 0), 32, "doc: canncommercial/latest (9.x) envref_07_0074 and the hccl repo, 32 ports"),
)

#: A CANN version as Huawei writes it: 8.2.RC1, 8.0.0, 8.3.RC1.alpha001, 8.5.0.alpha002.
_CANN_FORM = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})(?:\.(?:[0-9]+|RC[0-9]+))?"
                        r"(?:\.(?:alpha|beta)[0-9]+)?\Z", re.I)


def cann_version(text: str | None) -> tuple[int, int] | None:
    """``8.2.RC1`` -> (8, 2); ``8.0.0`` -> (8, 0); None when unknown or unreadable."""
    if not text:
        return None
    m = _CANN_FORM.match(text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def cann_problem(text: str | None) -> str | None:
    """Why ``cann`` cannot be used to choose the HCCL port window (None when it can): not a
    version in CANN's form, or a release line rtc has no record of."""
    if not text:
        return None
    v = cann_version(text)
    if v is None:
        return f"'{text}' is not a CANN version (e.g. 8.2.RC1, 8.0.0)"
    if v not in {line for line, _, _ in CANN_RELEASES}:
        known = ", ".join(f"{a}.{b}" for (a, b), _, _ in CANN_RELEASES)
        return f"CANN {text} is not a release line rtc knows ({known})"
    return None


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
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", item)
        if not m:
            return None, f"'{shown_value(item)}' is not a port or a range LOW-HIGH" + _digits_note(item)
        lo = whole_number(m.group(1))
        hi = whole_number(m.group(2)) if m.group(2) else lo
        if lo is None or hi is None or not (1 <= lo <= hi <= 65535):
            return None, f"'{shown_value(item)}' is not a port range within 1..65535"
        out.append((lo, hi))
    return out, None


class VisibleList(NamedTuple):
    """``ASCEND_RT_VISIBLE_DEVICES`` as the runtime reads it.

    ``ids`` are the entries the runtime uses (it stops at the first invalid token);
    ``problem`` says what is wrong (None when the whole value is valid), ``offset`` the
    0-based character offset of the problem in the value."""

    ids: tuple[int, ...]
    problem: str | None = None
    offset: int = 0


def _device_id(token: str) -> int | None:
    """A device id: 1 to 20 ASCII digits, no sign."""
    return whole_number(token) if token[:1] != "-" else None


def parse_visible_devices(text: str) -> VisibleList:
    """Parse a comma-separated, no-space list of decimal ids. The runtime stops at the
    first invalid token (``1, 2`` -> ``1``); rtc reports the token and what would be used."""
    ids: list[int] = []
    pos = 0
    if text == "":
        return VisibleList((), "the value is empty (the process would see no device)", 0)
    for token in text.split(","):
        value = _device_id(token)
        if value is None:
            used = ",".join(str(i) for i in ids) or "nothing"
            why = ("has a space" if token.strip() != token and _device_id(token.strip())
                   is not None else "is empty" if token == "" else "is not a whole number"
                   + _digits_note(token))
            return VisibleList(tuple(ids), f"entry '{shown_value(token)}' {why}; the runtime stops "
                               f"reading there and uses only {used}", pos)
        if value in ids:
            return VisibleList(tuple(ids), f"device {value} is listed twice", pos)
        ids.append(value)
        pos += len(token) + 1
    return VisibleList(tuple(ids))


class IfnameSpec(NamedTuple):
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


class EnvValueRule(NamedTuple):
    """What a variable's value may be: an integer in ``[lo, hi]`` (``step``: a multiple
    of it), or one of ``choices`` (compared without case when ``nocase``); ``unit`` and
    ``source`` say what it means and where that is documented."""

    lo: int | None = None
    hi: int | None = None
    step: int = 1
    choices: tuple[str, ...] = ()
    nocase: bool = False
    unit: str = ""
    source: str = ""


_ENV = "HCCL env docs (hicann/hccl docs/zh/user_guide/hccl_env/), via rtc reference " \
       "ranktable-formats.md section 7"

#: The values HCCL accepts for the variables rtc knows the meaning of (data: one row per
#: variable, with its source).
ENV_VALUES: dict[str, EnvValueRule] = {
    "HCCL_BUFFSIZE": EnvValueRule(1, None, unit="MB per communicator buffer", source=_ENV),
    "HCCL_CONNECT_TIMEOUT": EnvValueRule(120, 7200, unit="seconds", source=_ENV),
    "HCCL_EXEC_TIMEOUT": EnvValueRule(0, 2147483647, unit="seconds (0: never)", source=_ENV),
    "HCCL_INTRA_PCIE_ENABLE": EnvValueRule(choices=("0", "1"), source=_ENV),
    "HCCL_INTRA_ROCE_ENABLE": EnvValueRule(choices=("0", "1"), source=_ENV),
    "HCCL_INTER_HCCS_DISABLE": EnvValueRule(choices=("TRUE", "FALSE"), nocase=True, source=_ENV),
    "HCCL_DETERMINISTIC": EnvValueRule(choices=("false", "true", "strict"), nocase=True,
                                       source=_ENV),
    "HCCL_WHITELIST_DISABLE": EnvValueRule(choices=("0", "1"), source=_ENV),
    "HCCL_RDMA_TC": EnvValueRule(0, 255, 4, unit="RoCE traffic class (DSCP = TC / 4)",
                                 source=_ENV),
    "HCCL_RDMA_SL": EnvValueRule(0, 7, unit="RoCE service level", source=_ENV),
    "HCCL_RDMA_TIMEOUT": EnvValueRule(5, 24, unit="exponent: 4.096 us x 2^value (A2/A3 up "
                                      "to 20)", source=_ENV),
    "HCCL_RDMA_RETRY_CNT": EnvValueRule(1, 7, unit="retries", source=_ENV),
    "HCCL_OP_EXPANSION_MODE": EnvValueRule(choices=("HOST", "HOST_TS", "AI_CPU",
                                                    "AICPU_CacheDisable", "AIV", "AICPU_TS",
                                                    "CCU_MS", "CCU_SCHED"), source=_ENV),
}


def env_value_problem(name: str, value: str) -> str | None:
    """Why ``value`` is not one HCCL accepts for ``name`` (None when it is, or when rtc has
    no rule for the variable)."""
    r = ENV_VALUES.get(name)
    if r is None:
        return None
    v = value.strip()
    if r.choices:
        ok = v.upper() in {c.upper() for c in r.choices} if r.nocase else v in r.choices
        return None if ok else f"must be one of {', '.join(r.choices)}"
    n = whole_number(v)
    if n is None:
        unit = f" ({r.unit})" if r.unit else ""
        if re.fullmatch(r"-?[0-9]+", v):
            return f"has {len(v.lstrip('-')):,} digits, far too many" + unit
        return "must be a whole number" + (_digits_note(v) or unit)
    if (r.lo is not None and n < r.lo) or (r.hi is not None and n > r.hi):
        bound = f"at least {r.lo}" if r.hi is None else f"in {r.lo}..{r.hi}"
        return f"must be {bound}" + (f" ({r.unit})" if r.unit else "")
    if n % r.step:
        return f"must be a multiple of {r.step}" + (f" ({r.unit})" if r.unit else "")
    return None
