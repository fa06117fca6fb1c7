"""A space that is not a plain one (pasted from a web page or a chat) is named, with the
fix, like the full-width digits are (RTC114's hint)."""

from __future__ import annotations

import pytest

from rtc.api import compile_text

TEXT = "cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.1\n  devices 0..7\n}\n" \
       "job j {\n  servers a\n  tpSEP8\n}\n"


@pytest.mark.parametrize("sep,name", [("\u00a0", "a no-break space (U+00A0)"),
                                      ("\u3000", "an ideographic space (U+3000)"),
                                      ("\u2003", "an em space (U+2003)")])
def test_an_odd_space_is_named_with_a_fix(sep, name):
    [d] = compile_text(TEXT.replace("SEP", sep), "x.rtc").diagnostics
    assert (d.code, d.span.line, d.span.column) == ("RTC100", 10, 5)
    assert d.message == f"{name} here: rtc separates words with plain spaces"
    assert d.hint.startswith(f"{name.replace('(', '').replace(')', '')}: replace it with a "
                             "plain space")


def test_a_plain_space_parses():
    result = compile_text(TEXT.replace("SEP", " "), "x.rtc")
    assert not [d for d in result.diagnostics if d.code == "RTC100"]
