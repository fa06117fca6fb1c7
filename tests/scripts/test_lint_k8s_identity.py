"""`rtc lint` of Kubernetes manifests: the identity each controller gives its pods (names,
HOSTNAME, labels, downward API), the addresses pods name, and JSON manifests."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.diagnostics import Severity

#: An SGLang server over the two pods of a StatefulSet, each taking its node rank from the
#: ordinal at the end of its HOSTNAME (the shape of a user's manifest; our own text).
STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: sglang
spec:
  serviceName: sglang
  replicas: 2
  selector:
    matchLabels: {app: sglang}
  template:
    metadata:
      labels: {app: sglang}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:latest
        command: ["bash", "-c"]
        args:
        - |
          RANK=${HOSTNAME##*-}
          python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 \\
            --tp 16 --nnodes 2 --node-rank $RANK \\
            --dist-init-addr sglang-0.sglang:5000 --trust-remote-code \\
            --host 0.0.0.0 --port 30000
        resources:
          limits: {nvidia.com/gpu: "8"}
"""


def _codes(rep, severity=None):
    return [d.code for d in rep.diagnostics if severity is None or d.severity is severity]


def test_statefulset_pods_are_lifted_one_per_replica_with_their_hostname():
    rep = lint_scripts([("sts.yaml", STS)], hardware="hgx-h100")
    assert _codes(rep, Severity.ERROR) == []
    assert "RTC461" not in _codes(rep) and "RTC745" not in _codes(rep)
    (job,) = rep.topology.jobs
    assert (job.framework, job.tp, len(job.placements)) == ("sglang", 16, 2)
    assert [p.server.name for p in job.placements] == ["sglang-0", "sglang-1"]
    assert [len(p.device_ids) for p in job.placements] == [8, 8]


def test_statefulset_with_one_rank_written_out_is_rtc740():
    bad = STS.replace("--node-rank $RANK", "--node-rank 0")
    rep = lint_scripts([("sts.yaml", bad)], hardware="hgx-h100")
    assert _codes(rep, Severity.ERROR) == ["RTC740"]
    (d,) = [d for d in rep.diagnostics if d.code == "RTC740"]
    assert (d.span.line, "sglang-1 and sglang-0 both give --node-rank 0") == \
        (22, d.message.split(": ", 1)[1])


def test_statefulset_ordinals_start_and_the_pod_index_label_by_downward_api():
    text = STS.replace("  replicas: 2\n", "  replicas: 2\n  ordinals: {start: 1}\n") \
        .replace("RANK=${HOSTNAME##*-}", "RANK=$((IDX - 1))") \
        .replace("sglang-0.sglang:5000", "sglang-1.sglang:5000") \
        .replace("        resources:", "        env:\n        - name: IDX\n          valueFrom:\n"
                 "            fieldRef: {fieldPath: \"metadata.labels['apps.kubernetes.io/"
                 "pod-index']\"}\n        resources:")
    rep = lint_scripts([("sts.yaml", text)], hardware="hgx-h100")
    assert _codes(rep, Severity.ERROR) == []
    (job,) = rep.topology.jobs
    assert [p.server.name for p in job.placements] == ["sglang-1", "sglang-2"]


def test_one_replica_of_two_nodes_leaves_the_other_node_missing():
    rep = lint_scripts([("sts.yaml", STS.replace("replicas: 2", "replicas: 1"))],
                       hardware="hgx-h100")
    assert "RTC461" in _codes(rep)


def test_a_deployment_pod_name_is_not_known_before_it_runs():
    text = STS.replace("StatefulSet", "Deployment").replace("  serviceName: sglang\n", "") \
        .replace("RANK=${HOSTNAME##*-}", "echo start").replace("$RANK", "$(POD)") \
        .replace("        resources:", "        env:\n        - name: POD\n          valueFrom:\n"
                 "            fieldRef: {fieldPath: metadata.name}\n        resources:")
    rep = lint_scripts([("dep.yaml", text)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC745"]
    assert d.message.startswith("sglang-0: --node-rank '$(metadata.name)' is not a whole")


def test_shell_trims_prefixes_and_suffixes_like_bash():
    from rtc.scripts.shell import read_shell

    text = ("H=sglang-decode-12\nA=${H##*-}\nB=${H#*-}\nC=${H%-*}\nD=${H%%-*}\n"
            "echo $A $B $C $D ${NOPE##*-}\n")
    run = read_shell("t.sh", text, None)
    (cmd,) = [c for c in run.commands if c.words and c.words[0].text == "echo"]
    assert [w.text for w in cmd.words[1:]] == ["12", "decode-12", "sglang-decode", "sglang",
                                               "${NOPE##*-}"]


#: A vLLM DP deployment over one LWS group of two Ascend pods, serving on 8080, with a
#: Service for the leader selecting it by the label the LWS controller sets
#: (leaderworkerset.sigs.k8s.io/name) and the template's own `role: leader`.
LWS_SVC = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm-ds
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata:
        labels: {role: leader}
      spec:
        containers:
        - name: vllm-leader
          image: quay.io/ascend/vllm-ascend:v0.11.0
          command: ["sh", "-c"]
          args:
          - |
            vllm serve /models/DeepSeek-V3 --port 8080 \\
              --data-parallel-size 2 --data-parallel-size-local 1 \\
              --data-parallel-address $(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13389 \\
              --tensor-parallel-size 8 --enable-expert-parallel
          resources:
            limits: {huawei.com/Ascend910: "8"}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: quay.io/ascend/vllm-ascend:v0.11.0
          command: ["sh", "-c"]
          args:
          - |
            vllm serve /models/DeepSeek-V3 --port 8080 --headless \\
              --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-start-rank 1 \\
              --data-parallel-address $(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13389 \\
              --tensor-parallel-size 8 --enable-expert-parallel
          resources:
            limits: {huawei.com/Ascend910: "8"}
---
apiVersion: v1
kind: Service
metadata:
  name: vllm-ds-leader
spec:
  selector:
    leaderworkerset.sigs.k8s.io/name: vllm-ds
    role: leader
  ports:
  - port: 8080
    targetPort: 8000
"""


def test_service_selecting_lws_labels_with_a_wrong_target_port_is_rtc797():
    rep = lint_scripts([("lws.yaml", LWS_SVC)])
    (d,) = [d for d in rep.diagnostics if d.code == "RTC797"]
    assert d.message == ("Service vllm-ds-leader sends to port 8000 of pod "
                         "vllm-ds-0.vllm-ds.default, whose engine serves 8080")
    assert d.span.line == LWS_SVC.splitlines().index("    targetPort: 8000") + 1


def test_service_selecting_lws_labels_with_the_right_target_port_is_clean():
    ok = LWS_SVC.replace("targetPort: 8000", "targetPort: 8080")
    rep = lint_scripts([("lws.yaml", ok)])
    assert "RTC797" not in _codes(rep)
    assert _codes(rep, Severity.ERROR) == []


def test_lws_pods_carry_the_controllers_labels():
    from rtc.scripts import manifests

    m = manifests.Manifests()
    manifests.read("lws.yaml", LWS_SVC, m)
    got = [(p.name, {k.rpartition("/")[2]: v for k, v in p.labels.items()}) for p in m.pods]
    assert got == [
        ("vllm-ds-0.vllm-ds.default", {"role": "leader", "name": "vllm-ds", "group-index": "0",
                                       "worker-index": "0", "group-key": "default/vllm-ds-0"}),
        ("vllm-ds-0-1.vllm-ds.default", {"name": "vllm-ds", "group-index": "0",
                                         "worker-index": "1", "group-key": "default/vllm-ds-0"})]


def test_worker_selected_by_worker_index_label():
    sel = LWS_SVC.replace("    role: leader\n", "    leaderworkerset.sigs.k8s.io/worker-index: '1'\n")
    rep = lint_scripts([("lws.yaml", sel)])
    (d,) = [d for d in rep.diagnostics if d.code == "RTC797"]
    assert "pod vllm-ds-0-1.vllm-ds.default" in d.message


def _as_json(yaml_text: str, indent="  ") -> str:
    import json

    import yaml

    docs = list(yaml.safe_load_all(yaml_text))
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=indent) + "\n"


def test_a_json_leaderworkerset_is_read_as_a_manifest_with_its_tp_mismatch():
    head, _, workers = LWS_SVC.partition("    workerTemplate:")
    text = _as_json(head + "    workerTemplate:" + workers.replace("--tensor-parallel-size 8",
                                                                     "--tensor-parallel-size 4"))
    rep = lint_scripts([("lws.json", text)])
    assert "RTC703" not in _codes(rep) and "RTC702" not in _codes(rep)
    (d,) = [d for d in rep.diagnostics if d.code == "RTC722"]
    worker_line = next(k for k, line in enumerate(text.splitlines(), 1) if "--headless" in line)
    assert (d.span.line, d.span.column) == (worker_line, text.splitlines()[worker_line - 1]
                                            .index('"vllm serve') + 1)


def test_a_consistent_json_leaderworkerset_is_clean_even_tab_indented():
    for indent in ("  ", "\t"):
        rep = lint_scripts([("lws.json", _as_json(LWS_SVC.replace("targetPort: 8000",
                                                                   "targetPort: 8080"), indent))])
        assert _codes(rep, Severity.ERROR) == []
        (job,) = rep.topology.jobs
        assert (job.framework, job.tp, job.dp) == ("vllm", 8, 2)


def test_json_without_a_file_suffix_is_recognised_by_its_first_character():
    rep = lint_scripts([("<stdin>", _as_json(LWS_SVC))])
    assert "RTC797" in _codes(rep)


def test_deep_json_that_is_no_manifest_is_one_short_error():
    for text in ("[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000):
        rep = lint_scripts([("deep.json", text)])
        assert _codes(rep) == ["RTC700"]
        assert rep.diagnostics[0].message == ("deep.json is JSON but not a Kubernetes object (no "
                                              "apiVersion and kind at its top), nor a shell "
                                              "script: not linted")


def test_a_shell_brace_group_is_still_shell():
    rep = lint_scripts([("run.sh", "{ vllm serve m --tensor-parallel-size 2; }\n")])
    (job,) = rep.topology.jobs
    assert job.tp == 2


#: A Volcano Job of a master and a worker task running torchrun over 2 Ascend pods; the
#: worker names the master by its DNS name (<job>-<task>-<index>.<job>, svc plugin).
VC = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mindspeed-pretrain
spec:
  minAvailable: 2
  plugins: {svc: [], env: []}
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        containers:
        - name: train
          image: ascendhub/mindspeed:latest
          command: ["/bin/bash", "-c"]
          args:
          - torchrun --nproc_per_node 8 --nnodes 2 --node_rank 0 --master_addr mindspeed-pretrain-master-0.mindspeed-pretrain --master_port 6000 pretrain_gpt.py --tensor-model-parallel-size 8
          resources:
            limits: {huawei.com/Ascend910: "8"}
        volumes:
        - {name: hccn, hostPath: {path: /etc/hccn.conf}}
  - name: worker
    replicas: 1
    template:
      spec:
        containers:
        - name: train
          image: ascendhub/mindspeed:latest
          command: ["/bin/bash", "-c"]
          args:
          - torchrun --nproc_per_node 8 --nnodes 2 --node_rank $((VK_TASK_INDEX + 1)) --master_addr mindspeed-pretrain-master-0.mindspeed-pretrain --master_port 6000 pretrain_gpt.py --tensor-model-parallel-size 8
          resources:
            limits: {huawei.com/Ascend910: "8"}
        volumes:
        - {name: hccn, hostPath: {path: /etc/hccn.conf}}
"""


def test_a_master_address_naming_no_pod_is_rtc789_with_the_closest_name():
    bad = VC.replace("--node_rank $((VK_TASK_INDEX + 1)) --master_addr mindspeed-pretrain-master",
                     "--node_rank $((VK_TASK_INDEX + 1)) --master_addr mindspeed-pretrain-mastr")
    rep = lint_scripts([("vc.yaml", bad)])
    (d,) = [d for d in rep.diagnostics if d.code == "RTC789"]
    assert d.message == ("--master_addr mindspeed-pretrain-mastr-0.mindspeed-pretrain: "
                         "mindspeed-pretrain-mastr-0 is no pod of mindspeed-pretrain (its pods: "
                         "mindspeed-pretrain-master-0, mindspeed-pretrain-worker-0); did you "
                         "mean mindspeed-pretrain-master-0.mindspeed-pretrain?")
    line = bad.splitlines().index(next(x for x in bad.splitlines() if "mastr" in x)) + 1
    assert d.span.line == line     # the column is off after a $((...)) the lift evaluates


def test_a_master_address_naming_its_pod_is_clean():
    rep = lint_scripts([("vc.yaml", VC)])
    assert _codes(rep, Severity.ERROR) == [] and "RTC461" not in _codes(rep)
    (job,) = rep.topology.jobs
    assert len(job.placements) == 2


def test_statefulset_address_under_its_service_name_is_checked():
    bad = STS.replace("sglang-0.sglang:5000", "sglang-00.sglang:5000")
    rep = lint_scripts([("sts.yaml", bad)], hardware="hgx-h100")
    (d,) = [d for d in rep.diagnostics if d.code == "RTC789"]
    assert d.message.startswith("--dist-init-addr sglang-00.sglang:5000: sglang-00 is no pod of "
                                "sglang (its pods: sglang-0, sglang-1); did you mean "
                                "sglang-0.sglang?")


def test_pods_asking_for_nvidia_gpus_are_checked_as_gpu_servers():
    # without --hardware, the pods' nvidia.com/gpu limit says what the nodes are (was: a
    # guessed Ascend A3 and RTC796 "mounts neither /etc/hccn.conf nor the Ascend driver")
    rep = lint_scripts([("sts.yaml", STS)])
    (note,) = [d for d in rep.diagnostics if d.code == "RTC464"]
    assert note.message.startswith("the Slurm scripts or pods ask for GPUs")
    assert rep.topology.preset.is_gpu
    assert not {"RTC465", "RTC796"} & set(_codes(rep))
    npu = STS.replace('nvidia.com/gpu: "8"', 'huawei.com/Ascend910: "8"')
    assert not lint_scripts([("sts.yaml", npu)]).topology.preset.is_gpu
