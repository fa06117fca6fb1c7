"""The PD (prefill/decode, LLM-DataDist) rank table: unique cluster_id (RTC644), plus the
server count, addresses and address counts of its device lists (RTC633-RTC635)."""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ..json_values import decimal
from ._context import Ctx
from .counts import COUNT, addresses_of, ip_counts_of

PD_CLUSTER_ID = rule("RTC644", "pd-duplicate-cluster-id", "error",
                     "Two entries of a PD rank table have the same cluster_id.", """
    What: cluster_id repeats across prefill_device_list and decode_device_list.
    Why: LLM-DataDist identifies each device by cluster_id; gen_ranktable.py numbers them
    1, 2, ... over the global list, and a repeat links KV transfers to the wrong device.
    Example: the first prefill and the first decode entry both "cluster_id": "1".
    Fix: regenerate the table, or number cluster_id uniquely.""")


def check_pd(ctx: Ctx) -> None:
    """The rules of a ``pd-ranktable`` table."""
    doc = ctx.doc
    servers: dict[str, tuple] = {}
    clusters: dict[str, tuple] = {}
    counts = []
    for key in ("prefill_device_list", "decode_device_list"):
        lst = doc.get(key)
        if not isinstance(lst, list):
            continue
        for k, d in enumerate(lst):
            if not isinstance(d, dict):
                continue
            p = (key, k)
            sid = d.get("server_id")
            if isinstance(sid, str):
                servers.setdefault(sid, p)
            n = addresses_of(ctx, d.get("device_ip"), p + ("device_ip",), "device_ip")
            if n:
                counts.append((n, p + ("device_ip",)))
            cid = d.get("cluster_id")
            cp = p + ("cluster_id",)
            if isinstance(cid, str) and cp not in ctx.bad:
                first = clusters.get(cid)
                if first is not None:
                    ctx.add(error(PD_CLUSTER_ID, f"{format_path(cp)}: cluster_id \"{cid}\" is used "
                                  "twice", ctx.span(cp), related=[Related(ctx.span(first), "first here")],
                                  hint="number cluster_id 1, 2, ... over both lists"))
                else:
                    clusters[cid] = cp
    n = decimal(doc.get("server_count")) if ("server_count",) not in ctx.bad else None
    if n is not None and len(servers) > n:
        ctx.add(error(COUNT, f'server_count is "{doc.get("server_count")}" but the device lists name '
                      f"{len(servers)} servers ({', '.join(list(servers)[:4])}"
                      f"{', ...' if len(servers) > 4 else ''})", ctx.span(("server_count",)),
                      hint="server_count is the number of nodes the table spans"))
    ip_counts_of(ctx, counts)


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (PD_CLUSTER_ID,)
