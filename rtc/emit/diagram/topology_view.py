"""The topology view: servers as clusters, NPUs as nodes, one kind of parallel group as
coloured outlines, diagnostics on the element they concern.

* A server is a cluster labelled with its name (and ``server_id`` when it is neither
  the name nor the host IP), host IP, NIC, hardware and super pod; an NPU is a node labelled with its device id, its
  ``rank_id`` in the job's rank table (prefixed with the job when several jobs are
  drawn), its device IP and, on A3, its super device id.
* The groups of ``--dim`` (default TP) are clusters inside the server: one colour per
  group (cycling through the palette). A group that crosses servers is drawn on every
  server it touches in the warning colour, dashed, and its parts are joined by an edge
  naming the link it must use (RoCE, or HCCS inside an A3 super pod).
* An NPU no rank runs on is grey ("idle"); a server or NPU with an error is outlined red
  and names the rule, with a warning in the warning colour; an unreachable device pair
  (RTC410) is a dashed red edge. Every error and warning is also listed in a panel.
* Above ``--collapse-above`` NPUs, each family of identical servers becomes one box that
  summarises it, and only its first member and its exceptions (servers with
  diagnostics, ends of unreachable pairs, the servers of the first cross-server group)
  are drawn in full.

NPUs of a server are laid out in a grid (A3: one column per chip, its two dies stacked;
8 NPUs: two rows of four) with invisible edges, servers side by side and wrapped.
"""

from __future__ import annotations

from rtc.diagnostics import Severity
from rtc.emit.diagram import style as st
from rtc.emit.diagram.common import (diag_line, diagnostics_panel, font, legend, lines,
                                     server_label, server_style, swatch, title)
from rtc.emit.diagram.dot import Graph, Html, text
from rtc.emit.diagram.model import (JobView, Marks, Options, inter_link, job_kind, job_sizes,
                                    kv_links, num, plan, plural, selected_jobs, unreachable_pairs,
                                    worst)

ROW_WIDTH = 16   # NPU columns per row of servers


def npu_id(server: str, device: int) -> str:
    return f"npu:{server}:{device}"


def server_cluster(server: str) -> str:
    return f"cluster_srv:{server}"


def header_id(server: str, column: int) -> str:
    return f"hdr:{server}:{column}"


def family_id(name: str) -> str:
    return f"fam:{name}"


class _Ctx:
    def __init__(self, topo, diagnostics, opts: Options):
        self.topo = topo
        self.opts = opts
        self.marks = Marks.build(topo, diagnostics)
        self.jobs = selected_jobs(topo, opts.job)
        self.views = [JobView(topo, j, opts.dim) for j in self.jobs]
        self.multi = len(self.views) > 1
        self.color_of: dict = {}       # (job, group index) -> colour index
        self.crossing_drawn: dict = {}  # (job, gi) -> [(server, tail node, head node)]
        self.corners: dict = {}         # server -> (top-left NPU node, top-right NPU node)
        self.hidden: dict = {}          # server name -> FamilyBlock (collapsed, not drawn)
        self.flags = {"idle": False, "groups": False, "crossing": False}
        self.unreachable = unreachable_pairs(opts, self.jobs)
        if opts.job is not None:
            used = {p.server.name for j in self.jobs for p in j.placements}
            self.servers = [s for s in topo.servers if s.name in used]
        else:
            self.servers = list(topo.servers)
        # without jobs: rank_id in the whole-cluster table
        self.table_first: dict[str, int] = {}
        if not topo.jobs:
            pos = 0
            for s, devs in topo.rank_table_members(None):
                self.table_first[s.name] = pos
                pos += len(devs)


def _reasons(ctx: _Ctx) -> dict:
    """server name -> (priority, why) for servers that must be drawn in full."""
    out: dict = {}

    def add(name, prio, why):
        if name not in out or out[name][0] > prio:
            out[name] = (prio, why)

    m = ctx.marks
    for name in m.server_names():
        s = ctx.topo.server(name)
        diags = m.of_server(s)
        sev = worst(diags)
        add(name, 0 if sev is Severity.ERROR else 1, f"{sev.label} {diags[0].code}")
    for a, b, _ in ctx.unreachable:
        add(a[0], 2, "unreachable pair")
        add(b[0], 2, "unreachable pair")
    for v in ctx.views:
        _total, count, first = v.crossing_summary()
        if count and first:
            names = [v.pl.server_of(r) for r in first]
            names = [n for n in dict.fromkeys(names) if n is not None]
            gi = v.pl.group_index(v.dim, first[0])
            for n in (names[0], names[-1]):
                add(n, 3, f"{v.label} group {gi} crosses servers")
    return out


def _grid_rows(topo, devices) -> list[list[int]]:
    """A server's NPUs as rows of a grid: A3 one column per chip (its two dies stacked),
    up to 4 NPUs one row, 8 NPUs two rows of four, more in rows of eight."""
    ids = [d.device_id for d in devices]
    if not ids:
        return []
    have = set(ids)
    pairs = topo.preset.die_pairs
    if pairs and len(ids) == 2 * len(pairs) and all(a in have and b in have for a, b in pairs):
        return [[a for a, _ in pairs], [b for _, b in pairs]]
    cols = len(ids) if len(ids) <= 4 else (4 if len(ids) <= 8 else 8)
    return [ids[i:i + cols] for i in range(0, len(ids), cols)]


def _npu(ctx: _Ctx, g: Graph, s, d, owner) -> None:
    """One NPU node. ``owner``: (JobView, rank_id, rank) or None."""
    m = ctx.marks
    diags = m.device.get((s.name, d.device_id), ())
    kind = "GPU" if ctx.topo.preset.is_gpu else "NPU"
    parts = [font(f"{kind} {d.device_id}", bold=True)]
    attrs = [st.NPU]
    idle = False
    if owner is not None:
        v, pos, rank = owner
        parts.append(text(f"{v.job.name} rank {pos}" if ctx.multi else f"rank {pos}"))
        if rank < 0:
            idle = True
            parts.append(font("idle", color=st.IDLE_TEXT))
        elif rank != pos:
            parts.append(font(f"runs rank {rank}", color=st.MUTED, size=9))
    elif s.name in ctx.table_first:
        pos = ctx.table_first[s.name] + [x.device_id for x in s.devices].index(d.device_id)
        parts.append(text(f"rank {pos}"))
    else:
        idle = True
        parts.append(font("idle", color=st.IDLE_TEXT))
    if d.device_ip is not None:
        parts.append(font(str(d.device_ip), color=st.MUTED, size=9))
    if d.super_device_id is not None:
        parts.append(font(f"sdid {d.super_device_id}", color=st.MUTED, size=9))
    if idle:
        ctx.flags["idle"] = True
        attrs.append(st.NPU_IDLE)
    if diags:
        parts.append(diag_line(diags))
        attrs.append(st.NPU_ERROR if worst(diags) is Severity.ERROR else st.NPU_WARNING)
    g.node(npu_id(s.name, d.device_id),
           st.style(*attrs, {"label": Html("<br/>".join(parts))}))


def _server(ctx: _Ctx, g: Graph, s, note: str | None) -> list[list[int]]:
    """One server cluster: its group clusters and NPUs, laid out in grid rows (returned)."""
    topo = ctx.topo
    diags = ctx.marks.of_server(s)
    extra = [font(note, color=st.MUTED, size=9)] if note else []
    c = g.subgraph(server_cluster(s.name),
                   st.style(st.SERVER, server_style(diags),
                            {"label": server_label(topo, s, ctx.marks.server.get(s.name, ())
                                                   or diags, extra)}))
    devices = sorted(s.devices, key=lambda d: d.device_id)
    owner = _owners(ctx, s, devices)
    rows = _grid_rows(topo, devices)
    at = {d: (r, c) for r, row in enumerate(rows) for c, d in enumerate(row)}
    if rows:
        ctx.corners[s.name] = (npu_id(s.name, rows[0][0]), npu_id(s.name, rows[0][-1]))
    parts, loose = _group_parts(owner, devices)
    for key, (v, info, devs) in parts.items():
        look, label = _group_look(ctx, s, key, v, info, devs, at)
        sub = c.subgraph(f"cluster_grp:{key[0]}:{v.dim}:{key[1]}:{s.name}",
                         st.style(st.GROUP, look, {"label": label}))
        for d in devs:
            _npu(ctx, sub, s, d, owner.get(d.device_id))
    for d in loose:
        _npu(ctx, c, s, d, owner.get(d.device_id))
    if not devices:   # an empty cluster would not be drawn at all
        c.node(f"npu:{s.name}:none", st.style(st.NPU_IDLE, {"label": "no NPUs"}))
    _column_order(c, s, rows)
    return rows


def _owners(ctx: _Ctx, s, devices) -> dict:
    """Device id -> (JobView, rank_id, rank) of the first drawn job that places it."""
    owner: dict = {}
    for v in ctx.views:
        if s.name not in v.nodes:
            continue
        for d in devices:
            got = v.at(s.name, d.device_id)
            if got is not None and d.device_id not in owner:
                owner[d.device_id] = (v, got[0], got[1])
    return owner


def _group_parts(owner: dict, devices) -> tuple[dict, list]:
    """The group parts on this server, in device order: {(job, group index): (JobView,
    GroupInfo, devices)}, and the devices in no group of two or more."""
    parts: dict = {}
    loose = []
    for d in devices:
        o = owner.get(d.device_id)
        info = o[0].group(o[2]) if o is not None and o[2] >= 0 else None
        if info is None or info.size < 2:
            loose.append(d)
            continue
        parts.setdefault((o[0].job.name, info.index), (o[0], info, []))[2].append(d)
    return parts, loose


def _group_look(ctx: _Ctx, s, key: tuple, v, info, devs, at: dict) -> tuple[dict, str]:
    """(look, label) of one group cluster; a crossing group also records where its part
    on this server is drawn."""
    job, gi = key
    if key not in ctx.color_of:
        ctx.color_of[key] = len(ctx.color_of)
    who = f"{job} " if ctx.multi else ""
    if info.crossing:
        ctx.flags["crossing"] = True
        servers = list(info.parts)
        k = servers.index(s.name) + 1 if s.name in servers else 0
        label = f"{who}{v.label} {gi} ({k}/{len(servers)}) via {v.link(servers)}"
        away = sum(1 for x in servers if x in ctx.hidden)
        if away:
            label += f"; {plural(away, 'server')} not drawn"
        look = st.GROUP_CROSSING
        top = min(at[d.device_id][0] for d in devs)
        row = sorted((at[d.device_id][1], d.device_id) for d in devs
                     if at[d.device_id][0] == top)
        ctx.crossing_drawn.setdefault(key, []).append(
            (s.name, npu_id(s.name, row[-1][1]), npu_id(s.name, row[0][1]), v, info))
    else:
        ctx.flags["groups"] = True
        color = st.group_color(ctx.color_of[key])
        label = f"{who}{v.label} {gi}"
        look = {"color": color, "fillcolor": st.tint(color), "fontcolor": "black"}
    return look, label


def _column_order(c: Graph, s, rows: list[list[int]]) -> None:
    """Column order: an invisible header row, chained left to right inside the server
    cluster (dot keeps flat edges of one cluster in order), above each NPU column."""
    heads = [header_id(s.name, k) for k in range(len(rows[0]))] if rows else []
    for h in heads:
        c.node(h, st.HEADER)
    for a, b in zip(heads, heads[1:]):
        c.edge(a, b, st.LAYOUT_EDGE)
    for h, d in zip(heads, rows[0] if rows else ()):
        c.edge(h, npu_id(s.name, d), st.LAYOUT_EDGE)
    for upper, lower in zip(rows, rows[1:]):
        for a, b in zip(upper, lower):
            c.edge(npu_id(s.name, a), npu_id(s.name, b), st.LAYOUT_EDGE)


def _family(ctx: _Ctx, g: Graph, block) -> None:
    topo = ctx.topo
    members = block.members
    first, last = members[0], members[-1]
    counts = list(dict.fromkeys(len(s.devices) for s in members))
    npus = sum(len(s.devices) for s in members)
    per = (f"{plural(counts[0], 'NPU')} each" if len(counts) == 1
           else "NPUs " + "/".join(map(str, counts)))
    parts = [font(block.name, bold=True, size=13),
             text(f"{plural(len(members), 'server')}, {per}, {plural(npus, 'NPU')}; "
                  f"{num(block.hidden)} not drawn")]
    if first.host_ip is not None and last.host_ip is not None:
        nic = f" ({first.nic})" if first.nic else ""
        parts.append(text(f"hosts {first.host_ip} .. {last.host_ip}{nic}"))
    ips = [d.device_ip for d in first.devices[:1] + last.devices[-1:]]
    if all(ip is not None for ip in ips) and first.devices and last.devices:
        parts.append(text(f"device IPs {ips[0]} .. {ips[1]}"))
    if first.super_pod_id is not None:
        pods = list(dict.fromkeys(s.super_pod_id for s in members))
        parts.append(text(f"super pods {pods[0]} .. {pods[-1]} ({len(pods)})"
                          if len(pods) > 1 else f"super pod {pods[0]}"))
    names = {s.name for s in members}
    for v in ctx.views:
        if v.pl is None:
            continue
        mine = [n for n in v.pl.nodes if n.name in names]
        if not mine:
            continue
        lo = min(n.first_position for n in mine)
        hi = max(n.first_position + n.device_count for n in mine) - 1
        dims = []
        for dim in v.pl.dims:
            size = (v.job.dp * v.job.pcp * v.job.tp) if dim == "ep" else getattr(v.job, dim)
            if size < 2:
                continue
            _t, count, grp = v.pl.crossing(dim)
            where = "inside each server" if not count else \
                f"across servers ({inter_link(topo, _servers_of(v, grp))})"
            dims.append(f"{dim.upper()}{size} {where}")
        parts.append(text(f"job {v.job.name}: ranks {num(lo)} .. {num(hi)}"
                          + (f"; {', '.join(dims)}" if dims else "")))
    shown = ", ".join(f"{s.name} ({why})" for s, why in block.shown)
    if shown:
        parts.append(font(f"drawn in full: {shown}", color=st.MUTED, size=10))
    if block.left_out:
        more = ", ".join(s.name for s, _ in block.left_out[:4])
        parts.append(font(f"also flagged, not drawn: {more}"
                          + (f" ... ({num(len(block.left_out))} in all)"
                             if len(block.left_out) > 4 else ""), color=st.WARNING))
    diags = list(ctx.marks.family.get(block.name, ()))
    look = [st.FAMILY]
    if diags:
        parts.append(diag_line(diags))
        look.append({"color": st.ERROR if worst(diags) is Severity.ERROR else st.WARNING,
                     "penwidth": "3"})
    g.node(family_id(block.name), st.style(*look, {"label": lines(parts)}))


def _servers_of(v: JobView, group) -> list[str]:
    if not group:
        return []
    return [n for n in dict.fromkeys(v.pl.server_of(r) for r in group) if n is not None]


def _title_lines(ctx: _Ctx) -> list[str]:
    topo = ctx.topo
    out = []
    if not topo.jobs:
        total = sum(len(d) for _, d in topo.rank_table_members(None))
        out.append(text(f"no job: one rank table of every NPU (rank 0 .. {total - 1})"))
    for v in ctx.views:
        j = v.job
        head = f"job {j.name} ({job_kind(j)}): {job_sizes(j)} = {plural(j.world_size, 'rank')}"
        head += f" on {plural(len(j.placements), 'server')}"
        if not v.has_dim:
            out.append(text(head) + font(f"; no {v.label} groups: {v.problem}", color=st.MUTED))
            continue
        total, count, first = v.crossing_summary()
        size = v.dim_size
        if size < 2:
            out.append(text(f"{head}; {v.label} {size}: every NPU is its own {v.label} group"))
            continue
        desc = f"{head}; {v.label} groups: {num(total)} of {size}"
        if count:
            out.append(text(desc + ", ") + font(
                f"{num(count)} {'crosses' if count == 1 else 'cross'} servers ({inter_link(ctx.topo, _servers_of(v, first))})",
                color=st.WARNING, bold=True))
        else:
            out.append(text(f"{desc}, each inside one server ({topo.preset.intra_server_link})"))
    return out


def _legend(ctx: _Ctx, collapsed: bool) -> Html | None:
    rows = []
    dim = ctx.views[0].label if ctx.views else ctx.opts.dim.upper()
    if ctx.flags["groups"]:
        rows.append((swatch(colors=st.GROUP_COLORS),
                     text(f"{dim} group inside one server ({ctx.topo.preset.intra_server_link}); "
                          "one colour per group")))
    if ctx.flags["crossing"]:
        rows.append((swatch(st.tint(st.WARNING, "33"), border=st.WARNING),
                     text(f"{dim} group crossing servers (dashed outline and edge, "
                          "named link)")))
    if ctx.flags["idle"]:
        rows.append((swatch(st.IDLE_FILL), text("idle NPU: no rank runs on it")))
    sev = worst(ctx.marks.listed)
    if sev is Severity.ERROR:
        rows.append((swatch(border=st.ERROR), text("error: server or NPU outlined red, rule id "
                                                   "in its label")))
    if any(d.severity is Severity.WARNING for d in ctx.marks.listed):
        rows.append((swatch(border=st.WARNING), text("warning: rule id in the warning colour")))
    if ctx.unreachable:
        rows.append((swatch(label=font("- - -", color=st.ERROR, bold=True)),
                     text("unreachable device pair (RTC410)")))
    if collapsed:
        rows.append((swatch(st.FAMILY_FILL, border="#33557A"),
                     text(f"family of identical servers, collapsed (more than "
                          f"{num(ctx.opts.threshold)} NPUs; --collapse-above)")))
    return legend(rows) if rows else None


def build(topo, diagnostics, opts: Options) -> str:
    ctx = _Ctx(topo, diagnostics, opts)
    p = plan(topo, ctx.servers, opts.threshold, _reasons(ctx))
    ctx.hidden = p.family_of() if p.collapsed else {}
    g = Graph("topology", graph=st.style(st.GRAPH, {"label": title(
        topo, len(ctx.servers), p.npus, _title_lines(ctx))}), node=st.NODE, edge=st.EDGE)
    # items, in rows of ROW_WIDTH NPU columns
    tops: list[tuple[str, str, int]] = []   # (top node, bottom node, columns) per item
    for kind, obj in p.items:
        if kind == "family":
            _family(ctx, g, obj)
            nid = family_id(obj.name)
            tops.append((nid, nid, ROW_WIDTH, []))
            continue
        note = None
        if p.collapsed and obj.family is not None:
            note = f"member {obj.family_index} of family {obj.family}"
        rows = _server(ctx, g, obj, note)
        if rows:
            tops.append((header_id(obj.name, 0), npu_id(obj.name, rows[-1][0]),
                         max(len(r) for r in rows),
                         [header_id(obj.name, k) for k in range(len(rows[0]))]))
    # cross-server groups: join consecutive drawn parts (one edge per pair of servers)
    # An edge always joins two members of one group: with several groups between the
    # same two servers, the first group's parts are joined and the edge says how many
    # groups it stands for (never two NPUs that share no group).
    links: dict = {}
    for (_job, gi), drawn in ctx.crossing_drawn.items():
        for x, y in zip(drawn, drawn[1:]):
            links.setdefault((x[0], y[0]), []).append((x[1], y[2], x[3], gi))
    for (sa, sb), items in links.items():
        tail, head, v, gi = items[0]
        look = st.CROSSING_EDGE
        if len(items) > 1:
            look = st.style(look, {"xlabel": f"{v.label} {gi} "
                                   f"(+{plural(len(items) - 1, 'more group')})"})
        g.edge(tail, head, look)
    drawn_names = {s.name for s in p.drawn_servers()}
    for a, b, kind in ctx.unreachable:
        if a[0] in drawn_names and b[0] in drawn_names:
            g.edge(npu_id(*a), npu_id(*b), st.style(st.UNREACHABLE_EDGE, {
                "xlabel": "unreachable" + (f" ({kind.upper()} group)" if kind not in
                                          ("", "table", "job") else "")}))
    _kv_edges(ctx, g, drawn_names)
    # panels under the drawing
    panels = []
    leg = _legend(ctx, p.collapsed)
    if leg is not None:
        g.node("legend", st.style(st.PANEL, {"label": leg}))
        panels.append("legend")
    box = diagnostics_panel(ctx.marks.listed)
    if box is not None:
        g.node("diagnostics", st.style(st.PANEL, {"label": box}))
        panels.append("diagnostics")
    _stack(g, tops, panels)
    return g.source()


def _kv_edges(ctx: _Ctx, g: Graph, drawn: set[str]) -> None:
    """One edge per prefill -> decode pair of the drawn jobs (:func:`kv_links`), from the
    prefill job's first drawn NPU to the decode job's, clipped to the two server boxes
    when they differ; a pair with a side on no drawn server is not drawn."""
    for link in kv_links(ctx.topo, ctx.jobs):
        ends = [_first_drawn(j, drawn) for j in (link.prefill, link.decode)]
        if None in ends:
            continue
        (sa, da), (sb, db) = ends
        look = st.style(st.KV_EDGE, {"xlabel": link.label})
        if sa != sb:
            look = st.style(look, {"ltail": server_cluster(sa), "lhead": server_cluster(sb)})
        g.edge(npu_id(sa, da), npu_id(sb, db), look)


def _first_drawn(job, drawn: set[str]) -> tuple[str, int] | None:
    """(server, device id) of ``job``'s first device on a drawn server, or None."""
    return next(((p.server.name, p.device_ids[0]) for p in job.placements
                 if p.server.name in drawn and p.device_ids), None)


def _stack(g: Graph, tops: list[tuple], panels: list[str]) -> None:
    """Wrap items into rows of about ROW_WIDTH NPU columns (invisible edges from each
    item's bottom NPU to the top NPU of the item below it), then the panels."""
    rows: list[list[tuple]] = []
    width = 0
    for item in tops:
        if rows and width + item[2] <= ROW_WIDTH:
            rows[-1].append(item)
            width += item[2]
        else:
            rows.append([item])
            width = item[2]
    for row in rows:
        heads = [h for it in row for h in it[3]]
        if len(heads) > 1:
            g.same_rank(heads)
    for upper, lower in zip(rows, rows[1:]):
        for i, below in enumerate(lower):
            above = upper[min(i, len(upper) - 1)]
            g.edge(above[1], below[0], st.LAYOUT_EDGE)
    if panels and rows:
        anchor = rows[-1][0][1]
        for pnl in panels:
            g.edge(anchor, pnl, st.LAYOUT_EDGE)
    if len(panels) > 1:
        g.same_rank(panels)
