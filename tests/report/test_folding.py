"""Folding repeated findings (rtc.report.folding) and `rtc validate --max-findings/--no-fold`
on the table MindSpore's first merge_hccl.py wrote: every rank_id a JSON number."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_rtc
from rtc.api.validating import validate_source
from rtc.diagnostics import Span, error, warning
from rtc.report.folding import EXAMPLES, FOLD_AFTER, cap, fold, omitted_text, pattern_of
from rtc.report.registry import counts
from test_reporters import sarif_validator


def merged_table(servers: int, *, numeric_ranks: bool = True) -> dict:
    """The shape of hccl_tools.py + merge_hccl.py output: server_id = host IP,
    host_nic_ip "reserve", rank_id as a JSON number (before commit af53274)."""
    server_list = []
    for s in range(servers):
        devices = [{"device_id": str(d), "device_ip": f"192.98.{s}.{d + 1}",
                    "rank_id": s * 8 + d if numeric_ranks else str(s * 8 + d)}
                   for d in range(8)]
        server_list.append({"device": devices, "server_id": f"10.155.111.{s + 1}",
                            "host_nic_ip": "reserve"})
    return {"version": "1.0", "server_count": str(servers), "server_list": server_list,
            "status": "completed"}


def _write(tmp_path, doc, name="hccl.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=4), encoding="utf-8")
    return path


# ------------------------------------------------------------------ the pure functions

def test_pattern_writes_indexes_numbers_and_addresses_as_wildcards():
    assert pattern_of('server_list[3].device[7].rank_id: must be "31", not 31') == \
        'server_list[*].device[*].rank_id: must be "#", not #'
    assert pattern_of("device IP 6.0.2.17 of node0012 and fe80::1:2") == \
        "device IP # of node# and #"


def _many(n, message="server_list[{i}].device[0].rank_id: bare number {i}"):
    return [error("RTC610", message.format(i=i), Span("t.json", 10 + i, 5),
                  subject=f"rank {i}") for i in range(n)]


def test_a_pattern_of_more_than_fold_after_findings_is_one_finding_with_a_count():
    ds = _many(FOLD_AFTER + 1) + [warning("RTC632", "not in rank order", Span("t.json", 1, 1))]
    out = fold(ds)
    assert [d.code for d in out] == ["RTC632", "RTC610"]
    head = out[1]
    assert head.repeats == FOLD_AFTER
    assert head.message.endswith(f"(and {FOLD_AFTER} more like it)")
    assert head.span == Span("t.json", 10, 5)
    assert [r.message for r in head.related] == [f"also rank {i}" for i in range(1, 1 + EXAMPLES)]
    assert counts(out) == {"errors": FOLD_AFTER + 1, "warnings": 1, "notes": 0}
    assert head.to_dict()["count"] == FOLD_AFTER + 1


def test_up_to_fold_after_findings_stay_as_they_are():
    ds = _many(FOLD_AFTER)
    assert fold(ds) == ds
    assert "count" not in ds[0].to_dict()


def test_folding_is_idempotent_and_counts_findings_already_folded():
    once = fold(_many(FOLD_AFTER + 1) + _many(2 * FOLD_AFTER, "other {i}"))
    assert fold(once) == once
    assert sorted(d.repeats for d in once) == [FOLD_AFTER, 2 * FOLD_AFTER - 1]
    head = next(d for d in once if d.repeats == FOLD_AFTER)
    many_folded = [head] * (FOLD_AFTER + 1)  # one pattern, each standing for 11
    assert fold(many_folded)[0].repeats == (FOLD_AFTER + 1) ** 2 - 1


def test_cap_keeps_the_first_and_counts_the_rest():
    ds = _many(3, "finding {i} of a kind") + _many(2, "other {i}")
    shown, rest = cap(ds, 2)
    assert shown == ds[:2] and rest == ds[2:]
    assert omitted_text(rest) == "3 more findings not shown (--max-findings)"
    assert cap(ds, None) == (ds, [])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["RTC610", "RTC615"]), st.integers(0, 3),
                          st.integers(0, 400)), max_size=60))
def test_folding_never_loses_a_finding(items):
    ds = [error(code, f"pattern {kind} value {v}", Span("t.json", v + 1, kind + 1))
          for code, kind, v in items]
    out = fold(ds)
    assert counts(out) == counts(ds)
    assert len(out) <= len(ds)


# ------------------------------------------------------------------ validate, folded as made

@pytest.mark.parametrize("servers", [2, 20])
def test_folding_while_validating_reads_like_folding_the_report(servers):
    text = json.dumps(merged_table(servers), indent=4)
    early = validate_source(text, "hccl.json", fold=True).diagnostics
    late = validate_source(text, "hccl.json").diagnostics
    assert fold(early) == fold(late)
    assert counts(early) == counts(late)


def test_validate_text_folds_65k_style_tables_into_one_finding(tmp_path):
    path = _write(tmp_path, merged_table(16))
    res = run_rtc("validate", str(path))
    assert res.returncode == 1
    assert res.stdout.count("error[RTC610]") == 1
    assert f"{path}:10:32: error[RTC610]: server_list[0].device[0].rank_id:" in res.stdout
    assert "(and 127 more like it)" in res.stdout
    assert f"= note: also server 10.155.111.1, device 1, rank 1 ({path}:15:32)" in res.stdout
    # the bare-number rank ids are still read, so their order is judged too: the servers'
    # IP-like ids sort as text otherwise than by rank (RTC216, one folded warning)
    assert res.stdout.count("warning[RTC216]") == 1
    assert res.stdout.rstrip().endswith("rtc: 128 errors, 1 warning (1 file checked)")


def test_validate_json_sarif_github_carry_the_count(tmp_path):
    path = _write(tmp_path, merged_table(16))
    doc = json.loads(run_rtc("validate", "--format", "json", str(path)).stdout)
    (d,) = [x for x in doc["diagnostics"] if x["severity"] == "error"]
    assert d["code"] == "RTC610" and d["count"] == 128
    assert doc["summary"]["errors"] == 128 and doc["files"][0]["errors"] == 128
    sarif = json.loads(run_rtc("validate", "--format", "sarif", str(path)).stdout)
    sarif_validator().validate(sarif)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "RTC610"]
    assert result["occurrenceCount"] == 128 and len(result["relatedLocations"]) == EXAMPLES
    github = run_rtc("validate", "--format", "github", str(path)).stdout.splitlines()
    errors = [line for line in github if line.startswith("::error")]
    assert len(errors) == 1 and "(and 127 more like it)" in errors[0]


def test_no_fold_reports_every_rank(tmp_path):
    path = _write(tmp_path, merged_table(2))
    doc = json.loads(run_rtc("validate", "--format", "json", "--no-fold", str(path)).stdout)
    assert len(doc["diagnostics"]) == 16
    assert all("count" not in d for d in doc["diagnostics"])


def test_max_findings_cuts_the_list_but_not_the_counts(tmp_path):
    doc = merged_table(2, numeric_ranks=False)
    doc["server_list"][0]["device"][0]["device_ip"] = "not-an-ip"
    doc["server_list"][1]["device"][3]["device_id"] = 7
    path = _write(tmp_path, doc)
    full = json.loads(run_rtc("validate", "--format", "json", str(path)).stdout)
    res = run_rtc("validate", "--format", "json", "--max-findings", "1", str(path))
    cut = json.loads(res.stdout)
    assert len(full["diagnostics"]) >= 2 and len(cut["diagnostics"]) == 1
    assert cut["diagnostics"][0] == full["diagnostics"][0]
    assert cut["summary"]["errors"] == full["summary"]["errors"]
    assert cut["summary"]["omitted"] == len(full["diagnostics"]) - 1
    assert "more finding" in res.stderr and "not shown (--max-findings)" in res.stderr
    text = run_rtc("validate", "--max-findings", "1", str(path))
    assert text.stdout.count("error[RTC") == 1
    assert run_rtc("validate", "--max-findings", "0", str(path)).returncode == 2
