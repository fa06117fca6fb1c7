"""Where the scripts drift from a plan (``rtc lint --against cluster.rtc``): the flags,
environment and start ranks each node's scripts give, compared with what ``rtc compile``
plans for the server with the same host IP (RTC707).

Compared, per vLLM ``serve`` process: the flags that decide the layout and the ports
(:data:`COMPARED_FLAGS`; a switch is compared as present or absent); per node: the
variables of the planned node environment (``HCCL_IF_IP``, ``*_SOCKET_IFNAME``,
``ASCEND_RT_VISIBLE_DEVICES``, ``HCCL_IF_BASE_PORT``, the job's ``env`` lines; RTC_DIR-based
paths are not compared). Nodes of the plan that no script runs, and scripts for hosts the
plan does not have, are reported too.
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic, Related, warning
from rtc.plan.node_env import node_env
from rtc.plan.versions import vllm_flags
from rtc.rules import rule

DRIFT = rule("RTC707", "script-drifts-from-plan", "warning",
             "A script's flag, environment variable or node differs from the plan it is checked against.", """
    What: with `--against cluster.rtc`, a node's launch passes another value for a flag
    the plan sets (--port, --data-parallel-start-rank, --tensor-parallel-size, ...),
    exports another value than the planned environment (HCCL_IF_IP, ASCEND_RT_VISIBLE_
    DEVICES, HCCL_IF_BASE_PORT, the job's env lines), or runs on a host the plan has no
    server for (or a planned server has no script).
    Why: the rank table and the checks describe the plan; a node that runs something else
    is not what was checked, and the difference is often the one that hangs the job.
    Example: the plan gives atlas-02 --data-parallel-start-rank 1, the script passes 2.
    Fix: regenerate the scripts with `rtc compile --out-dir`, or change the description.""")

#: vLLM flags compared between a script and the plan.
COMPARED_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
                  "--data-parallel-size-local", "--data-parallel-start-rank",
                  "--data-parallel-address", "--data-parallel-rpc-port", "--port",
                  "--headless", "--enable-expert-parallel", "--data-parallel-hybrid-lb",
                  "--data-parallel-rank", "--distributed-executor-backend", "--nnodes",
                  "--node-rank", "--master-addr", "--master-port")


def _serve(nl):
    for proc in nl.procs:
        words = proc.words()
        if "serve" in words[:3] or any("api_server" in w for w in words[:3]):
            return proc, vllm_flags(words)
    return None, None


def drift(lifted: dict, topo, plan, source: str) -> list[Diagnostic]:
    """RTC707 findings: ``lifted`` is the scripts' job name -> JobLaunch, ``topo`` / ``plan``
    the compiled description (named ``source``)."""
    planned = {}
    for jl in plan.launches.values():
        for nl in jl.nodes:
            if nl.server.host_ip is not None:
                planned.setdefault(str(nl.server.host_ip), []).append(nl)
    out, seen = [], set()
    for jl in lifted.values():
        for nl in jl.nodes:
            host = str(nl.server.host_ip) if nl.server.host_ip is not None else None
            span = next((p.spans.get("") for p in nl.procs if p.spans.get("")), jl.job.span)
            candidates = planned.get(host, []) if host else []
            if not candidates:
                out.append(warning(DRIFT, f"{nl.server.name} ({host or 'no host IP'}) is no "
                                   f"server of {source}", span, subject=nl.server.label,
                                   hint="add the server to the description, or correct the "
                                        "script's HCCL_IF_IP"))
                continue
            mine = _serve(nl)[1] or {}
            ref = min(candidates, key=lambda c: _distance(mine, _serve(c)[1] or {}))
            seen.add(id(ref))
            out += _compare(nl, ref, topo, plan, source)
    for nls in planned.values():
        for ref in nls:
            if id(ref) not in seen:
                out.append(warning(DRIFT, f"{source} plans job {ref.job.name} on "
                                   f"{ref.server.name} ({ref.server.host_ip}), but no script "
                                   "runs it", ref.job.span, subject=ref.server.label,
                                   hint="lint that server's script too"))
    return out


def _distance(a: dict, b: dict) -> int:
    return sum(a.get(f) != b.get(f) or (f in a) != (f in b) for f in COMPARED_FLAGS)


def _compare(nl, ref, topo, plan, source: str) -> list[Diagnostic]:
    out = []
    proc, mine = _serve(nl)
    ref_proc, theirs = _serve(ref)
    where = f"{source}, job {ref.job.name} on {ref.server.name}"
    if proc is not None and ref_proc is not None:
        for flag in COMPARED_FLAGS:
            if (flag in mine) == (flag in theirs) and mine.get(flag) == theirs.get(flag):
                continue
            shown = "absent" if flag not in mine else (mine[flag] or "given")
            want = "absent" if flag not in theirs else (theirs[flag] or "given")
            out.append(warning(DRIFT, f"{nl.server.name}: {flag} is {shown} here, {want} in "
                               f"the plan ({where})", proc.spans.get(flag) or proc.spans.get(""),
                               subject=nl.server.label,
                               related=[Related(ref.job.span, f"job {ref.job.name}")],
                               hint="regenerate the script with `rtc compile --out-dir`, or "
                                    "change the description"))
    ne = node_env(topo, plan.ports, ref.job, ref.server, ref.node.device_ids, stem=ref.stem,
                  head=ref.head, launch_env=ref.env)
    have = dict(nl.env)
    for var in ne.variables:
        if var.path or "RTC_DIR" in var.value:
            continue
        got = have.get(var.name)
        if got != var.value:
            span = nl.env_spans.get(var.name) or next(
                (p.spans.get("") for p in nl.procs if p.spans.get("")), nl.job.span)
            out.append(warning(DRIFT, f"{nl.server.name}: {var.name} is "
                               f"{'not exported' if got is None else got} here, "
                               f"{var.value} in the plan ({where})", span,
                               subject=nl.server.label,
                               hint=f"export {var.name}={var.value}, or change the description"))
    return out


#: The rules this module reports (collected by rtc.catalogue).
RULES = (DRIFT,)
