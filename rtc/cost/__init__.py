"""Communication cost model: α-β-γ estimates of the collectives of a deployment, per
group, per layer and per step, and a layout search over parallel sizes.

Pure functions over plain inputs; parameters are data (``links.toml``, ``models.toml``).
Units everywhere: sizes in **bytes**, times in **seconds**, bandwidths in **bytes/s**
per direction. Facts and figures come from ``shared/reference/cost-model.md`` (cited by
section in every docstring and data row).

Modules, bottom up:

* :mod:`~rtc.cost.units` parses and prints ``20us``, ``196GB/s``, ``1MiB``;
* :mod:`~rtc.cost.params` loads the parameter sets ``nominal`` and ``hccl-plan`` and
  applies overrides (``roce.alpha=20us``);
* :mod:`~rtc.cost.links` gives the link class of a rank pair (SIO, HCCS, UB, RoCE, ...);
* :mod:`~rtc.cost.spans` gives a group's span class, bottleneck link and HCCL levels;
* :mod:`~rtc.cost.formulas` holds the textbook formulas; :mod:`~rtc.cost.hccl_algo`
  HCCL's algorithm choice and ``HCCL_ALGO``; :mod:`~rtc.cost.collectives` the collective
  times on a group with the algorithm HCCL would pick;
* :mod:`~rtc.cost.models`, :mod:`~rtc.cost.workload`, :mod:`~rtc.cost.moe` describe the
  model, the load and vllm-ascend's MoE method;
* :mod:`~rtc.cost.deployment` places a layout (from a Topology job or a server grid);
  :mod:`~rtc.cost.schedule` costs one step per group; :mod:`~rtc.cost.layouts` enumerates
  and ranks layouts; :mod:`rtc.report.cost_tables` renders both as plain-text tables.

Limits (:data:`LIMITS`): communication only — no compute model, no TPOT prediction;
absolute times are ±2× until calibrated (α on Ascend is the weakest input, reference
§1.5); rankings are more robust. Congestion, PFC/ECN, adaptive routing and link faults
are not modelled; AIV and fused MC2 fast paths change α more than modelled.
"""

from rtc.cost.collectives import (COLLECTIVES, CollectiveCost, Stage, allgather, allreduce,
                                  alltoall, broadcast, collective, moe_exchange,
                                  reduce_scatter, send_recv)
from rtc.cost.deployment import (Deployment, Layout, deployment_of_job,
                                 deployment_on_grid)
from rtc.cost.errors import (CostInputError, HcclAlgoError, LayoutError, ModelConfigError,
                             ParamError)
from rtc.cost.hccl_algo import HcclOptions, hccl_options, parse_hccl_algo
from rtc.cost.layouts import (Cluster, LayoutScore, Ranking, Rejected, cluster_of,
                              enumerate_layouts, rank_layouts)
from rtc.cost.links import Hardware, Site, hardware_of, pair_class
from rtc.cost.models import ModelSpec, model_from_hf_config, model_preset, model_presets
from rtc.cost.params import (PARAM_SETS, CostParams, LinkParams, apply_overrides,
                             load_params, params_with, parse_override)
from rtc.cost.schedule import (LIMITS, GroupCost, StepCost, explain, job_schedule,
                               layout_problems, schedule, to_dict)
from rtc.cost.spans import SPAN_CLASSES, GroupSpan, bottleneck, group_span, job_sites
from rtc.cost.workload import MOE_METHODS, PHASES, Workload

__all__ = [
    "COLLECTIVES", "LIMITS", "MOE_METHODS", "PARAM_SETS", "PHASES", "SPAN_CLASSES",
    "Cluster", "CollectiveCost", "CostInputError", "CostParams", "Deployment", "GroupCost",
    "GroupSpan", "Hardware", "HcclAlgoError", "HcclOptions", "Layout", "LayoutError",
    "LayoutScore", "LinkParams", "ModelConfigError", "ModelSpec", "ParamError", "Ranking",
    "Rejected", "Site", "Stage", "StepCost", "Workload",
    "allgather", "allreduce", "alltoall", "apply_overrides", "bottleneck", "broadcast",
    "cluster_of", "collective", "deployment_of_job", "deployment_on_grid",
    "enumerate_layouts", "explain", "group_span", "hardware_of", "hccl_options",
    "job_schedule", "job_sites", "layout_problems", "load_params", "model_from_hf_config",
    "model_preset", "model_presets", "moe_exchange", "pair_class", "params_with",
    "parse_hccl_algo", "parse_override", "rank_layouts", "reduce_scatter", "schedule",
    "send_recv", "to_dict",
]
