"""The drivers of ``rtc cost`` and ``rtc advise``: pick the jobs of a compiled
description (:func:`rtc.api.compile.compile_file`) and hand them to :mod:`rtc.cost.jobs`."""

from __future__ import annotations

from rtc.model.topology import Job, Topology


class JobChoiceError(ValueError):
    """``--job`` names no job, or the file has no job with devices."""


def chosen_jobs(topology: Topology, name: str | None) -> list[Job]:
    """The job named ``name``, or every job with devices. Raises JobChoiceError."""
    if name is not None:
        job = topology.job(name)
        if job is None:
            raise JobChoiceError(topology.no_job(name))
        return [job]
    jobs = [j for j in topology.jobs if j.placements]
    if not jobs:
        raise JobChoiceError("the file has no job: the cost belongs to a job's groups")
    return jobs
