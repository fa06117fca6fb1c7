"""Socket and communication environment of a job (RTC452-RTC455, RTC457): interface
selection variables, variables HCCL does not read, and names a shell cannot export."""

from __future__ import annotations

import difflib
import re

from rtc.diagnostics import Span, error, note, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.network.env import env_map, parse_socket_ifname, single_ifname_problem
from rtc.rules import rule

SINGLE_IFNAME = rule("RTC452", "socket-ifname-not-a-name", "error",
                     "GLOO_SOCKET_IFNAME / TP_SOCKET_IFNAME is not a plain interface name.", """
    What: GLOO_SOCKET_IFNAME or TP_SOCKET_IFNAME written with NCCL/HCCL selection syntax
    (`^lo`, `=eth0`) or, for TP_SOCKET_IFNAME, a list. Gloo accepts literal names (a comma
    list is used round-robin); TensorPipe takes exactly one.
    Why: they are looked up literally: `^lo` is taken as an interface called "^lo", which
    does not exist, and torch.distributed fails with "Unable to find address for: ^lo" or
    hangs in the Gloo rendezvous.
    Example: `env GLOO_SOCKET_IFNAME = "^lo,docker"`.
    Fix: name the NIC, e.g. `env GLOO_SOCKET_IFNAME = eno0` (the server's `nic`).""")
BAD_HCCL_IFNAME = rule("RTC453", "bad-hccl-socket-ifname", "error",
                       "HCCL_SOCKET_IFNAME does not follow its selection syntax.", """
    What: HCCL_SOCKET_IFNAME is a comma list of interface-name prefixes, optionally led by
    `=` (exact names) and/or `^` (exclude), `^` first: `eth`, `=eth0`, `^docker,lo`,
    `^=eth0`. Spaces, empty entries, markers inside the list (`eth0,^lo`), `=^` and
    wildcards are wrong.
    Why: HCCL matches nothing (or everything) and falls back to the first NIC by name
    order, which may not reach the other nodes: the root-info exchange times out.
    Example: `env HCCL_SOCKET_IFNAME = "eth0, eth1"`.
    Fix: e.g. `env HCCL_SOCKET_IFNAME = "=eno0"`, or leave it out (rtc sets HCCL_IF_IP).
    On NVIDIA GPU servers the same rule judges NCCL_SOCKET_IFNAME (same syntax).""")
IFNAME_MISMATCH = rule("RTC454", "ifname-not-server-nic", "warning",
                       "A socket interface variable does not select the server's declared NIC.", """
    What: GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME or HCCL_SOCKET_IFNAME (NCCL_SOCKET_IFNAME on
    NVIDIA GPU servers) names (or selects) interfaces that do not include the `nic`
    declared for a server of the job.
    Why: bootstrap traffic then leaves through another interface (or none on that server),
    and the nodes cannot reach each other's sockets.
    Example: `env GLOO_SOCKET_IFNAME = eth0` for servers with `nic eno0`.
    Fix: use the declared NIC, or correct `nic`.""")
NOT_READ = rule("RTC455", "env-not-read-by-hccl", "note",
                "An environment variable that HCCL does not read.", """
    What: e.g. HCCL_P2P_DISABLE (an NCCL setting copied over; HCCL does not parse it), or
    NCCL_* variables (notes), or a misspelt HCCL_* name: one close to an HCCL variable rtc
    knows (its own rules, or HCCL's documented list) and not itself one of them (a
    warning). An HCCL_* name close to none is left alone: it may be a variable of a newer
    CANN.
    Why: nothing changes at run time, which is surprising when the variable was meant to
    fix something; a misspelt name leaves the setting it was meant for at its default
    (HCCL reads only exact names and says nothing about others).
    Example: `env HCCL_P2P_DISABLE = 1`, `env NCCL_SOCKET_IFNAME = eno0`,
    `env HCCL_BUFFSIZ = 100` (a warning: did you mean HCCL_BUFFSIZE?).
    Fix: remove it, correct the spelling, or use the HCCL equivalent (HCCL_SOCKET_IFNAME,
    HCCL_INTRA_ROCE_ENABLE ...). On NVIDIA GPU servers the other way round: HCCL_* /
    ASCEND_* variables are not read by NCCL or CUDA.""", also={"warning": "a misspelt HCCL_* name, which leaves a setting at its default"})

BAD_ENV_NAME = rule("RTC457", "bad-env-name", "error",
                    "An `env` name is not a valid environment variable name.", """
    What: an `env NAME = value` line whose NAME is not letters, digits and underscores
    starting with a letter or underscore ([A-Za-z_][A-Za-z0-9_]*), e.g. `1FOO`, `FOO-BAR`,
    `MY.VAR`.
    Why: the env file and launch script write `export NAME=value`; bash rejects the line
    with "not a valid identifier" and the launch aborts before vLLM starts.
    Example: `env 1FOO-BAR = x`.
    Fix: rename the variable, e.g. `env FOO_BAR = x`.""")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: HCCL variables in the reference (ranktable-formats.md section 7) and common companions.
KNOWN_HCCL = (
    "HCCL_IF_IP", "HCCL_SOCKET_IFNAME", "HCCL_SOCKET_FAMILY", "HCCL_IF_BASE_PORT",
    "HCCL_HOST_SOCKET_PORT_RANGE", "HCCL_NPU_SOCKET_PORT_RANGE", "HCCL_CONNECT_TIMEOUT",
    "HCCL_EXEC_TIMEOUT", "HCCL_BUFFSIZE", "HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE",
    "HCCL_INTER_HCCS_DISABLE", "HCCL_OP_EXPANSION_MODE", "HCCL_DETERMINISTIC",
    "HCCL_WHITELIST_DISABLE", "HCCL_WHITELIST_FILE", "HCCL_RDMA_TC", "HCCL_RDMA_SL",
    "HCCL_RDMA_TIMEOUT", "HCCL_RDMA_RETRY_CNT", "HCCL_RDMA_QPS_PER_CONNECTION",
    "HCCL_RDMA_QP_PORT_CONFIG_PATH", "HCCL_RDMA_PCIE_DIRECT_POST_NOSTRICT",
    "HCCL_MULTI_QP_THRESHOLD", "HCCL_LOGIC_SUPERPOD_ID", "HCCL_OP_RETRY_ENABLE",
    "HCCL_ALGO", "HCCL_DIAGNOSE_ENABLE", "HCCL_ENTRY_LOG_ENABLE",
)
#: HCCL variables of HCCL's documented list that rtc has no rule for: real, so never taken
#: for misspellings (hicann/hccl docs/zh/user_guide/hccl_env/*.md; HCCL_USE_NEW_SELECTOR:
#: src/common/alg_env_config.cc ParseNewSelector).
DOCUMENTED_HCCL = (
    "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO", "HCCL_DEBUG_CONFIG", "HCCL_DFS_CONFIG",
    "HCCL_HOST_RDMA_UDP_PORTS_LIST", "HCCL_OP_RETRY_PARAMS", "HCCL_UB_MULTI_CHANNEL_NUM",
    "HCCL_USE_NEW_SELECTOR",
)
_NCCL_EQUIVALENT = {"NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME", "NCCL_BUFFSIZE": "HCCL_BUFFSIZE",
                    "NCCL_DEBUG": "ASCEND_GLOBAL_LOG_LEVEL"}


def check(topo: Topology, plan: Plan):
    for job in topo.jobs:
        for name, _value, span in job.env:
            if not _ENV_NAME.match(name):
                yield error(BAD_ENV_NAME, f"job {job.name}: env name '{name}' is not a valid "
                            "environment variable name; the launch's `export` line fails with "
                            "\"not a valid identifier\"", _name_span(topo, name, span),
                            subject=f"job {job.name}",
                            hint=f"use letters, digits and '_', not starting with a digit, "
                                 f"e.g. `env {_suggest(name)} = ...`")
        env = env_map(job)
        servers = [p.server for p in job.placements]
        # every line, not the last per name: lifted scripts (rtc lint) give one per node
        for var, text, span in [line for line in job.env
                                if line.name in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")]:
            problem = single_ifname_problem(text, allow_list=var == "GLOO_SOCKET_IFNAME")
            if problem:
                yield error(SINGLE_IFNAME, f"job {job.name}: {var}: {problem}", span,
                            subject=f"job {job.name}", hint=_nic_hint(var, servers))
            else:
                names = text.split(",")
                yield from _mismatch(job, var, text, span, servers,
                                     lambda nic, names=names: nic in names)
        # NCCL_SOCKET_IFNAME has HCCL_SOCKET_IFNAME's syntax (reference targets.md 6).
        var = "NCCL_SOCKET_IFNAME" if topo.preset.is_gpu else "HCCL_SOCKET_IFNAME"
        if var in env:
            text, span = env[var]
            spec = parse_socket_ifname(text)
            if spec.problem:
                yield error(BAD_HCCL_IFNAME, f"job {job.name}: {var}=\"{text}\": "
                            f"{spec.problem}", span, subject=f"job {job.name}",
                            hint="write a comma list of NIC names (prefixes), led by `=` for "
                                 "exact names and/or `^` to exclude, e.g. \"=eno0\" or "
                                 "\"^docker,lo\" (quote the value)")
            else:
                yield from _mismatch(job, var, text, span, servers, spec.selects)
        for name, (text, span) in env.items():
            close = None if topo.preset.is_gpu else misspelt_hccl(name)
            if close:
                yield warning(NOT_READ, f"job {job.name}: {name} is not an HCCL variable (a "
                              f"misspelling of {close}?): HCCL ignores it without a word, so "
                              f"{close} keeps its default", _name_span(topo, name, span),
                              subject=f"job {job.name}",
                              hint=f"did you mean {close}? rename the variable (HCCL reads "
                                   "only the exact name)")
                continue
            why = _not_read_gpu(name) if topo.preset.is_gpu else _not_read(name)
            if why:
                yield note(NOT_READ, f"job {job.name}: {name} {why}", span,
                           subject=f"job {job.name}",
                           hint="remove it, or use the HCCL setting that does what you meant")


def _name_span(topo, name: str, value_span: Span) -> Span:
    """The span of NAME on its `env` line (the value's span when the text is unavailable)."""
    text = topo.files.get(value_span.file)
    if isinstance(text, str):
        lines = text.splitlines()
        if 0 < value_span.line <= len(lines):
            line = lines[value_span.line - 1]
            at = line.rfind(name, 0, max(value_span.column - 1, 0))
            if at >= 0:
                return Span(value_span.file, value_span.line, at + 1, value_span.line,
                            at + 1 + len(name))
    return value_span


def _suggest(name: str) -> str:
    fixed = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return fixed if re.match(r"[A-Za-z_]", fixed) else "_" + fixed


def _nic_hint(var: str, servers) -> str:
    nics = sorted({s.nic for s in servers if s.nic})
    if len(nics) == 1:
        return f"write the interface name, e.g. `env {var} = {nics[0]}` (the servers' `nic`)"
    return f"write one interface name, e.g. `env {var} = eno0`"


def _mismatch(job, var: str, text: str, span, servers, selects):
    off = [s for s in servers if s.nic and not selects(s.nic)]
    if not off:
        return
    s = off[0]
    more = len(off) - 1
    yield warning(IFNAME_MISMATCH, f"job {job.name}: {var}={text} does not select {s.name}'s "
                  f"NIC {s.nic}" + (f" (nor that of {more} more server{'s' if more > 1 else ''})"
                                    if more else ""), span, subject=f"job {job.name}",
                  hint=f"use the declared NIC ({s.nic}), or correct the servers' `nic`")


def _not_read_gpu(name: str) -> str | None:
    """On NVIDIA GPU servers: HCCL / Ascend variables that NCCL and CUDA do not read."""
    if name.startswith("HCCL_") or name.startswith("ASCEND_"):
        return "is an HCCL / Ascend variable; NCCL and the CUDA runtime do not read it"
    return None


def _not_read(name: str) -> str | None:
    if name == "HCCL_P2P_DISABLE":
        return ("is not an HCCL variable (it is NCCL's P2P switch); HCCL does not read it and "
                "nothing changes")
    if name.startswith("NCCL_"):
        eq = _NCCL_EQUIVALENT.get(name)
        return "is an NCCL variable; HCCL does not read it" + (f" (HCCL's is {eq})" if eq else "")
    return None


def misspelt_hccl(name: str) -> str | None:
    """The HCCL variable ``name`` is most likely a misspelling of (difflib ratio >= 0.85
    against :data:`KNOWN_HCCL` and :data:`DOCUMENTED_HCCL`, case-insensitive), or None when
    ``name`` is one of them, is not ``HCCL_``-prefixed, or is close to none."""
    upper = name.upper()
    known = KNOWN_HCCL + DOCUMENTED_HCCL
    if not upper.startswith("HCCL_") or name in known:
        return None
    if upper in known:
        return upper       # hccl_buffsize: environment names are case-sensitive
    close = difflib.get_close_matches(upper, known, n=1, cutoff=0.85)
    return close[0] if close else None

#: The rules this module reports (collected by rtc.catalogue).
RULES = (SINGLE_IFNAME, BAD_HCCL_IFNAME, IFNAME_MISMATCH, NOT_READ, BAD_ENV_NAME)
