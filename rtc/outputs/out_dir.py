"""The ``--out-dir`` policy: check the folder before anything is written, write its files
in one transaction (into an existing folder, or a new one made complete beside it), and
remove what an earlier plan wrote there that this one does not.

Failures raise :class:`OutputProblem` (the rule, RTC001 for I/O or RTC002 for a folder
the command line cannot use, with the message and hint the CLI prints); nothing here
prints or exits.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from rtc.outputs.files import MANIFEST, TransactionError, remove_stale, write_all
from rtc.outputs.new_folder import fits, sweep_hidden, write_new_folder
from rtc.rules import IO_ERROR, USAGE, Rule


class OutputProblem(Exception):
    """An output folder that cannot be used or written: ``rule`` (:data:`rtc.rules.IO_ERROR`
    or :data:`rtc.rules.USAGE`), the ``message`` and the ``hint`` (how to fix it)."""

    def __init__(self, rule: Rule, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.rule, self.message, self.hint = rule, message, hint


def transaction(out_dir: Path, files: list, listed: set | None, new: bool = False) -> None:
    """Write ``files`` ((name, text or bytes or callable, mode or None)) into ``out_dir``:
    :func:`rtc.outputs.files.write_all`, or for a folder that does not exist yet (``new``)
    :func:`rtc.outputs.new_folder.write_new_folder`; ``listed``: the names the folder's
    manifest lists afterwards (None: leave it). Raises :class:`OutputProblem` (RTC001)
    naming the file that could not be written and what was kept; an interrupt
    (KeyboardInterrupt, SystemExit) passes through (see :func:`interrupted_message`)."""
    from rtc import interrupts

    interrupts.writing(str(out_dir))
    try:
        if new:
            write_new_folder(out_dir, files, manifest=listed)   # it sweeps, too
        else:
            write_all(out_dir, files, manifest=listed)
            sweep_hidden(out_dir)   # what a killed run into a then-new folder left beside it
    except TransactionError as exc:
        done = ("nothing was written" if new else
                f"nothing in {out_dir} was replaced" if not exc.leftovers else
                "some old files could not be put back; they are kept as "
                + ", ".join(exc.leftovers))
        raise OutputProblem(IO_ERROR, f"cannot write {exc.path}: {exc.strerror}; {done}",
                            "remove or rename that folder"
                            if isinstance(exc.cause, IsADirectoryError)
                            else "check that the folder is writable and has room") from None


def interrupted_message(out_dir: Path, new: bool) -> str:
    """What an interrupted :func:`transaction` left: the line the CLI prints on Ctrl-C or
    SIGTERM (exit 130 / 143)."""
    return f"rtc: interrupted while writing {out_dir}: " + (
        "it is either absent or complete" if new else
        "it holds either all its old files or all the new ones") + ", nothing half-written"


def prepare_out_dir(out_dir: Path) -> bool:
    """Check ``out_dir`` and create the folders it is to go in. True when ``out_dir`` is
    still to be made, complete, by :func:`transaction`; a folder whose hidden name would
    not fit the file system is made here. Raises :class:`OutputProblem` when it is a file,
    a broken symlink, holds a folder named like the outputs list (RTC002), or cannot be
    created (RTC001, or RTC002 naming a file or broken symlink among its parents)."""
    missing = False
    try:
        os.lstat(out_dir)
    except (FileNotFoundError, NotADirectoryError):  # a file among the parents: below
        missing = True
    except OSError as exc:   # a name too long for the file system, a loop of symlinks
        raise OutputProblem(IO_ERROR, f"cannot create {out_dir}: {exc.strerror}",
                            "give a shorter folder name" if exc.errno == errno.ENAMETOOLONG
                            else "check the folder path") from None
    _check_folder(out_dir)
    new = missing and fits(out_dir)
    try:
        (out_dir.parent if new else out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        for a in reversed(out_dir.parents):
            why = broken_link(a) or (a.exists() and not a.is_dir() and "is a file, not a folder")
            if why:
                raise OutputProblem(USAGE, f"cannot create --out-dir {out_dir}: {a} {why}",
                                    "give a folder path whose parents are folders") from None
        raise OutputProblem(IO_ERROR, f"cannot create {out_dir}: {exc.strerror}",
                            "check that the parent folder exists and is writable") from None
    return new


def _check_folder(out_dir: Path) -> None:
    """Raise :class:`OutputProblem` (RTC002) when ``out_dir`` is a file, a broken symlink,
    or holds a folder where its outputs list goes."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputProblem(USAGE, f"--out-dir {out_dir} is a file, not a folder",
                            "give a folder (it is created if missing), or -o FILE for one "
                            "rank table")
    broken = broken_link(out_dir)
    if broken:
        raise OutputProblem(USAGE, f"--out-dir {out_dir} {broken}",
                            "create that folder, or remove the symlink")
    if (out_dir / MANIFEST).is_dir() and not (out_dir / MANIFEST).is_symlink():
        raise OutputProblem(USAGE, f"{out_dir / MANIFEST} is a folder; rtc keeps its list of "
                            "outputs there", "remove or rename that folder")


def broken_link(path: Path) -> str | None:
    """What is wrong with ``path`` when it is a symlink that leads to nothing (``is a
    symlink to X, which does not exist`` / ``... a loop of symlinks``), else None."""
    if not path.is_symlink():
        return None
    try:
        os.stat(path)
    except FileNotFoundError:
        return f"is a symlink to {os.readlink(path)}, which does not exist"
    except OSError as exc:
        return f"is a symlink to {os.readlink(path)}, which cannot be followed ({exc.strerror})"
    return None


def prune(out_dir: Path, old: set, listed: set, inputs=()) -> list[str]:
    """Remove the files an earlier plan wrote to ``out_dir`` (``old``, from its manifest)
    that this one (``listed``) does not: its servers' env files, scripts, hccl-<job>.json
    and diagrams would be read as current. Never one of ``inputs``. Returns the names
    removed."""
    return remove_stale(out_dir, old, listed, keep=[i for i in inputs if str(i) != "-"])


def pruned_message(out_dir: Path, removed: list[str]) -> str | None:
    """The line that says which files :func:`prune` removed; None when it removed none."""
    if not removed:
        return None
    shown = ", ".join(removed[:4]) + (", ..." if len(removed) > 4 else "")
    return (f"rtc: removed {len(removed)} file{'s' if len(removed) != 1 else ''} "
            f"an earlier plan wrote to {out_dir} ({shown})")


def refuse_foreign(out_dir: Path, names: list[str]) -> None:
    """Raise :class:`OutputProblem` (RTC002) when the existing folder ``out_dir`` holds a
    file among ``names`` that its outputs list (:data:`MANIFEST`) does not name: a file
    rtc did not write there (a hand-written hccl.json or launch script, a rank table of
    ``rtc compile -o``), which the transaction would replace. ``--force`` skips this."""
    from rtc.outputs.files import read_manifest

    ours = read_manifest(out_dir)
    foreign = sorted(n for n in names if n not in ours and os.path.lexists(out_dir / n)
                     and not (out_dir / n).is_dir())   # a folder: the transaction says
    if not foreign:
        return
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    raise OutputProblem(USAGE, f"--out-dir {out_dir} holds {shown}, which rtc did not write "
                        f"there (its outputs list {MANIFEST} does not name "
                        f"{'it' if len(foreign) == 1 else 'them'}); writing would replace "
                        f"{'it' if len(foreign) == 1 else 'them'}, nothing was written",
                        "move them away or choose another --out-dir; --force replaces them")
