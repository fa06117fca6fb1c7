"""Device-numbering findings say what the user wrote and what rtc does with it: a
non-ascending `env ASCEND_RT_VISIBLE_DEVICES` line of a description is replaced by rtc's
env file (RTC434 warning saying so, no RTC507 beside it; in a script it stays an error,
tests/regressions/test_confusing_output.py), and RTC433 quotes `visible_devices` in the
order written."""

from __future__ import annotations

from rtc.api import compile_text

BASE = """cluster c {
  hardware atlas-800t-a2
}
server a {
  host 10.0.0.1
  nic eno0
MOUNT  devices 3, 4
  device_ip 6.0.0.1 step 1
}
job serve {
  servers a
  tp 2
  model_kind dense
ENV}
"""


def _diags(mount: str = "", env: str = ""):
    text = BASE.replace("MOUNT", mount).replace("ENV", env)
    return compile_text(text, "v.rtc").diagnostics


def test_unsorted_env_line_is_one_warning_saying_rtc_replaces_it():
    got = [(d.code, d.severity.name, d.span.line, d.span.column, d.message)
           for d in _diags(env='  env ASCEND_RT_VISIBLE_DEVICES = "1,0"\n')]
    assert got == [("RTC434", "WARNING", 14, 35,
                    'job serve: env ASCEND_RT_VISIBLE_DEVICES = "1,0" is not in ascending '
                    "order, which CANN refuses (EE1001); the line has no effect: rtc writes "
                    "each server's own list in its env file (a: 3,4)")]


def test_the_ascending_list_rtc_writes_too_is_no_finding():
    """The passing side of RTC434."""
    got = [d.code for d in _diags(env='  env ASCEND_RT_VISIBLE_DEVICES = "3,4"\n')]
    assert got == ["RTC433"]   # the numbering note only


def test_numbering_note_quotes_visible_devices_as_written():
    [n] = [d for d in _diags(mount="  visible_devices 4, 3\n") if d.code == "RTC433"]
    assert n.message == ("job serve on a: physical 3, 4 (rank table device_id) = container "
                         "0, 1 (visible_devices 4, 3)")
    [n] = [d for d in _diags(mount="  visible_devices 3, 4\n") if d.code == "RTC433"]
    assert n.message.endswith("(visible_devices 3, 4)")
