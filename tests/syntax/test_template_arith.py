"""Address templates computed by integer arithmetic (Template.ipv4_addresses) give exactly
what rendering the text and parsing it gives, including where that fails."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtc.diagnostics import Span
from rtc.syntax.values import parse_template

SPAN = Span("t.rtc", 1, 1, 1, 2)

# One octet: a literal (sometimes out of range or with a leading zero) or an expression.
literals = st.sampled_from(["0", "1", "6", "10", "99", "172", "255", "256", "007", "300"])
atoms = st.one_of(st.sampled_from(["i", "d", "k"]), st.integers(0, 300).map(str))
ops = st.sampled_from(["+", "-", "*", "/", "%"])
exprs = st.builds(lambda a, op, b, c: f"({a} {op} {b}) + {c}", atoms, ops, atoms, atoms) | atoms
octets = st.one_of(literals, exprs.map(lambda e: "{" + e + "}"))


def text_path(template, i, d, k):
    """What the text path gives: an address, or None when the text is not a valid IPv4
    address or the template cannot be evaluated."""
    try:
        text = template.render(i=i, d=d, k=k)
    except Exception:  # noqa: BLE001 - ValueProblem for division by zero
        return "error"
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        return None


@settings(max_examples=400, deadline=None)
@given(st.lists(octets, min_size=4, max_size=4), st.integers(0, 5000),
       st.lists(st.integers(0, 15), min_size=1, max_size=8, unique=True))
def test_same_as_rendering_text(parts, i, device_ids):
    template = parse_template(".".join(parts), SPAN)
    fast = template.ipv4_addresses(i, device_ids)
    expected = [text_path(template, i, d, k) for k, d in enumerate(device_ids)]
    if fast is None:
        # Not an arithmetic shape (a bad literal), or a group divides by zero.
        assert template.ipv4_octets is None or "error" in expected
        return
    assert "error" not in expected
    assert fast == expected


@pytest.mark.parametrize("text", ["10.0.0.1{d}", "10.0.0.{d}1", "10.0.{i}{d}.1", "10.0.0.{d:03}",
                                  "fd00::{d}", "10.00.0.{d}", "10.0.{i}.{d}.5", "{i}"])
def test_other_shapes_take_the_text_path(text):
    assert parse_template(text, SPAN).ipv4_octets is None


def test_a2_slash31_plan():
    t = parse_template("6.{i/4096}.{(i/16)%256}.{(i%16)*16 + 2*d + 1}", SPAN)
    assert [str(a) for a in t.ipv4_addresses(4097, [0, 7])] == ["6.1.0.17", "6.1.0.31"]
    assert t.ipv4_addresses(0, [200]) == [None]  # 401 is not an octet: the text path explains


def test_octet_bounds_are_exact():
    t = parse_template("10.{i-1}.0.{d+250}", SPAN)
    got = t.ipv4_addresses(1, list(range(8)))
    assert [str(a) if a else None for a in got] == [
        "10.0.0.250", "10.0.0.251", "10.0.0.252", "10.0.0.253", "10.0.0.254", "10.0.0.255",
        None, None]
    assert t.ipv4_addresses(0, [0]) == [None]  # -1 in the second octet
    assert t.ipv4_addresses(256, [0]) == [ipaddress.IPv4Address("10.255.0.250")]
    assert t.ipv4_addresses(257, [0]) == [None]


def _compile_host(host: str):
    from rtc.api import compile_text

    src = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily n[0..299] {\n"
           f"  host {host}\n  devices 0..1\n  device_ip 10.1.{{i/128}}.{{(i%128)*2+d}}\n}}\n")
    return compile_text(src, "h.rtc")


def test_host_templates_computed_and_explained():
    ok = _compile_host("10.0.{i/256}.{i%256}")
    assert [str(s.host_ip) for s in ok.topology.servers[255:258]] == [
        "10.0.0.255", "10.0.1.0", "10.0.1.1"]
    per_device = _compile_host("10.0.0.{d}")  # d is not known for a host
    assert [d.code for d in per_device.diagnostics if d.code < "RTC216"] == ["RTC113"]
    overflow = _compile_host("10.0.0.{i}")   # 256..299 are not octets: the first one is named
    msgs = [d.message for d in overflow.diagnostics if "host" in d.message]
    assert len(msgs) == 1 and "10.0.0.256" in msgs[0], msgs


def test_family_failure_counts_the_members_it_hits():
    overflow = _compile_host("10.0.0.{i}")  # n256..n299 fail: 44 of 300
    (msg,) = [d.message for d in overflow.diagnostics if d.code == "RTC207"]
    assert msg.endswith("(first for n256 of family n[0..299]; 44 of its 300 servers)")
