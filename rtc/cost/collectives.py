"""Collective communication time on a group, with HCCL's choice of algorithm.

Every function takes ``nbytes`` (bytes; the meaning per operator is that of
:mod:`rtc.cost.formulas`), the group's :class:`~rtc.cost.spans.GroupSpan`, a
:class:`~rtc.cost.params.CostParams` set and :class:`~rtc.cost.hccl_algo.HcclOptions`,
and returns a :class:`CollectiveCost`: seconds, the algorithm assumed, and a breakdown by
stage (link class, α part, β part, γ part, operand bytes).

Algorithm choice mirrors HCCL (reference ``cost-model.md`` §2.4, §5.3):

* inside a server: Mesh on the 910B full mesh; on 910A a 4P mesh inside an HCCS group,
  four concurrent 8P rings across both groups (HD for ≤ 1 MB AllReduce on one server);
  on A3 a mesh for small counts on one server (≤ 512 KB per rank) or with AIV, else the
  SIO + HCCS double ring (two rings, half the data each);
* between servers and super pods: HCCL's cost rule among Ring / NHR / HD on A2
  (α = 60 µs, RDMA planning bandwidth), the count-based default on 910A and A3, unless
  ``HCCL_ALGO`` names one; stages compose hierarchically (AllReduce = level-0 RS →
  upper AllReduce on n/p_intra → level-0 AG; AllGather bottom-up; ReduceScatter top-down);
* Pipeline on A2 for large messages (AllReduce slice n/(servers·cards) ≥ 1 MB with
  RDMA-lite, not with AIV; RS/AG ≥ 32 KB per rank), one stage overlapping both levels;
* AlltoAll: Mesh inside a server + Pairwise between A2 servers; grouped FullMesh on A3;
* A3 with ``HCCL_OP_EXPANSION_MODE=AIV`` inside one super pod: one flat AIV mesh
  (``AllReduceMeshAivFor91093Executor``) below 8 MB (> 8 ranks) or 512 KB (≤ 8 ranks).

Bandwidth sharing: links with ``share = "link"`` serve every peer at once; classes with
``share = "port"`` share one port per rank (:func:`mesh_beta`). Units: bytes, seconds,
bytes/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from rtc.cost import formulas as f
from rtc.cost.errors import CostInputError
from rtc.cost.hccl_algo import DEFAULT_OPTIONS, HcclOptions, choose_inter
from rtc.cost.params import CostParams
from rtc.cost.spans import GroupSpan, Level, bottleneck, slowest

#: Operator names as HCCL writes them.
OP_NAMES: dict[str, str] = {"allreduce": "AllReduce", "allgather": "AllGather",
                            "reduce_scatter": "ReduceScatter", "broadcast": "Broadcast",
                            "alltoall": "AlltoAll", "send_recv": "Send/Recv",
                            "dispatch": "MoE dispatch", "combine": "MoE combine"}

_SHORT = {"allreduce": "AR", "allgather": "AG", "reduce_scatter": "RS", "broadcast": "BC",
          "alltoall": "A2A"}

Peers = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Stage:
    """One stage of a collective: ``label`` (``server RS``, ``cluster AR``, ...), the
    stage's operator and algorithm, its bottleneck ``link`` class, ``ranks`` taking part
    per instance, ``nbytes`` the stage's operand (bytes per rank, in the operator's
    meaning), ``steps`` α steps, and the α / β / γ parts in seconds."""

    label: str
    op: str
    algorithm: str
    link: str
    ranks: int
    nbytes: float
    steps: int
    alpha: float
    beta: float
    gamma: float = 0.0

    @property
    def seconds(self) -> float:
        """α + β + γ parts of the stage, in seconds."""
        return self.alpha + self.beta + self.gamma


@dataclass(frozen=True)
class CollectiveCost:
    """Time of one collective call: ``seconds`` = the sum of ``stages`` (stages run one
    after another), ``algorithm`` as assumed, ``notes`` on assumptions (AIV, asymmetry,
    Pipeline)."""

    op: str
    nbytes: float
    ranks: int
    algorithm: str
    stages: tuple[Stage, ...]
    notes: tuple[str, ...] = ()

    @property
    def seconds(self) -> float:
        """Time of the call: the sum of its stages, in seconds."""
        return sum(s.seconds for s in self.stages)

    @property
    def alpha(self) -> float:
        """Start-up (α) seconds over all stages."""
        return sum(s.alpha for s in self.stages)

    @property
    def beta(self) -> float:
        """Transfer (β) seconds over all stages."""
        return sum(s.beta for s in self.stages)

    @property
    def gamma(self) -> float:
        """Local reduction (γ) seconds over all stages."""
        return sum(s.gamma for s in self.stages)

    @property
    def link(self) -> str:
        """The link class of the slowest stage ("local" when there is none)."""
        return max(self.stages, key=lambda s: s.seconds).link if self.stages else "local"

    @property
    def regime(self) -> str:
        """``alpha-bound`` when start-up time dominates, else ``beta-bound``."""
        return "alpha-bound" if self.alpha >= self.beta + self.gamma else "beta-bound"

    @property
    def crossover(self) -> float:
        """The message size (bytes) at which the β+γ part would equal the α part under
        the same algorithm (α·B scaled to this call); inf when nothing is transferred."""
        moved = self.beta + self.gamma
        return float("inf") if moved <= 0 else self.nbytes * self.alpha / moved


# --------------------------------------------------------------------------- link maths

def mesh_beta(peers: Peers, params: CostParams) -> float:
    """Seconds per byte sent **to each peer** when a rank sends to all ``peers`` at once.

    ``share = "link"`` classes: the link's β (each peer has its own link). Port classes:
    every peer reached through the same port adds its bytes to that port, so β × peers.
    The result is the slowest of these (HCCL-ALGO Mesh.md; reference §5.3)."""
    worst = 0.0
    ports: dict[str, list[float]] = {}
    for cls, count in peers:
        p = params.link(cls)
        if p.share == "link":
            worst = max(worst, p.beta)
        else:
            got = ports.setdefault(p.port, [0.0, 0.0])
            got[0] += count
            got[1] = max(got[1], p.beta)
    for count, beta in ports.values():
        worst = max(worst, count * beta)
    return worst


def ring_beta(peers: Peers, params: CostParams) -> float:
    """Seconds per byte of one ring hop: the slowest class among ``peers`` (a ring step
    sends to one neighbour, over its own link or the whole port)."""
    return max((params.link(c).beta for c, _ in peers), default=0.0)


def mesh_bottleneck(peers: Peers, params: CostParams, per_peer_bytes: float) -> str:
    """The class that sets a full-mesh step's time: largest α plus its per-peer bytes
    over its bandwidth (a port class: all its peers' bytes through the one port), so the
    name agrees with the α and β :func:`peers_alpha` and :func:`mesh_beta` charge."""
    ports: dict[str, int] = {}
    for cls, count in peers:
        p = params.link(cls)
        if p.share != "link":
            ports[p.port] = ports.get(p.port, 0) + count

    def cost(item) -> float:
        p = params.link(item[0])
        times = ports.get(p.port, 1) if p.share != "link" else 1
        return p.alpha + per_peer_bytes * times * p.beta
    return max(peers, key=cost)[0] if peers else "local"


def peers_alpha(peers: Peers, params: CostParams) -> float:
    """α of a step that involves ``peers``: the largest α among their classes."""
    return max((params.link(c).alpha for c, _ in peers), default=0.0)


_MESH: dict[str, Callable] = {"allreduce": f.mesh_allreduce, "allgather": f.mesh_allgather,
                              "reduce_scatter": f.mesh_reduce_scatter,
                              "broadcast": f.mesh_broadcast, "alltoall": f.mesh_alltoall}
_RING: dict[str, Callable] = {"allreduce": f.ring_allreduce, "allgather": f.ring_allgather,
                              "reduce_scatter": f.ring_reduce_scatter,
                              "broadcast": f.ring_broadcast, "alltoall": f.pairwise_alltoall}
_LOG: dict[str, Callable] = {"allreduce": f.nhr_allreduce, "allgather": f.log_allgather,
                             "reduce_scatter": f.log_reduce_scatter,
                             "broadcast": f.binomial_broadcast, "alltoall": f.bruck_alltoall}
_RHD: dict[str, Callable] = {**_LOG, "allreduce": f.rhd_allreduce}
_FAMILIES: dict[str, tuple[dict[str, Callable], bool]] = {
    "mesh": (_MESH, True), "fullmesh": (_MESH, True), "mesh-aiv": (_MESH, True),
    "ring": (_RING, False), "double-ring": (_RING, False), "pairwise": (_RING, False),
    "rhd": (_RHD, False), "nhr": (_LOG, False), "nhr-v1": (_LOG, False),
    "nb": (_LOG, False), "ahc": (_LOG, False)}


def algorithm_terms(op: str, algorithm: str, p: int, nbytes: float, peers: Peers,
                    params: CostParams, rings: int = 1) -> f.Terms:
    """:class:`~rtc.cost.formulas.Terms` of ``op`` by ``algorithm`` over ``p`` ranks that
    reach each other over ``peers``; ``rings`` concurrent rings split the data (A3
    double ring: 2; 910A 8P: 4). Unknown algorithms raise ValueError."""
    if algorithm not in _FAMILIES:
        raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(_FAMILIES)}")
    table, mesh = _FAMILIES[algorithm]
    a = peers_alpha(peers, params)
    b = mesh_beta(peers, params) if mesh else ring_beta(peers, params)
    fn = table[op]
    n = nbytes / rings
    if op in ("allreduce", "reduce_scatter"):
        return fn(p, n, a, b, params.gamma)
    return fn(p, n, a, b)


# --------------------------------------------------------------------------- choice

def _level0_algorithm(op: str, span: GroupSpan, nbytes: float, params: CostParams,
                      options: HcclOptions) -> tuple[str, int, str]:
    """(algorithm, rings, why) inside one server (reference §2.4)."""
    hw, lv = span.hardware, span.levels[0]
    sel = params.selector
    if op == "alltoall":
        return "mesh", 1, "intra-server all-to-all over the mesh (HCCL-ALGO)"
    if hw.family == "910a":
        if op == "allreduce" and span.servers == 1 and lv.size in (4, 8) \
                and nbytes <= sel.hd_910a_max:
            return "rhd", 1, "910A single server <= 1 MB on 4 or 8 ranks: HD (SelectAlgfor910A)"
        if hw.cross_group_link not in lv.links:
            return "mesh", 1, "910A 4P mesh inside one HCCS group (HCOMM-SEL)"
        return "ring", 4 if lv.size == 8 else 1, "910A 8P: four rings (GetRingsOrderByTopoType)"
    if hw.family == "a3":
        small = nbytes <= sel.a3_mesh_small_count * lv.size
        if span.servers == 1 and (options.aiv or small):
            return "mesh", 1, "A3 one server, small count or AIV: mesh (SelectAlgfor91093)"
        return "double-ring", 2, "A3 SIO + HCCS double ring (AllReduceFastDoubleRingFor91093)"
    return "mesh", 1, "910B full mesh (HCOMM-SEL MeshTopoSelector)"


def _upper_algorithm(op: str, span: GroupSpan, level: Level, nbytes: float,
                     params: CostParams, options: HcclOptions) -> tuple[str, str]:
    link = level.links[0]
    plan = params.plan_bandwidth.get(link, params.link(link).bandwidth)
    return choose_inter(op, span.hardware.family, level.hccl_level, level.size,
                        max(span.p_intra, 1), nbytes, params.selector_alpha, plan, options)


def _stage(whole_op: str, op: str, level: Level, operand: float, span: GroupSpan,
           whole: float, params: CostParams, options: HcclOptions) -> tuple[Stage, str]:
    if level.hccl_level == 0:
        algo, rings, why = _level0_algorithm(op, span, operand, params, options)
    else:
        (algo, why), rings = _upper_algorithm(whole_op, span, level, whole, params,
                                              options), 1
    t = algorithm_terms(op, algo, level.size, operand, level.peers, params, rings)
    label = f"{level.name} {_SHORT[op]}"
    return Stage(label, op, algo, slowest(level.links, params), level.size, operand,
                 t.steps, t.alpha, t.beta, t.gamma), why


def _plan(op: str, sizes: list[int], n: float) -> list[tuple[str, int, float]]:
    """(stage op, level index, operand bytes) of the hierarchical form of ``op``."""
    k = len(sizes)

    def prod(xs: list[int]) -> int:
        out = 1
        for x in xs:
            out *= x
        return out
    if op == "allreduce":
        up = [("reduce_scatter", i, n / prod(sizes[:i])) for i in range(k - 1)]
        down = [("allgather", i, n / prod(sizes[:i])) for i in reversed(range(k - 1))]
        return up + [("allreduce", k - 1, n / prod(sizes[:k - 1]))] + down
    if op == "allgather":
        return [("allgather", i, n / prod(sizes[i + 1:])) for i in range(k)]
    if op == "reduce_scatter":
        return [("reduce_scatter", i, n / prod(sizes[i + 1:])) for i in reversed(range(k))]
    if op == "broadcast":
        return [("broadcast", i, n) for i in reversed(range(k))]
    return [("alltoall", i, n) for i in range(k)]


# --------------------------------------------------------------------------- special forms

def _pipeline(op: str, nbytes: float, span: GroupSpan, params: CostParams,
              options: HcclOptions) -> CollectiveCost | None:
    """HCCL's Pipeline on A2 (one server level + one RoCE level), when its rule holds."""
    hw, lv = span.hardware, span.levels
    if hw.family not in ("910b", "generic") or op not in ("allreduce", "allgather",
                                                          "reduce_scatter"):
        return None
    if len(lv) != 2 or lv[0].hccl_level != 0 or lv[1].hccl_level != 1:
        return None
    forced = options.forced(op, 1)
    c, m = lv[0].size, lv[1].size
    sel = params.selector
    if forced is None:
        if op == "allreduce":
            limit = sel.pipeline_allreduce_min if hw.rdma_lite else sel.pipeline_min_no_lite
            if options.aiv or nbytes / (m * c) < limit:
                return None
        elif nbytes / (m * c) < (sel.pipeline_min if hw.rdma_lite else sel.pipeline_min_no_lite):
            return None
    elif forced != "pipeline":
        return None
    fn = f.pipeline_allreduce if op == "allreduce" else f.pipeline_reduce_scatter
    t = fn(c, m, nbytes, peers_alpha(lv[0].peers, params), mesh_beta(lv[0].peers, params),
           peers_alpha(lv[1].peers, params), ring_beta(lv[1].peers, params))
    stage = Stage("pipeline", op, "pipeline", bottleneck(span, params), span.size, nbytes,
                  t.steps, t.alpha, t.beta, t.gamma)
    why = (f"HCCL_ALGO={options.raw_algo}" if forced else
           "HCCL Pipeline: large message, several cards per server (GetDefaultAlgoLevel1V2)")
    return CollectiveCost(op, nbytes, span.size, "pipeline", (stage,), (why,))


def _flat(op: str, algo: str, nbytes: float, span: GroupSpan, params: CostParams,
          why: str) -> CollectiveCost:
    t = algorithm_terms(op, algo, span.size, nbytes, span.peers, params)
    stage = Stage(f"flat {_SHORT[op]}", op, algo, bottleneck(span, params), span.size,
                  nbytes, t.steps, t.alpha, t.beta, t.gamma)
    return CollectiveCost(op, nbytes, span.size, algo, (stage,), (why,))


def _a3_flat(op: str, nbytes: float, span: GroupSpan, params: CostParams,
             options: HcclOptions) -> CollectiveCost | None:
    hw = span.hardware
    if hw.family != "a3" or span.servers <= 1:
        return None
    if op == "alltoall":
        return _flat(op, "fullmesh", nbytes, span, params,
                     "A3 AlltoAll: grouped FullMesh (HCCL-ALGO algo_intro.md)")
    sel = params.selector
    small = (span.size > 8 and nbytes < sel.a3_aiv_cross_server_max) or \
        (span.size <= 8 and nbytes <= sel.a3_mesh_small_count)
    if options.aiv and op in ("allreduce", "allgather", "reduce_scatter") and small \
            and span.super_pods == 1 and not hw.hccs_inter_disabled:
        return _flat(op, "mesh-aiv", nbytes, span, params,
                     "A3 AIV mesh across the super pod (AllReduceMeshAivFor91093Executor)")
    return None


# --------------------------------------------------------------------------- entry points

def _notes(span: GroupSpan, options: HcclOptions) -> tuple[str, ...]:
    notes = []
    if span.asymmetric:
        notes.append(f"uneven members per server {span.per_server}: HCCL uses AHC/NHR-HCF; "
                     "this estimate uses the fullest server and is weaker")
    if options.aiv:
        notes.append("HCCL_OP_EXPANSION_MODE=AIV: AIV executors have a smaller alpha than "
                     "assumed here (set <class>.alpha to model it)")
    return tuple(notes)


def collective(op: str, nbytes: float, span: GroupSpan, params: CostParams,
               options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """Time of collective ``op`` (``allreduce``, ``allgather``, ``reduce_scatter``,
    ``broadcast``, ``alltoall``) of ``nbytes`` bytes on the group ``span``, with the
    algorithm HCCL would choose (module docstring). A group of one rank costs nothing."""
    if op not in _SHORT:
        raise CostInputError(f"unknown collective {op!r}; known: {', '.join(_SHORT)} "
                             f"(send_recv has its own function)")
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, float)) or \
            not math.isfinite(nbytes) or nbytes < 0:
        raise CostInputError(f"message size must be a finite number of bytes >= 0, "
                             f"not {nbytes!r}")
    if span.size <= 1 or nbytes <= 0 or not span.levels:
        return CollectiveCost(op, nbytes, span.size, "none", (), ("nothing to send",))
    special = _a3_flat(op, nbytes, span, params, options) or \
        _pipeline(op, nbytes, span, params, options)
    if special is not None:
        return CollectiveCost(special.op, nbytes, span.size, special.algorithm,
                              special.stages, special.notes + _notes(span, options))
    stages, whys = [], []
    sizes = [lv.size for lv in span.levels]
    for sub_op, i, operand in _plan(op, sizes, nbytes):
        st, why = _stage(op, sub_op, span.levels[i], operand, span, nbytes, params, options)
        stages.append(st)
        whys.append(f"{st.label}: {why}")
    name = " | ".join(f"{s.algorithm} {_SHORT[s.op]}" for s in stages)
    return CollectiveCost(op, nbytes, span.size, name, tuple(stages),
                          tuple(dict.fromkeys(whys)) + _notes(span, options))


def allreduce(nbytes: float, span: GroupSpan, params: CostParams,
              options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """AllReduce of ``nbytes`` bytes per rank (each rank's input) on ``span``."""
    return collective("allreduce", nbytes, span, params, options)


def allgather(nbytes: float, span: GroupSpan, params: CostParams,
              options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """AllGather whose **output** is ``nbytes`` bytes (each rank contributes nbytes/p)."""
    return collective("allgather", nbytes, span, params, options)


def reduce_scatter(nbytes: float, span: GroupSpan, params: CostParams,
                   options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """ReduceScatter whose **input** is ``nbytes`` bytes per rank (each keeps nbytes/p)."""
    return collective("reduce_scatter", nbytes, span, params, options)


def broadcast(nbytes: float, span: GroupSpan, params: CostParams,
              options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """Broadcast of ``nbytes`` bytes from one rank to the group."""
    return collective("broadcast", nbytes, span, params, options)


def scale_beta(cost: CollectiveCost, factor: float) -> CollectiveCost:
    """``cost`` with every stage's β part times ``factor``: the busiest rank of an uneven
    exchange moves ``factor`` × the mean volume (α is unchanged)."""
    if factor < 1:
        raise ValueError(f"imbalance must be >= 1, got {factor}")
    stages = tuple(Stage(s.label, s.op, s.algorithm, s.link, s.ranks, s.nbytes, s.steps,
                         s.alpha, s.beta * factor, s.gamma) for s in cost.stages)
    notes = cost.notes + ((f"imbalance {factor:g}",) if factor != 1 else ())
    return CollectiveCost(cost.op, cost.nbytes, cost.ranks, cost.algorithm, stages, notes)


def alltoall(nbytes: float, span: GroupSpan, params: CostParams,
             options: HcclOptions = DEFAULT_OPTIONS, *,
             imbalance: float = 1.0) -> CollectiveCost:
    """AlltoAll: each rank sends ``nbytes`` bytes in all (nbytes/p to every rank, its own
    share included). AlltoAllV: ``imbalance`` ι ≥ 1 is the busiest rank's volume over the
    mean (pairwise exchange costs Σ_k max_i n_(i,i+k)·β, reference §2.2), applied to the
    β part."""
    return scale_beta(collective("alltoall", nbytes, span, params, options), imbalance)


def send_recv(nbytes: float, span: GroupSpan, params: CostParams,
              options: HcclOptions = DEFAULT_OPTIONS) -> CollectiveCost:
    """Point-to-point transfer of ``nbytes`` bytes between the two ranks of ``span``
    (α + nβ over their link class, THAKUR05 §3)."""
    link = bottleneck(span, params)
    if span.size <= 1 or nbytes <= 0:
        return CollectiveCost("send_recv", nbytes, span.size, "none", (), ("nothing to send",))
    p = params.link(link)
    t = f.send_recv(nbytes, p.alpha, p.beta)
    stage = Stage("p2p", "send_recv", "p2p", link, 2, nbytes, t.steps, t.alpha, t.beta)
    return CollectiveCost("send_recv", nbytes, span.size, "p2p", (stage,))


def moe_exchange(op: str, nbytes: float, span: GroupSpan, params: CostParams, *,
                 imbalance: float = 1.0) -> CollectiveCost:
    """vllm-ascend MC2 dispatch or combine (``op`` ``"dispatch"``/``"combine"``): one
    fused kernel (``npu_moe_distribute_dispatch/combine``) in which every rank sends to
    every EP peer at once. ``nbytes`` = bytes one rank sends in all (every top-k copy,
    its own share included, the byte definition of DeepEP and CM384v2 Table 7).

    Time = α + (nbytes/p)·β_mesh·ι, with β_mesh from :func:`mesh_beta` over the rank's
    peers (its off-server bytes go through its NIC port, intra-server bytes over HCCS),
    and ι ≥ 1 the receive-side imbalance factor (reference §3.4, §5.3)."""
    if imbalance < 1:
        raise ValueError(f"imbalance must be >= 1, got {imbalance}")
    if span.size <= 1 or nbytes <= 0:
        return CollectiveCost(op, nbytes, span.size, "none", (), ("nothing to send",))
    a = peers_alpha(span.peers, params)
    b = mesh_beta(span.peers, params)
    link = mesh_bottleneck(span.peers, params, nbytes / span.size)
    stage = Stage(f"EP {op}", op, "mc2-fullmesh", link, span.size,
                  nbytes, 1, a, nbytes / span.size * b * imbalance)
    return CollectiveCost(op, nbytes, span.size, "mc2-fullmesh", (stage,),
                          (f"fused MC2 {op}, imbalance {imbalance:g}",))


#: Public collectives, (name, function) pairs: a static registry.
COLLECTIVES: tuple[tuple[str, Callable[..., CollectiveCost]], ...] = (
    ("allreduce", allreduce), ("allgather", allgather), ("reduce_scatter", reduce_scatter),
    ("broadcast", broadcast), ("alltoall", alltoall), ("send_recv", send_recv))
