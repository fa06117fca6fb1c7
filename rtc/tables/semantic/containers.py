"""The ``container_ip`` of version 1.0 / 1.2 tables (the pod IP Ascend Operator writes and
MindIE reads; HCCL ignores it): one address that parses (RTC634) and, when some servers
have one, one on every server (RTC665). A pod IP used twice, or equal to another server's
``host_ip`` or a device IP, is RTC657 (the compiler's check, on the lowered table).

Source: MindIE-LLM ``ranktable_config.cpp`` (the node finds its own server by
``MIES_CONTAINER_IP`` == ``container_ip``; a multi-node table without it is refused), see
:data:`rtc.plan.mindie.FACTS`.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error, warning
from rtc.rules import rule

from ..jsonload import format_path
from ._context import Ctx, server_label
from .counts import BAD_ADDRESS, addresses_of

PARTIAL = rule("RTC665", "table-container-ip-partial", "warning",
               "Some servers of a rank table have a container_ip and others have none.", """
    What: a version 1.0 / 1.2 table whose server_list has `container_ip` on some servers
    but not on others (absent or "").
    Why: MindIE Server finds its own server by MIES_CONTAINER_IP == container_ip and
    refuses a multi-node table with a server lacking it; the node without one cannot
    start (HCCL itself ignores the key). Ascend Operator writes it on every server.
    Example: a server entry copied from a bare-metal table into a Kubernetes job's table.
    Fix: add "container_ip": the pod's IP (`kubectl get pods -o wide`) to every server, or
    remove it from all of them when no MindIE reads the table.""")


def container_ips(ctx: Ctx, sl: list) -> None:
    """RTC634 for a container_ip that is not one address; RTC665 for servers without one
    next to servers with one."""
    have, lack = [], []
    for i, s in enumerate(sl):
        if type(s) is not dict:
            continue
        path = ("server_list", i, "container_ip")
        value = s.get("container_ip")
        if isinstance(value, str) and value and path not in ctx.bad:
            if "," in value:
                ctx.add(error(BAD_ADDRESS, f"{format_path(path)}: container_ip '{value}' "
                              "holds several addresses; it is the one IP of the server's pod",
                              ctx.span(path), hint="write the pod's IP alone"))
            else:
                addresses_of(ctx, value, path, "container_ip")
        (have if value else lack).append(i)
    if not have or not lack:
        return
    first = ("server_list", have[0], "container_ip")
    for i in lack:
        sp = ("server_list", i)
        ctx.add(warning(PARTIAL, f"{format_path(sp)} ({server_label(sl[i], i)}) has no "
                        f"container_ip, but {len(have)} other server"
                        f"{'s have' if len(have) != 1 else ' has'} one",
                        ctx.span(sp + ("server_id",) if "server_id" in sl[i] else sp),
                        related=[Related(ctx.span(first), "a container_ip here")],
                        hint='add "container_ip": "<the pod\'s IP>" (kubectl get pods -o wide): '
                             "MindIE finds each node's server by it"))


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (PARTIAL,)
