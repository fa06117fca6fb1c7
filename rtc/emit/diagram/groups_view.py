"""The groups view: per job, the [DP x PP x PCP x TP] grid engineers draw by hand.

One HTML-like table per job: a row per (DP, PP, PCP) coordinate -- which is exactly one
TP group -- and a column per TP rank. Each cell holds the global rank, its server and
device, filled with the server's colour; the last column names the servers of the row's
TP group, in the warning colour with the link when it crosses servers. Ranks without a
device are grey. Above ``--collapse-above`` ranks, only the first DP replicas, the last
one and replicas touching servers with diagnostics are drawn; an ellipsis row counts the
others (and very wide TP is cut the same way).
"""

from __future__ import annotations

from rtc.emit.diagram import style as st
from rtc.emit.diagram.common import SEVERITY_COLOR, font, legend, diagnostics_panel, lines, \
    title
from rtc.emit.diagram.dot import Graph, Html, text
from rtc.emit.diagram.model import (Marks, Options, inter_link, job_kind, job_sizes, kv_links, num,
                                    plural, selected_jobs, worst)

HEAD_DP = 2        # DP replicas shown first when collapsed
MAX_EXTRA = 3      # replicas with flagged servers shown in addition
TP_HEAD, TP_TAIL = 8, 2   # TP columns kept when TP is wider than 16


def job_id(name: str) -> str:
    return f"job:{name}"


def _coords_table(pl, rows_wanted: set | None) -> dict:
    """(dp, pp, pcp) -> {tp: rank} for the wanted rows (None: every row)."""
    s = pl.sizes
    out: dict = {}
    if pl.layout == "vllm":
        keys = rows_wanted if rows_wanted is not None else [
            (d, p, c) for d in range(s.dp) for p in range(s.pp) for c in range(s.pcp)]
        for d, p, c in keys:
            base = ((d * s.pp + p) * s.pcp + c) * s.tp
            out[(d, p, c)] = {t: base + t for t in range(s.tp)}
        return out
    for r in range(pl.world):
        co = pl.coords(r)
        key = (co.dp, co.pp, co.pcp)
        if rows_wanted is None or key in rows_wanted:
            out.setdefault(key, {})[co.tp] = r
    return out


def _table(ctx, job) -> tuple[Html, list]:
    """The job's grid as one HTML table, and the (server, fill) pairs its cells used."""
    topo = ctx["topo"]
    pl = topo.placement(job)
    s = pl.sizes
    collapsed = pl.world > ctx["threshold"]
    dps = _drawn_dps(topo, ctx["marks"], pl, collapsed)
    tps = _drawn_tps(s.tp)
    wanted = {(d, p, c) for d in dps for p in range(s.pp) for c in range(s.pcp)}
    table = _coords_table(pl, wanted if collapsed else None)
    lead = 1 + (s.pp > 1) + (s.pcp > 1)
    ncols = lead + len(tps) + (1 if len(tps) < s.tp else 0) + 1
    used_servers: dict = {}
    out = ['<table border="0" cellborder="1" cellspacing="0" cellpadding="4" color="#888888" '
           'bgcolor="white">']
    out.extend(_title_rows(job, pl, ncols))
    out.append(_header_row(s, tps))
    out.extend(_replica_rows(ctx, pl, table, dps, tps, ncols, used_servers))
    out.extend(_tail_rows(pl, dps, ncols))
    out.extend(f'<tr><td colspan="{ncols}" align="left">{text(line)}</td></tr>'
               for line in ctx["costs"].get(job.name, ()))
    out.append("</table>")
    return Html("".join(out)), list(used_servers.items())


def _drawn_dps(topo, marks: Marks, pl, collapsed: bool) -> list[int]:
    """The DP replicas to draw: all, or when collapsed the first, the last and a few
    touching servers with diagnostics."""
    s = pl.sizes
    dps = list(range(s.dp))
    if collapsed and s.dp > HEAD_DP + 1:
        keep = dict.fromkeys(list(range(HEAD_DP)) + [s.dp - 1])
        flagged = [n for n in pl.nodes if marks.of_server(topo.server(n.name))]
        extra = 0
        for n in flagged:
            for r in (n.ranks if len(n.ranks) else ()):
                d = pl.coords(r).dp
                if d not in keep and extra < MAX_EXTRA:
                    keep[d] = None
                    extra += 1
                break
        dps = sorted(keep)
    return dps


def _drawn_tps(tp: int) -> list[int]:
    """The TP columns to draw: all, or the first and last few when TP is wider than 16."""
    tps = list(range(tp))
    if tp > 16:
        tps = list(range(TP_HEAD)) + list(range(tp - TP_TAIL, tp))
    return tps


def _title_rows(job, pl, ncols: int) -> list[str]:
    """The job's name and sizes, then a note on how ranks are numbered."""
    sizes = (f" ({job_kind(job)}): {job_sizes(job)} = {plural(pl.world, 'rank')} on "
             f"{plural(len(pl.nodes), 'server')}")
    head = font(f"job {job.name}", bold=True, size=13) + text(sizes)
    note = _model_note(pl)
    return [f'<tr><td colspan="{ncols}" border="0" align="left">{head}</td></tr>',
            f'<tr><td colspan="{ncols}" border="0" align="left">'
            f'{font(note, color=st.MUTED, size=10)}</td></tr>']


def _header_row(s, tps: list[int]) -> str:
    """The column heads: DP (PP, PCP), a TP rank each, and the TP group's servers."""
    hdr = ['<td bgcolor="#EEEEEE"><b>DP</b></td>']
    if s.pp > 1:
        hdr.append('<td bgcolor="#EEEEEE"><b>PP</b></td>')
    if s.pcp > 1:
        hdr.append('<td bgcolor="#EEEEEE"><b>PCP</b></td>')
    for i, t in enumerate(tps):
        if i == TP_HEAD and len(tps) < s.tp:
            hdr.append('<td bgcolor="#EEEEEE">...</td>')
        hdr.append(f'<td bgcolor="#EEEEEE"><b>TP {t}</b></td>')
    hdr.append('<td bgcolor="#EEEEEE"><b>TP group on</b></td>')
    return "<tr>" + "".join(hdr) + "</tr>"


def _replica_rows(ctx, pl, table: dict, dps: list[int], tps: list[int], ncols: int,
                  used: dict) -> list[str]:
    """A row per TP group of each drawn DP replica, with an ellipsis row for each gap."""
    s = pl.sizes
    span = s.pp * s.pcp
    out = []
    prev = None
    for d in dps:
        if prev is not None and d != prev + 1:
            gap = d - prev - 1
            what = (f"... DP {prev + 1} .. {d - 1}: {plural(gap, 'more replica')} "
                    f"({num(gap * span * s.tp)} ranks), same pattern")
            out.append(f'<tr><td colspan="{ncols}" bgcolor="{st.FAMILY_FILL}">{text(what)}'
                       "</td></tr>")
        prev = d
        for p in range(s.pp):
            for c in range(s.pcp):
                out.append(_group_row(ctx, pl, table.get((d, p, c), {}), (d, p, c), tps, used))
    return out


def _group_row(ctx, pl, ranks: dict, coord: tuple, tps: list[int], used: dict) -> str:
    """One TP group: its coordinate cells, a cell per drawn TP rank, and its servers."""
    s = pl.sizes
    d, p, c = coord
    row = []
    if p == 0 and c == 0:
        row.append(f'<td rowspan="{s.pp * s.pcp}" bgcolor="#EEEEEE"><b>{d}</b></td>')
    if s.pp > 1 and c == 0:
        row.append(f'<td rowspan="{s.pcp}" bgcolor="#EEEEEE">{p}</td>')
    if s.pcp > 1:
        row.append(f'<td bgcolor="#EEEEEE">{c}</td>')
    for i, t in enumerate(tps):
        if i == TP_HEAD and len(tps) < s.tp:
            row.append(f'<td>{text(f"{s.tp - TP_HEAD - TP_TAIL} more")}</td>')
        r = ranks.get(t)
        row.append(_cell(ctx["topo"], ctx["marks"], pl, r, used))
    row.append(_group_servers_cell(ctx["topo"], pl, ranks))
    return "<tr>" + "".join(row) + "</tr>"


def _group_servers_cell(topo, pl, ranks: dict) -> str:
    """The servers of one TP group; in the warning colour, with the link, when several."""
    servers: dict = {}
    for t in range(pl.sizes.tp):
        r = ranks.get(t)
        if r is not None and pl.rank_node[r] >= 0:
            servers.setdefault(pl.nodes[pl.rank_node[r]].name)
    names = list(servers)
    if len(names) > 1:
        shown = ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
        via = font("crosses servers: " + inter_link(topo, names), color=st.WARNING, size=9)
        return (f'<td align="left">{font(shown, color=st.WARNING, bold=True)}'
                f"<br/>{via}</td>")
    return f'<td align="left">{text(names[0] if names else "no device")}</td>'


def _tail_rows(pl, dps: list[int], ncols: int) -> list[str]:
    """After the last drawn replica: how many more follow, and the idle devices."""
    s = pl.sizes
    out = []
    prev = dps[-1] if dps else None
    if prev is not None and prev < s.dp - 1:
        gap = s.dp - 1 - prev
        what = f"... {plural(gap, 'more replica')}"
        out.append(f'<tr><td colspan="{ncols}" bgcolor="{st.FAMILY_FILL}">{text(what)}</td></tr>')
    idle = [(n.name, n.idle_devices) for n in pl.nodes if n.idle_devices]
    if idle:
        txt = "; ".join(f"{name} NPU {', '.join(map(str, ids[:8]))}" for name, ids in idle[:4])
        out.append(f'<tr><td colspan="{ncols}" border="0" align="left">'
                   f'{font("idle devices: " + txt, color=st.IDLE_TEXT)}</td></tr>')
    return out


def _model_note(pl) -> str:
    if pl.layout == "megatron":
        return f"Megatron order {pl.order}; rows are TP groups (one row = DP, PP, PCP coordinates)"
    if pl.moe:
        return "rank = ((dp*PP + pp)*PCP + pcp)*TP + tp; each row is one TP group"
    return ("dense model: every DP replica is its own world; rank = ((dp*PP + pp)*PCP + pcp)"
            "*TP + tp; each row is one TP group")


def _cell(topo, marks: Marks, pl, r, used: dict) -> str:
    if r is None:
        return "<td></td>"
    n = pl.rank_node[r]
    if n < 0:
        used.setdefault("", st.IDLE_FILL)
        return (f'<td bgcolor="{st.IDLE_FILL}">{text(f"rank {r}")}<br/>'
                f'{font("no device", color=st.ERROR, size=9)}</td>')
    node = pl.nodes[n]
    dev = pl.device_of(r)
    server = topo.server(node.name)
    fill = st.server_fill(server.index if server is not None else node.index)
    used.setdefault(node.name, fill)
    diags = list(marks.server.get(node.name, ())) + list(marks.device.get((node.name, dev), ()))
    extra = ""
    if diags:
        sev = worst(diags)
        extra = "<br/>" + font(sev.label, color=SEVERITY_COLOR.get(sev), bold=True, size=9)
    return (f'<td bgcolor="{fill}">{text(f"rank {r}")}<br/>'
            f'{font(f"{node.name}:{dev}", size=9)}{extra}</td>')


def build(topo, diagnostics, opts: Options) -> str:
    marks = Marks.build(topo, diagnostics)
    jobs = selected_jobs(topo, opts.job)
    ctx = {"topo": topo, "marks": marks, "threshold": opts.threshold, "costs": opts.costs}
    npus = sum(len(s.devices) for s in topo.servers)
    extra = []
    if not jobs:
        extra.append(text("no job: parallel groups belong to jobs (add a `job NAME` block with "
                          "`servers` and `tp` lines)"))
    g = Graph("groups", graph=st.style(st.GRAPH, {"ranksep": "0.3", "label": title(
        topo, len(topo.servers), npus, extra)}), node=st.style(st.NODE, st.PANEL))
    ids = []
    servers_seen: dict = {}
    for job in jobs:
        try:
            label, used = _table(ctx, job)
        except Exception as exc:  # noqa: BLE001 - a broken job still gets a box
            label = lines([font(f"job {job.name}", bold=True),
                           text(f"no groups: {exc}")])
            used = []
        for name, fill in used:
            servers_seen.setdefault(name, fill)
        g.node(job_id(job.name), {"label": label})
        ids.append(job_id(job.name))
    for link in kv_links(topo, jobs):
        g.edge(job_id(link.prefill.name), job_id(link.decode.name),
               st.style(st.KV_EDGE, {"xlabel": link.label}))
    no_device = servers_seen.pop("", None) is not None
    rows = [(f'<td bgcolor="{fill}" width="40" height="12" fixedsize="true"></td>',
             text(_server_text(topo, name))) for name, fill in list(servers_seen.items())[:12]]
    if len(servers_seen) > 12:
        rows.append(("<td></td>", text(f"... {plural(len(servers_seen) - 12, 'more server')} "
                                       "(colours repeat)")))
    if no_device:
        rows.append((f'<td bgcolor="{st.IDLE_FILL}" width="40" height="12" fixedsize="true">'
                     "</td>", text("rank without a device")))
    if rows:
        g.node("legend", {"label": legend(rows)})
        ids.append("legend")
    box = diagnostics_panel(marks.listed)
    if box is not None:
        g.node("diagnostics", {"label": box})
        ids.append("diagnostics")
    for a, b in zip(ids, ids[1:]):
        g.edge(a, b, st.LAYOUT_EDGE)
    return g.source()


def _server_text(topo, name: str) -> str:
    s = topo.server(name)
    if s is None or s.host_ip is None:
        return name
    return f"{name} ({s.host_ip})"
