"""Static reachability of device (RoCE) addresses: can device IP a reach device IP b?

The model
=========

Each device with an address and a prefix length lies in a *subnet* (``ip/prefix``).
A device is *routed* when it has a gateway inside its subnet. Two devices reach each
other when

* they are in the same subnet (no router involved), or
* both are routed and their subnets are joined by a declared ``fabric`` (a routed RoCE
  network: "these device subnets reach each other through their gateways").

The graph question -- which subnets are joined -- is answered with networkx: an edge joins
each routed subnet's fabric-membership signature (the set of fabrics whose ``subnets``
contain it; subnets with equal signatures behave alike, so the graph stays as small as the
declarations) to each of those fabrics, and the connected components are the routing
domains (a subnet listed in two fabrics joins them). When the description declares **no fabric at all**, rtc assumes
that every routed subnet belongs to one fabric (the usual single RoCE fabric of an A2/A3
cluster with per-NPU /31 links) and says so with a note (RTC411); declaring a fabric
makes that explicit and turns routed subnets outside it into errors.

Devices whose subnet is unknown (no prefix) are not judged. Servers in one A3 super pod
talk over HCCS, not RoCE, unless ``HCCL_INTER_HCCS_DISABLE`` is TRUE, so their pairs are
not judged either (the "link unit" of a device is its super pod, else its server).

Which pairs must connect
========================

For a job, the pairs inside its communication groups (from
:meth:`Topology.placement <rtc.model.topology.Topology.placement>`: EP and PP groups
when expert parallel is on, otherwise TP, PCP, PP and DP groups -- these never share a
pair, so nothing is counted twice); for a description without jobs (one rank table of the
whole cluster), every pair of devices on different servers.

Cost
====

Everything is counted per subnet, per fabric component and per server, never per device
pair: for a set of devices, the number of unreachable pairs between two *classes* (a
fabric component, "routed but in no fabric", "no gateway") is

    n_X*n_Y - sum_unit n_X(unit)*n_Y(unit) - sum_S n_X(S)*n_Y(S) + sum_(unit,S) ...

(inclusion-exclusion over "same link unit" and "same subnet"), which is linear in the
devices. One example pair per class pair is found by a bounded search. A job whose devices
all lie in one routing domain (the usual single fabric) is decided before any group is
built (:meth:`Model.single_domain`).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from rtc.network.addressing import V6_KEY_OFFSET, FabricIndex, Subnet, mask

ASSUMED = "(assumed)"     # the implicit fabric's name when none is declared
NO_GATEWAY = "no-gateway"
OUTSIDE = "outside"
_NONE = object()          # "no domain seen yet"
_V4_MAX = 0xFFFFFFFF      # address keys up to this are IPv4 (rtc.network.addressing.address_key)


class End(NamedTuple):
    """One device as the reachability model sees it."""

    server: object          # rtc.model.topology.Server
    device: object          # rtc.model.topology.Device
    unit: object            # link unit: server name, or ("pod", id) inside a super pod
    subnet: Subnet
    domain: object          # ("c", component) for routed devices in a fabric, else ("s", subnet)
    cls: object             # ("fabric", component) | OUTSIDE | NO_GATEWAY


class ClassPairFinding:
    """Unreachable pairs between two classes (or inside one) in one job / table."""

    a: object
    b: object
    pairs: int
    example: tuple | None      # (End, End)
    group: str | None          # which group kind the example comes from

    def __init__(
            self, a: object, b: object, pairs: int = 0, example: tuple | None = None,
            group: str | None = None) -> None:
        self.a = a
        self.b = b
        self.pairs = pairs
        self.example = example
        self.group = group


class JobReach:
    """The unreachable pairs of one job (``job`` None: the whole-cluster table)."""

    job: object
    total: int
    findings: dict  # (cls_a, cls_b) -> ClassPairFinding
    sets: int                                 # communication sets examined

    def __init__(
            self, job: object, total: int = 0, findings: dict | None = None, sets: int = 0) -> None:
        self.job = job
        self.total = total
        self.findings = {} if findings is None else findings
        self.sets = sets


class Model:
    """Subnets, routing and fabric components of a Topology (see the module docstring).

    ``component_fabrics[c]`` names the fabrics of component ``c``; ``assumed`` is True
    when no fabric is declared and routed subnets were assumed to form one."""

    def __init__(self, topo):
        self.topo = topo
        self.assumed = not topo.fabrics
        index = FabricIndex(topo.fabrics)
        self.routed: dict[Subnet, bool] = {}
        self._ends: dict = {}
        # device -> (subnet, routed)
        unrouted: set[Subnet] = set()
        info = _device_subnets(topo, self.routed, unrouted)
        # Subnets with the same fabric memberships behave alike, so the graph joins
        # membership signatures (few) to fabrics, not the (many) subnets themselves.
        signature: dict[Subnet, tuple] = dict.fromkeys(self.routed, (ASSUMED,)) \
            if self.assumed else {sub: tuple(index.fabrics_of(sub)) for sub in self.routed}
        self.component_fabrics: dict[int, list[str]] = {}
        of_sig = self._join(set(signature.values()) - {()})
        # routed subnet -> component (-1: in no fabric, it reaches only itself)
        self.component: dict[Subnet, int] = \
            dict.fromkeys(signature, of_sig.get((ASSUMED,), -1)) if self.assumed else \
            {sub: of_sig.get(sig, -1) if sig else -1 for sub, sig in signature.items()}
        self._info = info
        # One routing domain for the whole cluster (the common case: one fabric) answers
        # every single_domain() question without a pass over the devices.
        domains = {c if c >= 0 else sub for sub, c in self.component.items()}
        self._one_domain = len(domains | unrouted) <= 1

    def _join(self, sigs: set) -> dict[tuple, int]:
        """Component of each fabric-membership signature of ``sigs`` (the connected
        components of signatures and fabrics); fills :attr:`component_fabrics`."""
        of_sig: dict[tuple, int] = {}
        components = []
        if len(sigs) == 1:
            # One membership signature: a single component (no graph question to ask).
            (only,) = sigs
            components = [{("sig", only)} | {("f", name) for name in only}]
        elif sigs:
            import networkx as nx   # only when there is a routing question to answer

            g = nx.Graph()
            for sig in sigs:
                for name in sig:
                    g.add_edge(("sig", sig), ("f", name))
            components = nx.connected_components(g)
        for c, nodes in enumerate(components):
            self.component_fabrics[c] = sorted(n[1] for n in nodes if n[0] == "f")
            for n in nodes:
                if n[0] == "sig":
                    of_sig[n[1]] = c
        return of_sig

    def end(self, server, device, pods: bool) -> End | None:
        got = self._info.get(id(device))
        if got is None:
            return None
        sub, routed = got
        comp = self.component.get(sub, -1) if routed else -1
        if routed and comp >= 0:
            domain, cls = ("c", comp), ("fabric", comp)
        else:
            domain, cls = ("s", sub), (OUTSIDE if routed else NO_GATEWAY)
        unit = ("pod", server.super_pod_id) if pods and server.super_pod_id is not None \
            else server.name
        return End(server, device, unit, sub, domain, cls)

    def class_label(self, cls) -> str:
        if cls == NO_GATEWAY:
            return "devices without a usable gateway"
        if cls == OUTSIDE:
            return "routed devices in no declared fabric"
        names = self.component_fabrics.get(cls[1], [])
        if names == [ASSUMED]:
            return "routed devices (assumed one fabric)"
        return "fabric " + " + ".join(names)

    def single_domain(self, devices) -> bool:
        """True when every device of ``devices`` that has a subnet lies in one routing
        domain (one fabric component, or one subnet): then no pair among them can be
        unreachable and the per-group count can be skipped. Linear, no allocation per
        device; the common case of one routed fabric is decided here."""
        if self._one_domain:  # the whole cluster is one domain: so is every part of it
            return True
        info, component = self._info, self.component
        first = _NONE
        for d in devices:
            got = info.get(id(d))
            if got is None:
                continue
            sub, routed = got
            c = component.get(sub, -1) if routed else -1
            dom = c if c >= 0 else sub  # an int (component) never equals a tuple (subnet)
            if first is _NONE:
                first = dom
            elif dom != first:
                return False
        return True

    @property
    def used_assumption(self) -> bool:
        return self.assumed and len(self.routed) > 1


def _device_subnets(topo, routed_subnets: dict, unrouted: set) -> dict:
    """id(device) -> (subnet, routed) for every device with an address and a prefix;
    routed subnets are added to ``routed_subnets``, the subnets of devices without a
    usable gateway to ``unrouted``. Runs once per NPU: one loop, no call
    per device."""
    info: dict = {}
    masks4 = [mask(4, p) for p in range(33)]
    # Servers whose address plan failed (already reported) are not judged: their
    # missing gateways or addresses would only repeat that error as "unreachable".
    unread = {id(s) for s in topo.servers
              if s.incomplete & {"device_ip", "gateway", "prefix"}}
    for s, d, ip, gw in topo.address_keys():
        prefix = d.prefix
        if ip is None or prefix is None or (unread and id(s) in unread):
            continue
        # Inlined subnet_of / contains on int keys: this loop runs once per NPU.
        if ip <= _V4_MAX:
            if prefix < 0 or prefix > 32:
                continue
            v, m = 4, masks4[prefix]
            if gw is not None and gw > _V4_MAX:
                gw = None  # an IPv6 gateway for an IPv4 device routes nothing
        else:
            if prefix < 0 or prefix > 128:
                continue
            v, m, ip = 6, mask(6, prefix), ip - V6_KEY_OFFSET
            gw = None if gw is None or gw <= _V4_MAX else gw - V6_KEY_OFFSET
        sub = (v, ip & m, prefix)
        routed = gw is not None and gw != ip and (gw & m) == sub[1]
        info[id(d)] = (sub, routed)
        if routed:
            routed_subnets[sub] = True
        else:
            unrouted.add(sub)
    return info


def _key_counts(ends: list[End]):
    n_unit = Counter(e.unit for e in ends)
    n_sub = Counter(e.subnet for e in ends)
    n_both = Counter((e.unit, e.subnet) for e in ends)
    return len(ends), n_unit, n_sub, n_both


def _dot(a: Counter, b: Counter) -> int:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(k, 0) for k, v in a.items())


def _pairs2(c: Counter) -> int:
    return sum(v * (v - 1) // 2 for v in c.values())


def unreachable_in(ends: list[End]) -> dict:
    """(class a, class b) -> number of unreachable pairs among ``ends`` (pairs on different
    link units, in different subnets and different routing domains). Linear."""
    if len(ends) < 2:
        return {}
    first = ends[0]
    if all(e.domain == first.domain for e in ends) or all(e.unit == first.unit for e in ends):
        return {}
    by_cls: dict = {}
    for e in ends:
        by_cls.setdefault(e.cls, []).append(e)
    counts = {c: _key_counts(es) for c, es in by_cls.items()}
    out: dict = {}
    classes = sorted(by_cls, key=_cls_order)
    for i, x in enumerate(classes):
        nx_, ux, sx, bx = counts[x]
        if x in (OUTSIDE, NO_GATEWAY):
            # inside such a class the domain is the subnet: unreachable = different unit
            # and different subnet
            n = nx_ * (nx_ - 1) // 2 - _pairs2(ux) - _pairs2(sx) + _pairs2(bx)
            if n:
                out[(x, x)] = n
        for y in classes[i + 1:]:
            ny, uy, sy, by = counts[y]
            n = nx_ * ny - _dot(ux, uy) - _dot(sx, sy) + _dot(bx, by)
            if n:
                out[(x, y)] = n
    return out


def _cls_order(c):
    if isinstance(c, tuple):
        return (0, c[1])
    return (1, 0) if c == OUTSIDE else (2, 0)


def example(ends: list[End], a, b, budget: int = 200_000) -> tuple | None:
    """One unreachable pair between class ``a`` and class ``b`` (a == b: inside it)."""
    xs = [e for e in ends if e.cls == a]
    ys = xs if a == b else [e for e in ends if e.cls == b]
    checks = 0
    for i, x in enumerate(xs):
        for y in (ys[i + 1:] if a == b else ys):
            checks += 1
            if x.unit != y.unit and x.subnet != y.subnet and x.domain != y.domain:
                return (x, y)
            if checks > budget:
                return None
    return None


def communication_sets(topo, model: Model, job) -> list[tuple[str, list[End]]]:
    """The sets of devices whose pairs must connect, as (group kind, ends)."""
    pods = topo.preset.super_pod
    if job is None:
        ends = [e for s, devs in topo.rank_table_members(None) for d in devs
                if (e := model.end(s, d, pods)) is not None]
        return [("table", ends)]
    env = {name: value for name, value, _ in job.env}
    if str(env.get("HCCL_INTER_HCCS_DISABLE", "")).upper() == "TRUE":
        pods = False
    members = topo.rank_table_members(job)
    flat = [(s, d) for s, devs in members for d in devs]
    try:
        pl = topo.placement(job)
        dims = ("ep", "pp") if "ep" in pl.dims else pl.dims
        rank_position = pl.rank_position
        out = []
        cache: dict[int, End | None] = {}
        for dim in dims:
            for g in pl.groups(dim):
                if len(g) < 2:
                    continue
                ends = []
                for r in g:
                    p = rank_position[r] if r < len(rank_position) else -1
                    if p < 0 or p >= len(flat):
                        continue
                    e = cache.get(p, 0)
                    if e == 0:
                        s, d = flat[p]
                        e = cache[p] = model.end(s, d, pods)
                    if e is not None:
                        ends.append(e)
                out.append((dim, ends))
        return out
    except Exception:  # noqa: BLE001 - no usable placement: every cross-server pair
        ends = [e for s, d in flat if (e := model.end(s, d, pods)) is not None]
        return [("job", ends)]


def analyse(topo, model: Model | None = None, examples: int = 8) -> list[JobReach]:
    """The unreachable pairs of every job (or of the whole cluster without jobs)."""
    model = model or Model(topo)
    out = []
    for job in (topo.jobs or [None]):
        jr = JobReach(job)
        out.append(jr)
        if model.single_domain(d for _s, devs in topo.rank_table_members(job) for d in devs):
            continue
        for dim, ends in communication_sets(topo, model, job):
            jr.sets += 1
            for (a, b), n in unreachable_in(ends).items():
                f = jr.findings.get((a, b))
                if f is None:
                    f = jr.findings[(a, b)] = ClassPairFinding(a, b)
                f.pairs += n
                jr.total += n
                if f.example is None and sum(x.example is not None
                                             for x in jr.findings.values()) < examples:
                    f.example = example(ends, a, b)
                    f.group = dim
    return out
