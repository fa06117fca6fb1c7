"""Semantic rules that only exist for rank table files (RTC630..RTC679).

Everything that can be judged on servers and devices is judged by the compiler's own
checks (:mod:`rtc.checks`) on the table lowered by :mod:`rtc.tables.lower_table`: duplicate
``server_id`` (RTC203), ``device_id`` (RTC204), ``device_ip`` (RTC208) and
``super_device_id`` within a super pod (RTC213), device ids the hardware does not have
(RTC205), reserved addresses (RTC209), missing device IPs on multi-server tables (RTC211),
missing super pod data (RTC212), ``server_id`` length (RTC214), 910A HCCS device sets
(RTC320), ... This module checks what the Topology cannot see because it numbers ranks
itself and has no counts or lists: the ``rank_id`` values, ``server_count`` and the other
counts, addresses that do not parse, ``super_pod_list`` bookkeeping, backup dies and
ports, the legacy and 2.0 forms. :func:`check_table` runs them on a parsed document.

"""

from __future__ import annotations

from rtc.textfmt import format_ids

from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Related, Span, error, warning
from rtc.rules import rule
from rtc.syntax.values import ValueProblem, parse_ip

from .jsonload import SourceMap, format_path
from .lower_table import address, decimal, is_address

# --------------------------------------------------------------------------- RTC630..679

RANK_IDS = rule("RTC630", "rank-ids-not-0-to-n", "error",
                "rank_id values are not exactly 0..N-1 (a duplicate, a gap, or too large).", """
    What: the rank ids of a table must be 0, 1, ..., N-1 for N devices, each exactly once.
    Why: HCCL sorts the ranks by rank_id and then requires the i-th one to be i; a gap, a
    repeat or a value >= N fails communicator init on every node ("rank id ... must be
    less than rank size and unique").
    Example: two devices with "rank_id": "5" and none with "6".
    Fix: renumber the ranks 0..N-1 (`rtc import` + `rtc compile` does it for you).""")
RANK_INTERLEAVED = rule("RTC631", "rank-ids-interleaved", "error",
                        "A server's rank ids are not one contiguous block.", """
    What: the ranks of one server are split by ranks of another server, e.g. server 1 has
    0, 1, 2, 7 and server 2 has 3..6.
    Why: the HCCL rank table docs forbid interleaving rank ranges across servers; HCCL's
    hierarchical algorithms assume the ranks of a server are adjacent, and tools that
    derive local ranks from rank ids get them wrong.
    Example: {"device_id": "3", "rank_id": "7"} on server 1 in the doc's forbidden example.
    Fix: number the ranks server by server (server 1: 0..3, server 2: 4..7).""")
RANK_ORDER = rule("RTC632", "rank-order", "warning",
                  "The table lists servers or devices in another order than their ranks.", """
    What: server_list is not sorted by rank (a later server holds lower ranks), or inside
    a server the ranks do not follow the device ids (device 0 has rank 1, device 1 rank 0).
    Why: HCCL itself sorts by rank_id, but the docs recommend numbering ranks in physical
    order, Ascend Operator writes servers sorted by their first rank, and tools that read
    the table in order (merge_hccl.py, launch scripts that derive RANK_ID from positions)
    then disagree with HCCL about who is rank 0. rtc numbers ranks in this order too, so
    `rtc import` cannot reproduce such a table.
    Example: server_list [node_1 (ranks 8..15), node_0 (ranks 0..7)].
    Fix: list servers by rank and number each server's devices in device id order.""")
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
VERSION_HW = rule("RTC636", "version-hardware-mismatch", "error",
                  "The table version does not fit the hardware.", """
    What: version "2.0" (Ascend 950) checked as A2/A3/910A hardware (an error), or version
    "1.2" (A3 super pod) for hardware without super pods (a warning).
    Why: HCCL picks its parser by version; a 2.0 table is only read on Ascend 950, and the
    super pod fields of a 1.2 table are ignored outside an A3 super pod.
    Example: `rtc validate --hardware atlas-800t-a2 a3-table.json` with "version": "1.2".
    Fix: use "1.0" for Atlas 800T A2, 910A and A3 typical networking, "1.2" for A3 super
    pods, "2.0" for Ascend 950; or pass the right --hardware.""")
POD_UNKNOWN = rule("RTC637", "super-pod-unknown-server", "error",
                   "super_pod_list names a server_id that is not in server_list.", """
    What: a server_id under super_pod_list[].server_list has no entry in the top-level
    server_list.
    Why: HCCL rejects it ("server_id[...] in super_pod_list is not in server_list").
    Example: a pod listing "node_4" in a four-server table of node_0..node_3.
    Fix: list each server of server_list exactly once, by its exact server_id.""")
POD_MEMBERSHIP = rule("RTC638", "super-pod-membership", "error",
                      "A server is in no super pod, or in several.", """
    What: with super_pod_list present, every server of server_list must be listed in
    exactly one super pod.
    Why: HCCL counts the servers across all pods and requires the count to equal the
    number of servers ("serverNum ... inconsistent"); every rank needs a super pod.
    Example: node_2 listed under pods "0" and "1".
    Fix: list every server exactly once (the pod from `npu-smi info -t spod-info`).""")
POD_DUPLICATE = rule("RTC639", "duplicate-super-pod-id", "error",
                     "Two entries of super_pod_list have the same super_pod_id.", """
    What: super_pod_id repeats in super_pod_list.
    Why: HCCL requires super pod ids to be unique; one of the entries would be lost.
    Example: two entries with "super_pod_id": "0".
    Fix: merge the two entries' server lists into one.""")
POD_CONTIGUOUS = rule("RTC640", "super-pod-not-contiguous", "error",
                      "The servers of one super pod are not next to each other in server_list.", """
    What: server_list mixes super pods, e.g. pod 0, pod 1, pod 0.
    Why: the HCCL A3 docs require the servers of one super pod to be adjacent ("mixing
    them is not supported"); HCCL's hierarchical algorithms assume it.
    Example: node_0 (pod 0), node_2 (pod 1), node_1 (pod 0).
    Fix: order server_list pod by pod (and number ranks in that order).""")
BACKUP_IP = rule("RTC641", "backup-device-ip", "error",
                 "backup_device_ip is not the device IP of the other die of the same chip.", """
    What: on A3 each chip has two dies, devices 2k and 2k+1; a device's backup_device_ip
    must be the device_ip of its partner die, which must be in the table too.
    Why: HCCL fails over to the SIO-linked partner die only; another address (or the
    device's own) is rejected when the table is parsed with op retry enabled.
    Example: device 0 with backup_device_ip equal to device 2's address.
    Fix: set backup_device_ip of device 2k to the device_ip of 2k+1 and vice versa.""")
BACKUP_PORT = rule("RTC642", "backup-device-port", "error",
                   "backup_device_port equals the device_port of the backup die.", """
    What: the backup port of a device is the port its partner die already listens on
    (device_port, 16666 when absent).
    Why: HCCL rejects it; both would bind the same port on the partner die.
    Example: "backup_device_port": "16666" while the partner has no device_port.
    Fix: pick a port the partner does not use, e.g. 16667.""")
HOST_PORT = rule("RTC643", "duplicate-host-port", "error",
                 "Two devices of one server have the same host_port.", """
    What: host_port repeats within a server.
    Why: host_port is the host NIC port used for op retry; two ranks of one server cannot
    bind the same port, and HCCL requires them to differ.
    Example: "host_port": "16665" on devices 0 and 1 of node_0.
    Fix: give each device of a server its own host_port.""")
PD_CLUSTER_ID = rule("RTC644", "pd-duplicate-cluster-id", "error",
                     "Two entries of a PD rank table have the same cluster_id.", """
    What: cluster_id repeats across prefill_device_list and decode_device_list.
    Why: LLM-DataDist identifies each device by cluster_id; gen_ranktable.py numbers them
    1, 2, ... over the global list, and a repeat links KV transfers to the wrong device.
    Example: the first prefill and the first decode entry both "cluster_id": "1".
    Fix: regenerate the table, or number cluster_id uniquely.""")
LEGACY_NAME = rule("RTC645", "legacy-duplicate-name", "error",
                   "A legacy group_list table repeats a group_name or pod_name.", """
    What: two groups with one group_name, or two instances with one pod_name.
    Why: HCCL's legacy parser identifies groups and pods by these names; it rejects
    duplicates (a process finds its entry by pod_name).
    Example: two instances with "pod_name": "0".
    Fix: make every name unique.""")
LEGACY_AVERAGE = rule("RTC646", "legacy-uneven-devices", "error",
                      "device_num / server_num is not a valid per-server device count.", """
    What: in the legacy "lab" form, device_num must be server_num times 1, 2, 4, 8 or 16.
    Why: HCCL's legacy parser (CheckAverageDev) rejects other layouts.
    Example: "device_num": "6", "server_num": "2" (3 per server).
    Fix: use the same 1, 2, 4, 8 or 16 devices on every server.""")
INVENTORY_SERVER = rule("RTC647", "inventory-missing-server", "warning",
                        "--inventory has no captures for a server of the table.", """
    What: the inventory folder has no subfolder named after this server_id (for a table
    with one server, the folder itself may hold the captures). An error when the folder
    matches no server at all.
    Why: the server's values cannot be checked against the facts.
    Example: `--inventory inv/` with inv/atlas-01/ but a table naming atlas-02 too.
    Fix: capture the server into INVENTORY/<server_id>/ (hccn_tool, npu-smi outputs).""")
INVENTORY_DEVICE = rule("RTC648", "inventory-unknown-device", "warning",
                        "The table uses a device the server's captures do not show.", """
    What: a device_id of the table has no facts in the server's inventory, while the
    inventory knows other devices of the server.
    Why: the device may not exist (a /dev/davinciN that is not there), or the captures
    are incomplete; either way its values could not be checked.
    Example: device 8 on a server whose captures cover devices 0..7.
    Fix: check the device id, or capture that device too.""")
V2_LEVELS = rule("RTC650", "v2-level-order", "error",
                 "A 2.0 rank's level_list does not ascend from net_layer 0.", """
    What: the levels of a rank must start at net_layer 0 and ascend, each layer once.
    Why: the 2.0 parser reads level_list in order; layer 0 (TOPO_FILE_DESC) is the
    server's own topology and every other layer builds on the one below.
    Example: level_list with net_layer 1 first, or two entries with net_layer 0.
    Fix: list the levels 0, 1, ... in ascending order.""")
V2_ADDRESS_COUNT = rule("RTC651", "v2-address-count", "error",
                        "Ranks of one net instance have different numbers of addresses.", """
    What: in a 2.0 table, all ranks with the same net_instance_id (at one net_layer) must
    have the same number of rank_addr_list entries.
    Why: HCCL checks it when it reads the table and pairs addresses by position.
    Example: rank 0 with two IPV4 addresses and rank 1 with one in "az0-rack0".
    Fix: give every rank of the instance the same addresses per plane.""")
V2_BACKUP = rule("RTC652", "v2-backup-rank", "error",
                 "A 2.0 table has several backup ranks, or one without replaced_local_id.", """
    What: a backup rank has local_id 64; a table may have at most one, and it must name
    the local_id it replaces (replaced_local_id).
    Why: the 2.0 parser rejects other layouts.
    Example: two ranks with "local_id": 64.
    Fix: keep one backup rank and set its replaced_local_id.""")

# --------------------------------------------------------------------------- helpers

@dataclass
class _Ctx:
    doc: dict
    smap: SourceMap
    bad: frozenset
    out: list

    @property
    def file(self) -> str:
        return self.smap.filename

    def span(self, path, key: bool = False) -> Span:
        if self.smap.parsed:
            return self.smap.locate_nearest(path, key=key)
        return Span.whole_file(self.file)

    def add(self, d: Diagnostic) -> None:
        self.out.append(d)


def _ids(values) -> str:
    """[0,1,2,5] -> '0..2, 5' (at most 8 pieces shown; :func:`rtc.textfmt.format_ids`)."""
    return format_ids(values, 8)


def _value_subspan(span: Span, text: str, item: str) -> Span:
    """Narrow a string value's span (at its opening quote) to ``item`` inside it."""
    off = text.find(item)
    if off < 0 or span.line == 0:
        return span
    col = span.column + 1 + off
    return Span(span.file, span.line, col, span.line, col + max(1, len(item)))


def _server_label(s, i: int) -> str:
    sid = s.get("server_id") if isinstance(s, dict) else None
    return sid if isinstance(sid, str) and sid else f"server_list[{i}]"


# --------------------------------------------------------------------------- rank ids

def _same(x):
    return x


def _rank_set(ctx: _Ctx, entries: list, container: tuple, what: str = "device",
              path_of=_same) -> bool:
    """RTC630 over ``entries`` = [(rank int | None (unusable), where)]; ``path_of(where)``
    is the path of the rank_id value. True when the ranks are exactly 0..N-1 (so the
    block and order rules are worth checking)."""
    before = len(ctx.out)
    n = len(entries)
    seen: dict[int, tuple] = {}
    unusable = False
    for r, where in entries:
        if r is None:
            unusable = True
            continue
        if r >= n:
            path = path_of(where)
            ctx.add(error(RANK_IDS, f"{format_path(path)}: rank_id {r} is out of range: the table "
                          f"has {n} {what}{'s' if n != 1 else ''}, so rank ids are 0..{n - 1}",
                          ctx.span(path), hint="number the ranks 0..N-1 without gaps"))
            continue
        first = seen.get(r)
        if first is not None:
            path = path_of(where)
            ctx.add(error(RANK_IDS, f"{format_path(path)}: rank_id {r} is used twice",
                          ctx.span(path), related=[Related(ctx.span(path_of(first)), f"rank {r} first here")],
                          hint="every rank id 0..N-1 exactly once"))
            continue
        seen[r] = where
    if not unusable and len(seen) < n:
        missing = [r for r in range(n) if r not in seen]
        if missing:
            ctx.add(error(RANK_IDS, f"rank ids must be exactly 0..{n - 1} for {n} {what}s; "
                          f"missing: {_ids(missing)}", ctx.span(container, key=True),
                          hint="HCCL sorts the ranks and requires the i-th to be i"))
    return not unusable and len(ctx.out) == before


def _rank_blocks(ctx: _Ctx, servers: list, path_of=_same) -> None:
    """RTC631 and RTC632 over servers = [(label, anchor path, [(device_id|None, rank|None,
    where)])] in list order; ``path_of(where)`` is the path of the rank_id value."""
    owner: dict[int, str] = {}
    for label, _, devs in servers:
        for _, r, _ in devs:
            if r is not None:
                owner.setdefault(r, label)
    firsts = []
    unordered: list = []
    for label, anchor, devs in servers:
        ranks = [r for _, r, _ in devs if r is not None]
        if ranks:
            firsts.append((min(ranks), label, anchor))
        uniq = sorted(set(ranks))
        if len(uniq) >= 2 and uniq[-1] - uniq[0] + 1 != len(uniq):
            # the first rank after a hole in the server's block
            k = next(k for k in range(1, len(uniq)) if uniq[k] != uniq[k - 1] + 1)
            hole = range(uniq[k - 1] + 1, uniq[k])
            others = sorted({owner[r] for r in hole if r in owner})
            path = path_of(next(p for _, r, p in devs if r == uniq[k]))
            ctx.add(error(RANK_INTERLEAVED, f"server {label} has ranks {_ids(uniq)}: not one "
                          f"contiguous block" + (f" (ranks {_ids(hole)} are on {', '.join(others[:3])})"
                                                 if others else ""),
                          ctx.span(path), subject=f"server {label}",
                          hint="number ranks server by server: all of one server, then the next"))
        by_dev = sorted((d, r, p) for d, r, p in devs if d is not None and r is not None)
        for (d0, r0, _), (d1, r1, p1) in zip(by_dev, by_dev[1:]):
            if r1 < r0:
                unordered.append((label, d0, r0, d1, r1, path_of(p1)))
                break
    for (r0, l0, _), (r1, l1, a1) in zip(firsts, firsts[1:]):
        if r1 < r0:
            ctx.add(warning(RANK_ORDER, f"server_list is not in rank order: {l1} (first rank {r1}) "
                            f"comes after {l0} (first rank {r0})", ctx.span(a1), subject=f"server {l1}",
                            hint="list the servers by rank; HCCL sorts by rank_id, but tools that "
                                 "read the list in order (and rtc import) assume it"))
            break
    if unordered:
        label, d0, r0, d1, r1, p1 = unordered[0]
        more = f" (and {len(unordered) - 1} more server{'s' if len(unordered) > 2 else ''})" \
            if len(unordered) > 1 else ""
        ctx.add(warning(RANK_ORDER, f"on {label}, ranks do not follow device ids: device {d1} has "
                        f"rank {r1} but device {d0} has rank {r0}{more}", ctx.span(p1),
                        subject=f"server {label}, device {d1}",
                        hint="number each server's devices in device id order (the HCCL docs "
                             "recommend physical order)"))


# --------------------------------------------------------------------------- addresses

def _addresses(ctx: _Ctx, value, path: tuple, what: str) -> int:
    """RTC634 for one IP field; returns the number of addresses (0 when empty/unusable)."""
    if not isinstance(value, str) or value == "" or path in ctx.bad:
        return 0
    items = value.split(",") if "," in value else (value,)
    for item in items:
        if is_address(item):
            continue
        span = ctx.span(path)
        sub = _value_subspan(span, value, item)
        try:
            parse_ip(item, sub, BAD_ADDRESS)
            msg, hint, where = f"'{item}' is not a valid IP address", None, sub
        except ValueProblem as p:
            msg, hint, where = p.message, p.hint, p.span
        ctx.add(error(BAD_ADDRESS, f"{format_path(path)}: {what} {msg}", where, hint=hint))
        return 0
    return len(items)


# --------------------------------------------------------------------------- v1.x

def _check_v1(ctx: _Ctx, form: str) -> None:
    doc = ctx.doc
    sl = doc.get("server_list")
    if not isinstance(sl, list):
        return
    count = doc.get("server_count")
    if ("server_count",) not in ctx.bad:
        n = decimal(count)
        if n is not None and n != len(sl):
            ctx.add(error(COUNT, f'server_count is "{count}" but server_list has {len(sl)} '
                          f"server{'s' if len(sl) != 1 else ''}", ctx.span(("server_count",)),
                          hint=f'write "server_count": "{len(sl)}" (HCCL: "serverList size neq server num")'))
    entries = []
    servers = []
    ip_counts: list[tuple[int, tuple]] = []
    bad = ctx.bad
    v12 = form == "hccl-v1.2"
    for i, s in enumerate(sl):
        if type(s) is not dict:
            continue
        label = _server_label(s, i)
        sp = ("server_list", i)
        if "host_ip" in s:
            _addresses(ctx, s["host_ip"], sp + ("host_ip",), "host_ip")
        devs = s.get("device")
        rows = []
        ports: dict[int, tuple] = {}
        by_id: dict[int, dict] = {}
        if type(devs) is list:
            for j, d in enumerate(devs):
                if type(d) is not dict:
                    continue
                if "rank_id" in d:
                    r = decimal(d["rank_id"])
                    did = decimal(d.get("device_id"))
                    if bad:
                        dp = sp + ("device", j)
                        if dp + ("rank_id",) in bad:
                            r = None
                        if dp + ("device_id",) in bad:
                            did = None
                    entries.append((r, (i, j)))
                    rows.append((did, r, (i, j)))
                    if did is not None and (v12 or bad):
                        by_id[did] = (d, sp + ("device", j))
                ip = d.get("device_ip")
                if ip:
                    k = _addresses(ctx, ip, (*sp, "device", j, "device_ip"), "device_ip")
                    if k:
                        ip_counts.append((k, (i, j)))
                if "backup_device_ip" in d:
                    _addresses(ctx, d["backup_device_ip"], (*sp, "device", j, "backup_device_ip"),
                               "backup_device_ip")
                if "host_port" in d:
                    hp = (*sp, "device", j, "host_port")
                    port = None if hp in bad else decimal(d.get("host_port"))
                    if port is not None:
                        first = ports.get(port)
                        if first is not None:
                            ctx.add(error(HOST_PORT, f"{format_path(hp)}: host_port {port} of {label} "
                                          "is already used by another device of the server",
                                          ctx.span(hp), related=[Related(ctx.span(first), "first used here")],
                                          subject=f"server {label}, device {d.get('device_id')}",
                                          hint="each device of a server needs its own host_port"))
                        else:
                            ports[port] = hp
        if v12:
            _backups(ctx, label, by_id)
        servers.append((label, sp + ("server_id",) if "server_id" in s else sp, rows))
    if _rank_set(ctx, entries, ("server_list",), path_of=_v1_rank_path):
        _rank_blocks(ctx, servers, path_of=_v1_rank_path)
    if len({k for k, _ in ip_counts}) > 1:
        _ip_counts(ctx, [(k, ("server_list", i, "device", j, "device_ip")) for k, (i, j) in ip_counts])
    if v12:
        _super_pods(ctx, sl)


def _v1_rank_path(ij: tuple) -> tuple:
    return ("server_list", ij[0], "device", ij[1], "rank_id")


def _ip_counts(ctx: _Ctx, counts: list) -> None:
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


def _backups(ctx: _Ctx, label: str, by_id: dict) -> None:
    for did, (d, dp) in sorted(by_id.items()):
        bp = dp + ("backup_device_ip",)
        backup = d.get("backup_device_ip")
        if not isinstance(backup, str) or not backup or bp in ctx.bad:
            continue
        b_ip, state = address(backup)
        if state != "ok":
            continue  # RTC634
        own, _ = address(d.get("device_ip"))
        partner = did ^ 1
        subject = f"server {label}, device {did}"
        if own is not None and b_ip == own:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: backup_device_ip {backup} is the device's "
                          f"own device_ip", ctx.span(bp), subject=subject,
                          hint=f"use the device_ip of device {partner}, the other die of this chip"))
            continue
        other = by_id.get(partner)
        if other is None:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: device {did} backs up to device {partner} "
                          f"(the other die of its chip), which is not in the table for {label}",
                          ctx.span(bp), subject=subject,
                          hint="both dies of a chip must be in the table when backups are used"))
            continue
        pd, ppath = other
        p_ip, _ = address(pd.get("device_ip"))
        if p_ip != b_ip:
            ctx.add(error(BACKUP_IP, f"{format_path(bp)}: backup_device_ip {backup} is not the "
                          f"device_ip of device {partner} ({pd.get('device_ip') or 'none'}), the "
                          "other die of this chip", ctx.span(bp), subject=subject,
                          related=[Related(ctx.span(ppath), f"device {partner}")],
                          hint=f"set it to device {partner}'s device_ip"))
        bport_path = dp + ("backup_device_port",)
        bport = None if bport_path in ctx.bad else decimal(d.get("backup_device_port"))
        if bport is not None:
            pport = decimal(pd.get("device_port")) if "device_port" in pd else 16666
            if pport == bport:
                ctx.add(error(BACKUP_PORT, f"{format_path(bport_path)}: backup_device_port {bport} "
                              f"is the device_port of device {partner}, the backup die"
                              + ("" if "device_port" in pd else " (16666 by default)"),
                              ctx.span(bport_path), subject=subject,
                              hint="choose a port the partner die does not listen on"))


def _super_pods(ctx: _Ctx, sl: list) -> None:
    pods = ctx.doc.get("super_pod_list")
    if not isinstance(pods, list):
        return
    ids: dict[str, int] = {}
    for i, s in enumerate(sl):
        sid = s.get("server_id") if isinstance(s, dict) else None
        if isinstance(sid, str):
            ids.setdefault(sid, i)
    member: dict[str, list] = {}
    pod_ids: dict[str, tuple] = {}
    for k, pod in enumerate(pods):
        if not isinstance(pod, dict):
            continue
        pid = pod.get("super_pod_id")
        pid_path = ("super_pod_list", k, "super_pod_id")
        if isinstance(pid, str) and pid_path not in ctx.bad:
            first = pod_ids.get(pid)
            if first is not None:
                ctx.add(error(POD_DUPLICATE, f"{format_path(pid_path)}: super_pod_id \"{pid}\" is "
                              "used twice", ctx.span(pid_path),
                              related=[Related(ctx.span(first), "first here")],
                              hint="merge the two entries' server lists"))
            else:
                pod_ids[pid] = pid_path
        members = pod.get("server_list")
        if not isinstance(members, list):
            continue
        for m, entry in enumerate(members):
            sid = entry.get("server_id") if isinstance(entry, dict) else None
            path = ("super_pod_list", k, "server_list", m, "server_id")
            if not isinstance(sid, str) or path in ctx.bad:
                continue
            if sid not in ids:
                import difflib

                close = difflib.get_close_matches(sid, list(ids), n=1)
                ctx.add(error(POD_UNKNOWN, f"{format_path(path)}: super pod {pid!r} lists "
                              f"server_id \"{sid}\", which is not in server_list", ctx.span(path),
                              hint=(f"did you mean \"{close[0]}\"? " if close else "")
                              + "list the server_ids of server_list exactly"))
                continue
            seen = member.setdefault(sid, [])
            if seen:
                how = "again in the same super pod" if seen[0][0] == k else \
                    f"in super pod {pods[seen[0][0]].get('super_pod_id')!r} too"
                ctx.add(error(POD_MEMBERSHIP, f"{format_path(path)}: server {sid} is listed {how}; "
                              "a server belongs to exactly one super pod", ctx.span(path),
                              subject=f"server {sid}",
                              related=[Related(ctx.span(seen[0][1]), "first listed here")],
                              hint="list every server once"))
            seen.append((k, path))
    for sid, i in ids.items():
        if sid not in member:
            ctx.add(error(POD_MEMBERSHIP, f"server {sid} is in no super pod: with super_pod_list "
                          "every server must be listed in exactly one", ctx.span(("server_list", i, "server_id")),
                          subject=f"server {sid}",
                          hint="add it to its pod's server_list (Super Pod ID from "
                               "`npu-smi info -t spod-info`)"))
    # adjacency: the pod of each server in list order
    last_pos: dict[int, int] = {}
    prev = None
    for i, s in enumerate(sl):
        sid = s.get("server_id") if isinstance(s, dict) else None
        got = member.get(sid) if isinstance(sid, str) else None
        if not got:
            continue
        k = got[0][0]
        if k != prev and k in last_pos:
            between = sl[last_pos[k] + 1] if last_pos[k] + 1 < len(sl) else None
            pid = pods[k].get("super_pod_id")
            ctx.add(error(POD_CONTIGUOUS, f"server {sid} of super pod {pid!r} is separated from the "
                          f"pod's other servers" + (f" by {_server_label(between, last_pos[k] + 1)}"
                                                    if between is not None else ""),
                          ctx.span(("server_list", i, "server_id")), subject=f"server {sid}",
                          hint="order server_list pod by pod"))
            break
        last_pos[k] = i
        prev = k


# --------------------------------------------------------------------------- PD

def _check_pd(ctx: _Ctx) -> None:
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
            n = _addresses(ctx, d.get("device_ip"), p + ("device_ip",), "device_ip")
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
    _ip_counts(ctx, counts)


# --------------------------------------------------------------------------- legacy

def _count(ctx: _Ctx, path: tuple, actual: int, what: str) -> None:
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


def _check_legacy(ctx: _Ctx, lab: bool) -> None:
    doc = ctx.doc
    groups = doc.get("group_list")
    if not isinstance(groups, list):
        return
    _count(ctx, ("group_count",), len(groups), "group_list has")
    names: dict[str, tuple] = {}
    pods: dict[str, tuple] = {}
    entries = []
    servers: dict[str, list] = {}
    anchors: dict[str, tuple] = {}
    counts = []
    for g, grp in enumerate(groups):
        if not isinstance(grp, dict):
            continue
        gp = ("group_list", g)
        name = grp.get("group_name")
        if isinstance(name, str) and name:
            first = names.get(name)
            if first is not None:
                ctx.add(error(LEGACY_NAME, f"{format_path(gp + ('group_name',))}: group_name "
                              f"\"{name}\" is used twice", ctx.span(gp + ("group_name",)),
                              related=[Related(ctx.span(first), "first here")]))
            else:
                names[name] = gp + ("group_name",)
        insts = grp.get("instance_list")
        if not isinstance(insts, list):
            continue
        _count(ctx, gp + ("instance_count",), len(insts), "instance_list has")
        ndev = 0
        sids = set()
        for k, inst in enumerate(insts):
            if not isinstance(inst, dict):
                continue
            ip_ = gp + ("instance_list", k)
            sid = inst.get("server_id")
            if isinstance(sid, str):
                sids.add(sid)
                anchors.setdefault(sid, ip_ + ("server_id",))
            pod = inst.get("pod_name")
            if isinstance(pod, str):
                first = pods.get(pod)
                if first is not None:
                    ctx.add(error(LEGACY_NAME, f"{format_path(ip_ + ('pod_name',))}: pod_name \"{pod}\" "
                                  "is used twice", ctx.span(ip_ + ("pod_name",)),
                                  related=[Related(ctx.span(first), "first here")],
                                  hint="HCCL finds a process's entry by pod_name; make it unique"))
                else:
                    pods[pod] = ip_ + ("pod_name",)
            devs = inst.get("devices")
            rp = ip_ + ("rank_id",)
            r = None if rp in ctx.bad else decimal(inst.get("rank_id"))
            if lab:
                entries.append((r, rp))
            if isinstance(devs, list):
                for j, d in enumerate(devs):
                    if not isinstance(d, dict):
                        continue
                    ndev += 1
                    dp = ip_ + ("devices", j)
                    n = _addresses(ctx, d.get("device_ip"), dp + ("device_ip",), "device_ip")
                    if n:
                        counts.append((n, dp + ("device_ip",)))
                    if lab and isinstance(sid, str):
                        did = decimal(d.get("device_id"))
                        servers.setdefault(sid, []).append((did, r, rp))
        if lab:
            _count(ctx, gp + ("device_num",), len(insts), "instance_list has (one instance per device):")
            _count(ctx, gp + ("server_num",), len(sids), "the instances name this many servers:")
            dn, sn = decimal(grp.get("device_num")), decimal(grp.get("server_num"))
            if dn is not None and sn and (dn % sn or dn // sn not in (1, 2, 4, 8, 16)):
                ctx.add(error(LEGACY_AVERAGE, f"{format_path(gp + ('device_num',))}: {dn} devices on {sn} "
                              f"servers is not 1, 2, 4, 8 or 16 per server",
                              ctx.span(gp + ("device_num",)),
                              hint="use the same 1, 2, 4, 8 or 16 devices on every server"))
        else:
            _count(ctx, gp + ("device_count",), ndev, "its instances have this many devices:")
    if lab:
        if _rank_set(ctx, entries, ("group_list",), "instance"):
            _rank_blocks(ctx, [(sid, anchors[sid], rows) for sid, rows in servers.items()])
    _ip_counts(ctx, counts)


# --------------------------------------------------------------------------- v2.0

def _int2(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _check_v2(ctx: _Ctx) -> None:
    doc = ctx.doc
    ranks = doc.get("rank_list")
    if not isinstance(ranks, list):
        return
    rc = doc.get("rank_count")
    if ("rank_count",) not in ctx.bad and _int2(rc) is not None and rc != len(ranks):
        ctx.add(error(COUNT, f"rank_count is {rc} but rank_list has {len(ranks)} ranks",
                      ctx.span(("rank_count",)), hint=f'write "rank_count": {len(ranks)}'))
    entries = []
    instances: dict[tuple, tuple] = {}
    backups = []
    for k, r in enumerate(ranks):
        if not isinstance(r, dict):
            continue
        rp = ("rank_list", k)
        entries.append((None if rp + ("rank_id",) in ctx.bad else _int2(r.get("rank_id")), rp + ("rank_id",)))
        if _int2(r.get("local_id")) == 64 and rp + ("local_id",) not in ctx.bad:
            backups.append(rp)
            if "replaced_local_id" not in r:
                ctx.add(error(V2_BACKUP, f"{format_path(rp)}: backup rank (local_id 64) without "
                              "replaced_local_id", ctx.span(rp + ("local_id",)),
                              hint="name the local_id this backup rank replaces"))
        levels = r.get("level_list")
        if not isinstance(levels, list):
            continue
        prev = -1
        for n, lvl in enumerate(levels):
            if not isinstance(lvl, dict):
                continue
            lp = rp + ("level_list", n)
            layer = None if lp + ("net_layer",) in ctx.bad else _int2(lvl.get("net_layer"))
            if layer is not None:
                if (n == 0 and layer != 0) or layer <= prev:
                    why = "the first level must be net_layer 0" if n == 0 else \
                        f"net_layer {layer} does not ascend after {prev}"
                    ctx.add(error(V2_LEVELS, f"{format_path(lp + ('net_layer',))}: {why}",
                                  ctx.span(lp + ("net_layer",)),
                                  hint="list the levels 0, 1, ... in ascending order, each once"))
                prev = max(prev, layer)
            inst = lvl.get("net_instance_id")
            addrs = lvl.get("rank_addr_list")
            if layer is None or not isinstance(inst, str) or not isinstance(addrs, list):
                continue
            key = (layer, inst)
            first = instances.get(key)
            if first is None:
                instances[key] = (len(addrs), lp + ("rank_addr_list",))
            elif first[0] != len(addrs):
                ctx.add(error(V2_ADDRESS_COUNT, f"{format_path(lp + ('rank_addr_list',))}: "
                              f"{len(addrs)} address{'es' if len(addrs) != 1 else ''} but other ranks of "
                              f"net instance \"{inst}\" (layer {layer}) have {first[0]}",
                              ctx.span(lp + ("rank_addr_list",), key=True),
                              related=[Related(ctx.span(first[1], key=True), f"{first[0]} here")],
                              hint="give every rank of the instance the same number of addresses"))
    for extra in backups[1:]:
        ctx.add(error(V2_BACKUP, f"{format_path(extra)}: a second backup rank (local_id 64); a "
                      "table may have one", ctx.span(extra + ("local_id",)),
                      related=[Related(ctx.span(backups[0] + ("local_id",)), "first backup rank")]))
    _rank_set(ctx, entries, ("rank_list",), "rank")


# --------------------------------------------------------------------------- entry points

def check_version_fit(doc, form: str, smap: SourceMap, preset, explicit: bool) -> list[Diagnostic]:
    """RTC636: the table version against the hardware given with ``--hardware``."""
    if not explicit or not isinstance(doc, dict):
        return []
    span = smap.locate_nearest(("version",)) if smap.parsed else Span.whole_file(smap.filename)
    if form in ("hccl-v2.0", "topo-v2.0") and preset.chip != "Ascend":
        return [error(VERSION_HW, f'version "2.0" is the Ascend 950 table, but the hardware is '
                      f'{preset.name}, whose tables are version "{preset.ranktable_version}"', span,
                      hint="check the file or the --hardware option")]
    if form == "hccl-v1.2" and not preset.super_pod:
        return [warning(VERSION_HW, f'version "1.2" is the A3 super pod table, but the hardware is '
                        f"{preset.name}: HCCL ignores the super pod fields there", span,
                        hint=f'use "version": "{preset.ranktable_version}"')]
    return []


def check_table(doc, form: str | None, source_map: SourceMap,
                bad_paths: frozenset = frozenset()) -> list[Diagnostic]:
    """The table-only semantic rules for a parsed document of ``form`` (any form; forms
    without such rules give nothing). ``bad_paths`` are values the schema rejected."""
    if not isinstance(doc, dict) or form is None:
        return []
    ctx = _Ctx(doc, source_map, bad_paths, [])
    if form in ("hccl-v1.0", "hccl-v1.2"):
        _check_v1(ctx, form)
    elif form == "pd-ranktable":
        _check_pd(ctx)
    elif form in ("hccl-legacy-cloud", "hccl-legacy-lab"):
        _check_legacy(ctx, form == "hccl-legacy-lab")
    elif form == "hccl-v2.0":
        _check_v2(ctx)
    return ctx.out


__all__ = ["check_table", "check_version_fit"]

#: The rules this module reports (collected by rtc.report.rule_catalogue).
RULES = (RANK_IDS, RANK_INTERLEAVED, RANK_ORDER, COUNT, BAD_ADDRESS, IP_COUNT, VERSION_HW, POD_UNKNOWN, POD_MEMBERSHIP, POD_DUPLICATE, POD_CONTIGUOUS, BACKUP_IP, BACKUP_PORT, HOST_PORT, PD_CLUSTER_ID, LEGACY_NAME, LEGACY_AVERAGE, INVENTORY_SERVER, INVENTORY_DEVICE, V2_LEVELS, V2_ADDRESS_COUNT, V2_BACKUP)
