"""What a user hit in the memory checks (rtc/checks/kv_capacity.py, rtc/checks/env_values.py):
weights + communicator buffers over the HBM (RTC348), an HCCL_BUFFSIZE no communicator can
allocate (RTC458), and the --max-model-len RTC344 suggests, held to vLLM's own arithmetic
(vllm/v1/core/kv_cache_utils.py ``_check_enough_kv_cache_memory`` and
``estimate_max_model_len``, ``FullAttentionSpec.max_memory_usage_bytes``: whole blocks)."""

from __future__ import annotations

import pytest

from conftest import CASES, ROOT
from rtc.api import compile_text
from rtc.diagnostics import Severity

D1 = (ROOT / "examples" / "a2-2node-dp2-tp8.rtc").read_text()
RTC344_CASE = (CASES / "checks" / "RTC344-kv-cache-below-one-sequence.rtc").read_text()
RTC348_CASE = CASES / "checks" / "RTC348-no-memory-for-kv-cache.rtc"


def _d1(buffsize: str, args: str = "") -> str:
    text = D1.replace("env HCCL_BUFFSIZE = 1024", f"env HCCL_BUFFSIZE = {buffsize}")
    return text.replace('  port 8077\n', f'  port 8077\n  args "{args}"\n') if args else text


def _found(text: str, *codes: str):
    return [d for d in compile_text(text, "d1.rtc").diagnostics if d.code in codes]


def test_buffers_over_the_hbm_are_an_error_though_the_model_is_guessed():
    """D1 with HCCL_BUFFSIZE 40000: 4 communicators (TP, DP, EP, MC2) x 2 x 40,000 MiB =
    335.5 GB of buffers beside 43.0 GB of weights on a 64 GB 910B (57.6 GB usable at 0.9).
    Before: "no problems found". The model is guessed from its path; still an error."""
    (d,) = _found(_d1("40000"), "RTC348")
    assert d.severity is Severity.ERROR
    assert (d.span.line, d.span.column) == (42, 23)      # the HCCL_BUFFSIZE value
    assert "weights 43.0 GB + communicator buffers 335.5 GB (2 x HCCL_BUFFSIZE 40000 MB x 4 " \
        "communicators: TP, DP, EP, MC2) exceed the 57.6 GB usable (64 GB x 0.90)" \
        in d.message
    assert "the buffers take the most" in d.message
    assert '"No available memory for the cache blocks"' in d.message
    # room = 57.6 - 43.0 - 0.2 - 0.54 GB over 2 x 4 buffers: 1,658 MiB each
    assert "set HCCL_BUFFSIZE (MB) below 1658" in d.hint
    assert "the default 200 leaves 11.4 GiB" in d.hint


def test_the_case_file_and_d1_as_written():
    """The failing case file (model guessed, no --max-model-len) and D1 as shipped
    (HCCL_BUFFSIZE 1024: 8.6 GB of buffers, 5.0 GiB of KV cache left): no RTC348."""
    (d,) = _found(RTC348_CASE.read_text(), "RTC348")
    assert (d.span.line, d.span.column) == (30, 23)
    assert compile_text(D1, "d1.rtc").diagnostics == []


def test_a_max_model_len_does_not_hide_the_missing_kv_cache():
    """Before: only the RTC345 warning with --max-model-len 131072. Nothing is left at any
    length, so the first refusal (RTC348) is what is reported, and only it."""
    found = _found(_d1("40000", "--max-model-len 131072"), "RTC344", "RTC345", "RTC348")
    assert [(d.code, d.severity) for d in found] == [("RTC348", Severity.ERROR)]


@pytest.mark.parametrize("value,expect", [
    ("99999999999999", "is 99,999,999,999,999 MB per buffer: the 2 buffers of one "
                       "communicator take 209,715,200,000 GB, more than the device's 64 GB HBM"),
    ("40000", "is 40,000 MB per buffer: the 2 buffers of one communicator take 84 GB"),
    ("0", "must be at least 1 (MB per communicator buffer)"),
    ("abc", None),
    ("²", None),
    ("9" * 5000, None),
])
def test_hccl_buffsize_values_are_located_findings_never_a_crash(value, expect, rtc, tmp_path):
    """RTC458 on the value (its line and column) for a size no communicator can allocate
    and for a value that is not a positive whole number; check, cost and advise all end
    with a report, not a traceback (before: '²' and 5,000 digits raised in int())."""
    text = _d1(value)
    (d,) = _found(text, "RTC458")
    assert (d.span.line, d.span.column) == (42, 23)
    if expect:
        assert expect in d.message
    path = tmp_path / "d1.rtc"
    path.write_text(text)
    for command in ("check", "cost", "advise"):
        res = rtc(command, str(path))
        assert "Traceback" not in res.stderr + res.stdout, (command, res.stderr[-400:])
        assert res.returncode == 1, (command, res.returncode)
        assert "error[RTC458]" in res.stdout + res.stderr


def test_no_room_within_the_estimate_is_a_warning():
    """DP8 x TP2 + EP with HCCL_BUFFSIZE 900 and the model guessed: weights 49.4 GB +
    buffers 7.5 GB fit the 57.6 GB usable, the estimated activation peak and reserve tip
    it over: RTC345 (a warning, the estimate's), not the RTC348 error."""
    text = _d1("900").replace("  dp 2\n  tp 8\n", "  dp 8\n  tp 2\n")
    (d,) = _found(text, "RTC345", "RTC348")
    assert (d.code, d.severity) == ("RTC345", Severity.WARNING)
    assert "weights 49.4 GB + communicator buffers 7.5 GB (2 x HCCL_BUFFSIZE 900 MB x 4 " \
        "communicators: TP, DP, EP, MC2) + activation peak and reserve ~0.8 GB = 57.7 GB " \
        "exceed the 57.6 GB usable" in d.message
    assert d.message.endswith("; estimated: model guessed from its path")
    assert len(d.message) <= 400                      # shown whole by the text reporter


def test_a_sane_hccl_buffsize_is_not_refused():
    assert _found(_d1("30000"), "RTC458") == []      # 2 x 30,000 MiB = 62.9 GB <= 64 GB


def test_rtc344_suggests_the_length_vllm_itself_suggests():
    """D1's layout, cost_model deepseek-v3, --max-model-len 131072: 591 blocks of 128 tokens
    are left (75,648 tokens). vLLM's estimate_max_model_len searches for the largest length
    whose cdiv(length, 128) blocks fit: 591 x 128 = 75,648. Before: 75,684, which vLLM
    refuses (592 blocks)."""
    (d,) = _found(RTC344_CASE, "RTC344")
    assert d.hint.startswith("--max-model-len 75648 (what vLLM itself suggests: 591 blocks "
                             "of 128 tokens)")
    assert "75684" not in d.hint


def test_the_suggested_length_starts_and_one_token_more_does_not():
    """The boundary as vLLM draws it: 75,648 fits in 591 blocks; 75,649 needs a 592nd
    block, which is not there (a small shortfall: the RTC345 warning, within the margin)."""
    fits = RTC344_CASE.replace("--max-model-len 131072", "--max-model-len 75648")
    over = RTC344_CASE.replace("--max-model-len 131072", "--max-model-len 75649")
    assert _found(fits, "RTC344", "RTC345", "RTC348") == []
    (d,) = _found(over, "RTC344", "RTC345")
    assert d.code == "RTC345" and "one sequence of 75,649 tokens" in d.message
    assert d.hint.startswith("--max-model-len 75648")
