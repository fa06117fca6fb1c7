"""The processes of a vLLM data-parallel job as launched (RTC530-RTC532): DP start ranks,
``--headless`` forms the vLLM version rejects, and Gloo's interface on multi-node jobs.

They read the launch plan (:attr:`rtc.plan.Plan.launches`): for ``.rtc`` descriptions the
argv rtc generates, for ``rtc lint`` the argv lifted from the scripts (each flag with the
span it was written at, :attr:`rtc.plan.launch.Proc.spans`). The version facts are data in
:mod:`rtc.plan.versions` (``start_rank_zero_set``, :data:`~rtc.plan.versions.HEADLESS_FORMS`).
"""

from __future__ import annotations

from rtc.diagnostics import Span, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.plan.versions import FEATURES, VLLM_ALIASES, has, parse_version, version_text
from rtc.rules import rule

START_RANKS = rule("RTC530", "dp-start-ranks", "error",
                   "The DP start ranks of a job's nodes overlap or leave a gap.", """
    What: in a multi-node vLLM DP job, each node runs DP ranks
    [--data-parallel-start-rank, + --data-parallel-size-local); two nodes claim one rank,
    or some rank below --data-parallel-size is on no node (the head's start rank is 0).
    Why: two engines with one DP rank make the front end see a second HELLO ("unexpected
    HELLO" / duplicate engine index) and hang; a missing rank is waited for until the
    5-minute handshake timeout.
    Example: head -dpl 1 (rank 0) and a worker with --data-parallel-start-rank 2 in a
    --data-parallel-size 2 job.
    Fix: give node k the start rank = the sum of the local sizes of the nodes before it.""")
HEADLESS_FORM = rule("RTC531", "headless-lb-rejected", "error",
                     "The job's mix of --headless, start ranks and LB flags is one vLLM rejects.", """
    What: a head (no --headless) with an explicit --data-parallel-start-rank (0 too)
    while the workers run --headless: from vLLM 0.28 (PR 47692) an explicit 0 counts as
    set, the head infers hybrid LB (external with --data-parallel-size-local 1), and it
    rejects the workers. Also --headless with --data-parallel-hybrid-lb or
    --data-parallel-rank (every release), and a non-head node with a start rank but
    without --headless next to headless workers.
    Why: the head fails at start-up: "Remote engine 1 must not use --headless in external
    or hybrid dp lb mode" (or "must use --headless unless in external or hybrid dp lb
    mode").
    Example: the head of D1 with `--data-parallel-start-rank 0 --data-parallel-size-local
    1` on vLLM 0.29.
    Fix: the head passes no --data-parallel-start-rank (0 is its default in every
    version); workers keep --headless and their start ranks. An error when the declared
    vLLM version (vllm_version / --vllm-version) has the change, a warning when it is not
    known.""")
GLOO_UNSET = rule("RTC532", "gloo-ifname-unset", "warning",
                  "A node of a multi-node job starts without GLOO_SOCKET_IFNAME, or with loopback.", """
    What: a script of a job on several nodes does not export GLOO_SOCKET_IFNAME (vLLM's
    DP and torch.distributed CPU groups use Gloo), or exports `lo`, the loopback interface
    (SGLang PR 26069's two-node example).
    Why: Gloo then resolves the node's host name, which on many servers is 127.0.1.1 or
    a docker bridge address: the other nodes connect to loopback and the rendezvous hangs
    or fails with "Connection refused".
    With `lo` Gloo binds 127.0.0.1 on purpose (torch's ProcessGroupGloo uses the named
    interface's address), with the same result.
    Example: HCCL_SOCKET_IFNAME=eno0 exported, GLOO_SOCKET_IFNAME not.
    Fix: export GLOO_SOCKET_IFNAME=<the NIC that reaches the other nodes>, e.g. eno0
    (a plain name, not NCCL's ^lo syntax).""")


#: Sizes above this are not walked rank by rank (a typo the script front end reports).
_MAX_RANKS = 65536


def _int(text) -> int | None:
    """``text`` as an int 0..65536 (ASCII digits), else None."""
    t = (text or "").strip()
    if not t.isascii() or not t.isdigit() or int(t) > _MAX_RANKS:
        return None
    return int(t)


def _vllm_nodes(jl):
    """(node launch, proc, flags) of each vLLM serve process of a DP job."""
    for nl in jl.nodes:
        for proc in nl.procs:
            words = proc.words()
            if "serve" in words[:3] or any("api_server" in w for w in words[:3]):
                yield nl, proc, proc.flags()


def _span(proc, flag: str, job) -> Span:
    """Where ``flag`` of ``proc`` was written: the script's word (lifted plans), the
    job's ``args`` / ``head_args`` / ``worker_args`` that passed it, else the job."""
    if proc.spans:
        return proc.spans.get(flag) or proc.spans.get("") or job.span
    spec = job.launch
    for key in ("head_args", "worker_args", "args"):
        words = getattr(spec, key)
        if any(w.split("=", 1)[0] in (flag,) + tuple(a for a, b in VLLM_ALIASES.items()
                                                    if b == flag) for w in words) \
                and any(w in proc.user_args for w in words):
            return spec.span_of(key, job.span)
    return job.span


def check(topo: Topology, plan: Plan):
    version = parse_version(topo.vllm_version)
    for name, jl in plan.launches.items():
        job = jl.job
        if job.incomplete & {"dp", "tp", "pp", "pcp", "servers", "on"}:
            continue   # an error about the unreadable attribute was reported already
        if job.framework != "vllm" or jl.mode not in ("dp-internal", "dp-hybrid"):
            if jl.origin == "script":
                yield from _gloo(jl)
            continue
        procs = list(_vllm_nodes(jl))
        if len(procs) < 2:
            continue
        yield from _start_ranks(job, procs)
        yield from _headless(topo, job, procs, version)
        if jl.origin == "script":
            yield from _gloo(jl)


def _start_ranks(job, procs):
    dp = _int(procs[0][2].get("--data-parallel-size")) or job.dp
    owner: dict[int, tuple] = {}
    for nl, proc, fl in procs:
        if "--data-parallel-rank" in fl:
            return
        start = _int(fl.get("--data-parallel-start-rank"))
        start = 0 if start is None and "--headless" not in fl else start
        local = _int(fl.get("--data-parallel-size-local"))
        if start is None or local is None:
            continue
        for r in range(start, start + local):
            if r in owner:
                other = owner[r][0]
                where = f"twice on {nl.server.name}" if other is nl else \
                    f"on both {other.server.name} and {nl.server.name}"
                yield error(START_RANKS, f"job {job.name}: DP rank {r} is started {where} "
                            f"(start rank {start}, local size {local})",
                            _span(proc, "--data-parallel-start-rank", job),
                            subject=f"job {job.name}, server {nl.server.name}",
                            hint="give each node the start rank = the sum of the local sizes "
                                 "of the nodes before it")
                return
            owner[r] = (nl, proc)
    missing = [r for r in range(dp) if r not in owner]
    extra = [r for r in owner if r >= dp]
    if owner and (missing or extra):
        nl, proc = owner[max(owner)]
        what = (f"DP rank{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(str, missing[:4]))} of --data-parallel-size {dp} "
                f"{'are' if len(missing) > 1 else 'is'} started on no node") if missing else \
            f"rank {extra[0]} is past --data-parallel-size {dp}"
        yield error(START_RANKS, f"job {job.name}: {what} (nodes run "
                    + ", ".join(f"{n.server.name} {r0}" for r0, (n, _) in sorted(owner.items())
                                if r0 == min(k for k, v in owner.items() if v[0] is n))
                    + ")", _span(proc, "--data-parallel-start-rank", job),
                    subject=f"job {job.name}",
                    hint="node k's --data-parallel-start-rank is the sum of the local sizes "
                         "of the nodes before it, and the local sizes add up to the DP size")


def _headless(topo, job, procs, version):
    workers = [(nl, p, fl) for nl, p, fl in procs if "--headless" in fl]
    heads = [(nl, p, fl) for nl, p, fl in procs if "--headless" not in fl]
    for nl, proc, fl in workers:
        for flag in ("--data-parallel-hybrid-lb", "--data-parallel-rank"):
            if flag in fl:
                yield error(HEADLESS_FORM, f"job {job.name}: {nl.server.name} runs --headless "
                            f"with {flag}, which vLLM rejects in headless mode",
                            _span(proc, flag, job), subject=f"server {nl.server.name}",
                            hint=f"drop {flag} on headless nodes (only "
                                 "--data-parallel-start-rank)")
                return
    if not heads:
        return
    nl, proc, fl = heads[0]
    start = fl.get("--data-parallel-start-rank", "absent")
    if start == "absent" and "--data-parallel-hybrid-lb" not in fl \
            and "--data-parallel-external-lb" not in fl:
        # the head runs internal LB (no start rank, no LB flag): it rejects every remote
        # engine that is not --headless ("Remote engine N must use --headless unless in
        # external or hybrid dp lb mode", vllm/v1/engine/utils.py; HEADLESS_FORMS)
        for other, p2, f2 in heads[1:]:
            if _int(f2.get("--data-parallel-start-rank")):
                yield error(HEADLESS_FORM, f"job {job.name}: {other.server.name} passes "
                            f"--data-parallel-start-rank {f2['--data-parallel-start-rank']} "
                            f"without --headless while the head {nl.server.name} runs "
                            "internal load balancing: it infers hybrid LB and the head "
                            "rejects it (\"Remote engine N must use --headless unless in "
                            "external or hybrid dp lb mode\")",
                            _span(p2, "--data-parallel-start-rank", job),
                            subject=f"server {other.server.name}",
                            hint="add --headless to it (internal LB), or run every node with "
                                 "its own API server (hybrid/external LB, no --headless)")
                return
        return
    if not workers or start == "absent" or "--data-parallel-hybrid-lb" in fl:
        return
    local = _int(fl.get("--data-parallel-size-local"))
    got = has(version, "start_rank_zero_set") if _int(start) == 0 else True
    f = FEATURES["start_rank_zero_set"]
    form = "external" if local == 1 else "hybrid"
    msg = (f"job {job.name}: the head {nl.server.name} passes --data-parallel-start-rank "
           f"{start} without --headless while {workers[0][0].server.name} runs --headless: ")
    if got is False:
        return
    if got:
        msg += (f"vLLM {version_text(version) if version else ''} infers {form} load balancing "
                "on the head and rejects the headless workers (\"Remote engine 1 must not use "
                "--headless in external or hybrid dp lb mode\")").replace("vLLM  ", "vLLM ")
        make = error
    else:
        msg += (f"from vLLM {version_text(f.first)} (an explicit 0 counts as set) the head "
                f"infers {form} load balancing and rejects the headless workers; the vLLM "
                "version is not known (set vllm_version / --vllm-version)")
        make = warning
    yield make(HEADLESS_FORM, msg, _span(proc, "--data-parallel-start-rank", job),
               subject=f"server {nl.server.name}",
               hint="remove --data-parallel-start-rank from the head (0 is its default in "
                    "every version); keep --headless and the start ranks on the workers")


#: Interface names of the loopback device (Linux `lo`, BSD/macOS `lo0`).
_LOOPBACK = ("lo", "lo0")


def _gloo(jl):
    if len(jl.nodes) < 2:
        return
    for nl in jl.nodes:
        names = dict(nl.env)
        span = next((p.spans.get("") for p in nl.procs if p.spans.get("")), jl.job.span)
        if str(names.get("GLOO_SOCKET_IFNAME", "")).strip() in _LOOPBACK:
            yield warning(GLOO_UNSET, f"job {jl.job.name}: {nl.server.name} exports "
                          f"GLOO_SOCKET_IFNAME={names['GLOO_SOCKET_IFNAME']}, the loopback "
                          "interface: Gloo binds 127.0.0.1, which the other nodes cannot "
                          "reach", span, subject=f"server {nl.server.name}",
                          hint="export GLOO_SOCKET_IFNAME=<NIC that reaches the other "
                               "nodes>, e.g. eno0")
            continue
        if "GLOO_SOCKET_IFNAME" in names:
            continue
        yield warning(GLOO_UNSET, f"job {jl.job.name}: {nl.server.name} starts without "
                      "GLOO_SOCKET_IFNAME: Gloo (vLLM's DP and CPU groups) falls back to the "
                      "host name's address, often loopback", span,
                      subject=f"server {nl.server.name}",
                      hint="export GLOO_SOCKET_IFNAME=<NIC that reaches the other nodes>, "
                           "e.g. eno0, before the launch")


#: The rules this module reports (collected by rtc.catalogue).
RULES = (START_RANKS, HEADLESS_FORM, GLOO_UNSET)
