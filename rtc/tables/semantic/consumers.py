"""RTC678: a table one of its real consumers would reject, judged by the consumer's
contract (:data:`rtc.tables.contracts.CONTRACTS`, each read in the consumer's source). One
finding per consumer, at the first requirement the table breaks, naming the consumer; the
same contracts judge the tables ``rtc compile`` writes (:func:`contract_findings`).
"""

from __future__ import annotations

from rtc.diagnostics import Severity, warning
from rtc.rules import rule

from ..contracts import CONTRACTS, applies, broken, form_of
from ..jsonload import format_path
from ._context import Ctx

CONSUMER = rule("RTC678", "consumer-contract", "warning",
                "A consumer of this table (MindIE, MindCluster, omniinfer, ...) would reject it.", """
    What: the table breaks a requirement that one of the programs reading it checks in its
    own code: MindIE-LLM's Python runner (atb_llm) and MindIE Motor want server_id to be an
    IP address; Ascend Operator / ClusterD write host_ip and container_ip; MindIE Motor reads
    the coordinator from group "0" and instances from group "2" of a global rank table,
    omniinfer reads prefill instances from group "0". The message names the consumer and
    the source file the requirement was read in (`rtc explain RTC678`).
    Why: HCCL may accept the table while the serving framework stops at start-up
    ("server_id is invalid", "Unknown group id.", "Load rank table failed").
    Example: "server_id": "atlas-01" in a table MindIE reads.
    Fix: write what the consumer wants (server_id = the server's host IP; group numbering
    with `rtc compile --global-ranktable-for mindie-motor|omniinfer`), or ignore the
    warning when that consumer never reads the table.""")


def contract_findings(doc, form: str | None) -> list[tuple[str, str, tuple, str]]:
    """(consumer, source, path, problem) of the first requirement each applicable contract
    of ``form`` finds broken in ``doc``, with `` (and N more)`` in the problem when there
    are more."""
    cform = form_of(form)
    out = []
    for c in CONTRACTS:
        if c.form != cform or not isinstance(doc, dict) or not applies(c, doc):
            continue
        found = broken(c, doc)
        if found:
            path, problem = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            out.append((c.consumer, c.source, path, problem + more))
    return out


def check_consumers(ctx: Ctx, form: str | None) -> None:
    """RTC678 for each consumer contract the document breaks -- only for a table rtc finds
    no error in: the schema's and the semantic rules' errors name the root cause, and the
    consumers' view of the same value would only echo it."""
    if ctx.bad or any(d.severity is Severity.ERROR for d in ctx.out):
        return
    for consumer, source, path, problem in contract_findings(ctx.doc, form):
        if path in ctx.bad:
            continue
        ctx.add(warning(CONSUMER, f"{consumer} would reject this table: {format_path(path)} "
                        f"{problem}", ctx.span(path),
                        hint=f"requirement read in {source}"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (CONSUMER,)
