"""print_diagnostics writes to a pipe or file without rich, and writes there exactly what
rich wrote (issue 19: importing rich cost ~20 ms of a run that ends with a note)."""

from __future__ import annotations

import io
import sys

import pytest

from conftest import CASES
from rtc.api import compile_file
from rtc.report import text as text_report


def _printed(diagnostics, sources, through_rich: bool, monkeypatch, limit: int = 200) -> str:
    monkeypatch.setattr(text_report, "_is_terminal", lambda stream: through_rich)
    buf = io.StringIO()   # rich, asked, finds no terminal here either: no colour codes
    text_report.print_diagnostics(diagnostics, sources, stream=buf, limit=limit)
    return buf.getvalue()


@pytest.mark.parametrize("path", sorted((CASES / "checks").glob("*.rtc"))[::5],
                         ids=lambda p: p.name)
def test_plain_output_is_what_rich_printed(path, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    r = compile_file(str(path))
    plain = _printed(r.diagnostics, r.sources, False, monkeypatch)
    assert plain == _printed(r.diagnostics, r.sources, True, monkeypatch)
    assert "rich" not in plain


def test_the_limit_line_and_no_diagnostics(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    r = compile_file(str(CASES / "checks" / "RTC301-server-claimed-twice.rtc"))
    assert r.diagnostics
    for limit in (0, 1):
        plain = _printed(r.diagnostics, r.sources, False, monkeypatch, limit)
        assert plain == _printed(r.diagnostics, r.sources, True, monkeypatch, limit)
        assert plain.endswith(f"... and {len(r.diagnostics) - limit} more\n")
    assert _printed([], {}, False, monkeypatch) == ""


def test_a_pipe_does_not_import_rich():
    import subprocess

    code = ("import sys\nfrom rtc.api import compile_file\nfrom rtc.report.text import "
            "print_diagnostics\nr = compile_file(sys.argv[1])\n"
            "print_diagnostics(r.diagnostics, r.sources)\n"
            "print('rich' in sys.modules, file=sys.stdout)\n")
    res = subprocess.run([sys.executable, "-c", code,
                          str(CASES / "checks" / "RTC301-server-claimed-twice.rtc")],
                         capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    assert res.stdout == "False\n" and "RTC301" in res.stderr


@pytest.mark.parametrize("line, column, width, caret", [
    ("  host 中文", 8, 2, "       ^^^^"),              # a wide word: two columns each
    ('  id "中文" x', 11, 1, "            ^"),          # after wide text: shifted by it
    ("  id cafe\u0301 x", 12, 1, "          ^"),       # a combining accent takes none
    ("  host 10.0.0", 8, 6, "       ^^^^^^"),           # plain ASCII as before
])
def test_carets_stand_under_their_word_on_a_terminal(line, column, width, caret):
    from rtc.diagnostics import Span, error
    from rtc.rules import IO_ERROR

    d = error(IO_ERROR, "m", Span("f.rtc", 1, column, 1, column + width))
    lines = text_report.render_text([d], {"f.rtc": line + "\n"}).splitlines()
    assert lines[1] == f" 1 | {line}"
    assert lines[2] == f"   | {caret}"


@pytest.mark.parametrize("odd", ["\x0c", "\x85", "\u2028", "\x1c"])
def test_a_comment_with_a_line_separator_moves_no_snippet(odd):
    """Comments may hold anything; a form feed, NEL or U+2028 in one is no line break for
    lark, so it must not be one for the snippet either (every later error showed the line
    above its own, and an unclosed string became RTC100)."""
    from rtc.api import compile_text

    head = f"cluster c {{\n  # note {odd} here\n  hardware atlas-800t-a2\n}}\n"
    r = compile_text(head + "server n1 {\n  host 10.0.0.x\n  devices 0..7\n}\n", "f.rtc")
    (d,) = [d for d in r.diagnostics if d.code == "RTC111"]
    assert d.span.line == 6
    assert text_report.render_text([d], r.sources).splitlines()[1] == " 6 |   host 10.0.0.x"
    r = compile_text(head + "server n1 {\n  server_id \"abc\n}\n", "f.rtc")
    assert [(d.code, d.span.line) for d in r.diagnostics] == [("RTC106", 6)]


def test_source_lines_cut_where_lark_counts():
    from rtc.textfmt import source_lines

    assert source_lines("a\r\nb\x0cc\nd\u2028e\n") == ["a", "b\x0cc", "d\u2028e"]
    assert source_lines("a\n\nb") == ["a", "", "b"] and source_lines("") == []
    assert source_lines("a\rb\n") == ["a\rb"]   # a lone CR is no line end for lark either


def test_invisible_layout_characters_are_shown_escaped():
    """fresh7 finding 6: a zero-width space or a right-to-left override in a name reached
    the terminal raw (the `where:` line, the "did you mean" hint) and showed another name."""
    from rtc.diagnostics import error
    from rtc.rules import IO_ERROR
    from rtc.textfmt import printable

    assert printable("a\u202eb\u200bc\u2066d\ufeff") == "a\\u202eb\\u200bc\\u2066d\\ufeff"
    assert printable("中文 café é") == "中文 café é"   # what is merely not ASCII stays
    d = error(IO_ERROR, "no server named 'node\u202e10'", None, subject="server x\u200by",
              hint="did you mean 'node\u202e01'?")
    shown = text_report.render_text([d], {})
    assert "\u202e" not in shown and "\u200b" not in shown and "node\\u202e10" in shown
