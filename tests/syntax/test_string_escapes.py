"""Quoted strings know four escapes (\\" \\\\ \\n \\t); any other escape and any raw control
character is RTC119 at its column; `rtc fmt` keeps strings as written; DOT output never
carries raw control characters (names from rank tables can still hold them)."""

from __future__ import annotations

import json

import pytest

from conftest import CASES
from rtc.syntax.ast import Assign
from rtc.syntax.formatter import SourceSyntaxError, format_source
from rtc.syntax.parser import parse_text

HEAD = "cluster c {\n  hardware atlas-800t-a2\n}\nserver a {\n  host 10.0.0.6\n"
PASS = CASES / "checks" / "pass-string-escapes.rtc"


def _env_values(src) -> list[str]:
    return [arg.value.text for block in src.blocks for item in block.body
            if getattr(item, "key", None) == "env"
            for arg in item.args if isinstance(arg, Assign)]


def _one_error(text: str):
    src, diags = parse_text(text, "s.rtc")
    assert src is None
    (d,) = diags
    return d


def test_the_four_escapes_keep_their_meaning():
    src, diags = parse_text(PASS.read_text(encoding="utf-8"), "p.rtc")
    assert diags == []
    assert _env_values(src) == ['say "hi"\\tab\there\nnext']


def test_unknown_escape_is_located_at_the_backslash():
    d = _one_error(HEAD + '  server_id "x\\u001b[2J"\n}\n')
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == ("RTC119", 6, 15, 17)
    assert d.message == "unknown escape `\\u` in a string"
    assert "`\\\"`, `\\\\`, `\\n` and `\\t`" in d.hint and "`\\\\`" in d.hint


@pytest.mark.parametrize("text,col,shown", [
    ('  server_id "ab\\d"\n', 16, "`\\d`"),          # \d used to become d
    ('  server_id "a\\\\\\q"\n', 17, "`\\q`"),       # \\ is fine, \q after it is not
    ('  server_id "a\\\x1b"\n', 15, "control character \\x1b"),  # shown escaped
])
def test_other_unknown_escapes(text, col, shown):
    d = _one_error(HEAD + text + "}\n")
    assert (d.code, d.span.column) == ("RTC119", col)
    assert shown in d.message


@pytest.mark.parametrize("text,col,where", [
    ('  server_id "x\x1b[2J"\n', 15, "in a string"),
    ('  server_id "x\x07"\n', 15, "in a string"),
    ('  server_id "x\x7f"\n', 15, "in a string"),
    ('  server_id "x\x85"\n', 15, "in a string"),   # C1 (NEL)
    ('  server_id "x\r"\n', 15, "in a string"),
    ("  server_id x\x1bb\n", 14, "in a value"),      # a bare word too
    ("  devices 0..7 \x0b\n", 16, "here"),           # between words (lark stops there)
])
def test_raw_control_characters(text, col, where):
    d = _one_error(HEAD + text + "}\n")
    assert (d.code, d.span.line, d.span.column) == ("RTC119", 6, col), d.message
    assert d.message.startswith("raw control character \\x") and d.message.endswith(where)
    assert d.hint.startswith("remove it")


def test_tab_in_a_string_and_controls_in_comments_are_fine():
    src, diags = parse_text(HEAD + '  server_id "a\tb"  # note \x1b\n}\n', "s.rtc")
    assert diags == [] and src.blocks[1].body[1].args[0].text == "a\tb"


def test_fmt_writes_strings_back_with_the_same_escapes():
    text = PASS.read_text(encoding="utf-8").replace("  servers a\n", "servers   a\n")
    out = format_source(text, "p.rtc")
    assert '  env RTC_NOTE = "say \\"hi\\"\\\\tab\\there\\nnext"\n' in out
    src, diags = parse_text(out, "p.rtc")
    assert diags == [] and _env_values(src) == ['say "hi"\\tab\there\nnext']


def test_fmt_refuses_an_unknown_escape():
    with pytest.raises(SourceSyntaxError) as info:
        format_source(HEAD + '  server_id "a\\d"\n}\n', "s.rtc")
    assert [d.code for d in info.value.diagnostics] == ["RTC119"]


def _table_with_server_id(server_id: str) -> str:
    """A valid one-server rank table (JSON text) whose server_id is ``server_id``."""
    from rtc.api.compiling import compile_text, rank_table

    result = compile_text(HEAD + "  devices 0..7\n  device_ip 6.0.0.{d+1}\n}\n", "a.rtc")
    doc = json.loads(rank_table(result.topology)[0])
    doc["server_list"][0]["server_id"] = server_id
    return json.dumps(doc)


def test_dot_escapes_control_characters_of_a_table_server_id():
    # rtc diagram reads .rtc only, where RTC119 now refuses these; a rank table still
    # carries them (JSON \u001b is valid, rtc validate lowers it) into the Topology
    from rtc.api.validating import validate_source
    from rtc.emit.diagram import Options, diagram_dot

    topo = validate_source(_table_with_server_id("x\x1b[2J\x07\x9b"), "t.json").lowered.topology
    assert topo.servers[0].server_id == "x\x1b[2J\x07\x9b"
    for view in ("topology", "groups", "network"):
        dot = diagram_dot(topo, [], Options(view=view))
        assert not any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) <= 0x9f for c in dot), view
    assert "x\\\\x1b[2J\\\\x07\\\\x9b" in diagram_dot(topo, [], Options())


def test_import_refuses_a_server_id_the_language_cannot_hold():
    # it used to write the raw ESC into the description (and now RTC663 would blame rtc);
    # validation refuses it (RTC235), so import stops with RTC660 before describing it
    from rtc.api.importing import import_table

    result = import_table(_table_with_server_id("x\x1b[2J"), "t.json")
    assert result.text is None
    codes = sorted(d.code for d in result.diagnostics if d.severity.label == "error")
    assert codes == ["RTC235", "RTC660"]
    (d,) = [d for d in result.diagnostics if d.code == "RTC235"]
    assert "control character U+001B (\\x1b)" in d.message
    ok = import_table(_table_with_server_id("a\tb\\c"), "t.json")   # tab, backslash: fine
    assert ok.text is not None and 'server_id "a\\tb\\\\c"' in ok.text, ok.diagnostics
