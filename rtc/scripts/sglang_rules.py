"""Rules of SGLang launches across the nodes of one deployment (RTC740-RTC743): what the
nodes of one multi-node SGLang server must agree on, and what a prefill/decode deployment
on Ascend must share. The sizes, devices and ports of each lifted SGLang job are judged by
the compiler's own rules (RTC210, RTC431, RTC5xx ...); these are the facts only the launch
lines carry. Flags and defaults: :mod:`rtc.plan.sglang_args` (SGLang ``server_args.py``).

Each finding is at the line of the node that differs, with the head's (node rank 0) line
as the related location.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.plan import sglang_args
from rtc.rules import rule
from rtc.scripts.lift import Group, int_value, sglang_int
from rtc.scripts.values import is_ip

NODE_RANKS = rule("RTC740", "sglang-node-ranks", "error",
                  "The --node-rank values of a multi-node SGLang server are not 0..nnodes-1, each once.", """
    What: two nodes of one SGLang server (same model, `--nnodes N`) give the same
    `--node-rank`, or a rank is outside 0..N-1, or (with all N nodes given) a rank is missing.
    Why: SGLang's torch.distributed world is tp x pp ranks laid out node by node; node rank
    k owns ranks k x (tp x pp / N) onwards. Two nodes with one rank both claim those ranks
    and the rendezvous at --dist-init-addr waits forever for the missing one.
    Example: two worker scripts copied from one another, both `--node-rank 1` of `--nnodes 3`.
    Fix: give node k `--node-rank k` (the head, which serves the API, is 0).""")
INIT_ADDR = rule("RTC741", "sglang-dist-init-addr", "error",
                 "The nodes of a multi-node SGLang server do not name one --dist-init-addr on node rank 0.", """
    What: the nodes of one SGLang server (`--nnodes` > 1) give different `--dist-init-addr`
    values, none at all, or an address that is not the host IP of node rank 0.
    Why: every node joins torch.distributed's TCP store at that address; node rank 0 serves
    it. A node with another address (or the default, which is its own host) never meets the
    others and the launch hangs until the distributed timeout.
    Example: `--dist-init-addr 10.0.0.1:5000` on the head and `10.0.0.2:5000` on the worker.
    Fix: give every node `--dist-init-addr <node rank 0's IP>:<port>`, the same text.""")
SIZES = rule("RTC742", "sglang-sizes-differ", "error",
             "The nodes of one SGLang server give different parallel sizes.", """
    What: nodes of one multi-node SGLang server differ in `--tp-size`, `--pp-size`,
    `--dp-size`, `--ep-size` or `--enable-dp-attention`.
    Why: every node builds the same process groups from these sizes; with different values
    the nodes disagree on the world size and the ranks each owns, and the launch fails in
    the rendezvous or shards the weights inconsistently.
    Example: `--tp 16` on the head and `--tp 8` on the worker.
    Fix: give every node the head's sizes.""")
MF_STORE = rule("RTC743", "sglang-ascend-mf-store", "error",
                "An SGLang prefill/decode deployment on Ascend does not share one ASCEND_MF_STORE_URL and transfer protocol.", """
    What: with `--disaggregation-transfer-backend ascend`, a node of the prefill or decode
    side does not export ASCEND_MF_STORE_URL, exports another value than the others, or
    exports another ASCEND_MF_TRANSFER_PROTOCOL.
    Why: the MemFabric config store at that URL (on the prefill side's first node) is how the
    prefill and decode NPUs find each other's memory; a node with another store (or none)
    never registers, and KV transfers to it fail or hang (SGLang
    docs/platforms/ascend_npu_environment_variables.md).
    Example: the decode node copied with `ASCEND_MF_STORE_URL=tcp://127.0.0.1:24667`.
    Fix: export the same `ASCEND_MF_STORE_URL=tcp://<prefill node 0 IP>:<port>` (and the
    same protocol) on every prefill and decode node.""")

ROUTER = rule("RTC744", "sglang-router-targets", "error",
              "The SGLang router sends to a port, or a bootstrap port, its server does not serve.", """
    What: `sglang_router.launch_router --prefill http://HOST:PORT [BOOTSTRAP]` or
    `--decode http://HOST:PORT` names the host of a given node whose SGLang server listens
    on another `--port`, or whose prefill server serves another
    `--disaggregation-bootstrap-port` (default 8998), or runs no SGLang server at all.
    Why: the router's requests (and the decode side's KV handshake with the prefill's
    bootstrap server) go to a closed port: every request fails or hangs.
    Example: `--prefill http://10.1.0.1:30000 8998` for a prefill started with
    `--port 8000 --disaggregation-bootstrap-port 8995`.
    Fix: give the router each server's own --port and the prefill's bootstrap port.""")

BAD_VALUE = rule("RTC745", "sglang-bad-number", "error",
                 "An SGLang size, rank or port flag is not a whole number in its range.", """
    What: `--tp-size`, `--pp-size`, `--dp-size`, `--ep-size`, `--nnodes`, `--node-rank`,
    `--base-gpu-id`, `--gpu-id-step`, `--port` or `--disaggregation-bootstrap-port` given a
    word, a negative number, 0 where 1 is the least, or a number past any cluster (sizes
    above 65,536, ports above 65,535).
    Why: SGLang's argparse rejects a word (`invalid int value`) and the server does not
    start; 0 or a negative size fails later in its own checks or divides by zero.
    Example: `--tp four`, `--tp 0`, `--nnodes -1`.
    Fix: write the whole number you meant. rtc checks the rest of the launch with SGLang's
    default for that flag.""")

RULES = (NODE_RANKS, INIT_ADDR, SIZES, MF_STORE, ROUTER, BAD_VALUE)

_SIZE_FLAGS = ("--tp-size", "--pp-size", "--dp-size", "--ep-size")


def check(groups: list[Group], nodes: list | None = None) -> list:
    """RTC740-RTC744 of the SGLang jobs among ``groups`` (:func:`rtc.scripts.lift.
    group_launches`) and the routers among ``nodes``' launches."""
    out = _routers(nodes or []) + _bad_values(nodes or [])
    sglang = [g for g in groups if g.members and g.members[0].main.kind == "sglang"]
    for g in sglang:
        if g.kind == "sglang":
            out += _ranks(g) + _init_addr(g) + _sizes(g)
    out += _mf_store([m for g in sglang for m in g.members])
    return out


def _router_targets(la) -> list:
    """(role, host, port, bootstrap or None, Word) of each ``--prefill`` / ``--decode`` /
    ``--worker-urls`` URL of a router launch, from its words (the flags repeat)."""
    from urllib.parse import urlsplit

    words, out = la.words, []
    for k, w in enumerate(words[:-1]):
        if w.text not in ("--prefill", "--decode", "--worker-urls"):
            continue
        try:
            url = urlsplit(words[k + 1].text)
            host, port = url.hostname, url.port
        except ValueError:
            continue
        nxt = words[k + 2].text if k + 2 < len(words) else ""
        boot = int(nxt) if w.text == "--prefill" and nxt.isdigit() and len(nxt) <= 20 else None
        if host and port:
            out.append((w.text[2:], host, port, boot, words[k + 1]))
    return out


def _routers(nodes: list) -> list:
    """RTC744: each router target against the SGLang servers of the given nodes with that
    host (several nodes may share one host: a prefill and a decode server on one machine,
    each with its own --port); the target's port picks the server."""
    by_host: dict = {}
    for n in nodes:
        if n.host_ip is not None:
            by_host.setdefault(str(n.host_ip), []).append(n)
    out = []
    for n in nodes:
        for la in n.launches:
            if la.kind != "sglang_router":
                continue
            for role, host, port, boot, word in _router_targets(la):
                if host in by_host:
                    out += _router_target(n, role, host, port, boot, word, by_host[host])
    return out


def _router_target(n, role: str, host: str, port: int, boot, word, hosts: list) -> list:
    """RTC744 for one ``--prefill`` / ``--decode`` target of node ``n``'s router, where
    ``hosts`` are the given nodes with the target's host."""
    servers = [(m, x) for m in hosts for x in m.launches if x.kind == "sglang"]
    name = " / ".join(m.name for m in hosts)
    at = [(m, x) for m, x in servers if sglang_int(x, "--port") == port]
    boots = {sglang_int(x, "--disaggregation-bootstrap-port") for _m, x in at or servers
             if x.value("--disaggregation-mode") == "prefill"}
    why = None
    if not servers:
        why = f"{name} ({host}) starts no SGLang server"
    elif not at:
        why = f"{name}'s SGLang server listens on --port " + \
            ", ".join(map(str, sorted({sglang_int(x, "--port") for _m, x in servers})))
    elif boot is not None and boots and boot not in boots:
        x = at[0][1]
        why = f"the prefill server on {host}:{port} ({x.span.file}:{x.span.line}) serves " \
            "--disaggregation-bootstrap-port " + ", ".join(map(str, sorted(boots)))
    if not why:
        return []
    m, x = (at or servers or [(hosts[0], None)])[0]
    return [error(ROUTER, f"the router's --{role} {word.text}"
                  f"{f' {boot}' if boot is not None else ''}: {why}", word.span,
                  subject=n.name, related=[Related(x.span, m.name)] if x is not None else [],
                  hint="use the server's own --port (and the prefill's bootstrap port)")]


def _bad_values(nodes: list) -> list:
    """RTC745 for each SGLang integer flag outside :data:`sglang_args.RANGES`: one finding
    per value word, naming every node that reads it (a StatefulSet's one template line read
    by each pod, ``--node-rank ${HOSTNAME#*-}`` giving 'ds-0' and 'ds-1', is one mistake)."""
    found: dict = {}
    for n in nodes:
        for la in n.launches:
            if la.kind != "sglang":
                continue
            for flag, (lo, hi) in sglang_args.RANGES.items():
                f = la.flags.get(flag)
                if f is None:
                    continue
                v = int_value(f.value)
                if v is None or not lo <= v <= hi:
                    what = "not a whole number" if v is None else f"outside {lo}..{hi:,}"
                    at = found.setdefault((flag, f.value_span or f.span), {})
                    at.setdefault(what, {}).setdefault(f.value, []).append(n.name)
    return [_bad_value(flag, span, whats) for (flag, span), whats in found.items()]


def _bad_value(flag: str, span, whats: dict):
    """The one RTC745 of ``flag``'s value word at ``span``; ``whats``: {why: {value: [node
    names]}} of the nodes that read it."""
    lo, hi = sglang_args.RANGES[flag]
    names = list(dict.fromkeys(x for vals in whats.values() for ns in vals.values()
                               for x in ns))
    parts = []
    for what, vals in whats.items():
        if len(vals) == 1:
            parts.append(f"{flag} {next(iter(vals))!r} is {what}")
        else:
            each = ", ".join(f"{v!r} on {', '.join(ns)}" for v, ns in vals.items())
            parts.append(f"{flag} is {what} ({each})")
    return error(BAD_VALUE, f"{', '.join(names)}: {'; '.join(parts)}; rtc checks the launch "
                 f"with SGLang's default ({sglang_args.DEFAULTS.get(flag, '1')})", span,
                 subject=", ".join(names), hint=f"give {flag} a whole number in {lo}..{hi:,}")


def _related(m, text: str) -> list:
    return [Related(m.main.span, f"{m.node.name}: {text}")]


def _ranks(g: Group) -> list:
    head = g.members[0]
    nnodes = sglang_int(head.main, "--nnodes")
    out, seen, unread = [], {}, False
    for m in g.members:
        la = m.main
        rank = int_value(la.value("--node-rank"), 0)
        span = la.span_of("--node-rank")
        if la.value("--node-rank") is not None and int_value(la.value("--node-rank")) is None:
            unread = True     # not a whole number: RTC745 says so; no knock-on RTC740
            continue
        if rank >= nnodes:
            out.append(error(NODE_RANKS, f"SGLang server {la.value('--model-path')}: "
                             f"{m.node.name} gives --node-rank {la.value('--node-rank')}, "
                             f"outside 0..{nnodes - 1} of --nnodes {nnodes}", span,
                             subject=m.node.name, hint=f"use a rank 0..{nnodes - 1}"))
        elif rank in seen:
            other = seen[rank]
            out.append(error(NODE_RANKS, f"SGLang server {la.value('--model-path')}: "
                             f"{m.node.name} and {other.node.name} both give --node-rank "
                             f"{rank}", span, subject=m.node.name,
                             related=_related(other, f"--node-rank {rank}"),
                             hint="give each node its own rank 0..nnodes-1"))
        else:
            seen[rank] = m
    if len(g.members) == nnodes and not out and not unread:
        missing = [k for k in range(nnodes) if k not in seen]
        if missing:
            out.append(error(NODE_RANKS, f"SGLang server {head.main.value('--model-path')}: "
                             f"no node gives --node-rank {missing[0]} of --nnodes {nnodes}",
                             head.main.span, subject=head.node.name,
                             hint="number the nodes 0..nnodes-1"))
    return out


def _init_addr(g: Group) -> list:
    head = g.members[0]
    want = head.main.value("--dist-init-addr")
    out = []
    if want is None:
        return [error(INIT_ADDR, f"SGLang server {head.main.value('--model-path')} spans "
                      f"{head.main.value('--nnodes')} nodes but {head.node.name} gives no "
                      "--dist-init-addr", head.main.span, subject=head.node.name,
                      hint="add --dist-init-addr <node rank 0's IP>:<port> on every node")]
    for m in g.members[1:]:
        got = m.main.value("--dist-init-addr")
        if got == want and _own_host(want) and m.node.name != head.node.name:
            f = m.main.flags["--dist-init-addr"]
            out.append(error(INIT_ADDR, f"SGLang server {head.main.value('--model-path')}: "
                             f"{m.node.name} gives --dist-init-addr {got}, its own host name "
                             f"(hostname runs on each node), not node rank 0's "
                             f"({head.node.name})", f.value_span or f.span,
                             subject=m.node.name,
                             related=_related(head, f"--dist-init-addr {want}"),
                             hint="write node rank 0's host name or IP (the same text on "
                                  "every node), e.g. from `scontrol show hostnames | head -1`"))
        elif got != want:
            f = m.main.flags.get("--dist-init-addr")
            out.append(error(INIT_ADDR, f"SGLang server {head.main.value('--model-path')}: "
                             f"{m.node.name} gives --dist-init-addr {got or '(none)'}, the "
                             f"head {head.node.name} {want}", (f.value_span or f.span) if f
                             else m.main.span, subject=m.node.name,
                             related=_related(head, f"--dist-init-addr {want}"),
                             hint=f"use --dist-init-addr {want} on every node"))
    host = want.rpartition(":")[0].strip("[]")
    if head.rank == 0 and head.node.host_ip is not None and host and \
            host != str(head.node.host_ip) and is_ip(host):
        f = head.main.flags["--dist-init-addr"]
        out.append(error(INIT_ADDR, f"SGLang server {head.main.value('--model-path')}: "
                         f"--dist-init-addr {want} is not node rank 0's host "
                         f"{head.node.host_ip} ({head.node.name})", f.value_span or f.span,
                         subject=head.node.name,
                         hint=f"use --dist-init-addr {head.node.host_ip}:"
                              f"{want.rpartition(':')[2] or '5000'}"))
    return out


#: Host parts that the shell of each node fills with that node's own name: hostname(1)
#: prints the local host's name, and bash sets HOSTNAME to it.
_OWN_HOST = ("$(hostname", "`hostname", "$HOSTNAME", "${HOSTNAME}")


def _own_host(addr: str) -> bool:
    """Whether the host part of ``addr`` (``host:port``, as written) is the node's own
    host name, evaluated on each node (``$(hostname)``, `` `hostname` ``, ``$HOSTNAME``)."""
    return addr.rpartition(":")[0].strip().startswith(_OWN_HOST)


def _sizes(g: Group) -> list:
    head = g.members[0]
    out = []
    for m in g.members[1:]:
        for flag in _SIZE_FLAGS + ("--enable-dp-attention",):
            a = head.main.value(flag) if flag in _SIZE_FLAGS else head.main.has(flag)
            b = m.main.value(flag) if flag in _SIZE_FLAGS else m.main.has(flag)
            if a != b:
                shown = (lambda v: v or "(default)") if flag in _SIZE_FLAGS else \
                    (lambda v: "set" if v else "not set")
                out.append(error(SIZES, f"SGLang server {head.main.value('--model-path')}: "
                                 f"{m.node.name} gives {flag} {shown(b)}, the head "
                                 f"{head.node.name} {shown(a)}", m.main.span_of(flag),
                                 subject=m.node.name,
                                 related=_related(head, f"{flag} {shown(a)}"),
                                 hint=f"give every node the head's {flag}"))
                break
    return out


def _mf_store(members: list) -> list:
    """RTC743 over every SGLang node that uses the Ascend transfer backend."""
    pd = [m for m in members if m.main.value("--disaggregation-transfer-backend") == "ascend"
          and m.main.value("--disaggregation-mode") in ("prefill", "decode")]
    if len(pd) < 2:
        return []
    out = []
    for var in (sglang_args.MF_STORE_URL, sglang_args.MF_PROTOCOL):
        first = next((m for m in pd if var in m.main.env), None)
        for m in pd:
            s = m.main.env.get(var)
            if s is None and var == sglang_args.MF_PROTOCOL:
                continue      # the protocol has a default; only two values differ
            if s is None:
                out.append(error(MF_STORE, f"{m.node.name} ({m.main.value('--disaggregation-mode')}) "
                                 f"does not export {var}", m.main.span, subject=m.node.name,
                                 hint=f"export {var}=tcp://<prefill node 0 IP>:<port>, the "
                                      "same on every prefill and decode node"))
            elif first is not None and s.value != first.main.env[var].value:
                out.append(error(MF_STORE, f"{m.node.name} exports {var}={s.value}, "
                                 f"{first.node.name} {first.main.env[var].value}", s.span,
                                 subject=m.node.name,
                                 related=[Related(first.main.env[var].span,
                                                  f"{first.node.name}: {var}")],
                                 hint=f"export one {var} on every prefill and decode node"))
    return out


__all__ = ["RULES", "check", "NODE_RANKS", "INIT_ADDR", "SIZES", "MF_STORE"]
