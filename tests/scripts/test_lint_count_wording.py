"""Counts in RTC210 and RTC431 read as English: "needs 1 device", "1 device is not ...",
and a ASCEND_RT_VISIBLE_DEVICES whose first entry is bad "sees no device" (never "uses
only nothing")."""

from __future__ import annotations

from rtc.api.linting import lint_scripts


def _one(visible: str, flags: str):
    text = (f"#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES={visible}\n"
            f"vllm serve /m {flags}\n")
    return lint_scripts([("n.sh", text)])


def _found(rep, code):
    return [(d.severity.label, d.span.line, d.span.column, d.message, d.hint)
            for d in rep.diagnostics if d.code == code]


def test_rtc210_says_1_device_in_the_singular():
    ((sev, line, col, msg, hint),) = _found(_one("0,1", "--tensor-parallel-size 1"),
                                            "RTC210")
    assert (sev, line, col) == ("error", 3, 1)
    assert "needs 1 device (dp 1 x pp 1 x pcp 1 x tp 1) but is given 2" in msg
    assert hint.startswith("with 2 devices use dp 2")


def test_rtc210_hint_says_1_device_is_not_a_whole_number_of_replicas():
    ((sev, line, col, msg, hint),) = _found(_one("0", "--tensor-parallel-size 3"), "RTC210")
    assert (sev, line, col) == ("error", 3, 1)
    assert "needs 3 devices (dp 1 x pp 1 x pcp 1 x tp 3) but is given 1" in msg
    assert hint.startswith("1 device is not a whole number of replicas of 3;")


def test_a_visible_list_whose_first_entry_is_bad_sees_no_device():
    ((sev, line, _, msg, _),) = _found(_one("x,1", "--tensor-parallel-size 1"), "RTC431")
    assert (sev, line) == ("error", 2)
    assert msg.endswith("entry 'x' is not a whole number; the runtime stops reading there "
                        "and sees no device")
    assert "nothing" not in msg


def test_a_visible_list_with_a_bad_later_entry_uses_only_the_ones_before():
    ((sev, line, _, msg, _),) = _found(_one("0,x", "--tensor-parallel-size 1"), "RTC431")
    assert (sev, line) == ("error", 2)
    assert msg.endswith("the runtime stops reading there and uses only 0")


def test_a_right_visible_list_and_device_count_pass():
    rep = _one("0,1", "--tensor-parallel-size 2")
    assert _found(rep, "RTC210") == [] and _found(rep, "RTC431") == []


def _gpu(visible: str, tp: int):
    text = (f"#!/bin/bash\nexport CUDA_VISIBLE_DEVICES={visible}\n"
            f"vllm serve /m --tensor-parallel-size {tp}\n")
    return lint_scripts([("g.sh", text)])


def test_rtc464_says_1_gpu_each_in_the_singular():
    ((sev, line, _, msg, _),) = _found(_gpu("0", 1), "RTC464")
    assert (sev, line) == ("note", 1)
    assert "(generic-gpu, 1 GPU each as the scripts use them)" in msg
    assert "1 GPUs" not in msg


def test_rtc464_says_2_gpus_each_in_the_plural():
    ((_, _, _, msg, _),) = _found(_gpu("0,1", 2), "RTC464")
    assert "(generic-gpu, 2 GPUs each as the scripts use them)" in msg
