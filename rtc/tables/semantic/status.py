"""The ``status`` of a rank table (RTC649).

HCCL reads a table whose ``status`` is ``"initializing"`` as not ready yet: it re-reads the
file every second for up to 30 minutes, waiting for ``"completed"`` (HCCL rank table docs,
``rank_table_config_910.md`` / ``_a2.md``, ``status``; rtc reference ranktable-formats.md
§1.3). MindCluster's ascend-operator writes ``initializing`` first and ``completed`` once
every pod has reported its devices. A static file that says ``initializing`` therefore
makes every rank wait 30 minutes and then fail.
"""

from __future__ import annotations

from rtc.diagnostics import warning
from rtc.rules import rule

from ._context import Ctx

NOT_COMPLETED = rule("RTC649", "table-not-completed", "warning",
                     'The table\'s status is "initializing": HCCL waits for it to complete.', """
    What: `"status": "initializing"` in a rank table.
    Why: HCCL treats the table as not ready: every rank re-reads it each second for up to
    30 minutes waiting for "completed", then fails. The operator (MindCluster
    ascend-operator) writes "initializing" until every pod has reported its devices; a file
    copied at that moment, or a hand-made one, never completes.
    Example: a ConfigMap's hccl.json saved before the job's pods were all scheduled.
    Fix: set "status": "completed" once the table is final (rtc writes completed tables).""")


def check_status(ctx: Ctx) -> None:
    """RTC649 when the table's ``status`` is ``initializing``."""
    if ctx.doc.get("status") == "initializing" and ("status",) not in ctx.bad:
        ctx.add(warning(NOT_COMPLETED, 'the table\'s status is "initializing": HCCL waits up '
                        'to 30 minutes for it to become "completed", then fails',
                        ctx.span(("status",)),
                        hint='set "status": "completed" when the table is final'))


#: The rules this module reports (collected through rtc.tables.semantic.RULES).
RULES = (NOT_COMPLETED,)
