"""Quantities with units, as parameters are written: durations (``13us``), bandwidths
(``28GB/s``, ``200Gb/s``) and byte sizes (``1MiB``).

Internally the cost model uses SI base units only: **seconds**, **bytes/s** and
**bytes**. ``GB`` is 10^9 bytes and ``GiB`` 2^30 bytes; a lower-case ``b`` means bits
(``Gb/s`` = 1.25 * 10^8 bytes/s), as in the reference's link table (reference
``cost-model.md`` "Units"). Canonical forms, used when a value is echoed back: durations
in ``us``, bandwidths in ``GB/s``, sizes in bytes (``B``).
"""

from __future__ import annotations

import math
import re

from rtc.cost.errors import ParamError

#: Duration units -> seconds, as (multiplier, divisor) so that ``20us`` is exactly 2e-05.
DURATION_UNITS: dict[str, tuple[int, int]] = {
    "s": (1, 1), "ms": (1, 10 ** 3), "us": (1, 10 ** 6), "µs": (1, 10 ** 6),
    "μs": (1, 10 ** 6), "ns": (1, 10 ** 9)}

#: Bandwidth units -> bytes/s (``b`` = bit, ``B`` = byte).
BANDWIDTH_UNITS: dict[str, tuple[int, int]] = {
    "B/s": (1, 1), "KB/s": (10 ** 3, 1), "MB/s": (10 ** 6, 1), "GB/s": (10 ** 9, 1),
    "TB/s": (10 ** 12, 1), "KiB/s": (2 ** 10, 1), "MiB/s": (2 ** 20, 1),
    "GiB/s": (2 ** 30, 1), "Kb/s": (10 ** 3, 8), "Mb/s": (10 ** 6, 8),
    "Gb/s": (10 ** 9, 8), "Tb/s": (10 ** 12, 8)}

#: Size units -> bytes.
SIZE_UNITS: dict[str, tuple[int, int]] = {
    "B": (1, 1), "KB": (10 ** 3, 1), "MB": (10 ** 6, 1), "GB": (10 ** 9, 1),
    "KiB": (2 ** 10, 1), "MiB": (2 ** 20, 1), "GiB": (2 ** 30, 1)}

_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(\S+)\s*$")

_KINDS = {
    "duration": (DURATION_UNITS, "a duration with unit s, ms, us or ns (e.g. 20us)"),
    "bandwidth": (BANDWIDTH_UNITS,
                  "a bandwidth with unit GB/s, MB/s or Gb/s (also B/s, KB/s, TB/s, GiB/s, "
                  "MiB/s, Mb/s, Tb/s; e.g. 196GB/s or 200Gb/s)"),
    "size": (SIZE_UNITS, "a size with unit B, KB, MB, GB, KiB, MiB or GiB (e.g. 1MiB)"),
}


def accepted(kind: str) -> str:
    """What a value of ``kind`` (``duration``, ``bandwidth``, ``size``) must look like."""
    return _KINDS[kind][1]


def parse_quantity(text: str, kind: str, *, what: str = "value",
                   allow_inf: bool = False) -> float:
    """``text`` (a number and a unit) in base units: seconds for ``kind="duration"``,
    bytes/s for ``"bandwidth"``, bytes for ``"size"``.

    Raises :class:`ParamError` naming ``what`` (e.g. ``parameter 'roce.alpha'``), the
    value and what is accepted, for a unit that does not parse or a negative value.
    ``inf`` is accepted only with ``allow_inf`` (a bandwidth that costs nothing).

    >>> parse_quantity("20us", "duration")
    2e-05
    >>> parse_quantity("200Gb/s", "bandwidth")
    25000000000.0
    """
    units, wanted = _KINDS[kind]
    raw = str(text).strip()
    if allow_inf and raw.lower() in ("inf", "infinity"):
        return math.inf
    m = _QUANTITY.match(raw)
    if not m or m.group(2) not in units:
        raise ParamError(f"{what}: {raw!r} does not parse; expected {wanted}")
    mult, div = units[m.group(2)]
    value = float(m.group(1)) * mult / div
    if math.isinf(value):
        raise ParamError(f"{what}: {raw!r} is too large; expected {wanted}")
    if value < 0 or math.isnan(value):
        raise ParamError(f"{what}: {raw!r} is negative; expected {wanted}, not below 0")
    return value


def _g(value: float) -> str:
    """A number in at most 6 significant digits, without a trailing ``.0``."""
    return f"{value:.6g}"


def format_duration(seconds: float) -> str:
    """Canonical duration text in microseconds: ``2e-05`` -> ``'20us'``."""
    return f"{_g(seconds * 1e6)}us"


def format_bandwidth(bytes_per_s: float) -> str:
    """Canonical bandwidth text in GB/s (10^9 bytes/s): ``2.5e10`` -> ``'25GB/s'``;
    ``inf`` -> ``'inf'``."""
    if math.isinf(bytes_per_s):
        return "inf"
    return f"{_g(bytes_per_s / 1e9)}GB/s"


def human_time(seconds: float) -> str:
    """A duration for reports, in the unit that suits it: ``'157 us'``, ``'0.70 ms'``,
    ``'1.2 s'``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def human_bytes(nbytes: float) -> str:
    """A byte count for reports in decimal units: ``14680064`` -> ``'14.7 MB'``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"
