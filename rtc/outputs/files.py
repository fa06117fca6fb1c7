"""Writing outputs: completely or not at all."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from rtc import interrupts


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
        with interrupts.held():   # a second Ctrl-C must not leave the temporary behind
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


def sync_all() -> None:
    """Flush written files to disk once (after many ``durable=False`` writes)."""
    if hasattr(os, "sync"):
        os.sync()


MANIFEST = ".rtc-outputs"
"""File in an ``--out-dir`` folder listing the files the last ``rtc compile`` wrote there."""


class TransactionError(OSError):
    """A file of a :func:`write_all` transaction could not be written: ``path`` names it,
    ``cause`` is the OS error. Nothing was replaced, except the files in ``leftovers``:
    old files that could not be put back, kept under these temporary names."""

    def __init__(self, path, cause: BaseException, leftovers: list[str] | None = None):
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        super().__init__(getattr(cause, "errno", None), reason, str(path))
        self.path = str(path)
        self.cause = cause
        self.leftovers = list(leftovers or [])


class _Entry:
    """One file of a transaction: the name asked for, where its bytes go (``target``:
    symlinks followed unless ``follow`` is false), what it replaces, and its temporaries."""

    __slots__ = ("path", "target", "payload", "mode", "st", "tmp", "creating", "backup", "moved",
                 "done")

    def __init__(self, path: str, target: str, payload, mode, st) -> None:
        self.path, self.target, self.payload, self.mode, self.st = path, target, payload, mode, st
        self.tmp: str | None = None       # the new content, until renamed into place
        self.creating: str | None = None  # the temporary name being created (see _create_temp)
        self.backup: str | None = None    # the old file, until the transaction is over
        self.moved = False                # backup made by renaming the old file aside
        self.done = False                 # the new file is in place

    @property
    def special(self) -> bool:
        """An existing FIFO, device or socket: written directly, never renamed over."""
        return self.st is not None and not stat.S_ISREG(self.st.st_mode) \
            and not stat.S_ISLNK(self.st.st_mode)


def write_all(folder: str | os.PathLike, files, *, manifest=None,
              durable: bool | None = None) -> list[str]:
    """Write ``files`` (``(name, text or bytes, mode or None)``, names relative to
    ``folder``) all or nothing, plus the :data:`MANIFEST` listing ``manifest`` (file
    names) when that is given. Returns the paths written (``folder`` joined with each
    name, as strings: paths are handled as strings throughout, ``pathlib`` costs more than
    writing a small file), in order.

    A file's data may also be a zero-argument callable giving its text or bytes: it is
    called when that file is staged, after every other file, so work still being done
    elsewhere (``plan.json`` in a forked child, :mod:`rtc.emit.bundle`) overlaps the
    writing of the rest. What it raises rolls the transaction back and is raised.

    1. every target is checked first (not a folder, its folder exists and is writable);
    2. every new file is written to a temporary file beside its target and fsynced
       (``durable``; None: each file when there are at most 64, else one ``sync`` for all);
    3. all are renamed into place, each old file kept under a temporary name (a second
       hard link, or renamed aside where links are refused) until the end;
    4. when a rename fails (or SIGTERM / Ctrl-C arrive), the files already renamed are put
       back (new ones removed), the temporaries removed, and :class:`TransactionError`
       raised; otherwise the kept old files are removed (an interrupt meanwhile is raised
       only after the last one), and so are the temporaries an earlier, killed run left
       beside the files just written (``.NAME.XXXXXXXX.tmp`` / ``.old``).

    Targets are handled as :func:`write_atomic` handles them (a symlink is followed, an
    existing FIFO or device is written directly, after every rename), except the manifest:
    a manifest that is a symlink is replaced, not followed."""
    entries, folders = _plan(os.fspath(folder), files, manifest)
    if durable is None:
        durable = len(entries) <= 64
    current = None
    staging = _Staging()
    try:
        for current in sorted(entries, key=_deferred):
            _stage(current, durable, staging)
        if not durable:
            sync_all()
        for current in sorted(entries, key=lambda e: e.special):
            _commit(current)
    except BaseException as exc:
        with interrupts.held():   # a second Ctrl-C must not stop the rollback half-way
            leftovers = _rollback(entries)
        if isinstance(exc, OSError) and current is not None:
            raise TransactionError(current.path, exc, leftovers) from exc
        raise
    _discard_backups(entries)
    _sweep_debris(entries, folders)
    return [e.path for e in entries]


def _plan(folder: str, files, manifest) -> tuple[list[_Entry], _Folders]:
    """The entries of a transaction, each target checked (TransactionError for the first
    that cannot be written), and what was learnt about their folders; a target named
    twice is written once, with the last data."""
    if not os.path.isdir(folder):
        raise TransactionError(folder, NotADirectoryError(errno.ENOTDIR, "not a folder"))
    join = os.path.join
    wanted = [(join(folder, name), data, mode, True) for name, data, mode in files]
    if manifest is not None:
        text = manifest_text(manifest)
        wanted.append((join(folder, MANIFEST), text, None, False))
    entries: dict[str, _Entry] = {}
    folders = _Folders()
    for path, data, mode, follow in wanted:
        target, st = _check_target(path, follow, folders)
        payload = data if isinstance(data, bytes) or callable(data) else data.encode("utf-8")
        entries.pop(target, None)
        entries[target] = _Entry(path, target, payload, mode, st)
    return list(entries.values()), folders


class _Folders:
    """What :func:`_check_target` learnt about folders: each one's resolved path, the
    names in it (listed once), and those already found to exist and be writable."""

    def __init__(self):
        self.real: dict[str, str] = {}
        self.checked: set[str] = set()
        self.names: dict[str, frozenset | None] = {}

    def listed(self, folder: str) -> frozenset | None:
        """:func:`folder_names` of ``folder``, listed once."""
        if folder not in self.names:
            self.names[folder] = folder_names(folder)
        return self.names[folder]


def folder_names(folder: str | os.PathLike) -> frozenset | None:
    """The names in ``folder`` (``""``: the current folder; empty when it does not
    exist), None when it cannot be listed. One listing instead of a ``stat`` per output:
    a name it lacks is no existing file (24,580 outputs of a first ``--out-dir`` run)."""
    try:
        return frozenset(os.listdir(folder or "."))
    except FileNotFoundError:
        return frozenset()
    except OSError:
        return None


def _check_target(path: str, follow: bool, folders: _Folders) -> tuple[str, os.stat_result | None]:
    """(where ``path``'s bytes go, the stat of what is there or None); TransactionError
    when it is a folder, or its folder is missing or not writable. ``folders`` caches
    each folder's resolved path (once checked), so a name that is no symlink costs one
    ``lstat`` instead of a ``realpath`` of every component."""
    target, st = _resolved(path, folders) if follow else (path, _NOT_READ)
    try:
        if st is _NOT_READ:
            st = os.stat(target) if follow else os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise TransactionError(path, exc) from exc
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise TransactionError(path, IsADirectoryError(errno.EISDIR, "it is a folder"))
    parent = os.path.dirname(target)
    if parent in folders.checked:
        return target, st
    if not os.path.isdir(parent):
        raise TransactionError(path, FileNotFoundError(errno.ENOENT,
                                                       f"the folder {parent} does not exist"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TransactionError(path, PermissionError(errno.EACCES,
                                                     f"the folder {parent} is not writable"))
    folders.checked.add(parent)
    return target, st


_NOT_READ = object()  # the stat of a target that has not been read yet


def _resolved(path: str, folders: _Folders):
    """(``os.path.realpath(path)``, its ``os.stat`` or None when there is nothing, or
    :data:`_NOT_READ`): from the cached resolved folder when ``path`` itself is not a
    symlink, whose ``lstat`` then is the target's stat. A name the folder's listing lacks
    costs no call at all (a first ``--out-dir`` run writes 24,000 new files at 8,192
    servers); a file someone else creates there meanwhile is replaced without a backup."""
    parent, name = os.path.split(path)
    real = folders.real.get(parent)
    if real is None:
        real = folders.real[parent] = os.path.realpath(parent or ".")
    names = folders.listed(parent)
    if names is not None and name not in names:
        return os.path.join(real, name), None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return os.path.join(real, name), None
    except OSError:
        return os.path.join(real, name), _NOT_READ
    if stat.S_ISLNK(st.st_mode):
        return os.path.realpath(path), _NOT_READ
    return os.path.join(real, name), st


class _Staging:
    """What every temporary file of one transaction shares: the umask (read once, not
    twice per file) and a random token for the temporary names."""

    def __init__(self) -> None:
        self.umask = os.umask(0)
        os.umask(self.umask)
        self.token = os.urandom(4).hex()


#: ``os.open`` flags that create a new file for writing: exclusively, never through a
#: symlink, not inherited by children.
CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def fill_file(fd: int, path: str, payload: bytes, want: int, umask: int,
              durable: bool) -> None:
    """Write all of ``payload`` to the new file ``fd`` (at ``path``), fsync it when
    ``durable``, and give it the permission bits ``want`` that its creation mode could not
    (those the ``umask`` took away, set-id and sticky bits)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    if durable:
        os.fsync(fd)
    if want & (umask | ~0o777):
        os.chmod(path, want)


def manifest_text(names) -> str:
    """The text of a :data:`MANIFEST` listing ``names``: one per line, sorted."""
    return "".join(f"{n}\n" for n in sorted(names))


def _stage(e: _Entry, durable: bool, staging: _Staging) -> None:
    """Write the new content of ``e`` to a temporary file beside its target
    (``.NAME.TOKEN.tmp``, created exclusively), with its final permission bits: ``e.mode``,
    else those of the file it replaces, else 0o666 less the umask (as :func:`_set_mode`).
    A deferred payload (a callable) is resolved first."""
    if callable(e.payload):
        data = e.payload()
        e.payload = data if isinstance(data, bytes) else data.encode("utf-8")
    if e.special:
        return
    old = e.st if e.st is not None and stat.S_ISREG(e.st.st_mode) else None
    if e.mode is not None:
        want = e.mode
    elif old is not None:
        want = old.st_mode & 0o7777
    else:
        want = 0o666 & ~staging.umask
    fd = _create_temp(e, staging, want)
    try:
        fill_file(fd, e.tmp, e.payload, want, staging.umask, durable)
    finally:
        os.close(fd)


def _deferred(e: _Entry) -> bool:
    """Whether ``e``'s payload is still to be made (a callable): staged after the rest."""
    return callable(e.payload)


def _create_temp(e: _Entry, staging: _Staging, mode: int) -> int:
    """Create ``e``'s temporary file (its name in ``e.tmp``) and return its descriptor."""
    folder, name = os.path.split(e.target)
    for attempt in range(100):
        token = staging.token if not attempt else os.urandom(4).hex()
        tmp = os.path.join(folder, f".{name}.{token}.tmp")
        # Named before it exists: a signal (Ctrl-C, SIGTERM) raised between the open and
        # the next line would otherwise leave a file the rollback does not know of.
        e.creating = tmp
        try:
            fd = os.open(tmp, CREATE_FLAGS, mode)
        except FileExistsError:
            e.creating = None  # someone else's file: never removed
            continue
        e.tmp, e.creating = tmp, None
        return fd
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(e.target))


def _commit(e: _Entry) -> None:
    """Put the new file of ``e`` in place, keeping the old one under a temporary name."""
    if e.special:
        _write_special(e.target, e.payload)
        e.done = True
        return
    if e.st is not None:
        _keep_old(e)
    os.replace(e.tmp, e.target)
    e.tmp = None
    e.done = True


def _keep_old(e: _Entry) -> None:
    """Keep the file at ``e.target`` as ``e.backup``: a second hard link (the target stays
    in place), or where links are refused, the file renamed aside."""
    folder, base = os.path.split(e.target)
    for _ in range(16):
        name = os.path.join(folder, f".{base}.{os.urandom(4).hex()}.old")
        try:
            os.link(e.target, name, follow_symlinks=False)
        except FileExistsError:
            continue
        except (OSError, NotImplementedError):
            break
        e.backup = name
        return
    fd, name = tempfile.mkstemp(prefix=f".{base}.", suffix=".old", dir=folder)
    os.close(fd)
    try:
        os.replace(e.target, name)
    except BaseException:
        os.unlink(name)
        raise
    e.backup, e.moved = name, True


def _rollback(entries: list[_Entry]) -> list[str]:
    """Undo a failed transaction: put every old file back, remove the new files and the
    temporaries. Returns the old files that could not be put back (kept as temporaries)."""
    leftovers = []
    for e in reversed(entries):
        try:
            if e.backup is not None and (e.done or e.moved):
                os.replace(e.backup, e.target)
            elif e.backup is not None:
                os.unlink(e.backup)
            elif e.done and not e.special:
                os.unlink(e.target)
            e.backup = None
        except OSError:
            leftovers.append(e.backup)
        if e.tmp is not None:
            _unlink_quietly(e.tmp)
            e.tmp = None
        if e.creating is not None:
            _unlink_quietly(e.creating)
            e.creating = None
    return [name for name in leftovers if name]


def _discard_backups(entries: list[_Entry]) -> None:
    """Remove the kept old files once every new file is in place. An interrupt (Ctrl-C,
    SIGTERM) meanwhile does not stop the removal: the new files are all in place, so it
    is raised only after the last old file is gone."""
    pending: BaseException | None = None
    for e in entries:
        while e.backup is not None:
            try:
                _unlink_quietly(e.backup)
                e.backup = None
            except (KeyboardInterrupt, SystemExit) as exc:
                pending = exc
    if pending is not None:
        raise pending


_DEBRIS = re.compile(r"\.(.+)\.[0-9a-f]{8}\.(?:tmp|old)\Z")


def _sweep_debris(entries: list[_Entry], folders: _Folders) -> None:
    """Remove what an earlier, killed transaction left beside the files just written: a
    ``.NAME.XXXXXXXX.tmp`` or ``.old`` of a NAME this transaction wrote (SIGKILL or a power
    cut can stop any writer before its clean-up). Only such names, only in the folders
    written to, as listed before this transaction began, and only regular files, never a
    symlink or a folder. (A symlinked target's own folder is not swept.)"""
    wanted: dict[str, set[str]] = {}
    for e in entries:
        folder, name = os.path.split(e.path)
        wanted.setdefault(folder, set()).add(name)
    for folder, names in wanted.items():
        for entry in folders.names.get(folder) or ():
            m = _DEBRIS.match(entry) if entry.startswith(".") else None
            if m and m.group(1) in names:
                path = os.path.join(folder, entry)
                if os.path.isfile(path) and not os.path.islink(path):
                    _unlink_quietly(path)


def _unlink_quietly(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


def read_manifest(folder: str | os.PathLike) -> set[str]:
    """The names the :data:`MANIFEST` of ``folder`` lists (empty when there is none, it is
    unreadable, or it is a symlink, which is never read through, or not a regular file or
    too large: :func:`rtc.readfile.read_text`, so a FIFO in its place cannot block)."""
    from rtc.readfile import read_text

    manifest = Path(folder) / MANIFEST
    if manifest.is_symlink():
        return set()
    try:
        return set(read_text(manifest).splitlines())
    except (OSError, UnicodeDecodeError):
        return set()


def remove_stale(folder: str | os.PathLike, old: set[str], names: set[str],
                 keep=()) -> list[str]:
    """Delete the files of ``old`` (an earlier manifest) that ``names`` no longer has. Only
    plain names of regular files are removed; a symlink or a folder is left alone, and so
    is any file of ``keep`` (paths: the run's input files, by device and inode, so a hard
    link or a manifest that lists the input cannot delete it). Returns the removed names,
    sorted."""
    folder = Path(folder)
    kept = set()
    for path in keep:
        try:
            st = os.stat(path)
            kept.add((st.st_dev, st.st_ino))
        except (OSError, ValueError):
            pass
    removed = []
    for name in sorted(old - names):
        if not name or name in (".", "..", MANIFEST) or "/" in name or "\\" in name:
            continue
        path = folder / name
        if path.is_file() and not path.is_symlink() and not _is_kept(path, kept):
            try:
                path.unlink()
                removed.append(name)
            except OSError:
                pass
    return removed


def _is_kept(path: Path, kept: set) -> bool:
    st = path.stat()
    return (st.st_dev, st.st_ino) in kept
