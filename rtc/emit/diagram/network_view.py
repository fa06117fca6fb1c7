"""The network view: host networks and NICs, device subnets and gateways, fabrics and
super pods, and so which servers reach which.

Left to right: host networks (declared ``network`` blocks, else one per NIC name) ->
servers (a cluster with the host and a table of its NPUs: device IP/prefix, gateway,
subnet) -> what joins device subnets across servers: routed fabrics (declared ``fabric``
blocks, or the single fabric rtc assumes when none is declared), subnets shared by
several servers, and A3 super pods (HCCS). Two servers reach each other when they meet
at one of those nodes. Unreachable example pairs that the network checks report (RTC410)
are dashed red edges between the two NPU rows. The subnet model is
:mod:`rtc.network.reachability`; without it, subnets are derived from device IP and
prefix. Large clusters collapse like the topology view.
"""

from __future__ import annotations

import ipaddress

from rtc.diagnostics import Severity
from rtc.emit.diagram import style as st
from rtc.emit.diagram.common import (diag_line, diagnostics_panel, font, legend, lines,
                                     server_label, server_style, swatch, title)
from rtc.emit.diagram.dot import Graph, Html, text
from rtc.emit.diagram.model import (Marks, Options, num, plan, plural, selected_jobs,
                                    unreachable_pairs, worst)

MAX_ROWS = 16   # NPU rows per server table


def _subnet_text(sub) -> str:
    v, net, prefix = sub
    addr = ipaddress.IPv4Address(net) if v == 4 else ipaddress.IPv6Address(net)
    return f"{addr}/{prefix}"


class _Net:
    """Per-device subnet, routing and the joining node ("fab:..", "sub:..") it uses."""

    def __init__(self, topo):
        self.topo = topo
        self.model = None
        try:
            from rtc.network.reachability import Model

            self.model = Model(topo)
        except Exception:  # noqa: BLE001 - model missing or unusable: derive subnets below
            self.model = None
        self.assumed = bool(self.model and self.model.assumed)

    def device(self, server, d) -> tuple:
        """(subnet text or None, joins: node id or None, routed: bool)."""
        sub = _subnet(d.device_ip, d.prefix)
        if sub is None:
            return None, None, False
        routed = (d.gateway is not None and d.gateway != d.device_ip
                  and _contains(sub, d.gateway))
        join = None
        if self.model is not None and routed:
            comp = self.model.component.get(sub, -1)
            if comp >= 0:
                join = f"fab:{comp}"
        if join is None:
            join = f"sub:{_subnet_text(sub)}"
        return _subnet_text(sub), join, routed

    def fabric_label(self, comp: int) -> list[str]:
        names = self.model.component_fabrics.get(comp, []) if self.model else []
        if names == ["(assumed)"]:
            return [font("routed RoCE fabric (assumed)", bold=True),
                    text("no `fabric` block: rtc assumed the routed device"),
                    text("subnets reach each other through their gateways")]
        out = [font("fabric " + " + ".join(names), bold=True)]
        for f in self.topo.fabrics:
            if f.name in names:
                out.append(text(", ".join(str(n) for n, _ in f.subnets)))
        return out


def _subnet(ip, prefix):
    if ip is None or prefix is None:
        return None
    bits = 32 if ip.version == 4 else 128
    if not 0 <= prefix <= bits:
        return None
    mask = ((1 << bits) - 1) ^ ((1 << (bits - prefix)) - 1)
    return (ip.version, int(ip) & mask, prefix)


def _contains(sub, ip) -> bool:
    v, net, prefix = sub
    bits = 32 if v == 4 else 128
    mask = ((1 << bits) - 1) ^ ((1 << (bits - prefix)) - 1)
    return ip.version == v and (int(ip) & mask) == net


def table_id(name: str) -> str:
    return f"npus:{name}"


def _table(net: _Net, marks: Marks, s, joins: dict) -> Html:
    """The server's NPUs: device IP/prefix, gateway, subnet; more than 8 NPUs in two
    blocks side by side (NPU 0-7 | NPU 8-15). Each NPU cell is a port (``d<id>``)."""
    devices = sorted(s.devices, key=lambda d: d.device_id)
    cells = []
    for d in devices:
        sub, join, routed = net.device(s, d)
        if join is not None:
            joins.setdefault(join, []).append(d.device_id)
            if not routed:
                joins.setdefault("", [])
        if len(cells) >= MAX_ROWS:
            continue
        diags = marks.device.get((s.name, d.device_id), ())
        ip = "-" if d.device_ip is None else (
            f"{d.device_ip}/{d.prefix}" if d.prefix is not None else str(d.device_ip))
        gw = "-" if d.gateway is None else str(d.gateway)
        if sub is None:
            where = font("prefix unknown", color=st.MUTED)
        elif routed:
            where = text(sub)
        else:
            where = text(sub) + font(" (no route)", color=st.MUTED)
        npu = text(d.device_id)
        if diags:
            sev = worst(diags)
            npu = font(f"{d.device_id} {diags[0].code}", bold=True,
                       color=st.ERROR if sev is Severity.ERROR else st.WARNING)
        cells.append(f'<td port="d{d.device_id}">{npu}</td><td align="left">{text(ip)}</td>'
                     f'<td align="left">{text(gw)}</td><td align="left">{where}</td>')
    blocks = 2 if len(cells) > 8 else 1
    height = (len(cells) + blocks - 1) // blocks
    head = ('<td bgcolor="#EEEEEE"><b>NPU</b></td><td bgcolor="#EEEEEE"><b>device IP</b></td>'
            '<td bgcolor="#EEEEEE"><b>gateway</b></td><td bgcolor="#EEEEEE"><b>subnet</b></td>')
    gap = '<td border="0" width="8"></td>'
    rows = ['<table border="0" cellborder="1" cellspacing="0" cellpadding="3" color="#999999" '
            'bgcolor="white">', "<tr>" + gap.join([head] * blocks) + "</tr>"]
    for i in range(height):
        row = [cells[i]]
        if blocks == 2:
            j = i + height
            row.append(cells[j] if j < len(cells) else '<td colspan="4" border="0"></td>')
        rows.append("<tr>" + gap.join(row) + "</tr>")
    if len(devices) > MAX_ROWS:
        more = f"... {len(devices) - MAX_ROWS} more NPUs"
        rows.append(f'<tr><td colspan="{4 * blocks + blocks - 1}">{text(more)}</td></tr>')
    rows.append("</table>")
    return Html("".join(rows))


def _host_net(topo, s) -> tuple[str, list[str]] | None:
    """(node id, label lines) of the host network of ``s``."""
    if s.host_ip is None:
        return None
    for n in topo.networks:
        if n.cidr is not None and s.host_ip in n.cidr:
            nics = f" (NIC {', '.join(n.nics)})" if n.nics else ""
            return f"net:{n.name}", [font(f"host network {n.name}", bold=True),
                                     text(f"{n.cidr}{nics}")]
    if s.nic is None:
        return "nic:", [font("hosts (no NIC given)", bold=True),
                        font("no `network` block declared", color=st.MUTED)]
    return f"nic:{s.nic}", [font(f"hosts on NIC {s.nic}", bold=True),
                            font("no `network` block declared", color=st.MUTED)]


class _Meets:
    """What the drawn tables and families meet: host networks, joins and super pods."""

    def __init__(self):
        self.names: dict = {}   # table or family id -> its name
        self.hosts: dict = {}   # host network id -> (label lines, [server/family ids])
        self.joins: dict = {}   # join id -> [(table id, count)]
        self.pods: dict = {}    # super pod -> [table ids]
        self.no_route = False


def build(topo, diagnostics, opts: Options) -> str:
    """The network view as DOT source."""
    marks = Marks.build(topo, diagnostics)
    jobs = selected_jobs(topo, opts.job)
    net = _Net(topo)
    servers = _servers(topo, opts, jobs)
    unreachable = unreachable_pairs(opts, jobs)
    p = plan(topo, servers, opts.threshold, _reasons(topo, marks, unreachable))
    extra = _assumed_note(net)
    g = Graph("network", graph=st.style(st.GRAPH, {"rankdir": "LR", "ranksep": "0.9",
                                                    "nodesep": "0.25"}),
              node=st.NODE, edge=st.EDGE)
    meets = _items(g, topo, net, marks, p)
    extra.extend(_reach_lines(net, meets.names, meets.joins, meets.pods))
    g.set_graph("label", title(topo, len(servers), p.npus, extra))
    _host_nodes(g, meets.hosts)
    used_fabric, used_shared = _join_nodes(g, net, meets.joins)
    _pod_nodes(g, meets.pods)
    _order_anchors(g, list(meets.names))
    _unreachable_edges(g, p, unreachable)
    rows = _legend_rows(meets, used_fabric, used_shared, unreachable, p.collapsed, opts.threshold)
    _panels(g, rows, marks)
    return g.source()


def _servers(topo, opts: Options, jobs) -> list:
    """The servers to draw: those of the selected job, else all of them."""
    if opts.job is not None:
        used = {p.server.name for j in jobs for p in j.placements}
        return [s for s in topo.servers if s.name in used]
    return list(topo.servers)


def _reasons(topo, marks: Marks, unreachable) -> dict:
    """Server name -> (priority, why) for the servers a collapsed plan keeps in full."""
    reasons: dict = {}
    for name in marks.server_names():
        sv = topo.server(name)
        d = marks.of_server(sv)
        reasons[name] = (0 if worst(d) is Severity.ERROR else 1, f"{worst(d).label} {d[0].code}")
    for a, b, _ in unreachable:
        reasons.setdefault(a[0], (2, "unreachable pair"))
        reasons.setdefault(b[0], (2, "unreachable pair"))
    return reasons


def _assumed_note(net: _Net) -> list[str]:
    """The title line saying routed subnets are assumed to meet (RTC411), if so."""
    extra = []
    if net.model is not None and net.assumed and net.model.routed:
        extra.append(font("no fabric declared: routed device subnets are assumed to reach each "
                          "other (RTC411)", color=st.MUTED))
    return extra


def _items(g: Graph, topo, net: _Net, marks: Marks, p) -> _Meets:
    """Draw the plan's servers and families; collect what each of them meets."""
    meets = _Meets()
    for kind, obj in p.items:
        if kind == "family":
            _family(g, topo, net, marks, obj, meets.hosts, meets.joins, meets.pods)
            meets.names[f"fam:{obj.name}"] = obj.name
            continue
        _server(g, topo, net, marks, obj, meets)
    return meets


def _server(g: Graph, topo, net: _Net, marks: Marks, s, meets: _Meets) -> None:
    """One server cluster with its NPU table; record its host network, joins and pod."""
    diags = marks.of_server(s)
    c = g.subgraph(f"cluster_srv:{s.name}", st.style(st.SERVER, server_style(diags), {
        "label": server_label(topo, s, marks.server.get(s.name, ()) or diags)}))
    joins: dict = {}
    c.node(table_id(s.name), st.style(st.PANEL, {"label": _table(net, marks, s, joins)}))
    meets.names[table_id(s.name)] = s.name
    for join, ids in joins.items():
        if join == "":
            meets.no_route = True
            continue
        meets.joins.setdefault(join, []).append((table_id(s.name), len(ids)))
    hn = _host_net(topo, s)
    if hn is not None:
        meets.hosts.setdefault(hn[0], (hn[1], []))[1].append(table_id(s.name))
    if topo.preset.super_pod and s.super_pod_id is not None:
        meets.pods.setdefault(s.super_pod_id, []).append(table_id(s.name))


def _host_nodes(g: Graph, hosts: dict) -> None:
    """A node per host network, with an edge to each server or family on it."""
    for hid, (label, members) in hosts.items():
        g.node(hid, st.style({"shape": "box", "style": "rounded,filled",
                              "fillcolor": "#EEF3F8"}, {"label": lines(label)}))
        for m in members:
            g.edge(hid, m, {"color": "#33557A", "penwidth": "1.5"})


def _join_nodes(g: Graph, net: _Net, joins_all: dict) -> tuple[bool, bool]:
    """Fabric and shared-subnet nodes with their edges; (any fabric, any shared subnet)."""
    used_fabric = used_shared = False
    for join, ends in joins_all.items():
        if join.startswith("fab:"):
            used_fabric = True
            g.node(join, st.style({"shape": "box", "style": "rounded,filled",
                                   "fillcolor": "#E7F4EC", "color": "#009E73",
                                   "penwidth": "2"},
                                  {"label": lines(net.fabric_label(int(join[4:])))}))
            for t, n in ends:
                g.edge(t, join, {"color": "#009E73", "penwidth": "1.5",
                                 "label": f"{plural(n, 'NPU')} routed"})
        elif len(ends) > 1:     # a subnet shared by several servers
            used_shared = True
            g.node(join, st.style({"shape": "box", "style": "rounded,filled",
                                   "fillcolor": "#FFF7E0", "color": "#E69F00"},
                                  {"label": lines([font("shared subnet", bold=True),
                                                   text(join[4:])])}))
            for t, n in ends:
                g.edge(t, join, {"color": "#E69F00", "label": plural(n, "NPU")})
    return used_fabric, used_shared


def _pod_nodes(g: Graph, pods: dict) -> None:
    """A node per A3 super pod, with an edge from each of its servers."""
    for pod, members in pods.items():
        pid = f"pod:{pod}"
        g.node(pid, st.style({"shape": "box", "style": "rounded,filled", "fillcolor": "#F3EAF7",
                              "color": "#CC79A7", "penwidth": "2"},
                             {"label": lines([font(f"super pod {pod}", bold=True),
                                              text("HCCS between its servers")])}))
        for m in members:
            g.edge(m, pid, {"color": "#CC79A7", "penwidth": "1.5"})


def _order_anchors(g: Graph, order: list) -> None:
    """Keep servers in declaration order, top to bottom: a chain of invisible anchors
    (flat edges outside clusters keep their order) with one edge to each server."""
    anchors = [f"order:{k}" for k in range(len(order))]
    for a in anchors:
        g.node(a, st.HEADER)
    for a, b in zip(anchors, anchors[1:]):
        g.edge(a, b, st.LAYOUT_EDGE)
    for a, t in zip(anchors, order):
        g.edge(a, t, st.LAYOUT_EDGE)
    if len(anchors) > 1:
        g.same_rank(anchors)


def _unreachable_edges(g: Graph, p, unreachable) -> None:
    """Dashed red edges between the tables of unreachable pairs that are both drawn."""
    drawn = {s.name for s in p.drawn_servers()}
    for a, b, kind in unreachable:
        if a[0] in drawn and b[0] in drawn:
            # (no ports: Graphviz 2.43 mishandles ports on non-constraint flat edges)
            g.edge(table_id(a[0]), table_id(b[0]), st.style(st.UNREACHABLE_EDGE, {
                "xlabel": f"unreachable: {a[0]} NPU {a[1]} - {b[0]} NPU {b[1]}"}))


def _legend_rows(meets: _Meets, used_fabric: bool, used_shared: bool, unreachable,
                 collapsed, threshold: int) -> list:
    """Legend rows for the kinds of node and edge the diagram holds."""
    rows = [(swatch("#EEF3F8", border="#33557A"), text("host network (servers' host IPs)"))] \
        if meets.hosts else []
    if used_fabric:
        rows.append((swatch("#E7F4EC", border="#009E73"),
                     text("routed fabric: NPUs with a gateway in it reach each other")))
    if used_shared:
        rows.append((swatch("#FFF7E0", border="#E69F00"),
                     text("subnet shared by several servers (no router needed)")))
    if meets.pods:
        rows.append((swatch("#F3EAF7", border="#CC79A7"),
                     text("A3 super pod: its servers talk over HCCS")))
    if meets.no_route:
        rows.append((swatch(label=font("(no route)", color=st.MUTED)),
                     text("NPU without a gateway reaches its own subnet only")))
    if unreachable:
        rows.append((swatch(label=font("- - -", color=st.ERROR, bold=True)),
                     text("unreachable device pair (RTC410)")))
    if collapsed:
        rows.append((swatch(st.FAMILY_FILL, border="#33557A"), text(
            f"family of identical servers, collapsed (more than {num(threshold)} NPUs)")))
    return rows


def _panels(g: Graph, rows: list, marks: Marks) -> None:
    """The legend and diagnostics panels, side by side."""
    panels = []
    if rows:
        g.node("legend", st.style(st.PANEL, {"label": legend(rows)}))
        panels.append("legend")
    box = diagnostics_panel(marks.listed)
    if box is not None:
        g.node("diagnostics", st.style(st.PANEL, {"label": box}))
        panels.append("diagnostics")
    if len(panels) > 1:
        g.same_rank(panels)


def _reach_lines(net: _Net, names: dict, joins_all: dict, pods: dict) -> list[str]:
    """Which drawn servers (and families) reach each other's NPUs, and through what."""
    parent = {k: k for k in names}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    via: dict = {}
    links = [(j, [t for t, _ in ends]) for j, ends in joins_all.items()]
    links += [(f"pod:{pod}", members) for pod, members in pods.items()]
    for join, members in links:
        if len(members) < 2 and not join.startswith("fab:"):
            continue
        for m in members[1:]:
            a, b = find(members[0]), find(m)
            if a != b:
                parent[b] = a
        via.setdefault(find(members[0]), []).append(join)
    groups: dict = {}
    for k in names:
        groups.setdefault(find(k), []).append(names[k])
    for root, joins in list(via.items()):
        via[find(root)] = via.get(find(root), []) + (joins if find(root) != root else [])
    out = []
    if not any(joins_all) and not pods:
        return [font("device subnets unknown (no prefix): reachability is not modelled",
                     color=st.MUTED)]
    for root, members in groups.items():
        if len(members) < 2:
            continue
        how = []
        for j in dict.fromkeys(via.get(root, [])):
            if j.startswith("fab:"):
                how.append("routed fabric" if net.assumed else
                           "fabric " + " + ".join(net.model.component_fabrics.get(int(j[4:]), [])))
            elif j.startswith("pod:"):
                how.append(f"super pod {j[4:]} (HCCS)")
            else:
                how.append(f"shared subnet {j[4:]}")
        shown = ", ".join(members[:4]) + (f" ... ({len(members)})" if len(members) > 4 else "")
        out.append(text(f"reach each other: {shown}, via {', '.join(how[:3])}"))
    alone = [m[0] for m in groups.values() if len(m) == 1]
    if alone and len(names) > 1:
        shown = ", ".join(alone[:6]) + (" ..." if len(alone) > 6 else "")
        out.append(font(f"reach no other server's NPUs: {shown}", color=st.ERROR))
    return out


def _family(g: Graph, topo, net: _Net, marks: Marks, block, hosts, joins_all, pods) -> None:
    members = block.members
    first, last = members[0], members[-1]
    fid = f"fam:{block.name}"
    parts = [font(block.name, bold=True, size=13),
             text(f"{plural(len(members), 'server')}; {num(block.hidden)} not drawn")]
    if first.host_ip is not None and last.host_ip is not None:
        parts.append(text(f"hosts {first.host_ip} .. {last.host_ip}"
                          + (f" (NIC {first.nic})" if first.nic else "")))
    fd = sorted(first.devices, key=lambda d: d.device_id)
    ld = sorted(last.devices, key=lambda d: d.device_id)
    if fd and ld and fd[0].device_ip is not None and ld[-1].device_ip is not None:
        pre = f"/{fd[0].prefix}" if fd[0].prefix is not None else " (prefix unknown)"
        parts.append(text(f"device IPs {fd[0].device_ip} .. {ld[-1].device_ip}{pre}"))
    if fd and fd[0].gateway is not None:
        parts.append(text(f"gateways {fd[0].gateway} .. {ld[-1].gateway}"))
    shown = ", ".join(s.name for s, _ in block.shown)
    if shown:
        parts.append(font(f"drawn in full: {shown}", color=st.MUTED, size=10))
    diags = list(marks.family.get(block.name, ()))
    look = [st.FAMILY]
    if diags:
        parts.append(diag_line(diags))
    g.node(fid, st.style(*look, {"label": lines(parts)}))
    # the family meets the same host networks, fabrics and pods as its members
    seen_host: dict = {}
    seen_join: dict = {}
    seen_pod: dict = {}
    for s in members:
        hn = _host_net(topo, s)
        if hn is not None and hn[0] not in seen_host:
            seen_host[hn[0]] = hn[1]
        for d in s.devices:
            _sub, join, routed = net.device(s, d)
            if join is not None and join.startswith("fab:"):
                seen_join[join] = seen_join.get(join, 0) + 1
        if topo.preset.super_pod and s.super_pod_id is not None:
            seen_pod.setdefault(s.super_pod_id)
    for hid, label in seen_host.items():
        hosts.setdefault(hid, (label, []))[1].append(fid)
    for join, n in seen_join.items():
        joins_all.setdefault(join, []).append((fid, n))
    if len(seen_pod) <= 4:
        for pod in seen_pod:
            pods.setdefault(pod, []).append(fid)
    else:
        # the pods of the members drawn in full: the family box holds their pod mates
        for pod in dict.fromkeys(s.super_pod_id for s, _ in block.shown):
            if pod is not None:
                pods.setdefault(pod, []).append(fid)
        pids = list(seen_pod)
        parts_pod = f"super pods {pids[0]} .. {pids[-1]} ({len(pids)}), HCCS inside each"
        g.node(fid + ":pods", st.style({"shape": "box", "style": "rounded,filled",
                                        "fillcolor": "#F3EAF7", "color": "#CC79A7"},
                                       {"label": lines([text(parts_pod)])}))
        g.edge(fid, fid + ":pods", {"color": "#CC79A7"})
