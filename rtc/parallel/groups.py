"""Pure rank arithmetic for parallel communication groups (no I/O, no numpy/torch).

vLLM / vllm-ascend layout
=========================

vLLM's ``initialize_model_parallel`` lays global ranks out row-major over the axes
``[DP, PP, PCP, TP]`` with **TP fastest**::

    rank = ((dp * PP + pp) * PCP + pcp) * TP + tp

Each kind of group holds the ranks that differ only in that axis:

* ``tp``  - consecutive TP ranks;
* ``pcp`` - ranks ``TP`` apart;
* ``pp``  - ranks ``PCP*TP`` apart;
* ``dp``  - ranks ``PP*PCP*TP`` apart (MoE only);
* ``ep``  - all ``DP*PCP*TP`` ranks of one PP stage, ascending (MoE only). This is
  also vllm-ascend's MC2 group (since v0.18, PR #7291).

vLLM builds each group by moving that axis last (``transpose``), then
``reshape(-1, size)``; the *creation order* of the groups is therefore the row-major
order of the remaining axes *after* the swap. This module keeps that order exactly:

=====  ==============================================================
group  groups are created iterating (slowest ... fastest)
=====  ==============================================================
tp     DP, PP, PCP
pcp    DP, PP, TP
pp     DP, TP, PCP   (the transpose swaps PCP and TP)
dp     TP, PP, PCP   (the transpose swaps DP and TP)
ep     PP
=====  ==============================================================

Worked example, MoE with DP2 * PP2 * TP2 (world 8, ``rank = dp*4 + pp*2 + tp``):

>>> gs = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, expert_parallel=True))
>>> gs.groups["tp"]
[[0, 1], [2, 3], [4, 5], [6, 7]]
>>> gs.groups["pp"]
[[0, 2], [1, 3], [4, 6], [5, 7]]
>>> gs.groups["dp"]
[[0, 4], [2, 6], [1, 5], [3, 7]]
>>> gs.groups["ep"]
[[0, 1, 4, 5], [2, 3, 6, 7]]
>>> gs.group_index("dp", 5), gs.groups["dp"][gs.group_index("dp", 5)]
(2, [1, 5])

Dense models: vLLM treats every DP replica as an independent ``DP=1`` engine with its
own torch world of ``TP*PP*PCP`` ranks, so there is no DP and no EP group. This module
still reports the per-replica groups in **global** ranks
(``global = dp_index * (TP*PP*PCP) + local``) so callers can place them.

Megatron-LM layout
==================

Megatron's order strings (e.g. ``"tp-cp-ep-dp-pp"``) list the axes **fastest first**:
the stride of token *i* is the product of the sizes of the tokens before it. vLLM's
layout is Megatron's ``"tp-cp-pp-dp"`` (PCP playing CP). See :func:`megatron_groups`.

The module is pure arithmetic built from ``range`` strides; all groups of a
65,536-rank world take a few tens of milliseconds in CPython.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, NamedTuple, Tuple

__all__ = [
    "VLLM_DIMS",
    "MEGATRON_AXES",
    "MEGATRON_GROUP_KEYS",
    "ParallelSizes",
    "Coords",
    "GroupSet",
    "rank_of",
    "coords_of",
    "global_rank",
    "tp_groups",
    "pcp_groups",
    "pp_groups",
    "dp_groups",
    "ep_groups",
    "vllm_groups",
    "megatron_groups",
    "megatron_masked_groups",
]

#: Group kinds of :func:`vllm_groups`, in the order vLLM creates them.
VLLM_DIMS: Tuple[str, ...] = ("tp", "pcp", "pp", "dp", "ep")

#: Axis tokens understood in a Megatron order string.
MEGATRON_AXES: Tuple[str, ...] = ("tp", "cp", "ep", "dp", "pp")

#: Keys of the dict returned by :func:`megatron_groups`, in that order.
MEGATRON_GROUP_KEYS: Tuple[str, ...] = ("tp", "cp", "dp", "pp", "ep")

Groups = List[List[int]]


def _check_size(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


# --------------------------------------------------------------------------- sizes


@dataclass(frozen=True)
class ParallelSizes:
    """Sizes of one vLLM job.

    ``rank = ((dp*PP + pp)*PCP + pcp)*TP + tp`` over ``dp < DP``, ``pp < PP``,
    ``pcp < PCP``, ``tp < TP``.

    * ``expert_parallel``: ``--enable-expert-parallel``. Only decides whether
      :func:`vllm_groups` reports an ``"ep"`` entry (see there).
    * ``moe``: ``True`` if the model is MoE, in which case all DP replicas share one
      torch world. ``False`` (dense): each DP replica is an independent world of
      :attr:`replica_size` ranks.

    Every size must be an ``int >= 1``; otherwise ``ValueError`` (``TypeError`` for a
    non-int) naming the field.
    """

    dp: int = 1
    pp: int = 1
    pcp: int = 1
    tp: int = 1
    expert_parallel: bool = False
    moe: bool = True

    def __post_init__(self) -> None:
        for name in ("dp", "pp", "pcp", "tp"):
            _check_size(name, getattr(self, name))
        for name in ("expert_parallel", "moe"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def replica_size(self) -> int:
        """Ranks in one DP replica: ``TP * PP * PCP`` (vLLM's ``ParallelConfig.world_size``)."""
        return self.tp * self.pp * self.pcp

    @property
    def world_size(self) -> int:
        """All ranks of the job: ``DP * TP * PP * PCP`` (``world_size_across_dp``)."""
        return self.dp * self.replica_size


class Coords(NamedTuple):
    """Coordinates of one rank in the ``[DP, PP, PCP, TP]`` layout."""

    dp: int
    pp: int
    pcp: int
    tp: int


def rank_of(sizes: ParallelSizes, coords: Coords) -> int:
    """Global rank of ``coords``: ``((dp*PP + pp)*PCP + pcp)*TP + tp``.

    >>> rank_of(ParallelSizes(dp=2, pp=2, tp=2), Coords(dp=1, pp=0, pcp=0, tp=1))
    5

    Raises ``ValueError`` if a coordinate lies outside ``[0, size)``.
    """
    for name in ("dp", "pp", "pcp", "tp"):
        value = getattr(coords, name)
        limit = getattr(sizes, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"coordinate {name} must be an int, got {value!r}")
        if not 0 <= value < limit:
            raise ValueError(f"coordinate {name}={value} is outside [0, {limit})")
    return ((coords.dp * sizes.pp + coords.pp) * sizes.pcp + coords.pcp) * sizes.tp + coords.tp


def _check_rank(sizes: ParallelSizes, rank: int) -> None:
    if isinstance(rank, bool) or not isinstance(rank, int):
        raise TypeError(f"rank must be an int, got {rank!r}")
    if not 0 <= rank < sizes.world_size:
        raise ValueError(f"rank {rank} is outside the world [0, {sizes.world_size})")


def _split(sizes: ParallelSizes, rank: int) -> Tuple[int, int, int, int]:
    rest, tp = divmod(rank, sizes.tp)
    rest, pcp = divmod(rest, sizes.pcp)
    dp, pp = divmod(rest, sizes.pp)
    return dp, pp, pcp, tp


def coords_of(sizes: ParallelSizes, rank: int) -> Coords:
    """Inverse of :func:`rank_of`. ``ValueError`` if ``rank`` is outside ``[0, world)``.

    >>> coords_of(ParallelSizes(dp=2, pp=2, tp=2), 5)
    Coords(dp=1, pp=0, pcp=0, tp=1)
    """
    _check_rank(sizes, rank)
    dp, pp, pcp, tp = _split(sizes, rank)
    return Coords(dp=dp, pp=pp, pcp=pcp, tp=tp)


def global_rank(sizes: ParallelSizes, dp_index: int, local_rank: int) -> int:
    """Global rank of ``local_rank`` (rank inside one replica) of DP replica ``dp_index``:
    ``dp_index * (TP*PP*PCP) + local_rank``. Same as vllm-ascend's ``get_global_rank``;
    for dense models this maps an independent replica's ranks into one numbering.

    >>> global_rank(ParallelSizes(dp=2, pp=2, tp=2), 1, 1)
    5
    """
    for name, value, limit in (
        ("dp_index", dp_index, sizes.dp),
        ("local_rank", local_rank, sizes.replica_size),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if not 0 <= value < limit:
            raise ValueError(f"{name}={value} is outside [0, {limit})")
    return dp_index * sizes.replica_size + local_rank


# --------------------------------------------------------------------------- groups
#
# Every function below returns the groups in vLLM's creation order and every group in
# ascending rank order. They compute the shared-world (MoE) layout regardless of
# ``sizes.moe`` / ``sizes.expert_parallel``; :func:`vllm_groups` decides which apply.
# Notation: W = world, R = TP*PP*PCP (one replica), B = PCP*TP (one PP stage of a
# replica).


def tp_groups(sizes: ParallelSizes) -> Groups:
    """TP groups: ``TP`` consecutive ranks; created iterating DP, PP, PCP (PCP fastest).

    >>> tp_groups(ParallelSizes(pp=4, tp=2))
    [[0, 1], [2, 3], [4, 5], [6, 7]]
    """
    tp = sizes.tp
    return [list(range(start, start + tp)) for start in range(0, sizes.world_size, tp)]


def pcp_groups(sizes: ParallelSizes) -> Groups:
    """PCP groups: ranks ``TP`` apart; created iterating DP, PP, TP (TP fastest).

    >>> pcp_groups(ParallelSizes(pcp=2, tp=2))
    [[0, 2], [1, 3]]
    """
    tp = sizes.tp
    if sizes.pcp == 1:  # singletons, already in creation order
        return [[r] for r in range(sizes.world_size)]
    block = sizes.pcp * tp
    return [
        list(range(start + t, start + block, tp))
        for start in range(0, sizes.world_size, block)
        for t in range(tp)
    ]


def pp_groups(sizes: ParallelSizes) -> Groups:
    """PP groups: ranks ``PCP*TP`` apart; created iterating DP, TP, PCP (PCP fastest).

    >>> pp_groups(ParallelSizes(pp=4, tp=2))
    [[0, 2, 4, 6], [1, 3, 5, 7]]
    """
    tp, pcp = sizes.tp, sizes.pcp
    replica = sizes.replica_size
    stage = pcp * tp
    if sizes.pp == 1:  # singletons; rank order only when PCP == 1 or TP == 1
        if pcp == 1 or tp == 1:
            return [[r] for r in range(sizes.world_size)]
        return [
            [start + c * tp + t]
            for start in range(0, sizes.world_size, replica)
            for t in range(tp)
            for c in range(pcp)
        ]
    return [
        list(range(start + c * tp + t, start + replica, stage))
        for start in range(0, sizes.world_size, replica)
        for t in range(tp)
        for c in range(pcp)
    ]


def dp_groups(sizes: ParallelSizes) -> Groups:
    """DP groups: ranks ``PP*PCP*TP`` apart; created iterating TP, PP, PCP (PCP fastest).

    Only meaningful for MoE models (dense replicas are independent worlds).

    >>> dp_groups(ParallelSizes(dp=2, pp=2, tp=2))
    [[0, 4], [2, 6], [1, 5], [3, 7]]
    """
    tp, pcp, pp = sizes.tp, sizes.pcp, sizes.pp
    world = sizes.world_size
    replica = sizes.replica_size
    stage = pcp * tp
    return [
        list(range(p * stage + c * tp + t, world, replica))
        for t in range(tp)
        for p in range(pp)
        for c in range(pcp)
    ]


def ep_groups(sizes: ParallelSizes) -> Groups:
    """EP (= vllm-ascend MC2) groups: all ``DP*PCP*TP`` ranks of one PP stage, ascending;
    one group per PP stage.

    vLLM builds this process group for every MoE model; without
    ``--enable-expert-parallel`` the same ranks form the MoE layers' (DP x TP sized)
    tensor-parallel group instead of an expert-parallel one.

    >>> ep_groups(ParallelSizes(dp=2, pp=2, tp=2))
    [[0, 1, 4, 5], [2, 3, 6, 7]]
    """
    replica = sizes.replica_size
    stage = sizes.pcp * sizes.tp
    world = sizes.world_size
    result: Groups = []
    for p in range(sizes.pp):
        members: List[int] = []
        for start in range(p * stage, world, replica):
            members.extend(range(start, start + stage))
        result.append(members)
    return result


class GroupSet(NamedTuple):
    """All vLLM communication groups of one job (see :func:`vllm_groups`).

    * ``worlds``: torch worlds. MoE: one world of all ranks. Dense: one world per DP
      replica (``[d*R, (d+1)*R)`` with ``R = TP*PP*PCP``).
    * ``independent_replicas``: ``True`` for a dense model with ``DP > 1``.
    * ``groups``: ``{"tp", "pcp", "pp"[, "dp"[, "ep"]]}`` in that key order, each a list
      of groups of **global** ranks in vLLM's creation order.

    Group lists are shared, not copied: treat them as read-only.
    """

    sizes: ParallelSizes
    worlds: Groups
    independent_replicas: bool
    groups: Dict[str, Groups]

    def _dim(self, dim: str) -> None:
        if dim not in self.groups:
            if dim in VLLM_DIMS:
                raise ValueError(
                    f"this job has no {dim!r} groups (present: {', '.join(self.groups)})"
                )
            raise ValueError(f"unknown group kind {dim!r}; expected one of {VLLM_DIMS}")

    def group_index(self, dim: str, rank: int) -> int:
        """Index in ``groups[dim]`` of the group containing ``rank``, by arithmetic.

        With ``rank = ((dp*PP + pp)*PCP + pcp)*TP + tp``:
        tp ``(dp*PP + pp)*PCP + pcp``; pcp ``(dp*PP + pp)*TP + tp``;
        pp ``(dp*TP + tp)*PCP + pcp``; dp ``(tp*PP + pp)*PCP + pcp``; ep ``pp``.
        """
        self._dim(dim)
        s = self.sizes
        _check_rank(s, rank)
        dp, pp, pcp, tp = _split(s, rank)
        if dim == "tp":
            return rank // s.tp
        if dim == "pcp":
            return (dp * s.pp + pp) * s.tp + tp
        if dim == "pp":
            return (dp * s.tp + tp) * s.pcp + pcp
        if dim == "dp":
            return (tp * s.pp + pp) * s.pcp + pcp
        return pp  # ep

    def rank_in_group(self, dim: str, rank: int) -> int:
        """Position of ``rank`` inside its ``dim`` group (vLLM's ``rank_in_group``):
        the coordinate along that axis; for ep ``(dp*PCP + pcp)*TP + tp``."""
        self._dim(dim)
        s = self.sizes
        _check_rank(s, rank)
        dp, pp, pcp, tp = _split(s, rank)
        if dim == "tp":
            return tp
        if dim == "pcp":
            return pcp
        if dim == "pp":
            return pp
        if dim == "dp":
            return dp
        return (dp * s.pcp + pcp) * s.tp + tp  # ep

    def group_of(self, dim: str, rank: int) -> List[int]:
        """The ``dim`` group that contains ``rank``."""
        return self.groups[dim][self.group_index(dim, rank)]


def vllm_groups(sizes: ParallelSizes) -> GroupSet:
    """Every communication group of a vLLM job, in vLLM's creation order.

    Layout: ``rank = ((dp*PP + pp)*PCP + pcp)*TP + tp`` (TP fastest).

    * ``tp``, ``pcp``, ``pp``: always present.
    * ``dp``: MoE only (``sizes.moe``). A dense model's DP replicas are independent
      ``DP=1`` engines (``independent_replicas`` is ``True`` when ``DP > 1``); their
      tp/pcp/pp groups are still given in **global** ranks,
      ``global = dp_index * (TP*PP*PCP) + local``, replica after replica.
    * ``ep``: MoE with ``sizes.expert_parallel`` only. vLLM (and vllm-ascend's MC2)
      create this process group for every MoE model; without expert parallel the same
      ``DP*PCP*TP`` ranks of a PP stage form the MoE layers' tensor-parallel group, so
      it is left out here. Call :func:`ep_groups` for the rank lists regardless.
      Ignored for dense models.

    >>> gs = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, expert_parallel=True))
    >>> list(gs.groups)
    ['tp', 'pcp', 'pp', 'dp', 'ep']
    >>> gs.groups["tp"], gs.groups["pp"]
    ([[0, 1], [2, 3], [4, 5], [6, 7]], [[0, 2], [1, 3], [4, 6], [5, 7]])
    >>> gs.groups["dp"], gs.groups["ep"]
    ([[0, 4], [2, 6], [1, 5], [3, 7]], [[0, 1, 4, 5], [2, 3, 6, 7]])
    >>> dense = vllm_groups(ParallelSizes(dp=2, pp=2, tp=2, moe=False))
    >>> list(dense.groups), dense.independent_replicas, dense.worlds
    (['tp', 'pcp', 'pp'], True, [[0, 1, 2, 3], [4, 5, 6, 7]])
    """
    groups: Dict[str, Groups] = {
        "tp": tp_groups(sizes),
        "pcp": pcp_groups(sizes),
        "pp": pp_groups(sizes),
    }
    if sizes.moe:
        groups["dp"] = dp_groups(sizes)
        if sizes.expert_parallel:
            groups["ep"] = ep_groups(sizes)
        worlds = [list(range(sizes.world_size))]
        independent = False
    else:
        replica = sizes.replica_size
        worlds = [list(range(start, start + replica)) for start in range(0, sizes.world_size, replica)]
        independent = sizes.dp > 1
    return GroupSet(sizes=sizes, worlds=worlds, independent_replicas=independent, groups=groups)


# --------------------------------------------------------------------------- Megatron


def megatron_axes(order: str, sizes: Mapping[str, int]) -> List[Tuple[str, int, int]]:
    """Parse ``order`` into ``[(token, size, stride), ...]`` fastest first, appending
    missing size-1 axes as the slowest."""
    if not isinstance(order, str):
        raise TypeError(f"order must be a str, got {order!r}")
    for name in MEGATRON_AXES:
        _check_size(name, sizes[name])
    if sizes["ep"] > 1 and sizes["cp"] > 1:
        raise ValueError(
            "ep and cp cannot both be > 1 in one Megatron rank generator (CP lives only "
            "in the dense generator and EP only in the expert generator)"
        )
    tokens = order.strip().lower().split("-")
    if any(not t for t in tokens):
        raise ValueError(f"malformed order string {order!r}: empty token")
    for t in tokens:
        if t not in MEGATRON_AXES:
            raise ValueError(
                f"unknown token {t!r} in order {order!r}; expected tokens from {MEGATRON_AXES}"
            )
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"order {order!r} repeats a token")
    for name in MEGATRON_AXES:
        if name not in tokens:
            if sizes[name] != 1:
                raise ValueError(
                    f"the size of ({name}) is ({sizes[name]}), but you haven't specified "
                    f"the order ({order!r})"
                )
            tokens.append(name)
    axes = []
    stride = 1
    for t in tokens:
        axes.append((t, sizes[t], stride))
        stride *= sizes[t]
    return axes


def _offsets(axes: List[Tuple[str, int, int]]) -> List[int]:
    """All ``sum(k_i * stride_i)`` with the first axis varying fastest."""
    out = [0]
    for _, size, stride in axes:
        if size > 1:
            out = [base + k * stride for k in range(size) for base in out]
    return out


def megatron_masked_groups(
    order: str, mask: str, *, tp: int = 1, cp: int = 1, ep: int = 1, dp: int = 1, pp: int = 1
) -> Groups:
    """Megatron's groups for a dash-joined ``mask`` such as ``"tp-pp"`` or ``"dp-cp"``.

    A group is every rank sharing the coordinates of the axes *not* in the mask.
    Groups are enumerated with the first unmasked axis of ``order`` varying fastest;
    members are ascending (first masked axis fastest). World = ``tp*cp*ep*dp*pp``.

    >>> megatron_masked_groups("tp-cp-ep-dp-pp", "tp-pp", tp=2, dp=4, pp=2)
    [[0, 1, 8, 9], [2, 3, 10, 11], [4, 5, 12, 13], [6, 7, 14, 15]]
    """
    axes = megatron_axes(order, {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp})
    if not isinstance(mask, str):
        raise TypeError(f"mask must be a str, got {mask!r}")
    wanted = mask.strip().lower().split("-")
    for t in wanted:
        if t not in MEGATRON_AXES:
            raise ValueError(f"unknown token {t!r} in mask {mask!r}; expected tokens from {MEGATRON_AXES}")
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"mask {mask!r} repeats a token")
    masked = [a for a in axes if a[0] in wanted]
    unmasked = [a for a in axes if a[0] not in wanted]
    members = _offsets(masked)
    return [[base + m for m in members] for base in _offsets(unmasked)]


def megatron_groups(
    order: str, *, tp: int = 1, cp: int = 1, ep: int = 1, dp: int = 1, pp: int = 1
) -> Dict[str, Groups]:
    """Megatron-LM ``RankGenerator`` groups for the single-axis masks, keys
    ``"tp", "cp", "dp", "pp", "ep"``.

    ``order`` lists axes **fastest first** (``tp, cp, ep, dp, pp``; case-insensitive):
    for order ``t0-t1-...`` the rank is ``c0 + c1*s0 + c2*s0*s1 + ...``, e.g. for
    ``"tp-dp-pp"``: ``rank = tp_rank + dp_rank*TP + pp_rank*TP*DP``. World =
    ``tp*cp*ep*dp*pp``. Axes missing from ``order`` are appended as the slowest if
    their size is 1; a missing axis of size > 1 raises ``ValueError`` ("the size of
    (x) is (n), but you haven't specified the order"), as does an unknown or repeated
    token or ``ep > 1`` together with ``cp > 1`` (Megatron keeps CP in the dense
    generator and EP in the expert generator).

    vLLM's ``[DP, PP, PCP, TP]`` layout is order ``"tp-cp-pp-dp"`` with ``cp = PCP``
    (same membership; the creation order of groups can differ).

    >>> g = megatron_groups("tp-cp-ep-dp-pp", tp=2, dp=4, pp=2)
    >>> g["dp"]
    [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
    >>> g["pp"][:3]
    [[0, 8], [1, 9], [2, 10]]
    """
    sizes = {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp}
    megatron_axes(order, sizes)  # validate once, with the right error for bad input
    return {
        key: megatron_masked_groups(order, key, **sizes) for key in MEGATRON_GROUP_KEYS
    }
