"""1,500 launches of one port in one playbook (read as one node) took ~20 s and grew with
the square of the launches: choosing each torchrun's default master port scanned every
claim of the host per value tried, and RTC440 folded 1.1 million overlapping pairs. Now
defaults are looked up in an index and a stack of more than MAX_STACK claims of one port
range is one finding. Timings are in benchmarks/bench_lint_one_port.py; here the shape."""

from __future__ import annotations

import sys
import time

from conftest import ROOT


def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_lint_one_port
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return bench_lint_one_port


def test_a_playbook_of_1500_launches_of_one_port_is_two_stack_findings():
    from rtc.api.linting import lint_scripts

    text = _bench().playbook(1500)
    start = time.process_time()
    rep = lint_scripts([("site.yml", text)])
    cpu = time.process_time() - start
    clashes = [d for d in rep.diagnostics if d.code == "RTC440"]
    assert [(d.span.line, d.message) for d in clashes] == [
        (13491, "on site: 750 jobs (750 claims) bind the same vLLM API server (--port) 8000 "
                "(job vllm@site:9, job vllm@site:27, job vllm@site:45 and 747 more); only "
                "the first to start gets it"),
        (13500, "on site: 1500 jobs (1500 claims) bind the same HCCL host ports 60000-60031 "
                "(job vllm@site:9, job torchrun@site:18, job vllm@site:27 and 1497 more); "
                "only the first to start gets it")]
    # the 750 torchrun launches got master ports 29500..30249, one each
    from rtc.plan.ports import plan_ports

    masters = sorted(jp.master_port for jp in plan_ports(rep.topology).jobs.values()
                     if jp.master_port is not None)
    assert masters == list(range(29500, 30250))
    assert cpu < 20, cpu    # ~2 s on an idle core; ~20 s (and quadratic) before


def test_a_stack_of_max_stack_claims_is_still_reported_pair_by_pair():
    """At MAX_STACK launches of one port the findings are those of the pair folding
    (each claim's first MAX_PER_CLAIM overlaps, then a count); one more makes a stack."""
    from rtc.api.linting import lint_scripts
    from rtc.checks.port_conflicts import MAX_PER_CLAIM, MAX_STACK

    def clashes(n):
        text = "export HCCL_IF_IP=10.0.0.6\n" + "vllm serve /m --port 8000\n" * n
        return [d.message for d in lint_scripts([("run.sh", text)]).diagnostics
                if d.code == "RTC440"]

    shown = sum(min(k, MAX_PER_CLAIM) for k in range(MAX_STACK))
    counted = MAX_STACK - 1 - MAX_PER_CLAIM
    assert len(clashes(MAX_STACK)) == 2 * (shown + counted)
    assert clashes(MAX_STACK + 1) == [
        f"on run: {MAX_STACK + 1} jobs ({MAX_STACK + 1} claims) bind the same {what} "
        f"(job vllm@run:2, job vllm@run:3, job vllm@run:4 and {MAX_STACK - 2} more); "
        "only the first to start gets it"
        for what in ("HCCL host ports 60000-60031", "vLLM API server (--port) 8000")]
