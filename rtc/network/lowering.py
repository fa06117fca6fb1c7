"""The network part of lowering, run once at the end of :func:`rtc.model.lower.lower`.

* ``network`` / ``fabric`` blocks -> :attr:`Topology.networks` / :attr:`Topology.fabrics`;
* server ``visible_devices`` -> :attr:`Server.visible_devices`;
* server ``inventory "dir"`` (a template such as ``"inv/node{i:02}"`` is rendered per family
  member): each folder is read once (:func:`rtc.inventory.load_inventory_dir`), its
  diagnostics (RTC480-RTC489) are passed on once, and device IPs / gateways / prefix
  lengths the description does not give (``device_ip inventory``, ``gateway inventory``,
  or no such line at all) are taken from it. Values the description does give are kept;
  :mod:`rtc.checks.inventory_facts` compares them with the captures;
* job ``port``, ``dp_address``, ``dp_rpc_port``, ``kv_connector``, ``kv_port``,
  ``ray_port`` -> the :class:`~rtc.model.topology.Job` fields;
* (the port plan, :func:`rtc.network.ports.plan_ports`, is made by :func:`rtc.model.lower.lower`
  after the launch attributes, which decide the Ray and master ports).
"""

from __future__ import annotations

import ipaddress
import os

from rtc.diagnostics import Diagnostic, error
from rtc.model.lower import INCOMPLETE_MARK
from rtc.network.addressing import Fabric, HostNetwork
from rtc.syntax.values import ValueProblem, parse_template


def finish(decls: list, topo, diags: list[Diagnostic]) -> None:
    """Complete ``topo`` with the network model (see the module docstring)."""
    _blocks(decls, topo)
    _servers(decls, topo, diags)
    _jobs(decls, topo)


def _blocks(decls: list, topo) -> None:
    for d in decls:
        if d.kind == "network" and d.name:
            spans = _spans(d)
            topo.networks.append(HostNetwork(d.name, d.name_span, d.get("cidr"),
                                             tuple(d.get("nic") or ()), spans))
        elif d.kind == "fabric" and d.name:
            spans = _spans(d)
            topo.fabrics.append(Fabric(d.name, d.name_span, list(d.get("subnets") or ()),
                                       spans))


def _spans(d) -> dict:
    """Attribute spans of a network/fabric block. A line that failed to parse was reported:
    it is present (not "missing", RTC406) and marked incomplete, so that checks which need
    its value (reachability through a fabric) stand down instead of adding knock-on errors."""
    spans = {k: d.span_of(k) for k in d.attrs}
    for key in d.failed:
        spans[key] = spans[INCOMPLETE_MARK + key] = d.span_of(key)
    return spans


def _server_decls(decls: list) -> dict:
    out: dict = {}
    for d in decls:
        if d.kind in ("server", "family") and d.name:
            out.setdefault((d.kind == "family", d.name), d)
    return out


def _servers(decls: list, topo, diags: list[Diagnostic]) -> None:
    by_key = _server_decls(decls)
    cache: dict[str, tuple] = {}
    for s in topo.servers:
        decl = by_key.get((True, s.family)) if s.family else by_key.get((False, s.name))
        if decl is None:
            continue
        visible = decl.get("visible_devices")
        if visible is not None:
            s.visible_devices = list(visible)
        plans = {key: decl.get(key) for key in ("device_ip", "gateway")}
        for key, plan in plans.items():
            if plan is not None:
                s.address_sources[key] = "inventory" if plan.kind == "inventory" else "dsl"
        if decl.get("prefix") is not None:
            s.address_sources["prefix"] = "dsl"
        if s.inventory is None:
            continue
        path = s.inventory = os.path.normpath(s.inventory)
        if "{" in path:
            try:
                path = parse_template(path, decl.span_of("inventory")).render(
                    i=s.family_index or 0)
            except ValueProblem as p:
                key = ("template", decl.name)
                if key not in cache:
                    cache[key] = (None, [])
                    diags.append(error(p.code, p.message, p.span, hint=p.hint,
                                       subject=f"server {s.name}"))
                continue
            s.inventory = path
        key = os.path.normpath(os.path.abspath(path))
        if key not in cache:
            from rtc.inventory import load_inventory_dir

            inv, inv_diags = load_inventory_dir(path)
            cache[key] = (inv, inv_diags)
            diags.extend(inv_diags)
        inv = cache[key][0]
        s.inventory_facts = inv
        _fill(s, inv, plans)


def _fill(s, inv, plans: dict) -> None:
    """Take device_ip / gateway / prefix from the inventory where the description gives
    none (an ``inventory`` plan, or no line at all)."""
    take_ip = plans["device_ip"] is None or plans["device_ip"].kind == "inventory"
    take_gw = plans["gateway"] is None or plans["gateway"].kind == "inventory"
    take_prefix = s.address_sources.get("prefix") != "dsl"
    for dev in s.devices:
        facts = inv.devices.get(dev.device_id)
        if facts is None:
            continue
        use_v6 = facts.ip is None and facts.ipv6 is not None
        if take_ip:
            fact = facts.ipv6 if use_v6 else facts.ip
            if fact is not None:
                dev.device_ip = _ip(fact.value)
                s.address_sources["device_ip"] = "inventory"
        if take_gw and facts.gateway is not None:
            dev.gateway = _ip(facts.gateway.value)
            s.address_sources["gateway"] = "inventory"
        if take_prefix:
            fact = facts.ipv6_prefix_len if use_v6 else facts.prefix_len
            if fact is not None and isinstance(fact.value, int):
                dev.prefix = fact.value
                s.address_sources["prefix"] = "inventory"


def _ip(text):
    try:
        return ipaddress.ip_address(str(text))
    except ValueError:
        return None


def _jobs(decls: list, topo) -> None:
    job_decls = [d for d in decls if d.kind == "job" and d.name]
    for decl, job in zip(job_decls, topo.jobs):
        if decl.name != job.name:
            continue
        job.port = decl.get("port")
        dp_address = decl.get("dp_address")
        if dp_address is not None:
            try:
                job.dp_address = ipaddress.ip_address(dp_address.render())
            except (ValueError, ValueProblem):
                job.dp_address = None
        job.dp_rpc_port = decl.get("dp_rpc_port")
        job.kv_connector = decl.get("kv_connector")
        job.kv_port = decl.get("kv_port")
        job.ray_port = decl.get("ray_port")
