"""The faster ways ``rtc compile --out-dir`` plans and renders its per-node files give what
the plain ways gave: the plain algorithms are kept here and compared on generated inputs."""

from __future__ import annotations

import shlex
from collections import Counter
from ipaddress import IPv4Address
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from rtc.emit import launch_script
from rtc.network.addressing import subnet_of
from rtc.plan import preflight
from rtc.plan.launch import Ref
from rtc.textfmt import ip_text
from conftest import TESTS

# --- the preflight planner's choice of pings (rtc.plan.preflight._select) -------------


def _plain_select(group, pods: bool, sink: dict) -> None:
    """The planner before lists: every bucket a dict filled by setdefault, one member's
    unit and representative key computed per member."""
    unit_ids: dict = {}
    members, reps, seen = [], [], set()
    for s, d in group:
        unit = ("pod", s.super_pod_id) if pods and s.super_pod_id is not None \
            else ("server", s.name)
        rep = (s.name, subnet_of(d.device_ip, d.prefix) or ("dev", d.device_id))
        u = unit_ids.setdefault(unit, len(unit_ids))
        m = (u, s, d, ip_text(d.device_ip), (s.name, d.device_id))
        members.append(m)
        if m[3] is not None and (u, rep) not in seen:
            seen.add((u, rep))
            reps.append(m)
    if len(unit_ids) < 2:
        return
    size, n = len(members), len(reps)
    units, rep_units = Counter(m[0] for m in members), Counter(m[0] for m in reps)
    offsets = [1 + (j * n) // preflight.PING_BUDGET for j in range(preflight.PING_BUDGET)]
    pairs = [(m[3], m[4]) for m in reps]
    for pos, (unit, _s, _d, _ip, key) in enumerate(members):
        peers = size - units[unit]
        if peers <= 0:
            continue
        bucket = sink.setdefault(key, {})
        if peers <= preflight.PING_BUDGET:
            chosen = [(m[3], m[4]) for m in members if m[0] != unit and m[3] is not None]
        elif n - rep_units[unit] <= preflight.PING_BUDGET:
            chosen = [pairs[k] for k, m in enumerate(reps) if m[0] != unit]
        else:
            start = (pos * n) // size
            chosen = []
            for off in offsets:
                i = (start + off) % n
                while reps[i][0] == unit:   # step over the member's own unit
                    i = (i + 1) % n
                chosen.append(pairs[i])
        for ip, value in chosen:
            bucket.setdefault(ip, value)


@st.composite
def _groups(draw):
    """A group of (server, device) with super pods, shared or missing IPs and subnets."""
    n_servers = draw(st.integers(1, 40))
    per = draw(st.integers(1, 8))
    pod_size = draw(st.sampled_from([1, 2, 4, 64]))
    ip_pool = draw(st.sampled_from([None, 3, 10_000]))   # few IPs: repeats
    prefix = draw(st.sampled_from([None, 24, 31]))
    group = []
    for i in range(n_servers):
        s = SimpleNamespace(name=f"s{i:02d}", super_pod_id=i // pod_size)
        for d in range(per):
            k = i * per + d
            ip = None if ip_pool is None and k % 7 == 3 else \
                IPv4Address(0x0A000000 + (k % ip_pool if ip_pool else k) * 2 + 1)
            group.append((s, SimpleNamespace(device_id=d, device_ip=ip, prefix=prefix)))
    order = draw(st.sampled_from(["server", "device", "reverse"]))
    if order == "device":
        group.sort(key=lambda m: (m[1].device_id, m[0].name))
    elif order == "reverse":
        group.reverse()
    return group


@settings(max_examples=150, deadline=None)
@given(_groups(), st.booleans(), st.booleans())
def test_pings_are_those_of_the_plain_planner(group, pods, twice):
    """Same pings, in the same order, per NPU, also when a second group adds to them."""
    plain: dict = {}
    fast: dict = {}
    for sink, select in ((plain, _plain_select), (fast, preflight._select)):
        select(group, pods, sink)
        if twice:
            select(group[::2], pods, sink)
    assert {k: list(v.items()) for k, v in plain.items()} == \
        {k: list(v.items()) if isinstance(v, dict) else v for k, v in fast.items()}


def test_a_65536_wide_group_has_list_buckets_of_16():
    """The EP group of a large A2 cluster (every NPU its own /31): 16 pings per NPU, kept
    as the list of picks (and still those of the plain planner)."""
    servers = [SimpleNamespace(name=f"n{i:03d}", super_pod_id=None) for i in range(128)]
    group = [(s, SimpleNamespace(device_id=d, prefix=31,
                                 device_ip=IPv4Address(0x06000001 + 2 * (8 * i + d))))
             for i, s in enumerate(servers) for d in range(8)]
    plain: dict = {}
    fast: dict = {}
    _plain_select(group, False, plain)
    preflight._select(group, False, fast)
    assert all(type(v) is list and len(v) == 16 for v in fast.values())
    assert {k: list(v.items()) for k, v in plain.items()} == fast


# --- launch script commands and double quoting -----------------------------------------


def _plain_command(prefix: str, proc, indent: str) -> list[str]:
    """Launch script commands before the remembered quoting: (word, starts a line) pairs."""
    def word(a):
        return f'"${a.name}"' if isinstance(a, Ref) else shlex.quote(a)

    items = [("env", False)] + [(shlex.quote(f"{k}={v}"), False) for k, v in proc.env] \
        if proc.env else []
    seen_flag = False
    for a in proc.argv:
        flag = isinstance(a, str) and len(a) > 1 and a.startswith("-")
        items.append((word(a), flag or (isinstance(a, Ref) and seen_flag)))
        seen_flag = seen_flag or flag
    lines: list[list[str]] = [[]]
    for w, flag in items:
        if flag and lines[-1]:
            lines.append([])
        lines[-1].append(w)
    out = []
    for i, ws in enumerate(lines):
        lead = f"{prefix} " if i == 0 else "  "
        cont = " \\" if i < len(lines) - 1 else ""
        out.append(f"{indent}{lead}{' '.join(ws)}{cont}")
    return out


_ARG = st.one_of(st.sampled_from(["-", "--port", "-x", "8000", "", "a b", "it's", "$HOME",
                                  "--data-parallel-size"]),
                 st.text(max_size=6), st.builds(Ref, st.sampled_from(["MODEL", "ENTRY"])))


@settings(max_examples=80, deadline=None)
@given(st.lists(_ARG, max_size=12),
       st.lists(st.tuples(st.sampled_from(["A", "B_C"]), st.text(max_size=4)), max_size=2),
       st.sampled_from(["", "  "]))
def test_launch_command_lines_are_the_plain_ones(argv, env, indent):
    proc = SimpleNamespace(argv=argv, env=env)
    assert "\n".join(launch_script.command_line("run", proc, indent)) == \
        "\n".join(_plain_command("run", proc, indent))


@given(st.text())
def test_double_quote_escaping_is_the_plain_one(value):
    assert launch_script.dq(value) == "".join("\\" + c if c in '"\\$`' else c for c in value)


# --- compile's plan.json self-check samples group members ------------------------------


def test_plan_self_check_sees_a_bad_group_member():
    """plan_problems samples the first members of each group: a bad one there is found."""
    import json
    from pathlib import Path

    from rtc.emit.bundle import plan_problems

    golden = TESTS / "golden" / "a2-2node-dp2-tp8" / "plan.json"
    plan = json.loads(golden.read_text())
    assert plan_problems(plan) == []
    plan["jobs"][0]["groups"]["tp"][0][1] = -1
    assert any("groups/tp/0/1" in p for p in plan_problems(plan))


def test_ip_text_memo_writes_what_ip_text_writes():
    from ipaddress import IPv6Address

    from rtc.textfmt import ip_text_memo

    text = ip_text_memo()
    ips = [IPv4Address("6.0.0.81"), IPv6Address("fd00::1"), None, IPv4Address("10.0.5.1")]
    assert [text(ip) for ip in ips + ips] == [ip_text(ip) for ip in ips + ips] == \
        ["6.0.0.81", "fd00::1", None, "10.0.5.1"] * 2
