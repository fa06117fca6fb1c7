"""How a job is launched: its framework's launch mode and, for vLLM, the executor.

==============  ============================================================================
mode            when
==============  ============================================================================
``ranktable``   ``framework mindspore`` / ``torch_npu``: one process per rank from the table
``torchrun``    ``framework megatron``: ``torchrun`` per server
``mindie``      ``framework mindie``: one MindIE Server daemon per server (:mod:`.mindie`)
``single``      vLLM on one server
``dp-internal`` vLLM, dp > 1 over several servers with whole replicas per server (the
                default, ``lb internal``)
``dp-hybrid``   the same with ``lb hybrid``
``dp-external`` the same with ``lb external``
``ray``         vLLM over Ray (``executor ray``, ``ray_port`` given, or a replica that spans
                servers with dp 1)
``nnodes``      vLLM ``executor mp`` with a replica spanning servers (``--nnodes``)
``sglang``      ``framework sglang`` on one server
``sglang-       ``framework sglang`` over several servers (``--nnodes``, ``--node-rank``,
nnodes``        ``--dist-init-addr``)
==============  ============================================================================

:mod:`rtc.plan.launch` turns the mode into processes and flags; :mod:`rtc.plan.ports` reserves
the ports each mode binds.
"""

from __future__ import annotations

from rtc.model.topology import Job, Topology
from rtc.parallel.placement import JobPlacement

#: Frameworks that start one process per rank of the rank table.
RANKTABLE_FRAMEWORKS = ("mindspore", "torch_npu")


def spans_servers(pl: JobPlacement) -> bool:
    """True when one replica of the placement runs on more than one server."""
    return any(n.replica is not None and n.replica[2] > 1 for n in pl.nodes)


def effective_executor(job: Job, pl: JobPlacement) -> str:
    """``mp`` or ``ray``: the job's ``executor``, else Ray when ``ray_port`` is given or a
    replica spans servers with dp 1, else mp."""
    if job.launch.executor:
        return job.launch.executor
    if job.ray_port is not None:
        return "ray"
    return "ray" if spans_servers(pl) and job.dp == 1 else "mp"


def vllm_mode(job: Job, pl: JobPlacement) -> str:
    """The launch mode of a vLLM job (see the module docstring)."""
    nodes = [n for n in pl.nodes if n.device_count]
    if effective_executor(job, pl) == "ray":
        return "ray"
    if any(n.replica is not None and n.replica[2] > 1 for n in nodes):
        return "nnodes"
    if len(nodes) <= 1:
        return "single"
    if job.dp > 1 and job.launch.lb == "external":
        return "dp-external"
    if job.dp > 1 and job.launch.lb == "hybrid":
        return "dp-hybrid"
    return "dp-internal"


def job_mode(topo: Topology, job: Job) -> str:
    """The launch mode of any job. Raises ValueError when the job cannot be placed (its
    sizes do not fit its devices; the RTC3xx checks report that)."""
    if job.framework in RANKTABLE_FRAMEWORKS:
        return "ranktable"
    if job.framework == "megatron":
        return "torchrun"
    if job.framework == "mindie":
        return "mindie"
    if job.framework == "sglang":
        placed = [n for n in topo.placement(job).nodes if n.device_count]
        return "sglang-nnodes" if len(placed) > 1 else "sglang"
    return vllm_mode(job, topo.placement(job))
