"""The vLLM versions rtc's launch scripts know about: which multi-node flags exist from
which release, and how ``vllm_version`` (cluster block) is read.

=================  ==========  =============================================================
feature            first       flags / behaviour
=================  ==========  =============================================================
``multi_node_dp``  0.9.0       ``--headless``, ``--api-server-count``,
                               ``--data-parallel-size-local`` / ``-start-rank`` /
                               ``-address`` / ``-rpc-port`` (internal load balancing)
``external_lb``    0.10.0      ``--data-parallel-rank`` (one server per DP rank)
``hybrid_lb``      0.10.2      ``--data-parallel-hybrid-lb``; a non-headless node with a start
                               rank and ``--data-parallel-size-local 1`` is switched to
                               external load balancing
``nnodes``         0.11.1      ``--nnodes`` / ``--node-rank`` / ``--master-addr`` /
                               ``--master-port`` (a replica over several servers without Ray)
``nixl``           0.9.0       vLLM's own ``NixlConnector`` (``kv_connector nixl``)
``nixl_dp_port``   0.11.1      NIXL side channel: one port per DP engine
                               (``VLLM_NIXL_SIDE_CHANNEL_PORT`` + DP rank, on the host of its
                               engine core), and a TP group over several servers hands its
                               KV cache on; before: one port per worker (+ DP rank x TP + TP
                               rank) and the handshake failed for such TP groups
``start_rank_      0.28.0      an explicit ``--data-parallel-start-rank 0`` counts as set: a
zero_set``                     head (no ``--headless``) with it infers hybrid load balancing,
                               with ``--data-parallel-size-local 1`` external, and then
                               rejects ``--headless`` workers (:data:`HEADLESS_FORMS`)
=================  ==========  =============================================================

The first releases are rtc's reading of the vLLM changelog (rounded up to the release where
the flag works for multi-node serving); they are kept here, in one table, so that a
correction is one line. The LLMDataDist KV connector of vllm-ascend exists up to the 0.11
series and is gone from 0.13 on (:data:`LLMDATADIST_REMOVED`).

``vllm_version`` not given, or not readable: the scripts use the *conservative* form -
flags every release since 0.9 accepts, an explicit ``--data-parallel-start-rank`` with
``--headless`` on every internal-LB worker (never a rank inferred from ``--nnodes``) - and
say so in a comment; forms that need a later release get a comment naming it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

Version = tuple[int, int, int]


class Feature(NamedTuple):
    first: Version
    what: str


FEATURES: dict[str, Feature] = {
    "multi_node_dp": Feature((0, 9, 0), "multi-node data parallel (--headless, "
                             "--data-parallel-start-rank, --api-server-count)"),
    "external_lb": Feature((0, 10, 0), "external load balancing (--data-parallel-rank)"),
    "hybrid_lb": Feature((0, 10, 2), "hybrid load balancing (--data-parallel-hybrid-lb)"),
    "nnodes": Feature((0, 11, 1), "a replica over several servers without Ray (--nnodes, "
                      "--node-rank, --master-addr, --master-port)"),
    "nixl": Feature((0, 9, 0), "vLLM's NixlConnector (kv_connector nixl)"),
    "nixl_dp_port": Feature((0, 11, 1), "the NIXL side channel with one port per DP "
                                "engine, which serves every TP worker's metadata (a TP "
                                "group over several servers)"),
    "start_rank_zero_set": Feature((0, 28, 0), "an explicit --data-parallel-start-rank 0 "
                                   "counts as set (hybrid/external load balancing is inferred "
                                   "on a head that passes it)"),
}

#: Where each row of :data:`FEATURES` comes from.
SOURCES: dict[str, str] = {
    "multi_node_dp": "vLLM changelog (rtc's reading, rounded up to the multi-node release)",
    "external_lb": "vLLM changelog (rtc's reading)",
    "hybrid_lb": "vllm-project/vllm PR 21238 (--data-parallel-hybrid-lb, arg_utils.py "
                 "'Infer hybrid LB mode' when a start rank is set on a non-headless node)",
    "nnodes": "vLLM changelog (rtc's reading)",
    "nixl": "vllm-project/vllm vllm/distributed/kv_transfer/kv_connector/factory.py "
                      "(register_connector NixlConnector, PR 17751 'NixlConnector'); first "
                      "release 0.9.0 is rtc's reading of the changelog",
    "nixl_dp_port": "vllm-project/vllm PR 26338 (merged 2025-10, after 0.11.0; issue "
                        "25981): nixl_connector.py NixlConnectorScheduler side_channel_port = "
                        "VLLM_NIXL_SIDE_CHANNEL_PORT + data_parallel_rank (later "
                        "data_parallel_index), before it + data_parallel_rank x "
                        "tensor_parallel_size with each worker listening on + tp_rank "
                        "(docs/features/nixl_connector_usage.md of PR 24249: 'base_port + "
                        "dp_rank * tp_size + tp_rank'); the same release moved the default "
                        "port 5557 -> 5600 (vllm/envs.py, PR 25056; llm-d PR 668 cites the "
                        "0.11.1 release notes)",
    "start_rank_zero_set": "vllm-project/vllm PR 47692 (merged 2026-07-06; issue 47691): "
                           "arg_utils.py create_engine_config tests `data_parallel_start_rank "
                           "is not None` instead of its truthiness; first release 0.28 per "
                           "gpustack PR 6236 (<= 0.27 truthiness, >= 0.28 is not None) and "
                           "vllm-ascend PR 16204 (seen on 0.28); the stored vLLM sources rtc "
                           "read (arg_utils.py at 99d7eb5) still have the truthiness test, so "
                           "the release tag itself was not read",
}

#: What vLLM does with each multi-node form of a DP deployment (head = the node without
#: ``--headless``): (form, accepted by, rejected by / what happens, source). Read by the
#: headless rule (:mod:`rtc.checks.dp_launch`) and printed in docs/lint.md.
HEADLESS_FORMS: tuple[tuple[str, str, str, str], ...] = (
    ("head: no start rank; workers: --headless --data-parallel-start-rank N",
     "every release with multi-node DP (0.9.0+)", "-",
     "vllm docs serving/data_parallel_deployment.md (internal LB)"),
    ("head: --data-parallel-start-rank 0 --data-parallel-size-local 1; workers --headless",
     "up to 0.27 (0 is falsy: read as no start rank)",
     "0.28+: head infers hybrid -> external LB; 'Remote engine 1 must not use --headless in "
     "external or hybrid dp lb mode'", SOURCES["start_rank_zero_set"]),
    ("head: --data-parallel-start-rank 0 --data-parallel-size-local > 1; workers --headless",
     "up to 0.27", "0.28+: head infers hybrid LB and rejects the headless workers",
     SOURCES["start_rank_zero_set"]),
    ("a node without --headless with --data-parallel-start-rank N > 0 while others run "
     "--headless", "-", "0.10.2+: that node infers hybrid LB; the head (internal LB) rejects "
     "it ('must use --headless unless in external or hybrid dp lb mode')",
     SOURCES["hybrid_lb"]),
    ("--headless with --data-parallel-hybrid-lb", "-",
     "0.10.2+ (the flag's first release): 'data_parallel_hybrid_lb is not applicable in "
     "headless mode'", "vllm-project/vllm vllm/entrypoints/cli/serve.py run_headless "
     "(ValueError) and vllm/engine/arg_utils.py create_engine_config (assertion)"),
    ("--headless with --data-parallel-rank", "-",
     "0.10.0+: --data-parallel-rank selects external LB, which rejects headless remote "
     "engines; run_headless also refused the flag from PR 20398 (2025-07)",
     "vllm-project/vllm vllm/engine/arg_utils.py (data_parallel_external_lb = ... or "
     "data_parallel_rank is not None), PR 20398"),
)

#: vLLM's data-parallel load-balancing modes as ``vllm serve`` infers them from each node's
#: flags: (mode, how a node selects it, what vLLM does / rejects, first release, where read).
#: Read in ``vllm/engine/arg_utils.py`` ``EngineArgs.create_engine_config`` (the stored
#: copies at commit 99d7eb5d6a51 and later ones with ``--nnodes``), ``vllm/entrypoints/cli/
#: serve.py`` ``run_headless`` and ``vllm/config/parallel.py`` ``ParallelConfig``; the first
#: releases are those of :data:`FEATURES` (a row whose release was not read says so). The
#: rules that enforce them: RTC531 (headless forms), RTC530 (start ranks), RTC722 (values
#: every node gives alike), RTC720 (rpc port 0), RTC440 (rpc port = an HTTP port).
DP_MODES: tuple[tuple[str, str, str, str, str], ...] = (
    ("internal", "head: no --headless, no start rank (or, up to 0.27, start rank 0); "
     "workers: --headless --data-parallel-start-rank N",
     "one API server on the head; rejects a remote engine that is not --headless ('Remote "
     "engine N must use --headless unless in external or hybrid dp lb mode')",
     "0.9.0", "arg_utils.py create_engine_config; vllm/v1/engine/utils.py "
     "wait_for_engine_startup"),
    ("hybrid", "--data-parallel-hybrid-lb with --data-parallel-size-local, or inferred: "
     "a start rank on a node without --headless (`if self.data_parallel_start_rank and not "
     "headless`; from 0.28 `is not None`, so an explicit 0 counts)",
     "an API server per node; rejects remote --headless engines ('must not use --headless "
     "in external or hybrid dp lb mode'); turned off when local size == DP size",
     "0.10.2", "arg_utils.py create_engine_config ('Infer hybrid LB mode'); PR 47692 for "
     "the `is not None` test (0.28)"),
    ("hybrid -> external", "hybrid with --data-parallel-size-local 1",
     "switched to external LB ('data_parallel_hybrid_lb is not eligible when "
     "data_parallel_size_local = 1, autoswitch to data_parallel_external_lb'; the warning "
     "is logged from the releases with --nnodes, the switch itself is older)",
     "0.10.2", "arg_utils.py create_engine_config"),
    ("external", "--data-parallel-rank K (or --data-parallel-external-lb with "
     "--node-rank), one server per DP rank",
     "needs --data-parallel-size-local 1 or none ('data_parallel_size_local must be 1 or "
     "None when data_parallel_rank is set'); rejects remote --headless engines",
     "0.10.0", "arg_utils.py create_engine_config (data_parallel_external_lb = ... or "
     "data_parallel_rank is not None)"),
    ("multi-port external", "--data-parallel-multi-port-external-lb",
     "several external-LB ranks behind one node's ports; exclusive with hybrid",
     "release not read", "arg_utils.py add_cli_args (seen in third-party notes of it; "
     "the stored copies rtc read do not have the flag)"),
    ("headless", "--headless", "needs --data-parallel-size-local > 0; no "
     "--api-server-count > 1; not with --data-parallel-hybrid-lb ('data_parallel_hybrid_lb "
     "is not applicable in headless mode')", "0.9.0",
     "vllm/entrypoints/cli/serve.py run_headless; arg_utils.py (assertion)"),
    ("rpc port", "--data-parallel-rpc-port (default 29550 when not given)",
     "must be the same on every node of the DP group (the ZMQ handshake binds it on the "
     "head); only used when remote engines exist, else IPC",
     "0.9.0", "arg_utils.py create_engine_config (ParallelConfig.data_parallel_rpc_port "
     "default); vllm/config/parallel.py"),
    ("--nnodes", "--nnodes N --node-rank K [--master-addr --master-port]",
     "only with --data-parallel-backend mp and executor mp / uni / external_launcher "
     "('nnodes > 1 can only be set when distributed executor backend is mp, uni or "
     "external_launcher'); world divisible by nnodes",
     "0.11.1", "arg_utils.py create_engine_config; vllm/config/parallel.py __post_init__"),
    ("ray executor", "--distributed-executor-backend ray",
     "auto picks mp when one node has enough devices; a replica over several nodes "
     "through Ray must name ray (the release that stopped choosing Ray by itself was not "
     "read: no rule depends on it)", "release not read",
     "vllm/config/parallel.py __post_init__ (distributed_executor_backend auto choice)"),
)

#: vLLM's short flag aliases -> the long flags (vllm/engine/arg_utils.py ``add_cli_args``).
VLLM_ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size",
                "-dp": "--data-parallel-size", "-dpl": "--data-parallel-size-local",
                "-dpr": "--data-parallel-start-rank", "-dpa": "--data-parallel-address",
                "-dpp": "--data-parallel-rpc-port", "-dpn": "--data-parallel-rank",
                "-dph": "--data-parallel-hybrid-lb", "-dpe": "--data-parallel-external-lb",
                "-ep": "--enable-expert-parallel", "-asc": "--api-server-count",
                "-pcp": "--prefill-context-parallel-size", "-dcp": "--decode-context-parallel-size",
                "-n": "--nnodes", "-r": "--node-rank"}

#: vLLM's ``VLLM_NIXL_SIDE_CHANNEL_PORT`` default: 5557 up to 0.11.0, 5600 from 0.11.1
#: (SOURCES["nixl_dp_port"]). rtc always exports the port it planned, so the default
#: only says where rtc starts looking for a free one.
NIXL_DEFAULT_PORT = 5600

#: Names vLLM's KVConnectorFactory registers (vllm/distributed/kv_transfer/kv_connector/
#: factory.py, the releases rtc read from 0.9 on; which release has which is not recorded
#: except NixlConnector's, FEATURES["nixl"]). Another name needs
#: ``kv_connector_module_path`` (vllm-ascend's connectors give theirs), else vLLM stops
#: with "Unsupported connector type".
VLLM_CONNECTORS = ("SharedStorageConnector", "ExampleConnector", "P2pNcclConnector",
                   "LMCacheConnectorV1", "LMCacheMPConnector", "NixlConnector",
                   "NixlPullConnector", "NixlPushConnector", "MultiConnector",
                   "MoRIIOConnector", "OffloadingConnector", "DecodeBenchConnector",
                   "MooncakeConnector", "MooncakeStoreConnector", "FlexKVConnectorV1",
                   "SimpleCPUOffloadConnector", "HF3FSKVConnector")

#: The roles vLLM's KVTransferConfig accepts (vllm/config/kv_transfer.py ``KVRole``):
#: anything else is "Unsupported kv_role" at start-up.
KV_ROLES = ("kv_producer", "kv_consumer", "kv_both")

#: vllm-ascend removed the LLMDataDist connector (LLMDataDistCMgrConnector) in 0.13.
LLMDATADIST_REMOVED: Version = (0, 13, 0)

# ASCII digits only (\d also takes fullwidth and other Unicode digits), at most 6 per part.
_VERSION = re.compile(r"^v?([0-9]{1,6})\.([0-9]{1,6})(?:\.([0-9]{1,6}))?"
                      r"(?:[.+\-]?(?:rc|post|dev|a|b)?[0-9]*.*)?$", re.I)


#: vLLM flags that take no value (``--headless``, ...): the next word is not theirs.
VLLM_SWITCHES = ("--headless", "--enable-expert-parallel", "--data-parallel-hybrid-lb",
                 "--data-parallel-external-lb")


def vllm_flags(words: list[str]) -> dict[str, str | None]:
    """Flag -> value of a vLLM argv (``--flag value`` / ``--flag=value``; switches and a
    flag followed by another flag map to None), short forms through :data:`VLLM_ALIASES`.
    Negative numbers (``-1``) are values, not flags."""
    out: dict[str, str | None] = {}
    n = len(words)
    k = 0
    while k < n:
        w = words[k]
        k += 1
        if w[:1] != "-" or w[1:2].isdigit():
            continue   # a value (or a negative number)
        name, eq, value = w.partition("=")
        name = VLLM_ALIASES.get(name, name)
        if eq:
            out[name] = value
        elif name in VLLM_SWITCHES or k >= n or words[k][:1] == "-":
            out[name] = None
        else:
            out[name] = words[k]
            k += 1
    return out


def parse_version(text: str | None) -> Version | None:
    """``0.11.0`` / ``v0.10.2rc1`` / ``0.9`` -> (0, 11, 0) / (0, 10, 2) / (0, 9, 0); None
    when absent or unreadable."""
    if not text:
        return None
    m = _VERSION.match(text.strip())
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


_VERSION_SHAPE = re.compile(r"^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?![0-9])")


def version_problem(text: str) -> str:
    """Why ``text``, which :func:`parse_version` does not read, is no version rtc reads:
    "is out of range ..." when it has a version's shape with a part longer than 6 digits
    (``99999999999999999999.0.0``), else "is not a version number"."""
    m = _VERSION_SHAPE.match(text.strip())
    if m and any(len(g) > 6 for g in m.groups() if g):
        return "is out of range (each part of a release has at most 6 digits)"
    return "is not a version number"


def version_text(v: Version) -> str:
    return ".".join(str(x) for x in v)


def has(version: Version | None, feature: str) -> bool | None:
    """True / False when the version is known, None when it is not."""
    if version is None:
        return None
    return version >= FEATURES[feature].first


def needs_comment(version: Version | None, feature: str) -> str | None:
    """A script comment for a form that needs ``feature`` when the version is unknown."""
    if version is not None:
        return None
    f = FEATURES[feature]
    return f"needs vLLM {version_text(f.first)} or later: {f.what}"
