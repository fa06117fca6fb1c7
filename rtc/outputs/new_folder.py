"""Writing a new output folder all or nothing: the files go into a hidden folder beside it,
which is renamed into place once every file is complete.

A first ``rtc compile --out-dir build`` at 8,192 servers writes 24,580 files. Written one by
one through :func:`rtc.outputs.files.write_all` (a temporary name, then a rename each), the
renames alone cost ~0.8 s of kernel time on this project's ext4 disks; here there is one
rename for the whole folder, and no reader (a launcher, ``rsync``) ever sees part of it.
"""

from __future__ import annotations

import errno
import os
import re
import stat

from rtc import interrupts
from rtc.outputs.files import (CREATE_FLAGS, MANIFEST, TransactionError, fill_file,
                            manifest_text, sync_all, write_all)

#: The empty file that marks a hidden folder as rtc's while it is written, locked
#: (``flock``) by the run writing it: :func:`sweep_hidden` removes only a folder holding
#: it unlocked, that is, one whose run has died.
MARK = ".rtc-partial"

try:
    import fcntl
except ImportError:  # no flock (Windows): nothing is swept, so no live folder can be
    fcntl = None

def write_new_folder(folder: str | os.PathLike, files, *, manifest=None,
                     durable: bool | None = None) -> list[str]:
    """Create ``folder``, which must not exist, holding exactly ``files`` (``(name, text,
    bytes or a zero-argument callable giving either, mode or None)``; plain file names) and
    the :data:`~rtc.outputs.files.MANIFEST` listing ``manifest`` when that is given. Returns
    the paths written (``folder`` joined with each name), in order; a name given twice is
    written once, with the last data. Callables are called after every other file is
    written (as in :func:`rtc.outputs.files.write_all`).

    The files are written under their own names into ``.NAME.XXXXXXXX.tmp`` beside
    ``folder`` (created with the umask's permissions, as ``mkdir`` would, and marked as
    rtc's by an empty :data:`MARK` file while it is written), flushed (one ``sync`` for
    all, or an fsync each when ``durable``; None: when there are at most 64), and that
    folder is then renamed to ``folder``. On any failure, Ctrl-C or SIGTERM the hidden
    folder is removed and ``folder`` is never created. When another process created
    ``folder`` meanwhile (two runs at once), the same files are written into it with
    :func:`rtc.outputs.files.write_all`, as into any existing folder. Afterwards, what a
    killed run left beside ``folder`` is removed (:func:`sweep_hidden`). The hidden name
    must fit the file system (:func:`fits`).

    Raises :class:`~rtc.outputs.files.TransactionError` naming the file or folder that could
    not be written (the parent folder missing or not writable, a name that is not a plain
    file name, a full disk), and re-raises what a callable raised."""
    folder = os.fspath(folder)
    parent, base = os.path.split(os.path.abspath(folder))
    entries = _entries(folder, files, manifest)
    _check_parent(folder, parent)
    if durable is None:
        durable = len(entries) <= 64
    hidden = _Hidden(parent, base)
    try:
        _write_hidden(hidden, folder, entries, durable)
        try:
            os.rename(hidden.path, folder)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not os.path.isdir(folder):
                raise TransactionError(folder, exc) from exc
            hidden.remove()   # a folder made meanwhile: written into as an existing one
            return write_all(folder, [(n, data, mode) for n, (data, mode) in entries.items()
                                      if n != MANIFEST], manifest=manifest, durable=durable)
        hidden.path = None
        if durable:
            _fsync_folder(parent)
    except BaseException:
        with interrupts.held():   # a second Ctrl-C must not stop the clean-up half-way
            hidden.remove()
        raise
    sweep_hidden(folder)
    return [os.path.join(folder, name) for name in entries]


def fits(folder: str | os.PathLike) -> bool:
    """Whether the hidden name of ``folder`` (``.NAME.XXXXXXXX.tmp``: 14 bytes more than
    its name) fits the longest file name of its parent's file system (255 bytes where that
    cannot be asked). A folder whose name does not fit is made by ``mkdir`` and written
    with :func:`rtc.outputs.files.write_all` instead."""
    parent, base = os.path.split(os.path.abspath(os.fspath(folder)))
    try:
        longest = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        longest = 255
    return len(os.fsencode(base)) + 14 <= longest


def _write_hidden(hidden: "_Hidden", folder: str, entries: dict, durable: bool) -> None:
    """Create the hidden folder and write ``entries`` into it (each callable's result kept
    in ``entries``), flushed; TransactionError naming the file that failed."""
    current = folder
    try:
        hidden.create()
        for name in sorted(entries, key=lambda n: callable(entries[n][0])):
            current = os.path.join(folder, name)
            data, mode = entries[name]
            entries[name] = (_write_file(os.path.join(hidden.path, name), data, mode,
                                         durable, hidden.umask), mode)
        current = folder
        _flush(hidden.path, durable)
        hidden.unmark()
    except OSError as exc:
        if isinstance(exc, TransactionError):
            raise
        raise TransactionError(current, exc) from exc


def _entries(folder: str, files, manifest) -> dict:
    """name -> (payload, mode), in order, the last data of a name kept; TransactionError for
    a name that is not a plain file name."""
    entries: dict = {}
    wanted = list(files)
    if manifest is not None:
        wanted.append((MANIFEST, manifest_text(manifest), None))
    for name, data, mode in wanted:
        path = os.path.join(folder, name)
        if name in ("", ".", ".."):
            raise TransactionError(path, IsADirectoryError(errno.EISDIR, "it is a folder"))
        if os.sep in name or (os.altsep and os.altsep in name):
            raise TransactionError(path, FileNotFoundError(
                errno.ENOENT, f"the folder {os.path.dirname(path)} does not exist"))
        entries.pop(name, None)
        entries[name] = (data, mode)
    return entries


def _check_parent(folder: str, parent: str) -> None:
    if not os.path.isdir(parent):
        raise TransactionError(folder, FileNotFoundError(
            errno.ENOENT, f"the folder {parent} does not exist"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TransactionError(folder, PermissionError(
            errno.EACCES, f"the folder {parent} is not writable"))


class _Hidden:
    """The hidden folder the files are written into: named before it is created, so an
    interrupt between the ``mkdir`` and the next line leaves nothing behind, and marked
    by a locked :data:`MARK` until it is complete."""

    def __init__(self, parent: str, base: str) -> None:
        self.parent, self.base = parent, base
        self.path: str | None = None
        self.mark_fd: int | None = None
        self.umask = os.umask(0)
        os.umask(self.umask)

    def create(self) -> None:
        for _ in range(100):
            self.path = os.path.join(self.parent, f".{self.base}.{os.urandom(4).hex()}.tmp")
            try:
                os.mkdir(self.path)
            except FileExistsError:
                self.path = None  # someone else's: never removed
                # (any other error: nothing was made, and remove() finds nothing)
                continue
            self.mark_fd = os.open(os.path.join(self.path, MARK), CREATE_FLAGS, 0o600)
            if fcntl is not None:
                fcntl.flock(self.mark_fd, fcntl.LOCK_EX)
            return
        raise FileExistsError(errno.EEXIST, "no free temporary name", self.parent)

    def unmark(self) -> None:
        """Remove the mark (the folder is complete) and let go of its lock."""
        os.unlink(os.path.join(self.path, MARK))
        self._close_mark()

    def remove(self) -> None:
        """Remove the hidden folder and the files in it (only regular files are made)."""
        self._close_mark()
        if self.path is not None:
            _remove_files_and_folder(self.path)
            self.path = None

    def _close_mark(self) -> None:
        if self.mark_fd is not None:
            fd, self.mark_fd = self.mark_fd, None
            os.close(fd)


def _write_file(path: str, data, mode: int | None, durable: bool, umask: int) -> bytes:
    """Create ``path`` holding ``data`` (a callable is called first) with permission bits
    ``mode``, else 0o666 less the umask; the bytes written."""
    if callable(data):
        data = data()
    payload = data if isinstance(data, bytes) else data.encode("utf-8")
    want = mode if mode is not None else 0o666 & ~umask
    fd = os.open(path, CREATE_FLAGS, want)
    try:
        fill_file(fd, path, payload, want, umask, durable)
    finally:
        os.close(fd)
    return payload


def _flush(path: str, durable: bool) -> None:
    if durable:
        _fsync_folder(path)
    else:
        sync_all()


def _fsync_folder(path: str) -> None:
    """fsync a folder so the names in it are on disk (a no-op where folders cannot be
    opened, as on Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF):  # file systems that cannot
            raise
    finally:
        os.close(fd)


def _remove_files_and_folder(path: str) -> bool:
    """Remove the regular files in ``path`` and then ``path``; True when it is gone. A
    folder holding anything else (a symlink, a sub-folder: not rtc's) is left alone."""
    names = _regular_files(path)
    if names is None:
        return False
    for name in sorted(names, key=lambda n: n == MARK):  # the mark goes last
        try:
            os.unlink(os.path.join(path, name))
        except OSError:
            pass
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True


def _regular_files(path: str) -> list[str] | None:
    """The names in ``path`` when all are regular files, else None."""
    try:
        with os.scandir(path) as it:
            entries = [(e.name, e.is_file(follow_symlinks=False)) for e in it]
    except OSError:
        return None
    return [name for name, _r in entries] if all(r for _n, r in entries) else None


def sweep_hidden(folder: str | os.PathLike) -> None:
    """Remove what runs writing ``folder`` left beside it when they were killed (SIGKILL,
    a power cut): a ``.NAME.XXXXXXXX.tmp`` folder of regular files holding rtc's
    :data:`MARK`, which no live run holds locked. A folder of that name that is not rtc's
    (no mark, a sub-folder, a symlink), or that a run is still writing, is never touched;
    nor is anything where ``flock`` is missing."""
    parent, base = os.path.split(os.path.abspath(os.fspath(folder)))
    pattern = re.compile(rf"\.{re.escape(base)}\.[0-9a-f]{{8}}\.tmp\Z")
    try:
        names = os.listdir(parent) if fcntl is not None else []
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        try:
            if pattern.match(name) and stat.S_ISDIR(os.lstat(path).st_mode):
                _sweep_one(path)
        except OSError:
            pass


def _sweep_one(path: str) -> None:
    """Remove the hidden folder ``path`` if it is a dead run's (see :func:`sweep_hidden`)."""
    names = _regular_files(path)
    if not names or MARK not in names:
        return
    fd = os.open(os.path.join(path, MARK), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return   # a live run is writing it
        _remove_files_and_folder(path)
    finally:
        os.close(fd)
