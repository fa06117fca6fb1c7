"""Link parameters as data: the sets of ``links.toml`` and overrides from strings.

A :class:`CostParams` is one named set (``nominal`` or ``hccl-plan``, reference
``cost-model.md`` §1.6): per link class a :class:`LinkParams` (bandwidth in bytes/s per
direction, α in seconds per step, whether the bandwidth is per peer link or per shared
port, and the source of the figures), the local reduction bandwidth (γ = 1/bandwidth
seconds per byte; ``inf`` = 0), the α of vLLM's host-side DP all_reduce, and HCCL's own
selector constants (:class:`SelectorConstants`, §2.4).

Overrides are strings ``KEY=VALUE`` (``roce.alpha=20us``, ``hccs.bandwidth=196GB/s``):
KEY is ``<class>.alpha`` / ``<class>.bandwidth`` for a link class or a family of classes
(``roce`` = every ``roce-*`` class), or ``reduce.bandwidth``, ``host.alpha``,
``selector.alpha``. Bad keys, negative values and units that do not parse raise
:class:`~rtc.cost.errors.ParamError` saying which key, what value and what is accepted.
"""

from __future__ import annotations

import difflib
import functools
import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from rtc.cost.errors import NoLinkData, ParamError
from rtc.cost.units import accepted, format_bandwidth, format_duration, parse_quantity
from rtc.resources import package_toml

#: The named parameter sets of ``links.toml``.
PARAM_SETS: tuple[str, ...] = ("nominal", "hccl-plan")

#: Keys that are not a link class: key -> (kind of value, CostParams field).
GLOBAL_KEYS: dict[str, tuple[str, str]] = {
    "reduce.bandwidth": ("bandwidth", "reduce_bandwidth"),
    "host.alpha": ("duration", "host_alpha"),
    "selector.alpha": ("duration", "selector_alpha"),
}

_LINK_FIELDS = {"alpha": "duration", "bandwidth": "bandwidth"}


@dataclass(frozen=True)
class LinkParams:
    """Parameters of one link class.

    ``bandwidth`` bytes/s per direction; ``alpha`` seconds per algorithm step;
    ``share`` ``"link"`` (each peer has its own link at ``bandwidth``) or ``"port"`` (one
    port per rank, shared by every peer reached through ``port``); ``source`` where the
    figures come from (reference section or document)."""

    name: str
    bandwidth: float
    alpha: float
    share: str
    port: str
    source: str
    #: measured / line rate (NCCL classes; 1.0 for the Ascend classes, whose sets hold
    #: the planning values directly).
    efficiency: float = 1.0

    @property
    def beta(self) -> float:
        """Seconds per byte on this link (1 / bandwidth)."""
        return 1.0 / self.bandwidth


@dataclass(frozen=True)
class SelectorConstants:
    """HCCL's algorithm-choice constants (HCOMM-SEL, reference §2.4): ``alpha`` the
    60 µs "static latency" of the inter-server cost rule; sizes in bytes: Pipeline
    thresholds (RS/AG ``pipeline_min``, AllReduce per slice ``pipeline_allreduce_min``,
    both ``pipeline_min_no_lite`` without RDMA-lite), A3's single-server small-count mesh
    limit per rank, A3's AIV cross-server limit, 910A's single-server HD limit."""

    alpha: float
    pipeline_min: float
    pipeline_allreduce_min: float
    pipeline_min_no_lite: float
    a3_mesh_small_count: float
    a3_aiv_cross_server_max: float
    hd_910a_max: float
    source: str


@dataclass(frozen=True)
class ChipLinks:
    """Which link classes a chip's servers have (``links.toml`` ``[chips.*]``): the link
    between two NPUs of a server, the NIC, and where they exist the A3 die-pair (SIO)
    and super-pod (UB) links and the 910A cross-group link."""

    chip: str
    family: str
    server_link: str
    nic: str
    die_pair_link: str | None
    super_pod_link: str | None
    cross_group_link: str | None
    rdma_lite: bool
    source: str
    #: NVIDIA NVSwitch boards: the NVLS (in-network AllReduce) class, when measured.
    nvls_link: str | None = None


@dataclass(frozen=True)
class CostParams:
    """One parameter set, possibly with overrides applied (``overrides`` holds them in
    canonical form, e.g. ``('roce.alpha=20us',)``).

    ``plan_bandwidth`` maps link classes to the ``hccl-plan`` bandwidth (bytes/s): HCCL's
    own algorithm choice uses those whatever set is active."""

    name: str
    description: str
    links: Mapping[str, LinkParams]
    reduce_bandwidth: float
    host_alpha: float
    selector_alpha: float
    selector: SelectorConstants
    plan_bandwidth: Mapping[str, float]
    sources: Mapping[str, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()

    def link(self, name: str) -> LinkParams:
        """The parameters of link class ``name``; :class:`ParamError` if the set has none."""
        got = self.links.get(name)
        if got is None:
            raise ParamError(f"link class {name!r} has no parameters in set {self.name!r}; "
                             f"classes with parameters: {', '.join(self.links)}")
        return got

    @property
    def gamma(self) -> float:
        """Seconds per byte of local reduction (0 when the reduction is inline)."""
        return 0.0 if math.isinf(self.reduce_bandwidth) else 1.0 / self.reduce_bandwidth


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return package_toml("cost", "links.toml")


def _link_row(set_name: str, name: str, row: dict) -> LinkParams:
    what = f"links.toml [sets.{set_name}.links.{name}]"
    share = row.get("share", "link")
    if share not in ("link", "port"):
        raise ParamError(f"{what}: share = {share!r}; expected 'link' or 'port'")
    bandwidth = parse_quantity(row["bandwidth"], "bandwidth", what=f"{what} bandwidth")
    if bandwidth <= 0:
        raise ParamError(f"{what}: bandwidth must be above 0")
    efficiency = float(row.get("efficiency", 1.0))
    if not 0 < efficiency <= 1:
        raise ParamError(f"{what}: efficiency must be in (0, 1]")
    return LinkParams(name=name, bandwidth=bandwidth,
                      alpha=parse_quantity(row["alpha"], "duration", what=f"{what} alpha"),
                      share=share, port=row.get("port", name), source=row["source"],
                      efficiency=efficiency)


@functools.lru_cache(maxsize=None)
def selector_constants() -> SelectorConstants:
    """HCCL's selector constants from ``links.toml`` ``[selector]``."""
    row = _data()["selector"]
    size = {k: parse_quantity(row[k], "size", what=f"links.toml [selector] {k}")
            for k in ("pipeline_min", "pipeline_allreduce_min", "pipeline_min_no_lite",
                      "a3_mesh_small_count", "a3_aiv_cross_server_max", "hd_910a_max")}
    return SelectorConstants(alpha=parse_quantity(row["alpha"], "duration",
                                                  what="links.toml [selector] alpha"),
                             source=row["source"], **size)


def chip_links(chip: str) -> ChipLinks:
    """The link classes of ``chip`` (a preset's ``chip``: ``Ascend910B``,
    ``Ascend910_93``, ``Ascend910``, ``Ascend``). Unknown chips raise ParamError."""
    chips = _data()["chips"]
    row = chips.get(chip)
    if row is None:
        raise NoLinkData(f"rtc's cost model has no link figures for {chip} yet (chips with "
                         f"figures: {', '.join(chips)}): no published measurements of its "
                         "links (UB inside the node and super pod, RoCE between super pods) "
                         "were found to base them on, so rtc cannot cost this hardware",
                         "`rtc check` still checks the layout; `links { param ... }` and "
                         "`--param` only change figures of the chips listed, so until "
                         "measured figures are added measure the links on the servers with "
                         "HCCL Test")
    return ChipLinks(chip=chip, family=row["family"], server_link=row["server_link"],
                     nic=row["nic"], die_pair_link=row.get("die_pair_link"),
                     super_pod_link=row.get("super_pod_link"),
                     cross_group_link=row.get("cross_group_link"),
                     rdma_lite=bool(row.get("rdma_lite", False)), source=row["source"],
                     nvls_link=row.get("nvls_link"))


@functools.lru_cache(maxsize=None)
def load_params(name: str = "nominal") -> CostParams:
    """The parameter set ``name`` (one of :data:`PARAM_SETS`) from ``links.toml``.

    Units inside: bandwidth bytes/s, α seconds. ParamError for an unknown set."""
    sets = _data()["sets"]
    if name not in sets:
        raise ParamError(f"unknown parameter set {name!r}; accepted: {', '.join(sets)}")
    raw = sets[name]
    links = {k: _link_row(name, k, v) for k, v in raw["links"].items()}
    plan = {k: _link_row("hccl-plan", k, v).bandwidth
            for k, v in sets["hccl-plan"]["links"].items()}
    sel = selector_constants()
    sources = {"reduce": raw["reduce"]["source"], "host": raw["host"]["source"],
               "selector": sel.source, **{k: v.source for k, v in links.items()}}
    return CostParams(
        name=name, description=raw["description"], links=MappingProxyType(links),
        reduce_bandwidth=parse_quantity(raw["reduce"]["bandwidth"], "bandwidth",
                                        what=f"[sets.{name}.reduce]", allow_inf=True),
        host_alpha=parse_quantity(raw["host"]["alpha"], "duration",
                                  what=f"[sets.{name}.host]"),
        selector_alpha=sel.alpha, selector=sel, plan_bandwidth=plan, sources=sources)


# --------------------------------------------------------------------------- overrides


@dataclass(frozen=True)
class Override:
    """One parsed override: ``key`` as normalised, the ``field`` it sets (``alpha``,
    ``bandwidth``), the value in base units (seconds or bytes/s), the link classes it
    applies to (empty for a global key) and its canonical ``text``."""

    key: str
    field: str
    value: float
    classes: tuple[str, ...]
    text: str


def param_keys(params: CostParams) -> list[str]:
    """Every key :func:`parse_override` accepts for ``params``: per class, per family,
    and the global keys."""
    targets = dict.fromkeys(list(params.links) + sorted(_families(params)))
    return [f"{t}.{f}" for t in targets for f in _LINK_FIELDS] + list(GLOBAL_KEYS)


def _families(params: CostParams) -> set[str]:
    return {name.split("-", 1)[0] for name in params.links}


def _classes_of(target: str, params: CostParams) -> tuple[str, ...]:
    if target in params.links:
        return (target,)
    return tuple(n for n in params.links if n.split("-", 1)[0] == target)


def _unknown_key(key: str, params: CostParams) -> ParamError:
    keys = param_keys(params)
    close = difflib.get_close_matches(key, keys, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return ParamError(
        f"parameter {key!r} is unknown; {hint}accepted: <class>.alpha or <class>.bandwidth "
        f"with <class> one of {', '.join(params.links)} or a family "
        f"({', '.join(sorted(_families(params)))}), and {', '.join(GLOBAL_KEYS)}")


def _value(key: str, kind: str, raw: str, *, allow_inf: bool) -> tuple[float, str]:
    value = parse_quantity(raw, kind, what=f"parameter {key!r}", allow_inf=allow_inf)
    if kind == "bandwidth" and value == 0:
        raise ParamError(f"parameter {key!r}: {raw.strip()!r} is zero; expected "
                         f"{accepted(kind)}, above 0")
    return value, (format_duration(value) if kind == "duration" else format_bandwidth(value))


def parse_override(text: str, params: CostParams) -> Override:
    """Parse ``KEY=VALUE`` (``roce.alpha=20us``) against ``params``.

    Raises ParamError for text without ``=``, an unknown key (with the accepted keys),
    a negative or zero value, or a unit that does not parse.

    >>> parse_override(" roce.alpha = 0.02ms", load_params()).text
    'roce.alpha=20us'
    """
    key, sep, raw = str(text).partition("=")
    key = key.strip().lower()
    if not sep or not key or not raw.strip():
        raise ParamError(f"parameter {str(text).strip()!r} is not KEY=VALUE "
                         f"(e.g. roce.alpha=20us or hccs.bandwidth=196GB/s)")
    if key in GLOBAL_KEYS:
        kind = GLOBAL_KEYS[key][0]
        value, shown = _value(key, kind, raw, allow_inf=key == "reduce.bandwidth")
        return Override(key, key.split(".")[1], value, (), f"{key}={shown}")
    target, _, fld = key.rpartition(".")
    classes = _classes_of(target, params) if fld in _LINK_FIELDS else ()
    if not classes:
        raise _unknown_key(key, params)
    value, shown = _value(key, _LINK_FIELDS[fld], raw, allow_inf=False)
    return Override(key, fld, value, classes, f"{key}={shown}")


def apply_overrides(params: CostParams, texts: Iterable[str]) -> CostParams:
    """A copy of ``params`` with every override of ``texts`` applied in order (later
    ones win). Its ``overrides`` lists them in canonical form. Raises ParamError as
    :func:`parse_override` does, before anything is applied."""
    parsed = [parse_override(t, params) for t in texts]
    links = dict(params.links)
    updates: dict[str, float] = {}
    for o in parsed:
        if not o.classes:
            updates[GLOBAL_KEYS[o.key][1]] = o.value
        for c in o.classes:
            links[c] = replace(links[c], **{o.field: o.value},
                               source=f"override {o.text} (was: {links[c].source})")
    return replace(params, links=MappingProxyType(links), overrides=params.overrides
                   + tuple(o.text for o in parsed), **updates)


def params_with(name: str = "nominal", overrides: Iterable[str] = ()) -> CostParams:
    """Convenience: :func:`load_params` then :func:`apply_overrides`."""
    return apply_overrides(load_params(name), overrides)


def link_table(params: CostParams) -> list[Mapping[str, str]]:
    """The set as rows of text (class, bandwidth, alpha, share, source), canonical
    units, for reports."""
    return [{"class": p.name, "bandwidth": format_bandwidth(p.bandwidth),
             "alpha": format_duration(p.alpha), "share": p.share, "source": p.source}
            for p in params.links.values()]
