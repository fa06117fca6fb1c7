"""Every value of a launch typed where it is written (RTC720, RTC721): the flags and
variables the lifted launches read, checked before any rule does arithmetic with them.

==================  ====================================================================
type                flags / variables
==================  ====================================================================
positive integer    vLLM ``--tensor-parallel-size`` ``--pipeline-parallel-size``
                    ``--data-parallel-size`` ``--prefill-/decode-context-parallel-size``
                    ``--max-model-len`` ``--max-num-seqs`` ``--max-num-batched-tokens``
                    ``--nnodes``; torchrun ``--nproc-per-node``;
                    msrun ``--worker_num`` ``--local_worker_num``
integer >= 0        ``--api-server-count`` (0: headless) ``--data-parallel-size-local`` ``--data-parallel-start-rank``
                    ``--data-parallel-rank`` ``--node-rank`` (torchrun ``--node_rank``)
port 1..65535       ``--port`` ``--data-parallel-rpc-port`` ``--master-port`` (vLLM's
                    ``ParallelConfig`` rejects rpc port 0), torchrun ``--master_port``
node count          torchrun ``--nnodes`` (``N`` or ``MIN:MAX``)
host address        ``--data-parallel-address`` ``--master-addr`` ``ray start --address``
                    (host[:port]) and the variables ``HCCL_IF_IP`` ``VLLM_HOST_IP``
                    ``MASTER_ADDR``: an IPv4/IPv6 address or a host name; a peer
                    connects to it, so ``0.0.0.0`` / ``::`` is a placeholder too
JSON object         ``--additional-config`` ``--kv-transfer-config`` ``--hf-overrides``
                    ``--compilation-config`` ``--speculative-config``
a flag              any word of a launch that starts with a dash look-alike (``—headless``:
                    an em or en dash, a minus sign ...) where ``-`` / ``--`` was meant
==================  ====================================================================

A value that still holds a variable the script never set is not judged (RTC701 / the
unresolved-variable notes say why). Placeholders (RTC721) are values a tutorial asks the
reader to replace: ``x.x.x.x``, ``<IP>``, ``PIP``, ``your_ip``, ``TODO``, ``xxxx`` ...
"""

from __future__ import annotations

import ipaddress
import json
import re

from rtc.diagnostics import error
from rtc.scripts import rules as R

#: Largest integer a size or rank may be (vLLM and torch keep them in C ints).
INT_MAX = 2 ** 31 - 1
#: The most ranks one job may have for rtc to plan it (a larger world is a typo: RTC720).
WORLD_MAX = 65536
#: The most devices one node of a script's job may use (more than any server rtc models).
NODE_DEVICES_MAX = 1024
#: Per-node process counts of torchrun / msrun launches, the first given being read.
NODE_PROC_FLAGS = ("--nproc_per_node", "--nproc-per-node", "--local_worker_num")
#: The flags whose product is one launch's world size.
WORLD_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
               "--prefill-context-parallel-size")

_POSITIVE = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
             "--prefill-context-parallel-size", "--decode-context-parallel-size",
             "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens",
             "--nproc-per-node", "--nproc_per_node", "--worker_num",
             "--local_worker_num")
_NON_NEGATIVE = ("--api-server-count", "--data-parallel-size-local", "--data-parallel-start-rank",
                 "--data-parallel-rank", "--node-rank", "--node_rank")
_PORTS = ("--port", "--data-parallel-rpc-port", "--master-port", "--master_port")
_HOSTS = ("--data-parallel-address", "--master-addr", "--master_addr")
_JSON = ("--additional-config", "--kv-transfer-config", "--hf-overrides",
         "--compilation-config", "--speculative-config")
#: Variables holding the node's own address, or the one a peer connects to.
HOST_VARIABLES = ("HCCL_IF_IP", "VLLM_HOST_IP", "MASTER_ADDR")

_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>|\{[^}:\"]*\}|x{1,3}(?:\.x{1,3}){3}|x{2,}|X{2,}|\*+(?:\.\*+){3}|"
    r"(?:your|my)[_\- ]?\w*|todo|tbd|fixme|changeme|pip|nip|ip|host_?ip|node_?ip|"
    r"master_?ip|head_?ip|local_?ip|ip_?addr(?:ess)?|\.\.\.)$", re.I)
# something that tries to be an IPv4 address: digits (any script's) and dots
_IPV4_LIKE = re.compile(r"^[\d.]+$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")


def _resolved(text: str | None) -> bool:
    return text is not None and "$" not in text and "`" not in text


def integer_problem(text: str, least: int) -> str | None:
    """Why ``text`` is not an integer >= ``least`` (and <= :data:`INT_MAX`), or None.
    Only ASCII digits count: Python's int() would take full-width ones, the frameworks
    do not."""
    t = text.strip()
    body = t[1:] if t[:1] in "+-" else t
    if not body or not body.isascii() or not body.isdigit():
        return f"'{text}' is not an integer"
    if len(body.lstrip("0")) > 20:      # never int() of thousands of digits
        shown = f"{t[:24]}... ({len(t):,} characters)"
        return (f"{shown} is out of range (at most {INT_MAX})" if t[:1] != "-"
                else f"{shown} is negative: it must be >= {least}")
    value = int(t)
    if value > INT_MAX:
        return f"{text} is out of range (at most {INT_MAX})"
    if value < least:
        return f"{text} is {'negative' if value < 0 else 'zero'}: it must be >= {least}"
    return None


def port_problem(text: str) -> str | None:
    """Why ``text`` is not a TCP port 1..65535, or None."""
    why = integer_problem(text, 1)
    if why is not None:
        return why if "integer" in why else f"{text} is not a port (1..65535)"
    return None if int(text) <= 65535 else f"{text} is not a port (1..65535)"


def is_placeholder(text: str) -> bool:
    """True for a value a tutorial asks the reader to replace (``x.x.x.x``, ``<IP>``, ``PIP``,
    ``your_ip``, ``TODO`` ...)."""
    return bool(_PLACEHOLDER.match(text.strip()))


def is_ip(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address as written (``ipaddress.ip_address``
    reads it; no brackets, no zone id)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def host_problem(text: str, peer: bool) -> tuple[str, bool] | None:
    """(why, is-placeholder) when ``text`` is no usable address: a placeholder, the
    unspecified address where ``peer`` (another node connects to it), or something that
    tries to be an IP address and is not one (``141.61.39.317``, full-width digits). A host
    name is accepted. None when it is fine."""
    t = text.strip()
    if is_placeholder(t):
        return f"'{text}' is a placeholder, not an address", True
    host = t[1:-1] if t.startswith("[") and t.endswith("]") else t
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        if not host.isascii():
            return f"'{text}' has non-ASCII (full-width) digits", False
        if peer and ip.is_unspecified:
            return f"{text} is the unspecified address: a peer cannot connect to it", True
        return None
    if _IPV4_LIKE.match(host) or (":" in host and not host.isascii()):
        return _bad_ip_reason(host), False
    if not host.isascii():
        return f"'{text}' has non-ASCII characters (full-width digits?)", False
    if ":" in host or not _HOSTNAME.match(host):
        return f"'{text}' is neither an IP address nor a host name", False
    return None


def _bad_ip_reason(host: str) -> str:
    if not host.isascii():
        return f"'{host}' has non-ASCII (full-width) digits"
    parts = host.split(".")
    if len(parts) == 4:
        bad = next((p for p in parts if not p.isdigit() or len(p) > 3 or int(p) > 255), None)
        if bad is not None:
            return f"{host} is not an IPv4 address: octet {bad} is not 0..255"
    return f"{host} is not an IPv4 address (four numbers 0..255 separated by dots)"


def json_problem(text: str) -> str | None:
    """Why ``text`` is not a JSON object (vLLM parses these flags with json.loads), or None."""
    try:
        doc = json.loads(text)
    except RecursionError:
        return "is not JSON rtc can read (nested too deeply)"
    except ValueError as exc:
        return f"is not JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(doc, dict):
        return f"is JSON but not an object ({type(doc).__name__})"
    return None


def _flag_problems(la):
    """(rule, message, span, hint) for each mistyped flag of one launch."""
    for name, f in la.flags.items():
        v = f.value
        where = f.value_span or f.span
        if not _resolved(v) or not v:
            continue
        why, hint, rule = None, "", R.BAD_VALUE
        if name in _POSITIVE:
            why, hint = integer_problem(v, 1), f"write a whole number >= 1, e.g. {name} 4"
        elif name in _NON_NEGATIVE:
            why, hint = integer_problem(v, 0), f"write a whole number >= 0, e.g. {name} 0"
        elif name in _PORTS:
            why, hint = port_problem(v), "use a free TCP port 1024..65535"
        elif name == "--nnodes" and la.kind in ("torchrun", "vllm"):
            parts = v.split(":") if la.kind == "torchrun" else [v]
            why = next((p for p in (integer_problem(x, 1) for x in parts) if p), None)
            if why is None and len(parts) > 2:
                why = f"'{v}' is not N or MIN:MAX"
            hint = "write the number of nodes, e.g. --nnodes 2 (torchrun also MIN:MAX)"
        elif name in _JSON:
            why = json_problem(v)
            why = f"'{v[:40]}' {why}" if why else None
            hint = "quote the whole JSON object in single quotes: " \
                   "--flag '{\"key\": \"value\"}'"
        elif name == "--dist-init-addr" and la.kind == "sglang":
            why, rule, hint = _host_port_problem(v)
        elif name in _HOSTS or (la.kind == "ray" and name == "--address"):
            host = v.rsplit(":", 1)[0] if la.kind == "ray" and v.count(":") == 1 else v
            got = host_problem(host, peer=True) or \
                (_loopback(host) if la.kind == "ray" else None)
            if got is not None:
                why, rule = got[0], R.PLACEHOLDER if got[1] else R.BAD_VALUE
                hint = "give the head node's IP address (the one the other nodes reach)"
        if why:
            yield rule, f"{name} {why}", where, hint


def _host_port_problem(text: str):
    """(why, rule, hint) for SGLang's ``--dist-init-addr HOST:PORT`` (ServerArgs
    dist_init_addr, split at the last ':' by its launcher), or (None, ..) when fine: a
    placeholder host or port is RTC721, a bad port RTC720."""
    host, sep, port = text.rpartition(":")
    hint = "write node rank 0's IP and a free port, e.g. --dist-init-addr 10.0.0.1:5000"
    if not sep:
        return f"'{text}' has no port (HOST:PORT)", R.BAD_VALUE, hint
    got = host_problem(host, peer=True) if host else None
    if got is not None:
        return got[0], R.PLACEHOLDER if got[1] else R.BAD_VALUE, hint
    if is_placeholder(port):
        return f"port '{port}' is a placeholder", R.PLACEHOLDER, hint
    why = port_problem(port)
    return (f"port {why}" if why else None), R.BAD_VALUE, hint


def world_of(la) -> int:
    """The product of ``la``'s parallel sizes that are readable integers >= 1."""
    world = 1
    for name in WORLD_FLAGS:
        v = la.value(name)
        if v is not None and integer_problem(v, 1) is None:
            world *= int(v)
    return world


def _world_problem(la):
    world = world_of(la)
    if world > WORLD_MAX:
        yield R.BAD_VALUE, (f"the parallel sizes give a world of {world} ranks, more than "
                            f"{WORLD_MAX} (a typo?)"), la.span_of("--data-parallel-size"), \
            "check --tensor/--pipeline/--data-parallel-size"
    for name in NODE_PROC_FLAGS:
        v = la.value(name)
        if v is not None and integer_problem(v, 1) is None and int(v) > NODE_DEVICES_MAX:
            yield R.BAD_VALUE, (f"{name} {v} starts {v} processes on one node, more than "
                                f"the {NODE_DEVICES_MAX} devices any server has (a typo?)"), \
                la.span_of(name), f"set {name} to the node's device count (8 or 16)"


def _loopback(host: str) -> tuple[str, bool] | None:
    """(why, True) when ``host`` is the loopback address (127.0.0.0/8, ::1, localhost):
    a Ray node's address, which the other nodes of the cluster connect to."""
    h = host.strip().strip("[]")
    try:
        loop = ipaddress.ip_address(h).is_loopback
    except ValueError:
        loop = h.lower() == "localhost"
    return (f"{host} is the loopback address: the other nodes cannot reach it", True) \
        if loop else None


def _env_problems(la):
    for var in HOST_VARIABLES:
        s = la.env.get(var)
        if s is None or s.unresolved or not _resolved(s.value) or not s.value:
            continue
        got = host_problem(s.value, peer=True) or \
            (_loopback(s.value) if la.kind == "ray" else None)
        if got is not None:
            rule = R.PLACEHOLDER if got[1] else R.BAD_VALUE
            yield rule, f"{var} {got[0]}", s.span, \
                f"export {var} as this node's own IP address (e.g. from `hostname -I`)"


def _local_dp_problem(la):
    """RTC720 for a vLLM launch whose --data-parallel-size-local exceeds its
    --data-parallel-size (1 when not given): vLLM's ParallelConfig rejects it at start-up
    (vllm/config/parallel.py, "data_parallel_size_local > data_parallel_size")."""
    local = la.value("--data-parallel-size-local") if la.kind == "vllm" else None
    size = la.value("--data-parallel-size") or "1"
    if local is None or integer_problem(local, 1) or integer_problem(size, 1) or \
            int(local) <= int(size):
        return
    given = "" if la.has("--data-parallel-size") else " (the default: the flag is not given)"
    yield R.BAD_VALUE, (f"--data-parallel-size-local {local} is larger than "
                        f"--data-parallel-size {size}{given}: vLLM rejects it at start-up"), \
        la.span_of("--data-parallel-size-local"), \
        "give every node the job's total --data-parallel-size"


def _master_addr_problem(la):
    """RTC724 for a vLLM launch over several nodes (``--nnodes`` > 1) without
    ``--master-addr``: ParallelConfig.master_addr defaults to 127.0.0.1."""
    nnodes = la.value("--nnodes") if la.kind == "vllm" else None
    if nnodes is None or integer_problem(nnodes, 2) is not None or la.has("--master-addr"):
        return
    yield R.MASTER_ADDR_DEFAULT, (f"--nnodes {nnodes} without --master-addr: vLLM's default "
                                  "127.0.0.1 is the node itself, which the other nodes "
                                  "cannot reach"), la.span_of("--nnodes"), \
        "add --master-addr <node rank 0's IP> on every node"


#: Characters that look like the ASCII hyphen-minus a flag starts with (word processors
#: and chat tools turn ``--`` into an en or em dash): hyphen, non-breaking hyphen, figure
#: dash, en dash, em dash, horizontal bar, minus sign, small and full-width hyphen-minus.
DASH_LOOKALIKES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"


def _dash_words(la):
    """RTC720 for each word of a launch whose leading dashes hold a dash look-alike
    (:data:`DASH_LOOKALIKES`) where a flag was meant: ``—headless``, and ``-—headless``
    (an ASCII hyphen, then an em dash: argparse does not read it as a flag either)."""
    import unicodedata

    for w in la.words[1:]:
        t = w.text
        lead = len(t) - len(t.lstrip("-"))
        if not t or lead >= len(t) or t[lead] not in DASH_LOOKALIKES:
            continue
        bad = t[lead]
        rest = t.lstrip("-" + DASH_LOOKALIKES)
        meant = ("--" if len(rest.split("=")[0]) > 1 else "-") + rest
        name = unicodedata.name(bad, "dash").lower()
        shown = t if len(t) <= 40 else t[:39] + "…"
        article = "an" if name[0] in "aeiou" else "a"
        where = "starts with" if not lead else f"has, after its ASCII '{t[:lead]}',"
        passes = (f"the shell passes it to {la.kind} as a positional argument, not as"
                  if not lead else f"{la.kind}'s parser does not read it as")
        yield R.BAD_VALUE, (f"`{shown}` {where} {article} {name} (U+{ord(bad):04X}), not an "
                            f"ASCII '-': {passes} the flag {meant.split('=')[0]}, so "
                            f"{la.kind} "
                            "rejects it (\"unrecognized arguments\") or takes it for a "
                            "model or script name"), w.span, \
            f"type it with ASCII hyphens: `{meant if len(meant) <= 40 else meant[:39] + '…'}`"


def value_findings(launches) -> list:
    """RTC720 / RTC721 / RTC724 errors of ``launches`` (each value once, at the word that
    wrote it)."""
    out, seen = [], set()
    for la in launches:
        for rule, msg, span, hint in (*_flag_problems(la), *_world_problem(la),
                                       *_env_problems(la), *_master_addr_problem(la),
                                       *_local_dp_problem(la), *_dash_words(la)):
            if (rule.code, span, msg) in seen:
                continue
            seen.add((rule.code, span, msg))
            out.append(error(rule, msg, span, hint=hint))
    return out


__all__ = ["value_findings", "integer_problem", "port_problem", "host_problem",
           "json_problem", "is_placeholder", "is_ip", "INT_MAX", "WORLD_MAX", "NODE_DEVICES_MAX",
           "NODE_PROC_FLAGS", "HOST_VARIABLES",
           "world_of"]
