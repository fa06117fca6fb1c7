"""The mutation fuzzer (tools/fuzz.py) runs on 150 inputs, 30 of each kind, so it cannot rot.

The seed is fixed; with it, the current code gives no finding. A failure here is a real
crash the fuzzer found: the report lists the command, the exception and the saved input
(rerun `rtc ... FILE` on it), and tools/fuzz.py with the same --seed reproduces it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_fuzz_smoke(tmp_path: Path):
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "fuzz.py"), "--n", "150",
                          "--seed", "1", "--subprocess", "0.04", "--timeout", "120",
                          "--out", str(tmp_path / "findings")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert "inputs per kind: rtc 30, tables 30, scripts 30, manifests 30, captures 30" \
        in res.stdout, res.stdout
    assert "subprocess runs: 5" in res.stdout, res.stdout
    assert "findings: 0 runs" in res.stdout, res.stdout
    for command in ("check", "compile", "validate", "import", "lint", "preflight",
                    "calibrate", "api:compile_text", "api:validate_source", "api:captures"):
        assert f" {command} " in res.stdout, (command, res.stdout)
    assert not (tmp_path / "findings").exists()


def test_deep_json_in_captures_and_flags_is_a_finding_not_a_crash():
    """The fuzzer's captures (seed 1, input 44: expect.json wrapped in 100,000 brackets)
    found json.loads's RecursionError escaping the all_reduce sweep parser; every
    json.loads of rtc now turns it into the same finding as other bad JSON."""
    from rtc.inventory.allreduce_sweep import parse_allreduce_sweep
    from rtc.scripts.values import json_problem

    deep = "[" * 100_000
    run, diags = parse_allreduce_sweep(deep + "\n")
    assert run is None and [d.code for d in diags] == ["RTC576"]
    assert json_problem(deep) == "is not JSON rtc can read (nested too deeply)"


def test_thousands_of_digits_are_findings_not_int_errors():
    """Python refuses int() of more than 4,300 digits (ValueError); the 10,000-input run
    found it in rtc lint (a flag value, an IPv4 octet) and the pods file."""
    from rtc.api.linting import lint_scripts
    from rtc.scripts.values import _bad_ip_reason, integer_problem
    from rtc.tables.pods import load_pods

    big = "9" * 5000
    assert integer_problem(big, 1) == (f"{big[:24]}... (5,000 characters) is out of range "
                                       "(at most 2147483647)")
    assert _bad_ip_reason(f"10.0.0.{big}") == f"10.0.0.{big} is not an IPv4 address: octet " \
        f"{big} is not 0..255"
    rep = lint_scripts([("run.sh", (f"vllm serve /m --data-parallel-size-local {big} "
                                    f"--port {big}\n").encode())])
    assert "RTC720" in {d.code for d in rep.diagnostics}
    pods = ('{"kind": "Pod", "metadata": {"name": "p", "labels": {"training.kubeflow.org/'
            f'replica-index": "{big}"}}}}, "spec": {{"containers": [{{"resources": {{"limits": '
            f'{{"huawei.com/Ascend910": "{big}"}}}}}}]}}}}')
    (pod,), _smap, _diags = load_pods(pods.encode(), "pods.json")
    assert pod.index is None


def test_a_csv_cell_over_the_field_limit_is_rtc474():
    from rtc.inventory.nvidia_smi import parse_gpu_list

    _gpus, diags = parse_gpu_list("index, name, pci.bus_id, uuid\n0, \"" + "a" * 200_000
                                  + "\", 0000:01:00.0, GPU-x\n")
    assert [(d.code, d.message) for d in diags] == [
        ("RTC474", "line 2 of the --query-gpu table cannot be read as CSV (field larger than "
                   "field limit (131072))")]


def test_a_generic_gpu_script_naming_device_2_31_is_rtc205_not_a_huge_preset():
    from rtc.api.linting import lint_scripts

    text = ("export CUDA_VISIBLE_DEVICES=2147483647,1\n"
            "vllm serve /m --tensor-parallel-size 2\n")
    rep = lint_scripts([("gpu.sh", text.encode())])
    assert rep.topology.preset.devices_per_server == 64
    assert any(d.code == "RTC205" and "device id 2147483647" in d.message
               for d in rep.diagnostics)


def test_the_number_pattern_is_linear_and_unchanged():
    """Findings are grouped by their message with numbers as '#'; a 100,000-letter hex
    word made that regular expression backtrack for 23 s. Long texts now go run by run,
    with the same result."""
    import random
    import re
    import time

    from rtc.textfmt import number_pattern

    plain = re.compile(r"(?:[0-9A-Fa-f]*:){2,}[0-9A-Fa-f:.]*|\d+(?:\.\d+)*")
    rng = random.Random(0)
    for _ in range(300):
        t = "".join(rng.choice("0123456789abcdefABCxyz:. -") for _ in range(rng.randint(0, 1500)))
        assert number_pattern(t) == plain.sub("#", t), t
    assert number_pattern("fe80::1%eth0 at 10.0.0.1, " + "x" * 1000) == "#%eth# at #, " + "x" * 1000
    start = time.process_time()
    number_pattern("a" * 100_000)
    assert time.process_time() - start < 1


def test_many_launches_of_one_port_are_capped_per_claim():
    """A fuzzed playbook ran 1,500 launches of port 8000 on one host: 1.1 million pairs,
    2.25 million RTC440 findings, 6.6 GB and 62 s. Each claim now lists at most
    MAX_PER_CLAIM overlaps and counts the rest in one more finding."""
    from rtc.api.linting import lint_scripts
    from rtc.checks.port_conflicts import MAX_PER_CLAIM

    text = "export HCCL_IF_IP=10.0.0.6\n" + "vllm serve /m --port 8000\n" * 12
    rep = lint_scripts([("run.sh", text.encode())])
    clashes = [d for d in rep.diagnostics if d.code == "RTC440"]
    # claims of launch k (lines 2..13) overlap k-1 earlier ones: 1+2+3+4+5+ 6 x (5+1) per kind
    assert MAX_PER_CLAIM == 5 and len(clashes) == 2 * (15 + 6 * 6)
    assert ("on run: job vllm@run:13's vLLM API server (--port) 8000 also overlaps 6 more "
            "claims (job vllm@run:7's vLLM API server (--port) 8000, job vllm@run:8's vLLM API "
            "server (--port) 8000, job vllm@run:9's vLLM API server (--port) 8000, ...)") \
        in [d.message for d in clashes]
