"""The documentation: the README stays a front page, its links and the site's pages
resolve (`mkdocs build --strict`), and the generated pages are current (docs/rules.md from
the rule catalogue; docs/language.md is checked by tests/syntax/test_language_reference.py)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("rtc_rules_reference",
                                               ROOT / "tools" / "rules_reference.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

README = ROOT / "README.md"


def test_docs_rules_md_is_the_generated_reference():
    doc = ROOT / "docs" / "rules.md"
    assert doc.exists(), f"docs/rules.md is missing: run `{reference.REGENERATE}`"
    assert doc.read_text(encoding="utf-8") == reference.render(), (
        f"docs/rules.md is out of date with the rule catalogue: run `{reference.REGENERATE}`")


def test_the_rules_reference_has_one_entry_per_rule_with_its_parts():
    from rtc.catalogue import RULES

    text = reference.render()
    entries = re.findall(r"^## (RTC\d{3}) ", text, re.MULTILINE)
    assert entries == sorted(r.code for r in RULES)
    entry = text.split("## RTC208 duplicate-device-ip\n", 1)[1].split("\n## ", 1)[0]
    assert entry.startswith("\n**error**: Two devices have the same RoCE IP. Declared in "
                            "`rtc/checks/")
    for label in ("What", "Why", "Example", "Fix"):
        assert f"\n**{label}:** " in entry, label
    assert reference.paragraphs("Intro.\nWhat: a\nb.\nWhy it breaks: c.\nFix: d.") == [
        ("", "Intro."), ("What", "a b."), ("Why it breaks", "c."), ("Fix", "d.")]
    assert reference._markdown("a <b> *c* `<d> *e*`") == r"a &lt;b> \*c\* `<d> *e*`"


def test_readme_is_a_front_page_whose_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= 300
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert "docs/rules.md" in links and "docs/CHANGELOG.md" in links
    for link in links:
        if "://" not in link:
            assert (ROOT / link).exists(), link


def test_readme_commands_are_where_ci_reads_them():
    lines = README.read_text(encoding="utf-8").splitlines()
    test_cmd = lines[lines.index("<!-- test-command -->") + 2]
    assert test_cmd == ("python3 -m venv .venv && .venv/bin/pip install -q '.[test]' "
                        "&& .venv/bin/pytest -q")
    main_cmd = lines[lines.index("<!-- main-command -->") + 2]
    assert main_cmd.startswith("python3 -m venv .venv && .venv/bin/pip install -q . && "
                               ".venv/bin/rtc compile examples/")


def test_the_site_builds_strictly(tmp_path):
    """Broken links, missing anchors and pages left out of the nav fail the build."""
    pytest.importorskip("mkdocs")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "rules" / "index.html").is_file()
