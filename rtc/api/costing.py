"""The drivers of ``rtc cost`` and ``rtc advise``: pick the jobs of a compiled
description (:func:`rtc.api.compiling.compile_file`) and hand them to :mod:`rtc.cost.jobs`."""

from __future__ import annotations

from rtc.model.topology import Job, Topology


class JobChoiceError(ValueError):
    """``--job`` names no job, or the file has no job with devices."""


class SeveralJobs(JobChoiceError):
    """One job is needed (``rtc advise``) and the file has several: :attr:`names`."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"the file has {len(names)} jobs; choose one ({', '.join(names)})")
        self.names = names


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
