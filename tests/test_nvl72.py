"""NVL72-class NVLink domains: TP across the trays of one domain (`super_pod` on a
gb200-nvl72 preset) is not cross-server traffic; across two domains it is, with the cost."""

from __future__ import annotations

from conftest import EXAMPLES
from rtc.api import compile_text
from rtc.model.presets import presets

EXAMPLE = EXAMPLES / "gpu-gb200-nvl72-tp8.rtc"


def _codes(text: str) -> list:
    return [d for d in compile_text(text, "nvl72.rtc").diagnostics]


def test_tp_across_trays_of_one_nvlink_domain_is_no_finding():
    assert _codes(EXAMPLE.read_text()) == []


def test_tp_across_two_nvlink_domains_is_cross_server_with_its_cost():
    text = EXAMPLE.read_text()
    at = text.rindex("super_pod nvl72-a")
    diags = _codes(text[:at] + "super_pod nvl72-b" + text[at + len("super_pod nvl72-a"):])
    assert sorted(d.code for d in diags) == ["RTC310", "RTC312"]
    cost = next(d for d in diags if d.code == "RTC312").message
    assert "67 us over ib-ndr" in cost and "14 us over nvlink5" in cost


def test_a_tray_without_a_domain_is_cross_server():
    text = EXAMPLE.read_text().replace("  super_pod nvl72-a\n", "", 1)
    assert "RTC310" in [d.code for d in _codes(text)]


def test_new_gpu_presets_name_their_source():
    for name in ("gb200-nvl72", "gb300-nvl72", "l40s-pcie", "gpu-vm-1"):
        p = presets()[name]
        assert p.is_gpu and p.source
    assert presets()["gb200-nvl72"].super_pod and presets()["gb200-nvl72"].devices_per_server == 4
