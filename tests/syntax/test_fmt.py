"""`rtc fmt`: the canonical layout of .rtc files.

Golden examples (messy input -> expected text), the example and case corpus (formatting
is idempotent and compiles to the same rank tables and diagnostics), a hypothesis property
over generated and mutated sources, and the command line (--check, --diff, in place,
syntax errors, I/O errors)."""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import CASES, EXAMPLES, ROOT, run_rtc
from rtc.api import compile_text, rank_table
from rtc.syntax.ast import Assign, Attribute, Block, ListArg
from rtc.syntax.formatter import SourceSyntaxError, format_source
from rtc.syntax.parser import _lark, parse_text
from rtc.syntax.schema import BLOCK_SPECS


def fmt(text: str) -> str:
    return format_source(text, "t.rtc")


# --------------------------------------------------------------------------- golden examples

GOLDEN = {
    "indentation, spacing, env and lists": (
        ("cluster   c{\n"
         "\thardware    atlas-800t-a2   \n"
         "}\n"
         "job j {\n"
         "      servers a,b ,   c\n"
         "  tp\t8\n"
         "env HCCL_BUFFSIZE=1024\n"
         "  env   A   =   \"x  y\"\n"
         "}"),
        ("cluster c {\n"
         "  hardware atlas-800t-a2\n"
         "}\n"
         "\n"
         "job j {\n"
         "  servers a, b, c\n"
         "  tp 8\n"
         "  env HCCL_BUFFSIZE = 1024\n"
         "  env A = \"x  y\"\n"
         "}\n")),
    "attributes in declaration order, repeated ones stable, comments move along": (
        ("job j {\n"
         "  env B = 2\n"
         "  # the size\n"
         "  tp 8\n"
         "  policy RTC304 allow\n"
         "  env A = 1   # second env\n"
         "  servers a\n"
         "  policy RTC208 warn\n"
         "  dp 2\n"
         "}\n"),
        ("job j {\n"
         "  servers a\n"
         "  dp 2\n"
         "  # the size\n"
         "  tp 8\n"
         "  env B = 2\n"
         "  env A = 1  # second env\n"
         "  policy RTC304 allow\n"
         "  policy RTC208 warn\n"
         "}\n")),
    "blank lines: one between blocks, none inside, comment paragraphs kept": (
        ("# file header\n"
         "\n"
         "\n"
         "# about the cluster\n"
         "cluster c {\n"
         "\n"
         "  hardware atlas-800t-a2\n"
         "\n"
         "}\n"
         "server a {\n"
         "  devices 0..7\n"
         "}\n"
         "# about b\n"
         "\n"
         "server b {\n"
         "  devices 0..7\n"
         "}\n"
         "\n\n\n"
         "# the end\n"),
        ("# file header\n"
         "\n"
         "# about the cluster\n"
         "cluster c {\n"
         "  hardware atlas-800t-a2\n"
         "}\n"
         "\n"
         "server a {\n"
         "  devices 0..7\n"
         "}\n"
         "\n"
         "# about b\n"
         "\n"
         "server b {\n"
         "  devices 0..7\n"
         "}\n"
         "\n"
         "# the end\n")),
    "strings and template groups byte for byte; '#' inside them is no comment": (
        ("family node[0..3] {\n"
         "  devices    0..7\n"
         "  host 10.1.{i / 256}.{i % 256}    #  index  \n"
         "  server_id \"n {i}  # not a comment\"\n"
         "  device_ip 6.{i#x}.0.{d+1}\n"
         "}\n"),
        ("family node[0..3] {\n"
         "  server_id \"n {i}  # not a comment\"\n"
         "  host 10.1.{i / 256}.{i % 256}  #  index\n"
         "  devices 0..7\n"
         "  device_ip 6.{i#x}.0.{d+1}\n"
         "}\n")),
    "comments on brace lines, before '}', empty blocks, CRLF, BOM, continuation": (
        ("\ufeffserver a \\\r\n"
         "{   # header note\r\n"
         "  devices 0..7\r\n"
         "    # last words of a\r\n"
         "}    # closing note\r\n"
         "server b {}   # empty\r\n"),
        ("server a {  # header note\n"
         "  devices 0..7\n"
         "  # last words of a\n"
         "}  # closing note\n"
         "\n"
         "server b {\n"
         "}  # empty\n")),
    "unknown attributes and nested blocks go last, indented by depth": (
        ("server a {\n"
         "  hots 10.0.0.1\n"
         "  devices 0..7\n"
         "    job inner {\n"
         "    tp 8\n"
         "       }\n"
         "  host 10.0.0.1\n"
         "}\n"),
        ("server a {\n"
         "  host 10.0.0.1\n"
         "  devices 0..7\n"
         "  hots 10.0.0.1\n"
         "  job inner {\n"
         "    tp 8\n"
         "  }\n"
         "}\n")),
    "only comments, and nothing": ("  # just a note   \n\n", "# just a note\n"),
    "empty": ("\n \n\t\n", ""),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden(name):
    messy, expected = GOLDEN[name]
    assert fmt(messy) == expected
    assert fmt(expected) == expected


def test_syntax_error_raises_with_the_parsers_diagnostics():
    text = "server a {\n  host\n}\n"
    with pytest.raises(SourceSyntaxError) as info:
        format_source(text, "bad.rtc")
    assert info.value.diagnostics == parse_text(text, "bad.rtc")[1]
    assert info.value.diagnostics[0].code == "RTC103"


# --------------------------------------------------------------------------- corpus

CORPUS = sorted(EXAMPLES.glob("*.rtc")) + sorted(CASES.rglob("*.rtc"))
PARSING = [p for p in CORPUS if parse_text(p.read_text(encoding="utf-8-sig"), str(p))[0]]


def _id(path: Path) -> str:
    return str(path.relative_to(EXAMPLES.parent))


def _outcome(text: str, name: str):
    """Diagnostics (rule, severity, message with line:column positions masked) and the
    rank table of every job, of a compile of ``text``."""
    enabled = gc.isenabled()
    gc.disable()  # as the command line does: compiles of 4,096 servers are 40% faster
    try:
        result = compile_text(text, name)
        tables = None
        if result.ok:
            tables = [rank_table(result.topology, job)[0]
                      for job in (result.topology.jobs or [None])]
    finally:
        if enabled:
            gc.enable()
    diags = sorted((d.code, d.severity.label, re.sub(r"\b\d+:\d+\b", "L:C", d.message))
                   for d in result.diagnostics)
    return diags, tables


def test_corpus_is_large_and_mostly_parses():
    assert len(PARSING) >= 100 and len(CORPUS) - len(PARSING) >= 10


@pytest.mark.parametrize("path", PARSING, ids=_id)
def test_corpus_formatting_is_idempotent_and_compiles_the_same(path: Path):
    text = path.read_text(encoding="utf-8-sig")
    once = format_source(text, str(path))
    assert format_source(once, str(path)) == once
    assert once.endswith("\n") and not re.search(r"[ \t]$", once, re.MULTILINE)
    assert _comment_texts(once) == _comment_texts(text)
    if once != text:
        assert _outcome(once, str(path)) == _outcome(text, str(path))


@pytest.mark.parametrize("path", sorted(set(CORPUS) - set(PARSING)), ids=_id)
def test_corpus_syntax_errors_are_refused(path: Path):
    text = path.read_text(encoding="utf-8-sig")
    with pytest.raises(SourceSyntaxError) as info:
        format_source(text, str(path))
    assert info.value.diagnostics == parse_text(text, str(path))[1]


# --------------------------------------------------------------------------- properties

def _comment_texts(text: str) -> Counter:
    """The comments of ``text`` as the lexer sees them (end-of-line comments are COMMENT
    tokens, full-line comments sit inside the newline tokens), trailing blanks removed."""
    found = Counter()
    for tok in _lark().lex(text.removeprefix("\ufeff"), dont_ignore=True):
        if tok.type == "COMMENT":
            found[str(tok).rstrip()] += 1
        elif tok.type == "_NL":
            found.update(part.strip() for part in str(tok).split("\n")
                         if part.strip().startswith("#"))
    return found


def _shape(text: str):
    """What the formatter must keep: every block's kind and label and its attributes
    (key and argument texts) in declaration order (a stable sort), recursively."""
    source, diags = parse_text(text, "t.rtc")
    assert source is not None, diags

    def arg(a):
        if isinstance(a, ListArg):
            return tuple((w.text, w.quoted) for w in a.items)
        if isinstance(a, Assign):
            return ((a.name.text, a.name.quoted), "=", (a.value.text, a.value.quoted))
        return (a.text, a.quoted)

    def block(b: Block):
        order = list(BLOCK_SPECS[b.kind].attrs)

        def rank(item) -> int:
            known = isinstance(item, Attribute) and item.key in order
            return order.index(item.key) if known else len(order)

        body = [block(i) if isinstance(i, Block) else (i.key, tuple(arg(a) for a in i.args))
                for i in sorted(b.body, key=rank)]
        return (b.kind, b.label and (b.label.text, b.label.quoted), tuple(body))

    return [block(b) for b in source.blocks]


def _formatted(text: str) -> str:
    """``fmt(text)``; inputs that do not parse are discarded (hypothesis ``assume``)."""
    try:
        return fmt(text)
    except SourceSyntaxError:
        assume(False)


def _properties(text: str, once: str) -> tuple:
    """(formats to a fixed point, same shape, same comments) of ``text`` formatted as ``once``."""
    return (fmt(once) == once, _shape(once) == _shape(text),
            _comment_texts(once) == _comment_texts(text))


_WS = [" ", "  ", "\t", " \t "]
_VALUES = [
    "10.0.0.1", "0..7", "atlas-01", "{i}", "10.1.{i/256}.{i%256}", "{i + 1}", "{a#b}",
    "node[0..3]", "8.2.RC1", "fe80::1", "server", '"a  b"', '"x # y"', '"{ spaced }"',
    '"q \\" q"', '""']
_COMMENTS = ["# note", "#x", "#  {odd} \"quote\"  ", "# \u00e9 \u00fc"]


def _arg(rnd) -> str:
    """A word or string, a list ``a, b`` or an assignment ``NAME = value``."""
    kind = rnd.randrange(3)
    if kind == 1:
        items = [rnd.choice(_VALUES) for _ in range(rnd.randint(2, 3))]
        return rnd.choice([",", " , ", ",\t"]).join(items)
    if kind == 2:
        return rnd.choice(["A", "HCCL_X"]) + rnd.choice(["=", " = ", "  =\t"]) + rnd.choice(_VALUES)
    return rnd.choice(_VALUES)


def _line(rnd, kind: str) -> str:
    """One body line: an attribute (with an end-of-line comment, maybe), a comment or a
    blank line, with random indentation and trailing blanks."""
    pad, tail = rnd.choice(["", "  ", "\t", "     "]), rnd.choice(["", " ", "\t"])
    what = rnd.randrange(6)
    if what == 0:
        return pad + rnd.choice(_COMMENTS)
    if what == 1:
        return tail
    key = rnd.choice(list(BLOCK_SPECS[kind].attrs) + ["unknown_key"])
    text = pad + key + "".join(rnd.choice(_WS) + _arg(rnd) for _ in range(rnd.randint(1, 3)))
    if rnd.random() < 0.3:
        text += rnd.choice(_WS) + rnd.choice(_COMMENTS)
    return text + tail


def _block(rnd) -> str:
    """A block of any kind, with odd spacing around the braces (a continuation between
    the label and ``{``, comments on the brace lines, ``{}``)."""
    kind = rnd.choice(list(BLOCK_SPECS))
    label = rnd.choice(["", " a", " node[0..3]", ' "quoted label"'])
    brace = rnd.choice([" {", "{", "   {", " \\\n{", " {  # opens"])
    body = [_line(rnd, kind) for _ in range(rnd.randint(0, 6))]
    if not body and rnd.random() < 0.5:
        return f"{kind}{label}{brace.split('#')[0].rstrip()}}}"
    close = rnd.choice(["}", "  }", "}  # closes", "}\t"])
    return "\n".join([f"{kind}{label}{brace}"] + body + [close])


def _source(rnd) -> str:
    parts = [rnd.choice(_COMMENTS) for _ in range(rnd.randint(0, 2))]
    for _ in range(rnd.randint(0, 4)):
        parts.append(_block(rnd) + rnd.choice(["", "\n", "\n\n\n"]))
        if rnd.random() < 0.5:
            parts.append(rnd.choice(_COMMENTS))
    text = "\n".join(parts) + rnd.choice(["", "\n", "\n\n"])
    return text.replace("\n", "\r\n") if rnd.random() < 0.3 else text


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_generated_sources_format_idempotently(rnd):
    text = _source(rnd)
    assert _properties(text, _formatted(text)) == (True, True, True)


SMALL = [p for p in PARSING if p.stat().st_size < 4000]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SMALL), st.randoms(use_true_random=False))
def test_mutated_corpus_files_format_idempotently(path, rnd):
    """Re-indent lines, add blanks, comments and empty lines, swap neighbouring
    attribute lines: the result still formats to a fixed point with the same shape."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        line = rnd.choice(["", " ", "\t", "      "]) + line.strip() + rnd.choice(["", "  ", "\t"])
        if rnd.random() < 0.1:
            out.append(rnd.choice(["", "# inserted", "   #inserted too"]))
        if rnd.random() < 0.1 and "#" not in line and line.strip() not in ("", "}"):
            line += "  # eol"
        out.append(line)
    for _ in range(3 if len(out) >= 2 else 0):
        i = rnd.randrange(len(out) - 1)
        if _plain(out[i]) and _plain(out[i + 1]):
            out[i], out[i + 1] = out[i + 1], out[i]
    text = "\n".join(out) + "\n"
    assert _properties(text, _formatted(text)) == (True, True, True)


def _plain(line: str) -> bool:
    """An attribute line (no brace, no comment-only line): safe to swap with another."""
    s = line.strip()
    return bool(s) and not s.startswith("#") and not s.endswith("{") and s != "}"


# --------------------------------------------------------------------------- command line

MESSY = ("cluster c {\n    hardware atlas-800t-a2\n}\n"
         "server a {\n  devices 0..7\n  host 10.0.0.1\n}\n")
CANONICAL = fmt(MESSY)
BAD = "server a {\n  host\n}\n"


def invoke(*args: str):
    """The command in-process (faster than the console script; same code path)."""
    from typer.testing import CliRunner

    from rtc.cli import app

    return CliRunner().invoke(app, list(args))


def _files(tmp_path: Path, **texts: str) -> dict[str, Path]:
    out = {}
    for name, text in texts.items():
        out[name] = tmp_path / f"{name}.rtc"
        out[name].write_text(text, encoding="utf-8")
    return out


def test_check_exits_1_and_names_the_file_writing_nothing(tmp_path):
    f = _files(tmp_path, messy=MESSY, tidy=CANONICAL)
    res = run_rtc("fmt", "--check", str(f["messy"]), str(f["tidy"]))   # the console script
    assert res.returncode == 1, res.stderr
    assert res.stderr == f"rtc: would reformat {f['messy']}\n" and res.stdout == ""
    assert f["messy"].read_text() == MESSY
    res = invoke("fmt", "--check", str(f["tidy"]))
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "")


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    f = _files(tmp_path, messy=MESSY)
    res = invoke("fmt", "--diff", str(f["messy"]))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith(f"--- {f['messy']} (original)\n+++ {f['messy']} (formatted)\n")
    assert "\n-    hardware atlas-800t-a2\n+  hardware atlas-800t-a2\n" in res.stdout
    assert "\n+\n" in res.stdout   # the blank line between the blocks
    assert f["messy"].read_text() == MESSY
    res = invoke("fmt", "--diff", "--check", str(f["messy"]))
    assert res.exit_code == 1 and res.stdout.startswith("---") and "would reformat" in res.stderr


def test_diff_marks_a_missing_final_newline(tmp_path):
    f = _files(tmp_path, last=CANONICAL.rstrip("\n"))
    res = invoke("fmt", "--diff", str(f["last"]))
    assert "-}\n\\ No newline at end of file\n+}\n" in res.stdout


def test_rewrites_in_place_only_what_changes(tmp_path):
    f = _files(tmp_path, messy=MESSY, tidy=CANONICAL)
    os.chmod(f["messy"], 0o640)
    before = f["tidy"].stat().st_ino
    res = invoke("fmt", str(f["messy"]), str(f["tidy"]))
    assert res.exit_code == 0, res.stderr
    assert res.stderr == f"rtc: reformatted {f['messy']}\n"
    assert f["messy"].read_text() == CANONICAL
    assert f["messy"].stat().st_mode & 0o777 == 0o640
    assert f["tidy"].stat().st_ino == before          # not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["messy.rtc", "tidy.rtc"]
    assert invoke("fmt", "--check", str(f["messy"])).exit_code == 0


def test_byte_order_mark_is_a_change(tmp_path):
    path = tmp_path / "bom.rtc"
    path.write_bytes(b"\xef\xbb\xbf" + CANONICAL.encode())
    assert invoke("fmt", "--check", str(path)).exit_code == 1
    assert invoke("fmt", str(path)).exit_code == 0
    assert path.read_bytes() == CANONICAL.encode()


def test_syntax_error_is_reported_like_check_and_the_file_untouched(tmp_path):
    f = _files(tmp_path, bad=BAD, messy=MESSY)
    res = invoke("fmt", str(f["bad"]), str(f["messy"]))
    assert res.exit_code == 1
    assert f["bad"].read_text() == BAD
    assert f["messy"].read_text() == CANONICAL        # the other file is still formatted
    check = invoke("check", str(f["bad"]))
    assert check.exit_code == 1 and f"{f['bad']}:2:3: error[RTC103]" in check.stderr
    assert res.stderr == check.stderr + f"rtc: reformatted {f['messy']}\n"
    res = invoke("fmt", "--check", str(f["bad"]))
    assert res.exit_code == 1 and "would reformat" not in res.stderr


def test_unreadable_files_are_exit_2_before_anything_is_written(tmp_path):
    f = _files(tmp_path, messy=MESSY)
    res = invoke("fmt", str(f["messy"]), str(tmp_path / "missing.rtc"))
    assert res.exit_code == 2
    assert f"rtc: error[RTC001]: cannot read {tmp_path / 'missing.rtc'}" in res.stderr
    assert f["messy"].read_text() == MESSY
    res = invoke("fmt", str(tmp_path))
    assert res.exit_code == 2 and "it is a folder" in res.stderr
    latin = tmp_path / "latin.rtc"
    latin.write_bytes(b"# caf\xe9\n")
    res = invoke("fmt", str(latin))
    assert res.exit_code == 2 and "byte 0xe9 at line 1 is not UTF-8" in res.stderr


def test_no_file_is_a_usage_error(monkeypatch, capsys):
    from rtc.cli import main

    monkeypatch.setattr("sys.argv", ["rtc", "fmt"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    assert "rtc: error[RTC002]: Missing argument 'FILES'" in capsys.readouterr().err


def test_in_process_main_leaves_the_test_process_as_it_was():
    # the test above ran main(), which switches the collector off and installs rtc's
    # SIGTERM handler; conftest puts both back so `timeout pytest` can stop the run
    import gc
    import signal

    assert gc.isenabled()
    assert getattr(signal.getsignal(signal.SIGTERM), "__name__", "") != "_on_sigterm"


# --------------------------------------------------------------------------- README, stdin

def _readme_rtc_blocks() -> list[tuple[str, str]]:
    """(page:line, text) of each fenced block of the README and the guides that is rtc
    source (it parses and holds a block; diagnostics and shell examples do not parse), and
    of each `.rtc` file a shell block writes with a here-document (the tour's cluster.rtc)."""
    from conftest import ROOT as root

    pages = [root / "README.md"] + sorted(p for p in (root / "docs").glob("*.md")
                                          if p.name not in ("language.md", "rules.md"))
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        bodies = [(m.start(1), m.group(1))
                  for m in re.finditer(r"^```\w*\n(.*?)^```", text, re.S | re.M)]
        bodies += [(m.start(1), m.group(1)) for m in re.finditer(
            r"^cat > \S+\.rtc <<'EOF'\n(.*?)^EOF$", text, re.S | re.M)]
        for start, body in bodies:
            tree, _diags = parse_text(body, page.name)
            if tree is not None and "{" in body:
                found.append((f"{page.relative_to(root)}:{text.count(chr(10), 0, start) + 1}",
                              body))
    return found


def test_readme_rtc_examples_are_in_fmt_layout():
    """`rtc fmt --check` passes on every .rtc example of the README and the guides (the
    tour file, the families): a user who copies one and runs fmt sees no change."""
    blocks = _readme_rtc_blocks()
    assert len(blocks) >= 3, blocks
    assert any(where.startswith("README.md:") and "cluster deepseek-a2" in body
               for where, body in blocks)
    for where, body in blocks:
        assert format_source(body, "README.md") == body, where


def test_bundled_examples_are_in_fmt_layout():
    """`rtc fmt --check examples/*.rtc` passes, as the README recommends for CI (two SGLang
    examples had `pp` and `model` out of order)."""
    from conftest import EXAMPLES

    paths = sorted(EXAMPLES.glob("*.rtc"))
    assert len(paths) >= 19
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert format_source(text, path.name) == text, path.name


def test_fmt_reads_standard_input():
    src = "server a {\n    host 10.0.0.1   # x\n}\n"
    res = run_rtc("fmt", "-", input=src)
    assert res.returncode == 0 and res.stdout == "server a {\n  host 10.0.0.1  # x\n}\n", res
    res = run_rtc("fmt", "-", "--check", input=src)
    assert res.returncode == 1 and "would reformat <stdin>" in res.stderr and not res.stdout
