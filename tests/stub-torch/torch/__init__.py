"""Test stub of torch (tests/stub-torch, put first on PYTHONPATH by tests): only what rtc's
all_reduce sweep (rtc/emit/templates/allreduce_sweep.py) calls, with ranks as threads and
a modelled clock, so its output is the same on every run.

Each tensor holds one value in all its elements (all the sweep needs). Device events read a
per-rank clock that :func:`torch.distributed.all_reduce` advances by
``RTC_STUB_LATENCY_US`` (default 20) plus the ring's bytes ``size * 2(n-1)/n`` at
``RTC_STUB_BUSBW`` GB/s (default 400). ``NCCL_TOPO_DUMP_FILE`` gets a copy of
``RTC_STUB_NCCL_DUMP`` (when set) on rank 0, as NCCL writes its topology there.
``RTC_STUB_NO_CUDA=1`` makes ``cuda.set_device`` fail as torch does on a host without GPUs.
"""
import threading

__version__ = "2.11.0+rtcstub"
float32, float64 = "float32", "float64"
_SIZE = {"float32": 4, "float64": 8}
local = threading.local()   # per rank: rank, world, clock_us


class Tensor:
    def __init__(self, value, count, dtype="float32"):
        self.value, self.count, self.dtype = float(value), int(count), dtype

    def nbytes(self):
        return self.count * _SIZE[self.dtype]

    def fill_(self, value):
        self.value = float(value)
        return self

    def __ne__(self, other):
        return Tensor(1.0 if self.value != other else 0.0, self.count)

    def sum(self):
        return Tensor(self.value * self.count, 1)

    def item(self):
        return self.value


def ones(count, dtype=float32, device=None):
    return Tensor(1.0, count, dtype)


def tensor(values, dtype=float32, device=None):
    return Tensor(values[0], len(values), dtype)


class Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = local.clock_us

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end``."""
        return (end.at - self.at) / 1000.0


class _Nccl:
    @staticmethod
    def version():
        return (2, 28, 3)


class _Cuda:
    Event = Event
    nccl = _Nccl

    @staticmethod
    def set_device(index):
        import os
        if os.environ.get("RTC_STUB_NO_CUDA"):
            raise RuntimeError("No CUDA GPUs are available")
        local.device = index

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_name(index):
        return "NVIDIA H100 80GB HBM3"

    @staticmethod
    def device_count():
        return 8


cuda = _Cuda()
from . import distributed, multiprocessing  # noqa: E402,F401
