"""Names of blocks (RTC218-RTC220): jobs and disaggregation blocks are named once, the
names that become file names are safe as file names, and no two of them name one file.

Jobs are referred to by name (``prefill JOB``, ``--job``) and name output files
(``hccl-<job>.json``, ``<server>.<job>.env``); servers are named once by RTC201, networks
and fabrics by RTC406. ``rtc compile --out-dir`` writes ``<server>.env``,
``<server>.sh``, ``preflight-<server>.sh`` and ``hccl-<job>.json``, so server and job names
must be plain file names: no ``/``, no ``.`` or ``..`` alone, no control characters, and no
leading ``-`` (which shell tools read as an option).
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.model.topology import Topology, file_name_problem, host_name_problem
from rtc.plan import Plan
from rtc.rules import rule

DUP_BLOCK_NAME = rule("RTC218", "duplicate-block-name", "error",
                      "Two jobs (or two disaggregation blocks) have one name.", """
    What: two `job` blocks named alike, or two `disaggregation` blocks.
    Why: the second job's rank table is written over the first one's (`hccl-<job>.json`),
    the first job's env files point RANK_TABLE_FILE at a table that does not hold its
    servers, and `--job NAME` or `prefill NAME` can only mean one of them.
    Example: `job decode {` copied to make a second decode instance without renaming it.
    Fix: give each block its own name.""")
UNSAFE_NAME = rule("RTC219", "unsafe-file-name", "error",
                   "A server or job name cannot be used as a file name.", """
    What: a server or job name with `/`, a name that is `.` or `..`, a control character,
    a leading `-`, or more than 100 characters; or a server name with any character other
    than ASCII letters, digits and `-_.` (a space, a comma, a colon, ...).
    Why: `rtc compile --out-dir` names files after servers and jobs (`<server>.env`,
    `<server>.sh`, `preflight-<server>.sh`, `hccl-<job>.json`); such a name would write
    outside the folder, fail, or be read as an option by shell tools. A server name also
    names the node: `--target k8s` writes it as a ConfigMap key (`[-._a-zA-Z0-9]+`) and a
    `kubernetes.io/hostname` label value, `--target slurm` into `--nodelist`, which splits
    at commas and spaces; the API server refuses the manifests, Slurm the node list.
    Example: `server rack1/node0 {`, `server "atlas 01" {`.
    Fix: use letters, digits and `-_.` (e.g. `rack1-node0`); `server_id` may still hold
    any text the rank table needs.""")


COLLISION = rule("RTC220", "output-name-collision", "error",
                 "Two servers or jobs would write the same output file.", """
    What: names whose output files coincide: server `a` used by jobs `b.c` and another
    (its files are `a.b.c.env`, `a.b.c.sh`) next to server `a.b` used by jobs `c` and
    another (also `a.b.c.env`); or server `preflight-a` (launch script `preflight-a.sh`)
    next to server `a` (preflight script `preflight-a.sh`).
    Why: `rtc compile --out-dir` would write one file over the other, and one node would
    start the other node's processes.
    Example: servers `a` and `preflight-a`.
    Fix: rename one of the servers or jobs.""")


def check(topo: Topology, plan: Plan):
    yield from _duplicates("job", [(j.name, j.span) for j in topo.jobs])
    yield from _duplicates("disaggregation", [(d.name, d.span) for d in topo.disaggregations
                                              if d.name])
    yield from _file_names(topo)
    if topo.origin == "description":
        yield from _collisions(topo, plan)


def _duplicates(kind: str, named: list):
    """RTC218 at the second (third, ...) block of ``kind`` with a name already used."""
    first: dict = {}
    for name, span in named:
        if name in first:
            yield error(DUP_BLOCK_NAME, f"{kind} name {name} is used twice", span,
                        related=[Related(first[name], "first defined here")],
                        subject=f"{kind} {name}", hint=f"rename one of the {kind} blocks")
        else:
            first[name] = span


def _file_names(topo: Topology):
    """RTC219 for each server (family: once) and job name unsafe as a file name. The
    servers of a rank table are named by their server_id, which names no file: not judged."""
    seen: set = set()
    for s in topo.servers if topo.origin == "description" else ():
        key = s.family or s.name
        why = file_name_problem(s.name)
        uses = "rtc names the server's env, launch and preflight files after it"
        if why is None:
            why, uses = host_name_problem(s.name), (
                "rtc writes the name as the node's name: --target k8s as a kubernetes.io/"
                "hostname value and in ConfigMap keys ([-._a-zA-Z0-9]+), --target slurm in "
                "--nodelist (split at commas and spaces), and none of them may hold that")
        if why and key not in seen:
            seen.add(key)
            yield error(UNSAFE_NAME, f"server name {s.name!r} {why}; {uses}", s.span,
                        subject=s.label,
                        hint="use letters, digits and -_. only (server_id may keep any text)")
    for j in topo.jobs:
        why = file_name_problem(j.name)
        if why:
            yield error(UNSAFE_NAME, f"job name {j.name!r} {why}; rtc names the job's rank "
                        "table (hccl-<job>.json) and env files after it", j.span,
                        subject=f"job {j.name}", hint="use letters, digits and -_. only")




def _collisions(topo: Topology, plan: Plan):
    """RTC220 for each output file name that two servers or jobs would write."""
    owners: dict[str, tuple[str, object]] = {}
    for name, who, span in _outputs(topo, plan):
        first = owners.setdefault(name, (who, span))
        if first[0] != who:
            yield error(COLLISION, f"{who} and {first[0]} would both write {name} in "
                        "--out-dir", span, related=[Related(first[1], first[0])],
                        subject=who, hint="rename one of them")


def _outputs(topo: Topology, plan: Plan):
    """(file name, owner, span) of the per-server and per-job files of ``--out-dir``."""
    for (server, job), stem in plan.stems.items():
        s, j = topo.server(server), topo.job(job)
        who, span = f"server {server} (job {job})", j.span if j else None
        for suffix in (".env", ".sh"):
            yield stem + suffix, who, span if stem != server else s.span
    used = {server for server, _ in plan.stems}
    for s in topo.servers:
        if s.name in used:
            yield f"preflight-{s.name}.sh", f"server {s.name} (preflight)", s.span
    for j in topo.jobs if len(topo.jobs) > 1 else ():
        yield f"hccl-{j.name}.json", f"job {j.name}", j.span

#: The rules this module reports (collected by rtc.catalogue).
RULES = (DUP_BLOCK_NAME, UNSAFE_NAME, COLLISION)
