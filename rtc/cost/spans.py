"""The span of a communication group: which servers and super pods it covers, the link
classes between its members, its slowest (bottleneck) link, and the levels of HCCL's
hierarchical algorithms (reference ``cost-model.md`` §5.2).

Span classes, narrowest first:

==================  ====================================================
``intra-die``       one rank (or several on one die)
``intra-package``   both dies of one A3 package (SIO)
``intra-server``    one server
``intra-superpod``  several A3 servers of one super pod (UB)
``cross-server``    several servers over RoCE
``cross-superpod``  several A3 super pods (RoCE between them)
==================  ====================================================

Levels follow HCCL (``HCCL-ALGO`` ``hierarchical_comm_principle.md``): level 0 = the
members inside one server; level 1 = servers (inside one super pod on A3); level 2 =
super pods. A rank talks to its same-index peers on the other servers of its level.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from rtc.cost.links import ASCEND_CLASSES, LOCAL, Hardware, Site, pair_class
from rtc.cost.params import CostParams

#: Span classes, narrowest first.
SPAN_CLASSES: tuple[str, ...] = ("intra-die", "intra-package", "intra-server",
                                 "intra-superpod", "cross-server", "cross-superpod")


@dataclass(frozen=True)
class Level:
    """One level of a hierarchical collective: ``name`` (``server``, ``super-pod``,
    ``cluster``), ``size`` (members of one instance: ranks per server, servers per super
    pod, super pods or servers), ``peers`` (the link classes one rank reaches its
    ``size - 1`` peers of the level over, with counts) and ``hccl_level``, HCCL's number
    for it (0 inside a server, 1 between servers, 2 between super pods)."""

    name: str
    size: int
    peers: tuple[tuple[str, int], ...]
    hccl_level: int

    @property
    def links(self) -> tuple[str, ...]:
        """The link classes of the level's peers."""
        return tuple(c for c, _ in self.peers)


@dataclass(frozen=True)
class GroupSpan:
    """Where a group's ranks run. ``ranks`` are the placed members (ranks without a
    device are left out); ``per_server`` members on each server spanned, in server
    order; ``servers_per_pod`` servers in each super pod spanned; ``classes`` the link
    classes between members; ``levels`` the hierarchical levels with more than one
    member (empty for a single rank); ``peers`` the link classes from one rank of the
    fullest server to every other member, with counts (what a full-mesh exchange such as
    MC2 dispatch drives at once)."""

    ranks: tuple[int, ...]
    hardware: Hardware
    per_server: tuple[int, ...]
    servers_per_pod: tuple[int, ...]
    span: str
    classes: tuple[str, ...]
    levels: tuple[Level, ...]
    peers: tuple[tuple[str, int], ...] = ()

    @property
    def size(self) -> int:
        """Placed ranks of the group."""
        return len(self.ranks)

    @property
    def servers(self) -> int:
        """Servers the group spans."""
        return len(self.per_server)

    @property
    def super_pods(self) -> int:
        """Super pods the group spans (1 when the hardware has none)."""
        return len(self.servers_per_pod)

    @property
    def p_intra(self) -> int:
        """Members on the fullest server (HCCL's level-0 size)."""
        return max(self.per_server, default=0)

    @property
    def asymmetric(self) -> bool:
        """Servers (or super pods) hold different member counts: HCCL then uses AHC or
        NHR-HCF on A3, and this estimate (which uses the fullest server) is weaker."""
        return len(set(self.per_server)) > 1 or len(set(self.servers_per_pod)) > 1

    def level(self, name: str) -> Level | None:
        """The level called ``name`` (``server``, ``super-pod``, ``cluster``), if any."""
        return next((lv for lv in self.levels if lv.name == name), None)


def _server_classes(hw: Hardware, sites: list[Site], cache: dict) -> frozenset[str]:
    """Link classes between the members on one server (pairs of its devices), cached by
    the device tuple in ``cache`` (shared by every group of one hardware)."""
    key = tuple(s.device for s in sites)
    got = cache.get(key)
    if got is None:
        got = frozenset(pair_class(hw, a, b) for i, a in enumerate(sites) for b in sites[i + 1:])
        cache[key] = got
    return got


#: Per-hardware caches of :func:`_server_classes` (the same server shapes recur in every
#: group of a large job); keyed by the Hardware, which is frozen and hashable.
_CLASS_CACHES: dict[Hardware, dict] = {}


def _class_cache(hw: Hardware) -> dict:
    got = _CLASS_CACHES.get(hw)
    if got is None:
        if len(_CLASS_CACHES) > 64:
            _CLASS_CACHES.clear()
        got = _CLASS_CACHES[hw] = {}
    return got


def _member_classes(hw: Hardware, by_server: dict[int, list[Site]],
                    pods: dict[str | None, list[int]]) -> tuple[str, ...]:
    """Link classes between any two members: inside each server, between servers of
    one super pod, and between super pods (one representative pair each)."""
    found: set[str] = set()
    cache = _class_cache(hw)
    for sites in by_server.values():
        if len(sites) > 1:
            found |= _server_classes(hw, sites, cache)
    firsts = {pod: [by_server[s][0] for s in servers] for pod, servers in pods.items()}
    for reps in firsts.values():
        if len(reps) > 1:
            found.add(pair_class(hw, reps[0], reps[1]))
    heads = [reps[0] for reps in firsts.values()]
    if len(heads) > 1:
        found.add(pair_class(hw, heads[0], heads[1]))
    return tuple(c for c in ASCEND_CLASSES if c in found) + tuple(
        sorted(found - set(ASCEND_CLASSES)))


def _levels(hw: Hardware, by_server: dict[int, list[Site]],
            pods: dict[str | None, list[int]]) -> tuple[Level, ...]:
    levels = []
    fullest = max(by_server.values(), key=len, default=[])
    if len(fullest) > 1:
        peers = Counter(pair_class(hw, fullest[0], s) for s in fullest[1:])
        levels.append(Level("server", len(fullest), tuple(sorted(peers.items())), 0))
    ub = hw.super_pod_link and not hw.hccs_inter_disabled and None not in pods
    if ub:
        per_pod = max((len(v) for v in pods.values()), default=0)
        if per_pod > 1:
            levels.append(Level("super-pod", per_pod, ((hw.super_pod_link, per_pod - 1),), 1))
        if len(pods) > 1:
            levels.append(Level("cluster", len(pods), ((hw.nic, len(pods) - 1),), 2))
    elif len(by_server) > 1:
        levels.append(Level("cluster", len(by_server), ((hw.nic, len(by_server) - 1),), 1))
    return tuple(levels)


def _peers(hw: Hardware, by_server: dict[int, list[Site]]) -> tuple[tuple[str, int], ...]:
    fullest = max(by_server.values(), key=len, default=[])
    if not fullest:
        return ()
    rep = fullest[0]
    counts = Counter(pair_class(hw, rep, s) for sites in by_server.values() for s in sites
                     if s is not rep)
    return tuple(sorted(counts.items()))


def _span_class(hw: Hardware, by_server: dict[int, list[Site]],
                pods: dict[str | None, list[int]], size: int) -> str:
    if len(by_server) > 1:
        if hw.super_pod_link and None not in pods:
            return "cross-superpod" if len(pods) > 1 else (
                "cross-server" if hw.hccs_inter_disabled else "intra-superpod")
        return "cross-server"
    sites = next(iter(by_server.values()), [])
    devices = {s.device for s in sites}
    if size <= 1 or len(devices) <= 1:
        return "intra-die"
    if hw.die_pairs and len({hw.die_pair_of(d) for d in devices}) == 1 \
            and hw.die_pair_of(next(iter(devices))) is not None:
        return "intra-package"
    return "intra-server"


def group_span(ranks: Sequence[int], sites: Sequence[Site | None],
               hw: Hardware) -> GroupSpan:
    """The :class:`GroupSpan` of the group ``ranks``, with ``sites[r]`` the site of rank
    ``r`` (None: the rank has no device; it is left out).

    Cost: linear in the group size plus the pairs inside each server (at most 120 for
    16 dies), so an EP group of 16,384 ranks is cheap."""
    placed = [(r, sites[r]) for r in ranks if 0 <= r < len(sites) and sites[r] is not None]
    by_server: dict[int, list[Site]] = {}
    for _, s in placed:
        by_server.setdefault(s.server, []).append(s)
    pods: dict[str | None, list[int]] = {}
    for server, ss in by_server.items():
        pods.setdefault(ss[0].super_pod, []).append(server)
    return GroupSpan(ranks=tuple(r for r, _ in placed), hardware=hw,
                     per_server=tuple(len(v) for v in by_server.values()),
                     servers_per_pod=tuple(len(v) for v in pods.values()),
                     span=_span_class(hw, by_server, pods, len(placed)),
                     classes=_member_classes(hw, by_server, pods),
                     levels=_levels(hw, by_server, pods), peers=_peers(hw, by_server))


def span_shape(ranks: Sequence[int], sites: Sequence[Site | None]) -> tuple:
    """A key equal for two groups exactly when :func:`group_span` gives them the same
    span apart from the rank numbers: each placed member as (server, device, super
    pod), servers and pods renumbered in order of first appearance."""
    servers: dict[int, int] = {}
    pods: dict[str | None, int] = {}
    out = []
    n = len(sites)
    for r in ranks:
        s = sites[r] if 0 <= r < n else None
        if s is None:
            continue
        out.append((servers.setdefault(s.server, len(servers)), s.device,
                    pods.setdefault(s.super_pod, len(pods))))
    return tuple(out)


def slowest(classes: Sequence[str], params: CostParams) -> str:
    """The slowest of ``classes`` under ``params``: lowest bandwidth, then highest α,
    then the later one in :data:`~rtc.cost.links.ASCEND_CLASSES`. ``local`` when empty."""
    if not classes:
        return LOCAL
    order = {c: i for i, c in enumerate(ASCEND_CLASSES)}

    def key(c: str) -> tuple:
        p = params.link(c)
        return (p.bandwidth, -p.alpha, -order.get(c, len(order)))
    return min(classes, key=key)


def bottleneck(span: GroupSpan, params: CostParams) -> str:
    """The bottleneck link class of a group: the slowest class its collective must
    cross (the slowest link between any two members)."""
    return slowest(span.classes, params)


def job_sites(topology, job) -> tuple[Site | None, ...]:
    """The site of every global rank of ``job`` (a :class:`~rtc.model.topology.Job` of
    ``topology``), from rtc's placement (:meth:`Topology.placement`); None for a rank
    without a device."""
    placement = topology.placement(job)
    servers = {s.name: s for s in topology.servers}
    out: list[Site | None] = []
    for rank in range(placement.world):
        name, device = placement.server_of(rank), placement.device_of(rank)
        server = servers.get(name) if name is not None else None
        out.append(None if server is None or device is None
                   else Site(server.index, device, server.super_pod_id))
    return tuple(out)
