"""A rank table as `kubectl describe configmap` prints it (`hccl.json:` over `----`, the
describe preamble above, `BinaryData` / `Events:` below; see the real dumps
tests/ecosystem/ranktable/*configmap_dump*) is read by the one table reader, so `rtc validate`,
`rtc import` and `rtc lint --table` all take it, with line numbers of the file."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rtc.api.validating import validate_source
from rtc.cli import app
from rtc.tables.jsonload import blank_describe_header, load_json
from conftest import TESTS

TABLE = (TESTS / "ecosystem" / "ranktable"
         / "v1_0__hcomm_example__1srv_8dev.json").read_text(encoding="utf-8")
PREAMBLE = ("Name:         rings-config-job\nNamespace:    default\nLabels:       ring-controller.atlas=ascend-910b\n"
            "Annotations:  <none>\n\nData\n====\n")
DUMP = PREAMBLE + "hccl.json:\n----\n" + TABLE + "\n\nBinaryData\n====\n\nEvents:  <none>\n"


def test_header_and_tail_blanked_keeping_lines():
    text = blank_describe_header(DUMP)
    assert len(text) == len(DUMP) and text.count("\n") == DUMP.count("\n")
    assert text.strip() == TABLE.strip()
    assert blank_describe_header(TABLE) == TABLE                  # plain JSON unchanged
    assert blank_describe_header("name: x\nkind: ConfigMap\n") == "name: x\nkind: ConfigMap\n"


def test_validate_reads_the_table_behind_the_header():
    report = validate_source(("hccl.json:\n----\n" + TABLE).encode(), "cm.txt")
    assert report.ok and report.form == "hccl-v1.0"
    assert len(report.lowered.topology.servers) == 1


def test_finding_points_at_the_line_in_the_dump():
    bad = DUMP.replace('"device_ip": "192.168.1.8"', '"device_ip": "192.168.1.888"', 1)
    report = validate_source(bad.encode(), "cm.txt")
    assert not report.ok
    line = bad.splitlines().index(next(l for l in bad.splitlines() if "192.168.1.888" in l)) + 1
    assert any(d.span is not None and d.span.line == line for d in report.diagnostics)


def test_every_command_takes_the_dump(tmp_path):
    dump = tmp_path / "describe.txt"
    dump.write_text(DUMP, encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(app, ["validate", str(dump)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["import", str(dump), "-o", str(tmp_path / "back.rtc")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "back.rtc").read_text().count("server") >= 1
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nexport RANK_TABLE_FILE=/x/hccl.json\npython train.py\n")
    res = runner.invoke(app, ["lint", "--table", str(dump), str(script)])
    assert res.exit_code == 0 and "RTC462" in res.output and "SERVER_ID_SV1" in res.output, res.output
    doc, smap, diags = load_json(dump)
    assert diags == [] and doc["server_count"] == "1" and smap.parsed
