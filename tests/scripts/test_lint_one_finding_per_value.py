"""`rtc lint`: one bad value is one finding. `--port 70000` is RTC720 at the value, not
also RTC446 (a port window past 65535) at the flag."""

from __future__ import annotations

from conftest import two_node_scripts
from rtc.api.linting import lint_scripts

SCRIPT = """\
#!/bin/bash
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve /models/qwen --tensor-parallel-size 8 --port {port}
"""


def _codes(port: str) -> list[tuple[str, int, int, str]]:
    rep = lint_scripts([("node.sh", SCRIPT.format(port=port))])
    return [(d.code, d.span.line, d.span.column, d.message) for d in rep.diagnostics
            if d.severity.name == "ERROR"]


def test_port_past_65535_is_one_rtc720():
    assert _codes("70000") == [("RTC720", 3, 57, "--port 70000 is not a port (1..65535)")]


def test_a_valid_port_has_no_error():
    assert _codes("8000") == []
