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
    seen: set[int] = set()
    pos = 0
    if text == "":
        return VisibleList((), "the value is empty (the process would see no device)", 0)
    for token in text.split(","):
        value = _device_id(token)
        if value is None:
            used = f"uses only {','.join(str(i) for i in ids)}" if ids else \
                "sees no device"
            why = ("has a space" if token.strip() != token and _device_id(token.strip())
                   is not None else "is empty" if token == "" else "is not a whole number"
                   + _digits_note(token))
            return VisibleList(tuple(ids), f"entry '{shown_value(token)}' {why}; the runtime stops "
                               f"reading there and {used}", pos)
        if value in seen:
            return VisibleList(tuple(ids), f"device {value} is listed twice", pos)
        ids.append(value)
        seen.add(value)
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
    of it), or one of ``choices`` (compared without case when ``nocase``), or of a
    ``kind``: ``ports`` (ports, ranges, ``auto``), ``retry`` (``L1:0,L2:1``), ``text``
    (at most ``max_len`` characters), ``algo`` (HCCL_ALGO's syntax, judged by the check
    with :func:`rtc.cost.hccl_algo.parse_hccl_algo`). ``chip_ranges`` replace ``lo`` /
    ``hi`` on some chips (the preset's ``chip``). ``meaning``, ``unit``, ``default`` and
    ``source`` are what `rtc explain NAME` prints."""

    lo: int | None = None
    hi: int | None = None
    step: int = 1
    choices: tuple[str, ...] = ()
    nocase: bool = False
    unit: str = ""
    source: str = ""
    meaning: str = ""
    default: str = ""
    kind: str = ""
    max_len: int | None = None
    chip_ranges: tuple[tuple[str, int, int], ...] = ()

    def bounds(self, chip: str | None = None) -> tuple[int | None, int | None]:
        """(lo, hi) on ``chip`` (the preset's chip name; None: the general range)."""
        for name, lo, hi in self.chip_ranges:
            if name == chip:
                return lo, hi
        return self.lo, self.hi


_ENV = "HCCL env docs (hicann/hccl docs/zh/user_guide/hccl_env/), via rtc reference " \
       "ranktable-formats.md section 7"
_DOC = "hicann/hccl docs/zh/user_guide/hccl_env/{}.md"
_CODE = "hicann/hccl src/common/alg_env_config.cc"

#: The values HCCL accepts for the variables rtc knows the meaning of (data: one row per
#: variable, with its source). Every HCCL variable of rtc.checks.socket_env.KNOWN_HCCL has
#: a row; HCCL_IF_BASE_PORT / HCCL_HOST_SOCKET_PORT_RANGE are judged with the port plan
#: (RTC441) and HCCL_IF_IP / HCCL_SOCKET_IFNAME by RTC450 / RTC453, so their rows here only
#: explain them.
ENV_VALUES: dict[str, EnvValueRule] = {
    "HCCL_BUFFSIZE": EnvValueRule(
        1, None, unit="MB per communicator buffer", source=_DOC.format("HCCL_BUFFSIZE"),
        default="200",
        meaning="size of each communicator's shared data buffer; every communicator takes "
                "2 x HCCL_BUFFSIZE of device memory (send and receive); a collective larger "
                "than the buffer may run slower"),
    "HCCL_CONNECT_TIMEOUT": EnvValueRule(
        120, 7200, unit="seconds", source=_ENV, default="120",
        meaning="how long link setup between devices may take (the effective wait is the "
                "value + 20 s)"),
    "HCCL_EXEC_TIMEOUT": EnvValueRule(
        0, 2147483647, unit="seconds (0: never)", source=_ENV, default="1836",
        chip_ranges=(("Ascend910", 1, 17340),),
        meaning="how long devices wait for each other while a collective runs (910A: "
                "(0, 17340], rounded down to a multiple of 68 s; AIV mode: up to 1091)"),
    "HCCL_INTRA_PCIE_ENABLE": EnvValueRule(
        choices=("0", "1"), source=f"{_DOC.format('HCCL_INTRA_PCIE_ENABLE')}; {_CODE} "
        "ParseIntraLinkType", default="1 when neither it nor HCCL_INTRA_ROCE_ENABLE is set",
        meaning="use the NPUs' direct links inside a server, not RoCE (HCCL's docs call this "
                "mode PCIe; HCCL only records whether RoCE is on, so on a server whose NPUs "
                "HCCS joins the traffic goes over HCCS); with HCCL_INTRA_ROCE_ENABLE it picks "
                "the intra-server link (both 1, or one set to 0 alone, is refused: RTC227); "
                "documented as effective on the Atlas 300T Pro (910) and Atlas 200T A2 Box16, "
                "not on A3 / Ascend 950"),
    "HCCL_INTRA_ROCE_ENABLE": EnvValueRule(
        choices=("0", "1"), source=f"{_DOC.format('HCCL_INTRA_ROCE_ENABLE')}; {_CODE} "
        "ParseIntraLinkType", default="0",
        meaning="use RoCE between the NPUs of one server (then every NPU needs a device_ip and "
                "a working RoCE link even on one server); on A3 it applies only to "
                "LLM-DataDist; with HCCL_INTRA_PCIE_ENABLE=1 and this 0, vllm-ascend turns on "
                "hierarchical MC2 on A2"),
    "HCCL_INTER_HCCS_DISABLE": EnvValueRule(
        choices=("TRUE", "FALSE"), nocase=True, source=_DOC.format("HCCL_INTER_HCCS_DISABLE"),
        default="FALSE",
        meaning="A3 super pods: TRUE sends the traffic between the servers of one super pod "
                "over RoCE (RDMA) instead of HCCS / UB (SDMA); not supported on A2, 910A or "
                "Ascend 950"),
    "HCCL_DETERMINISTIC": EnvValueRule(
        choices=("false", "true", "strict"), nocase=True, source=_ENV, default="false",
        meaning="deterministic reductions (strict: also a fixed reduction order; rank size "
                ">= 3, symmetric multi-node only)"),
    "HCCL_WHITELIST_DISABLE": EnvValueRule(
        choices=("0", "1"), source=_ENV, default="1",
        meaning="1: no check of peers against an IP whitelist; 0: check against "
                "HCCL_WHITELIST_FILE"),
    "HCCL_WHITELIST_FILE": EnvValueRule(
        kind="text", max_len=4096, source=_ENV, default="unset",
        meaning="path of the JSON whitelist ({\"host_ip\": [...]}) read when "
                "HCCL_WHITELIST_DISABLE=0"),
    "HCCL_RDMA_TC": EnvValueRule(
        0, 255, 4, unit="RoCE traffic class (DSCP = TC / 4)", source=_ENV, default="132",
        meaning="traffic class of HCCL's RoCE packets; must match the switches' PFC / ECN "
                "queue"),
    "HCCL_RDMA_SL": EnvValueRule(
        0, 7, unit="RoCE service level", source=_ENV, default="4",
        meaning="service level (priority) of HCCL's RoCE packets; must match the switch PFC "
                "priority"),
    "HCCL_RDMA_TIMEOUT": EnvValueRule(
        5, 24, unit="exponent: retransmit timeout 4.096 us x 2^value",
        source=_DOC.format("HCCL_RDMA_TIMEOUT"), default="20",
        chip_ranges=(("Ascend910B", 5, 20), ("Ascend910_93", 5, 20), ("Ascend950", 0, 31)),
        meaning="RoCE NIC retransmission timeout coefficient (A2 / A3: 5..20; 910A: 5..24; "
                "Ascend 950 with a custom RDMA NIC: 0..31)"),
    "HCCL_RDMA_RETRY_CNT": EnvValueRule(
        1, 7, unit="retries", source=_ENV, default="7",
        meaning="how often the RoCE NIC retransmits before the link is declared failed"),
    "HCCL_RDMA_QPS_PER_CONNECTION": EnvValueRule(
        1, 32, unit="queue pairs per rank pair (8 or fewer advised)",
        source=_DOC.format("HCCL_RDMA_QPS_PER_CONNECTION"), default="1",
        meaning="RoCE queue pairs between two ranks; data is spread over them (single-op "
                "mode only; more than 8 costs memory without a gain)"),
    "HCCL_MULTI_QP_THRESHOLD": EnvValueRule(
        1, 8192, unit="KB per queue pair", source=_DOC.format("HCCL_MULTI_QP_THRESHOLD"),
        default="512",
        meaning="least data each queue pair carries when several are used; HCCL uses fewer "
                "queue pairs for smaller messages"),
    "HCCL_RDMA_PCIE_DIRECT_POST_NOSTRICT": EnvValueRule(
        choices=("TRUE", "FALSE"), nocase=True,
        source=_DOC.format("HCCL_RDMA_PCIE_DIRECT_POST_NOSTRICT"), default="FALSE",
        meaning="A2, multi-server, host pages other than 4 KB: submit RDMA work over PCIe "
                "Direct instead of HDC (1 MB more device huge-page memory per link)"),
    "HCCL_RDMA_QP_PORT_CONFIG_PATH": EnvValueRule(
        kind="text", max_len=4096, source=_DOC.format("HCCL_RDMA_QP_PORT_CONFIG_PATH"),
        default="unset", meaning="path of the file giving each queue pair's source port"),
    "HCCL_NPU_SOCKET_PORT_RANGE": EnvValueRule(
        kind="ports", source=_DOC.format("HCCL_NPU_SOCKET_PORT_RANGE"), default="16666",
        meaning="NPU-side listen ports (communicators built from root info): ports, ranges "
                "LOW-HIGH joined by ',', or auto; every card of a communicator must set it "
                "if one does"),
    "HCCL_HOST_SOCKET_PORT_RANGE": EnvValueRule(
        kind="ports", source=_ENV, default="unset (HCCL_IF_BASE_PORT's window)",
        meaning="host-side listen ports, replacing the HCCL_IF_BASE_PORT window (judged with "
                "the port plan, RTC441)"),
    "HCCL_IF_BASE_PORT": EnvValueRule(
        HCCL_BASE_MIN, HCCL_BASE_MAX, unit="first host port", source=_ENV,
        default="60000 (16 ports before CANN 8.2, 32 from 8.2)",
        meaning="first port of the host-side window HCCL listens in when communicators are "
                "built from root info (judged with the port plan, RTC441)"),
    "HCCL_IF_IP": EnvValueRule(
        kind="text", max_len=64, source=_ENV, default="unset",
        meaning="host IP HCCL uses to reach the root node (one address; wins over "
                "HCCL_SOCKET_IFNAME)"),
    "HCCL_SOCKET_IFNAME": EnvValueRule(
        kind="text", max_len=4096, source=_ENV, default="unset",
        meaning="host NIC names to take the host IP from (NCCL_SOCKET_IFNAME's syntax: "
                "prefixes, '=' exact, '^' exclude; judged by RTC453)"),
    "HCCL_SOCKET_FAMILY": EnvValueRule(
        choices=("AF_INET", "AF_INET6"), source=_DOC.format("HCCL_SOCKET_FAMILY"),
        default="AF_INET",
        meaning="IP version of the NIC HCCL_SOCKET_IFNAME selects (and of the device NIC, "
                "where the device has that version)"),
    "HCCL_OP_EXPANSION_MODE": EnvValueRule(
        choices=("HOST", "HOST_TS", "AI_CPU", "AICPU_CacheDisable", "AIV", "AICPU_TS",
                 "CCU_MS", "CCU_SCHED"), source=_ENV,
        default="A2: HOST; A3: AI_CPU; Ascend 950: AICPU_TS",
        meaning="where collectives are expanded into tasks (host, AI CPU, vector cores)"),
    "HCCL_ALGO": EnvValueRule(
        kind="algo", source=f"{_DOC.format('HCCL_ALGO')}; {_CODE} ParseAlgoString",
        default="unset (HCCL chooses)",
        meaning="forces the algorithm per level, e.g. level0:NA;level1:ring or "
                "allreduce=level0:NA;level1:H-D_R/allgather=level0:NA;level1:NHR"),
    "HCCL_LOGIC_SUPERPOD_ID": EnvValueRule(
        kind="text", max_len=127, source=_ENV, default="\"\" (the physical super pod id)",
        meaning="A3, communicators built from root info: this process's logical super pod "
                "(ignored with a rank table)"),
    "HCCL_OP_RETRY_ENABLE": EnvValueRule(
        kind="retry", source=_DOC.format("HCCL_OP_RETRY_ENABLE"), default="L1:0,L2:0",
        meaning="A3: re-run a collective after an SDMA / RDMA error, per level (L1 between "
                "servers, L2 between super pods; 0 or 1); needs HCCL_OP_EXPANSION_MODE=AI_CPU "
                "and host_ip in the rank table"),
    "HCCL_DIAGNOSE_ENABLE": EnvValueRule(
        choices=("0", "1"), source=_DOC.format("HCCL_DIAGNOSE_ENABLE"), default="0",
        meaning="keep details of the last 2,000 operators for the log when a task fails "
                "(costs some speed)"),
    "HCCL_ENTRY_LOG_ENABLE": EnvValueRule(
        choices=("0", "1"), source=f"{_CODE} ParseEntryLogEnable", default="0",
        meaning="log every collective's entry (0 or 1)"),
}

#: The variables whose values other rules judge (RTC441 with the port plan, RTC450, RTC453):
#: RTC458 leaves them alone.
JUDGED_ELSEWHERE = ("HCCL_IF_BASE_PORT", "HCCL_HOST_SOCKET_PORT_RANGE", "HCCL_IF_IP",
                    "HCCL_SOCKET_IFNAME")


def intra_link(env: dict) -> tuple[str, str | None]:
    """The intra-server link HCCL picks from ``HCCL_INTRA_PCIE_ENABLE`` /
    ``HCCL_INTRA_ROCE_ENABLE`` (``env``: NAME -> value, unset names absent), and why the
    pair is refused (None when accepted), following HCCL's ParseIntraLinkType (hicann/hccl
    src/common/alg_env_config.cc): both unset, (1, -), (1, 0), (0, 0) -> ``pcie``; (0, 1),
    (-, 1) -> ``roce``; (1, 1), (0, -), (-, 0) are refused (EI0001 at start-up). Values
    other than 0 / 1 are RTC458's: they give ``("pcie", None)`` here."""
    pcie, roce = env.get("HCCL_INTRA_PCIE_ENABLE"), env.get("HCCL_INTRA_ROCE_ENABLE")
    pcie = None if pcie is None else pcie.strip()
    roce = None if roce is None else roce.strip()
    if any(v is not None and v not in ("0", "1") for v in (pcie, roce)):
        return "pcie", None
    if pcie == "1" and roce == "1":
        return "pcie", ("HCCL_INTRA_PCIE_ENABLE and HCCL_INTRA_ROCE_ENABLE are both 1: HCCL "
                        "cannot use the NPUs' direct links and RoCE inside a server at once")
    if pcie == "0" and roce is None:
        return "pcie", ("HCCL_INTRA_PCIE_ENABLE=0 without HCCL_INTRA_ROCE_ENABLE: HCCL refuses "
                        "to turn PCIe off without turning RoCE on")
    if pcie is None and roce == "0":
        return "pcie", ("HCCL_INTRA_ROCE_ENABLE=0 without HCCL_INTRA_PCIE_ENABLE: HCCL refuses "
                        "it (set HCCL_INTRA_PCIE_ENABLE too, or drop the line)")
    return ("roce" if roce == "1" else "pcie"), None


def env_value_problem(name: str, value: str, chip: str | None = None) -> str | None:
    """Why ``value`` is not one HCCL accepts for ``name`` on ``chip`` (the preset's chip
    name; None: the general range), or None when it is, when rtc has no rule for the
    variable, or when the rule's ``kind`` is ``algo`` (the check parses HCCL_ALGO)."""
    r = ENV_VALUES.get(name)
    if r is None or r.kind == "algo":
        return None
    v = value.strip()
    if r.kind:
        return _kind_problem(r, v)
    if r.choices:
        ok = v.upper() in {c.upper() for c in r.choices} if r.nocase else v in r.choices
        return None if ok else f"must be one of {', '.join(r.choices)}"
    n = whole_number(v)
    if n is None:
        unit = f" ({r.unit})" if r.unit else ""
        if re.fullmatch(r"-?[0-9]+", v):
            return f"has {len(v.lstrip('-')):,} digits, far too many" + unit
        return "must be a whole number" + (_digits_note(v) or unit)
    lo, hi = r.bounds(chip)
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        bound = f"at least {lo}" if hi is None else f"in {lo}..{hi}"
        on = f" on {chip}" if chip and (lo, hi) != (r.lo, r.hi) else ""
        return f"must be {bound}{on}" + (f" ({r.unit})" if r.unit else "")
    if n % r.step:
        return f"must be a multiple of {r.step}" + (f" ({r.unit})" if r.unit else "")
    return None


_RETRY_ITEM = re.compile(r"L([12]):([01])\Z")


def _kind_problem(r: EnvValueRule, v: str) -> str | None:
    """The problem of a value of a ``kind`` rule (ports, retry, text)."""
    if r.kind == "ports":
        _ranges, problem = parse_port_ranges(v)
        return None if problem is None else problem + " (ports, LOW-HIGH ranges joined by ',', " \
            "or auto)"
    if r.kind == "retry":
        items = v.split(",")
        seen = set()
        for item in items:
            m = _RETRY_ITEM.match(item.strip())
            if not m:
                return f"'{shown_value(item)}' is not L1:0/1 or L2:0/1 (e.g. \"L1:0,L2:1\")"
            if m.group(1) in seen:
                return f"L{m.group(1)} is given twice"
            seen.add(m.group(1))
        return None
    if r.max_len is not None and len(v) > r.max_len:
        return f"is {len(v):,} characters long; at most {r.max_len}"
    if v == "":
        return "is empty"
    return None
