"""Package data: the lark grammar, the JSON Schemas and the TOML data tables, and the
per-user cache folder that keeps what is costly to rebuild at every start (lark's parser,
the parsed TOML tables).

In an installed wheel they live under ``rtc/_data/{grammar,schemas}`` (copied there from the
repository's top-level ``grammar/`` and ``schemas/`` by the build, see ``pyproject.toml``).
When running from a source checkout the top-level folders are used directly.
"""

from __future__ import annotations

import functools
import json
import marshal
import os
import sys
import zlib
from pathlib import Path

#: The installed ``rtc`` package folder. Package data is read from the file system next
#: to the modules (rtc is installed as files, never run from a zip archive), which keeps
#: ``importlib.resources`` and its imports (tempfile, zipfile, random) out of start-up.
PACKAGE_DIR = Path(__file__).resolve().parent


def cache_folder() -> str | None:
    """rtc's per-user cache folder, ``$XDG_CACHE_HOME/rtc`` (default ``~/.cache/rtc``; a
    relative ``XDG_CACHE_HOME`` is ignored, as the XDG Base Directory specification says),
    created if missing; None when it cannot be created (then nothing is cached)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "rtc")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder


#: Bumped when the layout of a cached TOML table changes.
_TOML_CACHE_FORMAT = 1


def package_toml(subpackage: str, name: str) -> dict:
    """The parsed TOML data file ``name`` of ``rtc.<subpackage>`` (``tomllib``), e.g.
    ``("model", "presets.toml")``. Raises OSError when the file is missing (a broken
    install) and ``tomllib.TOMLDecodeError`` when it is malformed.

    Parsing costs ~8% of a small compile's instructions (tomllib is pure Python), so the
    result is kept in :func:`cache_folder` as ``marshal`` data, keyed as Python keys its
    ``.pyc`` files: the file's path, size and modification time (ns), with the Python
    version (marshal's format is per version). A cache that is missing, stale, unreadable
    or corrupt is rebuilt; one that cannot be written is skipped."""
    path = os.path.join(PACKAGE_DIR, subpackage, name)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        key = (_TOML_CACHE_FORMAT, path, st.st_size, st.st_mtime_ns)
        cached = _cache_file(path, name)
        data = _read_cached(cached, key)
        if data is None:
            import tomllib  # only on a cache miss: its import is ~2% of a small run

            data = tomllib.loads(f.read().decode("utf-8"))
            _write_cached(cached, key, data)
    return data


def _cache_file(path: str, name: str) -> str | None:
    folder = cache_folder()
    if folder is None:
        return None
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(folder, f"{name}-{zlib.crc32(path.encode()):08x}-{tag}.marshal")


def _read_cached(cached: str | None, key: tuple) -> dict | None:
    """The data of ``cached`` when it was made under ``key``, else None."""
    if cached is None:
        return None
    try:
        with open(cached, "rb") as f:
            got = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if type(got) is tuple and len(got) == 2 and got[0] == key and type(got[1]) is dict:
        return got[1]
    return None


def _write_cached(cached: str | None, key: tuple, data: dict) -> None:
    """Keep ``data`` under ``key`` in ``cached`` (a temporary file renamed into place, so
    concurrent runs never read half a file); nothing when it cannot be."""
    if cached is None:
        return
    try:
        blob = marshal.dumps((key, data))
    except ValueError:  # a value marshal cannot keep (a TOML date): parse every time
        return
    tmp = f"{cached}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, cached)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    folder, base = os.path.split(cached)
    name, _crc, tag = base.rsplit("-", 2)
    prune_cache(folder, f"{name}-", f"-{tag}")


#: How many cached copies of one data file (one per install path) or of the grammar (one
#: per grammar version) the cache keeps; the least recently written go first.
CACHE_KEEP = 4


def prune_cache(folder: str, prefix: str, suffix: str, keep: int = CACHE_KEEP) -> int:
    """Delete all but the ``keep`` newest files of ``folder`` whose names start with
    ``prefix`` and end with ``suffix`` (every clone, virtual environment or temporary copy
    of rtc adds its own entry, so without this the cache grows without bound). Called on a
    cache miss only. Returns how many files were deleted; never raises."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(suffix)]
        if len(names) <= keep:
            return 0
        aged = sorted(names, key=lambda n: os.stat(os.path.join(folder, n)).st_mtime_ns)
        for n in aged[:-keep]:
            os.unlink(os.path.join(folder, n))
        return len(aged) - keep
    except OSError:
        return 0


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
