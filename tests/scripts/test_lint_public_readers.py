"""Reader changes the public-report corpus asked for (tests/lint_cases/public, issue 33):
the Ray start-up helper of vLLM's and LWS's multi-node examples, the GPUs a Ray node in a
pod offers, and SGLang router targets on a host that runs several servers."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.scripts.commands import recognise
from rtc.scripts.shell import read_shell


def _launches(text: str):
    run = read_shell("x.sh", text)
    return recognise(run.commands).launches


def test_multi_node_serving_helper_is_ray_start():
    """vLLM examples/online_serving/multi-node-serving.sh (LWS ray_init.sh): `leader` is
    `ray start --head --port=6379`, `worker --ray_address=A` is `ray start --address=A:6379
    --block`; --ray_port changes both; other words go to ray start."""
    (lead,) = _launches("bash /vllm-workspace/examples/online_serving/multi-node-serving.sh "
                        "leader --ray_cluster_size=2 --num-gpus=8\n")
    assert (lead.kind, lead.has("--head"), lead.value("--port"), lead.value("--num-gpus")) \
        == ("ray", True, "6379", "8")
    (work,) = _launches("/lws/code/ray_init.sh worker --ray_address=vllm-0.vllm --ray_port=6380\n")
    assert (work.kind, work.value("--address"), work.has("--block")) == \
        ("ray", "vllm-0.vllm:6380", True)
    assert _launches("ray_init.sh status\n") == []


LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: qwen}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: leader
          env: [{name: GLOO_SOCKET_IFNAME, value: eth0}]
          command: ["sh", "-c"]
          args: ["bash multi-node-serving.sh leader --ray_cluster_size=2; vllm serve /m --tensor-parallel-size 2 --distributed-executor-backend ray"]
          resources: {limits: {nvidia.com/gpu: "GPUS"}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          env: [{name: GLOO_SOCKET_IFNAME, value: eth0}]
          command: ["sh", "-c"]
          args: ["bash multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"]
          resources: {limits: {nvidia.com/gpu: "GPUS"}}
"""


def test_ray_node_in_a_pod_offers_the_gpus_its_container_is_given():
    """TP 2 over two one-GPU pods through Ray: each pod runs one rank (no RTC794/RTC210,
    which the TP size taken as every node's share gave); `ray start --num-gpus` still wins
    over the pod's count."""
    rep = lint_scripts([("lws.yaml", LWS.replace("GPUS", "1"))], hardware="hgx-h100")
    codes = {d.code for d in rep.diagnostics}
    assert not codes & {"RTC794", "RTC210"}, codes
    (job,) = rep.topology.jobs
    assert [len(p.device_ids) for p in job.placements] == [1, 1]
    two = LWS.replace("GPUS", "1").replace("--ray_cluster_size=2;",
                                           "--ray_cluster_size=2 --num-gpus=2;")
    rep = lint_scripts([("lws.yaml", two)], hardware="hgx-h100")
    assert "RTC794" in {d.code for d in rep.diagnostics}


def test_router_targets_on_one_host_with_two_servers():
    """Prefill and decode on one host (--host 10.1.0.5, ports 30000/30001): the router's
    bootstrap port is compared with the prefill at the target's port (RTC744), and a
    target port no server there listens on is RTC744 too; the right ports are clean."""
    prefill = ("python -m sglang.launch_server --model-path /m --disaggregation-mode prefill "
               "--disaggregation-bootstrap-port 9000 --host 10.1.0.5 --port 30000 --tp 1\n")
    decode = ("python -m sglang.launch_server --model-path /m --disaggregation-mode decode "
              "--host 10.1.0.5 --port 30001 --tp 1\n")
    router = ("python -m sglang_router.launch_router --pd-disaggregation "
              "--prefill http://10.1.0.5:30000 BOOT --decode http://10.1.0.5:DEC\n")

    def found(boot, dec):
        texts = [("p.sh", prefill), ("d.sh", decode),
                 ("r.sh", router.replace("BOOT", boot).replace("DEC", dec))]
        return [d for d in lint_scripts(texts, hardware="hgx-h100").diagnostics
                if d.code == "RTC744"]

    assert found("9000", "30001") == []
    (bad,) = found("8998", "30001")
    assert "serves --disaggregation-bootstrap-port 9000" in bad.message
    assert bad.span.file == "r.sh" and bad.related[0].span.file == "p.sh"
    (port,) = found("9000", "30002")
    assert "listens on --port 30000, 30001" in port.message


def test_eplb_flags_must_agree_across_nodes():
    """vLLM issue 26187 / PR 26218: EPLB is part of the parallel-config hash; a leader with
    --eplb-log-balancedness and a worker without it is RTC722 at the worker's launch, with
    both values; the same flags on both nodes are clean."""
    head = ("export VLLM_HOST_IP=10.2.0.1\nexport GLOO_SOCKET_IFNAME=eth0\n"
            "vllm serve m --data-parallel-size 4 --data-parallel-size-local 2 "
            "--data-parallel-address 10.2.0.1 --enable-expert-parallel --enable-eplb "
            "--eplb-log-balancedness\n")
    worker = ("export VLLM_HOST_IP=10.2.0.2\nexport GLOO_SOCKET_IFNAME=eth0\n"
              "vllm serve m --headless --data-parallel-size 4 --data-parallel-size-local 2 "
              "--data-parallel-start-rank 2 --data-parallel-address 10.2.0.1 "
              "--enable-expert-parallel --enable-eplb EXTRA\n")

    def disagree(extra):
        texts = [("head.sh", head), ("worker.sh", worker.replace("EXTRA", extra))]
        return [d for d in lint_scripts(texts, hardware="hgx-h100").diagnostics
                if d.code == "RTC722"]

    (d,) = disagree("")
    assert d.span.file == "worker.sh" and "--eplb-log-balancedness" in d.message
    assert disagree("--eplb-log-balancedness") == []


def test_ray_on_npus_needs_the_noset_variable():
    """RTC710 (vllm-ascend issues 167, 168): a Ray node of an NPU job without
    RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 is an error at its `ray start`; with
    the variable on both nodes, or on GPU hardware, nothing."""
    head = ("export HCCL_IF_IP=10.0.0.1\nexport GLOO_SOCKET_IFNAME=eth0\nNOSET"
            "ray start --head --num-gpus=8\n"
            "vllm serve /m -tp 8 -pp 2 --distributed-executor-backend ray\n")
    worker = ("export HCCL_IF_IP=10.0.0.2\nexport GLOO_SOCKET_IFNAME=eth0\nNOSET"
              "ray start --address=10.0.0.1:6379 --num-gpus=8 --block\n")
    noset = "export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1\n"

    def found(h, w, hardware="atlas-800t-a2"):
        texts = [("head.sh", head.replace("NOSET", h)), ("worker.sh", worker.replace("NOSET", w))]
        return [(d.code, d.span.file, d.span.line) for d in
                lint_scripts(texts, hardware=hardware).diagnostics if d.code == "RTC710"]

    assert found("", noset) == [("RTC710", "head.sh", 3)]
    assert found(noset, "") == [("RTC710", "worker.sh", 3)]
    assert found(noset, noset) == []
    assert found("", "", "hgx-h100") == []


def test_pd_instances_all_producers_is_rtc711_at_the_decode():
    """RTC711 (vllm-project/recipes PR 385): prefill and decode both kv_producer is an error
    at the decode script's --kv-transfer-config; producer + consumer (or kv_both) is clean."""
    line = ("export VLLM_HOST_IP=10.0.0.{n}\nexport CUDA_VISIBLE_DEVICES=0\n"
            "vllm serve m --port 8000 --kv-transfer-config "
            "'{{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"{role}\"}}'\n")

    def found(p_role, d_role):
        texts = [("prefill.sh", line.format(n=1, role=p_role)),
                 ("decode.sh", line.format(n=2, role=d_role))]
        return [(d.code, d.span.file) for d in lint_scripts(texts).diagnostics
                if d.code == "RTC711"]

    assert found("kv_producer", "kv_producer") == [("RTC711", "decode.sh")]
    assert found("kv_consumer", "kv_consumer") == [("RTC711", "prefill.sh")]
    assert found("kv_producer", "kv_consumer") == []
    assert found("kv_both", "kv_both") == []


def _pd_nixl(p_env: str, d_env: str):
    line = ("export VLLM_HOST_IP=10.0.0.{n}\nexport GLOO_SOCKET_IFNAME=eth0\n{env}"
            "vllm serve m --port 8{n}00 --data-parallel-size 8 --enable-expert-parallel "
            "--kv-transfer-config '{{\"kv_connector\": \"NixlConnector\", "
            "\"kv_role\": \"kv_both\"}}'\n")
    texts = [("prefill.sh", line.format(n=1, env=p_env)), ("decode.sh", line.format(n=2, env=d_env))]
    return lint_scripts(texts, hardware="hgx-h200")


def test_nixl_side_channel_host_on_two_hosts():
    """RTC712 (vLLM issue 27083): NixlConnector instances on two hosts, one without
    VLLM_NIXL_SIDE_CHANNEL_HOST (or with localhost) is an error at its launch; both nodes
    with their own IP are clean."""
    own = "export VLLM_NIXL_SIDE_CHANNEL_HOST=10.0.0.{}\n"
    found = [(d.code, d.span.file) for d in _pd_nixl(own.format(1), "").diagnostics
             if d.code == "RTC712"]
    assert found == [("RTC712", "decode.sh")]
    local = "export VLLM_NIXL_SIDE_CHANNEL_HOST=localhost\n"
    assert [d.span.file for d in _pd_nixl(local, own.format(2)).diagnostics
            if d.code == "RTC712"] == ["prefill.sh"]
    assert [d for d in _pd_nixl(own.format(1), own.format(2)).diagnostics
            if d.code == "RTC712"] == []


def test_two_self_contained_dp_servers_are_two_jobs():
    """Two `vllm serve --data-parallel-size 8` without --data-parallel-address on two
    nodes (a prefill and a decode instance) run all their ranks on their own node: two
    jobs of 8 devices each, not one DP group of 16 that no node heads."""
    rep = _pd_nixl("", "")
    assert sorted(len(j.placements) for j in rep.topology.jobs) == [1, 1]
    assert not {"RTC210", "RTC506"} & {d.code for d in rep.diagnostics}


def test_vllm_node_without_node_rank_is_rank_zero():
    """vLLM's ParallelConfig.node_rank defaults to 0 (vllm/config/parallel.py): a --nnodes 2
    worker that leaves --node-rank out collides with the master (RTC723 at the worker,
    saying the flag is missing); numbering both nodes is clean."""
    def ranks(head_rank, worker_rank):
        texts = [(f"{n}.sh", f"export VLLM_HOST_IP=10.3.0.{k}\nexport GLOO_SOCKET_IFNAME=eth0\n"
                  f"vllm serve m {extra}--tensor-parallel-size 2 --nnodes 2 {r}"
                  "--master-addr 10.3.0.1 --master-port 29501\n")
                 for n, k, extra, r in (("head", 1, "", head_rank),
                                        ("worker", 2, "--headless ", worker_rank))]
        return [d for d in lint_scripts(texts, hardware="gpu-vm-1").diagnostics
                if d.code == "RTC723"]

    (d,) = ranks("", "")
    assert d.span.file == "worker.sh" and "without --node-rank" in d.message
    (d,) = ranks("--node-rank 0 ", "")
    assert "worker without --node-rank" in d.message
    assert ranks("", "--node-rank 1 ") == []
    assert ranks("--node-rank 0 ", "--node-rank 1 ") == []


def test_ray_node_without_num_gpus_offers_at_most_its_hardware():
    """Without --num-gpus Ray counts the node's own GPUs (ray nvidia_gpu.py): TP 16 over a
    Ray head and worker of eight GPUs each places eight on each, no RTC205/RTC210."""
    head = ("export VLLM_HOST_IP=10.4.0.1\nexport GLOO_SOCKET_IFNAME=eth0\n"
            "ray start --head --port 6379\n"
            "vllm serve m --tensor-parallel-size 16 --distributed-executor-backend ray\n")
    worker = ("export VLLM_HOST_IP=10.4.0.2\nexport GLOO_SOCKET_IFNAME=eth0\n"
              "ray start --address 10.4.0.1:6379 --block\n")
    codes = {d.code for d in lint_scripts([("head.sh", head), ("worker.sh", worker)],
                                          hardware="hgx-h100").diagnostics}
    assert not codes & {"RTC205", "RTC210"}, codes
    # without the Ray backend vLLM keeps all 16 ranks on the head: eight devices too many
    plain = head.replace(" --distributed-executor-backend ray", "")
    codes = {d.code for d in lint_scripts([("head.sh", plain), ("worker.sh", worker)],
                                          hardware="hgx-h100", vllm_version="0.11.2").diagnostics}
    assert "RTC205" in codes


VLLM_IMAGE_POD = """apiVersion: v1
kind: Pod
metadata: {name: granite}
spec:
  containers:
  - name: vllm
    image: IMAGE
    args: ARGS
    resources:
      limits: {nvidia.com/gpu: "1"}
"""


def test_vllm_openai_image_without_command_runs_vllm_serve():
    """vLLM's OpenAI image has the server as its ENTRYPOINT (docker/Dockerfile, stage
    vllm-openai): a container with only `args` is a vllm serve launch rtc lints (TP 2 on
    one GPU is RTC794); other images, or args that name a program, stay unread/as given."""
    def codes(image, args):
        text = VLLM_IMAGE_POD.replace("IMAGE", image).replace("ARGS", args)
        return {d.code for d in lint_scripts([("pod.yaml", text)],
                                             hardware="hgx-h100").diagnostics}
    tp2 = '["--model", "m", "--tensor-parallel-size", "2"]'
    assert "RTC794" in codes("vllm/vllm-openai:v0.8.5", tp2)
    assert "RTC794" in codes("registry.local/mirror/vllm-openai@sha256:abc", tp2)
    assert "RTC794" not in codes("busybox:1", tp2)
    assert "RTC794" in codes("vllm/vllm-openai:v0.8.5",
                             '["vllm", "serve", "m", "--tensor-parallel-size", "2"]')


def test_ascend_1980_is_an_accelerator_resource():
    """huawei.com/ascend-1980 (Atlas A3 on CCE's device plugin; Kthena issue 576) is an
    NPU resource: a request below its limit is RTC795."""
    pod = VLLM_IMAGE_POD.replace("IMAGE", "quay.io/ascend/vllm-ascend:v0.11.0rc1-a3").replace(
        "ARGS", '["vllm serve m --tensor-parallel-size 4"]').replace(
        '      limits: {nvidia.com/gpu: "1"}',
        '      limits: {huawei.com/ascend-1980: "8"}\n      requests: {huawei.com/ascend-1980: "REQ"}'
    ).replace("    args:", '    command: ["sh", "-c"]\n    args:')
    def codes(req):
        return {d.code for d in lint_scripts([("pod.yaml", pod.replace("REQ", req))],
                                             hardware="atlas-800-a3").diagnostics}
    assert "RTC795" in codes("6")
    assert "RTC795" not in codes("8")
