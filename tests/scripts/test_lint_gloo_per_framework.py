"""RTC532 names what uses Gloo in the job's own framework: vLLM's DP and CPU groups,
SGLang's CPU groups, torch.distributed's Gloo groups under torchrun; a node that exports
GLOO_SOCKET_IFNAME passes."""

from __future__ import annotations

from rtc.api.linting import lint_scripts


def _torchrun(gloo: bool) -> list[tuple[str, str]]:
    export = "export GLOO_SOCKET_IFNAME=ib0\n" if gloo else ""
    return [(f"node{k}.sh", "#!/bin/bash\nexport NCCL_SOCKET_IFNAME=ib0\n" + export +
             "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
             f"torchrun --nnodes 2 --nproc_per_node 8 --node_rank {k} --master_addr "
             "10.9.0.1 --master_port 29500 train.py\n") for k in range(2)]


def _sglang(gloo: bool) -> list[tuple[str, str]]:
    export = "export GLOO_SOCKET_IFNAME=eth0\n" if gloo else ""
    return [(f"n{k}.sh", "#!/bin/bash\nexport NCCL_SOCKET_IFNAME=eth0\n" + export +
             "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
             "python3 -m sglang.launch_server --model-path m --tp 16 --nnodes 2 "
             f"--dist-init-addr 10.9.0.1:5000 --node-rank {k}\n") for k in range(2)]


def _rtc532(rep):
    return [(d.severity.label, d.span.file, d.span.line, d.span.column, d.message)
            for d in rep.diagnostics if d.code == "RTC532"]


def test_rtc532_on_a_torchrun_job_names_torch_distributed_gloo_groups():
    found = _rtc532(lint_scripts(_torchrun(False), hardware="hgx-h100"))
    assert [f[:4] for f in found] == [("warning", "node0.sh", 4, 1),
                                      ("warning", "node1.sh", 4, 1)]
    for f in found:
        assert "starts without GLOO_SOCKET_IFNAME: Gloo (torch.distributed's Gloo groups, " \
            "e.g. Megatron's data-parallel CPU groups) falls back" in f[4]
        assert "vLLM" not in f[4]


def test_rtc532_on_an_sglang_job_names_sglangs_cpu_groups():
    found = _rtc532(lint_scripts(_sglang(False), hardware="hgx-h100"))
    assert [f[:4] for f in found] == [("warning", "n0.sh", 4, 1), ("warning", "n1.sh", 4, 1)]
    for f in found:
        assert "Gloo (SGLang's CPU groups of its TP / PP ranks) falls back" in f[4]
        assert "vLLM" not in f[4]


def test_torchrun_and_sglang_jobs_that_export_gloo_socket_ifname_pass():
    assert _rtc532(lint_scripts(_torchrun(True), hardware="hgx-h100")) == []
    assert _rtc532(lint_scripts(_sglang(True), hardware="hgx-h100")) == []
