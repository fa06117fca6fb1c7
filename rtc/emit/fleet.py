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
    return plan_fleet(topo, plan, jobs, names, b.launch_files, b.env_files, b.source,
                      b.tables)


def fleet_files(b: Bundle, topo, plan, jobs: list, target: str) -> list[tuple]:
    """``[(name, text, mode)]`` of ``target``'s files for the bundle ``b``."""
    render, mode = RENDERERS[target]
    return [(n, t, mode) for n, t in render(fleet_plan(b, topo, plan, jobs))]


def k8s_preflight(topo, plan, jobs: list, resource: str, image: str) -> tuple[list, list]:
    """``([(preflight-job.yaml, text)], RTC003 diagnostics)``: the preflight Indexed Job of
    ``--target k8s`` (:mod:`rtc.emit.k8s_preflight`); no file when nothing has a preflight
    script."""
    from rtc.diagnostics import error
    from rtc.emit import k8s_preflight
    from rtc.emit.bundle import build_bundle
    from rtc.rules import SCHEMA_SELF

    b = build_bundle(topo, plan, jobs, {}, with_plan_json=False)
    fp = fleet_plan(b, topo, plan, jobs)
    if not fp.preflight:
        return [], []
    scripts = pod_scripts(b, topo, jobs)
    scripts = [(n, t) for n, t in scripts if n in {h.script for h in fp.preflight}]
    text, problems = k8s_preflight.build(fp, scripts, resource, image)
    if problems:
        return [], [error(SCHEMA_SELF, "internal error: the preflight Job rtc built fails "
                          f"its schema: {problems[0]}", None,
                          hint="please report this with your .rtc file; nothing was written")]
    return [(k8s_preflight.FILE, text)], []


def pod_scripts(b: Bundle, topo, jobs: list) -> list[tuple[str, str]]:
    """``[(preflight-<server>.sh, text)]`` for pods of the preflight Job: the sweep uses
    container numbering (``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``
    ``0..n-1``: the device plugin hands a container its n devices numbered from 0, as in
    the LeaderWorkerSet's pods); see :func:`rtc.emit.preflight_script.render`."""
    from rtc.emit import gpu_preflight_script, preflight_script
    from rtc.plan.gpu_preflight import plan_gpu_preflight

    if topo.preset.is_gpu:
        real = [j for j in jobs if j is not None]
        return [(f"preflight-{gp.server.name}.sh",
                 gpu_preflight_script.render(_in_pod(gp), b.source))
                for gp in plan_gpu_preflight(topo, real)]
    return [(f"preflight-{sp.server.name}.sh",
             preflight_script.render(sp, b.source, b.ip_text, pod=True))
            for sp in b.preflight]


def _in_pod(gp):
    """The :class:`rtc.plan.gpu_preflight.GpuPreflight` ``gp`` as a pod sees it: the
    device plugin gives the container its n GPUs numbered 0..n-1 (``nvidia-smi`` in the
    container lists GPU0..GPUn-1, as NVIDIA's container toolkit exposes them), so the
    sweep, ``expect.json``'s ``gpus`` and its NVLink islands use those numbers: the k-th
    planned GPU (ascending physical id) is GPU k."""
    from dataclasses import replace

    pos = {g: k for k, g in enumerate(gp.gpus)}
    return replace(gp, gpus=tuple(range(len(gp.gpus))),
                   visible=",".join(str(i) for i in range(len(gp.gpus))),
                   islands=tuple(tuple(pos[d] for d in isl) for isl in gp.islands))
