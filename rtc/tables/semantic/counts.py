"""Count and address rules of rank tables: count fields against their lists (RTC633),
addresses that do not parse (RTC634), devices with different numbers of addresses
(RTC635)."""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule
from rtc.syntax.values import ValueProblem, parse_ip

from ..jsonload import format_path
from ..json_values import decimal, is_address
from ._context import Ctx, value_subspan

COUNT = rule("RTC633", "count-mismatch", "error",
             "A count field disagrees with the list it counts.", """
    What: server_count differs from the number of servers in server_list (or rank_count from
    rank_list in 2.0; group_count, instance_count, device_count, device_num, server_num in
    the legacy form; a PD table naming more servers than its server_count).
    Why: HCCL compares them and rejects the table ("serverList size[..] neq server num[..]").
    Example: "server_count": "4" after a server was removed from the list.
    Fix: set the count to the length of the list.""")
BAD_ADDRESS = rule("RTC634", "bad-address", "error",
                   "A device_ip, host_ip or backup_device_ip is not a valid IP address.", """
    What: a value the schema's character check lets through but that is no address:
    `999.1.1.1`, `10.0.0`, `a.b.c.d`, one bad entry in a comma-separated list.
    Why: HCCL parses every address of the table; one that does not parse stops
    communicator init on every node.
    Example: "device_ip": "192.168.1.256".
    Fix: write the NPU's real RoCE address (`hccn_tool -i N -ip -g`, or address_N in
    /etc/hccn.conf); host_ip is the server's own address.""")
IP_COUNT = rule("RTC635", "device-ip-count", "error",
                "Devices carry different numbers of addresses in device_ip.", """
    What: some device_ip values hold a comma-separated list of two addresses, others one.
    Why: HCCL requires every rank to have the same number of device IPs.
    Example: "device_ip": "10.0.0.1,10.0.1.1" next to "device_ip": "10.0.0.2".
    Fix: give every device the same number of addresses.""")


def addresses_of(ctx: Ctx, value, path: tuple, what: str) -> int:
    """RTC634 for one IP field; returns the number of addresses (0 when empty/unusable)."""
    if not isinstance(value, str) or value == "" or path in ctx.bad:
        return 0
    items = value.split(",") if "," in value else (value,)
    for item in items:
        if is_address(item):
            continue
        span = ctx.span(path)
        sub = value_subspan(span, value, item)
        try:
            parse_ip(item, sub, BAD_ADDRESS)
            msg, hint, where = f"'{item}' is not a valid IP address", None, sub
        except ValueProblem as p:
            msg, hint, where = p.message, p.hint, p.span
        ctx.add(error(BAD_ADDRESS, f"{format_path(path)}: {what} {msg}", where, hint=hint))
        return 0
    return len(items)


def ip_counts_of(ctx: Ctx, counts: list) -> None:
    if not counts:
        return
    want = counts[0][0]
    odd = [(k, p) for k, p in counts if k != want]
    if odd:
        k, p = odd[0]
        more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
        ctx.add(error(IP_COUNT, f"{format_path(p)} holds {k} address{'es' if k != 1 else ''} but "
                      f"{format_path(counts[0][1])} holds {want}{more}", ctx.span(p),
                      related=[Related(ctx.span(counts[0][1]), f"{want} here")],
                      hint="HCCL requires the same number of device IPs on every rank"))


def count_of(ctx: Ctx, path: tuple, actual: int, what: str) -> None:
    if path in ctx.bad:
        return
    value = _get(ctx.doc, path)
    n = decimal(value)
    if n is not None and n != actual:
        ctx.add(error(COUNT, f"{format_path(path)} is \"{value}\" but {what} {actual}",
                      ctx.span(path), hint=f'write "{path[-1]}": "{actual}"'))


def _get(doc, path):
    node = doc
    for p in path:
        if isinstance(node, dict):
            node = node.get(p)
        elif isinstance(node, list) and isinstance(p, int) and p < len(node):
            node = node[p]
        else:
            return None
    return node


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (COUNT, BAD_ADDRESS, IP_COUNT)
