"""The forms of rank table rtc knows, each with its JSON Schema ``schemas/<form>.schema.json``:

============================  ==============================================================
``hccl-v1.0``                 ``version "1.0"``: the ``server_list`` form (910A, A2, 300I Duo,
                              A3 typical networking)
``hccl-v1.2``                 ``version "1.2"``: A3 SuperPoD (``super_device_id``,
                              ``super_pod_list``)
``hccl-v2.0``                 ``version "2.0"``: Ascend 950 (``rank_list``/``level_list``,
                              JSON integers)
``hccl-legacy-cloud``         no ``version``, ``group_list`` without ``deploy_mode``
``hccl-legacy-lab``           no ``version``, ``group_list`` with ``deploy_mode``
``pd-ranktable``              vllm-ascend LLMDataDist table (``prefill_device_list`` /
                              ``decode_device_list``; its ``version`` is always "1.2")
``topo-v2.0``                 the A5 topology file (``peer_list`` / ``edge_list``)
``mindie-global``             MindCluster / MindIE global rank table (``server_group_list``)
============================  ==============================================================

Detecting which form a document is belongs to the JSON front end
(:func:`rtc.tables.recognise.detect_form`).
"""

from __future__ import annotations

from rtc.resources import load_schema

FORM_DESCRIPTIONS: dict[str, str] = {
    "hccl-v1.0": 'HCCL rank table version "1.0" (server_list)',
    "hccl-v1.2": 'HCCL rank table version "1.2" (A3 SuperPoD)',
    "hccl-v2.0": 'HCCL rank table version "2.0" (Ascend 950)',
    "hccl-legacy-cloud": "legacy HCCL group_list table, cloud variant (no version)",
    "hccl-legacy-lab": "legacy HCCL group_list table, lab variant (deploy_mode)",
    "pd-ranktable": "vllm-ascend LLMDataDist prefill/decode rank table",
    "topo-v2.0": "A5 topology file version 2.0",
    "mindie-global": "MindCluster / MindIE global rank table (server_group_list)",
}
FORMS: tuple[str, ...] = tuple(FORM_DESCRIPTIONS)


def schema_for(form: str) -> dict:
    """The JSON Schema (dict) of a form."""
    if form not in FORM_DESCRIPTIONS:
        raise KeyError(f"unknown rank table form {form!r}; known: {', '.join(FORMS)}")
    return load_schema(form)
