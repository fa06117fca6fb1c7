"""rtc.cost parameters: units, the two sets of links.toml, overrides and their errors."""

from __future__ import annotations

import math
import tomllib
from importlib import resources

import pytest

from rtc.cost.errors import ParamError
from rtc.cost.params import (PARAM_SETS, apply_overrides, chip_links, link_table,
                             load_params, param_keys, parse_override, selector_constants)
from rtc.cost.units import (format_bandwidth, format_duration, human_bytes, human_time,
                            parse_quantity)


# --------------------------------------------------------------------------- units

@pytest.mark.parametrize("text, seconds", [
    ("13us", 13e-6), ("0.02ms", 20e-6), ("60 us", 60e-6), ("1s", 1.0), ("500ns", 5e-7),
    ("2µs", 2e-6), ("1.5e1us", 15e-6)])
def test_durations_parse_to_seconds(text, seconds):
    assert parse_quantity(text, "duration") == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("text, bps", [
    ("28GB/s", 28e9), ("18.3GB/s", 18.3e9), ("200Gb/s", 25e9), ("100Gb/s", 12.5e9),
    ("500MB/s", 5e8), ("1GiB/s", 2 ** 30), ("400Mb/s", 5e7)])
def test_bandwidths_parse_to_bytes_per_second(text, bps):
    assert parse_quantity(text, "bandwidth") == pytest.approx(bps, rel=1e-12)


def test_sizes_parse_to_bytes():
    assert parse_quantity("1MiB", "size") == 1048576
    assert parse_quantity("32KiB", "size") == 32768
    assert parse_quantity("2MB", "size") == 2e6


def test_canonical_forms():
    assert format_duration(2e-5) == "20us"
    assert format_duration(0.0015) == "1500us"
    assert format_bandwidth(25e9) == "25GB/s"
    assert format_bandwidth(18.3e9) == "18.3GB/s"
    assert format_bandwidth(math.inf) == "inf"
    assert human_time(157e-6) == "157 us"
    assert human_time(0.0428) == "42.8 ms"
    assert human_bytes(14680064) == "14.7 MB"


@pytest.mark.parametrize("text", ["20 parsecs", "20", "us", "20 GB/s", "fast"])
def test_duration_with_a_bad_unit_is_a_clear_error(text):
    with pytest.raises(ParamError) as e:
        parse_quantity(text, "duration", what="parameter 'roce.alpha'")
    msg = str(e.value)
    assert "parameter 'roce.alpha'" in msg and repr(text.strip()) in msg
    assert "s, ms, us or ns" in msg


def test_bits_and_bytes_are_different_units():
    assert parse_quantity("8Gb/s", "bandwidth") == parse_quantity("1GB/s", "bandwidth")
    with pytest.raises(ParamError, match="GB/s, MB/s or Gb/s"):
        parse_quantity("8gb/s", "bandwidth")


# --------------------------------------------------------------------------- the sets

def test_both_sets_load_with_the_reference_values():
    assert PARAM_SETS == ("nominal", "hccl-plan")
    nom, plan = load_params("nominal"), load_params("hccl-plan")
    expect = {  # class: (nominal GB/s, hccl-plan GB/s, alpha us) -- reference 1.6
        "hccs-910a": (30, 10, 13), "hccs-910b": (28, 18.3, 13), "sio-a3": (270, 204, 13),
        "ub-a3": (196, 18.3, 14), "roce-100ge": (12.5, 10, 60), "roce-200ge": (25, 20, 60),
        "roce-400ge": (50, 40, 60), "pcie-gen4": (32, 27.2, 13), "pcie-gen5": (64, 54.4, 13)}
    for cls, (b_nom, b_plan, alpha) in expect.items():
        assert nom.link(cls).bandwidth == pytest.approx(b_nom * 1e9)
        assert plan.link(cls).bandwidth == pytest.approx(b_plan * 1e9)
        assert nom.link(cls).alpha == pytest.approx(alpha * 1e-6)
        assert plan.link(cls).alpha == pytest.approx(alpha * 1e-6)
    assert nom.link("ub-a3").share == "port" and plan.link("ub-a3").share == "link"
    assert nom.link("hccs-910b").share == "link" and nom.link("roce-200ge").port == "nic"
    assert nom.plan_bandwidth["roce-200ge"] == pytest.approx(20e9)
    assert nom.gamma == 0.0 and nom.host_alpha == pytest.approx(50e-6)


def test_every_row_of_the_file_names_its_source():
    data = tomllib.loads(resources.files("rtc.cost").joinpath("links.toml").read_text("utf-8"))
    rows = [row for s in data["sets"].values() for row in s["links"].values()]
    rows += [s[k] for s in data["sets"].values() for k in ("reduce", "host")]
    rows += list(data["chips"].values()) + [data["selector"]]
    # 12 Ascend classes in both sets, 9 NVIDIA classes in nominal; 4 Ascend + 9 GPU chips (GB200, GB300 added)
    assert len(rows) == 2 * 12 + 9 + 4 + 4 + 9 + 1
    for row in rows:
        assert isinstance(row.get("source"), str) and len(row["source"]) > 20, row
    assert all(r["source"] for r in link_table(load_params()))


def test_selector_and_chips():
    sel = selector_constants()
    assert sel.alpha == pytest.approx(60e-6)
    assert sel.pipeline_allreduce_min == 2 ** 20 and sel.pipeline_min == 32 * 1024
    assert sel.pipeline_min_no_lite == 2 * 2 ** 20
    assert chip_links("Ascend910B").server_link == "hccs-910b"
    assert chip_links("Ascend910_93").super_pod_link == "ub-a3"
    with pytest.raises(ParamError, match="chips with figures: Ascend910B"):
        chip_links("Ascend950")
    with pytest.raises(ParamError, match="accepted: nominal, hccl-plan"):
        load_params("fast")


def test_links_toml_ships_inside_the_package():
    # hatch ships everything under rtc/ (packages = ["rtc"]), like rtc/model/presets.toml
    assert resources.files("rtc.cost").joinpath("links.toml").is_file()
    assert resources.files("rtc.cost").joinpath("models.toml").is_file()
    assert resources.files("rtc.model").joinpath("presets.toml").is_file()


# --------------------------------------------------------------------------- overrides

def test_family_override_applies_to_every_class_and_echoes_canonically():
    p = apply_overrides(load_params(), ["roce.alpha=0.02ms", "hccs.bandwidth = 196 GB/s"])
    assert p.overrides == ("roce.alpha=20us", "hccs.bandwidth=196GB/s")
    for cls in ("roce-100ge", "roce-200ge", "roce-400ge"):
        assert p.link(cls).alpha == pytest.approx(20e-6)
        assert "override roce.alpha=20us" in p.link(cls).source
    for cls in ("hccs-910a", "hccs-910b", "hccs-a3"):
        assert p.link(cls).bandwidth == pytest.approx(196e9)
    assert p.link("sio-a3").bandwidth == pytest.approx(270e9)   # untouched
    assert load_params().link("roce-200ge").alpha == pytest.approx(60e-6)  # no mutation


def test_class_and_global_overrides():
    p = apply_overrides(load_params("hccl-plan"),
                        ["roce-200ge.bandwidth=100Gb/s", "reduce.bandwidth=483GB/s",
                         "host.alpha=1ms", "selector.alpha=30us", "ub-a3.alpha=0us"])
    assert p.link("roce-200ge").bandwidth == pytest.approx(12.5e9)
    assert p.link("roce-400ge").bandwidth == pytest.approx(40e9)
    assert p.gamma == pytest.approx(1 / 483e9)
    assert p.host_alpha == pytest.approx(1e-3) and p.selector_alpha == pytest.approx(30e-6)
    assert p.link("ub-a3").alpha == 0.0
    assert parse_override("ub-a3.alpha=0us", p).text == "ub-a3.alpha=0us"


def test_unknown_key_says_what_is_accepted():
    with pytest.raises(ParamError) as e:
        apply_overrides(load_params(), ["rcoe.alpha=20us"])
    msg = str(e.value)
    assert "'rcoe.alpha' is unknown" in msg and "did you mean 'roce.alpha'" in msg
    assert "hccs-910b" in msg and "reduce.bandwidth" in msg
    with pytest.raises(ParamError, match="'roce.latency' is unknown"):
        parse_override("roce.latency=20us", load_params())
    assert "roce.alpha" in param_keys(load_params())


@pytest.mark.parametrize("text, needle", [
    ("roce.alpha=-5us", "'-5us' is negative"),
    ("hccs.bandwidth=-1GB/s", "'-1GB/s' is negative"),
    ("roce.alpha=20 lightyears", "'20 lightyears' does not parse"),
    ("hccs.bandwidth=196", "'196' does not parse"),
    ("hccs.bandwidth=0GB/s", "'0GB/s' is zero"),
    ("hccs.bandwidth=inf", "'inf' does not parse"),
    ("roce.alpha20us", "is not KEY=VALUE"),
    ("=20us", "is not KEY=VALUE"),
])
def test_bad_override_values_are_located(text, needle):
    with pytest.raises(ParamError) as e:
        apply_overrides(load_params(), ["roce.alpha=1us", text])
    msg = str(e.value)
    assert needle in msg
    if "=" in text and not text.startswith("="):
        assert f"parameter '{text.split('=')[0].strip()}'" in msg
        assert "expected a " in msg


def test_reduce_bandwidth_may_be_infinite():
    p = apply_overrides(load_params(), ["reduce.bandwidth=483GB/s", "reduce.bandwidth=inf"])
    assert p.gamma == 0.0 and p.overrides[-1] == "reduce.bandwidth=inf"


@pytest.mark.parametrize("name", ["units", "params", "links", "hccl_algo", "moe"])
def test_docstring_examples_hold(name):
    import doctest
    import importlib
    module = importlib.import_module(f"rtc.cost.{name}")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
