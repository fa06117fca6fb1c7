"""Duplicate names and addresses across the cluster (linear: one dict per kind)."""

from __future__ import annotations

from rtc.checks._net import Folded
from rtc.diagnostics import Related, error
from rtc.textfmt import format_ids as _ids
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

DUP_SERVER_NAME = rule("RTC201", "duplicate-server-name", "error",
                       "Two servers have the same name.", """
    What: two `server` blocks (or a server and a family member) share a name.
    Why: jobs refer to servers by name; one of them would silently disappear.
    Example: `server node3 {` next to `family node[0..7] {` (which also makes node3).
    Fix: rename one of them.""")
DUP_HOST_IP = rule("RTC202", "duplicate-host-ip", "error", "Two servers have the same host IP.", """
    What: two servers declare the same `host` address.
    Why: HCCL_IF_IP, Ray and vLLM's DP handshake identify nodes by host IP; two nodes with
    one address make workers connect to the wrong node ("Every node should have a unique
    IP address") or hang.
    Example: atlas-02 copied from atlas-01 with `host 10.0.0.6` left unchanged.
    Fix: give each server its own host IP.""")
DUP_SERVER_ID = rule("RTC203", "duplicate-server-id", "error",
                     "Two servers have the same server_id.", """
    What: two servers end up with one `server_id` in the rank table.
    Why: HCCL requires unique server_ids and rejects the table at communicator init.
    Example: `server_id "node"` in a family without `{i}`.
    Fix: make server_id unique (e.g. `server_id node-{i}`) or drop it to use the name.""")
DUP_DEVICE_ID = rule("RTC204", "duplicate-device-id", "error",
                     "A server lists the same device id twice.", """
    What: `devices 0..7, 7`.
    Why: a physical NPU can hold only one rank in a rank table; HCCL rejects duplicates.
    Example: `devices 0..3, 2..5`.
    Fix: list each device id once.""")
DUP_DEVICE_IP = rule("RTC208", "duplicate-device-ip", "error",
                     "Two devices have the same RoCE IP.", """
    What: the same device_ip appears on two devices (same or different servers).
    Why: HCCL requires every device_ip to be unique across the table; traffic for one NPU
    would reach the other, or init fails.
    Example: atlas-02 planned with atlas-01's 6.0.2.x addresses.
    Fix: give every NPU its own address (check `hccn_tool -i N -ip -g` on each server).""")
DUP_SUPER_DEVICE_ID = rule("RTC213", "duplicate-super-device-id", "error",
                           "Two devices of one super pod have the same super_device_id.", """
    What: super_device_id repeats inside a super pod (it may repeat across pods).
    Why: HCCL addresses NPUs inside a super pod by SDID; duplicates break HCCS routing and
    are rejected when the 1.2 table is parsed.
    Example: two servers of pod 0 both with `super_device_id base 0`.
    Fix: use the SDIDs `npu-smi info -t spod-info` reports, or a per-server base such as
    `super_device_id base {i*16}`.""")


def check(topo: Topology, plan: Plan):
    yield from _servers(topo)
    yield from _device_ips(topo)


def _servers(topo: Topology):
    """RTC201 per server as found; then RTC202, RTC203, RTC204 and RTC213, one finding
    per pair of source lines (a family is one line), the others counted."""
    names: dict[str, object] = {}
    hosts: dict = {}
    ids: dict[str, object] = {}
    sdids: dict = {}
    host_clashes, id_clashes = Folded("servers"), Folded("servers")
    id_lists, sdid_clashes = Folded("servers"), Folded("devices")
    sdids_once = _sdids_unique(topo)
    for s in topo.servers:
        first = names.get(s.name)
        if first is not None:
            yield error(DUP_SERVER_NAME, f"server name {s.name} is used twice", s.span,
                        related=[Related(first.span, "first defined here")], subject=s.label,
                        hint="rename one of the servers")
        else:
            names[s.name] = s
        _host_ip(s, hosts, host_clashes)
        _server_id(s, ids, id_clashes)
        _device_ids(s, id_lists)
        if not sdids_once:
            _super_device_ids(s, sdids, sdid_clashes)
    for folded in (host_clashes, id_clashes, id_lists, sdid_clashes):
        yield from folded.emit()


def _host_ip(s, hosts: dict, clashes: Folded) -> None:
    """RTC202: ``s`` has the host IP of an earlier server (``hosts``: IP -> server)."""
    if s.host_ip is None:
        return
    other = hosts.get(s.host_ip)
    if other is not None and not {d.device_id for d in s.devices}.isdisjoint(
            d.device_id for d in other.devices):  # disjoint devices: one machine, RTC223
        clashes.add((other.span_of("host"), s.span_of("host")), error(
            DUP_HOST_IP, f"host IP {s.host_ip} of {s.name} is already the host IP of "
            f"{other.name}", s.span_of("host"), subject=s.label,
            related=[Related(other.span_of("host"), f"{other.name}'s host")],
            hint="every node needs its own host IP (HCCL_IF_IP, "
                 "--data-parallel-address)"), s.name)
    elif other is None:
        hosts[s.host_ip] = s


def _server_id(s, ids: dict, clashes: Folded) -> None:
    """RTC203: ``s`` has the server_id of another server (``ids``: server_id -> server)."""
    other = ids.get(s.server_id)
    if other is not None and other is not s:
        clashes.add((other.span_of("server_id"), s.span_of("server_id")), error(
            DUP_SERVER_ID, f"server_id '{s.server_id}' of {s.name} is already used by "
            f"{other.name}", s.span_of("server_id"), subject=s.label,
            related=[Related(other.span_of("server_id"), f"{other.name}")],
            hint="make server_id unique, e.g. `server_id node-{i}` in a family"), s.name)
    else:
        ids[s.server_id] = s


def _device_ids(s, id_lists: Folded) -> None:
    """RTC204: ``s`` lists device ids twice (one finding per server, naming the repeats;
    a family's members are folded by the shared line)."""
    ids = [d.device_id for d in s.devices]
    if len(set(ids)) == len(ids):
        return  # every id once (the usual server): nothing to name
    seen: set[int] = set()
    twice: list[int] = []
    for d in s.devices:
        if d.device_id in seen and d.device_id not in twice:
            twice.append(d.device_id)
        seen.add(d.device_id)
    if twice:
        ids = _ids(twice)
        id_lists.add(s.span_of("devices"), error(
            DUP_DEVICE_ID, f"{s.name} lists device{'s' if len(twice) > 1 else ''} {ids} twice",
            s.span_of("devices"), subject=f"{s.label}, device{'s' if len(twice) > 1 else ''} "
            f"{ids}", hint="list each physical device id once"), s.name)


def _sdids_unique(topo: Topology) -> bool:
    """True when no super pod repeats a super_device_id (the usual cluster): then RTC213
    has nothing to say and its per-device bookkeeping is skipped. One list per pod."""
    by_pod: dict = {}
    for s in topo.servers:
        if s.super_pod_id is not None:
            by_pod.setdefault(s.super_pod_id, []).extend(
                [d.super_device_id for d in s.devices if d.super_device_id is not None])
    return all(len(set(ids)) == len(ids) for ids in by_pod.values())


def _super_device_ids(s, sdids: dict, clashes: Folded) -> None:
    """RTC213: a device of ``s`` repeats an SDID of its super pod (``sdids``:
    (pod, SDID) -> (server, device) that had it first)."""
    if s.super_pod_id is None:
        return
    for d in s.devices:
        if d.super_device_id is None:
            continue
        key = (s.super_pod_id, d.super_device_id)
        prev = sdids.get(key)
        if prev is None:
            sdids[key] = (s, d)
            continue
        ps, pd = prev
        clashes.add((ps.span_of("super_device_id"), s.span_of("super_device_id")),
                    error(DUP_SUPER_DEVICE_ID, f"super_device_id {d.super_device_id} "
                          f"of {s.name} device {d.device_id} repeats {ps.name} "
                          f"device {pd.device_id} in super pod {s.super_pod_id}",
                          s.span_of("super_device_id"),
                          subject=f"{s.label}, device {d.device_id}",
                          related=[Related(ps.span_of("super_device_id"), ps.name)],
                          hint="use distinct SDIDs per super pod, e.g. "
                               "`super_device_id base {i*16}`"),
                    f"{s.name} device {d.device_id}")


def _device_ips(topo: Topology):
    """RTC208: one finding per pair of servers, not one per device: a copied plan clashes
    on every NPU of the server at once; and one per pair of source lines: a family
    template that repeats clashes on many server pairs at once (the rest are counted)."""
    by_lines: dict = {}
    for (_, _), clashes in _ip_clashes(topo).items():
        (ps, _pd), s, _d = clashes[0]
        by_lines.setdefault((ps.span_of("device_ip"), s.span_of("device_ip")), []).append(clashes)
    for pairs in by_lines.values():
        clashes = pairs[0]
        clashes.sort(key=lambda c: c[2].device_id)
        (ps, pd), s, d = clashes[0]
        more = len(clashes) - 1
        yield error(DUP_DEVICE_IP, f"device IP {d.device_ip} of {s.name} device {d.device_id} "
                    f"is also the IP of {ps.name} device {pd.device_id}"
                    f"{_ip_clash_extra(pairs)}",
                    s.span_of("device_ip"),
                    subject=(f"{s.label}, devices {_ids([c[2].device_id for c in clashes])}"
                             if more else f"{s.label}, device {d.device_id}"),
                    related=[Related(ps.span_of("device_ip"), f"{ps.name} device {pd.device_id}")],
                    hint="every NPU needs its own RoCE address; check `hccn_tool -i N -ip -g` "
                         "on both servers")


def _ip_clashes(topo: Topology) -> dict:
    """(first server, second server) -> [((ps, pd), s, d)]: devices whose IP an earlier
    device has. A set of int keys decides "no clash" in C; only then are owners looked
    up."""
    ip_clashes: dict = {}
    table = topo.address_keys()
    keys = [key for _s, _d, key, _gw in table if key is not None]
    if len(set(keys)) != len(keys):
        ips: dict = {}
        for s, d, key, _gw in table:
            if key is None:
                continue
            prev = ips.get(key)
            if prev is not None:
                ip_clashes.setdefault((prev[0].name, s.name), []).append((prev, s, d))
            else:
                ips[key] = (s, d)
    return ip_clashes


def _ip_clash_extra(pairs: list) -> str:
    """The message tail of an RTC208 finding: the other clashing devices of the first
    server pair (``pairs[0]``, sorted by device), then the other server pairs the same
    source lines give."""
    clashes = pairs[0]
    (ps, _pd), s, _d = clashes[0]
    more = len(clashes) - 1
    devices = ", ".join(str(c[2].device_id) for c in clashes[1:9]) + (" ..." if more > 8 else "")
    extra = (f"; {more} more device{'s' if more != 1 else ''} of {s.name} clash with "
             f"{ps.name} the same way (devices {devices})") if more else ""
    if len(pairs) > 1:
        shown = ", ".join(f"{c[0][1].name} with {c[0][0][0].name}" for c in pairs[1:4])
        lines = "line gives" if ps.span_of("device_ip") == s.span_of("device_ip") else \
            "lines give"
        extra += (f"; the same {lines} {len(pairs) - 1} more clashing server pair"
                  f"{'s' if len(pairs) > 2 else ''} ({shown}{', ...' if len(pairs) > 4 else ''})")
    return extra

#: The rules this module reports (collected by rtc.catalogue).
RULES = (DUP_SERVER_NAME, DUP_HOST_IP, DUP_SERVER_ID, DUP_DEVICE_ID, DUP_DEVICE_IP,
         DUP_SUPER_DEVICE_ID)
