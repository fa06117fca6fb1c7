"""`rtc calibrate`: HCCL Test and nccl-tests output readers, the least-squares fit
(recovers the alpha and bandwidth the times were made from), and the printed `links`
block compiling in a .rtc file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rtc.api import compile_text
from rtc.cost.calibrate import fit_link, steps_and_factor
from rtc.cost.errors import CostInputError
from rtc.preflight.bench_output import BenchOutputError, read_bench_output
from conftest import TESTS

DATA = TESTS / "data" / "cost"


def hccl_output(alpha: float, bandwidth: float, ranks: int, op: str = "allreduce",
                sizes=tuple(8192 * 4 ** k for k in range(9)), fail: int | None = None) -> str:
    steps, factor = steps_and_factor(op, ranks, "ring")
    rows = ["data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:"]
    for n in sizes:
        t = steps * alpha + n * factor / bandwidth
        rows.append(f"{n} | {t * 1e6:.4f} | {n / t / 1e9:.5f} | "
                    f"{'failed' if n == fail else 'success'}")
    return "\n".join(rows) + "\n"


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(1e-6, 1e-4), gbps=st.floats(5, 400), ranks=st.integers(2, 64),
       op=st.sampled_from(["allreduce", "allgather", "reduce_scatter", "alltoall"]))
def test_fit_recovers_the_parameters_the_times_were_made_from(alpha, gbps, ranks, op):
    run = read_bench_output(f"{op}_test.txt", hccl_output(alpha, gbps * 1e9, ranks, op))
    fit = fit_link("roce-200ge", run.op, ranks, [(s.nbytes, s.seconds) for s in run.samples])
    assert fit.alpha == pytest.approx(alpha, rel=0.02, abs=2e-8)
    assert fit.bandwidth == pytest.approx(gbps * 1e9, rel=0.02)


def test_failed_rows_are_dropped_with_a_note():
    run = read_bench_output("x_all_reduce_test.log", hccl_output(2e-5, 2e10, 16, fail=32768))
    assert 32768 not in [s.nbytes for s in run.samples] and len(run.samples) == 8
    assert "check_result failed" in run.notes[0] and run.op == "allreduce"


def test_nccl_tests_capture_reads_out_of_place_times():
    path = DATA / "all_reduce_perf-16gpu.txt"
    run = read_bench_output(str(path), path.read_text(encoding="utf-8"))
    assert run.tool == "nccl-tests" and run.op == "allreduce"
    assert [s.nbytes for s in run.samples][:2] == [8192, 32768]
    assert run.samples[0].seconds == pytest.approx(300.68e-6)
    assert len(run.samples) == 7 and "#wrong 1" in run.notes[0]     # the 8 MB row
    fit = fit_link("roce-400ge", "allreduce", 16, [(s.nbytes, s.seconds) for s in run.samples])
    assert fit.alpha == pytest.approx(10e-6, rel=0.05)
    assert fit.bandwidth == pytest.approx(45e9, rel=0.05)


@pytest.mark.parametrize("text, wanted", [
    ("hello\n", "neither HCCL Test output"),
    ("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n", "without a usable row"),
])
def test_not_a_benchmark_output(text, wanted):
    with pytest.raises(BenchOutputError, match=wanted):
        read_bench_output("f.txt", text)


def test_fit_needs_two_sizes_and_growth():
    with pytest.raises(CostInputError, match="two different message sizes"):
        fit_link("roce-200ge", "allreduce", 16, [(8192, 1e-4)])
    with pytest.raises(CostInputError, match="does not grow"):
        fit_link("roce-200ge", "allreduce", 16, [(8192, 2e-4), (16384, 1e-4)])


def test_calibrate_prints_a_links_block_that_compiles(tmp_path, rtc):
    out = tmp_path / "all_reduce_16p.txt"
    out.write_text(hccl_output(18e-6, 21e9, 16), encoding="utf-8")
    run = rtc("calibrate", str(out), "--link", "roce-200ge", "--ranks", "16")
    assert run.returncode == 0, run.stderr
    assert "param roce-200ge.alpha = 18us" in run.stdout
    assert "param roce-200ge.bandwidth = 21GB/s" in run.stdout
    src = ("cluster c {\n  hardware atlas-800t-a2\n}\n" + run.stdout
           + "server s {\n  devices 0..7\n  device_ip 10.0.0.1 step 1\n}\n")  # else RTC234
    result = compile_text(src, "c.rtc")
    assert result.ok and [p.key for p in result.topology.links.params] == [
        "roce-200ge.alpha", "roce-200ge.bandwidth"]
    bad = rtc("calibrate", str(out), "--link", "roce", "--ranks", "16")
    assert bad.returncode == 2 and "unknown link class 'roce'" in bad.stderr


@pytest.mark.parametrize("ranks, why", [
    ("99999999999999999999", "99999999999999999999 is more than the largest allowed value, "
                             "2097152."),
    ("2097153", "2097153 is more than the largest allowed value, 2097152."),
    ("1", "1 is less than the smallest allowed value, 2.")])
def test_ranks_out_of_range_is_a_usage_error(tmp_path, rtc, ranks, why):
    """--ranks 99999999999999999999 was accepted (and fitted); it is bounded by the
    largest world size of a job (rtc.syntax.schema.MAX_WORLD)."""
    from rtc.cli import calibrate_cmd
    from rtc.syntax.schema import MAX_WORLD

    assert calibrate_cmd._MAX_RANKS == MAX_WORLD
    out = tmp_path / "all_reduce_16p.txt"
    out.write_text(hccl_output(18e-6, 21e9, 16), encoding="utf-8")
    run = rtc("calibrate", str(out), "--link", "roce-200ge", "--ranks", ranks)
    assert run.returncode == 2 and run.stdout == ""
    assert f"error[RTC002]: Invalid value for '--ranks': {why}" in run.stderr


def test_noisy_hccl_capture_fits_within_a_few_percent(rtc):
    # 1% noise on every time: relative weighting keeps alpha (set by the small sizes) close
    path = DATA / "all_reduce_test-16p.txt"
    run = read_bench_output(str(path), path.read_text(encoding="utf-8"))
    fit = fit_link("roce-200ge", run.op, 16, [(s.nbytes, s.seconds) for s in run.samples])
    assert fit.alpha == pytest.approx(18e-6, rel=0.03)
    assert fit.bandwidth == pytest.approx(21e9, rel=0.02)
    assert fit.r2 > 0.999


def test_rows_that_are_not_measurements_are_dropped_with_notes(tmp_path, rtc):
    text = hccl_output(18e-6, 21e9, 16).splitlines()
    text[3] = text[3].split("|")[0] + "| 1e200 | 0.0 | success"      # an absurd time
    text[4] = "abc | 12 | 1 | success"                              # not a row
    text.append("70000 | nan | 1 | success")
    run = read_bench_output("all_reduce_x.txt", "\n".join(text) + "\n")
    assert len(run.samples) == 7
    assert any("is not a measurement" in n for n in run.notes)
    assert any("not a result row" in n for n in run.notes)
    path = tmp_path / "results.txt"          # a name that says no collective
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    got = rtc("calibrate", str(path), "--link", "roce-200ge", "--ranks", "16")
    assert got.returncode == 2 and "do not say which collective" in got.stderr
    got = rtc("calibrate", str(path), "--link", "roce-200ge", "--ranks", "16", "--op", "allreduce")
    assert got.returncode == 0 and "is not a measurement" in got.stderr
    named = tmp_path / "all_gather_test.txt"
    named.write_text("\n".join(text) + "\n", encoding="utf-8")
    got = rtc("calibrate", str(named), "--link", "roce-200ge", "--ranks", "16", "--op", "allreduce")
    assert got.returncode == 2 and "the file names say allgather" in got.stderr
