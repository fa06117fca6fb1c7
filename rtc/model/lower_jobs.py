"""Lowering pass: ``job`` declarations -> :class:`~rtc.model.topology.Job`.

Resolves the servers and devices a job uses (``servers NAME, node[0..3], all`` take every
device of each server; ``on SERVER devices SET dp_local N`` a subset), keeps every such
reference as a claim (for the overlap checks), and copies the parallel sizes, role,
framework, environment, policies and launch ports as written. Unknown servers and devices
are errors here (RTC215); a job that uses no device at all is RTC116.
"""

from __future__ import annotations

import difflib
import ipaddress

from rtc.diagnostics import Diagnostic, error
from rtc.model.topology import Job, Placement, Server, Topology
from rtc.rules import rule
from rtc.syntax.decls import Decl, JobDecl
from rtc.syntax.schema import MISSING_ATTRIBUTE
from rtc.syntax.values import ValueProblem, is_family_ref, parse_family_name
from rtc.textfmt import format_ids

UNKNOWN_REF = rule("RTC215", "unknown-server-or-device", "error",
                   "A job names a server or device that does not exist.", """
    What: `servers atlas-03` when only atlas-01 and atlas-02 are declared, or
    `on atlas-01 devices 8..15` on an 8-NPU server.
    Why: the job's rank table would silently miss those devices.
    Example: `servers atlas-1` (the server is atlas-01).
    Fix: use the declared server names and their device ids.""")


def lower_jobs(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Append one :class:`Job` per ``job`` block to ``topo.jobs``, in declaration order."""
    by_name: dict[str, Server] = {}
    for s in topo.servers:
        by_name.setdefault(s.name, s)
    for decl in decls:
        if isinstance(decl, JobDecl) and decl.name:
            topo.jobs.append(_lower_job(decl, by_name, topo.servers, diags))


def _lower_job(decl: JobDecl, by_name: dict, servers: list[Server],
               diags: list[Diagnostic]) -> Job:
    placements: dict[str, Placement] = {}
    claims: list = []  # (server, device ids, server span, via, devices span)
    unresolved: set[str] = set(decl.failed)
    for w in decl.servers or ():
        found, ok = _resolve(w, by_name, servers, diags)
        if not ok:
            unresolved.add("servers")
        for s in found:
            placements[s.name] = Placement(s, tuple(d.device_id for d in s.devices), w.span)
            claims.append((s.name, placements[s.name].device_ids, w.span, "servers", None))
    for ref in decl.on:
        found, ok = _resolve(ref.server, by_name, servers, diags)
        if not ok:
            unresolved.add("on")
        for s in found:
            ids, ok = _devices_on(decl, ref, s, diags)
            if not ok:
                unresolved.add("on")
            placements[s.name] = Placement(s, tuple(sorted(ids)), ref.server.span, ref.dp_local)
            claims.append((s.name, tuple(ids), ref.server.span, "on", ref.devices_span))
    job = Job(
        name=decl.name, span=decl.name_span,
        placements=sorted(placements.values(), key=lambda p: p.server.index),
        role=decl.role or "serve", framework=decl.framework or "vllm",
        dp=decl.dp or 1, tp=decl.tp or 1, pp=decl.pp or 1, pcp=decl.pcp or 1,
        dcp=decl.dcp or 1, expert_parallel=bool(decl.expert_parallel),
        model_kind=decl.model_kind or "moe",
        model_kind_from="model_kind" if decl.model_kind else "default", order=decl.order, env=list(decl.env),
        policies=decl.policy, spans=dict(decl.spans), incomplete=frozenset(unresolved),
        claims=claims, port=decl.port, dp_address=_dp_address(decl),
        dp_rpc_port=decl.dp_rpc_port, kv_connector=decl.kv_connector, kv_port=decl.kv_port,
        ray_port=decl.ray_port)
    if not job.placements and not unresolved & {"servers", "on"}:
        diags.append(error(MISSING_ATTRIBUTE, f"job {decl.name} uses no devices",
                           decl.name_span,
                           hint="add `servers NAME, NAME` or `on NAME devices 0..7`"))
    return job


def _devices_on(decl: JobDecl, ref, s: Server, diags: list[Diagnostic]) -> tuple[tuple, bool]:
    """The device ids an ``on`` line takes on ``s`` (those that exist) and whether all of
    them did (RTC215 for the others)."""
    ids = ref.devices if ref.devices is not None else tuple(d.device_id for d in s.devices)
    have = {d.device_id for d in s.devices}
    missing = [d for d in ids if d not in have]
    if not missing:
        return ids, True
    diags.append(error(
        UNKNOWN_REF, f"job {decl.name} uses device{'s' if len(missing) > 1 else ''} "
        f"{format_ids(missing)} on {s.name}, which has devices {format_ids(have)}",
        ref.devices_span or ref.server.span, subject=f"server {s.name}",
        hint=f"use devices of {s.name} ({format_ids(have)})"))
    return tuple(d for d in ids if d in have), False


def _dp_address(decl: JobDecl):
    if decl.dp_address is None:
        return None
    try:
        return ipaddress.ip_address(decl.dp_address.render())
    except (ValueError, ValueProblem):
        return None


def _resolve(word, by_name: dict, servers: list[Server],
             diags: list[Diagnostic]) -> tuple[list[Server], bool]:
    """The servers a ``servers`` word names (``all``, ``node[0..3]``, a name), and whether
    every name resolved (RTC215 for those that did not)."""
    text = word.text
    if text == "all":
        return list(servers), True
    if is_family_ref(text):
        try:
            fam = parse_family_name(text, word.span)
        except ValueProblem as p:  # a backwards or oversized range: RTC112
            diags.append(error(p.code, f"`servers {text}`: {p.message}", p.span, hint=p.hint))
            return [], False
        found = [by_name.get(fam.name(i)) for i in fam.indices]
        missing = [fam.name(i) for i, s in zip(fam.indices, found) if s is None]
        if missing:
            diags.append(error(UNKNOWN_REF, f"no server named {missing[0]}"
                               + (f" (and {len(missing) - 1} more of {text})"
                                  if len(missing) > 1 else ""), word.span,
                               hint="family members are named PREFIX + index, "
                                    "zero-padded like the family's first index"))
        return [s for s in found if s is not None], not missing
    s = by_name.get(text)
    if s is None:
        close = difflib.get_close_matches(text, list(by_name), n=1)
        diags.append(error(UNKNOWN_REF, f"no server named '{text}'", word.span,
                           hint=f"did you mean '{close[0]}'?" if close else
                           "declare it with `server NAME {` or `family`"))
        return [], False
    return [s], True


#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNKNOWN_REF,)
