"""Package data: the lark grammar and the JSON Schemas.

In an installed wheel they live under ``rtc/_data/{grammar,schemas}`` (copied there from the
repository's top-level ``grammar/`` and ``schemas/`` by the build, see ``pyproject.toml``).
When running from a source checkout the top-level folders are used directly.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: The installed ``rtc`` package folder. Package data is read from the file system next
#: to the modules (rtc is installed as files, never run from a zip archive), which keeps
#: ``importlib.resources`` and its imports (tempfile, zipfile, random) out of start-up.
PACKAGE_DIR = Path(__file__).resolve().parent


def package_text(subpackage: str, name: str) -> str:
    """The UTF-8 text of data file ``name`` of ``rtc.<subpackage>`` (e.g. ``("model",
    "presets.toml")``). Raises OSError when the file is missing (a broken install)."""
    return (PACKAGE_DIR / subpackage / name).read_text("utf-8")


def _data_dir(name: str) -> Path:
    packaged = PACKAGE_DIR / "_data" / name
    if packaged.is_dir():
        return packaged
    source = PACKAGE_DIR.parent / name
    if source.is_dir():
        return source
    raise FileNotFoundError(f"rtc package data folder '{name}' is missing (broken install?)")


def grammar_path(name: str = "rtc.lark") -> Path:
    """Path of a grammar file shipped with rtc."""
    return _data_dir("grammar") / name


def schema_dir() -> Path:
    """Folder holding rtc's JSON Schemas (``*.schema.json``)."""
    return _data_dir("schemas")


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """Load ``schemas/<name>.schema.json`` as a dict (cached).

    Raises FileNotFoundError when the schema does not exist."""
    with open(schema_dir() / f"{name}.schema.json", encoding="utf-8") as f:
        return json.load(f)
