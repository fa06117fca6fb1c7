"""Facts from the user's machines: ``/etc/hccn.conf``, saved ``hccn_tool`` and ``npu-smi``
outputs, merged per server.

Modules: :mod:`~rtc.inventory.hccn_conf`, :mod:`~rtc.inventory.hccn_tool`,
:mod:`~rtc.inventory.npu_smi` (one parser each) and :mod:`~rtc.inventory.facts` (the merged
:class:`ServerInventory` and :func:`load_inventory_dir`). Every parsed value is a
:class:`Fact` carrying its :class:`~rtc.diagnostics.Span` (file, line, column of the value)
and a source label such as ``"hccn_tool -i 3 -ip -g (ip.txt:4)"``. Parsers never raise on
bad content and never print: they return ``(result, diagnostics)``.

Rule ids (inventory parse problems, RTC480..RTC489):

=======  ========  ==========================================================================
id       severity  what / why / fix
=======  ========  ==========================================================================
RTC480   error     A capture or the inventory folder cannot be read, or is binary (a warning
                   when only some bytes are not UTF-8 and were replaced). Why: its facts are
                   lost. Fix: check the path, save the output as plain text.
RTC481   error     hccn.conf line that is not ``key_<device>=value`` (no ``=``, empty key, bad
                   characters, a known key without its device suffix). Why: the setting is not
                   applied to any device. Fix: ``address_3=6.0.2.7``.
RTC482   warning   hccn.conf key set twice. Why: which value the driver applies is not
                   documented (rtc uses the last). Fix: delete one line.
RTC483   error     A value of the wrong shape (IP, netmask, prefix length, integer flag);
         /warning  a warning for unknown ``link status`` / ``net health status`` words, which
                   are kept. Why: the fact cannot be used or checked. Fix: correct the value or
                   the device's configuration, re-capture.
RTC484   warning   A line in an hccn_tool capture that is no known output. Why: a fact may be
                   missing. Fix: save raw command output without other text.
RTC485   warning   Device attribution: a line names another device than its header / file
                   name, a device gets the same fact twice, loop captures that number devices
                   by position disagree (a device printed nothing). Why: facts may sit on the
                   wrong device. Fix: one file per device or a header per device in the loop.
RTC486   error     npu-smi output missing or unreadable (no table, a row cut short);
         /warning  warnings for unknown link codes, non-square or asymmetric matrices, a
                   diagonal other than ``X``, a box-table NPU without its chip row. Why:
                   topology checks rely on it. Fix: re-capture the raw output unedited.
RTC487   error     Two sources disagree on a device's fact (hccn.conf ``address_3`` vs
                   ``hccn_tool -i 3 -ip -g``), or on the topo matrix / chip table. Why: one is
                   stale and the device would change address on reboot. Fix: make them agree.
RTC488   warning   A file in the inventory folder that rtc does not recognise (skipped).
                   Fix: remove it or save the raw command output under a telling name.
RTC489   warning   A device with no value: ``ipaddr:`` empty, ``address_2=`` empty, a command
                   that printed nothing, an empty file. Why: e.g. no device_ip for the rank
                   table. Fix: configure it (``hccn_tool -i 2 -ip -s address A netmask M``)
                   or leave the device out.
=======  ========  ==========================================================================

NVIDIA GPU servers: :mod:`.nvidia_smi` reads ``nvidia-smi topo -m`` (the GPU x GPU / NIC
link matrix, NVLink islands) and ``nvidia-smi --query-gpu=index,name,pci.bus_id,uuid
--format=csv`` (RTC474 for bad captures); :mod:`.nccl_tests` reads nccl-tests output
(``all_reduce_perf``; RTC575); :mod:`.ibv_devinfo` reads ``ibv_devinfo`` (RDMA devices,
port state, link layer, GIDs; RTC578); :mod:`.npu_smi_board` reads ``npu-smi info -t board``
(board id, chip name, firmware; RTC579).
"""

from ._common import Fact
from .facts import DeviceFacts, ServerInventory, detect_kinds, load_inventory_dir, load_inventory_files
from .hccn_conf import HccnConf, HccnConfEntry, load_hccn_conf, parse_hccn_conf
from .ibv_devinfo import IbvDevice, IbvDevinfo, IbvPort, load_ibv_devinfo, parse_ibv_devinfo
from .npu_smi_board import NpuBoard, NpuBoardInfo, load_npu_smi_board, parse_npu_smi_board
from .hccn_tool import (HccnToolOutput, PingReply, PingResult, device_from_filename, load_hccn_tool,
                        parse_hccn_tool)
from .npu_smi import (ChipMap, ChipMapEntry, NpuChip, NpuSmiInfo, TopoMatrix, load_npu_smi_chip_map,
                      load_npu_smi_info, load_npu_smi_topo, parse_npu_smi_chip_map, parse_npu_smi_info,
                      parse_npu_smi_topo)

from .rules import RULES

__all__ = [
    "Fact", "DeviceFacts", "ServerInventory", "load_inventory_dir", "load_inventory_files", "detect_kinds",
    "HccnConf", "HccnConfEntry", "parse_hccn_conf", "load_hccn_conf",
    "HccnToolOutput", "PingReply", "PingResult", "parse_hccn_tool", "load_hccn_tool", "device_from_filename",
    "IbvDevinfo", "IbvDevice", "IbvPort", "parse_ibv_devinfo", "load_ibv_devinfo",
    "NpuBoard", "NpuBoardInfo", "parse_npu_smi_board", "load_npu_smi_board",
    "TopoMatrix", "ChipMap", "ChipMapEntry", "NpuChip", "NpuSmiInfo",
    "parse_npu_smi_topo", "parse_npu_smi_chip_map", "parse_npu_smi_info",
    "load_npu_smi_topo", "load_npu_smi_chip_map", "load_npu_smi_info", "RULES",
]
