"""Shared start-up check of the tools/*.py scripts that import rtc: are rtc's dependencies
importable by the Python running the script?

Run with a Python that lacks them (a system ``python3``), a script would otherwise stop in a
``ModuleNotFoundError`` traceback from deep inside rtc (``bashlex``, ``lark``, ...). Instead
:func:`require_project_deps` prints one line naming the missing module and the command to
use (``.venv/bin/python tools/<script>``) and exits with status 2 (usage error, as rtc's).

The module names are those of ``[project] dependencies`` in ``pyproject.toml`` (read with a
regular expression, so this works before anything is installed); a distribution whose import
name differs is mapped in :data:`IMPORT_NAMES`. Only the standard library is used here.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Distribution name (lower case) -> the module it installs, where they differ.
IMPORT_NAMES = {"pyyaml": "yaml"}
#: The oldest Python rtc supports (``requires-python`` of pyproject.toml).
MIN_PYTHON = (3, 11)


def project_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The import names of ``[project] dependencies`` of ``pyproject`` (``["lark", ...]``);
    empty when the file or the list is missing."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return []
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    if block is None:
        return []
    names = re.findall(r"[\"']\s*([A-Za-z0-9][A-Za-z0-9._-]*)", block.group(1))
    return [IMPORT_NAMES.get(n.lower(), n.lower().replace("-", "_")) for n in names]


def missing_module(modules: list[str]) -> str | None:
    """The first of ``modules`` this Python cannot import, or None."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            return name
    return None


def require_project_deps(script: str) -> None:
    """Exit 2 with a one-line message on stderr when this Python is older than
    :data:`MIN_PYTHON` or lacks one of rtc's dependencies; return otherwise.
    ``script`` is the caller's ``__file__``."""
    name = Path(script).name
    fix = (f"run it with the project's venv: .venv/bin/python tools/{name} (make one with "
           f"python3 -m venv .venv && .venv/bin/pip install -e '.[test]')")
    if sys.version_info < MIN_PYTHON:
        have = ".".join(map(str, sys.version_info[:3]))
        need = ".".join(map(str, MIN_PYTHON))
        print(f"{name}: needs Python >= {need}, {sys.executable} is {have}; {fix}",
              file=sys.stderr)
        sys.exit(2)
    absent = missing_module(project_modules())
    if absent is not None:
        print(f"{name}: rtc's dependency '{absent}' is not installed for {sys.executable}; "
              f"{fix}", file=sys.stderr)
        sys.exit(2)
