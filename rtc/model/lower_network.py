"""Lowering passes: the network model and the inventory.

:func:`lower_networks`:

* ``network`` / ``fabric`` blocks -> :attr:`Topology.networks` / :attr:`Topology.fabrics`;
* server ``visible_devices`` -> :attr:`Server.visible_devices`, and where device_ip /
  gateway / prefix come from (:attr:`Server.address_sources`); on NVIDIA GPU servers
  ``ib_hca`` and ``nccl_topo_file`` -> :attr:`Server.ib_hca`, :attr:`Server.nccl_topo_file`;

:func:`lower_inventory`:

* server ``inventory "dir"`` (a template such as ``"inv/node{i:02}"`` is rendered per family
  member): each folder is read once (:func:`rtc.inventory.load_inventory_dir`), its
  diagnostics (RTC480-RTC489) are passed on once, and device IPs / gateways / prefix
  lengths the description does not give (``device_ip inventory``, ``gateway inventory``,
  or no such line at all) are taken from it. Values the description does give are kept;
  :mod:`rtc.checks.inventory_facts` compares them with the captures.
"""

from __future__ import annotations

import ipaddress
import os

from rtc.diagnostics import Diagnostic, error
from rtc.model.topology import Server, Topology
from rtc.network.addressing import Fabric, HostNetwork
from rtc.syntax.decls import Decl, FabricDecl, NetworkDecl, ServerDecl
from rtc.syntax.values import ValueProblem, parse_template


def lower_networks(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Host networks, fabrics, and each server's visible devices and address sources (see
    the module docstring)."""
    for d in decls:
        if isinstance(d, NetworkDecl) and d.name:
            topo.networks.append(HostNetwork(d.name, d.name_span, d.cidr, tuple(d.nic or ()),
                                             _spans(d), d.failed))
        elif isinstance(d, FabricDecl) and d.name:
            topo.fabrics.append(Fabric(d.name, d.name_span, list(d.subnets or ()), _spans(d),
                                       d.failed))
    by_key = _server_decls(decls)
    for s in topo.servers:
        decl = _decl_of(s, by_key)
        if decl is None:
            continue
        if decl.visible_devices is not None:
            s.visible_devices = list(decl.visible_devices)
        if decl.ib_hca is not None:
            s.ib_hca = tuple(decl.ib_hca)
        s.nccl_topo_file = bool(decl.nccl_topo_file)
        for key in ("device_ip", "gateway"):
            plan = getattr(decl, key)
            if plan is not None:
                s.address_sources[key] = "inventory" if plan.kind == "inventory" else "dsl"
        if decl.prefix is not None:
            s.address_sources["prefix"] = "dsl"


def _spans(d: Decl) -> dict:
    """Attribute spans of a network/fabric block. A line that failed to parse was reported:
    it is present (not "missing", RTC406) and in ``incomplete``, so that checks which need
    its value (reachability through a fabric) stand down instead of adding knock-on errors."""
    spans = dict(d.spans)
    for key in d.failed:
        spans[key] = d.span_of(key)
    return spans


def _server_decls(decls: list[Decl]) -> dict:
    out: dict = {}
    for d in decls:
        if isinstance(d, ServerDecl) and d.name:
            out.setdefault((d.kind == "family", d.name), d)
    return out


def _decl_of(s: Server, by_key: dict) -> ServerDecl | None:
    return by_key.get((True, s.family)) if s.family else by_key.get((False, s.name))


def lower_inventory(decls: list[Decl], topo: Topology, diags: list[Diagnostic]) -> None:
    """Read each server's ``inventory`` folder once and take the addresses the description
    does not give from it (see the module docstring)."""
    by_key = _server_decls(decls)
    cache: dict[str, tuple] = {}
    for s in topo.servers:
        decl = _decl_of(s, by_key)
        if decl is None or s.inventory is None:
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
        _fill(s, inv, decl)


def _fill(s: Server, inv, decl: ServerDecl) -> None:
    """Take device_ip / gateway / prefix from the inventory where the description gives
    none (an ``inventory`` plan, or no line at all)."""
    take_ip = decl.device_ip is None or decl.device_ip.kind == "inventory"
    take_gw = decl.gateway is None or decl.gateway.kind == "inventory"
    vnic = decl.device_ip is not None and decl.device_ip.source == "vnic"
    take_prefix = s.address_sources.get("prefix") != "dsl" and not vnic  # -ip's mask is not the vNIC's
    for dev in s.devices:
        facts = inv.devices.get(dev.device_id)
        if facts is None:
            continue
        use_v6 = facts.ip is None and facts.ipv6 is not None
        if take_ip:
            fact = facts.ipv6 if use_v6 else facts.ip
            if vnic:
                fact = facts.vnic_ip
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
