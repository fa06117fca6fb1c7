"""rtc.api: one library entry per command, driven from Python (no command line): each
test checks what the command's CLI shows, read from the result object."""

from __future__ import annotations

from pathlib import Path

import pytest

import rtc.api as api
from conftest import EXAMPLES, GOLDEN, ROOT
from rtc.api.writing import Hooks, OutputsRefused
from rtc.outputs.out_dir import OutputProblem

EXAMPLE = EXAMPLES / "a2-2node-dp2-tp8.rtc"
A2 = GOLDEN / "a2-2node-dp2-tp8"   # the goldens of EXAMPLE
DATA = ROOT / "tests" / "data"
PREFLIGHT = DATA / "preflight"


def test_every_command_has_one_entry_in_rtc_api():
    for name in ("compile", "write_outputs", "check", "validate", "lint", "diagram", "cost",
                 "advise", "preflight", "import_table"):
        assert callable(getattr(api, name)) and name in api.__all__
    with pytest.raises(AttributeError):
        api.no_such_entry


def test_compile():
    result = api.compile(EXAMPLE)
    assert result.ok and [s.server_id for s in result.topology.servers] == ["10.0.0.6", "10.0.0.5"]
    missing = api.compile(ROOT / "no-such.rtc")
    assert not missing.ok and [d.code for d in missing.diagnostics] == ["RTC001"]


def test_write_outputs_writes_the_golden_files_and_prunes_the_old_ones(tmp_path: Path):
    out = tmp_path / "build"
    written = api.write_outputs(api.compile(EXAMPLE), out_dir=out, diagrams=False)
    assert written.tables == [out / "hccl.json"] and written.diagrams == []
    assert written.names == ["hccl.json", "atlas-01.env", "atlas-01.sh", "atlas-02.env",
                             "atlas-02.sh", "preflight-atlas-01.sh", "preflight-atlas-02.sh",
                             "calibrate.sh", "plan.json"]
    for name in written.names:
        assert (out / name).read_bytes() == (A2 / name).read_bytes(), name
    assert (out / "atlas-01.sh").stat().st_mode & 0o111
    one = api.write_outputs(api.compile(EXAMPLES / "a2-1node-tp8.rtc"), out_dir=out,
                            diagrams=False)
    assert "atlas-02.env" in one.removed and not (out / "atlas-02.env").exists()


def test_write_outputs_kubernetes_manifests_and_hooks(tmp_path: Path):
    seen, out = [], tmp_path / "k8s"
    hooks = Hooks(before_write=lambda paths: seen.append(sorted(map(str, paths))))
    written = api.write_outputs(api.compile(EXAMPLE), out_dir=out, target="k8s", hooks=hooks)
    assert written.tables == [] and written.diagrams == []
    assert written.files == ["lws-deepseek.yaml", "rings-config-deepseek.yaml",
                             "preflight-job.yaml"]
    assert seen == [sorted(str(out / n) for n in written.files)]
    for name in written.files[:2]:
        assert (out / name).read_bytes() == (GOLDEN / "k8s" / "a2-2node-dp2-tp8" / name).read_bytes()


def test_write_outputs_refuses_a_file_as_folder_and_errors(tmp_path: Path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputProblem) as exc:
        api.write_outputs(api.compile(EXAMPLE), out_dir=tmp_path / "f", diagrams=False)
    assert exc.value.rule.code == "RTC002" and "is a file, not a folder" in exc.value.message
    bad = tmp_path / "bad.rtc"
    bad.write_text(EXAMPLE.read_text().replace("10.0.0.5", "10.0.0.6"))
    with pytest.raises(OutputsRefused) as refused:
        api.write_outputs(api.compile(bad), out_dir=tmp_path / "b")
    assert any(d.code == "RTC202" for d in refused.value.diagnostics)
    assert not (tmp_path / "b").exists()


def test_check_joins_the_ports_of_several_files():
    found = api.check([EXAMPLE])
    assert found.ok and not found.unreadable and found.diagnostics == []
    assert str(EXAMPLE) in found.sources
    unread = api.check(["no-such.rtc"])
    assert unread.unreadable and [d.code for d in unread.diagnostics] == ["RTC001"]


def test_validate():
    report = api.validate(A2 / "hccl.json")
    assert report.form == "hccl-v1.0" and report.ok and report.diagnostics == []
    missing = api.validate(ROOT / "no-such.json")
    assert [d.code for d in missing.diagnostics] == ["RTC001"] and not missing.ok


def test_lint_against_the_description_finds_no_drift():
    scripts = [A2 / "atlas-01.sh", A2 / "atlas-02.sh"]
    clean = api.lint(scripts, against=EXAMPLE)
    assert clean.diagnostics == [] and clean.unreadable == 0
    assert [s.server_id for s in clean.topology.servers] == ["10.0.0.6", "10.0.0.5"]
    partial = api.lint([A2 / "atlas-01.sh", ROOT / "no-such.sh"])
    assert partial.unreadable == 1 and partial.diagnostics[0].code == "RTC001"


def test_lint_with_a_table_as_rtc_lint_table_does():
    scripts = [A2 / "atlas-01.sh", A2 / "atlas-02.sh"]
    own = api.lint(scripts, table=A2 / "hccl.json")
    assert own.diagnostics == [] and str(A2 / "hccl.json") in own.sources
    other = api.lint(scripts, table=GOLDEN / "a3-2node-dp2-tp16" / "hccl.json")
    # what `rtc lint --table` of the A3 table prints for the A2 scripts
    assert sorted(d.code for d in other.diagnostics) == \
        ["RTC212", "RTC212", "RTC704", "RTC704", "RTC706"]
    with pytest.raises(ValueError, match="inventory needs table"):
        api.lint(scripts, inventory=DATA)


def test_diagram():
    drawing = api.diagram(EXAMPLE)
    assert drawing.data.startswith('digraph "topology" {') and drawing.diagnostics == []
    groups = api.diagram(EXAMPLE, view="groups")
    assert groups.data.startswith('digraph "groups"')
    with pytest.raises(ValueError, match="view must be one of"):
        api.diagram(EXAMPLE, view="side")
    with pytest.raises(ValueError, match="no job named 'x'"):
        api.diagram(EXAMPLE, job="x")


def test_cost_and_advise():
    run = api.cost(EXAMPLE)
    assert [c.job.name for c in run.costs] == [j.name for j in run.compiled.topology.jobs]
    both = api.cost(EXAMPLE, phase="both")
    assert len(run.costs[0].steps) == 1 and len(both.costs[0].steps) == 2
    advice = api.advise(EXAMPLE)
    assert advice.advice is not None and advice.costs is None
    with pytest.raises(ValueError, match="no job named"):
        api.cost(EXAMPLE, job="nope")


def test_preflight_npu_and_nccl(tmp_path: Path):
    good = [PREFLIGHT / "all-good" / s for s in ("a", "b")]
    report = api.preflight(good)
    assert report.diagnostics == [] and report.missing == []
    assert report.text.startswith("reachability")
    assert report.document(report.diagnostics)["servers"]
    gone = api.preflight(good + [tmp_path / "c"])
    assert [d.code for d in gone.diagnostics] == ["RTC001"] and gone.missing == [str(tmp_path / "c")]
    nccl = api.preflight([DATA / "nccl-tests" / "h100-8gpu.txt"], kind="nccl")
    assert nccl.diagnostics == [] and nccl.text.startswith("h100-8gpu.txt: all_reduce_perf, 8 GPUs")
    with pytest.raises(ValueError):
        api.preflight(good, kind="tpu")


def test_import_table():
    result = api.import_table(A2 / "hccl.json")
    assert result.ok and result.text.startswith("# Imported by `rtc import` from hccl.json")
    again = api.compile_text(result.text, "cluster.rtc")
    assert again.ok and len(again.topology.servers) == 2
    missing = api.import_table(ROOT / "no-such.json")
    assert not missing.ok and [d.code for d in missing.diagnostics] == ["RTC001"]


def test_compile_result_repr_is_one_useful_line():
    """CompileResult had only object's repr (<... object at 0x...>)."""
    ok = api.compile_text((EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(), "a.rtc")
    assert repr(ok) == ("<CompileResult ok: 0 errors, 0 warnings, 0 notes; cluster "
                        "deepseek-a2 (2 servers, 16 NPUs); jobs: deepseek (world 16)>")
    gpu = api.compile_text((EXAMPLES / "gpu-h100-2node-dp2-tp8.rtc").read_text(), "g.rtc")
    assert "cluster h100 (2 servers, 16 GPUs); jobs: serve (world 16)>" in repr(gpu)
    assert repr(api.compile_text("cluster {", "b.rtc")) == \
        "<CompileResult failed: 1 error, 0 warnings, 0 notes; no topology>"
