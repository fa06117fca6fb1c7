"""Reader and rule changes of the second round of the public-report corpus
(tests/lint_cases/public, issue 33): launches inside ``singularity exec`` / ``apptainer
exec``, shell line continuations inside double quotes, and an SGLang ``--dist-init-addr``
that names each node's own host (``$(hostname)``)."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.scripts.nodes import Unit, read_unit


def _launches(text: str):
    unit = Unit("x.sh", text, 1, "x")
    read_unit(unit)
    return unit.found.launches


def test_singularity_exec_runs_the_command_after_the_image():
    """`singularity exec [opts] IMAGE CMD`: CMD is the launch; it sees the host's
    environment plus --env A=b (Apptainer passes the host's environment on), and none of
    the host's with --cleanenv."""
    (la,) = _launches("export GLOO_SOCKET_IFNAME=ib0\n"
                      "singularity exec --nv --bind /a:/b --env VLLM_HOST_IP=10.0.0.5 "
                      "/img/v.sif vllm serve /m --tensor-parallel-size 8\n")
    assert (la.kind, la.value("--tensor-parallel-size")) == ("vllm", "8")
    assert (la.env["GLOO_SOCKET_IFNAME"].value, la.env["VLLM_HOST_IP"].value) == \
        ("ib0", "10.0.0.5")
    (clean,) = _launches("export GLOO_SOCKET_IFNAME=ib0\n"
                         "apptainer exec --cleanenv img.sif python3 -m sglang.launch_server "
                         "--model-path /m --tp 8\n")
    assert clean.kind == "sglang" and "GLOO_SOCKET_IFNAME" not in clean.env
    assert _launches("singularity exec img.sif\nsingularity pull x.sif docker://a/b\n") == []


def test_backslash_newline_inside_double_quotes_is_a_continuation():
    """bash removes backslash-newline inside "..." as well as outside: the string of
    `bash -c "a \\<newline> --flag"` is one command line, its flags read."""
    (la,) = _launches('bash -c "python3 -m sglang.launch_server \\\n  --model-path /m \\\n'
                      '  --tp 16 \\\n  --nnodes 2"\n')
    assert (la.kind, la.value("--tp-size"), la.value("--nnodes")) == ("sglang", "16", "2")


NODE = """export GLOO_SOCKET_IFNAME=ib0
python3 -m sglang.launch_server --model-path /m --tp 16 --nnodes 2 --node-rank RANK \\
  --dist-init-addr ADDR:5000 --host 0.0.0.0 --port 40000
"""


def _lint(addr0: str, addr1: str):
    files = [("node0.sh", NODE.replace("RANK", "0").replace("ADDR", addr0)),
             ("node1.sh", NODE.replace("RANK", "1").replace("ADDR", addr1))]
    return lint_scripts(files, hardware="hgx-h100").diagnostics


def test_dist_init_addr_of_each_nodes_own_hostname_is_rtc741():
    """The same text `$(hostname):5000` on both nodes is two addresses: node rank 1 dials
    itself. Failing input: RTC741 at node1; passing input: node rank 0's host name on both."""
    found = [d for d in _lint("$(hostname)", "$(hostname)") if d.code == "RTC741"]
    assert len(found) == 1 and found[0].subject == "node1"
    assert "its own host name" in found[0].message
    for own in ("`hostname`", "$HOSTNAME"):
        assert any(d.code == "RTC741" for d in _lint(own, own))
    assert not any(d.code == "RTC741" for d in _lint("gpu-01", "gpu-01"))


SG = """export GLOO_SOCKET_IFNAME=IFACE
python -m sglang.launch_server --model-path /m --tp-size 32 --nnodes 2 --node-rank RANK \\
  --dist-init-addr 10.20.0.11:PORT --host HOST --port 8000
"""


def _sg(iface: str = "eno1", port: str = "5000"):
    files = [(f"node{k}.sh", SG.replace("IFACE", iface).replace("PORT", port)
              .replace("RANK", str(k)).replace("HOST", f"10.20.0.1{k + 1}")) for k in (0, 1)]
    return lint_scripts(files, hardware="atlas-800-a3").diagnostics


def test_dist_init_addr_placeholder_port_is_rtc721():
    """SGLang --dist-init-addr HOST:PORT: a placeholder port (`your port`, as the example
    of SGLang PR 26069 writes it) is RTC721, a port out of range RTC720; a real one
    passes."""
    found = [d for d in _sg(port="your port") if d.code == "RTC721"]
    assert found and "is a placeholder" in found[0].message
    assert any(d.code == "RTC720" and "port" in d.message for d in _sg(port="70000"))
    assert not any(d.code in ("RTC720", "RTC721") for d in _sg())


def test_gloo_socket_ifname_loopback_is_rtc532():
    """GLOO_SOCKET_IFNAME=lo on the nodes of a two-node job: RTC532 at each node; a NIC
    name passes."""
    found = [d for d in _sg(iface="lo") if d.code == "RTC532"]
    assert len(found) == 2 and "loopback" in found[0].message
    assert not any(d.code == "RTC532" for d in _sg())


def test_vllm_nnodes_without_master_addr_is_rtc724():
    """`vllm serve --nnodes 2` without --master-addr: vLLM's default 127.0.0.1 (RTC724,
    at --nnodes); with --master-addr, or on one node, nothing."""
    line = "vllm serve /m --tensor-parallel-size 8 --nnodes NN --node-rank 0 EXTRA\n"
    def lint(nn, extra=""):
        text = "export GLOO_SOCKET_IFNAME=eth0\n" + line.replace("NN", nn).replace("EXTRA", extra)
        return [d for d in lint_scripts([("n0.sh", text)], hardware="hgx-h100").diagnostics
                if d.code == "RTC724"]
    (found,) = lint("2")
    assert "127.0.0.1" in found.message and found.span.line == 2
    assert lint("2", "--master-addr 10.0.0.1") == [] and lint("1") == []


POD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: main
        command: ["vllm", "serve", "/m"]
        args: ["--port", "8000", "--tensor-parallel-size", "TP"]
        resources: {limits: {nvidia.com/gpu: "GPUS"}}
"""


def test_pod_with_more_gpus_than_its_launch_uses_is_rtc799():
    """Two GPUs for a TP 1 launch: an RTC799 note naming the idle count; TP 2 on two GPUs
    passes; fewer GPUs stays RTC794."""
    def codes(tp, gpus):
        text = POD.replace("TP", tp).replace("GPUS", gpus)
        return {d.code: d for d in lint_scripts([("v.yaml", text)],
                                                hardware="hgx-h100").diagnostics}
    found = codes("1", "2")
    assert "RTC799" in found and "1 sit idle" in found["RTC799"].message
    assert found["RTC799"].severity.name == "NOTE"
    assert "RTC799" not in codes("2", "2") and "RTC794" in codes("4", "2")


def test_docker_entrypoint_takes_the_words_after_the_image():
    """`docker run --entrypoint /bin/bash IMAGE -c "ray start ..."` is bash -c: the ray start
    is read, with the -e variables."""
    (la,) = _launches('docker run --entrypoint /bin/bash -e VLLM_HOST_IP=10.0.0.2 img '
                      '-c "ray start --block --address=10.0.0.1:6379"\n')
    assert (la.kind, la.value("--address"), la.env["VLLM_HOST_IP"].value) == \
        ("ray", "10.0.0.1:6379", "10.0.0.2")


def test_ray_node_with_loopback_addresses_is_rtc721():
    """`ray start --address=127.0.0.1:6379` with VLLM_HOST_IP=127.0.0.1 (vLLM issue 19543):
    RTC721 for both; the head's and the node's own addresses pass."""
    def found(head, own):
        text = (f"export GLOO_SOCKET_IFNAME=eth0\nexport VLLM_HOST_IP={own}\n"
                f"ray start --block --address={head}:6379\n")
        return [d.message for d in lint_scripts([("w.sh", text)], hardware="hgx-h100")
                .diagnostics if d.code == "RTC721"]
    got = found("127.0.0.1", "127.0.0.1")
    assert len(got) == 2 and all("loopback" in m for m in got)
    assert found("localhost", "10.0.0.2") and not found("10.0.0.1", "10.0.0.2")


def test_local_dp_size_above_dp_size_is_rtc720():
    """A headless worker with --data-parallel-size-local 2 and no --data-parallel-size
    (vLLM's default 1; the example vLLM issue 18553 followed): RTC720; with the job's
    DP size, nothing."""
    def found(extra):
        text = ("export GLOO_SOCKET_IFNAME=eth0\nvllm serve /m --headless "
                f"--data-parallel-size-local 2 --data-parallel-start-rank 2 {extra}"
                "--data-parallel-address 10.0.0.1\n")
        return [d for d in lint_scripts([("n1.sh", text)], hardware="hgx-h100").diagnostics
                if d.code == "RTC720"]
    (d,) = found("")
    assert "larger than --data-parallel-size 1 (the default" in d.message
    assert found("--data-parallel-size 4 ") == []
