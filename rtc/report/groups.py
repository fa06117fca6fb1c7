"""The communication groups of jobs, for people (text) and machines (JSON), as printed by
``rtc groups``. JSON documents follow ``schemas/groups.schema.json``.

Every member is shown as ``rank (server:device ip)``; groups whose members sit on more
than one server are marked. Output is deterministic (groups in the framework's creation
order, members in group order) and linear in the job's size: each rank's label is built
once and reused for every kind of group.
"""

from __future__ import annotations

from itertools import chain, repeat
from json.encoder import encode_basestring as _quote  # C escaper, as json.dumps uses

from rtc.parallel.placement import ALL_DIMS, JobPlacement
from rtc.textfmt import compact, ip_text, one_line_encoder

FORMAT = "rtc-groups/1"


def _sizes(job) -> str:
    return f"dp {job.dp} x pp {job.pp} x pcp {job.pcp} x tp {job.tp}"


def model_text(pl: JobPlacement) -> str:
    """How the model kind shapes the groups, in one sentence."""
    if pl.layout == "megatron":
        return (f"Megatron order {pl.order}: one world of {pl.world} ranks; "
                "tp, pcp (cp), pp and dp groups")
    if pl.moe:
        ep = "dp and ep groups apply" if pl.sizes.expert_parallel else \
            "dp groups apply; no ep group (expert_parallel off)"
        return f"MoE model: all DP replicas share one world of {pl.world} ranks; {ep}"
    return (f"dense model: every DP replica is its own world of {pl.replica_size} ranks; "
            "no dp or ep groups")


def node_text(pl: JobPlacement, n) -> str:
    ranks = n.ranks
    parts = [f"{n.name}: ranks " + (f"{ranks.start}..{ranks.stop - 1}" if len(ranks) > 1 else
                                     str(ranks.start) if len(ranks) else "none"),
             f"devices {_ids(n.device_ids)}"]
    if n.replica is not None:
        d, pos, count, _ = n.replica
        parts.append(f"DP replica {d} spans {count} servers (this is server {pos + 1} of "
                     f"{count}), data_parallel_start_rank {n.dp_start}")
    elif n.dp_local is not None:
        parts.append(f"dp_local {n.dp_local}{' (given)' if n.dp_local_given else ''}, "
                     f"data_parallel_start_rank {n.dp_start}")
    if n.idle_devices:
        parts.append(f"idle devices {_ids(n.idle_devices)}")
    if n.first_position != ranks.start and len(ranks):
        parts.append(f"rank_id of first device {n.first_position}")
    return ", ".join(parts)


def _ids(ids) -> str:
    return compact(list(ids), 8) or "none"


class _Labels:
    """Per-rank server name, device id and device IP text (``server``, ``device``,
    ``ip``: lists indexed by global rank, None for a rank without a device), computed
    once per job.

    Built per server with list operations rather than a Python step per rank: rank-table
    positions are each server's devices in server order
    (:func:`rtc.parallel.placement.place`), so a column per position, read through
    ``rank_position``, gives every rank's value."""

    def __init__(self, pl: JobPlacement):
        self.pl = pl
        servers: list = []
        devices: list = []
        ips: list = []
        for n in pl.nodes:
            k = len(n.device_ids)
            servers += [n.name] * k
            devices += n.device_ids
            got = list(map(ip_text, n.device_ips[:k]))
            ips += got + [None] * (k - len(got))
        for column in (servers, devices, ips):
            column.append(None)  # read by position -1: a rank without a device
        at = pl.rank_position
        missing = [None] * (pl.world - len(at))
        self.server = list(map(servers.__getitem__, at)) + missing
        self.device = list(map(devices.__getitem__, at)) + missing
        self.ip = list(map(ips.__getitem__, at)) + missing
        self._text: list | None = None
        self._members: list | None = None

    def text(self, r: int) -> str:
        if self._text is None:
            out = []
            for i in range(self.pl.world):
                s = self.server[i]
                if s is None:
                    out.append(f"{i} (no device)")
                elif self.ip[i] is None:
                    out.append(f"{i} ({s}:{self.device[i]})")
                else:
                    out.append(f"{i} ({s}:{self.device[i]} {self.ip[i]})")
            self._text = out
        return self._text[r]

    def member_texts(self) -> list[str]:
        """The one-line JSON text of every rank's member object, exactly
        ``_dump(_member(pl, self, r))``, made once per job and shared by every kind of
        group. Each distinct server name and device id is encoded once."""
        if self._members is None:
            rank_ids = [str(p) if p >= 0 else "null" for p in self.pl.rank_position]
            rank_ids += ["null"] * (self.pl.world - len(rank_ids))
            self._members = [
                f'{{"rank": {r}, "rank_id": {p}, "server": {s}, "device_id": {d}, '
                f'"device_ip": {ip}}}'
                for r, p, s, d, ip in zip(range(self.pl.world), rank_ids,
                                          _encoded_each(self.server),
                                          _encoded_each(self.device),
                                          _encoded_each(self.ip))]
        return self._members


def _encoded_each(values: list) -> list[str]:
    """``[_dump(v) for v in values]``: strings (names, device IPs) straight through the C
    escaper, as ``_dump`` does; other values (device ids, None) encoded once each."""
    others = {v: _dump(v) for v in set(values) if type(v) is not str}
    return [_quote(v) if type(v) is str else others[v] for v in values]


def _servers_of(pl: JobPlacement, group) -> list[str]:
    rn = pl.rank_node
    seen = dict.fromkeys(rn[r] for r in group)  # insertion-ordered, linear
    return [pl.nodes[n].name for n in seen if n >= 0]


def groups_text(topo, jobs, dims=ALL_DIMS) -> str:
    """Text for ``rtc groups``."""
    out: list[str] = []
    for job in jobs:
        pl = topo.placement(job)
        labels = _Labels(pl)
        if out:
            out.append("")
        out.append(f"job {job.name} (framework {job.framework}): {_sizes(job)} = {pl.world} ranks "
                   f"on {len(pl.nodes)} server{'s' if len(pl.nodes) != 1 else ''}")
        out.append(f"  {model_text(pl)}")
        for p in pl.problems:
            out.append(f"  note: {p}")
        for n in pl.nodes:
            out.append(f"  {node_text(pl, n)}")
        for dim in dims:
            out.append("")
            why = pl.why_absent(dim)
            if why is not None:
                out.append(f"{dim} groups: none ({why})")
                continue
            groups = pl.groups(dim)
            _, crossing, _ = pl.crossing(dim)
            size = len(groups[0]) if groups else 0
            out.append(f"{dim} groups: {len(groups)} of {size} rank{'s' if size != 1 else ''}, "
                       f"{crossing} cross servers")
            for i, g in enumerate(groups):
                servers = _servers_of(pl, g)
                mark = f"  crosses servers: {', '.join(servers)}" if len(servers) > 1 else \
                    (f"  on {servers[0]}" if servers else "")
                out.append(f"  {dim} {i}: [{', '.join(map(str, g))}]{mark}")
                for r in g:
                    out.append(f"    {labels.text(r)}")
    return "\n".join(out) + "\n"


def groups_document(topo, jobs, dims=ALL_DIMS, file: str | None = None) -> dict:
    """The JSON document for ``rtc groups --format json`` (schemas/groups.schema.json)."""
    return _document(topo, jobs, dims, file, encoded=False)


def groups_json(topo, jobs, dims=ALL_DIMS, file: str | None = None) -> str:
    """``render_json(groups_document(...))``, the same text, without building a dict per
    member of every group (5 per rank with every kind of group: ~330,000 at 65,536
    NPUs): each rank's member object is encoded once per job, every group's line is
    joined from those texts (:func:`_group_lines`) and the lines are written as they
    are."""
    return render_json(_document(topo, jobs, dims, file, encoded=True))


class _EncodedItems(list):
    """A list of JSON texts, one per item, each already one line (:func:`groups_json`);
    :func:`render_json` writes them as they are."""

    __slots__ = ()


def _document(topo, jobs, dims, file, *, encoded: bool) -> dict:
    doc_jobs = []
    for job in jobs:
        pl = topo.placement(job)
        labels = _Labels(pl)
        nodes = _nodes_document(pl)
        groups = {dim: _dim_document(pl, labels, dim, encoded) for dim in dims}
        doc_jobs.append({
            "job": job.name,
            "framework": job.framework,
            "layout": pl.layout,
            "order": pl.order,
            "model_kind": pl.model_kind,
            "expert_parallel": bool(job.expert_parallel),
            "model": model_text(pl),
            "sizes": {"dp": job.dp, "pp": job.pp, "pcp": job.pcp, "tp": job.tp,
                      "replica": pl.replica_size, "world": pl.world},
            "independent_replicas": pl.independent_replicas,
            "worlds": [{"first_rank": w.start, "size": len(w)} for w in pl.worlds],
            "aligned": pl.aligned,
            "notes": list(pl.problems),
            "nodes": nodes,
            "groups": groups,
        })
    return {"format": FORMAT, "file": file, "jobs": doc_jobs}


def _nodes_document(pl: JobPlacement) -> list:
    """The ``nodes`` of a job's document: one entry per server, in rank-table order."""
    nodes = []
    for n in pl.nodes:
        rep = None
        if n.replica is not None:
            rep = {"dp_rank": n.replica[0], "position": n.replica[1],
                   "servers": n.replica[2]}
        nodes.append({
            "server": n.name,
            "devices": list(n.device_ids),
            "first_rank_id": n.first_position,
            "first_rank": n.first_rank,
            "rank_count": n.placed,
            "dp_local": n.dp_local,
            "dp_start": n.dp_start,
            "dp_local_given": n.dp_local_given,
            "replica": rep,
            "idle_devices": list(n.idle_devices),
        })
    return nodes


def _member(pl: JobPlacement, labels: _Labels, r: int) -> dict:
    p = pl.rank_position[r]
    return {"rank": r, "rank_id": p if p >= 0 else None, "server": labels.server[r],
            "device_id": labels.device[r], "device_ip": labels.ip[r]}


def _dim_document(pl: JobPlacement, labels: _Labels, dim: str, encoded: bool = False) -> dict:
    """The ``groups[dim]`` entry of a job's document: why there are none, or every group
    with its members (``encoded``: the groups as one :class:`_EncodedItems`)."""
    why = pl.why_absent(dim)
    if why is not None:
        return {"present": False, "reason": why}
    groups = pl.groups(dim)
    if encoded:
        items, crossing = _group_lines(pl, labels, groups)
    else:
        items = []
        crossing = 0
        for i, g in enumerate(groups):
            servers = _servers_of(pl, g)
            cross = len(servers) > 1
            crossing += cross
            items.append({"index": i, "ranks": list(g), "cross_server": cross,
                          "servers": servers,
                          "members": [_member(pl, labels, r) for r in g]})
    return {"present": True, "count": len(items),
            "size": len(groups[0]) if groups else 0,
            "crossing": crossing, "groups": items}


def _group_lines(pl: JobPlacement, labels: _Labels, groups) -> tuple[_EncodedItems, int]:
    """(each group's one-line JSON text, exactly ``_dump`` of its dict in
    :func:`groups_document`; how many groups cross servers). Per group only C-level
    joins and lookups: member texts come from :meth:`_Labels.member_texts`, the
    ``servers`` text of a group on one server is encoded once per server."""
    members = labels.member_texts()
    names = [n.name for n in pl.nodes]
    alone = [_dump([name]) for name in names] + ["[]"]  # [-1]: a rank without a device
    rank_node = pl.rank_node
    if groups and max(map(len, groups)) == 1:
        return _single_rank_lines(pl, members, alone, groups), 0
    lines = _EncodedItems()
    crossing = 0
    for i, g in enumerate(groups):
        on = dict.fromkeys(map(rank_node.__getitem__, g))
        on.pop(-1, None)
        if len(on) == 1:
            (n,) = on
            servers, cross = alone[n], "false"
        else:
            servers, cross = _dump([names[n] for n in on]), "true" if on else "false"
            crossing += bool(on)
        lines.append(f'{{"index": {i}, "ranks": [{", ".join(map(str, g))}], '
                     f'"cross_server": {cross}, "servers": {servers}, "members": ['
                     f'{", ".join(map(members.__getitem__, g))}]}}')
    return lines, crossing


def _single_rank_lines(pl: JobPlacement, members: list[str], alone: list[str],
                       groups) -> _EncodedItems:
    """The lines of :func:`_group_lines` when every group has one rank (the pp groups of
    a job without pipeline stages, the pcp groups without context parallel: one group
    per rank), which never cross servers: one format per group."""
    servers = list(map(alone.__getitem__, pl.rank_node))
    return _EncodedItems(
        f'{{"index": {i}, "ranks": [{r}], "cross_server": false, "servers": {servers[r]}, '
        f'"members": [{members[r]}]}}' for i, (r,) in enumerate(groups))


_ONE_LINE_ITEMS = {"groups", "nodes", "worlds"}


#: One-line JSON text of a value (one encoder for the ~150,000 lines of a 65,536-NPU
#: document: json.dumps builds a new one per call).
_dump = one_line_encoder(ensure_ascii=False)


def render_json(doc: dict) -> str:
    """Deterministic JSON text: 2-space indent, except that every group, node and world
    is one line (compact and fast: the C encoder does each line). Ends with a newline."""
    out: list[str] = []
    dump = _dump

    def emit(value, indent: int, one_line_items: bool) -> None:
        pad = "  " * (indent + 1)
        if isinstance(value, dict) and value:
            out.append("{\n")
            for i, (k, v) in enumerate(value.items()):
                out.append(f"{pad}{dump(k)}: ")
                emit(v, indent + 1, k in _ONE_LINE_ITEMS)
                out.append(",\n" if i < len(value) - 1 else "\n")
            out.append("  " * indent + "}")
        elif type(value) is _EncodedItems and value:
            out.append("[\n" + pad)
            out.extend(chain.from_iterable(zip(value, repeat(",\n" + pad))))
            out[-1] = "\n" + "  " * indent + "]"
        elif isinstance(value, list) and value and (one_line_items or
                                                     any(isinstance(x, (dict, list)) for x in value)):
            out.append("[\n")
            for i, v in enumerate(value):
                out.append(pad)
                if one_line_items:
                    out.append(dump(v))
                else:
                    emit(v, indent + 1, False)
                out.append(",\n" if i < len(value) - 1 else "\n")
            out.append("  " * indent + "]")
        else:
            out.append(dump(value))

    emit(doc, 0, False)
    out.append("\n")
    return "".join(out)
