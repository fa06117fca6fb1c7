"""Values every node of one vLLM deployment must give alike (RTC722), the node ranks
of ``--nnodes`` / torchrun jobs (RTC723), and the own addresses one node of the scripts
gives alike (RTC450, :mod:`rtc.checks.host_addressing`'s rule, here because it reads the
launch plan).

A deployment is all its nodes: the launch plan's job (for ``rtc lint`` the launches the
scripts give, grouped by what they share: :mod:`rtc.scripts.lift`) lists each node's
processes with the span of every flag. For each value of :data:`AGREE` the value most
nodes give is the job's (on a tie: the head's); each node that gives another is reported
at its own flag (at its launch line when it leaves the flag out), with the other value
and where it was written as the related location. So with the head at TP 8 and the worker
at TP 4 the error is the worker's, saying both values; the head's value never lands on
the worker's line.

Why they must agree (vLLM ``vllm/v1/engine/utils.py`` ``wait_for_engine_startup``
compares ``ParallelConfig.compute_hash()`` of every DP engine: "Configuration mismatch
detected for engine N"; the model, context and batch limits size the KV cache and the
collectives each engine enters, and a DP engine whose ``--max-num-batched-tokens`` or
``--max-model-len`` differs pads to other shapes and deadlocks in the MoE all-to-all;
``--data-parallel-rpc-port`` / ``--data-parallel-size`` that differ make the worker wait
for a coordinator that never answers: ``parallel-groups.md`` section 1e.5).
"""

from __future__ import annotations

import ipaddress
import json
from collections import Counter

from rtc.checks._net import related
from rtc.checks.host_addressing import FIXED_HOST_IP
from rtc.diagnostics import Related, error
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

DISAGREE = rule("RTC722", "nodes-disagree", "error",
                "The nodes of one deployment give different values where vLLM needs one.", """
    What: the scripts of one job (same DP address, Ray head or master address) differ in
    the model, --served-model-name, --tensor/--pipeline/--data-parallel-size, the context
    parallel sizes, --data-parallel-rpc-port, --enable-expert-parallel, the EPLB flags
    (--enable-eplb, --eplb-log-balancedness, --eplb-config, --num-redundant-experts),
    --max-model-len, --max-num-seqs, --max-num-batched-tokens, --dtype, --quantization,
    --kv-cache-dtype, the executor / DP backend, --nnodes / --master-addr / --master-port, the KV connector
    and role of --kv-transfer-config, or ASCEND_MF_STORE_URL. Reported at the node that
    differs from the others (from the head, with two nodes), with both values.
    Why: vLLM compares the parallel config of every DP engine at start-up ("Configuration
    mismatch detected for engine N"); a worker on another rpc port or DP size waits for a
    coordinator that never answers (5-minute handshake timeout); different batch or
    context limits give different shapes in the collectives and hang the MoE all-to-all.
    Example: the head runs --tensor-parallel-size 8, the worker --tensor-parallel-size 4.
    Fix: give every node the same value (keep the shared flags in one env file both
    scripts source).""")
NODE_RANKS = rule("RTC723", "node-ranks", "error",
                  "The node ranks of a multi-node launch repeat or leave a gap.", """
    What: `vllm serve --nnodes N --node-rank K` or `torchrun --nnodes N --node_rank K`
    scripts of one job (same master address and port) where two nodes give one rank, or
    a rank below N is given by no node, or a rank is N or more.
    Why: torch's rendezvous waits for every rank 0..N-1 exactly once: a repeated rank
    fails ("Address already in use" / duplicate rank) or hangs, a missing one hangs until
    the timeout.
    A vLLM node without --node-rank is rank 0 (vLLM's ParallelConfig.node_rank default),
    so a worker that leaves it out collides with the master.
    Example: two workers both with --node-rank 1 in an --nnodes 3 job.
    Fix: number the nodes 0..N-1, the master (the node at --master-addr) 0.""")

#: Flags every vLLM node of a job must give alike: name -> the value when left out
#: (None: "not given"; vLLM's default where it matters for comparing).
AGREE: dict[str, str | None] = {
    "--tensor-parallel-size": "1", "--pipeline-parallel-size": "1",
    "--data-parallel-size": "1", "--prefill-context-parallel-size": "1",
    "--decode-context-parallel-size": "1", "--data-parallel-rpc-port": "29550",
    "--enable-expert-parallel": None, "--served-model-name": None,
    "--max-model-len": None, "--max-num-seqs": None, "--max-num-batched-tokens": None,
    "--dtype": "auto", "--quantization": None, "--kv-cache-dtype": "auto",
    "--distributed-executor-backend": None, "--data-parallel-backend": "mp",
    "--nnodes": "1", "--master-addr": "127.0.0.1", "--master-port": "29501",
    # EPLB: part of ParallelConfig.compute_hash since vLLM PR 26218 (issue 26187: the
    # leader alone with balancedness logging hung in an all-reduce only it entered)
    "--enable-eplb": None, "--eplb-log-balancedness": None, "--eplb-config": None,
    "--num-redundant-experts": "0",
}
#: Switches of :data:`AGREE`: compared as on / off.
SWITCHES = ("--enable-expert-parallel", "--enable-eplb", "--eplb-log-balancedness")
#: Environment variables every node of a job must give alike.
AGREE_ENV = ("ASCEND_MF_STORE_URL",)
#: What of --kv-transfer-config must agree (kv_role differs only between P and D jobs).
_KV_KEYS = ("kv_connector", "kv_role")


def _vllm_proc(nl):
    for proc in nl.procs:
        words = proc.words()
        if "serve" in words[:3] or any("api_server" in w for w in words[:3]):
            return proc
    return None


def _model(proc, flags) -> str | None:
    words = proc.words()
    if "serve" in words[:3]:
        k = words.index("serve") + 1
        if k < len(words) and not words[k].startswith("-"):
            return words[k]
    return flags.get("--model")


def _values(nl, proc) -> dict:
    """name -> (value as written or its default, span) of one node's vLLM process."""
    flags = proc.flags()
    line = proc.spans.get("")
    out = {"model": (_model(proc, flags), line)}
    for name, default in AGREE.items():
        if name in SWITCHES:
            value = "on" if name in flags else "off"
        else:
            value = flags.get(name, default) if name in flags else default
        out[name] = (value, proc.spans.get(name) or line)
    kv = flags.get("--kv-transfer-config")
    try:
        doc = json.loads(kv) if kv else {}
    except (ValueError, RecursionError):
        doc = {}
    for key in _KV_KEYS:
        got = doc.get(key) if isinstance(doc, dict) else None
        out[f"--kv-transfer-config {key}"] = (None if got is None else str(got),
                                              proc.spans.get("--kv-transfer-config") or line)
    env = dict(nl.env)
    for var in AGREE_ENV:
        out[var] = (env.get(var), (getattr(nl, "env_spans", None) or {}).get(var) or line)
    return out


def check(topo: Topology, plan: Plan):
    for name, jl in plan.launches.items():
        if jl.origin != "script" or jl.job.framework != "vllm" or len(jl.nodes) < 2:
            continue
        nodes = [(nl, p) for nl in jl.nodes if (p := _vllm_proc(nl)) is not None]
        if len(nodes) >= 2:
            yield from _disagreements(jl.job, nodes)
    yield from _node_ranks(plan)
    yield from _own_addresses(topo, plan)


def _disagreements(job, nodes):
    values = [(nl, _values(nl, p)) for nl, p in nodes]
    for key in values[0][1]:
        seen = [(nl, v[key]) for nl, v in values]
        counts = Counter(val for _, (val, _) in seen)
        if len(counts) < 2:
            continue
        top = max(counts.values())
        head_val = seen[0][1][0]
        ref = head_val if counts[head_val] == top else \
            next(val for _, (val, _) in seen if counts[val] == top)
        ref_nl, (_, ref_span) = next((nl, vs) for nl, vs in seen if vs[0] == ref)
        for nl, (val, span) in seen:
            if val == ref:
                continue
            what = "the model" if key == "model" else key
            yield error(DISAGREE, f"job {job.name}: {nl.server.name} gives {what} "
                        f"{_shown(val)}, {ref_nl.server.name} gives {what} {_shown(ref)}"
                        + (f" (as do {counts[ref] - 1} more nodes)" if counts[ref] > 1 else "")
                        + ": every node of the deployment must give the same",
                        span, subject=f"job {job.name}, server {nl.server.name}",
                        related=[Related(ref_span, f"{ref_nl.server.name}: {_shown(ref)}")]
                        if ref_span is not None else (),
                        hint=f"give {what} {_shown(ref)} on {nl.server.name} too (keep "
                             "the shared flags in one file every node sources)")


def _shown(value) -> str:
    return "(not given)" if value is None else str(value)


def _node_ranks(plan: Plan):
    """RTC723 over jobs launched with --nnodes (vLLM) or torchrun node ranks."""
    for name, jl in plan.launches.items():
        if jl.origin != "script" or len(jl.nodes) < 2 or jl.mode not in ("nnodes", "torchrun"):
            continue
        flag = "--node-rank" if jl.mode == "nnodes" else "--node_rank"
        ranks = []
        for nl in jl.nodes:
            proc = nl.procs[0] if nl.procs else None
            if proc is None:
                continue
            fl = proc.flags()
            text = fl.get(flag) or fl.get(flag.replace("_", "-"))
            nn = (fl.get("--nnodes") or "").split(":")[-1]
            if text is None and jl.mode == "nnodes":
                # vLLM's ParallelConfig.node_rank defaults to 0 (vllm/config/parallel.py):
                # a node left without --node-rank joins as rank 0 (MiaAI-Lab issue 48)
                text = "0"
            if text is None or not text.isdigit() or not nn.isdigit():
                return
            ranks.append((int(text), int(nn), nl, proc.spans.get(flag) or
                          proc.spans.get(flag.replace("_", "-")) or proc.spans.get(""),
                          flag in fl or flag.replace("_", "-") in fl))
        yield from _rank_findings(jl.job, flag, ranks)


def _rank_findings(job, flag, ranks):
    seen: dict[int, object] = {}
    given = {id(r[2]): r[4] for r in ranks}
    for rank, nn, nl, span, _ in ranks:
        if rank in seen:
            unset = [n.server.name for n in (nl, seen[rank]) if not given[id(n)]]
            how = (f" ({', '.join(unset)} without {flag}: vLLM's default is 0)"
                   if unset else "")
            yield error(NODE_RANKS, f"job {job.name}: {nl.server.name} and "
                        f"{seen[rank].server.name} both give {flag} {rank}{how}", span,
                        subject=f"job {job.name}, server {nl.server.name}",
                        hint="number the nodes 0..N-1, each once")
            return
        if rank >= nn:
            yield error(NODE_RANKS, f"job {job.name}: {nl.server.name} gives {flag} {rank}, "
                        f"but --nnodes is {nn} (ranks 0..{nn - 1})", span,
                        subject=f"job {job.name}, server {nl.server.name}",
                        hint="number the nodes 0..N-1, each once")
            return
        seen[rank] = nl
    nn = ranks[0][1] if ranks else 0
    if ranks and len(ranks) == nn and len(seen) != nn:
        missing = min(set(range(nn)) - set(seen))
        yield error(NODE_RANKS, f"job {job.name}: no node gives {flag} {missing}",
                    ranks[-1][3], subject=f"job {job.name}",
                    hint="number the nodes 0..N-1, each once")


#: A node's own-address settings in a lifted script, and what reads each.
OWN_ADDRESSES = {
    "HCCL_IF_IP": "HCCL's host NIC for the root-info exchange",
    "VLLM_HOST_IP": "vLLM's own IP for this node (vllm/envs.py, get_ip in vllm/utils)",
    "--node-ip-address": "the address Ray registers this node under",
}


def _own_settings(nl) -> list:
    """(name, value, span) of the own-address settings one lifted node gives: its env's
    HCCL_IF_IP / VLLM_HOST_IP and any ``ray start --node-ip-address``."""
    out = [(n, v, nl.env_spans.get(n)) for n, v in nl.env if n in ("HCCL_IF_IP", "VLLM_HOST_IP")]
    for proc in nl.procs:
        value = proc.flags().get("--node-ip-address")
        if value is not None:
            out.append(("--node-ip-address", value, proc.spans.get("--node-ip-address")))
    return out


def _own_addresses(topo: Topology, plan: Plan):
    """RTC450 for each own-address setting of a script's node that is not the node's host
    IP (the first such setting the script gives; ``server.spans["host"]``). Each setting
    once, whichever jobs the node runs; values that are no IP are RTC720 / RTC721's."""
    seen = set()
    for jl in plan.launches.values():
        if jl.origin != "script":
            continue
        for nl in jl.nodes:
            s = nl.server
            given = _own_settings(nl) if s.host_ip is not None else []
            for name, value, span in given:
                try:
                    ip = ipaddress.ip_address(value.strip())
                except (ValueError, AttributeError):
                    continue
                if ip == s.host_ip or ip.is_unspecified or span is None or span in seen:
                    continue
                seen.add(span)
                host = s.span_of("host")
                by = next((n for n, _, sp in given if sp == host), "its host setting")
                yield _disagreeing(topo, s, (name, ip, span), by)


def _disagreeing(topo: Topology, s, setting: tuple, by: str):
    """The RTC450 finding of ``setting`` (name, ip, span) on server ``s``, whose host IP
    was set by ``by`` (a name of :data:`OWN_ADDRESSES`)."""
    name, ip, span = setting
    other = next((o for o in topo.servers if o is not s and o.host_ip == ip), None)
    whose = f" ({other.name}'s host IP)" if other is not None else ""
    read = f"; {by} is {OWN_ADDRESSES[by]}" if by in OWN_ADDRESSES else ""
    return error(FIXED_HOST_IP, f"{s.name}'s own addresses disagree: {name}={ip}{whose}, but "
                 f"{by}={s.host_ip}: {name} is {OWN_ADDRESSES[name]}{read}; the node would "
                 "announce two addresses and its peers reach one of them on the wrong machine",
                 span, subject=f"server {s.name}",
                 related=related(s.span_of("host"), f"{s.name}: {by}={s.host_ip}"),
                 hint=f"give {name} and {by} the node's one own IP (if {s.host_ip} is right: "
                      f"{name}={s.host_ip})")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (DISAGREE, NODE_RANKS)
