"""`rtc lint`: one failing and one passing script per rule that applies to scripts (rule id
and script:line:col), the reference deployments D1/D2 as operators wrote them, the golden
report of a two-node set, the CLI formats and exit codes, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import CASES, GOLDEN, TESTS, expectations, two_node_scripts
from rtc.api.linting import lint_files, lint_scripts

SCRIPT_CASES = sorted((CASES / "scripts").glob("*.sh"))
DATA = TESTS / "data" / "scripts"
_VERSION = re.compile(r"#\s*vllm-version:\s*(\S+)")


def _version(path: Path) -> str | None:
    m = _VERSION.search(path.read_text(encoding="utf-8"))
    return m.group(1) if m else None


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=lambda p: p.stem)
def test_script_case(case: Path):
    expected = expectations(case)
    assert expected is not None, f"{case.name} has no '# expect:' line"
    rep = lint_files([str(case)], vllm_version=_version(case))
    got = sorted((d.code, d.span.line, d.span.column) for d in rep.diagnostics if d.span)
    if expected == []:
        assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]
    else:
        for item in expected:
            assert item in got, f"expected {item}, got {got}"
        assert all(d.span.file == str(case) for d in rep.diagnostics if d.span)


def test_every_script_rule_has_a_failing_and_a_passing_case():
    failing = {expectations(p)[0][0] for p in SCRIPT_CASES if expectations(p)}
    passing = [p for p in SCRIPT_CASES if expectations(p) == []]
    wanted = {"RTC202", "RTC431", "RTC440", "RTC441", "RTC442", "RTC451", "RTC452", "RTC453",
              "RTC455", "RTC458", "RTC501", "RTC510", "RTC530", "RTC531", "RTC532", "RTC700",
              "RTC701", "RTC702", "RTC703", "RTC708", "RTC461", "RTC210", "RTC463",
              "RTC464", "RTC709", "RTC720", "RTC721", "RTC722", "RTC723"}
    assert wanted <= failing, sorted(wanted - failing)
    assert len(passing) >= 4


def test_d1_as_the_operators_wrote_it():
    """D1's two scripts: the head's explicit --data-parallel-start-rank 0 is the only real
    problem (rejected from vLLM 0.28; a warning without a version), plus the HCCL_P2P_DISABLE
    note."""
    files = [str(DATA / "d1" / "atlas-01.sh"), str(DATA / "d1" / "atlas-02.sh")]
    rep = lint_files(files)
    got = [(d.code, d.severity.label, Path(d.span.file).name, d.span.line, d.span.column)
           for d in rep.diagnostics]
    assert got == [("RTC531", "warning", "atlas-01.sh", 12, 3),
                   ("RTC455", "note", "env.sh", 10, 8)]
    topo = rep.topology
    assert [(s.name, str(s.host_ip)) for s in topo.servers] == [("atlas-01", "10.0.0.6"),
                                                               ("atlas-02", "10.0.0.5")]
    (job,) = topo.jobs
    assert (job.dp, job.tp, job.expert_parallel, job.port, job.dp_rpc_port) == \
        (2, 8, True, 8077, 12980)
    rep = lint_files(files, vllm_version="0.29.0")
    assert [(d.code, d.severity.label) for d in rep.diagnostics][0] == ("RTC531", "error")
    assert lint_files(files, vllm_version="0.27.0").ok


def test_d2_ray_head_and_worker_lint_clean():
    rep = lint_files([str(DATA / "d2" / "head.sh"), str(DATA / "d2" / "worker.sh")])
    assert rep.diagnostics == [], [d.message for d in rep.diagnostics]
    (job,) = rep.topology.jobs
    assert (job.pp, job.tp, job.ray_port) == (2, 8, 6379)
    assert [p.server.name for p in job.placements] == ["head", "worker"]


def test_golden_two_node_report():
    """The text report of D1 as written, on vLLM 0.29 (the README shows it)."""
    from rtc.report.text import render_text

    import os
    here = os.getcwd()
    os.chdir(DATA / "d1")
    try:
        rep = lint_files(["atlas-01.sh", "atlas-02.sh"], vllm_version="0.29.0")
    finally:
        os.chdir(here)
    text = render_text(rep.diagnostics, rep.sources, limit=100)
    golden = GOLDEN / "lint" / "d1-as-written.txt"
    if os.environ.get("RTC_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == golden.read_text(encoding="utf-8")


def test_node_names_and_sections():
    text = ("export GLOO_SOCKET_IFNAME=eno0\n## node-a\nray start --head --port=6379\n"
            "vllm serve m --distributed-executor-backend ray -pp 2 -tp 8\n"
            "## node-b\nray start --address=10.1.1.1:6379\n")
    rep = lint_scripts([("tut.md", text)])
    assert [s.name for s in rep.topology.servers] == ["node-a", "node-b"]
    rep = lint_scripts([("a.sh", "vllm serve m -tp 8\n")], names={"a.sh": "atlas-01"})
    assert [s.name for s in rep.topology.servers] == ["atlas-01"]


def test_bad_input_never_raises():
    rep = lint_scripts([("bin.sh", b"\x7fELF\x00\x00\x01"), ("q.sh", "vllm serve 'm\n"),
                        ("s.sh", "source ./missing.env\nvllm serve m\n")])
    codes = sorted(d.code for d in rep.diagnostics)
    assert codes == ["RTC700", "RTC700", "RTC701"], codes


def test_host_not_in_table(tmp_path: Path):
    from rtc.api.linting import read_table

    table, diags = read_table(str(GOLDEN / "a2-2node-dp2-tp8" / "hccl.json"))
    assert table is not None and not [d for d in diags if d.severity.label == "error"]
    files = [str(DATA / "d1" / "atlas-01.sh"), str(DATA / "d1" / "atlas-02.sh")]
    assert [d.code for d in lint_files(files, table=table).diagnostics
            if d.severity.label == "error"] == []
    bad = tmp_path / "n3.sh"
    bad.write_text("export HCCL_IF_IP=10.0.0.7\nexport ASCEND_RT_VISIBLE_DEVICES=0,1\n"
                   "vllm serve m -tp 2\n")
    codes = [(d.code, d.span.line) for d in lint_files([str(bad)], table=table).diagnostics]
    assert ("RTC704", 1) in codes and ("RTC706", 3) in codes, codes


def _cli(*args):
    from typer.testing import CliRunner

    from rtc.cli import app
    return CliRunner().invoke(app, list(args))


def test_cli_formats_and_exit_codes():
    files = [str(DATA / "d1" / "atlas-01.sh"), str(DATA / "d1" / "atlas-02.sh")]
    for args, code in ((files, 0), (["--vllm-version", "0.29.0"] + files, 1),
                       (["--strict"] + files, 1), (["--exit-zero", "--strict"] + files, 0),
                       (["--format", "nope"] + files, 2), (["--node", "x"] + files, 2)):
        assert _cli("lint", *args).exit_code == code, args
    res = _cli("lint", "--format", "sarif", "--vllm-version", "0.29.0", *files)
    sarif = json.loads(res.stdout)
    (hit,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "RTC531"]
    loc = hit["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("atlas-01.sh")
    assert loc["region"]["startLine"] == 12
    res = _cli("lint", "--format", "github", "--vllm-version", "0.29.0", *files)
    assert "::error file=" in res.stdout and "atlas-01.sh,line=12" in res.stdout


SMALL = ["a2-1node-tp8", "a2-2node-dp2-tp8", "a2-2node-pp2-tp8", "a3-2node-dp2-tp16", "pd-a3"]


def _compiled(example: str):
    """(compile result, {file name: text} of the --out-dir files) in memory."""
    from conftest import EXAMPLES
    from rtc.api import compile_file, rank_table
    from rtc.emit.bundle import build_bundle

    result = compile_file(str(EXAMPLES / f"{example}.rtc"))
    jobs = list(result.topology.jobs)
    names = {j.name: ("hccl.json" if len(jobs) == 1 else f"hccl-{j.name}.json") for j in jobs}
    files = {names[j.name]: rank_table(result.topology, j)[0] for j in jobs}
    bundle = build_bundle(result.topology, result.plan, jobs, names, with_plan_json=False)
    files.update({name: text for name, text, _ in bundle.outputs})
    return result, files


@pytest.mark.parametrize("example", SMALL)
def test_lint_of_compiled_scripts_reports_nothing_the_compile_did_not(example, tmp_path):
    """`rtc compile --out-dir` then `rtc lint` of the generated launch scripts: every rule
    lint reports, the compile reported too (here: nothing at all), with and without the
    generated rank table."""
    result, files = _compiled(example)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    scripts = [str(tmp_path / n) for n in sorted(files)
               if n.endswith(".sh") and not n.startswith("preflight-") and n != "calibrate.sh"]
    compiled = {d.code for d in result.diagnostics}
    hw = result.topology.preset.name
    rep = lint_files(scripts, hardware=hw)
    assert {d.code for d in rep.diagnostics} <= compiled, \
        [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]
    assert rep.topology is not None and len(rep.topology.jobs) == len(result.topology.jobs)
    assert sorted((j.dp, j.tp, j.pp) for j in rep.topology.jobs) == \
        sorted((j.dp, j.tp, j.pp) for j in result.topology.jobs)
    if "hccl.json" in files:
        from rtc.api.linting import read_table

        table, _ = read_table(str(tmp_path / "hccl.json"))
        rep = lint_files(scripts, table=table)
        assert {d.code for d in rep.diagnostics} <= compiled, \
            [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]


def test_rtc_own_d1_head_has_no_start_rank_and_passes_0_29():
    """Issue 13: rtc's internal-LB head passes no --data-parallel-start-rank, so the
    launch is accepted by vLLM 0.28+ (RTC531 on the compiled plan finds nothing)."""
    from conftest import EXAMPLES
    from rtc.api import compile_text

    text = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text(encoding="utf-8")
    text = text.replace("hardware atlas-800t-a2", "hardware atlas-800t-a2\n  vllm_version 0.29.0", 1)
    result = compile_text(text, "d1.rtc")
    assert "vllm_version 0.29.0" in text
    assert not [d for d in result.diagnostics if d.code == "RTC531"]
    head = result.plan.launches["deepseek"].nodes[0].procs[0]
    assert "--data-parallel-start-rank" not in head.words()
    worker = result.plan.launches["deepseek"].nodes[1].procs[0].words()
    assert worker[worker.index("--data-parallel-start-rank") + 1] == "1"


def test_fuzzed_scripts_give_findings_never_a_traceback():
    """1,000 mutated scripts (bytes cut, doubled, swapped; quotes, NULs and here-docs put
    in) are read without an exception; `rtc lint` would exit 0 or 1 on each."""
    import random

    base = (DATA / "d1" / "atlas-01.sh").read_bytes() + (DATA / "d1" / "env.sh").read_bytes()
    pieces = [b"'", b'"', b"\\\n", b"<<EOF\n", b"$(", b"${", b"\x00", b"case x in\n",
              b"export ", b"=", b" -dpr 7", b"&&", b"\n## n2\n", b"\xff\xfe", b"`"]
    rng = random.Random(13)
    for k in range(1000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            op = rng.randrange(4)
            if op == 0:
                del data[at:at + rng.randint(1, 40)]
            elif op == 1:
                data[at:at] = rng.choice(pieces)
            elif op == 2:
                data[at:at] = data[at:at + rng.randint(1, 60)]
            else:
                j = rng.randrange(len(data))
                data[at], data[j] = data[j], data[at]
        rep = lint_scripts([(f"m{k}.sh", bytes(data))], loader=lambda p: (None, "absent"))
        assert all(d.code.startswith("RTC") and d.span is not None or d.code == "RTC001"
                   for d in rep.diagnostics)


def _exported_table_scripts(folder: Path) -> None:
    """d1's scripts in ``folder``, env.sh exporting RANK_TABLE_FILE=hccl.json, which lies
    beside them (the 2-server golden table); atlas-02's HCCL_IF_IP is not in it."""
    table = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text(encoding="utf-8")
    (folder / "hccl.json").write_text(table, encoding="utf-8")
    for name, out in (("atlas-01.sh", "atlas-01.sh"), ("atlas-02.sh", "n3.sh"),
                      ("env.sh", "env.sh")):
        text = (DATA / "d1" / name).read_text(encoding="utf-8")
        if name == "env.sh":
            text += "export RANK_TABLE_FILE=hccl.json\n"
        (folder / out).write_text(text.replace("10.0.0.5", "10.0.0.9"), encoding="utf-8")


def test_exported_rank_table_file_is_read(tmp_path: Path, monkeypatch):
    """RANK_TABLE_FILE (relative; the current folder has no such file, so the one beside
    the script) is read like --table: a node whose HCCL_IF_IP the table does not list is
    RTC704, and an RTC719 note says which file was read and why. Independent of the folder
    the tests run in (a hccl.json left in the repository root once changed the result)."""
    scripts, cwd = tmp_path / "scripts", tmp_path / "elsewhere"
    scripts.mkdir()
    cwd.mkdir()
    _exported_table_scripts(scripts)
    monkeypatch.chdir(cwd)
    rep = lint_files([str(scripts / "atlas-01.sh"), str(scripts / "n3.sh")])
    assert [(d.code, Path(d.span.file).name, d.span.line) for d in rep.diagnostics
            if d.code.startswith("RTC70")] == [("RTC704", "n3.sh", 4)]
    assert rep.topology.servers[0].devices[0].device_ip is not None   # the table's devices
    (read,) = [d for d in rep.diagnostics if d.code == "RTC719"]
    assert read.severity.name == "NOTE" and Path(read.span.file).name == "env.sh"
    assert read.message == (f"RANK_TABLE_FILE=hccl.json is read as {scripts / 'hccl.json'}: "
                            f"the current folder has no hccl.json, so rtc read the one "
                            f"beside {scripts / 'env.sh'}")


def test_exported_rank_table_file_in_the_current_folder_is_named(tmp_path: Path, monkeypatch):
    """A relative RANK_TABLE_FILE that the current folder holds is read from there (where
    bash would find it), and the RTC719 note says so: the findings then come from that
    table (here one without atlas-01's address either: RTC704 for both nodes)."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    _exported_table_scripts(scripts)
    table = (GOLDEN / "a2-2node-dp2-tp8" / "hccl.json").read_text(encoding="utf-8")
    (tmp_path / "hccl.json").write_text(table.replace('"10.0.0.6"', '"10.0.0.77"'),
                                        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rep = lint_files([str(scripts / "atlas-01.sh"), str(scripts / "n3.sh")])
    (read,) = [d for d in rep.diagnostics if d.code == "RTC719"]
    assert read.message == (f"RANK_TABLE_FILE=hccl.json is read as {tmp_path / 'hccl.json'}: "
                            "the current folder has it (where bash looks when the script "
                            "runs from here)")
    assert sorted((d.code, Path(d.span.file).name) for d in rep.diagnostics
                  if d.code == "RTC704") == [("RTC704", "atlas-01.sh"), ("RTC704", "n3.sh")]


def test_readme_shows_the_real_run_and_the_version_table():
    from conftest import ROOT
    from rtc.plan.versions import HEADLESS_FORMS

    section = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    assert (GOLDEN / "lint" / "d1-as-written.txt").read_text(encoding="utf-8").rstrip() \
        in section
    for form, accepted, rejected, source in HEADLESS_FORMS:
        assert f"| {form} | {accepted} | {rejected} | {source} |" in section, form


def test_against_reports_drift_from_the_plan():
    from conftest import EXAMPLES
    from rtc.api import compile_file

    plan = compile_file(str(EXAMPLES / "a2-2node-dp2-tp8.rtc"))
    files = [str(DATA / "d1" / "atlas-01.sh"), str(DATA / "d1" / "atlas-02.sh")]
    got = [(d.code, Path(d.span.file).name, d.span.line, d.message.split(" here")[0])
           for d in lint_files(files, against=plan).diagnostics if d.code == "RTC707"]
    assert got == [("RTC707", "atlas-01.sh", 7, "atlas-01: VLLM_HOST_IP is not exported"),
                   ("RTC707", "atlas-01.sh", 12, "atlas-01: --data-parallel-start-rank is 0"),
                   ("RTC707", "atlas-02.sh", 7, "atlas-02: VLLM_HOST_IP is not exported")]
    assert _cli("lint", "--against", str(EXAMPLES / "a2-2node-dp2-tp8.rtc"), *files).exit_code == 0
    assert _cli("lint", "--against", "nope.rtc", *files).exit_code == 2


@pytest.mark.parametrize("example", ["a2-2node-dp2-tp8", "a2-2node-pp2-tp8", "pd-a3"])
def test_generated_scripts_do_not_drift_from_their_plan(example, tmp_path):
    result, files = _compiled(example)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    scripts = [str(tmp_path / n) for n in sorted(files)
               if n.endswith(".sh") and not n.startswith("preflight-")]
    rep = lint_files(scripts, hardware=result.topology.preset.name, against=result)
    assert [d.message for d in rep.diagnostics if d.code == "RTC707"] == []


def test_check_of_several_descriptions_plans_ports_across_them():
    """`rtc check a.rtc b.rtc`: jobs of two files on one host conflict like two jobs of one
    file (each file alone is clean)."""
    from rtc.api import compile_file
    from rtc.api.ports_across import cross_file_ports

    here = TESTS / "data" / "ports_across"
    pre, dec, own = (compile_file(str(here / n)) for n in
                     ("prefill.rtc", "decode.rtc", "decode-own-ports.rtc"))
    assert pre.ok and dec.ok and own.ok
    got = sorted((d.code, Path(d.span.file).name, d.span.line) for d in cross_file_ports([pre, dec]))
    assert got == [("RTC440", "prefill.rtc", 10), ("RTC440", "prefill.rtc", 10)], got
    assert cross_file_ports([pre, own]) == []
    assert _cli("check", str(here / "prefill.rtc"), str(here / "decode.rtc")).exit_code == 1
    assert _cli("check", str(here / "prefill.rtc"), str(here / "decode-own-ports.rtc")).exit_code == 0


@pytest.mark.parametrize("op", ["<<'EOF'", '<<"EOF"', "<<EOF", "<<-EOF"])
def test_here_document_bodies_are_never_read_as_commands(tmp_path, op):
    # a fresh user's finding: `cat <<'EOF'` bodies were linted as commands (RTC210, RTC440)
    body = "\tvllm serve fake --tensor-parallel-size 5\n" + ("\tEOF\n" if "-" in op else "EOF\n")
    script = tmp_path / "node.sh"
    script.write_text("export HCCL_IF_IP=10.0.0.6\nexport GLOO_SOCKET_IFNAME=eno0\n"
                      f"cat {op} > /tmp/x\n{body}vllm serve /m --tensor-parallel-size 8\n")
    rep = lint_files([str(script)])
    assert [(d.code, d.span.line) for d in rep.diagnostics] == [("RTC701", 3)], \
        [f"{d.code} {d.message}" for d in rep.diagnostics]


def test_no_hccl_defaults_are_lifted_on_gpu_servers(tmp_path):
    # a fresh user's finding: RTC455 named HCCL_IF_BASE_PORT, which the script never set
    script = tmp_path / "gpu.sh"
    script.write_text("export CUDA_VISIBLE_DEVICES=0,1\nexport VLLM_HOST_IP=10.0.0.1\n"
                      "vllm serve /m --tensor-parallel-size 2\n")
    rep = lint_files([str(script)], hardware="pcie-nvlink-4x2")
    assert not [d for d in rep.diagnostics if "HCCL" in d.message], \
        [d.message for d in rep.diagnostics]


def test_rtc_own_tool_scripts_are_noted_not_linted(tmp_path):
    # `rtc lint out/*.sh` on an --out-dir: the preflight and calibrate scripts are rtc's
    result, files = _compiled("a2-2node-dp2-tp8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    rep = lint_files(sorted(str(p) for p in tmp_path.glob("*.sh")))
    tools = sorted(Path(d.span.file).name for d in rep.diagnostics if "rtc's own" in d.message)
    assert tools == ["calibrate.sh", "preflight-atlas-01.sh", "preflight-atlas-02.sh"]
    assert {d.code for d in rep.diagnostics} == {"RTC701"}


def test_standard_input_is_read_as_a_script(monkeypatch):
    import io
    script = (DATA / "d1" / "atlas-01.sh").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(script)))
    rep = lint_files(["-"])
    assert "<stdin>" in rep.sources and rep.topology is not None


def test_out_dir_named_by_a_relative_path_sources_its_env_files(tmp_path, monkeypatch):
    # fresh-user finding 6: `rtc lint a2/*.sh` resolved `. "$RTC_DIR"/atlas-01.env` to
    # a2/a2/atlas-01.env (RTC701), then false RTC451 / RTC532 without the env file's values
    result, files = _compiled("a2-2node-dp2-tp8")
    (tmp_path / "a2").mkdir()
    for name, text in files.items():
        (tmp_path / "a2" / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rep = lint_files(["a2/atlas-01.sh", "a2/atlas-02.sh"])
    assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]
    assert "a2/atlas-01.env" in rep.sources and "a2/atlas-02.env" in rep.sources
    assert rep.topology.jobs[0].dp_address is not None
    # one node's script alone: a note that the other node is not given, no RTC210 / RTC302
    monkeypatch.chdir(tmp_path / "a2")
    for name, head in (("atlas-01.sh", True), ("atlas-02.sh", False)):
        rep = lint_files([name])
        assert [d.code for d in rep.diagnostics] == ["RTC461"], \
            [f"{d.code} {d.message}" for d in rep.diagnostics]
        assert ("RTC451" in rep.diagnostics[0].message) is not head
        assert "atlas-01.env" in rep.sources or "atlas-02.env" in rep.sources


_Q = "'"
#: (script line, whether `bash -n` rejects it): quoting inside ${...} and the like.
_BASH_N = [
    ('echo "${x:?the model' + _Q + 's path}"', True),
    ('echo "${x#it' + _Q + 's}"', True),
    ("echo ${x:-it's}", True),
    ('echo "${x:-$(echo it' + _Q + 's)}"', True),
    ("echo a#'b", True),
    ('echo "${x:-it' + _Q + 's}" ' + _Q + 'b' + _Q, True),
    ('echo "${x:-"it' + _Q + 's"}"', False),
    ('echo "$(echo "it' + _Q + 's")"', False),
    ('echo "${x:-' + _Q + 'a' + _Q + '}" it' + _Q + 's' + _Q, False),
    ("echo $'it\\'s'", False),
    ('echo "${x:-\\' + _Q + '}"', False),
    ("# ${x:-it's}\necho ok", False),
    ("a=$(case $x in a) echo 'q';; esac)", False),
    ("cat <<EOF\n${x:-it's}\nEOF\necho ok", False),
]


@pytest.mark.parametrize("line,rejected", _BASH_N)
def test_a_script_bash_n_rejects_is_rtc700(tmp_path, line, rejected):
    # a fresh user's finding: proxy-pd.sh failed `bash -n` but `rtc lint` found nothing
    import shutil
    import subprocess

    script = tmp_path / "node.sh"
    script.write_text(f"{line}\nvllm serve /m --tensor-parallel-size 8\n")
    if shutil.which("bash"):     # the table above is bash's own verdict
        assert (subprocess.run(["bash", "-n", str(script)], capture_output=True,
                               timeout=60).returncode != 0) == rejected
    codes = [d.code for d in lint_files([str(script)]).diagnostics]
    assert codes.count("RTC700") == (1 if rejected else 0), codes


def test_a_broken_tool_script_is_rtc700_though_not_linted(tmp_path):
    result, files = _compiled("gpu-pd-h100")
    text = files["proxy-pd.sh"].replace("set PROXY to the path", "set PROXY: vLLM's path")
    (tmp_path / "preflight-x.sh").write_text(files["preflight-gpu-p1.sh"].replace(
        "\nset -", '\n: "${X:?it\'s}"\nset -', 1))
    (tmp_path / "proxy-pd.sh").write_text(text)
    rep = lint_files([str(tmp_path / "preflight-x.sh"), str(tmp_path / "proxy-pd.sh")])
    got = sorted((Path(d.span.file).name, d.span.line) for d in rep.diagnostics
                 if d.code == "RTC700")
    assert [n for n, _ in got] == ["preflight-x.sh", "proxy-pd.sh"], got


#: The 1,024- and 4,096-server families are linted at 128 servers (two super pods), the same
#: form: linting 4,096 scripts takes ~20 s (rtc lint of the full --out-dirs exits 0 too).
_SHRUNK = {"family-a3-1024": (("1023]", "0127]"), ("dp 1024", "dp 128")),
           "family-a3-4096": (("4095]", "0127]"), ("dp 4096", "dp 128"))}


def _out_dir_of(example: str, out: Path) -> list[str]:
    """`rtc compile examples/EXAMPLE.rtc --out-dir OUT --no-diagrams` in process; the
    `OUT/*.sh` a user lints (rtc's own preflight, calibrate and proxy scripts too)."""
    from typer.testing import CliRunner

    from conftest import EXAMPLES
    from rtc.cli import app

    src = EXAMPLES / f"{example}.rtc"
    if example in _SHRUNK:
        text = src.read_text(encoding="utf-8")
        for old, new in _SHRUNK[example]:
            assert old in text
            text = text.replace(old, new)
        src = out.parent / f"{example}.rtc"
        src.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(app, ["compile", str(src), "--out-dir", str(out), "--no-diagrams"])
    assert res.exit_code == 0, res.output
    return sorted(str(p) for p in out.glob("*.sh"))


def _all_examples() -> list[str]:
    from conftest import EXAMPLES

    return sorted(p.stem for p in EXAMPLES.glob("*.rtc"))


#: Known gap: launch scripts do not carry the NVLink domain (`super_pod` of an NVL72 tray),
#: so `rtc lint` of them reads TP across trays as cross-server (RTC310).
#: Examples whose out-dir lint is known not to be clean (strict xfail), with why. The
#: NVL72 example left this list when its env files began to name the NVLink domain
#: (RTC_NVLINK_DOMAIN; tests/checks/test_nvl72.py has the failing pair).
_LINT_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("example", [
    pytest.param(e, marks=pytest.mark.xfail(reason=_LINT_GAPS[e], strict=True))
    if e in _LINT_GAPS else e for e in _all_examples()])
def test_lint_of_every_example_out_dir_is_clean(example, tmp_path):
    """Fresh user 2, finding 3: `rtc lint OUT/*.sh` on rtc's own --out-dir of every example
    exits 0 with at most notes (no --hardware: the hardware is the table's, or NVIDIA GPUs
    from CUDA_VISIBLE_DEVICES; 2.0 tables are matched by launch order, RTC462)."""
    from rtc.diagnostics import Severity

    scripts = _out_dir_of(example, tmp_path)
    rep = lint_files(scripts)
    loud = [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics
            if d.severity is not Severity.NOTE]
    assert rep.ok and not loud, loud
    launches = [s for s in scripts if not Path(s).name.startswith(("preflight-", "calibrate",
                                                                   "proxy-"))]
    mindie = {d.span.file for d in rep.diagnostics if d.code == "RTC463"}
    jobs = rep.topology.jobs if rep.topology is not None else []
    assert bool(jobs) == bool(set(launches) - mindie)
    assert not mindie or example == "pd-mindie-a2"


def test_lint_matches_a_2_0_table_by_launch_order_and_takes_its_eids(tmp_path):
    """A 2.0 table names no hosts: the nodes are its servers in launch order (RTC462 says
    which), and take its devices with their EIDs (no RTC221 / RTC211 / RTC704)."""
    scripts = _out_dir_of("a5-2node-dp2-tp8", tmp_path)
    rep = lint_files(scripts)
    by_order = [d for d in rep.diagnostics if d.code == "RTC462"]
    assert len(by_order) == 1 and "a5-node0 = 0_0, a5-node1 = 0_1" in by_order[0].message
    node1 = next(s for s in rep.topology.servers if s.name == "a5-node1")
    assert node1.server_id == "0_1" and node1.super_pod_id == "0"
    assert node1.devices[0].eids and len(node1.devices[0].eids[0]) == 32
    # without the table the EID / RoCE / super pod rules need data the scripts do not give
    (tmp_path / "hccl.json").unlink()
    rep = lint_files(scripts, hardware="atlas-950-superpod")
    assert rep.ok and not {"RTC221", "RTC211", "RTC212", "RTC462"} & {d.code for d in rep.diagnostics}


def test_lint_of_a_single_node_dp_launch_uses_the_whole_dp_size(tmp_path):
    """vLLM runs `--data-parallel-size 2 -tp 4` without --data-parallel-size-local as 2
    local engines (EngineArgs: the local DP size defaults to the DP size): 8 GPUs, the
    CUDA_VISIBLE_DEVICES the env exports; not RTC210 "given 4"."""
    script = ("export VLLM_HOST_IP=10.0.2.31\nexport NCCL_SOCKET_IFNAME=eth0\n"
              "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
              "vllm serve /m --data-parallel-size 2 --tensor-parallel-size 4\n")
    rep = lint_scripts([("box.sh", script)])
    assert rep.ok, [d.message for d in rep.diagnostics]
    assert [d.code for d in rep.diagnostics] == ["RTC464"]
    assert rep.topology.preset.name == "generic-gpu"
    assert rep.topology.preset.devices_per_server == 8
    assert rep.topology.jobs[0].placements[0].device_ids == tuple(range(8))
    # --hardware generic-gpu: as many GPUs as the scripts use, not "devices 0..-1"
    rep = lint_scripts([("box.sh", script.replace("2,3,4,5,6,7", "2,3,4,5,6"))],
                       hardware="generic-gpu")
    assert rep.topology.preset.devices_per_server == 7
    assert "0..-1" not in " ".join(d.message for d in rep.diagnostics)
    assert any(d.code == "RTC210" and "given 7" in d.message for d in rep.diagnostics)



def test_a_worker_that_misses_the_head_is_one_job_with_rtc709():
    rep = two_node_scripts("10.0.0.5", "")
    assert [(d.code, str(d.span)) for d in rep.diagnostics] == [("RTC709", "node2.sh:3:1")]
    assert "127.0.0.1" in rep.diagnostics[0].message
    assert [j.name for j in rep.topology.jobs] == ["vllm@node1"]
    rep = two_node_scripts("10.0.0.5", "--data-parallel-address 10.0.0.7")
    assert [(d.code, str(d.span)) for d in rep.diagnostics] == [("RTC709", "node2.sh:3:82")]
    assert "10.0.0.7 is the host of no node given" in rep.diagnostics[0].message


def test_a_copied_hccl_if_ip_is_one_error_naming_both_scripts():
    rep = two_node_scripts("10.0.0.6", "--data-parallel-address 10.0.0.6")
    assert [(d.code, str(d.span)) for d in rep.diagnostics] == [("RTC202", "node2.sh:1:8")]
    assert rep.diagnostics[0].message.startswith(
        "node2.sh and node1.sh both claim host 10.0.0.6 via HCCL_IF_IP")
    assert not any("job blocks" in (d.hint or "") for d in rep.diagnostics)


def test_bad_vllm_version_and_missing_node_file_are_usage_errors():
    files = [str(DATA / "d1" / "atlas-01.sh")]
    res = _cli("lint", "--vllm-version", "banana", *files)
    assert res.exit_code == 2 and "RTC002" in res.output and "banana" in res.output
    res = _cli("lint", "--node", "a=/nonexistent/x.sh", *files)
    assert res.exit_code == 2 and "/nonexistent/x.sh does not exist" in res.output
    assert _cli("lint", "--node", f"a={files[0]}", *files).exit_code == 0
    assert "--vllm-version 0.11.0" in _cli("lint", "--help").output


def test_rtc_own_1_0_table_matches_scripts_not_named_as_its_servers():
    """fresh3 finding 5: `rtc lint --table hccl.json` of rtc's own out-dir, the scripts
    renamed node1.sh / node2.sh: the 1.0 table's server_ids are the host IPs (as Ascend
    Operator writes them), so each node is matched by its HCCL_IF_IP: no RTC462 (matched
    by order) and no RTC704."""
    from rtc.api.linting import read_table

    _result, files = _compiled("a2-2node-dp2-tp8")
    table, found = read_table("hccl.json", loader=lambda p: (files["hccl.json"].encode(), None))
    assert table is not None and not [d for d in found if d.severity.name == "ERROR"]
    env = {n: t for n, t in files.items() if n.endswith(".env")}
    scripts = [(f"node{k}.sh", files[f"atlas-0{k}.sh"]) for k in (1, 2)]
    rep = lint_scripts(scripts, table=table,
                       loader=lambda p: (env[p.rsplit("/", 1)[-1]].encode(), None)
                       if p.rsplit("/", 1)[-1] in env else (None, "absent"))
    assert [d.code for d in rep.diagnostics] == [], \
        [f"{d.code} {d.message}" for d in rep.diagnostics]
    # the second script a copy of the first (one HCCL_IF_IP): still matched, RTC202 only
    copied = [scripts[0], ("node2.sh", scripts[1][1].replace("10.0.0.5", "10.0.0.6"))]
    rep = lint_scripts(copied, table=table, loader=lambda p: (None, "absent"))
    assert "RTC704" not in {d.code for d in rep.diagnostics}


def test_a_workers_visible_devices_are_judged_on_the_worker_at_its_line():
    """fresh3 finding 4: the worker's ASCEND_RT_VISIBLE_DEVICES is the worker's, not the
    head's; with all DP ranks' nodes given there is no RTC461."""
    rep = two_node_scripts("10.0.0.5", "--data-parallel-address 10.0.0.6", "1,2,3,4,5,6,7,8")
    assert [(d.code, str(d.span), d.subject) for d in rep.diagnostics] == \
        [("RTC205", "node2.sh:2:32", "server node2")]
    rep = two_node_scripts("10.0.0.5", "--data-parallel-address 10.0.0.6", "0,1,2,3,4,5,6")
    codes = {d.code for d in rep.diagnostics}
    assert "RTC303" in codes and "RTC461" not in codes and "RTC432" not in codes
    assert not any("node1" in (d.subject or "").split(", ")[-1] and d.code != "RTC210"
                   for d in rep.diagnostics)
