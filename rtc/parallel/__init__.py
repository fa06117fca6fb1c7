"""Parallel-group arithmetic: which global ranks form each communication group.

:mod:`rtc.parallel.groups` is pure rank math (vLLM / vllm-ascend and Megatron-LM
layouts); nothing in this package does I/O.
"""

from rtc.parallel.groups import (
    MEGATRON_AXES,
    MEGATRON_GROUP_KEYS,
    VLLM_DIMS,
    Coords,
    GroupSet,
    ParallelSizes,
    coords_of,
    dp_groups,
    ep_groups,
    global_rank,
    megatron_groups,
    megatron_masked_groups,
    pcp_groups,
    pp_groups,
    rank_of,
    tp_groups,
    vllm_groups,
)

__all__ = [
    "MEGATRON_AXES",
    "MEGATRON_GROUP_KEYS",
    "VLLM_DIMS",
    "Coords",
    "GroupSet",
    "ParallelSizes",
    "coords_of",
    "dp_groups",
    "ep_groups",
    "global_rank",
    "megatron_groups",
    "megatron_masked_groups",
    "pcp_groups",
    "pp_groups",
    "rank_of",
    "tp_groups",
    "vllm_groups",
]
