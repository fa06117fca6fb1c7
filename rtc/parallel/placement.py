"""Placement: which device runs each global rank of a job, the way the framework places it.

Pure and deterministic (no I/O). :func:`place` works on plain :class:`NodeInput` records;
:func:`place_job` builds them from a :class:`~rtc.model.topology.Topology` job, and
:meth:`Topology.placement(job) <rtc.model.topology.Topology.placement>` caches the result.

Rank-table order
================

The job's rank table (``rtc/emit/hccl_json.py``) numbers its devices 0..N-1 in
*rank-table order*: the job's servers in declared order, each server's devices ascending
(:meth:`Topology.rank_table_members`). ``NodePlan.first_position`` is the ``rank_id`` of a
server's first device there.

vLLM (``framework vllm``, the default)
======================================

Global rank ``r = ((dp*PP + pp)*PCP + pcp)*TP + tp`` (:mod:`rtc.parallel.groups`); one DP
replica is ``W = TP*PP*PCP`` consecutive ranks. Walking the job's servers in order:

* a server with ``dp_local N`` (``on SERVER ... dp_local N``), or with at least ``W`` devices,
  runs ``L`` whole replicas (``--data-parallel-size-local``; default ``devices // W``)
  with ``--data-parallel-start-rank`` ``S`` = the sum of ``L`` of the servers before it.
  Its local engine ``i`` (DP rank ``S+i``) uses its devices ``[i*W, (i+1)*W)``
  (vLLM's ``get_device_indices``), i.e. global ranks ``[S*W, (S+L)*W)`` sit on the
  server's devices in ascending order. Devices past ``L*W`` are idle; ranks past the
  device count have no device.
* a server with fewer than ``W`` devices and no ``dp_local`` shares one replica with the
  next such servers (``--nnodes`` / Ray): consecutive servers are taken whole until they
  hold ``W`` devices, and the replica's ranks fill their devices in order. So with
  TP = NPUs per server, PP stage ``p`` runs on the ``p``-th server of the replica, which is
  how vLLM's Ray executor orders workers (driver node first; the other nodes by their
  worker count, then IP as text -- RTC510 reports a declaration that differs).
  Each of those servers reports ``dp_local 1`` and the replica's index as start rank
  (what vLLM infers with ``--nnodes``).

Consistency with the rank table: a server's first rank is ``S*W`` and its first position is
the number of devices of the servers before it. When every server's devices are all used
(no idle NPU, no missing device - exactly what the placement checks RTC302-RTC304 and the
world-size check RTC210 demand) both equal ``W * (replicas before it)``, so **global rank r
runs on the device at position r of the rank table** (:attr:`JobPlacement.aligned`), which
is the ``rank_id`` rtc emits for that device. When they differ, the placement still says
where vLLM puts each rank, and the checks report why.

Other frameworks
================

``megatron``, ``torch_npu`` and ``mindspore`` launch one process per device in rank-table
order (torchrun: ``node_rank * nproc_per_node + local_rank``), so rank ``r`` is position
``r``. Megatron's coordinates and groups follow the job's ``order`` (default
``tp-cp-ep-dp-pp``, PCP playing CP); the others use vLLM's layout (TP fastest), which is
Megatron order ``tp-cp-pp-dp``.

Everything is stored as flat lists indexed by rank (65,536 ranks place in a few tens of
milliseconds); per-rank records are built on demand by :meth:`JobPlacement.record`.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from rtc.parallel.groups import (Coords, GroupSet, ParallelSizes, megatron_axes,
                                 megatron_masked_groups, vllm_groups)

__all__ = ["NodeInput", "NodePlan", "RankRecord", "JobPlacement", "place", "place_job",
           "MEGATRON_DEFAULT_ORDER", "ALL_DIMS"]

#: Megatron-LM's default order string (fastest axis first).
MEGATRON_DEFAULT_ORDER = "tp-cp-ep-dp-pp"

#: Every group kind rtc can report, in display order.
ALL_DIMS: tuple[str, ...] = ("tp", "pcp", "pp", "dp", "ep")

# Megatron mask token for each rtc group kind.
_MEGATRON_TOKEN = {"tp": "tp", "pcp": "cp", "pp": "pp", "dp": "dp"}


class NodeInput(NamedTuple):
    """The part of a job on one server, in rank-table order.

    ``device_ids`` ascending, without repeats; ``device_ips`` one per device (anything
    ``str()`` turns into the address, or None); ``dp_local`` the user's local DP count."""

    name: str
    device_ids: tuple[int, ...]
    dp_local: int | None = None
    device_ips: tuple = ()


class NodePlan(NamedTuple):
    """Where one server's share of the job goes.

    * ``first_position``: rank-table position (``rank_id``) of the server's first device.
    * ``dp_local`` / ``dp_start``: ``--data-parallel-size-local`` and
      ``--data-parallel-start-rank`` (vLLM placement; None otherwise).
      ``dp_local_given``: the user wrote ``dp_local``.
    * ``first_rank``, ``wanted``: the server is meant to run global ranks
      ``[first_rank, first_rank + wanted)`` (they may run past the world size when the local
      counts add up to more than ``dp``); ``placed`` of them have a device (the first
      ``placed`` devices). Devices after those are idle; ``missing`` ranks meant for
      this server have no device on it.
    * ``replica``: for a replica spread over several servers, ``(dp index, this server's
      position in the replica, servers in the replica, index of the replica's first
      server)``; None otherwise.
    """

    index: int
    name: str
    device_ids: tuple[int, ...]
    device_ips: tuple
    first_position: int
    first_rank: int
    wanted: int
    placed: int
    missing: int = 0
    dp_local: int | None = None
    dp_start: int | None = None
    dp_local_given: bool = False
    replica: tuple[int, int, int, int] | None = None

    @property
    def device_count(self) -> int:
        return len(self.device_ids)

    @property
    def idle_devices(self) -> tuple[int, ...]:
        """Device ids of this server that run no rank."""
        return self.device_ids[self.placed:]

    @property
    def ranks(self) -> range:
        """The global ranks that run on this server (one per used device, ascending)."""
        return range(self.first_rank, self.first_rank + self.placed)

    @property
    def dp_ranks(self) -> range | None:
        """The DP ranks this server runs (vLLM placement only)."""
        if self.dp_start is None or self.dp_local is None:
            return None
        if self.replica is not None:
            return range(self.replica[0], self.replica[0] + 1)
        return range(self.dp_start, self.dp_start + self.dp_local)


class RankRecord(NamedTuple):
    """Everything rtc knows about one global rank."""

    rank: int
    position: int | None      # rank_id in the job's rank table
    server: str | None
    device_id: int | None
    device_ip: str | None
    coords: Coords
    groups: dict              # kind -> group index (creation order)


class JobPlacement:
    """A job's ranks on devices. Lists are indexed by global rank (``rank_node``,
    ``rank_position``) or by rank-table position (``position_node``, ``position_slot``);
    -1 means "none". Build with :func:`place`."""

    sizes: ParallelSizes
    framework: str
    mode: str
    layout: str
    order: str | None
    nodes: tuple[NodePlan, ...]
    rank_node: list[int]
    rank_position: list[int]
    position_node: list[int]
    position_slot: list[int]
    model_kind: str
    problems: list[str]
    _groups: dict
    _index: dict
    _gs: GroupSet | None
    _axes: list | None

    def __init__(
            self, sizes: ParallelSizes, framework: str, mode: str, layout: str,
            order: str | None, nodes: tuple[NodePlan, ...], rank_node: list[int],
            rank_position: list[int], position_node: list[int], position_slot: list[int],
            model_kind: str = "moe", problems: list[str] | None = None,
            _groups: dict | None = None, _index: dict | None = None,
            _gs: GroupSet | None = None, _axes: list | None = None) -> None:
        self.sizes = sizes
        self.framework = framework
        self.mode = mode
        self.layout = layout
        self.order = order
        self.nodes = nodes
        self.rank_node = rank_node
        self.rank_position = rank_position
        self.position_node = position_node
        self.position_slot = position_slot
        self.model_kind = model_kind
        self.problems = [] if problems is None else problems
        self._groups = {} if _groups is None else _groups
        self._index = {} if _index is None else _index
        self._gs = _gs
        self._axes = _axes

    # -- sizes and models -----------------------------------------------------------
    @property
    def world(self) -> int:
        return self.sizes.world_size

    @property
    def replica_size(self) -> int:
        return self.sizes.replica_size

    @property
    def moe(self) -> bool:
        return self.model_kind != "dense"

    @property
    def independent_replicas(self) -> bool:
        """True for a dense vLLM model with DP > 1: every replica is its own world."""
        return self.layout == "vllm" and not self.moe and self.sizes.dp > 1

    @property
    def worlds(self) -> list[range]:
        """Torch worlds as rank ranges: one per replica for dense vLLM models, else one."""
        w = self.replica_size
        if self.layout == "vllm" and not self.moe:
            return [range(s, s + w) for s in range(0, self.world, w)]
        return [range(self.world)]

    @property
    def aligned(self) -> bool:
        """True when every rank r runs on the device at rank-table position r."""
        rp = self.rank_position
        return len(self.position_node) == len(rp) and all(p == r for r, p in enumerate(rp))

    @property
    def unplaced(self) -> list[int]:
        """Ranks without a device."""
        return [r for r, n in enumerate(self.rank_node) if n < 0]

    # -- per rank -------------------------------------------------------------------
    def server_of(self, rank: int) -> str | None:
        n = self.rank_node[rank]
        return self.nodes[n].name if n >= 0 else None

    def device_of(self, rank: int) -> int | None:
        p = self.rank_position[rank]
        if p < 0:
            return None
        return self.nodes[self.position_node[p]].device_ids[self.position_slot[p]]

    def device_ip_of(self, rank: int) -> str | None:
        p = self.rank_position[rank]
        if p < 0:
            return None
        node = self.nodes[self.position_node[p]]
        slot = self.position_slot[p]
        ip = node.device_ips[slot] if slot < len(node.device_ips) else None
        return None if ip is None else str(ip)

    def coords(self, rank: int) -> Coords:
        """(dp, pp, pcp, tp) of ``rank`` in the job's layout."""
        if not 0 <= rank < self.world:
            raise ValueError(f"rank {rank} is outside the world [0, {self.world})")
        if self.layout == "megatron":
            c = {}
            for token, size, stride in self._megatron():
                c[token] = (rank // stride) % size
            return Coords(dp=c["dp"], pp=c["pp"], pcp=c["cp"], tp=c["tp"])
        rest, tp = divmod(rank, self.sizes.tp)
        rest, pcp = divmod(rest, self.sizes.pcp)
        dp, pp = divmod(rest, self.sizes.pp)
        return Coords(dp=dp, pp=pp, pcp=pcp, tp=tp)

    def record(self, rank: int) -> RankRecord:
        p = self.rank_position[rank]
        return RankRecord(rank, p if p >= 0 else None, self.server_of(rank),
                          self.device_of(rank), self.device_ip_of(rank), self.coords(rank),
                          {d: self.group_index(d, rank) for d in self.dims})

    # -- groups ---------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        """Group kinds this job has, in display order.

        vLLM: tp, pcp, pp always; dp for MoE; ep for MoE with expert parallel (dense
        replicas are independent worlds: no dp or ep group). Megatron: tp, pcp (CP), pp, dp.
        """
        if self.layout == "megatron":
            return ("tp", "pcp", "pp", "dp")
        dims = ["tp", "pcp", "pp"]
        if self.moe:
            dims.append("dp")
            if self.sizes.expert_parallel:
                dims.append("ep")
        return tuple(dims)

    def why_absent(self, dim: str) -> str | None:
        """Why the job has no ``dim`` groups (None when it has them)."""
        if dim in self.dims:
            return None
        if dim not in ALL_DIMS:
            raise ValueError(f"unknown group kind {dim!r}; expected one of {ALL_DIMS}")
        if self.layout == "megatron":
            return "Megatron expert-parallel groups need an expert-parallel size, which rtc " \
                   "does not model"
        if not self.moe:
            return f"dense model: every DP replica is its own world of {self.replica_size} " \
                   f"ranks, so there are no {dim} groups"
        return "expert_parallel is off; the same ranks form the MoE layers' tensor-parallel " \
               "group instead"

    def group_set(self) -> GroupSet:
        """The vLLM :class:`GroupSet` (vLLM layout only)."""
        if self._gs is None:
            self._gs = vllm_groups(self.sizes)
        return self._gs

    def groups(self, dim: str) -> list[list[int]]:
        """The ``dim`` groups in the framework's creation order (read-only lists)."""
        if dim not in self.dims:
            raise ValueError(f"this job has no {dim!r} groups: {self.why_absent(dim)}")
        got = self._groups.get(dim)
        if got is None:
            if self.layout == "megatron":
                s = self.sizes
                got = megatron_masked_groups(self.order or MEGATRON_DEFAULT_ORDER,
                                             _MEGATRON_TOKEN[dim], tp=s.tp, cp=s.pcp, dp=s.dp,
                                             pp=s.pp)
            else:
                got = self.group_set().groups[dim]
            self._groups[dim] = got
        return got

    def group_index(self, dim: str, rank: int) -> int:
        """Index (creation order) of the ``dim`` group holding ``rank``."""
        if self.layout == "vllm":
            return self.group_set().group_index(dim, rank)
        idx = self._index.get(dim)
        if idx is None:
            idx = [0] * self.world
            for i, g in enumerate(self.groups(dim)):
                for r in g:
                    idx[r] = i
            self._index[dim] = idx
        return idx[rank]

    def crossing(self, dim: str) -> tuple[int, int, list[int] | None]:
        """(groups, groups whose placed members sit on more than one server, the first
        such group). Ranks without a device are ignored. Linear in the world size."""
        node = self.rank_node
        total = 0
        count = 0
        first = None
        for g in self.groups(dim):
            total += 1
            base = -1
            for r in g:
                n = node[r]
                if n < 0:
                    continue
                if base < 0:
                    base = n
                elif n != base:
                    count += 1
                    if first is None:
                        first = g
                    break
        return total, count, first

    def _megatron(self) -> list:
        if self._axes is None:
            s = self.sizes
            self._axes = megatron_axes(self.order or MEGATRON_DEFAULT_ORDER,
                                        {"tp": s.tp, "cp": s.pcp, "ep": 1, "dp": s.dp,
                                         "pp": s.pp})
        return self._axes


_MAX_WORLD = 2_097_152


def place(nodes: Sequence[NodeInput], sizes: ParallelSizes, *, framework: str = "vllm",
          model_kind: str = "moe", order: str | None = None) -> JobPlacement:
    """Place a job's ranks on its servers' devices (see the module docstring).

    ``nodes`` are the job's servers in rank-table order. ``framework`` ``vllm`` uses vLLM's
    DP-aware node placement; any other framework places rank r at position r.
    ``order`` (Megatron) is validated; a bad order string is recorded in ``problems`` and
    the default order is used."""
    problems: list[str] = []
    layout = "megatron" if framework == "megatron" else "vllm"
    if layout == "megatron":
        order = _checked_order(order, sizes, problems)
    world = sizes.world_size
    position_node, position_slot, firsts = _positions(nodes)
    if framework != "vllm":
        plans = _positional_plans(nodes, firsts, world)
        mode = "positional"
    else:
        plans = _vllm_plans(nodes, firsts, sizes.replica_size, world)
        mode = "vllm"
    rank_node, rank_position = _rank_lists(plans, world)
    return JobPlacement(sizes=sizes, framework=framework, mode=mode, layout=layout,
                        order=(order or MEGATRON_DEFAULT_ORDER) if layout == "megatron" else None,
                        nodes=tuple(plans), rank_node=rank_node, rank_position=rank_position,
                        position_node=position_node, position_slot=position_slot,
                        model_kind=model_kind, problems=problems)


def _checked_order(order: str | None, sizes: ParallelSizes, problems: list) -> str | None:
    """``order`` if it is a valid Megatron order string (or None); else None, with the
    reason added to ``problems``."""
    try:
        megatron_axes(order or MEGATRON_DEFAULT_ORDER,
                       {"tp": sizes.tp, "cp": sizes.pcp, "ep": 1, "dp": sizes.dp,
                        "pp": sizes.pp})
    except ValueError as exc:
        problems.append(f"order {order!r}: {exc}; using {MEGATRON_DEFAULT_ORDER}")
        order = None
    return order


def _positions(nodes: Sequence[NodeInput]) -> tuple[list[int], list[int], list[int]]:
    """(server index, slot on the server) of every rank-table position, and the first
    position of each server."""
    position_node: list[int] = []
    position_slot: list[int] = []
    firsts: list[int] = []
    for i, n in enumerate(nodes):
        firsts.append(len(position_node))
        k = len(n.device_ids)
        position_node.extend([i] * k)
        position_slot.extend(range(k))
    return position_node, position_slot, firsts


def _positional_plans(nodes: Sequence[NodeInput], firsts: list[int],
                      world: int) -> list[NodePlan]:
    """Rank r at rank-table position r (every framework but vLLM)."""
    plans: list[NodePlan] = []
    for i, n in enumerate(nodes):
        first = firsts[i]
        placed = max(0, min(len(n.device_ids), world - first))
        plans.append(NodePlan(i, n.name, n.device_ids, n.device_ips, first, first,
                              len(n.device_ids), placed))
    return plans


def _vllm_plans(nodes: Sequence[NodeInput], firsts: list[int], w: int,
                world: int) -> list[NodePlan]:
    """vLLM's DP-aware placement of replicas of ``w`` ranks: whole replicas on a server
    with ``dp_local`` or at least ``w`` devices, else one replica over the following
    small servers."""
    plans: list[NodePlan] = []
    next_dp = 0
    i = 0
    while i < len(nodes):
        n = nodes[i]
        count = len(n.device_ids)
        if n.dp_local is not None or count >= w:
            local = n.dp_local if n.dp_local is not None else count // w
            first = next_dp * w
            wanted = local * w
            placed = max(0, min(count, wanted, world - first))
            plans.append(NodePlan(i, n.name, n.device_ids, n.device_ips, firsts[i], first,
                                  wanted, placed, max(0, wanted - count), local, next_dp,
                                  n.dp_local is not None))
            next_dp += local
            i += 1
            continue
        i = _spread_replica(nodes, i, firsts, w, world, next_dp, plans)
        next_dp += 1
    return plans


def _spread_replica(nodes: Sequence[NodeInput], i: int, firsts: list[int], w: int, world: int,
                    next_dp: int, plans: list) -> int:
    """Add to ``plans`` DP replica ``next_dp``, larger than server ``i``: it takes that
    server and the whole following small servers. Returns the index of the next server."""
    run = [i]
    have = len(nodes[i].device_ids)
    j = i + 1
    while have < w and j < len(nodes) and nodes[j].dp_local is None \
            and len(nodes[j].device_ids) < w:
        run.append(j)
        have += len(nodes[j].device_ids)
        j += 1
    offset = 0
    for pos, m in enumerate(run):
        mn = nodes[m]
        cnt = len(mn.device_ids)
        first = next_dp * w + offset
        share = max(0, min(cnt, w - offset))
        wanted = share if pos < len(run) - 1 else w - offset
        placed = max(0, min(share, world - first))
        plans.append(NodePlan(m, mn.name, mn.device_ids, mn.device_ips, firsts[m],
                              first, wanted, placed, wanted - share, 1, next_dp, False,
                              (next_dp, pos, len(run), run[0])))
        offset += cnt
    return j


def _rank_lists(plans: list[NodePlan], world: int) -> tuple[list[int], list[int]]:
    """(server index, rank-table position) of every global rank, -1 for none."""
    # Guard: the schema caps dp*pp*pcp*tp (rtc.syntax.schema.MAX_WORLD); never allocate
    # more ranks than that, whatever the sizes say.
    alloc = min(world, _MAX_WORLD)
    rank_node = [-1] * alloc
    rank_position = [-1] * alloc
    for p in plans:
        # ranks first_rank + k for k in 0..placed-1, clipped to 0..alloc-1 (slices)
        lo, hi = max(p.first_rank, 0), min(p.first_rank + p.placed, alloc)
        if lo < hi:
            rank_node[lo:hi] = [p.index] * (hi - lo)
            start = p.first_position + lo - p.first_rank
            rank_position[lo:hi] = range(start, start + hi - lo)
    return rank_node, rank_position


def place_job(topology, job) -> JobPlacement:
    """The placement of ``job`` of ``topology`` (use :meth:`Topology.placement`, which
    caches it). Servers and devices come from :meth:`Topology.rank_table_members`, so
    positions are exactly the ``rank_id`` values of the job's rank table."""
    dp_local = {p.server.name: p.dp_local for p in job.placements}
    nodes = [NodeInput(s.name, tuple([d.device_id for d in devs]), dp_local.get(s.name),
                       tuple([d.device_ip for d in devs]))
             for s, devs in topology.rank_table_members(job)]
    sizes = ParallelSizes(dp=job.dp, pp=job.pp, pcp=job.pcp, tp=job.tp,
                          expert_parallel=bool(job.expert_parallel),
                          moe=job.model_kind != "dense")
    return place(nodes, sizes, framework=job.framework, model_kind=job.model_kind,
                 order=job.order)
