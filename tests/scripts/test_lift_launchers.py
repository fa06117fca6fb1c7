"""Golden lifts of every launcher `rtc lint` reads (tests/data/launchers): the jobs, their
framework, launch mode, sizes and each node's devices, as the lift gives them.

Regenerate after an intended change: `RTC_UPDATE_GOLDEN=1 pytest tests/scripts/test_lift_launchers.py`
(then review the diff)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rtc.api.linting import lint_files
from rtc.scripts.commands import recognise
from rtc.scripts.shell import read_shell
from conftest import TESTS

DATA = TESTS / "data" / "launchers"
GOLDEN = TESTS / "golden" / "lift"
#: golden name -> (scripts, hardware)
CASES = {
    "sglang-nnodes": (["sglang-node0.sh", "sglang-node1.sh"], None),
    "sglang-pd-ascend": (["sglang-pd-prefill.sh", "sglang-pd-decode.sh"], None),
    "sglang-serve": (["sglang-serve.sh"], "hgx-h100"),
    "sglang-router": (["sglang-router.sh", "sglang-pd-prefill.sh"], None),
    "docker-vendor": (["docker-vendor.sh"], None),
    "docker-vendor-ok": (["docker-vendor-ok.sh"], None),
    "torchrun": (["torchrun.sh"], None),
    "torchrun-args-variable": (["megatron-node0.sh", "megatron-node1.sh"], None),
    "torchrun-args-array": (["megatron-array-node0.sh", "megatron-array-node1.sh"], None),
    "torch-distributed-launch": (["mindspeed-launch.sh"], None),
    "msrun": (["msrun.sh"], None),
    "ray": (["ray-head.sh", "ray-worker.sh"], None),
    "vllm-serve": (["vllm-serve.sh"], None),
}


def summary(rep) -> str:
    """The lifted jobs as text: one line per job, one per placement, and the findings'
    rule ids (sorted)."""
    lines = []
    for job in rep.topology.jobs:
        lines.append(f"job {job.name}: framework {job.framework} tp {job.tp} pp {job.pp} "
                     f"dp {job.dp} ep {'on' if job.expert_parallel else 'off'} "
                     f"world {job.world_size} port {job.port}")
        for p in job.placements:
            lines.append(f"  {p.server.name} ({p.server.host_ip}): devices "
                         f"{','.join(map(str, p.device_ids))}")
    codes = sorted(d.code for d in rep.diagnostics)
    lines.append("findings: " + (" ".join(codes) or "none"))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_lift(name):
    scripts, hardware = CASES[name]
    rep = lint_files([str(DATA / s) for s in scripts], hardware=hardware)
    got = summary(rep).replace(str(DATA) + os.sep, "")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("RTC_UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")


def _launch(line: str):
    found = recognise(read_shell("x.sh", line).commands)
    assert len(found.launches) == 1, found.unknown
    return found.launches[0]


@pytest.mark.parametrize("written, canonical", [
    ("--tp 4", "--tp-size"), ("--tensor-parallel-size 4", "--tp-size"),
    ("--tp-size 4", "--tp-size"), ("--dp 2", "--dp-size"), ("--data-parallel-size 2", "--dp-size"),
    ("--ep 4", "--ep-size"), ("--expert-parallel-size 4", "--ep-size"),
    ("--nccl-init-addr 1.2.3.4:5", "--dist-init-addr"), ("--model x", "--model-path"),
])
def test_sglang_aliases_are_read_as_their_field(written, canonical):
    la = _launch(f"python3 -m sglang.launch_server --model-path m {written}")
    assert la.kind == "sglang" and la.has(canonical)


def test_docker_options_are_recorded():
    la = _launch("docker run --network=host -v /etc/hccn.conf:/etc/hccn.conf:ro "
                 "--env-file node.env --device /dev/davinci3 --device /dev/davinci_manager "
                 "img sglang serve --model-path m")
    assert (la.kind, la.network) == ("sglang", "host")
    assert list(la.mounts) == ["/etc/hccn.conf"] and la.env_files[0].text == "node.env"
    assert [w.text for w in la.devices] == ["/dev/davinci3", "/dev/davinci_manager"]


def test_sglang_dp_over_servers_is_rtc350_in_both_front_ends():
    """One rule, two front ends: a described SGLang job and a linted SGLang launch with
    dp > 1 over two servers both give RTC350; pp over the servers gives nothing."""
    from rtc.api import compile_text

    src = (DATA.parent.parent.parent / "examples" / "sglang-gpu-h100-2node-pp2-tp8.rtc")
    text = src.read_text()
    ok = compile_text(text, "ok.rtc")
    assert "RTC350" not in {d.code for d in ok.diagnostics}
    bad = compile_text(text.replace("  pp 2\n", "  dp 2\n"), "bad.rtc")
    assert [d.code for d in bad.diagnostics if d.code == "RTC350"] == ["RTC350"]
    line = "--model-path m --tp 8 --nnodes 2 --dist-init-addr 10.9.0.1:5000"
    scripts = [(f"n{k}.sh", f"export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\nexport "
                f"HCCL_IF_IP=10.9.0.{k + 1}\npython3 -m sglang.launch_server {line} "
                f"--node-rank {k} {flags}\n") for k in range(2) for flags in ["--dp 2"]]
    from rtc.api.linting import lint_scripts

    rep = lint_scripts(scripts, hardware="hgx-h100")
    assert "RTC350" in {d.code for d in rep.diagnostics}


def test_docker_env_file_is_read_into_the_container_env(tmp_path):
    """`docker run --env-file` adds its NAME=VALUE lines (the finding points into the
    file); a file that is not there is an RTC701 note."""
    (tmp_path / "node.env").write_text("# node\nASCEND_RT_VISIBLE_DEVICES=4,5,6,7\n")
    script = tmp_path / "run.sh"
    script.write_text("docker run --device /dev/davinci4 --device /dev/davinci5 --device "
                      "/dev/davinci6 --device /dev/davinci7 --device /dev/davinci_manager "
                      "--env-file node.env img vllm serve /m --tensor-parallel-size 4\n")
    rep = lint_files([str(script)])
    bad = [d for d in rep.diagnostics if d.code == "RTC431"]
    assert bad and bad[0].span.file.endswith("node.env") and bad[0].span.line == 2
    (tmp_path / "node.env").write_text("ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n")
    assert lint_files([str(script)]).ok
    (tmp_path / "node.env").unlink()
    rep = lint_files([str(script)])
    assert [d.code for d in rep.diagnostics] == ["RTC701"]


def test_sglang_dist_init_port_is_planned_like_a_master_port():
    """--dist-init-addr's port on node rank 0 is in the port plan: the same port as the
    head's --port is RTC440 at the flag; distinct ports are clean."""
    node = [(DATA / f"sglang-node{k}.sh").read_text() for k in range(2)]
    same = [t.replace("10.0.0.1:5000", "10.0.0.1:30000") for t in node]
    from rtc.api.linting import lint_scripts

    rep = lint_scripts([(f"n{k}.sh", t) for k, t in enumerate(same)])
    clash = [d for d in rep.diagnostics if d.code == "RTC440"]
    assert len(clash) == 1 and "30000" in clash[0].message
    assert "RTC440" not in {d.code for d in lint_scripts(
        [(f"n{k}.sh", t) for k, t in enumerate(node)]).diagnostics}


@pytest.mark.parametrize("edit, why", [
    (("8000 8995", "8000 8998"), "bootstrap-port 8995"),
    (("http://10.1.0.2:8000", "http://10.1.0.2:30000"), "listens on --port 8000"),
])
def test_router_targets_are_the_servers_ports(edit, why):
    """RTC744: the router's --prefill URL + bootstrap port and --decode URL against the
    given servers; the sample router (their real ports) is clean."""
    from rtc.api.linting import lint_scripts

    texts = {n: (DATA / n).read_text() for n in ("sglang-router.sh", "sglang-pd-prefill.sh",
                                                 "sglang-pd-decode.sh")}
    clean = lint_scripts(list(texts.items()))
    assert "RTC744" not in {d.code for d in clean.diagnostics}
    texts["sglang-router.sh"] = texts["sglang-router.sh"].replace(*edit)
    bad = [d for d in lint_scripts(list(texts.items())).diagnostics if d.code == "RTC744"]
    assert len(bad) == 1 and why in bad[0].message and bad[0].span.file == "sglang-router.sh"


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ODD = st.one_of(st.integers(-5, 20).map(str), st.sampled_from(
    ["99999999999999999999", "abc", "１６", "", "1e3", "0x10", "-0", "8.0"]))


@settings(max_examples=40, deadline=None)
@given(tp=_ODD, pp=_ODD, dp=_ODD, nnodes=_ODD, rank=_ODD, port=_ODD, base=_ODD)
def test_fuzzed_sglang_values_never_raise_or_hang(tp, pp, dp, nnodes, rank, port, base):
    """Any value of SGLang's integer flags lints to findings (RTC745 for the bad ones),
    never a traceback and never a lift sized by a 20-digit number."""
    from rtc.api.linting import lint_scripts

    line = (f"python3 -m sglang.launch_server --model-path m --tp '{tp}' --pp-size '{pp}' "
            f"--dp '{dp}' --nnodes '{nnodes}' --node-rank '{rank}' --port '{port}' "
            f"--base-gpu-id '{base}' --dist-init-addr 10.0.0.1:5000\n")
    rep = lint_scripts([("n.sh", "export HCCL_IF_IP=10.0.0.1\n" + line)])
    assert rep.topology is not None
    assert all(len(p.device_ids) <= 65536 for j in rep.topology.jobs for p in j.placements)
