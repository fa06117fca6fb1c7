"""One mistake on one line is one error: a StatefulSet's `--node-rank ${HOSTNAME#*-}`
that trims the pod name wrongly ('sglang-ds-0' -> 'ds-0') used to give RTC720 and RTC745
once per pod, and an RTC740 "both give --node-rank 0" from the default rtc then checked
with. Now: one RTC745 at the value naming both pods, no RTC720 beside it, no RTC740."""

from __future__ import annotations

from rtc.api.linting import lint_scripts
from rtc.diagnostics import Severity

#: A two-pod SGLang StatefulSet (the shape of a user's manifest; our own text). TRIM is
#: the shell expansion that turns the pod's host name into its node rank.
STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: sglang-ds
spec:
  serviceName: sglang-headless
  replicas: 2
  selector:
    matchLabels: {app: sglang-ds}
  template:
    metadata:
      labels: {app: sglang-ds}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:latest
        command: ["/bin/bash", "-c"]
        args:
        - |
          export NODE_RANK=TRIM
          python3 -m sglang.launch_server \\
            --model-path deepseek-ai/DeepSeek-V3 \\
            --tp 16 --nnodes 2 \\
            --node-rank $NODE_RANK \\
            --dist-init-addr sglang-ds-0.sglang-headless.default.svc.cluster.local:5000 \\
            --host 0.0.0.0 --port 30000
        env:
        - {name: NCCL_SOCKET_IFNAME, value: eth0}
        - {name: GLOO_SOCKET_IFNAME, value: eth0}
        resources:
          limits: {nvidia.com/gpu: "8"}
"""


def _lint(trim: str):
    return lint_scripts([("sts.yaml", STS.replace("TRIM", trim))])


def _errors(rep):
    return [(d.code, d.span.line, d.span.column, d.message, d.subject)
            for d in rep.diagnostics if d.severity == Severity.ERROR]


def test_a_wrong_trim_is_one_rtc745_naming_both_pods():
    rep = _lint("${HOSTNAME#*-}")
    assert _errors(rep) == [(
        "RTC745", 24, 25,
        "sglang-ds-0, sglang-ds-1: --node-rank is not a whole number ('ds-0' on sglang-ds-0, "
        "'ds-1' on sglang-ds-1); rtc checks the launch with SGLang's default (0)",
        "sglang-ds-0, sglang-ds-1")]
    assert rep.diagnostics[[d.code for d in rep.diagnostics].index("RTC745")].repeats == 0


def test_the_right_trim_gives_no_error():
    assert _errors(_lint("${HOSTNAME##*-}")) == []


def test_one_bad_word_read_alike_by_both_pods_is_one_rtc745():
    rep = lint_scripts([("sts.yaml", STS.replace("TRIM", "${HOSTNAME##*-}")
                         .replace("--tp 16", "--tp sixteen"))])
    errs = [e for e in _errors(rep) if e[0] in ("RTC745", "RTC720")]
    assert [(c, m) for c, _l, _c, m, _s in errs] == [(
        "RTC745", "sglang-ds-0, sglang-ds-1: --tp-size 'sixteen' is not a whole number; rtc "
        "checks the launch with SGLang's default (1)")]


def _torchrun(trim: str):
    """The StatefulSet running torchrun instead, its --node-rank from TRIM."""
    launch = ("torchrun --nnodes 2 --nproc-per-node 8 --node-rank $NODE_RANK "
              "--master-addr sglang-ds-0.sglang-headless --master-port 29500 train.py")
    start = STS.index("python3 -m sglang")
    end = STS.index("        env:")
    text = STS[:start] + launch + "\n" + STS[end:]
    return lint_scripts([("sts.yaml", text.replace("TRIM", trim))])


def test_rtc720_of_one_word_read_by_two_pods_is_one_error_naming_both_values():
    assert [(c, line, m) for c, line, _c, m, _s in _errors(_torchrun("${HOSTNAME#*-}"))] == [(
        "RTC720", 21, "--node-rank 'ds-0' is not an integer (the same word reads 'ds-1' "
        "on other nodes)")]


def test_rtc720_passes_with_the_right_trim():
    assert _errors(_torchrun("${HOSTNAME##*-}")) == []
