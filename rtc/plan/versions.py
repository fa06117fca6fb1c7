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
from dataclasses import dataclass

Version = tuple[int, int, int]


@dataclass(frozen=True)
class Feature:
    first: Version
    what: str


FEATURES: dict[str, Feature] = {
    "multi_node_dp": Feature((0, 9, 0), "multi-node data parallel (--headless, "
                             "--data-parallel-start-rank, --api-server-count)"),
    "external_lb": Feature((0, 10, 0), "external load balancing (--data-parallel-rank)"),
    "hybrid_lb": Feature((0, 10, 2), "hybrid load balancing (--data-parallel-hybrid-lb)"),
    "nnodes": Feature((0, 11, 1), "a replica over several servers without Ray (--nnodes, "
                      "--node-rank, --master-addr, --master-port)"),
}

#: vllm-ascend removed the LLMDataDist connector (LLMDataDistCMgrConnector) in 0.13.
LLMDATADIST_REMOVED: Version = (0, 13, 0)

# ASCII digits only (\d also takes fullwidth and other Unicode digits), at most 6 per part.
_VERSION = re.compile(r"^v?([0-9]{1,6})\.([0-9]{1,6})(?:\.([0-9]{1,6}))?"
                      r"(?:[.+\-]?(?:rc|post|dev|a|b)?[0-9]*.*)?$", re.I)


def parse_version(text: str | None) -> Version | None:
    """``0.11.0`` / ``v0.10.2rc1`` / ``0.9`` -> (0, 11, 0) / (0, 10, 2) / (0, 9, 0); None
    when absent or unreadable."""
    if not text:
        return None
    m = _VERSION.match(text.strip())
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


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
