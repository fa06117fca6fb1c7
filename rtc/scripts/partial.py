"""Jobs of which only some nodes' scripts are given (RTC461), and DP or Ray workers that do
not name their head's address (RTC709).

``rtc lint atlas-01.sh`` of one node of a two-node DP job lifts a job whose launch flags
want more devices than the one script starts. The rules that judge a job over all of its
nodes would report the absent nodes as mistakes (RTC210 world size, RTC302 DP coverage,
RTC530 start ranks, and RTC451 when the DP head is among the absent nodes); for such a job
they are dropped and one note says which nodes' scripts were given and what was skipped.

A job counts as partial when the scripts give it fewer devices than its world size *and*
its launch says it spans other nodes: a vLLM DP launch with ``--headless``, a start rank, or
``--data-parallel-size-local`` below ``--data-parallel-size``; ``vllm serve --nnodes N``,
``torchrun`` / ``msrun`` with more nodes than given; a Ray head given without any of its
workers (and a Ray worker without its head, whatever its device count). A Ray head given
with its workers is the whole cluster: the devices they offer (``--num-gpus``) are judged
against TP x PP by RTC210. A single-node launch
that wants more devices than it has (``-tp 16`` alone) stays an RTC210 error.
"""

from __future__ import annotations

from rtc.checks.dp_launch import START_RANKS
from rtc.checks.host_addressing import DP_ADDRESS
from rtc.checks.node_fit import DP_COVERAGE
from rtc.checks.overlapping_ranks import SHARED_DEVICE
from rtc.checks.world_size import WORLD_SIZE
from rtc.diagnostics import Diagnostic, Related, error, note
from rtc.model.topology import Job
from rtc.scripts import rules as R
from rtc.scripts.lift import Group, engines, int_value, shared_engines
from rtc.scripts.values import is_ip
from rtc.textfmt import compact

#: The rules that judge a job over all of its nodes (skipped for a partial job).
NEEDS_ALL_NODES = tuple(r.code for r in (WORLD_SIZE, DP_COVERAGE, START_RANKS))
#: Skipped too when the DP head is not among the scripts (its address is no given host).
NEEDS_THE_HEAD = (DP_ADDRESS.code,)


def _spread(g: Group, job: Job) -> str | None:
    """Why the launch spans other nodes than the given ones (flag text), else None."""
    la = g.members[0].main
    if g.kind in ("nnodes", "torchrun", "msrun", "sglang"):
        flag = "--nnodes" if la.has("--nnodes") else "--worker_num"
        text = la.value(flag) or "1"
        count = int_value(text.split(":")[-1]) or 1
        return f"{flag} {text}" if count > len(g.members) else None
    if g.kind == "ray":
        return "a Ray cluster"   # the head and its workers: `ray start --head` / `--address`
    if g.kind != "dp":
        return None
    for m in g.members:
        x = m.main
        local = int_value(x.value("--data-parallel-size-local"))
        start = x.value("--data-parallel-start-rank")
        if x.has("--headless") or (int_value(start) or 0) > 0:
            return (f"{m.node.name} runs {'--headless ' * x.has('--headless')}"
                    f"{f'--data-parallel-start-rank {start}' if start else ''}").strip()
        if local is not None and local < job.dp:
            return f"--data-parallel-size {job.dp} with --data-parallel-size-local {local}"
    return None


def _all_dp_ranks(g: Group, job: Job) -> bool:
    """Whether the head and nodes for every DP rank are given (local DP sizes add up)."""
    locals_ = [int_value(la.value("--data-parallel-size-local")) for m in g.members
               for la in engines(m, g)]      # a node may run the head and a worker
    return any(m.rank == 0 for m in g.members) and None not in locals_ and \
        sum(locals_) >= job.dp


def partial_jobs(groups: list[Group], jobs: list[Job]) -> dict[str, tuple[Diagnostic, tuple]]:
    """Job name -> (the RTC461 note, the rule ids to skip for it) for each partial job.
    ``groups`` and ``jobs`` are :func:`rtc.scripts.lift.lift`'s input and output, in the
    same order (one job per group)."""
    out = {}
    for g, job in zip(groups, jobs):
        ray_worker = g.kind == "ray" and not any(
            la.kind == "ray" and la.has("--head") for m in g.members for la in m.launches)
        if not g.members or (job.device_count >= job.world_size and not ray_worker):
            continue
        if g.kind == "dp" and _all_dp_ranks(g, job):
            continue        # too few devices on a node given: RTC303 / RTC210 say so
        if g.kind == "ray" and not ray_worker and len(g.members) > 1:
            continue        # a Ray head linted with its workers: the cluster is all given
            # (a worker at another address joins it too: RTC709), so RTC210 judges it
        why = "a Ray worker (`ray start --address`) whose head is not given" if ray_worker \
            else _spread(g, job)
        if why is None:
            continue
        if job.device_count < job.world_size:
            why = f"{job.device_count} of the {job.world_size} devices its launch needs, {why}"
        head = any(m.rank == 0 for m in g.members) if g.kind == "dp" else True
        skip = NEEDS_ALL_NODES + (() if head else NEEDS_THE_HEAD)
        names = ", ".join(m.node.name for m in g.members[:4]) + \
            (f" and {len(g.members) - 4} more" if len(g.members) > 4 else "")
        count = len(g.members)
        msg = (f"job {job.name}: of the scripts given, {count} start{'s' * (count == 1)} a "
               f"node of it ({names}: {why}); no script given starts its other nodes (a script "
               f"whose launch gives another master address, port or sizes starts another job), "
               f"so the rules that need all of a job's nodes ({', '.join(skip)}) are skipped "
               f"for it")
        out[job.name] = (note(R.NODES_NOT_GIVEN, msg, job.span, subject=f"job {job.name}",
                              hint="lint every node's script of the job in one run, e.g. "
                                   "`rtc lint atlas-01.sh atlas-02.sh` (an rtc --out-dir: "
                                   "`rtc lint DIR/*.sh`)"), skip)
    return out


def shared_engine_devices(groups: list[Group], gpu: bool) -> list[Diagnostic]:
    """RTC300 at the later of two vLLM DP engines of one job that one node starts on the
    same devices (:func:`rtc.scripts.lift.shared_engines`): e.g. the head and a headless
    worker both pinned by ``srun --nodelist=gpu-01``, each taking the first TP devices."""
    var = "CUDA_VISIBLE_DEVICES" if gpu else "ASCEND_RT_VISIBLE_DEVICES"
    out = []
    for m, first, later, ids in shared_engines(groups, gpu):
        rank = int_value(later.value("--data-parallel-start-rank"), 0)
        out.append(error(SHARED_DEVICE, f"{m.node.name} device{'s' * (len(ids) > 1)} "
                         f"{compact(ids)} {'are' if len(ids) > 1 else 'is'} claimed by two "
                         f"engines of one vLLM DP job: this launch (DP start rank {rank}) and "
                         f"the one at line {first.span.line}", later.span,
                         subject=m.node.name,
                         related=[Related(first.span, f"{m.node.name}: the first engine")],
                         hint="run one engine with --data-parallel-size-local covering "
                              f"both ranks, or give each engine its own {var} (e.g. 0-7 "
                              "and 8-15), or start them on different nodes"))
    return out


def lost_workers(groups: list[Group]) -> list[Diagnostic]:
    """RTC709 for each DP worker :func:`rtc.scripts.lift.group_launches` joined to its
    head although the worker does not name the head's host."""
    out = []
    for g in groups:
        if g.kind == "ray":
            out += [d for m, flag in g.lost if (d := _ray_lost(g, m, flag)) is not None]
            continue
        head = g.members[0].node if g.members else None
        where = f"{head.name} ({head.host_ip})" if head and head.host_ip else \
            (head.name if head else "?")
        for m, flag in g.lost:
            la = m.main
            if flag is None:
                msg = (f"{m.node.name} runs --headless without --data-parallel-address: vLLM "
                       f"then waits for the DP head at 127.0.0.1 (its own host) for ever; the "
                       f"head is {where}")
                span = la.span
            else:
                msg = (f"{m.node.name}'s --data-parallel-address {flag.value} is the host of "
                       f"no node given: vLLM waits for the DP head at an unknown host for "
                       f"ever; the head is {where}")
                span = flag.value_span or flag.span
            fix = f" {head.host_ip}" if head and head.host_ip else ""
            out.append(error(R.LOST_WORKER, msg, span, subject=f"server {m.node.name}",
                             hint=f"give {m.node.name} --data-parallel-address{fix} "
                                  "(the DP head's host IP)"))
    return out


def _ray_lost(g: Group, m, flag) -> Diagnostic | None:
    """RTC709 for a Ray worker whose ``ray start --address`` (``flag``, None when left
    out) is not the GCS address of the one Ray head given. ``ray start --head`` serves the
    GCS on ``--port``, 6379 when left out (ray-project/ray python/ray/scripts/scripts.py,
    ``ray start --port``: "If not provided, defaults to ray_constants.DEFAULT_PORT",
    6379 in python/ray/_private/ray_constants.py); a worker dials ``--address`` host:port
    and, finding no GCS there, fails after its connection retries. The host may be text
    the scripts leave unresolved (``$(srun -w "$head" hostname --ip-address)`` in a Slurm
    script): when the worker's host is that same text, only a differing port is judged.
    None when the address cannot be compared: its host holds a variable other than the
    head's (another rule's finding), or names the head's host by a name where the head
    gives no IP."""
    head = g.members[0]
    ray = next((x for x in head.launches if x.kind == "ray" and x.has("--head")), head.main)
    host = ray.value("--node-ip-address") or (str(head.node.host_ip) if head.node.host_ip
                                               else head.node.name)
    port = ray.value("--port") or "6379"
    gcs = f"{host}:{port}" if _readable(host) else \
        f"its --node-ip-address ({_short(host)}), port {port}"
    said = "" if ray.has("--port") else " (Ray's default port)"
    where = f"{head.node.name}'s `ray start --head` serves the GCS at {gcs}{said}"
    if flag is None or not flag.value:
        la = next((x for x in m.launches if x.kind == "ray"), m.main)
        msg = (f"{m.node.name} runs `ray start` without --address, so it joins no Ray "
               f"cluster; {where}")
        span = la.span
    else:
        what = _address_differs(flag.value, host, port)
        if what is None:
            return None
        said = f"`ray start --address={flag.value}`" if _readable(flag.value) else \
            f"`ray start --address` (the head's host, port {flag.value.rpartition(':')[2]})"
        msg = (f"{m.node.name}'s {said} is not the Ray head's "
               f"address ({what} differ{'s' * (what != 'host and port')}): {where}; the "
               "worker finds no GCS there and never joins, and vLLM on the head waits for "
               "the devices it was to bring")
        span = flag.value_span or flag.span
    right = gcs if _readable(host) else f"<the head's --node-ip-address>:{port}"
    return error(R.LOST_WORKER, msg, span, subject=f"server {m.node.name}",
                 related=[Related(ray.span_of("--port") if ray.has("--port") else ray.span,
                                  f"{head.node.name}: the Ray head, GCS at {gcs}")],
                 hint=f"give {m.node.name} `ray start --address={right}` (the head's "
                      "--node-ip-address and --port)")


def _address_differs(address: str, host: str, port: str) -> str | None:
    """What of a worker's ``--address`` differs from the head's GCS ``host``:``port``:
    "port", "host" or "host and port"; None when it is the head's, or cannot be compared
    (see :func:`_ray_lost`)."""
    a_host, _, a_port = address.rpartition(":")
    a_host, a_port = (a_host, a_port) if a_host else (address, "6379")
    if a_host == host and not _readable(host):
        # the head's own unresolved text: the same host whatever it resolves to
        return "port" if a_port.isdigit() and port.isdigit() and a_port != port else None
    if not _readable(address) or (a_port == port and not (is_ip(a_host) and is_ip(host))):
        return None
    if a_host == host and a_port == port:
        return None
    return "port" if a_host == host else "host" if a_port == port else "host and port"


def _readable(text: str) -> bool:
    """Whether ``text`` holds no shell expansion the scripts left unresolved."""
    return "$" not in text and "`" not in text


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def drop_skipped(diagnostics: list[Diagnostic], partial: dict) -> list[Diagnostic]:
    """``diagnostics`` without the findings :func:`partial_jobs` skips (matched by the
    job named in their subject), with its notes added."""
    def skipped(d: Diagnostic) -> bool:
        subject = (d.subject or "").split(",")[0]
        name = subject[4:] if subject.startswith("job ") else None
        return name in partial and d.code in partial[name][1]

    return [d for d in diagnostics if not skipped(d)] + [n for n, _ in partial.values()]


__all__ = ["partial_jobs", "lost_workers", "drop_skipped", "NEEDS_ALL_NODES", "NEEDS_THE_HEAD"]
