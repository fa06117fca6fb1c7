"""Bounded, safe reads of the files rtc is given (every command and front end reads through here).

A fresh user's ``rtc check /dev/zero`` read until the kernel killed rtc at ~24 GB (exit -9, no
message), and a FIFO as input hung (issue 34). Here:

* only a regular file is read: a device (``/dev/zero``, ``/dev/null``), a FIFO, a socket or a
  folder is refused before it is opened (``os.stat`` first, so a FIFO is never opened; the
  open itself is ``O_NONBLOCK`` and the opened file is checked again, so one swapped in
  between the two cannot hang rtc either);
* at most :func:`max_input_bytes` bytes are read (64 MiB unless ``RTC_MAX_INPUT_BYTES`` says
  otherwise): a larger file (a 2 GiB sparse file) is refused from its size, without reading
  it; standard input (``-``) is read up to the same limit.

Every refusal is an :class:`InputRefused`, an ``OSError`` whose ``strerror`` is the reason in
words (``it is a character device, not a regular file``) and whose ``hint`` says how to fix
it; :func:`unreadable` words any ``OSError`` of a read the same way for every command (RTC001
``cannot read PATH: REASON`` plus a hint), so that all of them say the same thing.
"""

from __future__ import annotations

import errno
import os
import stat

#: The environment variable that raises (or lowers) the input size limit, in bytes.
LIMIT_VAR = "RTC_MAX_INPUT_BYTES"
#: The default limit: 64 MiB. The largest real input, a 65,536-NPU rank table, is ~30 MiB.
DEFAULT_LIMIT = 64 * 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


class InputRefused(OSError):
    """A file rtc will not read: not a regular file, or larger than the limit. ``strerror``
    is the reason in words, ``hint`` how to fix it."""

    def __init__(self, reason: str, hint: str, err: int = errno.EINVAL) -> None:
        super().__init__(err, reason)
        self.hint = hint


def max_input_bytes() -> int:
    """The most bytes rtc reads from one input: ``RTC_MAX_INPUT_BYTES`` (a whole number of
    bytes, optionally with a K, M or G suffix: powers of 1024) when set and valid, else
    :data:`DEFAULT_LIMIT`."""
    raw = os.environ.get(LIMIT_VAR, "").strip().upper()
    if not raw:
        return DEFAULT_LIMIT
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1:], 1)
    digits = raw[:-1] if scale > 1 else raw
    return int(digits) * scale if digits.isdigit() and int(digits) > 0 else DEFAULT_LIMIT


def _size(n: int) -> str:
    """``n`` bytes in words: ``2.0 GiB (2,147,483,648 bytes)``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit} ({n:,} bytes)"
    return f"{n:,} bytes"


def _too_large(size: str, limit: int) -> InputRefused:
    return InputRefused(f"it is {size}, more than the {_size(limit)} rtc reads from one input",
                        f"give the right file; to read a larger one, raise the limit, e.g. "
                        f"{LIMIT_VAR}={max(limit * 2, 1 << 30)} (bytes)", errno.EFBIG)


def kind_of(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is, in words, when it is not a regular file
    (``a folder``, ``a FIFO (named pipe)``, ...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def _refuse_kind(mode: int) -> None:
    kind = kind_of(mode)
    if kind is None:
        return
    if kind == "a folder":
        raise InputRefused("it is a folder", "give a file in it, not the folder", errno.EISDIR)
    raise InputRefused(f"it is {kind}, not a regular file",
                       "give a regular file; to read what a program writes, save it to a "
                       "file first, or pipe it in and give `-`")


def check(path, limit: int | None = None) -> os.stat_result:
    """The ``os.stat`` of ``path`` when :func:`read_bytes` would read it (a regular file of
    at most ``limit`` bytes, default :func:`max_input_bytes`), without opening it; raises
    as :func:`read_bytes` does otherwise."""
    limit = max_input_bytes() if limit is None else limit
    st = os.stat(path)
    _refuse_kind(st.st_mode)
    if st.st_size > limit:
        raise _too_large(_size(st.st_size), limit)
    return st


def read_bytes(path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (str or PathLike), at most ``limit`` (default
    :func:`max_input_bytes`). Raises :class:`InputRefused` for what is not a regular file or
    is larger than the limit, ``OSError`` for what the system refuses (missing, denied).
    A FIFO is never opened; a file that grows past the limit while read is refused too."""
    limit = max_input_bytes() if limit is None else limit
    check(path, limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        _refuse_kind(os.fstat(fd).st_mode)   # swapped for a FIFO or device since the stat
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _too_large(f"more than {_size(limit)}", limit)
    return data


def read_stream(stream, limit: int | None = None) -> bytes:
    """At most ``limit`` bytes (default :func:`max_input_bytes`) of the binary ``stream``
    (standard input for ``-``), read to its end. Raises :class:`InputRefused` when it holds
    more, ``OSError`` when it is None (closed) or cannot be read."""
    limit = max_input_bytes() if limit is None else limit
    if stream is None:
        raise InputRefused("it is closed", "give a file, or pipe the input into rtc",
                           errno.EBADF)
    chunks, total = [], 0
    while total <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise _too_large(f"more than {_size(limit)}", limit)
    return b"".join(chunks)


def read_text(path, encoding: str = "utf-8", errors: str = "strict",
              limit: int | None = None) -> str:
    """:func:`read_bytes` decoded (raises as it does, and ``UnicodeDecodeError``)."""
    return read_bytes(path, limit).decode(encoding, errors)


def reason_of(exc: BaseException) -> str:
    """Why a read failed, in words (the system's text: ``No such file or directory``)."""
    return getattr(exc, "strerror", None) or str(exc)


def hint_of(exc: BaseException) -> str:
    """How to fix the failed read ``exc``: the refusal's own hint, else one per cause."""
    hint = getattr(exc, "hint", None)
    if hint:
        return hint
    err = getattr(exc, "errno", None)
    if err in (errno.EACCES, errno.EPERM):
        return "check the file's permissions (ls -l), or run rtc as a user who may read it"
    if err == errno.EISDIR:
        return "give a file in it, not the folder"
    return "check the path"


def unreadable(path, exc: BaseException) -> tuple[str, str]:
    """(message, hint) of an RTC001 for the failed read of ``path``: every command words
    an unreadable input this way (``cannot read in.rtc: Permission denied``)."""
    return f"cannot read {path}: {reason_of(exc)}", hint_of(exc)


__all__ = ["LIMIT_VAR", "DEFAULT_LIMIT", "InputRefused", "max_input_bytes", "kind_of", "check",
           "read_bytes", "read_stream", "read_text", "reason_of", "hint_of", "unreadable"]
