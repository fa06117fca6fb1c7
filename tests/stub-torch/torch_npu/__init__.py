"""Test stub of torch_npu (tests/stub-torch): importing it registers ``torch.npu`` (events,
devices) and lets the stub ``torch.distributed`` take the ``hccl`` backend, as the real
``import torch_npu`` does (Ascend/pytorch: torch_npu/__init__.py registers the ``npu``
device module and the ``hccl`` process group backend; torch_npu/npu/streams.py ``Event``).

``RTC_STUB_NO_NPU=1`` makes ``torch.npu.set_device`` fail as on a host without NPUs.
Timing is the stub torch's modelled clock (``RTC_STUB_LATENCY_US``, ``RTC_STUB_BUSBW``).
"""
import os

import torch

__version__ = "2.5.1.post1+rtcstub"


class _Npu:
    Event = torch.Event

    @staticmethod
    def set_device(index):
        if os.environ.get("RTC_STUB_NO_NPU"):
            raise RuntimeError("npu device count is 0: no NPU found (ASCEND_RT_VISIBLE_"
                               "DEVICES=" + os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "") + ")")
        torch.local.device = index

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_name(index):
        return "Ascend910B3"

    @staticmethod
    def device_count():
        return len(os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "0").split(","))


torch.npu = _Npu()
