"""Everything ``rtc compile --out-dir`` writes besides the HCCL rank tables, built in
memory first (so nothing is written when any part fails) and returned as
(file name, text, mode) triples.

Output folder layout (``S`` = server, ``J`` = job; ``S.J`` instead of ``S`` when several
jobs use the server):

==========================  ================================================================
``hccl.json`` /             the rank table(s) (written by the compile command itself)
``hccl-J.json``
``S.env``                   the node's environment (:mod:`rtc.emit.env_file`)
``S.sh``                    the node's launch script (:mod:`rtc.emit.launch_script`); not
                            written when the job cannot be launched as described (RTC509)
``preflight-S.sh``          the server's preflight checks (:mod:`rtc.emit.preflight_script`;
                            NVIDIA GPU servers: :mod:`rtc.emit.gpu_preflight_script`)
``calibrate.sh``            HCCL Test runs for ``rtc calibrate`` (:mod:`rtc.emit.calibrate_script`;
                            not on NVIDIA GPU servers, whose preflight runs nccl-tests)
``pd-ranktable.json``       LLMDataDist prefill/decode table (:mod:`rtc.emit.pd_ranktable`)
``topo-S.json``             Ascend 950: the server's topology file (:mod:`rtc.emit.hccl_v2`)
``global-ranktable.json``   with ``global_table``, or when a prefill/decode pair has a MindIE
                            job: the MindCluster / MindIE global table of each pair
                            (:mod:`rtc.emit.global_ranktable`)
``mindie-S.json``           ``framework mindie``: the node's keys of MindIE's config.json
                            (:func:`rtc.plan.mindie.config_fragment`)
``plan.json``               the whole plan (:mod:`rtc.emit.plan_json`)
``nccl-topo-S.xml``         NVIDIA GPU servers with ``nccl_topo_file on``: NCCL_TOPO_FILE
                            (:mod:`rtc.emit.nccl_topo_xml`)
``proxy-P.sh``              NIXL prefill/decode pair ``P``: vLLM's proxy in front of both
                            sides (:mod:`rtc.emit.pd_proxy_script`)
==========================  ================================================================

Everything here is rendered from the plan (:class:`rtc.plan.Plan`): the launches and port
plan built once for the checks, and the nodes' environment and preflight asked of
:mod:`rtc.plan` with this folder's file names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from rtc import forked
from rtc.diagnostics import Severity, error
from rtc.emit import (calibrate_script, env_file, global_ranktable, hccl_v2, launch_script,
                      pd_ranktable, plan_json, preflight_script)
from rtc.model.topology import Job, Topology
from rtc.plan import Plan
from rtc.plan.launch import JobLaunch
from rtc.plan.node_env import NodeEnv, node_env
from rtc.plan.calibration import plan_calibration
from rtc.plan.disaggregation import pd_side
from rtc.plan.mindie import config_fragment, needs_global_table
from rtc.plan.preflight import ServerPreflight, plan_preflight
from rtc.resources import load_schema
from rtc.rules import SCHEMA_SELF
from rtc.schema import schema_errors
from rtc.textfmt import ip_text_memo


@dataclass
class Bundle:
    """The files of one ``--out-dir`` (besides the rank tables): ``outputs`` are
    ``(name, text, mode)``; the other fields say which file holds what, for plan.json;
    ``ip_text`` writes the topology's addresses for the emitters (each converted once).
    An output's text is a callable when it is still being made (``defer_plan_json``)."""

    source: str
    jobs: list
    tables: dict = field(default_factory=dict)         # job name -> hccl file name
    launches: dict[str, JobLaunch] = field(default_factory=dict)
    envs: dict[tuple, NodeEnv] = field(default_factory=dict)   # (server, job) -> env
    env_files: dict = field(default_factory=dict)      # (server, job) -> file name
    launch_files: dict = field(default_factory=dict)   # (server, job) -> file name
    pd_tables: dict = field(default_factory=dict)      # id(pair) -> file name
    preflight: list[ServerPreflight] = field(default_factory=list)
    outputs: list = field(default_factory=list)        # [(name, text, mode)]
    diagnostics: list = field(default_factory=list)
    ip_text: Callable = field(default_factory=ip_text_memo)   # address -> text, memoised

    def file_names(self) -> list[str]:
        return list(self.tables.values()) + [name for name, _, _ in self.outputs]

    def add(self, name: str, text: str, mode: int = 0o644) -> None:
        self.outputs.append((name, text, mode))


def build_bundle(topo: Topology, plan: Plan, jobs: list[Job | None], tables: dict, *,
                 with_plan_json: bool = True, global_table: bool | str = False,
                 defer_plan_json: bool = False) -> Bundle:
    """Build every per-node output of ``jobs`` (``[None]``: a table without jobs).
    ``tables`` maps job names (None for the whole cluster) to their rank table's file name.
    Schema failures of what was built are RTC003 diagnostics (nothing must be written).
    ``global_table`` adds the MindIE global rank table of each prefill/decode pair (a
    string: with that group numbering, :data:`rtc.emit.global_ranktable.NUMBERINGS`).

    ``defer_plan_json``: when plan.json is being built in a forked child (a large Ascend
    cluster), its entry in :attr:`Bundle.outputs` is a callable that waits for the child
    and gives the text, for :func:`rtc.outputs.files.write_all` to call last; it raises
    :class:`SelfCheckFailed` (RTC003) when the document fails its schema."""
    source = env_file.source_name(topo)
    b = Bundle(source, jobs, {k: v for k, v in tables.items() if k is not None})
    real = [j for j in jobs if j is not None]
    pd_of_job = _add_pd_tables(b, topo, plan.pairs, real)
    for job in real:
        _add_node_files(b, topo, plan, job, tables, pd_of_job)
    _add_topo_files(b, topo, jobs)
    if global_table or needs_global_table(topo, plan.pairs):
        numbering = global_table if isinstance(global_table, str) else "mindie-motor"
        _add_global_tables(b, topo, plan.pairs, real, numbering)
    if topo.preset.is_gpu:
        _add_gpu_preflight(b, topo, real)
        _add_proxies(b, plan, real)
        if with_plan_json:
            _add_plan_json(b, _plan_json(b, topo, plan, []))
        return b
    b.preflight = plan_preflight(topo, plan.ports, plan.pairs, real)
    runs = plan_calibration(topo, real)
    later = [f"preflight-{sp.server.name}.sh" for sp in b.preflight] + \
        (["calibrate.sh"] if runs else [])
    # plan.json needs only the plans from here on, not the scripts' texts: on a large
    # cluster a forked child builds it while this process renders the scripts.
    large = topo.npu_count >= forked.WORTH_NPUS
    doc = forked.start(_plan_json, b, topo, plan, later, fork=None if large else False) \
        if with_plan_json else None
    for sp in b.preflight:
        b.add(f"preflight-{sp.server.name}.sh",
              preflight_script.render(sp, source, b.ip_text), 0o755)
    if runs:
        b.add("calibrate.sh", calibrate_script.render(runs, source), 0o755)
    if doc is not None and defer_plan_json and doc.pid is not None:
        b.add("plan.json", partial(_plan_json_text, doc))
    elif doc is not None:
        _add_plan_json(b, doc.result())
    return b


def _add_gpu_preflight(b: Bundle, topo: Topology, real: list[Job]) -> None:
    """NVIDIA GPU servers: nccl-tests preflight scripts (:mod:`rtc.emit.gpu_preflight_script`)."""
    from rtc.emit import gpu_preflight_script
    from rtc.plan.gpu_preflight import plan_gpu_preflight

    for gp in plan_gpu_preflight(topo, real):
        b.add(f"preflight-{gp.server.name}.sh", gpu_preflight_script.render(gp, b.source), 0o755)
        _add_topo_file(b, gp)


def _add_proxies(b: Bundle, plan: Plan, real: list[Job]) -> None:
    """``proxy-<pair>.sh`` for each NIXL pair whose jobs are all being written."""
    from rtc.emit import pd_proxy_script

    names = {j.name for j in real}
    for px in plan.proxies:
        if px.prefill and px.decode and set(px.jobs) <= names:
            b.add(f"proxy-{px.name}.sh", pd_proxy_script.render(px, b.source), 0o755)


def _add_topo_file(b: Bundle, gp) -> None:
    """``nccl-topo-<server>.xml`` (:mod:`rtc.emit.nccl_topo_xml`) when the server asks for it;
    an RTC003 diagnostic when the captures cannot describe its GPUs (nothing is written)."""
    from rtc.emit import nccl_topo_xml
    from rtc.plan.node_env import nccl_topo_name

    name = nccl_topo_name(gp.server)
    if name is None:
        return
    inv = gp.server.inventory_facts
    try:
        b.add(name, nccl_topo_xml.render(inv.gpu_topo, inv.gpu_list, gp.gpus))
    except ValueError as exc:
        b.diagnostics.append(error(SCHEMA_SELF, f"cannot write {name}: {exc}", None,
                                   hint="check the server's nvidia-smi captures, or remove "
                                        "`nccl_topo_file on`"))


def _add_topo_files(b: Bundle, topo: Topology, jobs: list[Job | None]) -> None:
    """Ascend 950: the topology file of every server in the jobs' rank tables (once each)."""
    seen: set = set()
    for job in jobs:
        files, problems = hccl_v2.topology_files(topo, job)
        b.diagnostics += problems
        for name, text in files:
            if name not in seen:
                seen.add(name)
                b.add(name, text)


def _pair_tables(b: Bundle, topo: Topology, pairs: list, real: list[Job], module, what: str,
                 **options):
    """(pair, file name, document) of each prefill/decode pair among ``real`` that
    ``module`` (:mod:`rtc.emit.pd_ranktable` or :mod:`rtc.emit.global_ranktable`) writes a
    table for and whose table passes its schema; an RTC003 diagnostic for one that fails."""
    names = module.table_names(pairs)
    for pair in pairs:
        name = names.get(id(pair))
        if name is None or not any(j in real for j in pair.jobs):
            continue
        doc = module.build(topo, pair, **options)
        problems = [p for p in module.validate(doc, name) if p.severity is Severity.ERROR]
        if problems:
            b.diagnostics.append(error(SCHEMA_SELF, f"internal error: the {what} rtc built "
                                       f"fails its schema: {problems[0].message}", None,
                                       hint="please report this with your .rtc file; nothing "
                                       "was written"))
            continue
        yield pair, name, doc


def _add_global_tables(b: Bundle, topo: Topology, pairs: list, real: list[Job],
                       numbering: str) -> None:
    """The MindIE global rank table of each prefill/decode pair among ``real``, its groups
    numbered per ``numbering``."""
    for _pair, name, doc in _pair_tables(b, topo, pairs, real, global_ranktable,
                                         "global rank table", numbering=numbering):
        b.add(name, pd_ranktable.render(doc))


def _add_pd_tables(b: Bundle, topo: Topology, pairs: list, real: list[Job]) -> dict:
    """The PD rank table of each prefill/decode pair among ``real``; job name -> its file."""
    pd_of_job: dict = {}
    for pair, name, doc in _pair_tables(b, topo, pairs, real, pd_ranktable, "PD rank table"):
        b.pd_tables[id(pair)] = name
        b.add(name, pd_ranktable.render(doc))
        for j in pair.jobs:
            pd_of_job[j.name] = name
    return pd_of_job


def _add_node_files(b: Bundle, topo: Topology, plan: Plan, job: Job, tables: dict,
                    pd_of_job: dict) -> None:
    """The env file of each of the job's nodes with devices, and its launch script."""
    jl = plan.launches[job.name]
    b.launches[job.name] = jl
    by_server = jl.nodes_by_server
    pl = topo.placement(job)
    for n in pl.nodes:
        if not n.device_count:
            continue
        server = topo.server(n.name)
        nl = by_server.get(n.name)
        stem = plan.stems.get((n.name, job.name), n.name)
        ne = node_env(topo, plan.ports, job, server, n.device_ids, stem=stem,
                      head=nl.head if nl else n.index == 0,
                      launch_env=nl.env if nl else (),
                      table=tables.get(job.name), pd_table=pd_of_job.get(job.name))
        b.envs[(n.name, job.name)] = ne
        b.env_files[(n.name, job.name)] = f"{stem}.env"
        b.add(f"{stem}.env", env_file.render(ne, b.source))
        if nl is not None:
            b.launch_files[(n.name, job.name)] = f"{stem}.sh"
            b.add(f"{stem}.sh", launch_script.render(nl, b.source, f"{stem}.env"), 0o755)
        if job.framework == "mindie":
            doc = config_fragment(job, server, n.device_count,
                                  multi_node=sum(1 for m in pl.nodes if m.device_count) > 1,
                                  pd=pd_side(plan.pairs, job) is not None)
            b.add(f"mindie-{stem}.json", pd_ranktable.render(doc))


def _plan_json(b: Bundle, topo: Topology, plan: Plan, later: list[str]) -> tuple:
    """``(plan.json text, None)``, or ``(None, first schema problem)``; ``later`` names
    the files the bundle will add after this call (listed in plan.json's ``files``)."""
    doc = plan_json.build(topo, plan, b, later)
    problems = plan_problems(doc)
    return (None, problems[0]) if problems else (plan_json.render(doc), None)


class SelfCheckFailed(Exception):
    """A deferred output (plan.json) failed its schema: ``diagnostic`` is the RTC003."""

    def __init__(self, diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _plan_json_text(doc: forked.Pending) -> str:
    """The text of plan.json from its child (:func:`_plan_json`); raises
    :class:`SelfCheckFailed` when it fails its schema."""
    text, problem = doc.result()
    if problem is not None:
        raise SelfCheckFailed(_plan_json_failure(problem))
    return text


def _plan_json_failure(problem: str):
    return error(SCHEMA_SELF, "internal error: the plan.json rtc built fails "
                 f"schemas/plan.schema.json: {problem}", None,
                 hint="please report this with your .rtc file; nothing was written")


def _add_plan_json(b: Bundle, built: tuple) -> None:
    """``plan.json`` (:func:`_plan_json`), or an RTC003 diagnostic when it fails its
    schema."""
    text, problem = built
    if problem is not None:
        b.diagnostics.append(_plan_json_failure(problem))
    else:
        b.add("plan.json", text)


#: compile validates each job's first ranks / groups (their first members: an EP group holds
#: all 65,536 ranks) / nodes only (one loop builds them all, so the rest have the same
#: shape); the test suite validates whole plans.
SAMPLE = 256


def plan_problems(doc: dict, *, sample: int | None = SAMPLE) -> list[str]:
    """Schema errors of a plan document (rtc's fast validator), as messages."""
    if sample is not None:
        doc = dict(doc)
        doc["jobs"] = [dict(j, ranks=j["ranks"][:sample], nodes=j["nodes"][:sample],
                            groups={k: [g[:sample] for g in v[:sample]]
                                    for k, v in j["groups"].items()})
                       for j in doc["jobs"]]
        doc["servers"] = doc["servers"][:sample]
        doc["ports"] = doc["ports"][:sample]
        doc["preflight"] = doc["preflight"][:sample]
    return [f"{'/'.join(str(p) for p in e.path)}: {e.message}"
            for e in schema_errors(doc, load_schema("plan"))]
