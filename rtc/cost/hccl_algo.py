"""HCCL's algorithm choice between servers, and the ``HCCL_ALGO`` / expansion-mode options
that change it (reference ``cost-model.md`` §2.4).

``HCCL_ALGO`` (``HCCL-ENV`` ``HCCL_ALGO.md``) is either global,
``level0:NA;level1:<algo>[;level2:<algo>]``, or per operator,
``allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:H-D_R``. Level 0 only accepts
``NA``. Algorithms: ``ring``, ``H-D_R`` (recursive halving-doubling, ``rhd`` here),
``NHR``, ``NHR_V1``, ``NB``, ``AHC``, ``pipeline``, ``pairwise`` (AlltoAll only). Setting
it turns off HCCL's automatic choice for that operator.

Without it, HCCL chooses (``HCOMM-SEL``):

* 910B (A2): Pipeline when its size rule holds (decided in :mod:`rtc.cost.collectives`,
  which needs both levels), else the cheapest of Ring / NHR / HD under α = 60 µs and the
  per-NPU RDMA planning bandwidth, ties preferring Ring, then NHR, then HD
  (``GetDefaultAlgoLevel1V2``, ``SelectAlgoTypeFor*``);
* 910A: Ring when the server count is not a power of two, else HD (``HCCL-ENV``);
* A3 (910_93): level 1 by count (``GetDefaultAlgoLevel1V1`` with HD replaced by NHR);
  level 2 (super pods): Ring below 8 pods that are not a power of two, else H-D_R;
* AlltoAll: Pairwise between A2/910A servers, grouped FullMesh on A3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from rtc.cost.errors import HcclAlgoError
from rtc.network.env import ENV_VALUES
from rtc.cost.formulas import is_power_of_two
from rtc.cost.links import env_value

#: HCCL_ALGO spellings -> rtc's algorithm names.
ALGO_NAMES: dict[str, str] = {"ring": "ring", "h-d_r": "rhd", "nhr": "nhr",
                              "nhr_v1": "nhr-v1", "nb": "nb", "ahc": "ahc",
                              "ahc_broke": "ahc", "pipeline": "pipeline",
                              "pairwise": "pairwise"}

#: Operators HCCL_ALGO may name (HCCL_ALGO.md) and the rtc op each one covers.
HCCL_OPS: dict[str, str] = {"allgather": "allgather", "reducescatter": "reduce_scatter",
                            "allreduce": "allreduce", "broadcast": "broadcast",
                            "reduce": "reduce", "scatter": "scatter",
                            "alltoall": "alltoall"}

_FORMAT = ("expected 'level0:NA;level1:<algo>[;level2:<algo>]' or per operator "
           "'allreduce=level0:NA;level1:ring/allgather=...'; algorithms: ring, H-D_R, NHR, "
           "NHR_V1, NB, AHC, pipeline, pairwise")


@dataclass(frozen=True)
class HcclOptions:
    """HCCL settings the cost model honours: ``algo`` maps an rtc op (or ``"*"`` for
    all) to the forced (level 1, level 2) algorithms; ``expansion`` is
    ``HCCL_OP_EXPANSION_MODE`` lower-cased (``"aiv"`` turns on the AIV executors and
    turns Pipeline off for AllReduce); ``raw_algo`` the HCCL_ALGO text as given."""

    algo: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    expansion: str = "ai_cpu"
    raw_algo: str | None = None

    @property
    def aiv(self) -> bool:
        """``HCCL_OP_EXPANSION_MODE=AIV`` (vector-core executors, HCCL-ENV)."""
        return self.expansion == "aiv"

    def forced(self, op: str, level: int) -> str | None:
        """The algorithm HCCL_ALGO forces for ``op`` at ``level`` (1 or 2), or None."""
        got = self.algo.get(op) or self.algo.get("*")
        return None if got is None else got[level - 1]


DEFAULT_OPTIONS = HcclOptions()

#: ``HCCL_OP_EXPANSION_MODE`` values, lower-cased: the list the env value check (RTC458)
#: accepts, :data:`rtc.network.env.ENV_VALUES` (HCCL-ENV).
EXPANSION_MODES = tuple(c.lower() for c in ENV_VALUES["HCCL_OP_EXPANSION_MODE"].choices)


def _levels(spec: str, text: str) -> tuple[str | None, str | None]:
    levels: dict[str, str] = {}
    for item in spec.split(";"):
        name, sep, algo = item.partition(":")
        if not sep or name.strip().lower() not in ("level0", "level1", "level2"):
            raise HcclAlgoError(f"HCCL_ALGO {text!r}: {item!r} is not levelN:<algo>; {_FORMAT}")
        levels[name.strip().lower()] = algo.strip()
    if levels.get("level0", "NA").upper() != "NA":
        raise HcclAlgoError(f"HCCL_ALGO {text!r}: level0 must be NA (HCCL chooses the "
                            f"intra-server algorithm itself); {_FORMAT}")
    out = []
    for lv in ("level1", "level2"):
        raw = levels.get(lv)
        if raw is not None and raw.lower() not in ALGO_NAMES:
            raise HcclAlgoError(f"HCCL_ALGO {text!r}: unknown {lv} algorithm {raw!r}; "
                                f"{_FORMAT}")
        out.append(None if raw is None else ALGO_NAMES[raw.lower()])
    return out[0], out[1]


def parse_hccl_algo(text: str) -> dict[str, tuple[str | None, str | None]]:
    """``HCCL_ALGO`` text -> {rtc op or ``"*"``: (level-1 algo, level-2 algo)}.

    Raises :class:`HcclAlgoError` (with the accepted format) for an unknown operator or
    algorithm, a level that is not ``levelN:algo``, or level 0 other than ``NA``.

    >>> parse_hccl_algo("level0:NA;level1:H-D_R")
    {'*': ('rhd', None)}
    >>> parse_hccl_algo("allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:NHR")
    {'allreduce': ('ring', None), 'allgather': ('nhr', None)}
    """
    out: dict[str, tuple[str | None, str | None]] = {}
    body = "".join(str(text).split()).strip('"')
    if not body:
        return out
    for part in body.split("/"):
        op, sep, spec = part.rpartition("=")
        key = "*"
        if sep:
            if op.lower() not in HCCL_OPS:
                raise HcclAlgoError(f"HCCL_ALGO {text!r}: unknown operator {op!r} "
                                    f"(operators: {', '.join(HCCL_OPS)}); {_FORMAT}")
            key = HCCL_OPS[op.lower()]
        out[key] = _levels(spec, str(text))
    return out


def hccl_options(env: Iterable | Mapping | None = None, *, algo: str | None = None,
                 expansion: str | None = None) -> HcclOptions:
    """The :class:`HcclOptions` of a job's ``env`` (``HCCL_ALGO``,
    ``HCCL_OP_EXPANSION_MODE``), with explicit ``algo`` / ``expansion`` taking
    precedence."""
    raw = algo if algo is not None else env_value(env, "HCCL_ALGO")
    mode = expansion if expansion is not None else env_value(env, "HCCL_OP_EXPANSION_MODE")
    mode = (mode or "ai_cpu").strip().lower()
    if mode not in EXPANSION_MODES:
        raise HcclAlgoError(f"HCCL_OP_EXPANSION_MODE {mode.upper()!r}; accepted: "
                            + ", ".join(m.upper() for m in EXPANSION_MODES))
    return HcclOptions(algo=parse_hccl_algo(raw) if raw else {}, expansion=mode,
                       raw_algo=raw)


# --------------------------------------------------------------------------- HCCL's rule

def _steps(algo: str, m: int) -> float:
    """α steps of one RS or AG half over m servers."""
    if algo == "ring":
        return m - 1
    return math.ceil(math.log2(m)) if m > 1 else 0


def cost_rule(op: str, m: int, c: int, nbytes: float, alpha: float,
              bandwidth: float) -> str:
    """HCCL's inter-server choice among ``ring``, ``nhr`` and ``rhd`` (910B;
    ``SelectAlgoTypeForAllReduce/ReduceScatter/AllGather/Broadcast``, HCOMM-SEL): each
    cost in seconds with α = ``alpha`` (60 µs), B = ``bandwidth`` (the NIC's planning
    bytes/s), m servers, c cards per server, ``nbytes`` the operand (AllReduce and
    Broadcast: the input, divided by c in the rule; RS/AG: the full vector). Ties prefer
    Ring, then NHR, then HD; Broadcast compares Ring and HD only."""
    halves = 2 if op in ("allreduce", "broadcast") else 1
    volume = nbytes / c if halves == 2 else nbytes
    bw = (m - 1) / m * volume / bandwidth
    ring = halves * ((m - 1) * alpha + bw)
    nhr = halves * (_steps("nhr", m) * alpha + bw)
    if is_power_of_two(m):
        hd = halves * (math.log2(m) * alpha + bw)
    elif op == "broadcast":
        hd = (1 + 2 * math.floor(math.log2(m))) * alpha + (1 + 2 * (m - 1) / m) * volume / bandwidth
    else:
        hd = halves * (_steps("rhd", m) * alpha + (2 * m - 1) / m * volume / bandwidth)
    best = "nhr" if nhr < ring and op != "broadcast" else "ring"
    return "rhd" if hd < (nhr if best == "nhr" else ring) else best


def count_rule(family: str, m: int, level: int) -> str:
    """HCCL's count-based default (``GetDefaultAlgoLevel1V1``; HCCL-ENV for 910A and
    level 2): level 1 ≥ 8 servers or a power of two -> HD (NHR on A3), else Ring;
    910A: Ring unless a power of two; level 2: Ring below 8 pods not a power of two,
    else H-D_R."""
    if level == 2:
        return "ring" if m < 8 and not is_power_of_two(m) else "rhd"
    if family == "910a":
        return "rhd" if is_power_of_two(m) else "ring"
    hd = "nhr" if family == "a3" else "rhd"
    return hd if m >= 8 or is_power_of_two(m) else "ring"


def choose_inter(op: str, family: str, level: int, m: int, c: int, nbytes: float,
                 alpha: float, plan_bandwidth: float,
                 options: HcclOptions = DEFAULT_OPTIONS) -> tuple[str, str]:
    """(algorithm, why) for ``op`` between the ``m`` members of an upper ``level``
    (1 = servers, 2 = super pods) with ``c`` cards per server, as HCCL picks it.

    ``HCCL_ALGO`` wins when it names the level; Pipeline is decided by the caller."""
    forced = options.forced(op, level)
    if forced is not None and forced != "pipeline":
        return forced, f"HCCL_ALGO={options.raw_algo}"
    if op == "alltoall":
        return ("fullmesh", "A3 grouped FullMesh (HCCL-ALGO algo_intro.md)") \
            if family == "a3" else ("pairwise", "AlltoAll between servers: Pairwise (HCCL-ALGO)")
    if level == 1 and family in ("910b", "generic"):
        algo = cost_rule(op, m, c, nbytes, alpha, plan_bandwidth)
        return algo, "HCCL cost rule, alpha 60 us, RDMA planning bandwidth (HCOMM-SEL)"
    return count_rule(family, m, level), "HCCL count-based default (HCOMM-SEL, HCCL-ENV)"
