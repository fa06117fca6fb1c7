"""Golden outputs of `rtc validate` in every format for a few inputs.

Run from tests/data/ranktables with relative paths, so the outputs name files as a CI job
would. The tool version is replaced by <VERSION>. To regenerate after an intended change:
`RTC_UPDATE_GOLDEN=1 pytest tests/tables/test_validate_golden.py` (then review the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import GOLDEN, TESTS, run_rtc
from rtc import __version__

DATA = TESTS / "data" / "ranktables"
OUT = GOLDEN / "validate"

CASES = {
    # name: (files, exit code)
    "clean": (["corpus/v1_0__hcomm_example__1srv_8dev.json"], 0),
    "semantic-v12": (["validate/v1_2_semantic.json"], 1),
    "two-files": (["validate/v1_0_interleaved.json",
                   "corpus/bad__v1_2_with_comments__hccl_doc_a3_superpod_2pod_4srv_4dev.jsonc"], 1),
}
FORMATS = {"text": "text.txt", "json": "report.json", "github": "github.txt", "sarif": "report.sarif"}


def _run(case: str, fmt: str):
    files, _ = CASES[case]
    res = run_rtc("validate", "--format", fmt, *files, cwd=DATA)
    out = res.stdout.replace(__version__, "<VERSION>")
    if fmt == "sarif" and out:
        out = _sarif_rules_by_reference(out)
    return res, out


def _sarif_rules_by_reference(text: str) -> str:
    """The rule texts come from rtc.rules (other modules' wording); check them against the
    registry here and keep only a reference in the golden file."""
    from rtc.catalogue import get_rule

    doc = json.loads(text)
    for entry in doc["runs"][0]["tool"]["driver"]["rules"]:
        r = get_rule(entry["id"])
        assert entry["shortDescription"]["text"] == r.summary
        assert entry["fullDescription"]["text"] == r.explanation
        assert entry["help"]["text"].endswith(f"(rtc explain {r.code})")
        for key in ("shortDescription", "fullDescription", "help"):
            entry[key] = {"text": f"<rtc.rules {r.code} {key}>"}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output(case, fmt):
    res, out = _run(case, fmt)
    assert res.returncode == CASES[case][1], res.stderr
    path = OUT / case / FORMATS[fmt]
    if os.environ.get("RTC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(out, encoding="utf-8")
    assert path.is_file(), f"missing golden {path}"
    assert out == path.read_text(encoding="utf-8")


def test_goldens_are_not_empty_and_name_the_rules():
    semantic = (OUT / "semantic-v12" / "text.txt").read_text(encoding="utf-8")
    for code in ("RTC630", "RTC633", "RTC634", "RTC637", "RTC208", "RTC213", "RTC205"):
        assert f"[{code}]" in semantic
    assert (OUT / "clean" / "github.txt").read_text(encoding="utf-8") == ""
