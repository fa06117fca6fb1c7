"""Test stub of torch.distributed: ranks are threads of one process (see torch/__init__)."""
import os
import shutil
import sys
import threading

import torch

_state = {}


def is_available():
    return True


def _group():
    return _state["group"]


def init_process_group(backend, world_size, rank, init_method=None):
    if backend == "hccl" and "torch_npu" not in sys.modules:
        raise ValueError("Invalid backend: 'hccl' (import torch_npu first)")
    torch.local.rank, torch.local.world, torch.local.clock_us = rank, world_size, 0.0
    dump = os.environ.get("NCCL_TOPO_DUMP_FILE")
    if rank == 0 and dump and os.environ.get("RTC_STUB_NCCL_DUMP"):
        shutil.copy(os.environ["RTC_STUB_NCCL_DUMP"], dump)


def all_reduce(t):
    """Sum ``t.value`` over the ranks; advance this rank's clock by the modelled time."""
    g, n = _group(), torch.local.world
    with g["lock"]:
        g["sum"] += t.value
    g["barrier"].wait()
    total = g["sum"]
    g["barrier"].wait()
    if torch.local.rank == 0:
        g["sum"] = 0.0
    g["barrier"].wait()
    t.value = total
    latency = float(os.environ.get("RTC_STUB_LATENCY_US", "20"))
    busbw = float(os.environ.get("RTC_STUB_BUSBW", "400"))
    torch.local.clock_us += latency + t.nbytes() * 2 * (n - 1) / n / (busbw * 1e3)


def destroy_process_group():
    pass


def _start(n):
    _state["group"] = {"lock": threading.Lock(), "barrier": threading.Barrier(n), "sum": 0.0}
