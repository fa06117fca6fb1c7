"""``rtc import``: turn a version 1.0 / 1.2 rank table back into an rtc description.

The table is validated first (:func:`rtc.api.validate_source`, by :func:`rtc.api.import_table`); a table with
errors is refused (RTC660), as are other forms (RTC661) and layouts the language cannot
express (RTC662: ranks not in server order and device-id order, a server where only some
devices have a device_ip or a super_device_id, several addresses in one device_ip).

Servers become blocks in rank order. Runs of at least :data:`MIN_FAMILY` regular servers
become one ``family``: names ``PREFIX`` + consecutive index (zero-padded alike), the same
device set, and every value a function of the member index ``i`` (and the device id ``d``)
that one of these fits reproduces exactly:

* an integer per server (a host octet, a super pod, an SDID base): a constant, ``c + a*i``,
  ``c + (i + r)/m`` (steps every m servers), or ``c + a*((i + r)%m)`` (a ramp that restarts);
* device IPs: ``START step N`` with a START template in ``i`` (each octet fitted as above,
  or the whole 32-bit address ``S + A*i`` split into octets), else one template in ``i``
  and ``d`` per octet (``F(i) + G(d)`` with G one of ``b*d``, ``b*(d%m)``, ``b*(d/m)``,
  ``b*k``), else a list with one template in ``i`` per device;
* super device ids: ``base`` + device id, else one template, else a list.

The longest prefix of a run that fits becomes a family (binary search); the rest is tried
again. Other servers are written as plain ``server`` blocks with literal values (a step or
a template when the addresses follow one). No job is written: a description without jobs
compiles to the table of every device, which is the imported table.

Before anything is returned the description is compiled in-process and its table compared
with the input (servers, device ids, IPs, super device ids, super pods, host IPs in 1.2,
ranks); a difference is an internal error (RTC663) and nothing is written. Keys the
language has no attribute for are reported (RTC664) and dropped.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

from rtc.diagnostics import Diagnostic, Span, error, warning
from rtc.syntax.writer import Block, ClusterSource, device_set, is_word, render_source, word
from rtc.syntax.values import parse_family_name

from rtc.model.presets import Preset, presets
from rtc.model.topology import MAX_NAME_CHARS, file_name_problem, host_name_problem
from rtc.rules import rule

from .json_values import decimal

__all__ = ["describe_table", "round_trip_difference", "MIN_FAMILY", "fit_int", "fit_grid"]

IMPORT_INVALID = rule("RTC660", "import-invalid-table", "error",
                      "rtc import refuses a table with errors.", """
    What: the table has errors (`rtc validate` lists them), so there is nothing sound to
    turn into a cluster description.
    Why: a description that reproduces a broken table would only move the failure.
    Example: `rtc import hccl.json` where two devices share a device_ip.
    Fix: fix the findings (or regenerate the table), then import again.""")
IMPORT_FORM = rule("RTC661", "import-unsupported-form", "error",
                   "rtc import reads version 1.0, 1.2 and 2.0 rank tables only.", """
    What: the file is a PD table, a legacy group_list table or a topology file.
    Why: rtc compiles to version 1.0 / 1.2 / 2.0 tables; other forms cannot round-trip.
    Example: `rtc import pd-ranktable.json`.
    Fix: none in rtc; keep editing that file by hand (rtc validate still checks it).""")
IMPORT_SHAPE = rule("RTC662", "import-not-expressible", "error",
                    "The table has a layout the rtc language cannot express.", """
    What: e.g. ranks that do not follow server order and device id order, some devices of
    a server with a device_ip and others without, several addresses in one device_ip,
    super device ids on only some devices, or hardware whose table version differs; in a
    2.0 table also per-port EIDs, IP addresses at a UB level or plane_ids other than the
    preset's: the language has them (`port_eid`, `level_ip`, `plane`) but rtc import does
    not write them yet.
    Why: `rtc compile` numbers ranks in declaration order and gives every device of a
    server the same kinds of values; the description would compile to another table, and
    rtc writes no description it cannot compile back to the same table.
    Example: device 0 with rank 1 and device 1 with rank 0.
    Fix: renumber the table in rtc's order (servers by rank, devices ascending) first.""")
IMPORT_ROUND_TRIP = rule("RTC663", "import-round-trip", "error",
                         "The imported description does not compile back to the table.", """
    What: an internal check: rtc compiled the description it generated and the result
    differs from the input table, so nothing was written.
    Why: rtc never writes a description it cannot vouch for.
    Example: none expected; please report it with the table.
    Fix: report the bug; nothing was written.""")
IMPORT_DROPPED = rule("RTC664", "import-dropped-key", "warning",
                      "rtc import drops a key the rtc language has no attribute for.", """
    What: device_port, host_port, backup_device_ip/port, host_nic_ip, hardware_type,
    extension keys and the like, or host_ip in a 1.0 table (kept as `host`, which 1.0
    tables do not carry).
    Why: `rtc compile` will not write them, so the compiled table lacks them.
    Example: a table with "device_port": "16666" on every device.
    Fix: none needed when HCCL's defaults suit you; otherwise keep the original table.""")

#: Fewest servers written as a family (two servers read better as two blocks).
MIN_FAMILY = 3

_CANON_DEVICE = {"device_id", "device_ip", "rank_id", "super_device_id"}
_CANON_SERVER = {"server_id", "device", "host_ip", "container_ip"}
_CANON_TOP = {"status", "version", "server_count", "server_list", "super_pod_list"}


# --------------------------------------------------------------------------- fitting

def _lin(var: str, a: int, c: int) -> str:
    """``c + a*var`` written the way people do: ``i``, ``i + 3``, ``16*i - 15``, ``7 - i``."""
    if a == 0:
        return str(c)
    term = var if abs(a) == 1 else f"{abs(a)}*{var}"
    if a > 0:
        if c == 0:
            return term
        return f"{term} + {c}" if c > 0 else f"{term} - {-c}"
    return f"{c} - {term}" if c != 0 else f"0 - {term}"


def _plus(expr: str, c: int) -> str:
    if c == 0:
        return expr
    return f"{expr} + {c}" if c > 0 else f"{expr} - {-c}"


def _check(xs, ys, fn) -> bool:
    try:
        return all(fn(x) == y for x, y in zip(xs, ys))
    except ZeroDivisionError:
        return False


def fit_int(xs: list[int], ys: list[int], var: str = "i") -> str | None:
    """An expression in ``var`` giving ``ys[n]`` at ``xs[n]`` for every n (integer
    arithmetic, ``/`` is floor division), or None. Tried in order: constant, affine,
    steps of one every m (a super pod, an octet carry), a ramp that restarts every m.
    The last two need a whole period in the data, so a stray value is not "explained"
    by a contrived modulus."""
    if not ys:
        return None
    y0 = ys[0]
    if all(y == y0 for y in ys):
        return str(y0)
    if len(xs) < 2:
        return None
    x0, x1 = xs[0], xs[1]
    # affine
    if x1 != x0 and (ys[1] - y0) % (x1 - x0) == 0:
        a = (ys[1] - y0) // (x1 - x0)
        c = y0 - a * x0
        if _check(xs, ys, lambda x: c + a * x):
            return _lin(var, a, c)
    changes = [n for n in range(1, len(ys)) if ys[n] != ys[n - 1]]
    # steps: c + a*((x + r)/m)
    if changes:
        t = changes[0]
        a = ys[t] - ys[t - 1]
        sizes = [b - a_ for a_, b in zip(changes, changes[1:])] or [max(t, len(ys) - t)]
        m = sizes[0]
        if m > 1 and a == 1 and m <= len(ys):
            r = (-xs[t]) % m
            c = ys[t] - a * ((xs[t] + r) // m)
            if _check(xs, ys, lambda x: c + a * ((x + r) // m)):
                inner = f"({var} + {r})/{m}" if r else f"{var}/{m}"
                body = inner if a == 1 else f"{a}*({inner})"
                return _plus(body, c)
    # restarting ramp: c + a*((x + r)%m)
    drops = [n for n in range(1, len(ys)) if ys[n] < ys[n - 1]]
    if drops and x1 == x0 + 1:
        t = drops[0]
        a = ys[1] - y0 if t > 1 else ys[t + 1] - ys[t] if t + 1 < len(ys) else 0
        if a > 0 and (ys[t - 1] - ys[t]) % a == 0:
            m = (ys[t - 1] - ys[t]) // a + 1
            if 1 < m <= len(ys) and ys[t] == min(ys):
                r = (-xs[t]) % m
                c = ys[t]
                if _check(xs, ys, lambda x: c + a * ((x + r) % m)):
                    inner = f"({var} + {r})%{m}" if r else f"{var}%{m}"
                    body = inner if a == 1 else f"({inner})*{a}"
                    return _plus(body, c)
    return None


def _d_candidates(ds: list[int]):
    """(expression, function of (d, k)) for G in F(i) + G(d)."""
    yield "d", lambda d, k: d
    yield "k", lambda d, k: k
    for m in (2, 4, 8):
        yield f"d%{m}", lambda d, k, m=m: d % m
        yield f"d/{m}", lambda d, k, m=m: d // m


def fit_grid(xs: list[int], ds: list[int], grid: list[list[int]], var: str = "i") -> str | None:
    """An expression in ``var`` and ``d`` (and ``k``) giving ``grid[s][k]`` for server
    index ``xs[s]`` and device id ``ds[k]``, of the form F(i) + G(d); or None."""
    row0 = grid[0]
    n = len(ds)
    if all(all(v == row[0] for v in row) for row in grid):  # no device dependence
        return fit_int(xs, [row[0] for row in grid], var)
    for g_name, g in _d_candidates(ds):
        hv = [g(d, k) for k, d in enumerate(ds)]
        j = next((k for k in range(n) if hv[k] != hv[0]), None)
        if j is None:
            continue
        num, den = row0[j] - row0[0], hv[j] - hv[0]
        if num % den:
            continue
        b = num // den
        if b == 0:
            continue
        gv = [b * h for h in hv]
        fv = [row[0] - gv[0] for row in grid]
        if any(grid[s][k] != fv[s] + gv[k] for s in range(len(grid)) for k in range(n)):
            continue
        f_expr = fit_int(xs, fv, var)
        if f_expr is None:
            continue
        g_expr = g_name if b == 1 else (f"{b}*{g_name}" if g_name in ("d", "k") else f"{b}*({g_name})")
        if re.fullmatch(r"-?\d+", f_expr):
            return _plus(g_expr, int(f_expr))
        return f"{f_expr} + {g_expr}"
    return None


def _octets(v: int) -> list[int]:
    return [(v >> 24) & 255, (v >> 16) & 255, (v >> 8) & 255, v & 255]


def _tmpl(expr: str) -> str:
    return expr if re.fullmatch(r"\d+", expr) else "{" + expr + "}"


def _ipv4_template(xs: list[int], values: list[int]) -> str | None:
    """A dotted template in i giving the IPv4 address ``values[s]`` at ``xs[s]``."""
    parts = []
    for m in range(4):
        e = fit_int(xs, [_octets(v)[m] for v in values])
        if e is None:
            break
        parts.append(_tmpl(e))
    else:
        return ".".join(parts)
    # the whole address is S + A*i: split it into octets
    if len(xs) >= 2 and xs[1] != xs[0] and (values[1] - values[0]) % (xs[1] - xs[0]) == 0:
        a = (values[1] - values[0]) // (xs[1] - xs[0])
        c = values[0] - a * xs[0]
        if all(c + a * x == v for x, v in zip(xs, values)):
            whole = _lin("i", a, c)
            return ".".join("{(" + whole + f")/{256 ** (3 - m)}%256}}" if m < 3 else "{(" + whole + ")%256}"
                            for m in range(4))
    return None


# --------------------------------------------------------------------------- model

@dataclass
class _Srv:
    name: str                 # the block's name: the server_id, unless that is no file name
    devices: list[int]
    ips: list | None          # ipaddress objects, or None when the server has none
    host: object = None
    pod: str | None = None
    sdids: list | None = None
    server_id: str | None = None   # when the name had to differ from the server_id
    container: object = None       # container_ip (the pod IP), when the table has one
    sid_is_host: bool = False      # the table's server_id is the host IP (compile's default)

    def shape(self) -> tuple:
        v4 = self.ips is None or all(ip.version == 4 for ip in self.ips)
        return (tuple(self.devices), self.ips is not None, v4, self.host is not None,
                self.host is None or self.host.version == 4, self.pod is not None,
                self.sdids is not None, self.container is not None,
                self.container is None or self.container.version == 4, self.sid_is_host)


_NAME = re.compile(r"([^\[\]]*?)(\d+)([^\[\]\d]*)\Z")


def _split_name(name: str):
    m = _NAME.match(name)
    if not m or not is_word(name):
        return None
    return m.group(1), m.group(2), m.group(3)


# --------------------------------------------------------------------------- server blocks

def ip_plan_single(ips: list, ds: list[int]) -> str:
    if len(ips) == 1:
        return str(ips[0])
    ints = [int(ip) for ip in ips]
    step = ints[1] - ints[0]
    if step >= 1 and all(ints[k] == ints[0] + k * step for k in range(len(ints))):
        return f"{ips[0]} step {step}"
    if all(ip.version == 4 for ip in ips):
        grid_octets = [[_octets(v)[m] for v in ints] for m in range(4)]
        parts = []
        for row in grid_octets:
            e = fit_grid([0], ds, [row], "i")
            if e is None or "i" in e:
                break
            parts.append(_tmpl(e))
        else:
            if any("{" in p for p in parts):
                return ".".join(parts)
    return ", ".join(str(ip) for ip in ips)


def sdid_plan_single(sdids: list[int], ds: list[int]) -> str:
    base = sdids[0] - ds[0]
    if all(s - d == base for s, d in zip(sdids, ds)):
        return f"base {base}"
    if len(sdids) > 1:
        e = fit_grid([0], ds, [sdids], "i")
        if e is not None and "i" not in e and not re.fullmatch(r"\d+", e):
            return "{" + e + "}"
    return ", ".join(str(s) for s in sdids)


def _server_block(s: _Srv) -> Block:
    attrs = [] if s.server_id is None else [("server_id", word(s.server_id))]
    if s.server_id is None and s.host is not None and not s.sid_is_host:
        attrs.append(("server_id", word(s.name)))  # else it would compile to the host IP
    if s.host is not None:
        attrs.append(("host", str(s.host)))
    if s.container is not None:
        attrs.append(("container_ip", str(s.container)))
    attrs.append(("devices", device_set(s.devices)))
    if s.ips is not None:
        attrs.append(("device_ip", ip_plan_single(s.ips, s.devices)))
    if s.pod is not None:
        attrs.append(("super_pod", word(s.pod)))
    if s.sdids is not None:
        attrs.append(("super_device_id", sdid_plan_single(s.sdids, s.devices)))
    return Block("server", s.name, attrs)


def _family_ip_plan(xs: list[int], run: list[_Srv]) -> str | None:
    ds = run[0].devices
    ints = [[int(ip) for ip in s.ips] for s in run]
    n = len(ds)
    step = ints[0][1] - ints[0][0] if n > 1 else 1
    if step >= 1 and all(row[k] == row[0] + k * step for row in ints for k in range(n)):
        start = _ipv4_template(xs, [row[0] for row in ints])
        if start is not None:
            return start if n == 1 else f"{start} step {step}"
    parts = []
    for m in range(4):
        e = fit_grid(xs, ds, [[_octets(v)[m] for v in row] for row in ints])
        if e is None:
            break
        parts.append(_tmpl(e))
    else:
        return ".".join(parts)
    items = []
    for k in range(n):
        t = _ipv4_template(xs, [row[k] for row in ints])
        if t is None:
            return None
        items.append(t)
    return ", ".join(items)


def _family_sdid_plan(xs: list[int], run: list[_Srv]) -> str | None:
    ds = run[0].devices
    bases = []
    for s in run:
        b = s.sdids[0] - ds[0]
        if any(v - d != b for v, d in zip(s.sdids, ds)):
            bases = None
            break
        bases.append(b)
    if bases is not None:
        e = fit_int(xs, bases)
        if e is not None:
            return f"base {_tmpl(e)}"
    e = fit_grid(xs, ds, [s.sdids for s in run])
    if e is not None and re.search(r"\bd\b|\bk\b", e):
        return "{" + e + "}"
    items = []
    for k in range(len(ds)):
        e = fit_int(xs, [s.sdids[k] for s in run])
        if e is None:
            return None
        items.append(_tmpl(e))
    if len(items) == 1 and not re.fullmatch(r"\d+", items[0]):
        return None  # one template without d would be read as a template, not a list
    return ", ".join(items)


def _family_block(run: list[_Srv]) -> Block | None:
    """A family block for ``run`` (consecutive, same shape), or None when some value does
    not fit one template."""
    split = [_split_name(s.name) if s.server_id is None else None for s in run]
    if any(p is None for p in split):
        return None
    prefix, first, suffix = split[0]
    if any(p[0] != prefix or p[2] != suffix for p in split):
        return None
    xs = [int(p[1]) for p in split]
    if any(b != a + 1 for a, b in zip(xs, xs[1:])):
        return None
    fam_name = f"{prefix}[{first}..{split[-1][1]}]{suffix}"
    try:
        fam = parse_family_name(fam_name, Span("<import>", 1, 1))
    except Exception:  # noqa: BLE001 - any parse problem: not a family
        return None
    if [fam.name(x) for x in xs] != [s.name for s in run] or fam.first != xs[0] or fam.last != xs[-1]:
        return None
    attrs = []
    if run[0].host is not None:
        host = _ipv4_template(xs, [int(s.host) for s in run])
        if host is None:
            return None
        if not run[0].sid_is_host:
            # The table's server_ids are names, not the hosts a server_id defaults to.
            if any(s.name != f"{prefix}{x}{suffix}" for s, x in zip(run, xs)):
                return None
            attrs.append(("server_id", f"{prefix}{{i}}{suffix}"))
        attrs.append(("host", host))
    if run[0].container is not None:
        pod_ip = _ipv4_template(xs, [int(s.container) for s in run])
        if pod_ip is None:
            return None
        attrs.append(("container_ip", pod_ip))
    attrs.append(("devices", device_set(run[0].devices)))
    if run[0].ips is not None:
        plan = _family_ip_plan(xs, run)
        if plan is None:
            return None
        attrs.append(("device_ip", plan))
    if run[0].pod is not None:
        pods = [s.pod for s in run]
        if all(p == pods[0] for p in pods):
            if "{" in pods[0] or "}" in pods[0]:
                return None
            attrs.append(("super_pod", word(pods[0])))
        elif all(re.fullmatch(r"0|[1-9][0-9]*", p) for p in pods):
            e = fit_int(xs, [int(p) for p in pods])
            if e is None:
                return None
            attrs.append(("super_pod", _tmpl(e)))
        else:
            return None
    if run[0].sdids is not None:
        plan = _family_sdid_plan(xs, run)
        if plan is None:
            return None
        attrs.append(("super_device_id", plan))
    return Block("family", fam_name, attrs)


def plan_blocks(servers: list[_Srv]) -> list[Block]:
    """Server and family blocks for ``servers`` (in rank order)."""
    blocks: list[Block] = []
    pos = 0
    n = len(servers)
    while pos < n:
        end = pos + 1
        shape = servers[pos].shape()
        while end < n and servers[end].shape() == shape:
            end += 1
        best = None
        if end - pos >= MIN_FAMILY:
            fam = _family_block(servers[pos:end])
            if fam is not None:
                best = (end, fam)
            else:
                lo, hi = MIN_FAMILY, end - pos - 1  # longest fitting prefix
                while lo <= hi:
                    mid = (lo + hi) // 2
                    fam = _family_block(servers[pos:pos + mid])
                    if fam is not None:
                        best = (pos + mid, fam)
                        lo = mid + 1
                    else:
                        hi = mid - 1
        if best is not None:
            blocks.append(best[1])
            pos = best[0]
        else:
            blocks.append(_server_block(servers[pos]))
            pos += 1
    return blocks


# --------------------------------------------------------------------------- import

def _cluster_name(filename: str) -> str:
    stem = os.path.splitext(os.path.basename(filename))[0]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.")
    return stem or "imported"


def _dropped_keys(doc: dict, version: str) -> dict[str, tuple[int, tuple]]:
    found: dict[str, list] = {}

    def add(key, path):
        got = found.setdefault(key, [0, path])
        got[0] += 1

    for k in doc:
        if k not in _CANON_TOP or (k == "super_pod_list" and version == "1.0"):
            add(k, (k,))
    for i, s in enumerate(doc.get("server_list") or ()):
        if not isinstance(s, dict):
            continue
        for k in s:
            if k not in _CANON_SERVER:
                add(k, ("server_list", i, k))
        for j, d in enumerate(s.get("device") or ()):
            if isinstance(d, dict):
                for k in d:
                    if k not in _CANON_DEVICE or (k == "super_device_id" and version == "1.0"):
                        add(k, ("server_list", i, "device", j, k))
    return {k: (v[0], v[1]) for k, v in found.items()}


def _model(doc: dict, version: str, smap, diags: list) -> list[_Srv] | None:
    """The servers of a valid 1.0 / 1.2 table, in rank order; None after adding to
    ``diags`` why the rtc language cannot describe them (RTC662)."""
    pods: dict[str, str] = {}
    if version == "1.2":
        for pod in doc.get("super_pod_list") or ():
            for m in pod.get("server_list") or ():
                pods.setdefault(m.get("server_id"), pod.get("super_pod_id"))
    servers = []
    for s, devs in _servers_by_rank(doc):
        srv = _server(s, devs, version, pods, smap, diags)
        if srv is None:
            return None
        servers.append(srv)
    return _file_safe_names(_host_named(servers), smap, diags)


def _host_named(servers: list[_Srv]) -> list[_Srv]:
    """``servers`` (in rank order) with those whose server_id is their host IP (as Ascend
    Operator writes it, and as ``rtc compile`` writes a server without ``server_id``)
    renamed ``node<k>``, k their rank-order position padded to one width, so that a run of
    them folds into one family; the server_id comes back from ``host``. The first of
    ``node``, ``server``, ``host`` whose names no other server_id takes; none: unchanged."""
    hosted = [k for k, s in enumerate(servers) if s.host is not None and s.name == str(s.host)]
    for k in hosted:
        servers[k].sid_is_host = True
    taken = {s.name for s in servers}
    width = len(str(len(servers) - 1))
    for prefix in ("node", "server", "host"):
        names = {k: f"{prefix}{k:0{width}d}" for k in hosted}
        if not taken & set(names.values()):
            for k, name in names.items():
                servers[k].name = name
            break
    return servers


def _file_safe_names(servers: list[_Srv], smap, diags: list) -> list[_Srv] | None:
    """Servers whose server_id cannot name files (``rack1/node0``) get a block name that
    can (``rack1_node0``, unique) and keep the server_id as ``server_id``; None after RTC662
    for a server_id the language cannot hold as a value (braces start a template). A
    control or invisible character never gets here: validation refuses it (RTC235)."""
    taken = {s.name for s in servers}
    for s in servers:
        if file_name_problem(s.name) is None and host_name_problem(s.name) is None:
            continue
        if "{" in s.name or "}" in s.name:
            diags.append(error(IMPORT_SHAPE, f"server_id {s.name!r} cannot be written in the "
                               "rtc language (it names no file, and braces start a template)",
                               Span.whole_file(smap.filename)))
            return None
        safe = re.sub(r"[^-._A-Za-z0-9]", "_", s.name)[:MAX_NAME_CHARS]
        safe = "_" + safe if safe.startswith("-") or safe in (".", "..") else safe
        base, n = safe, 2
        while safe in taken:
            safe, n = f"{base[:MAX_NAME_CHARS - 4]}-{n}", n + 1
        taken.add(safe)
        s.server_id, s.name = s.name, safe
    return servers


def _servers_by_rank(doc: dict) -> list[tuple[dict, list]]:
    """``(server, devices)`` sorted by the server's first rank; ``devices`` are
    ``(rank, device id, device, path)`` sorted by rank."""
    rows = []
    for i, s in enumerate(doc["server_list"]):
        devs = []
        for j, d in enumerate(s["device"]):
            devs.append((int(d["rank_id"]), int(d["device_id"]), d, ("server_list", i, "device", j)))
        devs.sort()
        rows.append((devs[0][0], i, s, devs))
    rows.sort()
    return [(s, devs) for _, _, s, devs in rows]


def _server(s: dict, devs: list, version: str, pods: dict, smap, diags: list) -> _Srv | None:
    """One server of :func:`_model`, or None after adding the RTC662 that stops it."""
    sid = s["server_id"]
    ids = [d for _, d, _, _ in devs]
    raw_ips = [d.get("device_ip") or "" for _, _, d, _ in devs]
    problem = _device_problem(sid, devs, ids, raw_ips, smap)
    if problem is not None:
        diags.append(problem)
        return None
    ips = [ipaddress.ip_address(ip) for ip in raw_ips] if all(raw_ips) else None
    sdids = None
    if version == "1.2":
        sdids, problem = _super_device_ids(sid, devs, smap)
        if problem is not None:
            diags.append(problem)
            return None
    host = None
    if s.get("host_ip"):
        host = ipaddress.ip_address(s["host_ip"])
    pod = pods.get(sid) if version == "1.2" else None
    if pod is not None and ("{" in pod or "}" in pod or "\n" in pod):
        diags.append(error(IMPORT_SHAPE, f"super_pod_id {pod!r} cannot be written in the rtc "
                           "language (braces start a template)", Span.whole_file(smap.filename)))
        return None
    container = ipaddress.ip_address(s["container_ip"]) if s.get("container_ip") else None
    return _Srv(sid, ids, ips, host, pod, sdids, container=container)


def _device_problem(sid: str, devs: list, ids: list[int], raw_ips: list[str],
                    smap) -> Diagnostic | None:
    """RTC662 when the devices of server ``sid`` cannot be written as rtc devices: ranks
    not in device id order, several addresses in one device_ip, addresses on only some."""
    if ids != sorted(ids):
        r, d, _, path = next(x for x, y in zip(devs, devs[1:]) if y[1] < x[1])
        return error(IMPORT_SHAPE, f"on {sid}, rank {r} is device {d} but a higher rank has "
                     "a lower device id: rtc numbers a server's devices in device id "
                     "order", smap.locate_nearest(path + ("rank_id",)),
                     subject=f"server {sid}",
                     hint="renumber the server's ranks in device id order first")
    if any("," in ip for ip in raw_ips):
        path = next(p for (_, _, d, p) in devs if "," in (d.get("device_ip") or ""))
        return error(IMPORT_SHAPE, f"{sid} has a device with several addresses in "
                     "device_ip; the rtc language gives one address per device",
                     smap.locate_nearest(path + ("device_ip",)), subject=f"server {sid}")
    if any(raw_ips) and not all(raw_ips):
        path = next(p for (_, _, d, p) in devs if not d.get("device_ip"))
        return error(IMPORT_SHAPE, f"some devices of {sid} have a device_ip and others do "
                     "not; rtc gives either every device of a server an address or none",
                     smap.locate_nearest(path), subject=f"server {sid}",
                     hint="fill in the missing addresses")
    return None


def _super_device_ids(sid: str, devs: list, smap) -> tuple[list | None, Diagnostic | None]:
    """(the super_device_ids of a 1.2 server's devices, or None when it has none; None) or
    (None, RTC662) when only some devices have one."""
    raw = [d.get("super_device_id") for _, _, d, _ in devs]
    if not any(v is not None for v in raw):
        return None, None
    if any(v is None for v in raw):
        path = next(p for (_, _, d, p) in devs if d.get("super_device_id") is None)
        return None, error(IMPORT_SHAPE, f"some devices of {sid} have a super_device_id "
                           "and others do not", smap.locate_nearest(path),
                           subject=f"server {sid}")
    return [decimal(v) for v in raw], None


def _ipnorm(text):
    if not text:
        return None
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


def _normal(doc: dict, version: str) -> dict:
    """What the round trip must preserve."""
    servers = []
    for s in doc["server_list"]:
        devs = []
        for d in s["device"]:
            devs.append((int(d["rank_id"]), int(d["device_id"]), _ipnorm(d.get("device_ip")),
                         decimal(d.get("super_device_id")) if version == "1.2" else None))
        devs.sort()
        servers.append((devs[0][0], s["server_id"], _ipnorm(s.get("host_ip")) if version == "1.2" else None,
                        tuple(devs), _ipnorm(s.get("container_ip"))))
    servers.sort()
    pods = {}
    if version == "1.2":
        for pod in doc.get("super_pod_list") or ():
            pods[pod["super_pod_id"]] = sorted(m["server_id"] for m in pod["server_list"])
    return {"version": version, "servers": servers, "pods": pods}


def describe_table(doc: dict, smap, preset: Preset, filename: str, diags: list[Diagnostic], *,
                   hardware: str | None = None, cluster_name: str | None = None) -> str | None:
    """The rtc description of a valid version 1.0 / 1.2 table ``doc`` (lowered with
    ``preset``; ``smap`` its source map), or None after adding to ``diags`` why it cannot be
    written (RTC662); keys the language cannot hold are reported (RTC664). ``hardware`` is
    ``--hardware`` when given. The caller compiles the text back and compares
    (:func:`round_trip_difference`)."""
    version = doc["version"]
    hardware, devices_per_server = _hardware(version, preset, hardware, smap, diags)
    if hardware is None:
        return None
    servers = _model(doc, version, smap, diags)
    if servers is None:
        return None
    for key, (count, path) in sorted(_dropped_keys(doc, version).items(), key=lambda kv: kv[1][1]):
        what = "a 1.0 table carries no host_ip (kept as `host`)" if key == "host_ip" else \
            "the rtc language has no attribute for it"
        diags.append(warning(IMPORT_DROPPED, f"`{key}` is dropped ({count} time{'s' if count != 1 else ''}): "
                             f"{what}", smap.locate_nearest(path, key=True),
                             hint="the compiled table will not have it"))
    ndev = sum(len(s.devices) for s in servers)
    return render_source(ClusterSource(
        name=cluster_name or _cluster_name(filename), hardware=hardware,
        devices_per_server=devices_per_server, blocks=plan_blocks(servers),
        header=[f"Imported by `rtc import` from {os.path.basename(filename)}: version {version}, "
                f"{len(servers)} server{'s' if len(servers) != 1 else ''}, {ndev} device"
                f"{'s' if ndev != 1 else ''}.",
                "`rtc compile` of this file (no job: the whole cluster) gives the table back."]))


def _hardware(version: str, preset: Preset, hardware: str | None, smap,
              diags: list[Diagnostic]) -> tuple[str | None, int | None]:
    """(the description's hardware preset, its devices_per_server or None); (None, None)
    after RTC662 when ``--hardware`` writes another table version."""
    if hardware is not None:
        hw = presets()[hardware]
        if hw.ranktable_version != version and hw.devices_per_server:
            diags.append(error(IMPORT_SHAPE, f"hardware {hardware} compiles to version "
                               f"{hw.ranktable_version} tables but this table is version {version}",
                               smap.locate_nearest(("version",)),
                               hint="leave out --hardware, or choose a preset of this version "
                                    "(generic for a 1.0 table with 16 devices per server)"))
            return None, None
        return hardware, (max(16, preset.devices_per_server) if hw.devices_per_server == 0
                          else None)
    if version == "1.0" and preset.super_pod is False and preset.name == "atlas-800-a3":
        # A3 typical networking: 16 dies, table 1.0
        return "generic", max(16, preset.devices_per_server)
    return preset.name, None


def round_trip_difference(doc: dict, version: str, built: dict) -> str | None:
    """None when the table ``built`` from the description equals ``doc`` in everything the
    round trip keeps (servers, device ids, IPs, super device ids, super pods, host IPs in
    1.2, ranks); otherwise what differs."""
    a, b = _normal(doc, version), _normal(built, built["version"])
    if a == b:
        return None
    if a["version"] != b["version"]:
        return f"version {b['version']} instead of {a['version']}"
    for x, y in zip(a["servers"], b["servers"]):
        if x != y:
            return f"server {x[1]} compiles to {y[1]} with different values"
    if len(a["servers"]) != len(b["servers"]):
        return f"{len(b['servers'])} servers instead of {len(a['servers'])}"
    return "super pods differ"


#: The rules this module reports (collected by rtc.catalogue).
RULES = (IMPORT_INVALID, IMPORT_FORM, IMPORT_SHAPE, IMPORT_ROUND_TRIP, IMPORT_DROPPED)
