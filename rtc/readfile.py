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
import re
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


#: How ``RTC_MAX_INPUT_BYTES`` may be written: digits, then an optional K, M or G.
_LIMIT_FORM = re.compile(r"([0-9]+)([KMG]?)")
_SCALES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def max_input_bytes() -> int:
    """The most bytes rtc reads from one input: ``RTC_MAX_INPUT_BYTES`` (a whole number of
    bytes above 0, optionally with a K, M or G suffix: powers of 1024; ``64M``, ``3G``)
    when set, else :data:`DEFAULT_LIMIT`. Raises :class:`InputRefused` when it is set to
    anything else (``abc``, ``-1``, ``0``, ``1.5G``): every read then fails with an RTC001
    that names the value, rather than silently reading with the default."""
    raw = os.environ.get(LIMIT_VAR, "")
    if not raw.strip():
        return DEFAULT_LIMIT
    m = _LIMIT_FORM.fullmatch(raw.strip().upper())
    if m is None or int(m.group(1)) == 0:
        raise InputRefused(
            f"{LIMIT_VAR} is {raw!r}, not a size rtc can use",
            f"set {LIMIT_VAR} to a whole number of bytes above 0, optionally with a K, M or "
            f"G suffix (powers of 1024), e.g. {LIMIT_VAR}=64M or {LIMIT_VAR}=3G; or unset it "
            f"for the default {_size(DEFAULT_LIMIT, exact=False)}")
    return int(m.group(1)) * _SCALES[m.group(2)]


def _size(n: int, exact: bool = True) -> str:
    """``n`` bytes in words: ``2.0 GiB (2,147,483,648 bytes)``; without the byte count
    when not ``exact`` (``64.0 MiB``)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}" + (f" ({n:,} bytes)" if exact else "")
    return f"{n:,} bytes"


def _too_large(size: int | None, limit: int) -> InputRefused:
    """The refusal of an input of ``size`` bytes (None: one read to past the limit, whose
    size is unknown) larger than ``limit``; names the limit once."""
    what = f"it is {_size(size)}, more than" if size is not None else "it holds more than"
    return InputRefused(f"{what} the {_size(limit)} rtc reads from one input",
                        f"give the right file; to read a larger one, raise the limit, e.g. "
                        f"{LIMIT_VAR}={_form(max(limit * 2, 1 << 30))}", errno.EFBIG)


def _form(n: int) -> str:
    """``n`` bytes as ``RTC_MAX_INPUT_BYTES`` may be written: ``1G``, ``3M``, ``1500``."""
    for suffix in ("G", "M", "K"):
        if n % _SCALES[suffix] == 0:
            return f"{n // _SCALES[suffix]}{suffix}"
    return str(n)


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
        raise _too_large(st.st_size, limit)
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
        raise _too_large(None, limit)
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
        raise _too_large(None, limit)
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
