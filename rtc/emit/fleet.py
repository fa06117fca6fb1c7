"""The fleet files of ``--target slurm`` / ``--target ansible``, added to the files of
``rtc compile --out-dir`` they start (:mod:`rtc.emit.slurm`, :mod:`rtc.emit.ansible`;
the plan: :mod:`rtc.plan.fleet`)."""

from __future__ import annotations

from rtc.emit import ansible, slurm
from rtc.emit.bundle import Bundle
from rtc.plan.fleet import FleetPlan, plan_fleet

#: target -> the renderer of its files (``FleetPlan -> [(name, text)]``) and their mode.
RENDERERS = {"slurm": (slurm.render_all, 0o755), "ansible": (ansible.render_all, None)}


def fleet_plan(b: Bundle, topo, plan, jobs: list) -> FleetPlan:
    """The fleet plan of the bundle ``b`` (its file names, launch and env files)."""
    names = list(b.tables.values()) + [n for n, _t, _m in b.outputs]
    return plan_fleet(topo, plan, jobs, names, b.launch_files, b.env_files, b.source)


def fleet_files(b: Bundle, topo, plan, jobs: list, target: str) -> list[tuple]:
    """``[(name, text, mode)]`` of ``target``'s files for the bundle ``b``."""
    render, mode = RENDERERS[target]
    return [(n, t, mode) for n, t in render(fleet_plan(b, topo, plan, jobs))]
