"""Golden outputs of `rtc compile --out-dir` besides the rank tables: env files, launch
scripts, preflight scripts and plan.json, byte for byte, under tests/golden/<example>/.

Small examples keep every file. The family examples (1,024+ servers) keep the files of
their first and last server only, and their plan.json is validated against
schemas/plan.schema.json instead of being stored. RTC_UPDATE_GOLDEN=1 rewrites the
goldens."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from conftest import EXAMPLES, GOLDEN, run_rtc
from rtc.resources import load_schema

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.rtc"))
UPDATE = os.environ.get("RTC_UPDATE_GOLDEN") == "1"
PATTERNS = ("*.env", "*.sh", "plan.json", "pd-ranktable*.json", "mindie-*.json")


def produced(out: Path) -> list[str]:
    return sorted({p.name for pat in PATTERNS for p in out.glob(pat)})


def is_big(example: Path) -> bool:
    return example.stem.startswith("family-")


def sample(names: list[str], plan: dict) -> list[str]:
    servers = [s["name"] for s in plan["servers"]]
    keep = {servers[0], servers[-1]}
    out = []
    for n in names:
        stem = n[len("preflight-"):] if n.startswith("preflight-") else n
        base = stem.rsplit(".", 1)[0].split(".")[0]
        if base in keep:
            out.append(n)
    return out


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_outputs_match_golden(example: Path, tmp_path: Path):
    res = run_rtc("compile", str(example), "--out-dir", str(tmp_path), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    golden = GOLDEN / example.stem
    names = produced(tmp_path)
    plan = json.loads((tmp_path / "plan.json").read_text())
    if is_big(example):
        from rtc.emit.bundle import plan_problems

        assert plan_problems(plan, sample=2048) == []   # every field kind, bounded time
        names = sample([n for n in names if n != "plan.json"], plan)
        if not UPDATE and not any(golden.glob("*.sh")):
            pytest.skip(f"no launch goldens for {example.stem} yet")
    else:
        jsonschema.Draft202012Validator(load_schema("plan")).validate(plan)
    if UPDATE:
        golden.mkdir(parents=True, exist_ok=True)
        for old in produced(golden):
            (golden / old).unlink()
        for n in names:
            (golden / n).write_bytes((tmp_path / n).read_bytes())
    assert names == produced(golden), f"{example.name}: the set of outputs changed"
    for n in names:
        assert (tmp_path / n).read_bytes() == (golden / n).read_bytes(), f"{example.name}: {n}"


def test_plan_json_of_d1_carries_ranks_groups_ports_and_argv():
    plan = json.loads((GOLDEN / "a2-2node-dp2-tp8" / "plan.json").read_text())
    (job,) = plan["jobs"]
    assert job["launch_mode"] == "dp-internal"
    assert len(job["ranks"]) == 16
    assert job["ranks"][9] == {"rank": 9, "rank_id": 9, "server": "atlas-02", "device_id": 1,
                               "device_ip": "6.0.2.19", "dp": 1, "pp": 0, "pcp": 0, "tp": 1}
    assert job["groups"]["tp"] == [list(range(8)), list(range(8, 16))]
    assert job["groups"]["ep"] == [list(range(16))]
    worker = job["nodes"][1]
    assert worker["launch_file"] == "atlas-02.sh" and worker["env_file"] == "atlas-02.env"
    assert worker["processes"][0]["argv"][:4] == ["vllm", "serve", "/models/DeepSeek-R1-W8A8",
                                                 "--headless"]
    assert ["HCCL_IF_IP", "10.0.0.5"] in worker["env"]
    kinds = {(p["server"], p["kind"], p["lo"]) for p in plan["ports"]}
    assert ("atlas-01", "dp_rpc", 12980) in kinds and ("atlas-01", "api", 8077) in kinds
    assert "preflight-atlas-02.sh" in plan["files"] and "hccl.json" in plan["files"]


def test_plan_schema_rejects_a_broken_plan():
    plan = json.loads((GOLDEN / "a2-2node-dp2-tp8" / "plan.json").read_text())
    plan["jobs"][0]["ranks"][0]["dp"] = "0"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(load_schema("plan")).validate(plan)
    from rtc.emit.bundle import plan_problems

    assert plan_problems(plan)


def test_compile_writes_nothing_on_error(tmp_path: Path):
    bad = tmp_path / "bad.rtc"
    text = (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text().replace(
        'worker_args "--port 8078"', 'args "--tensor-parallel-size 16"')
    bad.write_text(text)
    out = tmp_path / "out"
    res = run_rtc("compile", str(bad), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 1
    assert "RTC503" in res.stderr
    assert not out.exists() or list(out.iterdir()) == []


def test_recompile_replaces_files_atomically(tmp_path: Path):
    src = EXAMPLES / "a2-2node-dp2-tp8.rtc"
    assert run_rtc("compile", str(src), "--out-dir", str(tmp_path), "--no-diagrams").returncode == 0
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert os.access(tmp_path / "atlas-01.sh", os.X_OK)
    assert not os.access(tmp_path / "atlas-01.env", os.X_OK)
    assert run_rtc("compile", str(src), "--out-dir", str(tmp_path), "--no-diagrams").returncode == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == first   # no temp files left


def test_every_emitted_script_passes_bash_n_and_shellcheck():
    # a fresh user's finding: proxy-pd.sh of gpu-pd-h100 was a bash syntax error (an
    # apostrophe inside ${PROXY:?...}). The goldens are byte for byte what `rtc compile
    # --out-dir` writes for every example (test_outputs_match_golden), so reading them
    # checks every emitted script and env file without compiling again.
    import shutil
    import subprocess

    files = []
    for example in EXAMPLE_FILES:
        scripts = sorted((GOLDEN / example.stem).glob("*.sh"))
        assert scripts, f"{example.name}: no launch script among its goldens"
        files += scripts + sorted((GOLDEN / example.stem).glob("*.env"))
    bad = [f"{p.parent.name}/{p.name}: {r.stderr.strip()}" for p in files
           if (r := subprocess.run(["bash", "-n", str(p)], capture_output=True, text=True,
                                   timeout=60)).returncode]
    assert bad == []
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (bash -n passed)")
    res = subprocess.run(["shellcheck", "-s", "bash", *map(str, files)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stdout[:3000]
