"""Write the rules reference (``docs/rules.md``) from the rule catalogue.

One entry per rule, sorted by id: the id and name, the severity (and the other severities
it is reported at, with the case of each), the one-line summary, the module that declares
it, then the What / Why / Example / Fix paragraphs of its explanation (the text ``rtc
explain RTCnnn`` prints) and ``since`` where the rule records it.

Usage (from the repository root, with rtc importable)::

    .venv/bin/python tools/rules_reference.py --write   # rewrites docs/rules.md
    .venv/bin/python tools/rules_reference.py           # prints it

``tests/test_docs_site.py`` fails when ``docs/rules.md`` differs from :func:`render`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rtc_deps import require_project_deps  # noqa: E402

require_project_deps(__file__)  # one line and exit 2 under a Python without rtc's deps

#: The page this script writes, and the command that rewrites it.
OUTPUT = REPO / "docs" / "rules.md"
REGENERATE = ".venv/bin/python tools/rules_reference.py --write"

#: The labels of an explanation's paragraphs, in the order the page shows them.
_LABEL = re.compile(r"^(What|Why[^:\n]{0,30}|Example|Fix):\s*", re.MULTILINE)


def catalogue() -> tuple:
    """Every rule of ``rtc.catalogue.RULES``, sorted by id."""
    from rtc.catalogue import RULES

    return tuple(sorted(RULES, key=lambda r: r.code))


def declaring_modules(rules: tuple) -> dict[str, str]:
    """rule id -> the file (``rtc/checks/ports.py``) of the module that declares it (the
    rule records it: :attr:`rtc.rules.Rule.path`)."""
    return {rule.code: rule.path for rule in rules if rule.module}


def paragraphs(explanation: str) -> list[tuple[str, str]]:
    """(label, text) of each labelled paragraph, lines joined with spaces; text before
    the first label is labelled ``""``."""
    parts = _LABEL.split(explanation)
    out = [("", parts[0])] if parts[0].strip() else []
    out += list(zip(parts[1::2], parts[2::2]))
    return [(label, " ".join(text.split())) for label, text in out if text.strip()]


def _markdown(text: str) -> str:
    """Escape ``<``, ``*`` and ``_`` outside code spans so the text renders as written."""
    pieces = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(pieces), 2):
        pieces[i] = (pieces[i].replace("\\", "\\\\").replace("<", "&lt;")
                     .replace("*", "\\*").replace("_", "\\_"))
    return "".join(pieces)


def render_rule(rule, module: str | None) -> str:
    """The entry of one rule."""
    lines = [f"## {rule.code} {rule.name}", "",
             f"**{rule.severity.name.lower()}**: {_markdown(rule.summary)}"]
    if module:
        lines[-1] += f" Declared in `{module}`."
    for severity, case in getattr(rule, "also", ()):
        lines += ["", f"Also **{severity.name.lower()}**: {_markdown(case)}."]
    since = getattr(rule, "since", None)
    if since:
        lines += ["", f"Since: {_markdown(str(since))}."]
    for label, text in paragraphs(rule.explanation):
        lines += ["", f"**{label}:** {_markdown(text)}" if label else _markdown(text)]
    return "\n".join(lines) + "\n"


def render() -> str:
    """The whole page."""
    rules = catalogue()
    modules = declaring_modules(rules)
    counts = {s: sum(1 for r in rules if r.severity.name.lower() == s)
              for s in ("error", "warning", "note")}
    head = [
        f"<!-- Generated from the rule catalogue by `{REGENERATE}`;",
        "     do not edit by hand: change the rule and regenerate. -->", "",
        "# Rules", "",
        f"Every rule rtc can report: {len(rules)} rules ({counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['note']} notes by default). `rtc rules` lists "
        "them and `rtc explain RTCnnn` (or the rule's name) prints one entry. A `policy RULE "
        "error|warn|allow` line in the cluster or a job block, and `--strict`, change the "
        "severity a finding is reported at.", "",
        "| id | name | severity | summary |", "|---|---|---|---|"]
    head += [f"| [{r.code}](#{r.code.lower()}-{r.name}) | `{r.name}` | "
             f"{r.severity.name.lower()} | {_markdown(r.summary).replace('|', '&#124;')} |"
             for r in rules]
    body = [render_rule(r, modules.get(r.code)) for r in rules]
    return "\n".join(head) + "\n\n" + "\n".join(body)


def main(argv: list[str]) -> int:
    """Print the page, or write it to docs/rules.md with ``--write``."""
    text = render()
    if argv == ["--write"]:
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUTPUT.relative_to(REPO)} ({text.count(chr(10))} lines)", file=sys.stderr)
    elif argv:
        print(f"usage: {Path(__file__).name} [--write]", file=sys.stderr)
        return 2
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
