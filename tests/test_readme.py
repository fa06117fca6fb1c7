"""The README and the guides, run as written: every ```sh and ```console block that is not
marked as a template runs in a temporary copy of the repository, from its root, with the
Python environment running the tests (`.venv`) on PATH and as `.venv` in the copy.

* A ```sh block runs as one bash script; it passes when no command in it exits with 2 or
  more (usage, I/O or internal error; 1 is "problems found", which examples may show).
* A ```console block is lines `$ COMMAND` each followed by the output it shows: each
  command runs on its own (from the copy's root) and its stdout and stderr, together, must
  be that output.
* Not run: blocks of other languages (```text, ```yaml, ...), a block right after a
  `<!-- template -->` line, and the set-up and test commands (after `<!-- main-command -->`
  and `<!-- test-command -->`), which are what made this environment.

The blocks of one page run in order in one copy (the tour writes `cluster.rtc` and later
blocks read it). `RTC_UPDATE_DOCS=1 pytest -q tests/test_readme.py` rewrites the outputs
the console blocks show with what the commands print now: read the diff before committing.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import ROOT

#: The pages whose blocks run: the README, then each guide (the generated references hold
#: no shell blocks).
PAGES = ["README.md"] + sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")
    if p.name not in ("language.md", "rules.md"))

#: What the copy leaves out: version control, environments, build outputs, caches.
_SKIP = shutil.ignore_patterns(".git", ".venv", "venv", "site", "build", "preflight-results",
                               "__pycache__", ".pytest_cache", ".hypothesis", "results",
                               "*.egg-info")
_FENCE = re.compile(r"^(?P<mark><!-- [\w-]+ -->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$",
                    re.MULTILINE | re.DOTALL)
_NOT_RUN = ("<!-- template -->\n", "<!-- main-command -->\n", "<!-- test-command -->\n")
_PREAMBLE = ("set -o pipefail\n"
             "trap 'rc=$?; if [ $rc -ge 2 ]; then echo \"exit $rc: $BASH_COMMAND\" >&2; "
             "exit $rc; fi' ERR\n")
UPDATE = os.environ.get("RTC_UPDATE_DOCS") == "1"


class Block(NamedTuple):
    """One runnable block: its language (sh / console), its first line's number in the
    page, and the offsets of its body in the page's text."""

    lang: str
    line: int
    start: int
    end: int


def runnable_blocks(text: str) -> list[Block]:
    """The page's ```sh and ```console blocks that run, in order."""
    found = []
    for m in _FENCE.finditer(text):
        if m.group("lang") not in ("sh", "console") or (m.group("mark") or "") in _NOT_RUN:
            continue
        found.append(Block(m.group("lang"), text.count("\n", 0, m.start("body")) + 1,
                           m.start("body"), m.end("body")))
    return found


def console_steps(body: str) -> list[tuple[str, str]]:
    """(command, the output shown after it) of each `$ ` line of a console block."""
    steps: list[tuple[str, str]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((line[2:].rstrip("\n"), ""))
        elif steps:
            steps[-1] = (steps[-1][0], steps[-1][1] + line)
        else:
            raise AssertionError(f"console block output before any `$ ` command: {line!r}")
    return steps


def _copy_repository(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the repository with `.venv` pointing at the running environment, and the
    environment its commands run in."""
    root = tmp / "repo"
    shutil.copytree(ROOT, root, ignore=_SKIP, symlinks=True)
    prefix = Path(sys.prefix)
    venv = root / ".venv"
    if (prefix / "bin" / "activate").is_file():
        venv.symlink_to(prefix, target_is_directory=True)
    else:                                    # not a venv: a stand-in with an activate script
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "activate").write_text(f'PATH="{prefix / "bin"}:$PATH"\n')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RTC_STUB_", "RTC_UPDATE", "PYTEST_"))}
    env.update(PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
               PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", HOME=str(tmp))
    env.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    return root, env


def _run(command: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=root, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)


def _check_console(page: str, block: Block, body: str, root: Path,
                   env: dict[str, str]) -> tuple[str, list[str]]:
    """Run a console block: (its body with the outputs printed now, the mismatches)."""
    new, problems = "", []
    for command, shown in console_steps(body):
        out = _run(command, root, env).stdout
        new += f"$ {command}\n{out}"
        if out != shown:
            diff = "".join(difflib.unified_diff(shown.splitlines(True), out.splitlines(True),
                                                "shown", "printed"))
            problems.append(f"{page}:{block.line}: `{command}` prints another output:\n{diff}")
    return new, problems


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs_as_written(page, tmp_path):
    path = ROOT / page
    text = path.read_text(encoding="utf-8")
    blocks = runnable_blocks(text)
    if not blocks:
        return                               # a page of prose, tables and templates
    root, env = _copy_repository(tmp_path)
    problems, bodies = [], []
    for block in blocks:
        body = text[block.start:block.end]
        if block.lang == "sh":
            res = _run(_PREAMBLE + body, root, env)
            if res.returncode >= 2:
                problems.append(f"{page}:{block.line}: the sh block exits {res.returncode}:\n"
                                f"{res.stdout[-2000:]}")
            bodies.append(body)
        else:
            new, found = _check_console(page, block, body, root, env)
            problems += found
            bodies.append(new)
    if UPDATE and problems:
        for block, body in reversed(list(zip(blocks, bodies))):
            text = text[:block.start] + body + text[block.end:]
        path.write_text(text, encoding="utf-8")
        problems = [p for p in problems if "sh block exits" in p]
    assert not problems, "\n".join(problems) + (
        "\n(RTC_UPDATE_DOCS=1 rewrites the outputs shown)" if not UPDATE else "")


def test_blocks_are_found_and_templates_left_alone():
    text = ("<!-- test-command -->\n```sh\npytest\n```\n<!-- template -->\n```sh\nrun.sh\n```\n"
            "```text\n$ x\n```\n```console\n$ rtc rules | head -n 1\nRTC001\n```\n"
            "```sh\nrtc check a.rtc\n```\n")
    blocks = runnable_blocks(text)
    assert [(b.lang, b.line) for b in blocks] == [("console", 13), ("sh", 17)]
    assert text[blocks[1].start:blocks[1].end] == "rtc check a.rtc\n"
    assert console_steps("$ a\nout 1\nout 2\n$ b\n") == [("a", "out 1\nout 2\n"), ("b", "")]
    readme = runnable_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme and readme[0].lang == "sh"          # the tour starts with `source ...`
