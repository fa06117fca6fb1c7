"""Lowering: typed declarations (:mod:`rtc.syntax.decls`) -> the
:class:`~rtc.model.topology.Topology`, as an ordered tuple of passes.

The cluster block is resolved first (the hardware preset decides device ids, rank table
version and every hardware rule): without a known preset there is no Topology (RTC200 /
RTC116). Then each pass of :data:`PASSES` adds its part, in this order:

=============================  ===================================================
pass                           adds
=============================  ===================================================
:func:`lower_servers`          servers of ``server`` / ``family`` blocks, their devices
                               and computed addresses (RTC206, RTC207; RTC234 when the
                               file has neither)
:func:`lower_jobs`             jobs: their servers, devices, sizes, env, ports (RTC215)
:func:`lower_networks`         host networks, fabrics, visible devices, address sources
:func:`lower_inventory`        captures of each server's ``inventory`` folder, and the
                               addresses taken from them (RTC480-RTC489)
:func:`lower_launch`           each job's launch attributes, ``disaggregation`` blocks
:func:`lower_cost`             each job's cost-model settings, the ``links`` block
=============================  ===================================================

Problems that make a value impossible to compute are reported by the passes; everything
that can be judged on the finished Topology is left to :mod:`rtc.checks`, and what runs
where is planned by :mod:`rtc.plan`.
"""

from __future__ import annotations

import difflib

from rtc.diagnostics import Diagnostic, Related, Span, error
from rtc.model.lower_cost import lower_cost
from rtc.model.lower_jobs import lower_jobs
from rtc.model.lower_launch import lower_launch
from rtc.model.lower_network import lower_inventory, lower_networks
from rtc.model.lower_servers import lower_servers
from rtc.model.presets import Preset, presets
from rtc.model.topology import Topology
from rtc.rules import rule
from rtc.syntax.decls import ClusterDecl, Decl, ServerDecl
from rtc.syntax.schema import MISSING_ATTRIBUTE

CLUSTER = rule("RTC200", "cluster-definition", "error",
               "The cluster block is missing, repeated, or names an unknown hardware preset.", """
    What: every file needs exactly one `cluster NAME { hardware PRESET }` block, and the
    preset must be one of atlas-800t-a2, atlas-800-a3, atlas-800-910a, generic (generic
    also needs `devices_per_server`).
    Why: the preset decides the valid device ids, the rank table version (1.0 or 1.2)
    and the hardware rules every check applies.
    Example: `hardware atlas-800-a2` (typo for atlas-800t-a2).
    Fix: write one cluster block with a known preset.""")
NO_SERVERS = rule("RTC234", "no-servers", "error",
                  "The description declares no server or family block.", """
    What: the file has a cluster block but no `server NAME { ... }` and no
    `family PREFIX[FIRST..LAST] { ... }` block.
    Why: a rank table lists servers and their devices; with none there is nothing to
    write (HCCL rejects a table whose server_list is empty).
    Example: a file holding only `cluster c { hardware atlas-800t-a2 }`.
    Fix: add a server block (`server NAME {` with `devices 0..7` and `device_ip ...`) or
    a family block (`family node[0..N] {`). Existing rank tables are not concerned: their
    schema already requires a non-empty server_list (RTC616).""")

#: The lowering passes, in order: each is ``pass(decls, topology, diagnostics)``.
PASSES = (lower_servers, lower_jobs, lower_networks, lower_inventory, lower_launch,
          lower_cost)


def lower(decls: list[Decl], files: dict) -> tuple[Topology | None, list[Diagnostic]]:
    """Lower declarations into a Topology. Returns (None, diagnostics) when the cluster
    itself cannot be resolved (no or unknown preset); otherwise a Topology, possibly with
    error diagnostics for the parts that could not be computed. ``files`` maps file names
    to their text."""
    diags: list[Diagnostic] = []
    cluster, preset = _cluster(decls, files, diags)
    if preset is None:
        return None, diags
    topo = Topology(name=cluster.name or "cluster", preset=preset, servers=[], jobs=[],
                    cann=cluster.cann, vllm_version=cluster.vllm_version,
                    policies=cluster.policy, span=cluster.name_span, files=files,
                    named=cluster.name is not None, spans=dict(cluster.spans))
    _servers_declared(decls, cluster, diags)
    for lowering_pass in PASSES:
        lowering_pass(decls, topo, diags)
    return topo, diags


def _servers_declared(decls: list[Decl], cluster: ClusterDecl, diags: list[Diagnostic]) -> None:
    """RTC234 at the cluster block's label when no ``server`` or ``family`` block was
    written (a block that was written but failed to read has its own error already)."""
    if any(isinstance(d, ServerDecl) for d in decls):
        return
    where = f"cluster {cluster.name}" if cluster.name else "the cluster"
    diags.append(error(NO_SERVERS, f"{where} has no servers: the file declares no `server` "
                       "or `family` block, so there is no rank table to build",
                       cluster.name_span,
                       hint="add a `server NAME {` block (with `devices 0..7` and "
                            "`device_ip ...`), or `family node[0..N] {` for N+1 alike servers"))


def _cluster(decls: list[Decl], files: dict,
             diags: list[Diagnostic]) -> tuple[ClusterDecl | None, Preset | None]:
    """The cluster block and its preset (RTC200 / RTC116 when there is none)."""
    clusters = [d for d in decls if isinstance(d, ClusterDecl)]
    if not clusters:
        first = decls[0].span if decls else Span.whole_file(next(iter(files), "<input>"))
        diags.append(error(CLUSTER, "no cluster block: rtc needs the hardware preset",
                           Span(first.file, 1, 1),
                           hint="start the file with `cluster NAME {` / "
                                "`hardware atlas-800t-a2` / `}`"))
        return None, None
    for extra in clusters[1:]:
        diags.append(error(CLUSTER, "a file describes one cluster; this is a second "
                           "cluster block", extra.name_span,
                           related=[Related(clusters[0].name_span, "first cluster block")],
                           hint="merge the two blocks"))
    c = clusters[0]
    if c.hardware is None:
        diags.append(error(MISSING_ATTRIBUTE, "the cluster block has no `hardware`",
                           c.name_span, hint="add e.g. `hardware atlas-800t-a2`"))
        return c, None
    table = presets()
    preset = table.get(c.hardware)
    if preset is None:
        close = difflib.get_close_matches(c.hardware, list(table), n=1)
        diags.append(error(CLUSTER, f"unknown hardware preset '{c.hardware}'",
                           c.span_of("hardware"),
                           hint=(f"did you mean '{close[0]}'? " if close else "") +
                           "presets: " + ", ".join(table)))
        return c, None
    if preset.devices_per_server == 0:
        if c.devices_per_server is None:
            diags.append(error(MISSING_ATTRIBUTE, f"hardware {preset.name} needs "
                               "`devices_per_server`", c.span_of("hardware"),
                               hint="add e.g. `devices_per_server 8`"))
            return c, None
        preset = preset.with_devices(c.devices_per_server, c.nvlink_island)
    return c, _islands_checked(c, preset, diags)


def _islands_checked(c, preset, diags: list[Diagnostic]):
    """``nvlink_island`` lines are for hardware generic-gpu only, each GPU in at most one
    island and inside 0..devices_per_server-1 (RTC200 at the line; the preset is kept)."""
    if not c.nvlink_island:
        return preset
    span = c.span_of("nvlink_island")
    if preset.name != "generic-gpu":
        diags.append(error(CLUSTER, f"`nvlink_island` is for hardware generic-gpu; "
                           f"{preset.name} has its islands built in", span,
                           hint="remove the nvlink_island lines, or use hardware generic-gpu"))
        return preset
    seen: set[int] = set()
    for k, island in enumerate(c.nvlink_island):
        bad = [d for d in island if d in seen or d >= preset.devices_per_server]
        seen.update(island)
        if bad:
            diags.append(error(CLUSTER, f"nvlink_island {', '.join(map(str, island))}: GPU "
                               f"{bad[0]} is in another island or not below devices_per_server "
                               f"{preset.devices_per_server}", c.line_span("nvlink_island", k),
                               hint="give each GPU to one island, ids 0..devices_per_server-1"))
    return preset


#: The rules this module reports (collected by rtc.catalogue).
RULES = (CLUSTER, NO_SERVERS)
