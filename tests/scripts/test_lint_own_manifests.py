"""`rtc lint` of the manifests `rtc compile --target k8s` writes: no error or warning for
any example (before: RTC530 on D1's LeaderWorkerSet, whose workers' `$((LWS_WORKER_INDEX *
1))` was read as 0; RTC205 on the A3 example's, whose 16-NPU pods were checked as the
default Atlas 800T A2). Each LWS pod's index is known (leader 0, worker i), so its
arithmetic is evaluated per pod; a guessed server model gives an RTC465 note."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES, run_main
from rtc.api.linting import lint_scripts
from rtc.scripts.shell import known_arithmetic

#: the examples `--target k8s` writes manifests for (the others are refused with RTC770 /
#: RTC002, tested in tests/plan/test_kubernetes.py)
K8S_EXAMPLES = ["a2-1node-tp8", "a2-2node-dp2-tp8", "a2-2node-pp2-tp8", "a3-2node-dp2-tp16",
                "gpu-gb200-nvl72-tp8", "gpu-h100-2node-dp2-tp8", "gpu-pcie-2x4-dp2-tp4",
                "gpu-pcie-4x2-dp4-tp2", "gpu-pd-h100", "pd-a3"]


def _manifests(tmp_path: Path, monkeypatch, example: str) -> list[tuple[str, str]]:
    out = tmp_path / example
    assert run_main(monkeypatch, "compile", str(EXAMPLES / f"{example}.rtc"), "--target",
                    "k8s", "--out-dir", str(out)) == 0
    return [(str(p), p.read_text()) for p in sorted(out.glob("*.yaml"))]


def _loud(rep) -> list[str]:
    return [f"{d.code} {d.message}" for d in rep.diagnostics if d.severity.name != "NOTE"]


def test_every_example_that_has_k8s_manifests_is_listed(tmp_path, monkeypatch):
    """The list above is every example --target k8s accepts (so a new one is linted too)."""
    ok = []
    for p in sorted(EXAMPLES.glob("*.rtc")):
        if p.stem.startswith("family-"):
            continue          # 1,024+ servers: refused (RTC770 / RTC776), and slow
        out = tmp_path / p.stem
        if run_main(monkeypatch, "compile", str(p), "--target", "k8s", "--out-dir",
                    str(out)) == 0:
            ok.append(p.stem)
    assert ok == K8S_EXAMPLES


@pytest.mark.parametrize("example", K8S_EXAMPLES)
def test_rtc_lint_of_rtcs_own_manifests_finds_nothing(example, tmp_path, monkeypatch):
    files = _manifests(tmp_path, monkeypatch, example)
    for label, text in files:
        assert _loud(lint_scripts([(label, text)])) == [], label
    assert _loud(lint_scripts(files)) == []


def test_d1_workers_start_at_their_own_dp_rank(tmp_path, monkeypatch):
    files = dict(_manifests(tmp_path, monkeypatch, "a2-2node-dp2-tp8"))
    lws = next(t for n, t in files.items() if n.endswith("lws-deepseek.yaml"))
    assert '"$((LWS_WORKER_INDEX * 1))"' in lws
    rep = lint_scripts([("lws-deepseek.yaml", lws)])
    assert _loud(rep) == []
    # the failing form: a worker that starts at DP rank 0 like the leader
    bad = lws.replace('"$((LWS_WORKER_INDEX * 1))"', '"$((LWS_WORKER_INDEX * 0))"')
    codes = [x.split()[0] for x in _loud(lint_scripts([("lws-deepseek.yaml", bad)]))]
    assert codes == ["RTC530"]


def test_a3_pods_are_checked_as_a3_with_a_note_saying_so(tmp_path, monkeypatch):
    files = dict(_manifests(tmp_path, monkeypatch, "a3-2node-dp2-tp16"))
    lws = next(t for n, t in files.items() if n.endswith("lws-deepseek.yaml"))
    rep = lint_scripts([("lws-deepseek.yaml", lws)])
    assert _loud(rep) == []
    notes = [d for d in rep.diagnostics if d.code == "RTC465"]
    assert [d.message for d in notes] == [
        "a node uses 16 NPUs, more than the 8 of the default atlas-800t-a2: guessed the "
        "servers are atlas-800-a3 (16 NPUs each) and checked them as such"]
    assert notes[0].hint.startswith("give --hardware atlas-800-a3")
    # a fact, not a guess: no note; and a real mismatch stays an error
    rep = lint_scripts([("lws-deepseek.yaml", lws)], hardware="atlas-800-a3")
    assert not [d for d in rep.diagnostics if d.code == "RTC465"]
    rep = lint_scripts([("lws-deepseek.yaml", lws)], hardware="atlas-800t-a2")
    assert "RTC205" in {d.code for d in rep.diagnostics}


@pytest.mark.parametrize("text, values, want", [
    ('a "$((LWS_WORKER_INDEX * 8))" b', {"LWS_WORKER_INDEX": "2"},
     'a "' + "16".ljust(25) + '" b'),
    ("$(( (X + 1) * 2 ))", {"X": "3"}, "8" + " " * 17),
    ("$((${X} / 2 - 7 % 3))", {"X": "7"}, "2" + " " * 20),
    ("$((X * 2))", {"X": "$(status.podIP)"}, "$((X * 2))"),     # not an integer: kept
    ("$((Y * 2))", {}, "$((Y * 2))"),                            # unknown: kept
    ("$((X ** 2))", {"X": "3"}, "$((X ** 2))"),
])
def test_known_arithmetic_keeps_columns(text, values, want):
    assert known_arithmetic(text, values) == want
    assert len(known_arithmetic(text, values)) == len(text)
