"""What a rank table needs beyond unique values: device IPs across servers (1.0), super
pod data (1.2), server_id length, and server order (HCCL rank table doc, section 1.4)."""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule
from rtc.textfmt import format_ids, printable, unprintable_character

MISSING_DEVICE_IP = rule("RTC211", "missing-device-ip", "error",
                         "A multi-server rank table has devices without device_ip.", """
    What: a job (or the cluster) spans several servers but some devices have no RoCE IP.
    Why: HCCL builds inter-server links from device_ip; on 910A/910B an empty device_ip
    with more than one server is rejected at init (rank table 1.0 rules).
    Example: two A2 servers with no `device_ip` lines.
    Fix: add `device_ip` (from `hccn_tool -i N -ip -g` or /etc/hccn.conf address_N).""")
MISSING_SUPER_POD = rule("RTC212", "missing-super-pod-data", "error",
                         "A 1.2 (A3 super pod) rank table lacks super_pod_id or super_device_id.", """
    What: an A3 cluster with several servers where a server has no `super_pod` or a device
    has no `super_device_id`.
    Why: in a version 1.2 table every server must belong to exactly one super pod and every
    rank needs a valid super_device_id; HCCL rejects the table otherwise (EI0004).
    Example: two A3 servers without `super_pod` lines.
    Fix: add `super_pod ID` and `super_device_id base N` (SDIDs from
    `npu-smi info -t spod-info -i CARD -c CHIP`).""")
SERVER_ID_LENGTH = rule("RTC214", "server-id-too-long", "error",
                        "A server_id is longer than 64 characters.", """
    What: HCCL limits server_id to 64 characters (SERVERID_MAX_LENGTH).
    Why: longer ids are rejected when the rank table is parsed.
    Example: a server_id built from a long FQDN.
    Fix: use a shorter server_id.""")
SERVER_ID_CHARACTER = rule("RTC235", "server-id-unprintable-character", "error",
                           "A server_id holds a control or invisible character.", r"""
    What: a server_id holds a control character (NUL, ESC, DEL, a C1 character, a line
    break; a tab is allowed, the language writes it `\t`), a lone surrogate, or an invisible layout character: a zero-width space or
    joiner, a bidi mark or override (U+202E), a line or paragraph separator, a BOM.
    Why: the id is shown as something other than what it is: a bidi override writes the
    rest of the id backwards and a zero-width space is not seen, so two ids that look
    the same in a log, a terminal or an editor differ, and diagrams and
    messages must escape it (`node\u202e1`); code that handles the id as a C string
    stops at a NUL. The rtc language refuses control characters in a value (RTC119), so
    `rtc import` cannot describe such a table either: `rtc validate`, `rtc import` and
    `rtc compile` report this one rule.
    Example: `"server_id": "node\u202e1"` or `"server_id": "node\u00001"` in hccl.json,
    or a raw U+202E pasted into `server_id` in a .rtc file.
    Fix: give the server a plain id (letters, digits, `.`, `-`, `_`; the host IP is
    common).""")
SERVER_ORDER = rule("RTC216", "server-id-order", "warning",
                    "server_id order differs from rank order.", """
    What: rank ids follow the declared server order, but the server_ids do not sort the
    same way as strings (node10 sorts before node2).
    Why: MindSpore requires rank_id order to follow the dictionary order of server_id;
    a MindSpore job whose table is numbered otherwise disagrees with it about who is
    rank 0. HCCL itself takes the table's rank_ids (its 1.0/1.2 parser sorts the ranks by
    rank_id, not by server_id: topoinfo_ranktableConcise.cc ParserClusterInfo), so the
    tables of vLLM-Ascend, MindIE, torch_npu and Megatron jobs are not judged; a table
    whose reader is unknown (no job, `rtc validate`) is, unless its server_ids are its
    host IPs (Ascend Operator's form, read by HCCL and MindCluster).
    Example: `family node[0..15]` (node10 < node2 as strings) in a `framework mindspore`
    job.
    Fix: zero-pad the names (`family node[00..15]`) or order the servers by name; in an
    existing table, list server_list in the text order of its server_ids (IP addresses
    too: 10.1.0.10 before 10.1.0.9) and number the rank_ids in that order.""")


def _character(c: str) -> str:
    """``c`` named for a message: ``control character U+0000 (\\x00)``."""
    kind = ("control character" if ord(c) < 0xA0 else
            "lone surrogate" if 0xD800 <= ord(c) <= 0xDFFF else "invisible character")
    return f"{kind} U+{ord(c):04X} ({printable(c)})"


def tables_of(topo: Topology):
    """The rank tables the compile can emit: one per job, or the whole cluster."""
    if topo.jobs:
        for j in topo.jobs:
            yield j, topo.rank_table_members(j)
    else:
        yield None, topo.rank_table_members(None)


def check(topo: Topology, plan: Plan):
    for s in topo.servers:
        if len(s.server_id) > 64:
            yield error(SERVER_ID_LENGTH, f"server_id of {s.name} has {len(s.server_id)} "
                        "characters; HCCL allows at most 64", s.span_of("server_id"),
                        subject=s.label, hint="shorten it")
        bad = unprintable_character(s.server_id.replace("\t", " "))  # a tab: `\t` in .rtc
        if bad is not None:
            yield error(SERVER_ID_CHARACTER, f"server_id '{printable(s.server_id)}' holds "
                        f"the {_character(bad)}, which is shown as something else or not "
                        "at all", s.span_of("server_id"), subject=s.label,
                        hint="give the server a plain id (letters, digits, '.', '-', '_')")
    reported_order = False
    for job, members in tables_of(topo):
        what = f"job {job.name}" if job else "the cluster"
        span = job.span if job else topo.span
        if len(members) > 1 and topo.preset.ranktable_version == "1.0":
            yield from _device_ips(what, span, members)
        sdids = topo.preset.super_pod and topo.preset.ranktable_version == "1.2"
        if len(members) > 1 and sdids:
            yield from _super_pods(what, members)
        if len(members) == 1 and sdids:
            yield from _mixed_sdids(what, members[0])
        # 2.0 (Ascend 950): no server_list, rank ids given
        if not reported_order and not topo.preset.is_a5 and \
                _sorted_by_reader(job, members, topo.origin):
            found = list(_server_order(what, members, topo.origin == "table"))
            reported_order = bool(found)
            yield from found


def _device_ips(what: str, span, members):
    """RTC211: a 1.0 table over several servers needs every device's device_ip (one
    finding per source line: a family's members are counted)."""
    folded = Folded("servers")
    for diag, s in _missing_ips(what, span, members):
        folded.add((diag.code, s.span_of("device_ip")), diag, s.name)
    yield from folded.emit()


def _missing_ips(what: str, span, members):
    for s, devs in members:
        missing = [d.device_id for d in devs if d.device_ip is None]
        # A device_ip line that failed to evaluate was reported already.
        if missing and "device_ip" not in s.spans:
            yield error(MISSING_DEVICE_IP, f"{what} spans {len(members)} servers but "
                        f"{s.name} has no device_ip for device"
                        f"{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(map(str, missing[:8]))}"
                        f"{' ...' if len(missing) > 8 else ''}",
                        s.span_of("device_ip"), subject=s.label,
                        related=[Related(span, what)] if span else (),
                        hint="add `device_ip START step N` or a list (from "
                             "`hccn_tool -i N -ip -g`)"), s


def _super_pods(what: str, members):
    """RTC212 for A3 servers without super pod data; RTC211 between super pods (one finding
    per source line: a family's members are counted)."""
    folded = Folded("servers")
    for diag, s in _pod_data(what, members):
        folded.add((diag.code, diag.span), diag, s.name)
    yield from folded.emit()


def _pod_data(what: str, members):
    for s, devs in members:
        if s.super_pod_id is None:
            yield error(MISSING_SUPER_POD, f"{what} spans {len(members)} A3 servers but "
                        f"{s.name} has no super_pod", s.span, subject=s.label,
                        hint="add `super_pod ID` (Super Pod ID from "
                             "`npu-smi info -t spod-info`)"), s
        elif any(d.super_device_id is None for d in devs) and \
                "super_device_id" not in s.incomplete:  # already reported
            yield error(MISSING_SUPER_POD, f"{what} spans {len(members)} A3 servers but "
                        f"{s.name} has devices without super_device_id", s.span,
                        subject=s.label,
                        hint="add `super_device_id base N` (SDID from "
                             "`npu-smi info -t spod-info`)"), s
    if _pod_count(members) > 1:
        for s, devs in members:
            if any(d.device_ip is None for d in devs):
                yield error(MISSING_DEVICE_IP, f"{what} spans several super pods but "
                            f"{s.name} has devices without device_ip",
                            s.span_of("device_ip"), subject=s.label,
                            hint="between super pods HCCL uses RoCE and needs device_ip"), s


#: Frameworks whose reader of the rank table wants rank_id order = server_id text order
#: (RTC216): MindSpore (its rank table rule). The others hand the table to HCCL, which
#: orders ranks by rank_id (HCCL ``topoinfo_ranktableConcise.cc`` ParserClusterInfo, read in
#: HongminTan/ACNC2025-HCCL @b9714026, a CANN HCCL source copy).
SORTING_FRAMEWORKS = ("mindspore",)


def _sorted_by_reader(job, members, origin: str = "description") -> bool:
    """Whether RTC216 judges the table of ``job``: a job whose framework sorts, or the
    whole cluster's table (None: its reader is unknown) unless every server_id is its host
    IP -- the form Ascend Operator writes for HCCL and MindCluster, which order ranks by
    rank_id (ascend-operator pkg/ranktable/common/common.go buildServerInfo). Servers
    lifted from scripts (``origin`` "scripts") have no whole-cluster table of their own:
    the table given with `rtc lint --table` (or exported as RANK_TABLE_FILE) is judged
    where it is read, with the findings `rtc validate` gives it, so only their jobs are."""
    if job is not None:
        return job.framework in SORTING_FRAMEWORKS
    if origin == "scripts":
        return False
    return not all(s.host_ip is not None and s.server_id == str(s.host_ip) for s, _ in members)


#: A server with one of these in ``incomplete`` is not judged by RTC216: its server_id
#: could not be read (a table names it ``server_list[N]``), or its place is no rank order
#: (a PD table has no rank_id; a table server whose every rank_id was unusable).
_ORDER_UNKNOWN = frozenset({"server_id", "rank_id"})


def _server_order(what: str, members, table: bool = False):
    """RTC216 for the first server_id that sorts before the one above it (servers whose
    server_id or rank is unknown are left out); ``table``: the servers come from an
    existing rank table (the hint is about server_list, not .rtc families)."""
    servers = [s for s, _ in members if not (s.incomplete & _ORDER_UNKNOWN)]
    for sa, sb in zip(servers, servers[1:]):
        a, b = sa.server_id, sb.server_id
        if a > b:
            yield warning(SERVER_ORDER, f"server_id '{b}' sorts before '{a}' as text, "
                          f"but comes after it in rank order ({what})", sb.span,
                          subject=sb.label,
                          hint=_table_order_hint(a, b) if table else _order_hint(sb, a))
            return


def _table_order_hint(a: str, b: str) -> str:
    """The RTC216 hint for an existing table whose server_id ``b`` follows ``a``."""
    import ipaddress

    try:
        ipaddress.ip_address(a), ipaddress.ip_address(b)
        note_ip = " (text order, not address order)"
    except ValueError:
        note_ip = ""
    return (f"list server_list in the text order of server_id{note_ip}, '{b}' before "
            f"'{a}', and number the rank_ids in that order")


def _order_hint(server, above: str) -> str:
    """Suggest padding the server's family to the width of its last index
    (`n[00..120]` -> `n[000..120]`); a server whose server_id is not its name (its host
    IP) gets the order of the server_ids; a plain server the general advice."""
    from rtc.syntax.values import ValueProblem, parse_family_name

    if server.server_id != server.name:
        return (f"declare the servers in the text order of their server_ids ('{server.server_id}' "
                f"before '{above}'), or give them `server_id` names that sort in rank order")
    if server.family:
        try:
            fam = parse_family_name(server.family, server.span)
        except ValueProblem:
            fam = None
        if fam is not None:
            width = len(str(fam.last))
            padded = f"{fam.prefix}[{str(fam.first).zfill(width)}..{fam.last}]{fam.suffix}"
            return (f"zero-pad the family to the width of its last index: `family {padded}` "
                    "(or declare the servers in name order)")
    return "zero-pad family indices (node[00..15]) or declare the servers in name order"


def _pod_count(members) -> int:
    return len({s.super_pod_id for s, _ in members})


def _mixed_sdids(what: str, member):
    """RTC212 for a one-server A3 table in which some devices have a super_device_id and
    others do not (HCCL parses every device of a 1.2 table alike)."""
    s, devs = member
    have = [d for d in devs if d.super_device_id is not None]
    if have and len(have) < len(devs) and "super_device_id" not in s.incomplete:
        lacking = [d.device_id for d in devs if d.super_device_id is None]
        yield error(MISSING_SUPER_POD, f"{what}: {s.name} has a super_device_id on "
                    f"{len(have)} devices but not on device"
                    f"{'s' if len(lacking) > 1 else ''} {format_ids(lacking)}",
                    s.span_of("super_device_id"), subject=s.label,
                    hint="give every device its super_device_id (`npu-smi info -t "
                         "spod-info`), or none of them")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (MISSING_DEVICE_IP, MISSING_SUPER_POD, SERVER_ID_LENGTH, SERVER_ID_CHARACTER,
         SERVER_ORDER)
