"""Fresh-user robustness: absurd sizes never crash, knock-on errors are not reported
before (or instead of) the real one, and messages say what/where/why/fix."""

from __future__ import annotations

import pytest

from conftest import run_rtc
from rtc.api import compile_file, compile_text

HEAD = "cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.6\n" \
       "  device_ip 6.0.2.1 step 1\n}\nserver b {\n  host 10.0.0.7\n" \
       "  device_ip 6.0.3.1 step 1\n}\n"
# HEAD is 11 lines; a job starts on line 12.


def _job(*lines: str) -> str:
    return HEAD + "job j {\n" + "".join(f"  {ln}\n" for ln in lines) + "}\n"


def _errors(text: str):
    return [d for d in compile_text(text, "x.rtc").diagnostics if d.severity.label == "error"]


def _where(diags):
    return [(d.code, d.span.line, d.span.column) for d in diags]


@pytest.mark.parametrize("key", ["tp", "dp", "pp", "pcp"])
@pytest.mark.parametrize("value", ["99999999999999999999999999", "4000000000", "10000000",
                                   "9" * 5000])
def test_huge_sizes_are_rtc114_without_traceback(key, value):
    errs = _errors(_job("servers a", f"{key} {value}"))
    assert _where(errs) == [("RTC114", 14, 3 + len(key) + 1)], [d.message for d in errs]
    assert errs[0].hint and "1,048,576" in errs[0].hint


def test_world_product_cap_is_rtc114_at_the_largest_size():
    errs = _errors(_job("servers a", "dp 2048", "tp 1024", "pp 2"))
    assert _where(errs) == [("RTC114", 14, 6)], [d.message for d in errs]
    assert "2,097,152" in errs[0].message


def test_large_world_mismatch_is_rtc210_and_fast():
    errs = _errors(_job("servers a", "dp 1048576"))
    assert _where(errs) == [("RTC210", 12, 5)]


def test_huge_size_cli_no_traceback():
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".rtc", delete=False) as f:
        f.write(_job("servers a", "tp 99999999999999999999999999"))
    res = run_rtc("check", f.name)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr and "error[RTC114]" in res.stderr


@pytest.mark.parametrize("value", ["0", "eight", "8.0"])
def test_bad_size_gives_no_world_size_knock_on(value):
    errs = _errors(_job("servers a, b", f"tp {value}"))
    assert _where(errs) == [("RTC114", 14, 6)], [d.message for d in errs]


def test_out_of_range_hint_grammar():
    (err,) = _errors(_job("servers a", "tp 0"))
    assert err.hint == "use a value from 1 to 1,048,576"
    (err,) = _errors(HEAD.replace("step 1", "step 0", 1) + "job j {\n  servers a, b\n  tp 16\n}\n")
    assert "in >=" not in (err.hint or "") and "at least" not in err.message


def test_unknown_server_gives_no_world_size_knock_on():
    errs = _errors(_job("servers a, c", "tp 16"))
    assert _where(errs) == [("RTC215", 13, 14)], [d.message for d in errs]


def test_bad_device_ip_gives_no_missing_device_ip():
    text = HEAD.replace("device_ip 6.0.2.1 step 1", "device_ip 6.0.2.1 step 0") + \
        "job j {\n  servers a, b\n  tp 16\n}\n"
    errs = _errors(text)
    assert _where(errs) == [("RTC114", 6, 26)], [d.message for d in errs]


def test_duplicate_env_is_rtc115_with_related():
    errs = _errors(_job("servers a", "tp 8", "env A = 1", "env A = 2"))
    assert _where(errs) == [("RTC115", 16, 7)]
    assert "env A" in errs[0].message
    assert errs[0].related and errs[0].related[0].span.line == 15


@pytest.mark.parametrize("name,hint", [("RTC999", None), ("cross_node_tpp", "cross_node_tp"),
                                       ("cross-node-tpp", "cross-node-tp")])
def test_unknown_policy_rule_is_rtc118(name, hint):
    text = HEAD.replace("atlas-800t-a2\n", f"atlas-800t-a2\n  policy {name} error\n", 1) + \
        "job j {\n  servers a\n  tp 8\n}\n"
    errs = _errors(text)
    assert _where(errs) == [("RTC118", 3, 10)], [d.message for d in errs]
    if hint:
        assert f"'{hint}'" in errs[0].hint


@pytest.mark.parametrize("name", ["RTC210", "world-size-mismatch", "world_size_mismatch"])
def test_known_policy_rule_is_accepted(name):
    text = HEAD.replace("atlas-800t-a2\n", f"atlas-800t-a2\n  policy {name} warn\n", 1) + \
        "job j {\n  servers a\n  tp 8\n}\n"
    assert not _errors(text)


def test_template_division_by_zero_names_server_and_hint():
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily n[0..1] {\n"
            "  host 10.0.0.{i/0}\n}\n")
    (err,) = [d for d in _errors(text) if d.code == "RTC113"]
    assert _where([err]) == [("RTC113", 5, 8)]
    assert "divides by zero for server n0 (i=0)" in err.message
    assert err.hint


def test_bom_is_stripped(tmp_path):
    path = tmp_path / "bom.rtc"
    path.write_bytes(b"\xef\xbb\xbf" + _job("servers a", "tp 8").encode())
    assert not [d for d in compile_file(str(path)).diagnostics if d.severity.label == "error"]
    assert not _errors("\ufeff" + _job("servers a", "tp 8"))


def test_invisible_characters_are_escaped_in_messages():
    (err,) = _errors("xx\u200b {\n}\n")
    assert err.code == "RTC104" and "\\u200b" in err.message and "\u200b" not in err.message


def test_nested_known_block_is_reported():
    errs = _errors(_job("servers a", "tp 8", "server x {", "}"))
    assert ("RTC110", 15, 3) in _where(errs)


def test_deeply_nested_blocks_are_rtc110_not_a_recursion_error():
    # found by tools/fuzz.py (seed 2): 50,000 nested blocks overflowed the converter's stack
    text = "server a {\n" * 5000 + "}\n" * 5000
    errs = _errors(text)
    assert ("RTC110", 2) in [(e.code, e.span.line) for e in errs]
    assert sum(e.code == "RTC110" for e in errs) == 1


def test_padded_family_order_hint():
    text = ("cluster c {\n  hardware atlas-800t-a2\n}\nfamily n[00..120] {\n"
            "  device_ip 6.{i/256}.{i%256}.{k}\n}\njob j {\n  servers n[00..120]\n"
            "  framework mindspore\n  dp 121\n  tp 8\n}\n")
    diags = [d for d in compile_text(text, "x.rtc").diagnostics if d.code == "RTC216"]
    assert _where(diags) == [("RTC216", 4, 8)]
    assert "n[000..120]" in diags[0].hint
