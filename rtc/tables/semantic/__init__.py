"""Semantic rules that only exist for rank table files (RTC630..RTC679).

Everything that can be judged on servers and devices is judged by the compiler's own
checks (:mod:`rtc.checks`) on the table lowered by :mod:`rtc.tables.lower_table`: duplicate
``server_id`` (RTC203), ``device_id`` (RTC204), ``device_ip`` (RTC208) and
``super_device_id`` within a super pod (RTC213), device ids the hardware does not have
(RTC205), reserved addresses (RTC209), missing device IPs on multi-server tables (RTC211),
missing super pod data (RTC212), ``server_id`` length (RTC214), 910A HCCS device sets
(RTC320), ... This package checks what the Topology cannot see because it numbers ranks
itself and has no counts or lists: the ``rank_id`` values, ``server_count`` and the other
counts, addresses that do not parse, ``super_pod_list`` bookkeeping, backup dies and
ports, the legacy and 2.0 forms. :func:`check_table` runs them on a parsed document.

The rules live by family, each module declaring its rules and listing them in ``RULES``:
:mod:`.ranks` (RTC630-RTC632), :mod:`.counts` (RTC633-RTC635), :mod:`.versions` (RTC636,
:func:`check_version_fit`), :mod:`.super_pods` (RTC637-RTC640), :mod:`.backups`
(RTC641-RTC643), :mod:`.pd` (RTC644), :mod:`.legacy` (RTC645, RTC646), :mod:`.inventory`
(RTC647, RTC648, reported by :mod:`rtc.api.validating`), :mod:`.status` (RTC649) and
:mod:`.v2` (RTC650-RTC652), :mod:`.mindie_global` (RTC653-RTC655, the MindCluster / MindIE
global rank table), :mod:`.containers` (RTC665, container_ip in 1.x tables), :mod:`.consumers` (RTC678,
the consumers' contracts, :mod:`rtc.tables.contracts`).
:mod:`.v1` walks a version 1.0 / 1.2 table through the families' checks, and
:mod:`._context` holds the check context they share.
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic

from ..jsonload import SourceMap
from . import backups, counts, inventory, legacy, pd, ranks, status, super_pods, v2, versions
from . import mindie_global
from . import containers
from . import consumers
from . import v2_fields
from ._context import Ctx
from .inventory import INVENTORY_DEVICE, INVENTORY_SERVER
from .legacy import check_legacy
from .pd import check_pd
from .super_pods import POD_MEMBERSHIP
from .v1 import check_v1
from .v2 import check_v2
from .versions import check_version_fit, hardware_guess_note


def check_table(doc, form: str | None, source_map: SourceMap,
                bad_paths: frozenset = frozenset()) -> list[Diagnostic]:
    """The table-only semantic rules for a parsed document of ``form`` (any form; forms
    without such rules give nothing). ``bad_paths`` are values the schema rejected."""
    if not isinstance(doc, dict) or form is None:
        return []
    ctx = Ctx(doc, source_map, bad_paths, [])
    status.check_status(ctx)
    if form in ("hccl-v1.0", "hccl-v1.2"):
        check_v1(ctx, form)
    elif form == "pd-ranktable":
        check_pd(ctx)
    elif form in ("hccl-legacy-cloud", "hccl-legacy-lab"):
        check_legacy(ctx, form == "hccl-legacy-lab")
    elif form == "hccl-v2.0":
        check_v2(ctx)
        v2_fields.check_v2_fields(ctx)
    elif form == "mindie-global":
        mindie_global._check_global(ctx)
    consumers.check_consumers(ctx, form)
    return ctx.out


def check_v2_preset(doc, source_map: SourceMap, bad_paths: frozenset, preset) -> list[Diagnostic]:
    """The 2.0 rules that need the hardware (RTC674 net layers, RTC675 ports) for a parsed
    ``hccl-v2.0`` document checked against ``preset``."""
    ctx = Ctx(doc, source_map, bad_paths, [])
    v2_fields.check_v2_hardware(ctx, preset)
    return ctx.out


__all__ = ["INVENTORY_DEVICE", "INVENTORY_SERVER", "POD_MEMBERSHIP", "RULES", "check_table",
           "check_v2_preset", "check_version_fit", "hardware_guess_note"]

#: The rules this package reports, family by family in code order (collected by
#: rtc.catalogue).
RULES = (ranks.RULES + counts.RULES + versions.RULES + super_pods.RULES + backups.RULES
         + pd.RULES + legacy.RULES + inventory.RULES + status.RULES + v2.RULES
         + mindie_global.RULES + containers.RULES + v2_fields.RULES + consumers.RULES)
