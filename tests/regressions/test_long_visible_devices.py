"""Fresh user 2, item 2: a `CUDA_VISIBLE_DEVICES` of N entries was read in O(N^2) (a
list membership test per entry, `.index` per device): 20k entries took seconds, 200k
over a minute. The results asserted here are those of the quadratic code."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.network.env import parse_visible_devices


def _script(n: int) -> str:
    return ("export CUDA_VISIBLE_DEVICES=" + ",".join(map(str, range(n))) + "\n"
            "vllm serve m --tensor-parallel-size 8\n")


def test_a_long_list_is_read_whole_and_a_repeat_still_stops_it():
    n = 200_000
    ids = ",".join(map(str, range(n)))
    assert parse_visible_devices(ids).ids == tuple(range(n))
    bad = parse_visible_devices(ids + ",7")
    assert bad.ids == tuple(range(n)) and bad.problem == "device 7 is listed twice"


def test_twenty_thousand_gpus_get_the_same_findings():
    rep = lint_scripts([("vis.sh", _script(20_000))])
    got = {d.code: d for d in rep.diagnostics}
    assert got["RTC205"].message.startswith("vis uses device ids 64..19999, but generic-gpu "
                                            "has devices 0..63")
    assert "but is given 20000" in got["RTC210"].message
    assert (got["RTC210"].span.line, got["RTC210"].span.column) == (2, 1)
    assert "64 GPUs each, the most rtc gives a server it sizes from the scripts" \
        in got["RTC464"].message
    # the passing form: 8 entries for TP 8, sized as the script uses them
    rep = lint_scripts([("vis.sh", _script(8))])
    assert {d.code for d in rep.diagnostics} == {"RTC464"}
    assert "8 GPUs each as the scripts use them" in rep.diagnostics[0].message
