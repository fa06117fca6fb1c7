"""SGLang's launch flags as rtc reads them, kept as data with where they were read.

Source: sgl-project/sglang ``python/sglang/srt/server_args.py`` (the ``ServerArgs``
dataclass: each field's primary flag is its name with ``-``, plus ``Arg(aliases=...)``),
read at commit 001067fffe33 (2026); the bootstrap-port default in the same class
(``disaggregation_bootstrap_port``). argparse also accepts unambiguous prefixes
(``allow_abbrev``), which is how the documented ``--tp 2`` / ``--dp 2`` work; rtc reads those
two prefixes as their fields too.

============================  ==============================  ==============================
field                         flags                           default
============================  ==============================  ==============================
``model_path``                ``--model-path``, ``--model``   (required)
``tp_size``                   ``--tp-size``,                  1 (the TP size over all
                              ``--tensor-parallel-size``,     ``--nnodes``)
                              ``--tp``
``pp_size``                   ``--pp-size``,                  1
                              ``--pipeline-parallel-size``
``dp_size``                   ``--dp-size``,                  1 (replicas of tp x pp
                              ``--data-parallel-size``,       devices each, unless
                              ``--dp``                        ``--enable-dp-attention``)
``ep_size``                   ``--ep-size``, ``--ep``,        1 (experts over the TP
                              ``--expert-parallel-size``      group; adds no devices)
``dist_init_addr``            ``--dist-init-addr``,           None
                              ``--nccl-init-addr``
``nnodes`` / ``node_rank``    ``--nnodes`` / ``--node-rank``  1 / 0
``host`` / ``port``           ``--host`` / ``--port``         127.0.0.1 / 30000
``base_gpu_id`` /             ``--base-gpu-id`` /             0 / 1 (device k of a node is
``gpu_id_step``               ``--gpu-id-step``               base + k x step)
``disaggregation_mode``       ``--disaggregation-mode``       ``null`` (prefill, decode)
``disaggregation_bootstrap_   ``--disaggregation-bootstrap-   8998 (on the prefill server)
port``                        port``
============================  ==============================  ==============================

On Ascend (SGLang ``docs/platforms/ascend_npu_environment_variables.md``): prefill/decode
with ``--disaggregation-transfer-backend ascend`` needs ``ASCEND_MF_STORE_URL``
(``tcp://<prefill primary IP>:<port>``), the same on every node of the deployment, and
``ASCEND_MF_TRANSFER_PROTOCOL`` (``device_rdma`` / ``sdma``) the same on both sides.
"""

from __future__ import annotations

#: Where the table was read.
SOURCE = ("sgl-project/sglang python/sglang/srt/server_args.py @ 001067fffe33 "
          "(ServerArgs fields and Arg aliases)")

#: Flag as written -> the primary flag of its ServerArgs field.
ALIASES = {
    "--model": "--model-path",
    "--tensor-parallel-size": "--tp-size", "--tp": "--tp-size",
    "--pipeline-parallel-size": "--pp-size",
    "--data-parallel-size": "--dp-size", "--dp": "--dp-size",
    "--expert-parallel-size": "--ep-size", "--ep": "--ep-size",
    "--nccl-init-addr": "--dist-init-addr",
    "--decode-context-parallel-size": "--dcp-size",
}

#: ServerArgs defaults rtc lifts when a flag is not given.
DEFAULTS = {"--host": "127.0.0.1", "--port": "30000", "--nnodes": "1", "--node-rank": "0",
            "--disaggregation-bootstrap-port": "8998", "--base-gpu-id": "0",
            "--gpu-id-step": "1", "--disaggregation-mode": "null"}

#: The whole-number flags rtc reads, with the values that make sense (inclusive); larger
#: sizes than any cluster rtc models (65,536 devices) are typing mistakes.
RANGES = {"--tp-size": (1, 65536), "--pp-size": (1, 65536), "--dp-size": (1, 65536),
          "--ep-size": (1, 65536), "--nnodes": (1, 65536), "--node-rank": (0, 65535),
          "--base-gpu-id": (0, 65535), "--gpu-id-step": (1, 65536), "--port": (1, 65535),
          "--disaggregation-bootstrap-port": (1, 65535)}

#: SGLang store_true flags a launch line commonly carries (they take no value).
BOOLEAN = frozenset({
    "--enable-dp-attention", "--trust-remote-code", "--disable-cuda-graph",
    "--enable-metrics", "--disable-radix-cache", "--enable-eplb", "--skip-server-warmup",
    "--enable-dp-lm-head", "--enable-torch-compile", "--disable-overlap-schedule",
    "--enable-mixed-chunk", "--enable-p2p-check", "--enable-prefill-cp",
    "--disable-custom-all-reduce", "--enable-two-batch-overlap", "--log-requests",
    "--enable-cache-report", "--disable-shared-experts-fusion", "--enable-deepep-moe",
    "--enable-hierarchical-cache",
})

#: Launch module -> what it starts: ``server`` (one SGLang server, possibly one node of a
#: multi-node one) or ``router`` (the sglang_router front end: no devices).
MODULES = {"sglang.launch_server": "server", "sglang_router.launch_server": "server",
           "sglang_router.launch_router": "router"}

#: Ascend MemFabric variables that must be equal on every node of a PD deployment.
MF_STORE_URL = "ASCEND_MF_STORE_URL"
MF_PROTOCOL = "ASCEND_MF_TRANSFER_PROTOCOL"


def canonical(flag: str) -> str:
    """The primary ServerArgs flag of ``flag`` as written (itself when it has no alias)."""
    return ALIASES.get(flag, flag)


__all__ = ["SOURCE", "ALIASES", "DEFAULTS", "RANGES", "BOOLEAN", "MODULES", "canonical",
           "MF_STORE_URL", "MF_PROTOCOL"]
