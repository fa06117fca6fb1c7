"""Launch and environment settings of a job (RTC500-RTC509): what the generated launch
scripts (the launch plan, :mod:`rtc.plan.launch`) can and cannot express, flags the user's ``args``
repeat, the vLLM version, extra ports the launch binds, and ``env`` lines for variables
rtc computes per node."""

from __future__ import annotations

from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.launch import extra_ports, needs_feature
from rtc.plan.modes import effective_executor
from rtc.plan.node_env import COMPUTED, node_env
from rtc.plan.versions import (FEATURES, VLLM_ALIASES, parse_version, version_problem,
                               version_text)
from rtc.network.env import env_map, parse_visible_devices
from rtc.rules import rule

UNSUPPORTED = rule("RTC500", "launch-unsupported", "error",
                   "The job's launch settings ask for a form rtc cannot launch.", """
    What: `executor ray` with dp > 1 (rtc runs one replica over Ray), `lb external` or
    `lb hybrid` while a replica spans servers, `executor`/`lb` on a job that is not vLLM,
    or a torchrun (Megatron) job whose servers hold different numbers of its NPUs.
    Why: the generated scripts would start processes whose ranks do not match the rank
    table: torchrun numbers ranks node_rank x nproc_per_node + local rank, and vLLM's
    external/hybrid balancing needs whole replicas on each server.
    Example: `executor ray` in a DP2 job.
    Fix: use `executor mp` (vLLM --nnodes), `lb internal`, or give every server the same
    number of devices.""")
VERSION = rule("RTC501", "vllm-version-lacks-feature", "error",
               "The cluster's vllm_version does not have a flag the launch needs.", """
    What: e.g. `lb hybrid` (--data-parallel-hybrid-lb) with `vllm_version 0.9.2`, or a
    replica over several servers without Ray (--nnodes) before vLLM 0.11.1. The table of
    first versions is in rtc/emit/launch/versions.py.
    Why: vLLM rejects the unknown flag at start-up ("unrecognized arguments").
    Example: `vllm_version 0.10.0` with `lb hybrid`.
    Fix: upgrade vLLM (and vllm_version), or choose another form (`lb internal`,
    `executor ray`).""")
BAD_VERSION = rule("RTC502", "unreadable-vllm-version", "warning",
                   "vllm_version is not a version number rtc can read.", """
    What: e.g. `vllm_version latest` or `vllm_version main`, or a release number out of
    range (`99999999999999999999.0.0`: a part longer than 6 digits).
    Why: rtc cannot check flags against it and writes the conservative launch form.
    Example: `vllm_version nightly`.
    Fix: write the release, e.g. `vllm_version 0.11.0`.""")
ARG_CONFLICT = rule("RTC503", "launch-arg-conflict", "error",
                    "`args` / `head_args` / `worker_args` repeat a flag rtc already sets.", """
    What: a flag rtc generates from the plan (--tensor-parallel-size, --data-parallel-*,
    --port, --headless, --kv-transfer-config, --nnodes, ...) also appears in the job's
    extra arguments for the same node.
    Why: vLLM's argument parser keeps the last value, so the extra argument silently
    overrides the plan, and the nodes disagree with the rank table and each other.
    Example: `args "--tensor-parallel-size 16"` in a `tp 8` job.
    Fix: set it with the job attribute (tp, dp, port, dp_rpc_port, ...) and drop it from
    the arguments.""")
HYBRID_ONE = rule("RTC504", "hybrid-lb-one-replica", "warning",
                  "`lb hybrid` on a server that runs one replica.", """
    What: with hybrid load balancing, a server with `dp_local 1`.
    Why: vLLM switches such a node to external load balancing ("data_parallel_hybrid_lb
    is not eligible when data_parallel_size_local = 1"), so it does not behave like the
    others.
    Example: `lb hybrid` in a DP2 job over two 8-NPU servers with TP8.
    Fix: use `lb external` (one server process per DP rank) or `lb internal`.""")
LB_NO_DP = rule("RTC505", "lb-without-dp", "warning",
                "`lb external` / `lb hybrid` in a job without data parallelism.", """
    What: `lb` is set but dp is 1 (or the job runs on one server, for hybrid).
    Why: there is nothing to balance; vLLM rejects external LB with DP 1
    ("data_parallel_external_lb can only be set when data_parallel_size > 1"). rtc ignores
    the setting.
    Example: `lb external` in a TP8 job.
    Fix: remove `lb`, or set `dp`.""")
HEADLESS_EMPTY = rule("RTC506", "headless-without-replica", "error",
                      "A headless worker would run no DP replica.", """
    What: internal load balancing with a worker server whose `dp_local` is 0.
    Why: vLLM refuses to start: "data_parallel_size_local must be > 0 in headless mode".
    Example: `on atlas-02 dp_local 0` in a DP job whose head is atlas-01.
    Fix: give the worker at least one replica, or leave it out of the job (only the head
    may be API-only with dp_local 0).""")
ENV_COMPUTED = rule("RTC507", "env-overridden-by-rtc", "warning",
                    "A job `env` line sets a variable rtc computes per node, to another value.", """
    What: e.g. `env ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3"` where the job uses devices 0..7
    on a server, or RANK_TABLE_FILE / RANK_SIZE / MASTER_ADDR written by hand.
    Why: rtc writes these per node from the plan (the env file and launch script), so the
    written value is not used; if it was meant, the plan says something else.
    Example: `env RANK_SIZE = 8` in a 16-rank job.
    Fix: remove the line (rtc's value is in the env file), or change the plan.""")
PORT_CONFLICT = rule("RTC508", "launch-port-conflict", "error",
                     "A port the launch binds is taken by another claim on that host.", """
    What: ports the generated launch binds besides the port plan's (external-LB API
    servers on port + local index, hybrid-LB API servers on every server, the default Ray
    port 6379, vLLM/torchrun --master-port) overlap a port another job or setting uses
    on the same host (see `rtc explain RTC440`).
    Why: the second process to bind fails with "Address already in use" at start-up.
    Example: `lb external` with `port 8000` on a server where another job's API server
    uses 8001.
    Fix: choose another `port` / `master_port` / `ray_port`.""")
ENV_SHADOWS = rule("RTC511", "env-shadows-launch-variable", "warning",
                   "A job env line replaces a launch-script variable or a search path.", """
    What: `env MODEL = ...` or `env ENTRY = ...` (variables the launch scripts set from the
    job's `model` / `entry`), `env RTC_DIR` (the scripts' own folder), or `env PATH`,
    `LD_LIBRARY_PATH`, `PYTHONPATH`.
    Why: the env file is sourced first, so MODEL/ENTRY silently replace the job attribute;
    a literal PATH replaces the whole search path, and `vllm` or CANN's libraries are then
    not found ("vllm: command not found").
    Example: `env MODEL = /models/B` in a job with `model "/models/A"`.
    Fix: use the job attribute, and extend search paths in the image or shell.""")
BLOCKED = rule("RTC509", "launch-needs-host", "warning",
               "No launch script is written: a server of the multi-server job has no host IP.", """
    What: a job on several servers (or over Ray) where a server has no `host`.
    Why: the scripts need the head's address (--data-parallel-address, ray start, the
    master address) and each node's own (--node-ip-address); rtc will not guess them. The
    rank table and env files are still written.
    Example: `server atlas-02 { devices 0..7 }` in a DP2 job.
    Fix: add `host ADDRESS` to every server of the job.""")

_ALIASES = VLLM_ALIASES


# vLLM flags that decide what the rank table describes: never taken from `args`, even when
# the launch does not write them itself (e.g. -pp 2 in a job with pp 1).
_PLAN_FLAGS = frozenset({
    "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
    "--data-parallel-size-local", "--data-parallel-start-rank", "--data-parallel-rank",
    "--data-parallel-address", "--enable-expert-parallel", "--prefill-context-parallel-size",
    "--decode-context-parallel-size", "--distributed-executor-backend",
    "--data-parallel-backend", "--nnodes", "--node-rank", "--headless"})


def _flag(word: str) -> str | None:
    if not word.startswith("-") or word == "-" or word[1:2].isdigit():
        return None
    name = word.split("=", 1)[0]
    name = _ALIASES.get(name, name)
    return name.replace("_", "-") if name.startswith("--") else name


def check(topo: Topology, plan: Plan):
    if topo.vllm_version and parse_version(topo.vllm_version) is None \
            and any(j.framework == "vllm" for j in topo.jobs):
        yield warning(BAD_VERSION, f"vllm_version '{topo.vllm_version}' "
                      f"{version_problem(topo.vllm_version)}; the launch scripts use the "
                      "conservative form", topo.span,
                      hint="write the release, e.g. `vllm_version 0.11.0`")
    for job in topo.jobs:
        if not job.placements:
            continue
        if job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue   # an error about the unreadable attribute was reported already
        spec = job.launch
        problem = _unsupported(topo, job, spec)
        if problem:
            key, message, hint = problem
            yield error(UNSUPPORTED, f"job {job.name}: {message}",
                        spec.span_of(key, job.span_of(key)),
                        subject=f"job {job.name}", hint=hint)
            continue
        jl = plan.launches.get(job.name)
        if jl is None:
            continue   # a broken placement is reported by RTC3xx
        if jl.blocked and not any("host" in p.server.incomplete for p in job.placements):
            yield warning(BLOCKED, f"job {job.name}: no launch scripts are written: "
                          f"{jl.blocked}", job.span, subject=f"job {job.name}",
                          hint="add `host ADDRESS` to every server of the job")
        if jl.blocked:
            continue
        for feature in needs_feature(topo, jl):
            f = FEATURES[feature]
            yield error(VERSION, f"job {job.name}: the launch needs {f.what}, which vLLM "
                        f"{topo.vllm_version} does not have (from {version_text(f.first)})",
                        job.span, subject=f"job {job.name}",
                        hint=f"set vllm_version to {version_text(f.first)} or later if that "
                             "is what runs, or choose another form (lb / executor)")
        yield from _lb_findings(job, spec, jl)
        yield from _arg_conflicts(job, spec, jl)
        yield from _ports(plan, job, extra_ports(plan.ports, jl))
        yield from _env_overrides(topo, plan, job, jl)
        yield from _env_shadows(job, jl)


def _unsupported(topo, job, spec):
    if job.framework != "vllm":
        for key in ("executor", "lb"):
            if getattr(spec, key):
                return key, f"`{key}` applies to vLLM jobs only (framework {job.framework})", \
                    f"remove `{key}`"
        if job.framework == "megatron":
            counts = {len(p.device_ids) for p in job.placements if p.device_ids}
            if len(counts) > 1:
                return "servers", ("torchrun starts the same number of processes on every "
                                   f"server, but the job uses {sorted(counts)} NPUs on its "
                                   "servers"), "use the same number of devices on every server"
        return None
    pl = topo.placement(job)
    spans = any(n.replica is not None and n.replica[2] > 1 for n in pl.nodes)
    if job.dp > 1 and effective_executor(job, pl) == "ray":
        key = "executor" if spec.executor == "ray" else "ray_port"
        why = "`executor ray`" if key == "executor" else "`ray_port` (which selects Ray)"
        return key, (f"{why} runs one replica over Ray, but dp is {job.dp}"), \
            ("use `executor mp`" if key == "executor" else "remove `ray_port`") + \
            " (one vllm serve per server, --nnodes when a replica spans servers)"
    if spec.lb in ("external", "hybrid") and (spans or spec.executor == "ray" or
                                              job.ray_port is not None):
        return "lb", (f"`lb {spec.lb}` needs whole replicas on each server, but "
                      + ("one replica spans servers" if spans else "the job runs over Ray")), \
            "remove `lb` (internal load balancing)"
    return None


def _lb_findings(job, spec, jl):
    if spec.lb in ("external", "hybrid") and (job.dp == 1 or jl.mode == "single"):
        yield warning(LB_NO_DP, f"job {job.name}: `lb {spec.lb}` has no effect: "
                      + ("dp is 1" if job.dp == 1 else "the job runs on one server"),
                      spec.span_of("lb", job.span), subject=f"job {job.name}",
                      hint="remove `lb`")
    if jl.mode == "dp-hybrid":
        ones = [nl.server.name for nl in jl.nodes if nl.node.dp_local == 1]
        if ones:
            yield warning(HYBRID_ONE, f"job {job.name}: `lb hybrid` with one replica on "
                          f"{ones[0]}" + (f" (and {len(ones) - 1} more)" if len(ones) > 1 else "")
                          + ": vLLM switches such a node to external load balancing",
                          spec.span_of("lb", job.span), subject=f"job {job.name}",
                          hint="use `lb external`, or `lb internal`")
    if jl.mode == "dp-internal":
        for nl in jl.nodes[1:]:
            if not nl.node.dp_local:
                yield error(HEADLESS_EMPTY, f"job {job.name}: worker {nl.server.name} would "
                            "run headless with no replica (dp_local 0)", job.span,
                            subject=f"server {nl.server.name}",
                            hint="give it at least one replica, or leave it out of the job")
                break


def _arg_conflicts(job, spec, jl):
    seen = set()
    for nl in jl.nodes:
        for proc in nl.procs:
            if not proc.user_args:
                continue
            n = len(proc.argv) - len(proc.user_args)
            ours = {f for a in proc.argv[:n] if isinstance(a, str) and (f := _flag(a))}
            if any(isinstance(a, str) and a.startswith("--port") for a in proc.argv[:n]):
                ours.add("--port")
            plan_flags = _PLAN_FLAGS if job.framework == "vllm" else frozenset()
            for word in proc.user_args:
                f = _flag(word)
                if f and (f in ours or f in plan_flags) and f not in seen:
                    seen.add(f)
                    key = "args" if word in spec.args else \
                        ("head_args" if nl.head else "worker_args")
                    what = f"which rtc already sets on {nl.server.name} from the plan" \
                        if f in ours else "which changes the plan the rank table describes " \
                        "(parallel sizes, executor or node layout)"
                    yield error(ARG_CONFLICT, f"job {job.name}: `{key}` passes {word}, {what}",
                                spec.span_of(key, job.span), subject=f"job {job.name}",
                                hint="set it with the job's attribute (tp, pp, dp, "
                                     f"expert_parallel, executor, ...) and remove it from "
                                     f"`{key}`")


def _ports(plan: Plan, job, extra):
    for server, lo, hi, what in extra:
        for c in plan.ports.on(server):
            if c.job == job.name and c.kind in ("api", "ray"):
                continue
            if c.hi >= lo and c.lo <= hi:
                yield error(PORT_CONFLICT, f"job {job.name}: the launch binds {what} "
                            f"{lo if lo == hi else f'{lo}-{hi}'} on {server}, which overlaps "
                            f"{c.owner}", c.span or job.span, subject=f"server {server}",
                            related=[Related(job.span, f"job {job.name}")],
                            hint="choose another port / master_port / ray_port")
                break


# Search paths a job `env` line would replace wholesale (the value is literal: no $PATH).
_SEARCH_PATHS = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH")


def _env_shadows(job, jl):
    """RTC511: job env lines that replace a launch-script variable or a search path."""
    env = env_map(job)
    script_vars = {name: value for nl in jl.nodes for name, value, _ in nl.variables}
    for name, (value, span) in env.items():
        if name == "RTC_DIR":
            yield warning(ENV_SHADOWS, f"job {job.name}: env RTC_DIR={value} replaces the folder "
                          "the launch scripts find their env files and rank table in", span,
                          subject=f"job {job.name}",
                          hint="remove the line: each script sets RTC_DIR to its own folder")
        elif name in script_vars:
            yield warning(ENV_SHADOWS, f"job {job.name}: env {name}={value} replaces the "
                          f"launch scripts' {name} ({script_vars[name] or 'not set'}): the env "
                          "file is sourced before the script sets it", span,
                          subject=f"job {job.name}",
                          hint=f"set it with the job attribute ({name.lower()} \"...\") and "
                               "remove the env line")
        elif name in _SEARCH_PATHS:
            yield warning(ENV_SHADOWS, f"job {job.name}: env {name}={value} replaces the whole "
                          f"{name} on every server (the value is written literally, "
                          f"${name} is not expanded)", span, subject=f"job {job.name}",
                          hint="keep CANN's set_env.sh and the vllm/python install reachable: "
                               f"extend {name} where the script runs (the image or the shell), "
                               "not in the job")


def _not_ascending(value: str) -> bool:
    """True when ``value`` is a well-formed device list out of ascending order (RTC434)."""
    parsed = parse_visible_devices(value)
    return not parsed.problem and list(parsed.ids) != sorted(parsed.ids)


def _env_overrides(topo, plan: Plan, job, jl):
    env = env_map(job)
    names = [n for n in env if n in COMPUTED]
    if not names:
        return
    for nl in jl.nodes:
        ne = node_env(topo, plan.ports, job, nl.server, nl.node.device_ids, stem=nl.stem,
                      head=nl.head, launch_env=nl.env, table="hccl.json")
        per_proc = {k: v for p in nl.procs for k, v in p.env}
        for name in list(names):
            value, span = env[name]
            ours = ne.get(name) if any(v.name == name and v.origin == "rtc"
                                       for v in ne.variables) else per_proc.get(name)
            if ours is None and name not in per_proc:
                if name in ("HCCL_IF_IP", "VLLM_HOST_IP", "HCCL_IF_BASE_PORT"):
                    continue   # judged by RTC450 / the port plan
                ours = None
            if ours is not None and ours == value:
                continue
            if name in ("HCCL_IF_IP", "VLLM_HOST_IP", "HCCL_IF_BASE_PORT") or \
                    (name == "ASCEND_RT_VISIBLE_DEVICES" and _not_ascending(value)):
                continue   # judged elsewhere (RTC434 says a non-ascending list is replaced)
            per_process = name in ("RANK_ID", "DEVICE_ID", "RANK", "LOCAL_RANK")
            shown = "rtc sets it per process" if per_process else \
                f"rtc writes {ours}" if ours is not None else "rtc does not use it"
            yield warning(ENV_COMPUTED, f"job {job.name}: env {name}={value} is not used on "
                          f"{nl.server.name}: {shown}", span, subject=f"job {job.name}",
                          hint="remove the line; rtc computes this variable per node")
            names.remove(name)
        if not names:
            break

#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNSUPPORTED, VERSION, BAD_VERSION, ARG_CONFLICT, HYBRID_ONE, LB_NO_DP,
         HEADLESS_EMPTY, ENV_COMPUTED, PORT_CONFLICT, BLOCKED, ENV_SHADOWS)
