"""Writing outputs: completely or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, text: str, *, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temporary file in the same folder
    is written, flushed, fsynced (when ``durable``) and renamed over ``path``. An existing
    file is replaced only when the new one is complete; on any error it is left untouched
    and the temporary file is removed. ``mode`` sets permission bits (e.g. 0o755 for
    scripts). Writers of many files pass ``durable=False`` and call :func:`sync_all` once
    at the end (thousands of fsyncs cost minutes).

    Raises OSError when the folder does not exist or is not writable."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            try:
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            except FileNotFoundError:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def sync_all() -> None:
    """Flush written files to disk once (after many ``durable=False`` writes)."""
    if hasattr(os, "sync"):
        os.sync()
