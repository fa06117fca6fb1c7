"""Everything ``rtc compile --out-dir`` writes besides the HCCL rank tables, built in
memory first (so nothing is written when any part fails) and returned as
(file name, text, mode) triples.

Output folder layout (``S`` = server, ``J`` = job; ``S.J`` instead of ``S`` when several
jobs use the server):

==========================  ================================================================
``hccl.json`` /             the rank table(s) (written by the compile command itself)
``hccl-J.json``
``S.env``                   the node's environment (:mod:`rtc.emit.env_file`)
``S.sh``                    the node's launch script (:mod:`rtc.emit.launch.script`); not
                            written when the job cannot be launched as described (RTC509)
``preflight-S.sh``          the server's preflight checks (:mod:`rtc.emit.preflight`)
``pd-ranktable.json``       LLMDataDist prefill/decode table (:mod:`rtc.emit.pd_ranktable`)
``plan.json``               the whole plan (:mod:`rtc.emit.plan_json`)
==========================  ================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtc.diagnostics import Severity, error

SCHEMA_SELF = "RTC003"


@dataclass
class Bundle:
    source: str
    jobs: list
    tables: dict = field(default_factory=dict)         # job name -> hccl file name
    launches: dict = field(default_factory=dict)       # job name -> JobLaunch
    envs: dict = field(default_factory=dict)           # (server, job) -> NodeEnv
    env_files: dict = field(default_factory=dict)      # (server, job) -> file name
    launch_files: dict = field(default_factory=dict)   # (server, job) -> file name
    pd_tables: dict = field(default_factory=dict)      # id(pair) -> file name
    preflight: list = field(default_factory=list)
    outputs: list = field(default_factory=list)        # [(name, text, mode)]
    diagnostics: list = field(default_factory=list)

    def file_names(self) -> list[str]:
        return list(self.tables.values()) + [name for name, _, _ in self.outputs]

    def add(self, name: str, text: str, mode: int = 0o644) -> None:
        self.outputs.append((name, text, mode))


def build_bundle(topo, jobs: list, tables: dict, *, plan: bool = True) -> Bundle:
    """Build every per-node output of ``jobs`` (``[None]``: a table without jobs).
    ``tables`` maps job names (None for the whole cluster) to their rank table's file name."""
    from rtc.emit import env_file, pd_ranktable, plan_json, preflight
    from rtc.emit.launch.plan import plan_job, server_stems
    from rtc.emit.launch.script import render as render_script
    from rtc.emit.launch.spec import pd_pairs

    source = env_file.source_name(topo)
    b = Bundle(source, jobs, {k: v for k, v in tables.items() if k is not None})
    real = [j for j in jobs if j is not None]
    stems = server_stems(topo)
    pairs = pd_pairs(topo)
    pd_names = pd_ranktable.table_names(pairs)
    pd_of_job: dict = {}
    for pair in pairs:
        name = pd_names.get(id(pair))
        if name is None or not any(j in real for j in pair.jobs):
            continue
        doc = pd_ranktable.build(topo, pair)
        problems = [p for p in pd_ranktable.validate(doc, name) if p.severity is Severity.ERROR]
        if problems:
            b.diagnostics.append(error(SCHEMA_SELF, f"internal error: the PD rank table rtc "
                                       f"built fails schema pd-ranktable: {problems[0].message}",
                                       None, hint="please report this with your .rtc file; "
                                       "nothing was written"))
            continue
        b.pd_tables[id(pair)] = name
        b.add(name, pd_ranktable.render(doc))
        for j in pair.jobs:
            pd_of_job[j.name] = name
    for job in real:
        jl = plan_job(topo, job, stems)
        b.launches[job.name] = jl
        by_server = jl.nodes_by_server
        pl = topo.placement(job)
        for n in pl.nodes:
            if not n.device_count:
                continue
            server = topo.server(n.name)
            nl = by_server.get(n.name)
            stem = stems.get((n.name, job.name), n.name)
            ne = env_file.node_env(topo, job, server, n.device_ids, stem=stem,
                                   head=nl.head if nl else n.index == 0,
                                   launch_env=nl.env if nl else (),
                                   table=tables.get(job.name), pd_table=pd_of_job.get(job.name))
            b.envs[(n.name, job.name)] = ne
            b.env_files[(n.name, job.name)] = f"{stem}.env"
            b.add(f"{stem}.env", env_file.render(ne, source))
            if nl is not None:
                b.launch_files[(n.name, job.name)] = f"{stem}.sh"
                b.add(f"{stem}.sh", render_script(nl, source, f"{stem}.env"), 0o755)
    b.preflight = preflight.plan_preflight(topo, real)
    for sp in b.preflight:
        b.add(f"preflight-{sp.server.name}.sh", preflight.render(sp, source), 0o755)
    if plan:
        doc = plan_json.build(topo, b)
        problems = plan_problems(doc)
        if problems:
            b.diagnostics.append(error(SCHEMA_SELF, "internal error: the plan.json rtc built "
                                       f"fails schemas/plan.schema.json: {problems[0]}", None,
                                       hint="please report this with your .rtc file; nothing "
                                       "was written"))
        else:
            b.add("plan.json", plan_json.render(doc))
    return b


#: compile validates each job's first ranks / groups / nodes only (one loop builds them all,
#: so the rest have the same shape); the test suite validates whole plans.
SAMPLE = 256


def plan_problems(doc: dict, *, sample: int | None = SAMPLE) -> list[str]:
    """Schema errors of a plan document (rtc's fast validator), as messages."""
    from rtc.resources import load_schema
    from rtc.tables.schema_check import schema_errors

    if sample is not None:
        doc = dict(doc)
        doc["jobs"] = [dict(j, ranks=j["ranks"][:sample], nodes=j["nodes"][:sample],
                            groups={k: v[:sample] for k, v in j["groups"].items()})
                       for j in doc["jobs"]]
        doc["servers"] = doc["servers"][:sample]
        doc["ports"] = doc["ports"][:sample]
        doc["preflight"] = doc["preflight"][:sample]
    return [f"{'/'.join(str(p) for p in e.path)}: {e.message}"
            for e in schema_errors(doc, load_schema("plan"))]
