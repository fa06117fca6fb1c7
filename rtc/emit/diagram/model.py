"""What the diagram views share: options, where each diagnostic belongs, the per-job
rank and group lookups, and the collapse plan for large clusters.

Everything here is linear in the cluster (or in the servers actually drawn) and
deterministic: lists keep declaration order, dicts insertion order, nothing iterates a
set.
"""

from __future__ import annotations

from rtc.textfmt import format_ids

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from rtc.diagnostics import Diagnostic, Severity, sorted_diagnostics
from rtc.plan.disaggregation import pd_pairs

VIEWS = ("topology", "groups", "network")
DIMS = ("tp", "pp", "dp", "ep", "pcp")
DIM_LABEL = {"tp": "TP", "pp": "PP", "dp": "DP", "ep": "EP", "pcp": "PCP"}

#: Default: clusters with more NPUs than this are drawn with families collapsed.
COLLAPSE_ABOVE = 256
#: A family is collapsed only when it has at least this many members.
MIN_FAMILY = 4
#: At most this many members of one collapsed family are drawn in full.
MAX_SHOWN = 8


@dataclass(frozen=True)
class Options:
    """What to draw. ``job`` None: every job. ``collapse_above``: NPU count above which
    families collapse (None: :data:`COLLAPSE_ABOVE`). ``unreachable``: device pairs the
    network checks found unreachable, drawn as red edges
    (:func:`rtc.checks.peer_reachability.unreachable_examples`). ``costs``: job name ->
    lines of text the groups view prints under the job's grid (``rtc diagram --cost``)."""

    view: str = "topology"
    job: str | None = None
    dim: str = "tp"
    collapse_above: int | None = None
    unreachable: tuple = ()
    costs: Mapping = field(default_factory=dict)

    @property
    def threshold(self) -> int:
        return COLLAPSE_ABOVE if self.collapse_above is None else self.collapse_above


# --------------------------------------------------------------------------- text


def num(n: int) -> str:
    """16384 -> '16,384'."""
    return f"{n:,}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{num(n)} {word if n == 1 else (many or word + 's')}"


def ranges(ids) -> str:
    """[0,1,2,3,5,7,8] -> '0..3, 5, 7, 8' (:func:`rtc.textfmt.format_ids`)."""
    return format_ids(ids)


def shorten(s: str, limit: int) -> str:
    return s if len(s) <= limit else s[: limit - 3].rstrip() + "..."


# --------------------------------------------------------------------------- diagnostics


@dataclass
class Marks:
    """Diagnostics (errors and warnings) by the element they concern.

    ``subject`` is read first (``server X``, ``server X, device N``, ``job J, server X``);
    a diagnostic without a usable subject falls back to its span when that span is the
    attribute of exactly one server (or of one family); the rest concern the cluster or
    a job as a whole (``general``). ``listed`` holds them all, in report order."""

    device: dict = field(default_factory=dict)   # (server, device id) -> [Diagnostic]
    server: dict = field(default_factory=dict)   # server name -> [Diagnostic]
    family: dict = field(default_factory=dict)   # family name -> [Diagnostic]
    general: list = field(default_factory=list)
    listed: list = field(default_factory=list)

    @classmethod
    def build(cls, topo, diagnostics) -> "Marks":
        m = cls()
        shown = [d for d in sorted_diagnostics(diagnostics) if d.severity >= Severity.WARNING]
        m.listed = shown
        if topo is None:
            m.general = list(shown)
            return m
        spans = None
        for d in shown:
            target = _subject_target(topo, d.subject)
            if target is None and d.span is not None:
                if spans is None:
                    spans = _span_index(topo)
                target = spans.get((d.span.file, d.span.line, d.span.column))
            if target is None:
                m.general.append(d)
            elif target[0] == "device":
                m.device.setdefault((target[1], target[2]), []).append(d)
            elif target[0] == "devices":
                for dev in target[2]:
                    m.device.setdefault((target[1], dev), []).append(d)
            elif target[0] == "server":
                m.server.setdefault(target[1], []).append(d)
            else:
                m.family.setdefault(target[1], []).append(d)
        return m

    def of_server(self, server) -> list[Diagnostic]:
        """Diagnostics on the server itself or on one of its devices."""
        out = list(self.server.get(server.name, ()))
        for dev in server.devices:
            out.extend(self.device.get((server.name, dev.device_id), ()))
        return out

    def server_names(self) -> list[str]:
        names = dict.fromkeys(self.server)
        for s, _ in self.device:
            names.setdefault(s)
        return list(names)


def _subject_target(topo, subject: str | None):
    if not subject:
        return None
    server = device = None
    many = False
    for part in (p.strip() for p in subject.split(",")):
        if part.startswith("server "):
            server, many = part[len("server "):].strip(), False
        elif part.startswith("servers "):
            many = True
        elif part.startswith("devices "):
            # "server X, devices 0..3, 5": every listed device (the rest of the subject)
            import re

            listed = subject.split("devices ", 1)[1]
            device = [n for a, b in re.findall(r"(\d+)(?:\.\.(\d+))?", listed)
                      for n in range(int(a), int(b or a) + 1)]
            break
        elif part.startswith("device "):
            try:
                device = int(part[len("device "):].split()[0])
            except (ValueError, IndexError):
                device = None
    if many or server is None:
        return None
    s = topo.server(server)
    if s is None:
        return None
    if isinstance(device, list):
        return ("devices", s.name, [n for n in device if s.device(n) is not None])
    if device is not None and s.device(device) is not None:
        return ("device", s.name, device)
    return ("server", s.name)


def _span_index(topo) -> dict:
    """(file, line, column) -> target, for spans that identify one server or one family."""
    seen: dict = {}
    for s in topo.servers:
        keys = dict.fromkeys([s.span] + list(s.spans.values()))
        for sp in keys:
            k = (sp.file, sp.line, sp.column)
            got = seen.get(k)
            if got is None:
                seen[k] = [s.name, s.family, 1]
            else:
                got[2] += 1
                if got[1] != s.family:
                    got[1] = None
    out = {}
    for k, (name, family, count) in seen.items():
        if count == 1:
            out[k] = ("server", name)
        elif family is not None:
            out[k] = ("family", family)
    return out


def worst(diags) -> Severity | None:
    return max((d.severity for d in diags), default=None)


def codes(diags, limit: int = 3) -> str:
    got = list(dict.fromkeys(d.code for d in diags))
    text = ", ".join(got[:limit])
    return text + (f" +{len(got) - limit}" if len(got) > limit else "")


# --------------------------------------------------------------------------- jobs


@dataclass
class GroupInfo:
    """One group of the chosen kind: index (creation order), size, and its members per
    server (server name -> ranks, in the order the group lists them)."""

    index: int
    size: int
    parts: dict

    @property
    def crossing(self) -> bool:
        return len(self.parts) > 1


class JobView:
    """A job's placement seen from the devices: which rank runs where, which group of
    kind ``dim`` each rank is in, and whether that group crosses servers."""

    def __init__(self, topo, job, dim: str):
        self.topo = topo
        self.job = job
        self.dim = dim
        self.problem: str | None = None
        self.pl = None
        self._groups: dict[int, GroupInfo] = {}
        try:
            self.pl = topo.placement(job)
        except Exception as exc:  # noqa: BLE001 - an inconsistent job is drawn without groups
            self.problem = f"no placement: {exc}"
            self.nodes = {}
            self.pos_rank = []
            self.has_dim = False
            return
        pl = self.pl
        self.nodes = {n.name: n for n in pl.nodes}
        self.pos_rank = [-1] * len(pl.position_node)
        for r, p in enumerate(pl.rank_position):
            if 0 <= p < len(self.pos_rank):
                self.pos_rank[p] = r
        self.has_dim = dim in pl.dims
        if not self.has_dim:
            self.problem = pl.why_absent(dim) if dim in ("tp", "pcp", "pp", "dp", "ep") \
                else f"unknown group kind {dim}"

    @property
    def label(self) -> str:
        return DIM_LABEL.get(self.dim, self.dim.upper())

    @property
    def dim_size(self) -> int:
        if not self.has_dim:
            return 0
        if self.dim == "ep":
            return self.job.dp * self.job.pcp * self.job.tp
        return getattr(self.job, self.dim)

    def at(self, server: str, device_id: int) -> tuple[int, int] | None:
        """(rank_id in the job's table, framework rank or -1 when idle) of a device."""
        n = self.nodes.get(server)
        if n is None:
            return None
        try:
            slot = n.device_ids.index(device_id)
        except ValueError:
            return None
        pos = n.first_position + slot
        return pos, (self.pos_rank[pos] if pos < len(self.pos_rank) else -1)

    def group(self, rank: int) -> GroupInfo | None:
        """The ``dim`` group of ``rank`` (None without groups of that kind)."""
        if not self.has_dim or rank < 0:
            return None
        pl = self.pl
        gi = pl.group_index(self.dim, rank)
        got = self._groups.get(gi)
        if got is None:
            members = pl.groups(self.dim)[gi]
            parts: dict = {}
            node, nodes = pl.rank_node, pl.nodes
            for r in members:
                n = node[r]
                if n >= 0:
                    parts.setdefault(nodes[n].name, []).append(r)
            got = self._groups[gi] = GroupInfo(gi, len(members), parts)
        return got

    def crossing_summary(self) -> tuple[int, int, list | None]:
        """(groups, groups crossing servers, first crossing group's members)."""
        if not self.has_dim:
            return 0, 0, None
        return self.pl.crossing(self.dim)

    def link(self, servers: list[str]) -> str:
        """The link a group on ``servers`` must use."""
        preset = self.topo.preset
        if len(servers) <= 1:
            return preset.intra_server_link
        return inter_link(self.topo, servers)


def inter_link(topo, servers: list[str]) -> str:
    preset = topo.preset
    if preset.super_pod:
        pods = list(dict.fromkeys(topo.server(s).super_pod_id for s in servers))
        if len(pods) == 1 and pods[0] is not None:
            fabric = "UB" if preset.is_a5 else "HCCS"  # Ascend 950 pods: UB switches
            return f"{fabric} within super pod {pods[0]}"
        return "RoCE between super pods"
    return preset.inter_server_link


def job_sizes(job) -> str:
    parts = [f"{DIM_LABEL[k]}{getattr(job, k)}" for k in ("dp", "pp", "pcp", "tp")
             if getattr(job, k) != 1]
    return " x ".join(parts) if parts else "TP1"


def job_kind(job) -> str:
    bits = [job.framework]
    if job.framework != "megatron":
        bits.append("dense" if job.model_kind == "dense" else "MoE")
        if job.expert_parallel and job.model_kind != "dense":
            bits.append("expert parallel")
    return ", ".join(bits)


class KvLink(NamedTuple):
    """One prefill -> decode KV-cache transfer to draw: the two jobs and the edge label
    (``KV cache prefill -> decode (mooncake); servers linked by RoCE``)."""

    prefill: object
    decode: object
    label: str


def kv_links(topo, jobs) -> list[KvLink]:
    """The prefill -> decode pairs of ``topo``'s disaggregations
    (:func:`rtc.plan.disaggregation.pd_pairs`: the ``disaggregation`` blocks, else every
    ``role prefill`` job with every ``role decode`` job) whose two jobs are both among
    ``jobs`` (the drawn ones), each once, in source order."""
    drawn = {id(j) for j in jobs}
    out: list[KvLink] = []
    seen: set = set()
    for pair in pd_pairs(topo):
        for p in pair.prefill:
            for d in pair.decode:
                key = (id(p), id(d))
                if key in seen or id(p) not in drawn or id(d) not in drawn:
                    continue
                seen.add(key)
                out.append(KvLink(p, d, _kv_label(topo, p, d)))
    return out


def _kv_label(topo, p, d) -> str:
    """``KV cache P -> D (connector); servers linked by <the link between them>``."""
    connector = p.kv_connector or d.kv_connector
    servers = list(dict.fromkeys(x.server.name for j in (p, d) for x in j.placements))
    link = (f"both on {servers[0]}" if len(servers) == 1
            else f"servers linked by {inter_link(topo, servers)}" if servers else "no device")
    return (f"KV cache {p.name} -> {d.name}" + (f" ({connector})" if connector else "")
            + f"; {link}")


def selected_jobs(topo, job_name: str | None) -> list:
    if job_name is None:
        return [j for j in topo.jobs if j.placements]
    j = topo.job(job_name)
    return [j] if j is not None else []


# --------------------------------------------------------------------------- unreachable


def unreachable_pairs(opts: Options, jobs) -> list[tuple]:
    """The unreachable example pairs of ``opts`` (found by the network checks, RTC410) that
    belong to the drawn ``jobs``, as ((server, device id), (server, device id), group kind)."""
    names = {j.name for j in jobs} if jobs else None
    return [(a, b, kind) for a, b, kind, job in opts.unreachable
            if names is None or job is None or job in names]


# --------------------------------------------------------------------------- collapse


@dataclass
class FamilyBlock:
    """A collapsed family: every member, the members drawn in full with why, and flagged
    members left out of the drawing (beyond :data:`MAX_SHOWN`)."""

    name: str
    members: list
    shown: list = field(default_factory=list)      # [(Server, reason)]
    left_out: list = field(default_factory=list)   # [(Server, reason)]

    @property
    def hidden(self) -> int:
        return len(self.members) - len(self.shown)


@dataclass
class Plan:
    """Drawing order: ("server", Server) and ("family", FamilyBlock) items."""

    items: list
    collapsed: bool
    npus: int

    def drawn_servers(self) -> list:
        out = []
        for kind, obj in self.items:
            if kind == "server":
                out.append(obj)
        return out

    def family_of(self) -> dict:
        """server name -> FamilyBlock, for members not drawn."""
        out = {}
        for kind, obj in self.items:
            if kind == "family":
                shown = {s.name for s, _ in obj.shown}
                for s in obj.members:
                    if s.name not in shown:
                        out[s.name] = obj
        return out


def plan(topo, servers: list, threshold: int, reasons: dict) -> Plan:
    """Which servers to draw. ``reasons`` maps server names to (priority, why) for servers
    that must be drawn in full (diagnostics, cross-server group boundaries, unreachable
    pairs; lower priority first when there are more than :data:`MAX_SHOWN`). Families
    collapse only when the NPUs drawn exceed ``threshold``."""
    npus = sum(len(s.devices) for s in servers)
    if npus <= threshold:
        return Plan([("server", s) for s in servers], False, npus)
    families: dict[str, list] = {}
    for s in servers:
        if s.family is not None:
            families.setdefault(s.family, []).append(s)
    collapsible = {f for f, ms in families.items() if len(ms) >= MIN_FAMILY}
    items: list = []
    done: set = set()
    for s in servers:
        fam = s.family if s.family in collapsible else None
        if fam is None:
            items.append(("server", s))
            continue
        if fam in done:
            continue
        done.add(fam)
        members = families[fam]
        block = FamilyBlock(fam, members)
        flagged = sorted(((m, reasons[m.name]) for m in members if m.name in reasons),
                         key=lambda p: (p[1][0], p[0].index))
        first = members[0]
        picks = [] if first.name in reasons else [(first, "first member")]
        for m, (_prio, why) in flagged:
            (picks if len(picks) < MAX_SHOWN else block.left_out).append((m, why))
        picks.sort(key=lambda p: p[0].index)
        block.shown = picks
        items.append(("family", block))
        items.extend(("server", m) for m, _ in picks)
    return Plan(items, True, npus)
