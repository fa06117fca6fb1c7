"""Unreachable device IPs (RTC410) and the routing assumption rtc made (RTC411).

The model is :mod:`rtc.network.reachability`: same subnet, or routed subnets joined by a
fabric. One error per job and pair of reachability classes (a fabric, "routed but in no
declared fabric", "no gateway"), with the number of device pairs and one example pair;
linear in the devices.
"""

from __future__ import annotations

from rtc.diagnostics import Related, Severity, error, note
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.network.reachability import ASSUMED, NO_GATEWAY, OUTSIDE, Model, analyse
from rtc.network.addressing import mask, subnet_text
from rtc.rules import rule

UNREACHABLE = rule("RTC410", "unreachable-device-ip", "error",
                   "Devices that must talk across servers have no route to each other.", """
    What: two NPUs on different servers that share a communication group (for a job: its
    TP/PP/DP/EP groups; without jobs: every pair of the rank table) are in different
    subnets, and are not both routed (gateway in their subnet) into one declared `fabric`.
    Why: HCCL connects every such pair over RoCE at communicator init; without a route the
    connection attempts time out after HCCL_CONNECT_TIMEOUT (120 s by default) and the job
    dies with a link-setup timeout, often only on the first collective that uses the pair.
    Example: per-NPU /31 links (`prefix 31`) without `gateway`, so each NPU only reaches
    its switch port; or `fabric roce { subnets 6.0.2.0/24 }` while atlas-02's NPUs are in
    6.0.3.x.
    Fix: give routed NPUs their gateways (`hccn_tool -i N -gateway -g`) and declare the
    fabric that routes them (`fabric roce { subnets 6.0.0.0/16 }`), or put the devices in
    one subnet.""")
ASSUMED_FABRIC = rule("RTC411", "assumed-fabric", "note",
                      "No fabric is declared; rtc assumed routed device subnets reach each other.", """
    What: devices have gateways in their (different) subnets, and no `fabric` block says
    which subnets are routed together. rtc assumed a single routed fabric joins them all.
    Why: this is the usual A2/A3 RoCE plan (per-NPU /31 to a leaf switch, routed fabric
    behind it), but rtc cannot know it; if some subnets are in a separate fabric, HCCL
    links between them will time out.
    Example: examples/a2-2node-dp2-tp8.rtc without its `fabric` block.
    Fix: declare it, e.g. `fabric roce { subnets 6.0.0.0/16 }`; then subnets outside it
    are reported as unreachable (RTC410).""")
NOT_JUDGED = rule("RTC412", "reachability-not-judged", "note",
                  "Some NPUs that talk across servers have no prefix: reachability is not judged.", """
    What: NPUs of a job that spans servers (or of a table without jobs) have a `device_ip`
    but no `prefix`, so rtc cannot tell their subnets and does not judge whether they
    reach their peers (RTC410 is silent about them).
    Why: an unreachable peer only shows up at communicator init, as an HCCL timeout.
    Example: `device_ip 6.0.2.1 step 2` without `prefix 31` (and `gateway`).
    Fix: add `prefix` (and `gateway` for routed links), from `hccn_tool -i N -ip -g`, or
    `inventory` captures that hold them.""")


def check(topo: Topology, plan: Plan):
    if topo.preset.is_gpu:
        return   # NCCL reaches peers through the host / IB network: no device IPs (RTC512)
    yield from _not_judged(topo)
    if not any(d.device_ip is not None and d.prefix is not None
               for s in topo.servers for d in s.devices):
        return
    if any("subnets" in f.incomplete for f in topo.fabrics):
        return  # a fabric's subnets could not be read (reported): routing is unknown
    model = Model(topo)
    results = analyse(topo, model)
    for jr in results:
        for f in jr.findings.values():
            yield _finding(topo, model, jr, f)
    if model.used_assumption and _spans_servers(topo):
        subs = sorted(model.routed)
        yield note(ASSUMED_FABRIC, f"no fabric is declared: rtc assumed that the "
                   f"{len(subs)} device subnets with gateways (e.g. {subnet_text(subs[0])}, "
                   f"{subnet_text(subs[-1])}) are routed to each other", topo.span,
                   hint="declare it to have it checked: a `fabric roce` block with the line "
                        f"`subnets {_cover(subs)}`")


def _not_judged(topo: Topology):
    """RTC412 once when NPUs that talk to other link units (servers; super pods on A3,
    whose servers talk over HCCS) have a written device IP but no prefix. Tables, whose
    format has no prefix, are not flagged."""
    if topo.origin == "table":
        return
    lacking = [s for s in _talking_servers(topo) if s.address_sources.get("device_ip") and
               any(d.device_ip is not None and d.prefix is None for d in s.devices)]
    if not lacking:
        return
    npus = sum(1 for s in lacking for d in s.devices if d.device_ip is not None and d.prefix is None)
    names = ", ".join(s.name for s in lacking[:3]) + (", ..." if len(lacking) > 3 else "")
    yield note(NOT_JUDGED, f"reachability of {npus} NPUs on {len(lacking)} server"
               f"{'s' if len(lacking) != 1 else ''} ({names}) is not judged: they have device "
               "IPs but no prefix", lacking[0].span_of("device_ip"), subject=lacking[0].label,
               hint="add `prefix N` (and `gateway` for routed links) from `hccn_tool -i N -ip "
                    "-g`, so rtc can check that NPUs reach their peers")


def _talking_servers(topo: Topology) -> list:
    """The servers of the jobs (of the table, without jobs) that span link units."""
    groups = [(None, [s for s in topo.servers if s.devices])] if not topo.jobs else \
        [(j, [p.server for p in j.placements]) for j in topo.jobs]
    out: dict = {}
    for job, servers in groups:
        env = {name: value for name, value, _ in job.env} if job is not None else {}
        pods = topo.preset.super_pod and \
            str(env.get("HCCL_INTER_HCCS_DISABLE", "")).upper() != "TRUE"
        units = {("pod", s.super_pod_id) if pods and s.super_pod_id is not None else s.name
                 for s in servers}
        if len(units) > 1:
            out.update((id(s), s) for s in servers)
    return list(out.values())


def _spans_servers(topo: Topology) -> bool:
    if not topo.jobs:
        return sum(1 for s in topo.servers if s.devices) > 1
    return any(len(j.placements) > 1 for j in topo.jobs)


def _cover(subs) -> str:
    """A network holding every routed subnet of the first subnet's family (the fabric to
    suggest): the common leading bits of the lowest and highest address, rounded down to
    a whole octet (IPv4) or hextet (IPv6) so it reads like a plan (6.0.2.0/24, 6.0.0.0/8)."""
    v = subs[0][0]
    bits = 32 if v == 4 else 128
    _vs, nets, prefixes = zip(*(x for x in subs if x[0] == v))
    low = min(nets)
    lengths = set(prefixes)
    if len(lengths) == 1:  # one prefix length (the usual plan): the highest network ends last
        high = max(nets) + (1 << (bits - prefixes[0])) - 1
    else:
        high = max(net + (1 << (bits - p)) - 1 for net, p in zip(nets, prefixes))
    common = min(bits - (low ^ high).bit_length(), min(lengths))
    unit = 8 if v == 4 else 16
    common -= common % unit
    return subnet_text((v, low & mask(v, common), common))


def _describe(model: Model, e) -> str:
    d = e.device
    base = f"{e.server.name} device {d.device_id} ({d.device_ip}/{d.prefix}"
    if e.cls == NO_GATEWAY:
        if d.gateway is not None and d.gateway == d.device_ip:  # RTC403 says so
            return base + ", gateway equal to its own address)"
        if d.gateway is not None:  # written, but not inside the subnet (RTC400 says so)
            return base + f", gateway {d.gateway} outside its subnet)"
        return base + ", no gateway)"
    if e.cls == OUTSIDE:
        return base + f", gateway {d.gateway}, in no declared fabric)"
    names = model.component_fabrics.get(e.cls[1], [])
    label = "assumed fabric" if names == [ASSUMED] else "fabric " + " + ".join(names)
    return base + f", gateway {d.gateway}, {label})"


def _finding(topo: Topology, model: Model, jr, f):
    where = f"job {jr.job.name}" if jr.job is not None else "the rank table"
    la, lb = model.class_label(f.a), model.class_label(f.b)
    between = f"among {la}" if f.a == f.b else f"between {la} and {lb}"
    pairs = f"{f.pairs} device pair{'s' if f.pairs != 1 else ''}"
    msg = f"{where}: {pairs} that must connect across servers cannot reach each other " \
          f"({between})"
    span = jr.job.span if jr.job is not None else topo.span
    related = []
    subject = None
    if f.example is not None:
        x, y = f.example
        # point at the side that is off the fabric (or the second device)
        bad, other = (x, y) if x.cls in (OUTSIDE, NO_GATEWAY) and y.cls not in (
            OUTSIDE, NO_GATEWAY) else (y, x)
        group = {"table": "", "job": ""}.get(f.group or "", f" ({f.group.upper()} group)")
        msg += f"; e.g.{group} {_describe(model, other)} and {_describe(model, bad)}"
        attr = "gateway" if bad.cls == NO_GATEWAY and "gateway" in bad.server.spans else \
            "device_ip"
        span = bad.server.span_of(attr)
        related = [Related(other.server.span_of("device_ip"), f"{other.server.name}'s devices")]
        subject = f"server {bad.server.name}, device {bad.device.device_id}"
    if NO_GATEWAY in (f.a, f.b):
        hint = ("devices without a gateway reach only their own subnet; configure each NPU's "
                "gateway (`hccn_tool -i N -gateway -s address G`) and write `gateway ...`")
    elif OUTSIDE in (f.a, f.b):
        hint = ("add these subnets to the `subnets` line of the fabric that routes them, or "
                "correct the device IPs")
    else:
        hint = "if these fabrics are routed to each other, declare their subnets in one fabric"
    return error(UNREACHABLE, msg, span, hint=hint, related=related, subject=subject)


def unreachable_examples(topo: Topology, diagnostics) -> tuple:
    """Example device pairs this check reports unreachable (RTC410 at warning or error;
    none when it was allowed or not reported), for diagrams: ``((server, device id),
    (server, device id), group kind, job name or None)``."""
    if not any(d.code == UNREACHABLE.code and d.severity >= Severity.WARNING
               for d in diagnostics):
        return ()
    out = []
    for jr in analyse(topo):
        for f in jr.findings.values():
            if f.example is None:
                continue
            x, y = f.example
            out.append(((x.server.name, x.device.device_id), (y.server.name, y.device.device_id),
                        f.group or "", jr.job.name if jr.job is not None else None))
    return tuple(out)

#: The rules this module reports (collected by rtc.catalogue).
RULES = (UNREACHABLE, ASSUMED_FABRIC, NOT_JUDGED)
