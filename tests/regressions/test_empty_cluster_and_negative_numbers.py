"""What a new user hit (fresh6 findings 3, 7, 8, 10, 11): a cluster without servers is a
located user error (RTC234), not an internal one; negative numbers and huge ranges are
named for what they are; an rtc description given to `rtc validate` is said to be one;
an unknown block keyword is underlined whole."""

from __future__ import annotations

import json

import pytest

from rtc.api import compile_text
from rtc.api.compiling import compile_bytes
from rtc.api.validating import validate_source
from rtc.api.validate_k8s import validate_configmap
from conftest import run_main as _main

HEAD = "cluster c {\n  hardware atlas-800t-a2\n}\n"
SERVER = "server s {\n  devices DEVICES\n  device_ip 10.0.0.1 step 1\n}\n"
JOB = "job j {\n  servers s\n  tp 4\n  dp DP\n}\n"


# ------------------------------------------------------------- finding 3: no servers

def test_a_cluster_without_servers_is_rtc234_at_the_cluster_label():
    result = compile_text(HEAD, "only.rtc")
    (d,) = result.diagnostics
    assert (d.code, d.severity.name, d.span.line, d.span.column) == ("RTC234", "ERROR", 1, 9)
    assert d.message.startswith("cluster c has no servers")
    assert "`server NAME {`" in d.hint and "`family node[0..N] {`" in d.hint
    assert not result.ok


def test_a_byte_order_mark_and_an_unnamed_cluster_give_the_same_finding():
    result = compile_bytes(b"\xef\xbb\xbfcluster {\n  hardware atlas-800t-a2\n}\n", "bom.rtc")
    assert [d.code for d in result.diagnostics] == ["RTC234"]
    assert result.diagnostics[0].message.startswith("the cluster has no servers")


def test_a_server_or_a_family_block_passes_and_a_broken_one_is_not_reported_twice():
    assert compile_text(HEAD + SERVER.replace("DEVICES", "0..7"), "x.rtc").ok
    family = SERVER.replace("server s", "family node[0..1]").replace("DEVICES", "0..7")
    assert compile_text(HEAD + family.replace("10.0.0.1", "10.0.{i}.1"), "x.rtc").ok
    backwards = family.replace("[0..1]", "[5..2]")
    assert [d.code for d in compile_text(HEAD + backwards, "x.rtc").diagnostics] == ["RTC117"]


@pytest.mark.parametrize("how", ["--stdout", "-o", "--out-dir", "groups"])
def test_the_cli_exits_1_and_writes_nothing(monkeypatch, tmp_path, capsys, how):
    src = tmp_path / "only.rtc"
    src.write_text(HEAD, encoding="utf-8")
    out = tmp_path / "out"
    argv = {"--stdout": ["compile", str(src), "--stdout"], "-o": ["compile", str(src), "-o", str(out)],
            "--out-dir": ["compile", str(src), "--out-dir", str(out)],
            "groups": ["groups", str(src)]}[how]
    assert _main(monkeypatch, *argv) == 1
    captured = capsys.readouterr()
    assert "error[RTC234]" in captured.err and "RTC003" not in captured.err
    assert captured.out == "" and not out.exists()


def test_an_empty_server_list_table_is_reported_once_by_its_schema():
    table = json.dumps({"version": "1.0", "server_count": "0", "server_list": [],
                        "status": "completed"})
    assert [d.code for d in validate_source(table, "t.json").diagnostics] == ["RTC616"]


# ------------------------------------------------------- findings 7, 8: numbers, ranges

def _only(text: str):
    (d,) = compile_text(text, "x.rtc").diagnostics
    return d


def test_a_negative_size_is_out_of_range_not_not_a_whole_number():
    d = _only(HEAD + SERVER.replace("DEVICES", "0..7") + JOB.replace("DP", "-2"))
    assert (d.code, d.message) == ("RTC114", "'dp' -2 is out of range (1..1048576)")
    assert d.hint == "use a value from 1 to 1,048,576"
    d = _only(HEAD + SERVER.replace("DEVICES", "0..7") + JOB.replace("DP", "-0"))
    assert d.message == "'dp' '-0' has a minus sign"
    d = _only(HEAD + SERVER.replace("DEVICES", "0..7") + JOB.replace("DP", "two"))
    assert d.message == "'dp' must be a whole number, not 'two'"


@pytest.mark.parametrize("devices", ["-1..7", "0..-3", "-2"])
def test_negative_device_ids_are_named(devices):
    d = _only(HEAD + SERVER.replace("DEVICES", devices))
    assert (d.code, d.message) == ("RTC112", f"'{devices}': device ids cannot be negative")
    assert (d.span.line, d.span.column) == (5, 11)


def test_a_huge_range_is_quoted_as_written_and_a_long_one_says_it_was_cut():
    d = _only(HEAD + SERVER.replace("DEVICES", "0..99999999999999999999999"))
    assert d.message == "range '0..99999999999999999999999' has far too many items"
    long = "0.." + "9" * 60
    d = _only(HEAD + SERVER.replace("DEVICES", long))
    assert d.message == f"range '{long[:40]}... (63 characters)' has far too many items"
    d = _only(HEAD + SERVER.replace("server s", "family n[0..99999999999999999999999]")
              .replace("DEVICES", "0..7"))
    assert d.message == "family range in 'n[0..99999999999999999999999]' is far too large"


# ----------------------------------------------------------- finding 10: validate .rtc

@pytest.mark.parametrize("name", ["only.rtc", "cluster.txt", "<stdin>"])
def test_validate_says_an_rtc_description_is_one(name):
    (d,) = validate_configmap(("\n# a comment\n" + HEAD).encode(), name).diagnostics
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == ("RTC607", 3, 1, 8)
    assert d.message == f"{name} is an rtc description, not a rank table"
    assert ("`rtc compile - < FILE`" if name == "<stdin>" else f"`rtc compile {name}`") in d.hint


def test_validate_keeps_the_configmap_message_for_yaml(monkeypatch, tmp_path, capsys):
    (d,) = validate_configmap(b"cluster: c\nkind: Pod\n", "pod.yaml").diagnostics
    assert d.code == "RTC772"
    src = tmp_path / "only.rtc"
    src.write_text(HEAD, encoding="utf-8")
    assert _main(monkeypatch, "validate", str(src)) == 1
    shown = capsys.readouterr()
    shown = shown.out + shown.err  # validate prints its report on standard output
    assert "error[RTC607]" in shown and "RTC772" not in shown and "holds no" not in shown


@pytest.mark.parametrize("name, text", [("only.rtc", HEAD), ("cluster.sh", "\n# one\n" + HEAD)])
def test_lint_says_an_rtc_description_is_not_a_script(name, text):
    """`rtc lint cluster.rtc` (the description where a script belongs) is RTC700 at its
    first word, pointing to --against; read as shell it was unknown commands and passed."""
    from rtc.api.linting import lint_scripts

    rep = lint_scripts([(name, text.encode())])
    (d,) = rep.diagnostics
    line = 3 if name == "cluster.sh" else 1
    assert (d.code, d.severity.name, d.span.line, d.span.column, d.span.end_column) == \
        ("RTC700", "ERROR", line, 1, 8)
    assert d.message == f"{name} is an rtc description, not a launch script"
    assert f"--against {name}" in d.hint


def test_lint_still_reads_a_script_that_runs_a_cluster_command():
    from rtc.api.linting import lint_scripts

    rep = lint_scripts([("n.sh", b"#!/bin/bash\ncluster status\nvllm serve m --port 8000\n")])
    assert "RTC700" not in [d.code for d in rep.diagnostics]


@pytest.mark.parametrize("text, said", [
    (b"cluster: c\n", "(the document has no kind)"),
    (b"a: 1\n---\nb: 2\n", "(no document has a kind)"),
    (b"kind: Pod\n---\nkind: Service\n", "(kinds: Pod, Service)"),
    (b"kind: Pod\n---\na: 1\n", "(kinds: Pod; 1 without a kind)"),
])
def test_not_a_configmap_says_what_the_documents_are(text, said):
    """RTC772 used to read `(kinds: no kind)` for YAML without kinds."""
    (d,) = validate_configmap(text, "x.yaml").diagnostics
    assert d.code == "RTC772" and d.message == f"x.yaml holds no ConfigMap {said}"


# ------------------------------------------------------- finding 11: RTC104's caret

def test_an_unknown_block_keyword_is_underlined_whole():
    d = _only("clutser c {\n  hardware atlas-800t-a2\n}\n")
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == ("RTC104", 1, 1, 8)
    d = _only(HEAD + "\n  sever a {\n}\n")
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == ("RTC104", 5, 3, 8)
    assert d.hint == "did you mean 'server'?"


@pytest.mark.parametrize("word, meant", [("jobs", "job"), ("servers", "server"),
                                         ("jobb", "job"), ("clusters", "cluster")])
def test_a_keyword_with_letters_added_is_rtc104_not_a_missing_brace(word, meant):
    """fresh7 finding 4: `jobs x {` lexes as `job` + label `s`, and the parser then wants
    `{` at `x`: that was RTC102 "expected '{'" at the wrong word."""
    d = _only(HEAD + f"{word} x {{\n  tp 8\n}}\n")
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == \
        ("RTC104", 4, 1, 1 + len(word))
    assert d.message == f"unknown block keyword '{word}'" and d.hint == f"did you mean '{meant}'?"


def test_a_real_missing_brace_is_still_rtc102():
    d = _only(HEAD + "server x y {\n  devices 0..7\n}\n")
    assert d.code == "RTC102"


def test_validate_says_an_rtc_description_named_json_is_one():
    """fresh7 finding 5: the same text as .rtc, .yaml or on stdin was RTC607, but named
    .json it was a JSON syntax error (RTC600)."""
    (d,) = validate_source(HEAD.encode(), "desc.json").diagnostics
    assert (d.code, d.span.line) == ("RTC607", 1)
    assert d.message == "desc.json is an rtc description, not a rank table"
    (d,) = validate_source(b'{"version": ', "t.json").diagnostics
    assert d.code == "RTC600"   # broken JSON stays a JSON error


def test_messages_name_a_key_and_a_port_once():
    """fresh7 finding 8: a control character in a key was "in a value", and a bad port
    was "'port' port -1"."""
    d = _only("cluster c {\n  hard\x07ware atlas-800t-a2\n}\n")
    assert d.code == "RTC119" and d.message.endswith("(U+0007) in a key")
    job = "server n {\n  devices 0..7\n  device_ip 10.0.0.1 step 1\n}\njob j {\n  servers n\n" \
          "  tp 8\n  port -1\n}\n"
    (d,) = [d for d in compile_text(HEAD + job, "p.rtc").diagnostics if d.code == "RTC114"]
    assert d.message == "'port' -1 is out of range (1..65535)"


def test_a_file_with_cr_line_ends_says_so():
    """fresh7 finding 10: with classic Mac line ends the file is one line, its first
    comment swallows the rest, and the error was RTC200 "no cluster block"."""
    d = _only("# c\rcluster c {\r  hardware atlas-800t-a2\r}\r")
    assert (d.code, d.span.line, d.span.column) == ("RTC100", 1, 4)
    assert "carriage return alone" in d.message and "tr '\\r' '\\n'" in d.hint
    assert compile_text(HEAD.replace("\n", "\r\n"), "crlf.rtc").topology is not None
