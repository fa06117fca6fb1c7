"""rtc.outputs.new_folder.write_new_folder: a new --out-dir folder appears complete or not at all."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from rtc.outputs import new_folder
from rtc.outputs.files import MANIFEST, TransactionError
from rtc.outputs.new_folder import MARK, fits, write_new_folder

FILES = [("a.env", "A=1\n", None), ("b.sh", "echo b\n", 0o755), ("c.json", b"{}", None)]


def hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_writes_every_file_with_its_mode_and_the_manifest(tmp_path: Path):
    out = tmp_path / "build"
    paths = write_new_folder(out, FILES, manifest={"a.env", "b.sh", "c.json"})
    assert paths == [str(out / n) for n in ("a.env", "b.sh", "c.json", MANIFEST)]
    assert (out / "a.env").read_text() == "A=1\n" and (out / "c.json").read_bytes() == b"{}"
    assert stat.S_IMODE((out / "b.sh").stat().st_mode) == 0o755
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((out / "a.env").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    assert (out / MANIFEST).read_text() == "a.env\nb.sh\nc.json\n"
    assert hidden(tmp_path) == []


def test_the_whole_folder_costs_one_rename(tmp_path: Path, monkeypatch):
    calls = []
    real_rename, real_replace = os.rename, os.replace
    monkeypatch.setattr(os, "rename", lambda *a, **k: calls.append(a) or real_rename(*a, **k))
    monkeypatch.setattr(os, "replace", lambda *a, **k: calls.append(a) or real_replace(*a, **k))
    write_new_folder(tmp_path / "build", [(f"f{i}", "x", None) for i in range(100)])
    assert len(calls) == 1 and calls[0][1] == str(tmp_path / "build")


def test_a_name_given_twice_is_written_once_with_the_last_data(tmp_path: Path):
    paths = write_new_folder(tmp_path / "o", [("a", "1", None), ("b", "2", None), ("a", "3", None)])
    assert paths == [str(tmp_path / "o" / "b"), str(tmp_path / "o" / "a")]
    assert (tmp_path / "o" / "a").read_text() == "3"


def test_a_deferred_file_is_made_after_the_others_are_written(tmp_path: Path):
    seen = []

    def late():
        (folder,) = [p for p in tmp_path.iterdir() if p.name.startswith(".o.")]
        seen.extend(sorted(p.name for p in folder.iterdir()))
        return "late"

    write_new_folder(tmp_path / "o", [("z", late, None), ("a", "1", None), ("b", "2", None)])
    assert seen == [MARK, "a", "b"] and (tmp_path / "o" / "z").read_text() == "late"
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["a", "b", "z"]  # no mark


def test_a_deferred_file_that_raises_creates_nothing(tmp_path: Path):
    class Broken(Exception):
        pass

    def late():
        raise Broken()

    with pytest.raises(Broken):
        write_new_folder(tmp_path / "o", [("a", "1", None), ("z", late, None)])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_full_disk_names_the_file_and_creates_nothing(tmp_path: Path, monkeypatch):
    real, calls = os.write, []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(TransactionError) as info:
        write_new_folder(tmp_path / "o", FILES)
    assert info.value.path == str(tmp_path / "o" / "b.sh")
    assert info.value.strerror == "No space left on device"
    assert list(tmp_path.iterdir()) == []


def test_a_folder_made_meanwhile_is_written_into_as_an_existing_one(tmp_path: Path,
                                                                    monkeypatch):
    """Two runs at once into one new folder: the second to finish writes into the first's
    folder (its files replaced all or nothing, others kept), as before there was a hidden
    folder; nothing hidden is left."""
    out = tmp_path / "o"
    real = os.rename

    def rename(src, dst):
        out.mkdir()
        (out / "theirs").write_text("theirs")
        (out / "a.env").write_text("old")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    deferred = [("late", lambda: "made once", None)]
    paths = write_new_folder(out, FILES + deferred, manifest={"a.env"})
    assert sorted(paths) == sorted(str(out / n) for n in
                                   ("a.env", "b.sh", "c.json", "late", MANIFEST))
    assert (out / "a.env").read_text() == "A=1\n" and (out / "theirs").read_text() == "theirs"
    assert (out / "late").read_text() == "made once"
    assert stat.S_IMODE((out / "b.sh").stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_a_rename_that_fails_otherwise_creates_nothing(tmp_path: Path, monkeypatch):
    def rename(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(TransactionError) as info:
        write_new_folder(tmp_path / "o", FILES)
    assert info.value.path == str(tmp_path / "o") and info.value.errno == errno.EXDEV
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("when", [1, 2])
def test_an_interrupt_leaves_nothing(tmp_path: Path, monkeypatch, when):
    """Ctrl-C right after the hidden folder is made (1), or after its first file (2)."""
    real_mkdir, real_open = os.mkdir, os.open
    opened = []

    def mkdir(path, *a, **k):
        real_mkdir(path, *a, **k)
        if when == 1:
            raise KeyboardInterrupt

    def open_(path, *a, **k):
        fd = real_open(path, *a, **k)
        opened.append(path)
        if when == 2 and len(opened) == 1:
            os.close(fd)
            raise KeyboardInterrupt
        return fd

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)
    with pytest.raises(KeyboardInterrupt):
        write_new_folder(tmp_path / "o", FILES)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_parent_is_a_transaction_error(tmp_path: Path):
    with pytest.raises(TransactionError) as info:
        write_new_folder(tmp_path / "no" / "o", FILES)
    assert info.value.errno == errno.ENOENT and "does not exist" in info.value.strerror
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name,code", [("sub/a", errno.ENOENT), ("", errno.EISDIR),
                                       ("..", errno.EISDIR)])
def test_a_name_that_is_not_a_plain_file_name_is_refused_before_writing(tmp_path: Path,
                                                                        name, code):
    with pytest.raises(TransactionError) as info:
        write_new_folder(tmp_path / "o", [("a", "1", None), (name, "x", None)])
    assert info.value.errno == code
    assert list(tmp_path.iterdir()) == []


def test_what_a_killed_run_left_is_swept_and_nothing_else(tmp_path: Path):
    killed = tmp_path / ".build.0123abcd.tmp"         # killed while writing: marked
    killed.mkdir()
    (killed / MARK).write_text("")
    (killed / "node0.env").write_text("half")
    (tmp_path / ".build.00000000.tmp").mkdir()         # empty: maybe a run about to mark it
    users = tmp_path / ".build.deadbeef.tmp"           # a user's folder of that name
    users.mkdir()
    (users / "in.rtc").write_text("mine")
    nested = tmp_path / ".build.89abcdef.tmp"
    (nested / "sub").mkdir(parents=True)
    (nested / MARK).write_text("")
    other = tmp_path / ".build.notahex0.tmp"
    other.mkdir()
    cousin = tmp_path / ".build2.0123abcd.tmp"
    cousin.mkdir()
    write_new_folder(tmp_path / "build", FILES)
    assert hidden(tmp_path) == [".build.00000000.tmp", ".build.89abcdef.tmp",
                                ".build.deadbeef.tmp", ".build.notahex0.tmp",
                                ".build2.0123abcd.tmp"]
    assert (users / "in.rtc").read_text() == "mine"


@pytest.mark.skipif(new_folder.fcntl is None, reason="no flock here")
def test_a_hidden_folder_another_run_is_still_writing_is_not_swept(tmp_path: Path):
    """Two runs into one new folder: the first to finish must not remove the other's
    hidden folder (its mark is locked while it writes); once that run is gone, it is."""
    import fcntl

    live = tmp_path / ".build.0123abcd.tmp"
    live.mkdir()
    (live / MARK).write_text("")
    (live / "node0.env").write_text("being written")
    fd = os.open(live / MARK, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        write_new_folder(tmp_path / "build", FILES)
        assert (live / "node0.env").read_text() == "being written"
    finally:
        os.close(fd)          # the run ends (or dies): its lock goes with it
    new_folder.sweep_hidden(tmp_path / "build")
    assert not live.exists()


@pytest.mark.parametrize("length,ok", [(241, True), (242, False), (255, False)])
def test_a_hidden_name_must_fit_the_file_system(tmp_path: Path, length, ok):
    assert fits(tmp_path / ("d" * length)) is ok


def test_durable_writes_fsync_every_file_and_both_folders(tmp_path: Path, monkeypatch):
    real, synced = os.fsync, []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    monkeypatch.setattr(new_folder, "sync_all", lambda: pytest.fail("sync with durable"))
    write_new_folder(tmp_path / "o", FILES, durable=True)
    assert len(synced) == len(FILES) + 2


def test_many_files_are_flushed_with_one_sync(tmp_path: Path, monkeypatch):
    synced = []
    monkeypatch.setattr(new_folder, "sync_all", lambda: synced.append(1))
    monkeypatch.setattr(os, "fsync", lambda fd: pytest.fail("fsync of each file"))
    write_new_folder(tmp_path / "o", [(f"f{i}", "x", None) for i in range(65)])
    assert synced == [1] and len(list((tmp_path / "o").iterdir())) == 65
