"""Fit a link class's α and bandwidth to measured collective times (``rtc calibrate``;
reference ``cost-model.md`` §5.6: least squares of time against bytes).

A benchmark of ``op`` on ``p`` ranks whose traffic crosses one link class is modelled as
``t(n) = steps · α + n · factor / B``: ``steps`` start-ups and ``factor`` bytes per link
per input byte of the algorithm HCCL runs there (reference §2.2): ring / NHR across a
network — AllReduce ``2(p-1)`` steps and ``2(p-1)/p``, AllGather / ReduceScatter /
AlltoAll ``p-1`` and ``(p-1)/p``, Broadcast ``ceil(log2 p)`` and 1; full mesh inside a
910B / A3 server — AllReduce 2 steps, the others 1, same factors. The straight line
``t = a + b·n`` is fitted by least squares on relative errors; α = a / steps,
B = factor / b.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rtc.cost.errors import CostInputError

_FACTORS = {"allreduce": lambda p: 2 * (p - 1) / p, "allgather": lambda p: (p - 1) / p,
            "reduce_scatter": lambda p: (p - 1) / p, "alltoall": lambda p: (p - 1) / p,
            "broadcast": lambda p: 1.0}


@dataclass(frozen=True)
class LinkFit:
    """A fitted link: ``alpha`` seconds, ``bandwidth`` bytes/s, ``r2`` of the line fit,
    ``samples`` used, ``algorithm`` assumed (``ring`` / ``mesh``)."""

    link: str
    alpha: float
    bandwidth: float
    r2: float
    samples: int
    algorithm: str


def steps_and_factor(op: str, p: int, algorithm: str) -> tuple[float, float]:
    """(start-up steps, bytes per link per input byte) of ``op`` on ``p`` ranks."""
    if op not in _FACTORS:
        raise CostInputError(f"unknown collective {op!r}; accepted: {', '.join(_FACTORS)}")
    if p < 2:
        raise CostInputError(f"a collective needs at least 2 ranks, got {p}")
    if algorithm == "mesh":
        steps = 2.0 if op == "allreduce" else 1.0
    elif op == "allreduce":
        steps = 2.0 * (p - 1)
    elif op == "broadcast":
        steps = float(math.ceil(math.log2(p)))
    else:
        steps = float(p - 1)
    return steps, _FACTORS[op](p)


def fit_line(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares ``y = a + b·x`` over ``points`` (x, y) with relative errors
    (weights 1/y²: sizes span six decades, and a 1% wobble of a 1 GB time must not
    swamp the 8 KB times that fix α): (a, b, weighted R²). CostInputError with fewer
    than 2 distinct sizes or a time that is not positive."""
    if len(points) < 2 or len({x for x, _ in points}) < 2:
        raise CostInputError("the fit needs at least two different message sizes")
    bad = next(((x, y) for x, y in points if not (0 < y < 1e6 and 0 < x < 1e15)), None)
    if bad is not None:
        raise CostInputError(f"a sample of {bad[0]:g} bytes in {bad[1]:g} s is not a "
                             "measurement (sizes 1 B .. 1 PB, times above 0 and below "
                             "10^6 s)")
    w = [1.0 / (y * y) for _, y in points]
    sw = sum(w)
    mx = sum(wi * x for wi, (x, _) in zip(w, points)) / sw
    my = sum(wi * y for wi, (_, y) in zip(w, points)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, points))
    b = sum(wi * (x - mx) * (y - my) for wi, (x, y) in zip(w, points)) / sxx
    a = my - b * mx
    ss = sum(wi * (y - my) ** 2 for wi, (_, y) in zip(w, points))
    res = sum(wi * (y - a - b * x) ** 2 for wi, (x, y) in zip(w, points))
    return a, b, 1.0 - res / ss if ss else 1.0


def fit_link(link: str, op: str, ranks: int, points: list[tuple[float, float]],
             algorithm: str = "ring") -> LinkFit:
    """Fit ``link``'s α (s) and bandwidth (bytes/s) to ``points`` (bytes per rank,
    seconds) of ``op`` on ``ranks`` ranks. CostInputError when the fit gives a negative
    intercept or a non-positive slope (the sizes measured do not show both terms:
    measure from 8 KB to 1 GB)."""
    steps, factor = steps_and_factor(op, ranks, algorithm)
    a, b, r2 = fit_line(points)
    if a < steps * 1e-9:
        a = 0.0    # an intercept below 1 ns per step is zero within the fit
    if b <= 0:
        raise CostInputError(f"{link}: time does not grow with size (slope {b:.3g} s/B); "
                             "measure a wider size range (e.g. -b 8K -e 1G)")
    return LinkFit(link, max(a, 0.0) / steps, factor / b, r2, len(points), algorithm)
