"""The description against the captured facts of its servers (RTC420-RTC424).

Lowering (:mod:`rtc.network.lowering`) reads each server's ``inventory`` folder once and
takes device IPs, gateways and prefix lengths from it where the description gives none;
here the values the description *does* give are compared with the captures, and the
devices in use are checked for a DOWN link or an unhealthy network.
"""

from __future__ import annotations

import ipaddress

from rtc.checks._net import Folded, devices_in_use, ids_text
from rtc.diagnostics import Related, error, note
from rtc.model.topology import Topology
from rtc.plan import Plan
from rtc.rules import rule

MISMATCH = rule("RTC420", "inventory-mismatch", "error",
                "A device IP, gateway or prefix in the description differs from the server's captures.", """
    What: e.g. the description says device 3 is 6.0.2.9 but `hccn_tool -i 3 -ip -g` in the
    server's `inventory` folder says 6.0.2.7 (a stale /etc/hccn.conf or plan).
    Why: HCCL uses the rank table's device_ip to connect; if the NPU really has another
    address, peers connect to nobody and link setup times out after HCCL_CONNECT_TIMEOUT.
    Example: `device_ip 6.0.2.3 step 2` for a server whose captures show 6.0.2.1, .3, ...
    Fix: take the addresses from the captures (`device_ip inventory`), or re-apply the
    planned address on the NPU (`hccn_tool -i N -ip -s address A netmask M`) and
    re-capture.""")
LINK_DOWN = rule("RTC421", "inventory-link-down", "error",
                 "A device the jobs use has its RoCE link DOWN in the captures.", """
    What: `hccn_tool -i N -link -g` printed `link status: DOWN` for a device that is in a
    rank table.
    Why: the NPU cannot send or receive on RoCE; every HCCL connection to it times out and
    the whole job fails at communicator init.
    Example: a loose optic on NPU 5 of atlas-01.
    Fix: fix the link (cable, optic, switch port), re-capture, or leave the device out of
    the job. A device whose jobs stay inside one server (or one super pod on A3 / Ascend
    950, where HCCS / UB carry the traffic) does not use RoCE: then it is a note, unless
    the job turns RoCE on inside the server (HCCL_INTRA_ROCE_ENABLE=1) or is a prefill /
    decode job whose partner runs on another server (the KV cache crosses over RoCE).""")
NET_HEALTH = rule("RTC422", "inventory-net-health", "error",
                  "A device the jobs use does not report net health Success.", """
    What: `hccn_tool -i N -net_health -g` printed something other than `Success`
    (`Fault`, `Socket failed`, `Receive timeout`, `Unreachable`, `Init`, `Detect ip set`).
    Why: the NPU cannot reach its detect address (usually its gateway): its routed RoCE
    path is broken, so HCCL links through it time out.
    Example: `net health status: Receive timeout` after a gateway change.
    Fix: check `-netdetect -g`, `-gateway -g` and the switch; re-capture when it reports
    Success, or leave the device out.""")
MISSING = rule("RTC423", "inventory-missing-value", "error",
               "`device_ip inventory` / `gateway inventory`, but the captures give no value.", """
    What: the description takes a device's address from the inventory, but the server has
    no `inventory` folder, or the captures hold no address (or gateway) for that device.
    Why: the rank table would have no device_ip for it; multi-server HCCL needs one per
    device.
    Example: `device_ip inventory` with an `ip.txt` whose device 2 printed nothing.
    Fix: configure the address (`hccn_tool -i N -ip -s ...`) and re-capture, add the
    `inventory "DIR"` line, or write the addresses in the description.""")
SHARED = rule("RTC424", "inventory-shared", "error",
              "Two servers read the same inventory folder.", """
    What: `inventory "captures/atlas-01"` on two servers (or on a family without `{i}`).
    Why: a capture describes one server; reusing it gives every server the same device
    IPs, which cannot all be right.
    Example: `family node[0..3] { inventory "inv" }`.
    Fix: one folder per server, e.g. `inventory "inv/node{i}"` in a family.""")

_FIELDS = (("device_ip", "ip", "device IP"), ("gateway", "gateway", "gateway"),
           ("prefix", "prefix_len", "prefix length"))


def check(topo: Topology, plan: Plan):
    used = devices_in_use(topo)
    roce = _roce_needed(topo, plan)
    shared = Folded("servers")
    folders: dict = {}
    for s in topo.servers:
        if s.inventory is not None and s.inventory_facts is not None:
            import os

            key = os.path.normpath(os.path.abspath(s.inventory))
            first = folders.get(key)
            if first is None:
                folders[key] = s
            else:
                shared.add(s.span_of("inventory"), error(
                    SHARED, f"{s.name} reads the inventory folder {s.inventory}, which already "
                    f"describes {first.name}", s.span_of("inventory"), subject=s.label,
                    related=[Related(first.span_of("inventory"), first.name)],
                    hint="one folder per server; in a family write e.g. "
                         "`inventory \"inv/node{i}\"`"), s.name)
        yield from _missing(s)
        inv = s.inventory_facts
        if inv is None:
            continue
        yield from _mismatches(s, inv)
        yield from _status(s, inv, used.get(s.name, set()), roce.get(s.name, set()))
    yield from shared.emit()


def _roce_needed(topo: Topology, plan: Plan | None = None) -> dict[str, set[int]]:
    """server name -> device ids in a table (a job's, or the cluster's without jobs) that
    spans several link units: servers, or super pods on presets with super pods (unless the
    job sets HCCL_INTER_HCCS_DISABLE=TRUE); plus every device of a job that turns RoCE on
    inside its servers (HCCL_INTRA_ROCE_ENABLE=1 where HCCL acts on it) and of a prefill /
    decode job whose partner runs on other servers (the KV cache moves over the NPUs'
    RoCE ports). Only those devices talk over RoCE."""
    from rtc.checks.link_env import intra_roce_applies

    tables = [(j, topo.rank_table_members(j)) for j in topo.jobs] or \
        [(None, topo.rank_table_members(None))]
    out: dict[str, set[int]] = {}
    kv = _kv_over_roce(plan)
    for job, members in tables:
        if job is not None and (job.name in kv or intra_roce_applies(topo, job)):
            for s, devs in members:
                out.setdefault(s.name, set()).update(d.device_id for d in devs)
            continue
        env = {name: value for name, value, _ in job.env} if job is not None else {}
        pods = topo.preset.super_pod and \
            str(env.get("HCCL_INTER_HCCS_DISABLE", "")).upper() != "TRUE"
        units = {("pod", s.super_pod_id) if pods and s.super_pod_id is not None else s.name
                 for s, _d in members}
        if len(units) > 1:
            for s, devs in members:
                out.setdefault(s.name, set()).update(d.device_id for d in devs)
    return out


def _kv_over_roce(plan: Plan | None) -> set[str]:
    """Names of the prefill / decode jobs whose partner of the pair runs on another server
    (their KV transfer crosses servers over RoCE)."""
    out: set[str] = set()
    for pair in (plan.pairs if plan is not None else ()):
        for a in pair.prefill:
            for b in pair.decode:
                sa = {p.server.name for p in a.placements}
                sb = {p.server.name for p in b.placements}
                if sa and sb and (sa != sb or len(sa) > 1):
                    out.update((a.name, b.name))
    return out


def _missing(s):
    for key in ("device_ip", "gateway"):
        if s.address_sources.get(key) != "inventory":
            continue
        lacking = [d.device_id for d in s.devices if getattr(d, key) is None]
        if not lacking:
            continue
        what = "device IP" if key == "device_ip" else "gateway"
        if s.inventory is None:
            msg = f"{s.name} takes its {what}s from the inventory but has no `inventory` folder"
            hint = 'add `inventory "DIR"` (the folder with its hccn_tool captures)'
        else:
            msg = (f"the inventory of {s.name} ({s.inventory}) has no {what} for device"
                   f"{'s' if len(lacking) > 1 else ''} {ids_text(lacking)}")
            hint = (f"configure it (`hccn_tool -i {lacking[0]} "
                    f"{'-ip -s address A netmask M' if key == 'device_ip' else '-gateway -s address G'}`)"
                    " and re-capture, or write the values in the description")
        yield error(MISSING, msg, s.span_of(key), subject=s.label, hint=hint)


def _value(facts, field: str, want_v6: bool):
    if field == "ip":
        f = facts.ipv6 if want_v6 else facts.ip
    elif field == "prefix_len":
        f = facts.ipv6_prefix_len if want_v6 else facts.prefix_len
    else:
        f = facts.gateway
    return f


def _mismatches(s, inv):
    for key, field, label in _FIELDS:
        if s.address_sources.get(key) != "dsl":
            continue
        found = []
        for d in s.devices:
            facts = inv.devices.get(d.device_id)
            mine = getattr(d, "prefix" if key == "prefix" else key)
            if facts is None or mine is None:
                continue
            want_v6 = getattr(mine, "version", 4) == 6 if key != "prefix" else \
                (d.device_ip is not None and d.device_ip.version == 6)
            fact = _value(facts, field, want_v6)
            if fact is None:
                continue
            theirs = fact.value
            if key == "prefix":
                same = isinstance(theirs, int) and theirs == mine
            else:
                try:
                    same = ipaddress.ip_address(str(theirs)) == mine
                except ValueError:
                    continue
            if not same:
                found.append((d, mine, theirs, fact))
        for n, (d, mine, theirs, fact) in enumerate(found):
            if n == 3 and len(found) > 4:
                rest = found[3:]
                yield error(MISMATCH, f"{s.name}: {len(rest)} more devices disagree with the "
                            f"inventory on their {label}: "
                            + "; ".join(f"device {x.device_id}: {m} vs {t}"
                                        for x, m, t, _ in rest[:6])
                            + ("; ..." if len(rest) > 6 else ""),
                            s.span_of(key), subject=s.label,
                            related=[Related(rest[0][3].span, rest[0][3].source)],
                            hint=_fix(key))
                break
            span = s.span_of(key)
            yield error(MISMATCH, f"{s.name} device {d.device_id}: the description says {label} "
                        f"{mine} but {fact.source} says {theirs}",
                        span, subject=f"{s.label}, device {d.device_id}",
                        related=[Related(fact.span, f"{fact.source}: {theirs}")],
                        hint=_fix(key))


def _fix(key: str) -> str:
    if key == "device_ip":
        return ("use the NPU's real address (`device_ip inventory` takes it from the captures), "
                "or re-apply the planned one with `hccn_tool -i N -ip -s` and re-capture")
    if key == "gateway":
        return "use `gateway inventory`, or re-apply with `hccn_tool -i N -gateway -s` and re-capture"
    return "use the captured netmask's prefix (drop `prefix` to take it from the inventory)"


def _status(s, inv, used: set, roce: set):
    down = []
    sick = []
    for d in s.devices:
        if d.device_id not in used:
            continue
        facts = inv.devices.get(d.device_id)
        if facts is None:
            continue
        if facts.link is not None and str(facts.link.value).upper() != "UP":
            down.append((d.device_id, facts.link))
        if facts.net_health is not None and facts.net_health.value != "Success":
            sick.append((d.device_id, facts.net_health))
    span = s.span_of("inventory")
    local = " (its jobs stay inside one server or super pod and move no KV cache to another " \
        "server, so HCCL does not use RoCE there)"
    for dev, fact in down:
        report = error if dev in roce else note
        yield report(LINK_DOWN, f"{s.name} device {dev} is in use but its RoCE link is "
                     f"{fact.value} ({fact.source})" + ("" if dev in roce else local), span,
                     subject=f"{s.label}, device {dev}",
                     related=[Related(fact.span, fact.source)],
                     hint="fix the link (cable, optic, switch port) and re-capture, or leave "
                          "the device out of the job")
    for dev, fact in sick:
        report = error if dev in roce else note
        yield report(NET_HEALTH, f"{s.name} device {dev} is in use but its net health is "
                     f"'{fact.value}', not Success ({fact.source})"
                     + ("" if dev in roce else local), span,
                     subject=f"{s.label}, device {dev}",
                     related=[Related(fact.span, fact.source)],
                     hint=f"check `hccn_tool -i {dev} -netdetect -g` / `-gateway -g` and the "
                          "switch; re-capture when it reports Success")

#: The rules this module reports (collected by rtc.catalogue).
RULES = (MISMATCH, LINK_DOWN, NET_HEALTH, MISSING, SHARED)
