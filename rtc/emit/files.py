"""Writing outputs: completely or not at all."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _write_special(target: str, payload: bytes, *, append: bool = False) -> None:
    """Write ``payload`` straight into an existing non-regular file (a character device
    such as /dev/stdout, a FIFO, a socket): open it for writing and write, no rename."""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | (os.O_APPEND if append else 0)
    fd = os.open(target, flags)
    try:
        view = memoryview(payload)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike, text: str | bytes, *, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``text`` (UTF-8; ``bytes`` are written as they are) to ``path`` atomically: a
    temporary file in the same folder is written, flushed, fsynced (when ``durable``) and
    renamed over ``path``. An existing file is replaced only when the new one is complete;
    on any error (or SIGTERM / Ctrl-C, which the CLI turns into exceptions) it is left
    untouched and the temporary file is removed. ``mode`` sets permission bits (e.g. 0o755
    for scripts). Writers of many files pass ``durable=False`` and call :func:`sync_all`
    once at the end (thousands of fsyncs cost minutes).

    Special targets:

    * a symbolic link is followed: the temporary file is created next to the link's final
      target and renamed over that target, so the link itself stays a link;
    * an existing target that is not a regular file (a character device such as
      ``/dev/stdout`` or ``/dev/null``, a FIFO, a socket) is opened and written directly,
      without a temporary file or rename, so device nodes and pipes are never replaced
      (such a write is not atomic); so is any existing path under ``/dev/`` or ``/proc/``
      (``-o /dev/stdout`` redirected to a file appends to it);
    * a directory raises :class:`IsADirectoryError`.

    Raises OSError when the folder does not exist or is not writable."""
    payload = text if isinstance(text, bytes) else text.encode("utf-8")
    raw = os.path.abspath(os.fspath(path))
    if raw.startswith(("/dev/", "/proc/")) and os.path.exists(raw) and not os.path.isdir(raw):
        # /dev/stdout, /dev/fd/N, /proc/self/fd/N: write through the descriptor's file
        # (appending when it is a redirected regular file), never rename over it.
        _write_special(raw, payload, append=os.path.isfile(raw))
        return
    target = Path(os.path.realpath(os.fspath(path)))  # follow symlinks (also dangling ones)
    st = _existing(target, path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_special(str(target), payload)
        return
    _replace(target, payload, mode, st, durable)


def _existing(target: Path, path) -> os.stat_result | None:
    """``os.stat`` of ``target``, None when there is none; IsADirectoryError for a folder."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    return st


def _replace(target: Path, payload: bytes, mode: int | None, st, durable: bool) -> None:
    """Write a temporary file next to ``target`` and rename it over ``target``; on any
    error the temporary file is removed and ``target`` left untouched."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        _set_mode(tmp, mode, st)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _set_mode(tmp: str, mode: int | None, st) -> None:
    """Permission bits of the new file: ``mode``, else those of the file it replaces
    (``st``), else 0o666 less the umask."""
    if mode is not None:
        os.chmod(tmp, mode)
    elif st is not None:
        os.chmod(tmp, st.st_mode & 0o7777)
    else:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` name the same existing file (symlinks and hard links
    included), or resolve to the same path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def sync_all() -> None:
    """Flush written files to disk once (after many ``durable=False`` writes)."""
    if hasattr(os, "sync"):
        os.sync()


MANIFEST = ".rtc-outputs"
"""File in an ``--out-dir`` folder listing the files the last ``rtc compile`` wrote there."""


def prune_outputs(folder: str | os.PathLike, names: set[str]) -> list[str]:
    """Record ``names`` (plain file names) as the outputs of ``folder`` in :data:`MANIFEST`,
    and delete the files the previous manifest listed that ``names`` no longer has (the
    env files, scripts and tables of servers or jobs an earlier plan had). Only regular
    files rtc itself listed are removed; a file without a manifest entry, a symlink or a
    folder is left alone, and a manifest that is a symlink is replaced, not followed.
    Returns the removed names, sorted. Raises OSError when the manifest cannot be
    written."""
    folder = Path(folder)
    manifest = folder / MANIFEST
    old: set[str] = set()
    if manifest.is_symlink():
        manifest.unlink()  # never read or write through a link (it may point anywhere)
    else:
        try:
            old = set(manifest.read_text(encoding="utf-8").splitlines())
        except (OSError, UnicodeDecodeError):
            pass
    removed = []
    for name in sorted(old - names):
        if not name or name in (".", "..", MANIFEST) or "/" in name or "\\" in name:
            continue
        path = folder / name
        if path.is_file() and not path.is_symlink():
            try:
                path.unlink()
                removed.append(name)
            except OSError:
                pass
    write_atomic(manifest, "".join(f"{n}\n" for n in sorted(names)), durable=False)
    return removed
