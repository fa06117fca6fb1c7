"""A deployment is all its nodes (issue 33, items 1-3): a correct two-node vLLM-Ascend DP
launch (tests/lint_cases/xnode/head.sh + worker.sh, written in our own words in the shape of
vllm-ascend's docs/source/tutorials multi-node DP pages: nic_name/local_ip variables,
HCCL_IF_IP=$local_ip, DP 4 = 2 local x 2 nodes, TP 4, expert parallel) lints clean, and each
one-mistake copy (variants.json) is caught by the right rule at the right node and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtc.api.linting import lint_scripts
from conftest import TESTS

HERE = TESTS / "lint_cases" / "xnode"
PAIR = {name: (HERE / name).read_text(encoding="utf-8") for name in ("head.sh", "worker.sh")}
VARIANTS = json.loads((HERE / "variants.json").read_text(encoding="utf-8"))


def _lint(texts: dict):
    return lint_scripts(list(texts.items()))


def _mutated(v: dict) -> dict:
    texts = dict(PAIR)
    assert texts[v["file"]].count(v["old"]) == 1, v["name"]
    texts[v["file"]] = texts[v["file"]].replace(v["old"], v["new"])
    return texts


def test_the_correct_pair_is_clean():
    rep = _lint(PAIR)
    assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v["name"])
def test_one_mistake_is_caught_at_its_node_and_line(variant):
    rep = _lint(_mutated(variant))
    got = [(d.code, d.span.file, d.span.line) for d in rep.diagnostics if d.span]
    assert tuple(variant["expect"]) in got, got


def test_disagreement_lands_on_the_worker_with_both_values():
    """Head at TP 8, worker at TP 4: the worker's line says 4 and the head's 8; the head's
    value is never reported at the worker's line as the worker's."""
    texts = dict(PAIR)
    texts["head.sh"] = texts["head.sh"].replace("--tensor-parallel-size 4",
                                                "--tensor-parallel-size 8")
    found = [d for d in _lint(texts).diagnostics if d.code == "RTC722"]
    assert len(found) == 1
    d = found[0]
    assert (d.span.file, d.span.line) == ("worker.sh", 24)
    assert "worker gives --tensor-parallel-size 4" in d.message
    assert "head gives --tensor-parallel-size 8" in d.message
    assert [(r.span.file, r.span.line) for r in d.related] == [("head.sh", 24)]


def test_the_majority_value_wins_over_the_head():
    """Three nodes, the head alone at --max-model-len 4096: the head is the one reported."""
    third = PAIR["worker.sh"].replace('local_ip="10.20.0.12"', 'local_ip="10.20.0.13"') \
        .replace("--data-parallel-start-rank 2", "--data-parallel-start-rank 4") \
        .replace("--data-parallel-size 4", "--data-parallel-size 6")
    texts = {"head.sh": PAIR["head.sh"].replace("--data-parallel-size 4", "--data-parallel-size 6")
             .replace("--max-model-len 8192", "--max-model-len 4096"),
             "worker.sh": PAIR["worker.sh"].replace("--data-parallel-size 4",
                                                    "--data-parallel-size 6"),
             "worker2.sh": third}
    found = [(d.code, d.span.file, d.span.line) for d in _lint(texts).diagnostics
             if d.code == "RTC722"]
    assert found == [("RTC722", "head.sh", 28)], found


def test_rpc_port_differs_is_one_job_not_two():
    """The worker's other rpc port is the finding; the nodes stay one job (no RTC461 note
    saying the other node's script is not given)."""
    v = next(v for v in VARIANTS if v["name"] == "worker-rpc-port-differs")
    codes = [d.code for d in _lint(_mutated(v)).diagnostics]
    assert codes == ["RTC722"], codes


HEADERS = [("## node-a  (head)", "## node-b  (worker)"),
           ("# Node 1 (head):", "# Node 2 (worker):"),
           ("### On node 1", "### On node 2")]


@pytest.mark.parametrize("headers", HEADERS, ids=lambda h: h[0])
def test_tutorial_sections_are_one_node_each(headers):
    """One file printing both nodes' commands under headers (issue 33, item 8): each
    section is a node; clean as given, and the worker's TP mistake is found at its line in
    the file."""
    head_lines = PAIR["head.sh"].count("\n")
    text = f"{headers[0]}\n{PAIR['head.sh']}{headers[1]}\n{PAIR['worker.sh']}"
    rep = lint_scripts([("tutorial.sh", text)])
    assert rep.diagnostics == [], [f"{d.code} {d.span} {d.message}" for d in rep.diagnostics]
    worker_tp = head_lines + 2 + 24
    lines = text.split("\n")
    assert "--tensor-parallel-size 4" in lines[worker_tp - 1]
    lines[worker_tp - 1] = lines[worker_tp - 1].replace("4", "8")
    found = [(d.code, d.span.line) for d in lint_scripts([("tutorial.sh", "\n".join(lines))])
             .diagnostics if d.code == "RTC722"]
    assert found == [("RTC722", worker_tp)], found


def test_ray_start_alone_is_no_job():
    """`ray start` head and worker with no model on the cluster: no TP / device finding."""
    from conftest import CASES
    from rtc.api.linting import lint_files

    rep = lint_files([str(CASES / "scripts" / "ok-ray-cluster-only.sh")])
    assert rep.diagnostics == []


def test_pd_rank_table_has_a_prefill_and_a_decode_side():
    """--table of a vllm-ascend PD rank table (2 prefill devices on 10.0.0.1, 1 decode on
    10.0.0.2): the producer's world is compared with the prefill side, the consumer's
    with the decode side, never with the 3 ranks of both."""
    from rtc.api.linting import lint_files, read_table

    table_path = TESTS / "data" / "ranktables" / "cases" / \
        "pd_ranktable_a3.json"
    table, _ = read_table(str(table_path))
    files = [str(HERE / "pd" / "prefill.sh"), str(HERE / "pd" / "decode.sh")]
    rep = lint_files(files, table=table, vllm_version="0.11.0")
    assert rep.diagnostics == [], [f"{d.code} {d.message}" for d in rep.diagnostics]
    decode = (HERE / "pd" / "decode.sh").read_text(encoding="utf-8")
    bad = lint_scripts([("prefill.sh", (HERE / "pd" / "prefill.sh").read_text()),
                        ("decode.sh", decode.replace("--tensor-parallel-size 1",
                                                     "--tensor-parallel-size 2"))],
                       table=table, vllm_version="0.11.0")
    got = [(d.code, d.span.file) for d in bad.diagnostics if d.code == "RTC706"]
    assert got == [("RTC706", "decode.sh")]
    assert "rank table has 1 ranks" in next(d.message for d in bad.diagnostics
                                            if d.code == "RTC706")


# --- fuzz: mutated node scripts give a report (exit 0 or 1), never a traceback ---------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_BAD = ["four", "0", "-1", "99999999999999999999", "１０", "141.61.39.317", "x.x.x.x", "<IP>",
        "0.0.0.0", "{not json", "'", '"', "$", "\\", "abc", "-", "--", "=", "::", "65536",
        "--headless", "--data-parallel-start-rank", "## node-b (worker)", "# Node 3:",
        "ray start --head", "torchrun --nnodes=abc --nproc-per-node=-1", "${X:?}", "$(",
        "--tensor-parallel-size", "1:2:3", "１", ""]


@st.composite
def _mutated_pair(draw):
    texts = dict(PAIR)
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(sorted(texts)))
        words = texts[name].split(" ")
        k = draw(st.integers(0, len(words) - 1))
        how = draw(st.sampled_from(["replace", "insert", "delete"]))
        bad = draw(st.sampled_from(_BAD) | st.text(max_size=6))
        if how == "replace":
            words[k] = bad
        elif how == "insert":
            words.insert(k, bad)
        elif len(words) > 1:
            del words[k]
        texts[name] = " ".join(words)
    return texts


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_mutated_pair())
def test_mutated_scripts_never_traceback(texts):
    rep = lint_scripts(list(texts.items()))
    assert rep.ok in (True, False)
    for d in rep.diagnostics:
        assert d.code.startswith("RTC") and d.message


def test_dp_modes_table_rows_name_release_and_file():
    """Each row of the vLLM DP-mode table says the release and the vLLM file it was read
    in (or that the release was not read)."""
    from rtc.plan.versions import DP_MODES

    assert {m[0] for m in DP_MODES} >= {"internal", "hybrid", "hybrid -> external",
                                        "external", "multi-port external", "rpc port"}
    for mode, how, what, release, source in DP_MODES:
        assert release == "release not read" or release[0].isdigit(), mode
        assert ".py" in source and how and what, mode
