"""Address plan checks (RTC400-RTC407): gateways and prefixes, addresses used in two
roles, mixed address families, host IPs off their network, network/fabric declarations.

Loopback / unspecified / multicast / link-local addresses are RTC209, device-vs-device
duplicates RTC208, host-vs-host RTC202 and placeholders RTC111 (at parse time). Every
check here is one pass over the devices (dicts keyed by address or subnet); findings of
family members written on one line are folded into one diagnostic.
"""

from __future__ import annotations

from ipaddress import IPv4Address

from rtc.checks._net import Folded, related
from rtc.diagnostics import Related, error, warning
from rtc.model.topology import Topology
from rtc.network.addressing import address_key
from rtc.plan import Plan
from rtc.network.addressing import (contains, from_network, is_network_or_broadcast, mask,
                                    subnet_of, subnet_text, within)
from rtc.rules import rule

GATEWAY_OUTSIDE = rule("RTC400", "gateway-outside-subnet", "error",
                       "A device's gateway is not inside the device's own subnet.", """
    What: the `gateway` of an NPU does not lie in the subnet given by its `device_ip` and
    `prefix` (e.g. device 6.0.2.1/31 with gateway 6.0.2.2).
    Why: a router is only reachable on the link itself. The NPU cannot resolve a gateway
    outside its subnet, so every packet to another subnet is dropped: HCCL link setup to
    the other servers times out (HCCL_CONNECT_TIMEOUT) and `hccn_tool -net_health -g`
    reports a fault.
    Example: `device_ip 6.0.2.1 step 2`, `gateway 6.0.2.2 step 2`, `prefix 31` (the /31 of
    6.0.2.1 is 6.0.2.0-6.0.2.1; its gateway is 6.0.2.0).
    Fix: use the switch-side address of each NPU's link (`hccn_tool -i N -gateway -g`), or
    correct the prefix.""")
NET_OR_BROADCAST = rule("RTC401", "network-or-broadcast-address", "error",
                        "A device IP or gateway is the network or broadcast address of its subnet.", """
    What: with `prefix 24`, a device_ip or gateway ending in .0 or .255 (for /30 and
    shorter prefixes; /31 and /32 use both addresses).
    Why: the NPU NIC refuses or mis-handles such an address: `hccn_tool -ip -s` fails, or
    peers send to a broadcast address and HCCL links never come up.
    Example: `device_ip 10.20.0.0 step 1`, `prefix 24` (device 0 gets the network address).
    Fix: start the plan at .1, or use a longer prefix.""")
BAD_PREFIX = rule("RTC402", "prefix-too-long", "error",
                  "A prefix length does not fit the address family.", """
    What: `prefix 33` or longer for IPv4 device addresses (IPv6 allows up to 128).
    Why: the netmask cannot be applied; `hccn_tool -ip -s ... netmask` rejects it and the
    subnet of the device, and so every reachability judgement, is undefined.
    Example: `prefix 64` with `device_ip 6.0.2.1 step 2`.
    Fix: use the prefix the NPU really has (`hccn_tool -i N -ip -g` prints the netmask;
    /31 is 255.255.255.254).""")
ROLE_CONFLICT = rule("RTC403", "address-role-conflict", "error",
                     "One address is used in two roles (host IP, device IP, gateway).", """
    What: a device IP equal to some server's host IP, a gateway equal to a device IP (its
    own or another NPU's), or a host IP equal to a gateway.
    Why: ARP and routing answer for one owner only: RoCE traffic lands on a host NIC (or
    the other way round), and the NPU whose gateway is another NPU's address sends all
    off-link traffic into that NPU, so HCCL links time out.
    Example: `gateway 6.0.2.1 step 2` next to `device_ip 6.0.2.1 step 2`.
    Fix: give each role its own address; gateways are the switch side of the link.""")
MIXED_FAMILIES = rule("RTC404", "mixed-address-families", "error",
                      "IPv4 and IPv6 addresses are mixed among device IPs or among host IPs.", """
    What: some device IPs of one rank table are IPv4 and others IPv6 (or host IPs mix the
    two across the cluster).
    Why: HCCL opens sockets of one family (HCCL_SOCKET_FAMILY, AF_INET by default); an
    IPv4 device cannot connect to an IPv6 one, and host-side bootstrap over mixed
    families fails to connect.
    Example: atlas-01 with `device_ip 6.0.2.1 step 2`, atlas-02 with
    `device_ip fd00::11 step 1`.
    Fix: use one family for all device IPs (and one for all host IPs); set
    HCCL_SOCKET_FAMILY=AF_INET6 when that family is IPv6.""")
HOST_OFF_NETWORK = rule("RTC405", "host-not-on-network", "error",
                        "A server's host IP is not on the network declared for its NIC.", """
    What: a `network` block says NIC eno0 is on 10.0.0.0/24, and a server with `nic eno0`
    has a host IP outside it.
    Why: HCCL_IF_IP, GLOO/TP_SOCKET_IFNAME and --data-parallel-address all use this
    address; if it is not on the NIC's network, other nodes reach it through the wrong
    interface or not at all, and the bootstrap hangs until its timeout.
    Example: `network mgmt { cidr 10.0.0.0/24  nic eno0 }` and a server with
    `host 10.0.1.6`, `nic eno0`.
    Fix: correct the host IP (`ip addr show eno0`), the NIC name, or the network.""")
BAD_DECL = rule("RTC406", "bad-network-declaration", "error",
                "A network or fabric block is incomplete or declared twice.", """
    What: two `network` (or two `fabric`) blocks with one name, a network without `cidr`,
    or a fabric without `subnets`.
    Why: rtc cannot tell which declaration is meant, and an incomplete one would silently
    check nothing.
    Example: `fabric roce { }`.
    Fix: give each block a unique name and its facts (`cidr 10.0.0.0/24`,
    `subnets 6.0.0.0/16`).""")
FABRIC_OVERLAP = rule("RTC407", "fabric-overlap", "warning",
                      "Two fabrics declare overlapping subnets.", """
    What: a subnet of one `fabric` overlaps a subnet of another.
    Why: rtc then treats both fabrics as one routing domain (a device subnet inside both
    joins them), which may hide devices that really cannot reach each other.
    Example: `fabric a { subnets 6.0.0.0/16 }` and `fabric b { subnets 6.0.2.0/24 }`.
    Fix: declare disjoint subnets, or merge the fabrics if they are routed together.""")


def check(topo: Topology, plan: Plan):
    yield from _declarations(topo)
    yield from _devices(topo)
    yield from _roles(topo)
    yield from _families(topo)
    yield from _hosts(topo)


def _declarations(topo: Topology):
    seen: dict = {}
    for kind, items in (("network", topo.networks), ("fabric", topo.fabrics)):
        for item in items:
            first = seen.get((kind, item.name))
            if first is not None:
                yield error(BAD_DECL, f"{kind} {item.name} is declared twice", item.span,
                            related=[Related(first.span, "first declared here")],
                            hint=f"rename one {kind} or merge the two blocks")
            else:
                seen[(kind, item.name)] = item
    for n in topo.networks:
        if n.cidr is None and "cidr" not in n.spans:
            yield error(BAD_DECL, f"network {n.name} has no `cidr`", n.span,
                        hint="add e.g. `cidr 10.0.0.0/24`")
    for f in topo.fabrics:
        if not f.subnets and "subnets" not in f.spans:
            yield error(BAD_DECL, f"fabric {f.name} has no `subnets`", f.span,
                        hint="add e.g. `subnets 6.0.0.0/16`: the device networks routed "
                             "through this fabric")
    entries = [(from_network(net), span, f) for f in topo.fabrics for net, span in f.subnets]
    for i, (a, aspan, fa) in enumerate(entries):
        for b, bspan, fb in entries[i + 1:]:
            if fa is not fb and (within(a, b) or within(b, a)):
                yield warning(FABRIC_OVERLAP, f"fabric {fb.name} subnet {subnet_text(b)} "
                              f"overlaps fabric {fa.name} subnet {subnet_text(a)}; rtc "
                              f"treats {fa.name} and {fb.name} as one routing domain",
                              bspan, related=[Related(aspan, f"fabric {fa.name}")],
                              hint="declare disjoint subnets, or merge the fabrics")


def _flag_servers(topo: Topology) -> set[int]:
    """ids of the servers that have a device worth the full look below: an IPv4 device
    whose prefix is too long, whose gateway is outside its subnet, or whose address or
    gateway is its subnet's network or broadcast address -- decided with int keys and masks in one
    pass -- and every server with an IPv6 device or gateway (rare; checked in full)."""
    masks = [mask(4, p) for p in range(33)]
    flagged: set[int] = set()
    for s, d, ip, gw in topo.address_keys():
        prefix = d.prefix
        if ip is None or prefix is None:
            continue
        if ip > 0xFFFFFFFF or prefix > 32 or prefix < 0 or (gw is not None and gw > 0xFFFFFFFF):
            flagged.add(id(s))
            continue
        m = masks[prefix]
        if gw is not None and gw != ip and (gw & m) != (ip & m):
            flagged.add(id(s))
        elif prefix <= 30:
            host_bits = ~m & 0xFFFFFFFF
            if ip & host_bits in (0, host_bits) or (gw is not None
                                                    and gw & host_bits in (0, host_bits)):
                flagged.add(id(s))
    return flagged


def _devices(topo: Topology):
    gw = Folded("devices")
    nb = Folded("devices")
    px = Folded("servers")
    flagged = _flag_servers(topo)
    for s in topo.servers:
        if id(s) not in flagged:
            continue
        for d in s.devices:
            ip, prefix = d.device_ip, d.prefix
            if ip is None or prefix is None:
                continue
            limit = 32 if ip.version == 4 else 128
            if prefix > limit:
                px.add(s.span_of("prefix"), error(
                    BAD_PREFIX, f"prefix {prefix} of {s.name} is longer than an IPv{ip.version} "
                    f"address ({limit} bits; device {d.device_id} is {ip})", s.span_of("prefix"),
                    subject=s.label, hint="IPv4 prefixes are 0..32; /31 is 255.255.255.254"),
                    s.name)
                break
            sub = subnet_of(ip, prefix)
            if d.gateway is not None and d.gateway != ip and not contains(sub, d.gateway):
                gw.add(s.span_of("gateway"), error(
                    GATEWAY_OUTSIDE, f"gateway {d.gateway} of {s.name} device {d.device_id} is "
                    f"outside the device's subnet {subnet_text(sub)} ({ip}/{prefix}); the NPU "
                    "cannot reach it", s.span_of("gateway"),
                    subject=f"{s.label}, device {d.device_id}",
                    related=related(s.span_of("device_ip"), f"device_ip {ip}"),
                    hint="the gateway is the switch side of the NPU's link (`hccn_tool -i "
                         f"{d.device_id} -gateway -g`); check `prefix` and the gateway plan"),
                    f"{s.name} device {d.device_id}")
            which = is_network_or_broadcast(ip, prefix)
            if which:
                nb.add(s.span_of("device_ip"), error(
                    NET_OR_BROADCAST, f"device IP {ip} of {s.name} device {d.device_id} is the "
                    f"{which} address of {subnet_text(sub)}", s.span_of("device_ip"),
                    subject=f"{s.label}, device {d.device_id}",
                    hint="use host addresses of the subnet (not the first or last one), or "
                         "a longer prefix"), f"{s.name} device {d.device_id} ({which})")
            which = None if d.gateway is None else is_network_or_broadcast(d.gateway, prefix)
            if which and contains(sub, d.gateway):
                nb.add(s.span_of("gateway"), error(
                    NET_OR_BROADCAST, f"gateway {d.gateway} of {s.name} device {d.device_id} is "
                    f"the {which} address of the device's subnet {subnet_text(sub)}",
                    s.span_of("gateway"), subject=f"{s.label}, device {d.device_id}",
                    hint="the gateway is a host address of the NPU's subnet (the switch side, "
                         "`hccn_tool -i N -gateway -g`), never its first or last address"),
                    f"{s.name} device {d.device_id} ({which})")
    yield from px.emit()
    yield from gw.emit()
    yield from nb.emit()




def _roles(topo: Topology):
    # Linear and mostly in C: three key sets, intersected; only addresses that sit in two
    # of them are looked at again to name their owners.
    hosts = {address_key(s.host_ip) for s in topo.servers if s.host_ip is not None}
    table = topo.address_keys()
    devices = {ip for _s, _d, ip, _gw in table if ip is not None}
    gateways = {gw for _s, _d, _ip, gw in table if gw is not None}
    shared = (hosts & devices) | (hosts & gateways) | (devices & gateways)
    if not shared:
        return
    owners: dict = {}
    out = Folded("conflicts")
    roles = []
    for s in topo.servers:
        if s.host_ip is not None and address_key(s.host_ip) in shared:
            roles.append((s.host_ip, "host", s, None))
    for s in topo.servers:
        for d in s.devices:
            if d.device_ip is not None and address_key(d.device_ip) in shared:
                roles.append((d.device_ip, "device_ip", s, d))
    for s in topo.servers:
        for d in s.devices:
            if d.gateway is not None and address_key(d.gateway) in shared:
                roles.append((d.gateway, "gateway", s, d))
    for ip, role, s, d in roles:
        key = address_key(ip)
        first = owners.get(key)
        if first is None:
            owners[key] = (role, s, d)
            continue
        frole, fs, fd = first
        if frole == role:
            continue      # host/host is RTC202, device/device RTC208, shared gateways are fine
        what = _who(role, s, d)
        other = _who(frole, fs, fd)
        attr = "host" if role == "host" else role
        key = (s.span_of(attr), fs.span_of("host" if frole == "host" else frole))
        out.add(key, error(
            ROLE_CONFLICT, f"{ip} is {what} and also {other}", s.span_of(attr),
            subject=s.label if d is None else f"{s.label}, device {d.device_id}",
            related=[Related(fs.span_of("host" if frole == "host" else frole), other)],
            hint="give every host, NPU and gateway its own address; a gateway is the switch "
                 "side of the NPU's link"), f"{s.name}")
    yield from out.emit()


def _who(role: str, s, d) -> str:
    if role == "host":
        return f"the host IP of {s.name}"
    if role == "device_ip":
        return f"the device IP of {s.name} device {d.device_id}"
    return f"the gateway of {s.name} device {d.device_id}"


def _families(topo: Topology):
    # A rank table can mix families only when the cluster has IPv6 device IPs (address
    # keys above 2**32) beside IPv4 ones: one pass over the keys settles the usual case.
    keys = [ip for _s, _d, ip, _gw in topo.address_keys() if ip is not None]
    mixed = bool(keys) and min(keys) <= 0xFFFFFFFF < max(keys)
    tables = ([(j, topo.rank_table_members(j)) for j in topo.jobs] or
              [(None, topo.rank_table_members(None))]) if mixed else []
    for job, members in tables:
        first: dict = {}
        count = {4: 0, 6: 0}
        for s, devs in members:
            for d in devs:
                if d.device_ip is not None:
                    v = 4 if type(d.device_ip) is IPv4Address else d.device_ip.version
                    count[v] += 1
                    first.setdefault(v, (s, d))
        if count[4] and count[6]:
            minority = 6 if count[6] <= count[4] else 4
            major = 10 - minority
            s, d = first[minority]
            ms, md = first[major]
            where = f"job {job.name}'s rank table" if job else "the rank table"
            yield error(MIXED_FAMILIES, f"{where} mixes IPv4 and IPv6 device IPs ({count[4]} "
                        f"IPv4, {count[6]} IPv6): {s.name} device {d.device_id} is "
                        f"{d.device_ip}, {ms.name} device {md.device_id} is {md.device_ip}",
                        s.span_of("device_ip"), subject=f"{s.label}, device {d.device_id}",
                        related=[Related(ms.span_of("device_ip"), f"{ms.name} (IPv{major})")],
                        hint="use one address family for every device of a table")
    hosts = [s for s in topo.servers if s.host_ip is not None]
    fams = {s.host_ip.version for s in hosts}
    if len(fams) > 1:
        v4 = [s for s in hosts if s.host_ip.version == 4]
        v6 = [s for s in hosts if s.host_ip.version == 6]
        few, many = (v6, v4) if len(v6) <= len(v4) else (v4, v6)
        yield error(MIXED_FAMILIES, f"host IPs mix IPv4 and IPv6 ({len(v4)} IPv4, {len(v6)} "
                    f"IPv6): {few[0].name} is {few[0].host_ip}, {many[0].name} is "
                    f"{many[0].host_ip}", few[0].span_of("host"), subject=few[0].label,
                    related=[Related(many[0].span_of("host"), many[0].name)],
                    hint="bootstrap (HCCL_IF_IP, Gloo, the DP handshake) needs every node "
                         "reachable in one family; use one for all hosts")


def _hosts(topo: Topology):
    if not topo.networks:
        return
    by_nic: dict = {}
    for n in topo.networks:
        if n.cidr is None:
            continue
        for nic in n.nics:
            by_nic.setdefault(nic, []).append(n)
    out = Folded("servers")
    for s in topo.servers:
        if s.host_ip is None or s.nic is None:
            continue
        nets = by_nic.get(s.nic)
        if not nets:
            continue
        if any(s.host_ip in n.cidr for n in nets):
            continue
        n = nets[0]
        names = ", ".join(f"{x.name} ({x.cidr})" for x in nets)
        out.add(s.span_of("host"), error(
            HOST_OFF_NETWORK, f"host IP {s.host_ip} of {s.name} is not on the network of its "
            f"NIC {s.nic}: {names}", s.span_of("host"), subject=s.label,
            related=[Related(n.span_of("cidr"), f"network {n.name}")],
            hint=f"use {s.name}'s address on {s.nic} (`ip addr show {s.nic}`), or fix `nic` / "
                 "the network's `cidr`"), s.name)
    yield from out.emit()

#: The rules this module reports (collected by rtc.catalogue).
RULES = (GATEWAY_OUTSIDE, NET_OR_BROADCAST, BAD_PREFIX, ROLE_CONFLICT, MIXED_FAMILIES,
         HOST_OFF_NETWORK, BAD_DECL, FABRIC_OVERLAP)
