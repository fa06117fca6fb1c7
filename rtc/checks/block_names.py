"""Names of blocks (RTC218-RTC219): jobs and disaggregation blocks are named once, and the
names that become file names are safe as file names.

Jobs are referred to by name (``prefill JOB``, ``--job``) and name output files
(``hccl-<job>.json``, ``<server>.<job>.env``); servers are named once by RTC201, networks
and fabrics by RTC406. ``rtc compile --out-dir`` writes ``<server>.env``,
``<server>.sh``, ``preflight-<server>.sh`` and ``hccl-<job>.json``, so server and job names
must be plain file names: no ``/``, no ``.`` or ``..`` alone, no control characters, and no
leading ``-`` (which shell tools read as an option).
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.model.topology import Topology, file_name_problem
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
    a leading `-`, or more than 100 characters.
    Why: `rtc compile --out-dir` names files after servers and jobs (`<server>.env`,
    `<server>.sh`, `preflight-<server>.sh`, `hccl-<job>.json`); such a name would write
    outside the folder, fail, or be read as an option by shell tools.
    Example: `server rack1/node0 {`.
    Fix: use letters, digits and `-_.` (e.g. `rack1-node0`); `server_id` may still hold
    any text the rank table needs.""")


def check(topo: Topology, plan: Plan):
    yield from _duplicates("job", [(j.name, j.span) for j in topo.jobs])
    yield from _duplicates("disaggregation", [(d.name, d.span) for d in topo.disaggregations
                                              if d.name])
    yield from _file_names(topo)


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
        if why and key not in seen:
            seen.add(key)
            yield error(UNSAFE_NAME, f"server name {s.name!r} {why}; rtc names the server's "
                        "env, launch and preflight files after it", s.span, subject=s.label,
                        hint="use letters, digits and -_. only (server_id may keep any text)")
    for j in topo.jobs:
        why = file_name_problem(j.name)
        if why:
            yield error(UNSAFE_NAME, f"job name {j.name!r} {why}; rtc names the job's rank "
                        "table (hccl-<job>.json) and env files after it", j.span,
                        subject=f"job {j.name}", hint="use letters, digits and -_. only")



#: The rules this module reports (collected by rtc.report.rule_catalogue).
RULES = (DUP_BLOCK_NAME, UNSAFE_NAME)
