"""`rtc compile --out-dir` writes all or nothing: a file that cannot be written (a folder
in its place, a failed rename, a full disk, SIGTERM) leaves every earlier file as it was,
with no temporary file left behind; diagrams are drawn in memory and written in the same
transaction; `rtc diagram -o` exits 2 when its file cannot be written.

The tests run as root, where permissions do not stop a write: failures are simulated by
patching ``os.replace`` / ``os.fsync`` / ``os.link`` in-process around ``rtc.cli.main``."""

from __future__ import annotations

import errno
import gc
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, run_main, run_rtc
from rtc.outputs.files import MANIFEST, TransactionError, write_all

D1 = EXAMPLES / "a2-2node-dp2-tp8.rtc"
PD = EXAMPLES / "pd-a3.rtc"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz `dot` is not installed")


# --------------------------------------------------------------------------- helpers



def snapshot(folder: Path) -> dict:
    """Every entry of ``folder``: name -> (kind, inode, mtime, bytes)."""
    out = {}
    for p in sorted(folder.iterdir()):
        st = os.lstat(p)
        if p.is_symlink():
            out[p.name] = ("link", st.st_ino, st.st_mtime_ns, os.readlink(p))
        elif p.is_dir():
            out[p.name] = ("dir", st.st_ino, st.st_mtime_ns, sorted(x.name for x in p.iterdir()))
        else:
            out[p.name] = ("file", st.st_ino, st.st_mtime_ns, p.read_bytes(), st.st_mode)
    return out


def debris(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()
                  if p.name.endswith((".tmp", ".old")) and p.name.startswith("."))


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """An --out-dir written by an earlier compile of pd-a3 (two jobs), every file then
    overwritten with "old <name>" so that any replacement shows."""
    out = tmp_path / "build"
    res = run_rtc("compile", str(PD), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    for p in out.iterdir():
        if p.name != MANIFEST:
            p.write_text(f"old {p.name}\n")
    (out / "notes.txt").write_text("mine")
    return out


def fail_nth_rename(monkeypatch, n: int, exc: BaseException | None = None) -> list:
    """Make the ``n``-th rename of a new file into place (a ``.tmp`` source) raise
    ``exc`` (EIO by default); the others, and the restoring renames, work."""
    real = os.replace
    calls: list = []

    def replace(src, dst, *a, **kw):
        if str(src).endswith(".tmp"):
            calls.append(str(dst))
            if len(calls) == n:
                raise exc if exc is not None else OSError(errno.EIO, "Input/output error")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)
    return calls


# --------------------------------------------------------------------------- a folder in the way


@pytest.mark.parametrize("name", ["hccl.json", "atlas-02.sh", "plan.json"])
def test_a_folder_named_like_an_output_changes_nothing(tmp_path: Path, name: str):
    out = tmp_path / "build"
    assert run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams").returncode == 0
    (out / name).unlink()
    (out / name).mkdir()
    (out / name / "inside").write_text("x")
    before = snapshot(out)
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 2
    assert f"error[RTC001]: cannot write {out / name}: it is a folder; nothing in {out} " \
           "was replaced" in res.stderr
    assert "rtc: wrote" not in res.stderr
    assert snapshot(out) == before
    assert debris(out) == []


def test_a_folder_in_the_way_of_a_new_plan_keeps_the_old_plan(built: Path):
    """A different plan (one job, other servers) fails: the old plan's files are neither
    replaced nor pruned, no new file appears."""
    (built / "atlas-01.env").mkdir()
    before = snapshot(built)
    res = run_rtc("compile", str(D1), "--out-dir", str(built), "--no-diagrams")
    assert res.returncode == 2 and "atlas-01.env: it is a folder" in res.stderr
    assert "an earlier plan wrote" not in res.stderr
    assert snapshot(built) == before


@needs_dot
def test_a_diagram_that_cannot_be_written_fails_the_compile(tmp_path: Path):
    out = tmp_path / "build"
    assert run_rtc("compile", str(D1), "--out-dir", str(out)).returncode == 0
    (out / "groups.svg").unlink()
    (out / "groups.svg").mkdir()
    before = snapshot(out)
    res = run_rtc("compile", str(D1), "--out-dir", str(out))
    assert res.returncode == 2
    assert f"cannot write {out / 'groups.svg'}: it is a folder" in res.stderr
    assert snapshot(out) == before


# --------------------------------------------------------------------------- failed renames


@pytest.mark.parametrize("nth", [1, 2, 7, "last"])
def test_a_failed_rename_puts_every_old_file_back(built: Path, monkeypatch, capsys, nth):
    """pd-a3 again (every file exists, so each rename replaces one): the N-th rename fails."""
    before = snapshot(built)
    drawn = 2 if shutil.which("dot") else 0
    count = len(before) - 1 + drawn  # the outputs and manifest (not notes.txt), the diagrams
    n = count if nth == "last" else nth
    calls = fail_nth_rename(monkeypatch, n)
    code = run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built))
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(calls) == n
    assert "error[RTC001]: cannot write" in err and "Input/output error" in err
    assert f"nothing in {built} was replaced" in err
    assert snapshot(built) == before
    assert debris(built) == []


def test_the_rename_counting_covers_every_file(built: Path, monkeypatch, capsys):
    """The same run without a failure renames exactly the files the test above counts
    (the outputs and the manifest, the two diagrams), and succeeds."""
    before = snapshot(built)
    calls = fail_nth_rename(monkeypatch, 10_000)
    assert run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built)) == 0
    capsys.readouterr()
    drawn = 2 if shutil.which("dot") else 0
    assert len(calls) == len(before) - 1 + drawn
    assert (built / "notes.txt").read_text() == "mine"
    assert debris(built) == []


@pytest.mark.parametrize("nth", [1, 4, 9])
def test_a_failed_rename_of_a_new_plan_removes_the_new_files(built: Path, monkeypatch,
                                                               capsys, nth):
    """D1 into pd-a3's folder: most files are new; they are removed again, nothing of the
    old plan is replaced or pruned."""
    before = snapshot(built)
    fail_nth_rename(monkeypatch, nth)
    code = run_main(monkeypatch, "compile", str(D1), "--out-dir", str(built), "--no-diagrams")
    assert code == 2, capsys.readouterr().err
    assert snapshot(built) == before
    assert debris(built) == []


def test_without_hard_links_old_files_are_renamed_aside_and_back(built: Path, monkeypatch,
                                                                  capsys):
    def no_link(*a, **kw):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    before = snapshot(built)
    fail_nth_rename(monkeypatch, 5)
    assert run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built),
                    "--no-diagrams") == 2
    capsys.readouterr()
    assert snapshot(built) == before
    assert debris(built) == []


def test_sigterm_during_the_renames_restores_and_exits_143(built: Path, monkeypatch, capsys):
    before = snapshot(built)
    fail_nth_rename(monkeypatch, 6, SystemExit(143))
    assert run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built),
                    "--no-diagrams") == 143
    assert "interrupted while writing" in capsys.readouterr().err
    assert snapshot(built) == before
    assert debris(built) == []


def test_a_full_disk_while_staging_replaces_nothing(built: Path, monkeypatch, capsys):
    real = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    before = snapshot(built)
    code = run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built), "--no-diagrams")
    err = capsys.readouterr().err
    assert code == 2 and "No space left on device" in err
    assert snapshot(built) == before
    assert debris(built) == []


def test_an_old_file_that_cannot_be_put_back_is_named(built: Path, monkeypatch, capsys):
    """The worst case: the third rename fails, and so does putting back the first file.
    That old file is kept under its temporary name, and the message says where."""
    real = os.replace
    forward: list[str] = []

    def replace(src, dst, *a, **kw):
        if str(src).endswith(".tmp"):
            forward.append(str(dst))
            if len(forward) == 3:
                raise OSError(errno.EIO, "Input/output error")
        elif str(src).endswith(".old") and str(dst) == forward[0]:
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)
    before = snapshot(built)
    code = run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built), "--no-diagrams")
    err = capsys.readouterr().err
    assert code == 2
    first = Path(forward[0]).name
    kept = debris(built)
    assert len(kept) == 1 and kept[0].startswith(f".{first}.") and kept[0].endswith(".old")
    assert "some old files could not be put back" in err and kept[0] in err
    assert (built / kept[0]).read_bytes() == before[first][3]
    after = snapshot(built)
    assert {n: v for n, v in after.items() if n not in (first, kept[0])} == \
        {n: v for n, v in before.items() if n != first}


# --------------------------------------------------------------------------- diagrams


def test_a_diagram_that_fails_to_draw_is_a_warning_and_not_written(built: Path, monkeypatch,
                                                                    capsys):
    import rtc.emit.diagram as diagram

    real = diagram.diagram_dot

    def draw(topo, diags, options):
        if options.view == "groups":
            raise RuntimeError("boom")
        return real(topo, diags, options)

    monkeypatch.setattr(diagram, "diagram_dot", draw)
    monkeypatch.setattr(diagram, "render", lambda source, kind: b"<svg>topology</svg>\n")
    (built / "groups.svg").write_text("old groups")
    code = run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built))
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning[RTC004]: could not draw groups.svg: boom" in err
    assert (built / "topology.svg").read_bytes() == b"<svg>topology</svg>\n"
    assert (built / "groups.svg").read_text() == "old groups"  # not written, not pruned
    assert "groups.svg" in (built / MANIFEST).read_text().split()
    assert (built / "hccl-prefill.json").read_text().startswith("{")


def test_dot_missing_is_rtc005_and_the_rest_is_written(built: Path, monkeypatch, capsys):
    import rtc.emit.diagram as diagram

    def render(source, kind):
        raise diagram.DotNotFound()

    monkeypatch.setattr(diagram, "render", render)
    code = run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built))
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning[RTC005]: Graphviz `dot` not found; skipped topology.svg and groups.svg" in err
    assert not (built / "topology.svg").exists()
    assert (built / "hccl-decode.json").read_text().startswith("{")


# --------------------------------------------------------------------------- rtc diagram -o


def test_diagram_output_that_cannot_be_written_is_exit_2(tmp_path: Path):
    res = run_rtc("diagram", str(D1), "--format", "dot", "-o", str(tmp_path / "no" / "t.dot"))
    assert res.returncode == 2 and "error[RTC001]: cannot write" in res.stderr
    (tmp_path / "t.dot").mkdir()
    res = run_rtc("diagram", str(D1), "--format", "dot", "-o", str(tmp_path / "t.dot"))
    assert res.returncode == 2 and "it is a folder" in res.stderr


def test_diagram_failed_rename_is_exit_2_and_keeps_the_old_file(tmp_path: Path, monkeypatch,
                                                                 capsys):
    out = tmp_path / "t.dot"
    out.write_text("old picture")
    fail_nth_rename(monkeypatch, 1)
    code = run_main(monkeypatch, "diagram", str(D1), "--format", "dot", "-o", str(out))
    assert code == 2
    assert "error[RTC001]: cannot write" in capsys.readouterr().err
    assert out.read_text() == "old picture"
    assert debris(tmp_path) == []


# --------------------------------------------------------------------------- write_all itself


def test_write_all_writes_modes_manifest_and_follows_symlinks(tmp_path: Path):
    real = tmp_path / "elsewhere.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to(real.name)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / MANIFEST).symlink_to(victim)
    (tmp_path / "ro.sh").write_text("old")
    os.chmod(tmp_path / "ro.sh", 0o444)
    written = write_all(tmp_path, [("a.txt", "A", None), ("link.json", b"{}", None),
                                   ("ro.sh", "#!/bin/sh\n", 0o755)], manifest={"a.txt", "x"})
    assert [os.path.basename(p) for p in written] == ["a.txt", "link.json", "ro.sh", MANIFEST]
    assert (tmp_path / "a.txt").read_text() == "A"
    assert (tmp_path / "link.json").is_symlink() and real.read_text() == "{}"
    assert oct(os.stat(tmp_path / "ro.sh").st_mode & 0o777) == oct(0o755)
    assert not (tmp_path / MANIFEST).is_symlink()
    assert (tmp_path / MANIFEST).read_text() == "a.txt\nx\n"
    assert victim.read_text() == "keep"
    assert debris(tmp_path) == []


def test_write_all_checks_every_target_before_writing(tmp_path: Path):
    (tmp_path / "b").mkdir()
    with pytest.raises(TransactionError) as info:
        write_all(tmp_path, [("a", "A", None), ("b", "B", None)])
    assert info.value.path == str(tmp_path / "b") and info.value.errno == errno.EISDIR
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    with pytest.raises(TransactionError) as info:
        write_all(tmp_path, [("a", "A", None), ("no/c", "C", None)])
    assert "does not exist" in info.value.strerror
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    with pytest.raises(TransactionError):
        write_all(tmp_path / "missing", [("a", "A", None)])


def test_write_all_rolls_back_a_symlink_manifest(tmp_path: Path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / MANIFEST).symlink_to(victim)
    (tmp_path / "a").write_text("old a")
    fail_nth_rename(monkeypatch, 2)
    with pytest.raises(TransactionError):
        write_all(tmp_path, [("a", "new a", None)], manifest={"a"})
    assert (tmp_path / MANIFEST).is_symlink() and os.readlink(tmp_path / MANIFEST) == str(victim)
    assert (tmp_path / "a").read_text() == "old a"
    assert debris(tmp_path) == []


def test_an_interrupt_right_after_a_temporary_is_created_leaves_nothing(tmp_path: Path,
                                                                         monkeypatch):
    """Ctrl-C / SIGTERM land at the first bytecode after the slow ``open``: the file the
    rollback has not been told of yet must go too (a fresh user found one .tmp each time)."""
    (tmp_path / "a").write_text("old a")
    real_open, calls = os.open, []

    def open_then_interrupt(path, flags, mode=0o777, **kw):
        fd = real_open(path, flags, mode, **kw)
        calls.append(path)
        if len(calls) == 2:
            os.close(fd)
            raise KeyboardInterrupt
        return fd

    monkeypatch.setattr("rtc.outputs.files.os.open", open_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_all(tmp_path, [("a", "new a", None), ("b", "new b", None), ("c", "C", None)])
    assert debris(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert (tmp_path / "a").read_text() == "old a"


def test_an_interrupt_while_old_files_are_discarded_removes_them_all(tmp_path: Path,
                                                                     monkeypatch):
    """Once every new file is in place, an interrupt does not stop the removal of the
    kept old files (a fresh user found up to 23,910 .old files); it is raised after."""
    for name in "abc":
        (tmp_path / name).write_text(f"old {name}")
    real_unlink, seen = os.unlink, []

    def unlink_interrupted_once(path, *a, **kw):
        seen.append(path)
        if str(path).endswith(".old") and len(seen) == 1:
            raise SystemExit(143)
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr("rtc.outputs.files.os.unlink", unlink_interrupted_once)
    with pytest.raises(SystemExit):
        write_all(tmp_path, [(n, f"new {n}", None) for n in "abc"])
    assert debris(tmp_path) == []
    assert [(tmp_path / n).read_text() for n in "abc"] == ["new a", "new b", "new c"]


def test_debris_of_a_killed_run_is_swept_for_the_names_written(tmp_path: Path):
    """What SIGKILL left (.NAME.XXXXXXXX.tmp / .old of a name written now) is removed;
    other dot files, other names' debris and symlinks are not."""
    keep = [".b.0123abcd.tmp", ".a.txt.nothex!!.old", ".hidden"]
    gone = [".a.txt.deadbeef.old", ".a.txt.0123abcd.tmp"]
    for name in keep + gone:
        (tmp_path / name).write_text("x")
    (tmp_path / "elsewhere").write_text("target")
    (tmp_path / ".a.txt.cafebabe.old").symlink_to(tmp_path / "elsewhere")
    write_all(tmp_path, [("a.txt", "A", None)])
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(keep + [".a.txt.cafebabe.old", "a.txt", "elsewhere"])


def test_stale_cleanup_never_removes_the_input(tmp_path: Path):
    """A manifest that lists the input (edited by hand, or an input later moved into the
    folder) must not make the clean-up of an earlier plan's files delete it."""
    src = tmp_path / "c.rtc"
    shutil.copy(EXAMPLES / "a2-2node-dp2-tp8.rtc", src)
    assert run_rtc("compile", str(src), "--out-dir", str(tmp_path), "--no-diagrams").returncode == 0
    with open(tmp_path / MANIFEST, "a", encoding="utf-8") as f:
        f.write("c.rtc\n")
    res = run_rtc("compile", str(src), "--out-dir", str(tmp_path), "--no-diagrams")
    assert res.returncode == 0 and "removed" not in res.stderr
    assert src.read_text() == (EXAMPLES / "a2-2node-dp2-tp8.rtc").read_text()


# ---------------------------------------------- plan.json made while the rest is written


def test_a_deferred_file_is_made_after_every_other_file_is_staged(tmp_path: Path):
    """A callable payload is called last, when the other files are staged (their
    temporaries exist, none is in place yet), and its text is written like any other."""
    seen = []

    def later():
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        return "made late\n"

    write_all(tmp_path, [("a.txt", "a\n", None), ("plan.json", later, None),
                         ("b.txt", b"b\n", None)])
    assert len(seen) == 1 and not {"a.txt", "b.txt"} & set(seen[0])
    assert [n for n in seen[0] if n.endswith(".tmp")] and len(seen[0]) == 2
    assert (tmp_path / "plan.json").read_text() == "made late\n"
    assert (tmp_path / "a.txt").read_text() == "a\n" and not debris(tmp_path)


def test_a_deferred_file_that_raises_rolls_everything_back(tmp_path: Path):
    (tmp_path / "a.txt").write_text("old a\n")
    before = snapshot(tmp_path)

    def broken():
        raise LookupError("no plan")

    with pytest.raises(LookupError, match="no plan"):
        write_all(tmp_path, [("a.txt", "new a\n", None), ("plan.json", broken, None)],
                  manifest={"a.txt", "plan.json"})
    assert snapshot(tmp_path) == before and not debris(tmp_path)


@pytest.mark.skipif(not __import__("rtc.forked").forked.can_fork(),
                    reason="this machine cannot fork here")
def test_plan_json_failing_in_its_child_writes_nothing(tmp_path: Path, monkeypatch, capsys):
    """--out-dir of a (forced) large cluster: plan.json is made in its child while the
    other files are written; when it fails its schema, nothing is written (the new
    folder is removed again), RTC003 is reported and the exit is 2."""
    from rtc import forked
    from rtc.emit import bundle

    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    monkeypatch.setattr(forked, "worth_forking", lambda: True)
    monkeypatch.setattr(bundle, "plan_problems", lambda doc: ["jobs/0: broken on purpose"])
    out = tmp_path / "build"
    assert run_main(monkeypatch, "compile", str(D1), "--out-dir", str(out),
                    "--no-diagrams") == 2
    err = capsys.readouterr().err
    assert "error[RTC003]" in err and "broken on purpose" in err
    assert "nothing was written" in err and not out.exists()


@pytest.mark.skipif(not __import__("rtc.forked").forked.can_fork(),
                    reason="this machine cannot fork here")
def test_plan_json_failing_in_its_child_keeps_an_existing_folder(built: Path, monkeypatch,
                                                                  capsys):
    from rtc import forked
    from rtc.emit import bundle

    monkeypatch.setattr(forked, "WORTH_NPUS", 0)
    monkeypatch.setattr(forked, "worth_forking", lambda: True)
    monkeypatch.setattr(bundle, "plan_problems", lambda doc: ["jobs/0: broken on purpose"])
    before = snapshot(built)
    assert run_main(monkeypatch, "compile", str(PD), "--out-dir", str(built),
                    "--no-diagrams") == 2
    assert "error[RTC003]" in capsys.readouterr().err
    assert snapshot(built) == before and not debris(built)


def test_an_interrupted_o_says_the_file_is_old_or_new(tmp_path: Path, monkeypatch, capsys):
    """Ctrl-C while `-o` replaces its file: exit 130, the old table kept, and a line
    saying the file is either old or new (a script cannot tell otherwise)."""
    target = tmp_path / "hccl.json"
    target.write_text("old\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    assert run_main(monkeypatch, "compile", str(D1), "-o", str(target)) == 130
    err = capsys.readouterr().err
    assert f"rtc: interrupted while writing {target}: it holds either its old" in err
    assert target.read_text() == "old\n" and not debris(tmp_path)


def test_a_second_ctrl_c_does_not_stop_the_rollback(tmp_path: Path, monkeypatch):
    """Ctrl-C during the renames, and another one while the rollback removes what was
    staged: the rollback still finishes (the old files back, no temporary left) and the
    interrupt is raised after it. A fresh user left ~2,000 .tmp files this way."""
    (tmp_path / "a.txt").write_text("old a\n")
    before = snapshot(tmp_path)
    files = [(f"f{k}.txt", f"{k}\n", None) for k in range(20)] + [("a.txt", "new a\n", None)]
    real_replace, real_unlink = os.replace, os.unlink
    state = {"renames": 0, "first": False, "second": False}

    def replace(src, dst):
        state["renames"] += 1
        if state["renames"] == 10 and not state["first"]:
            state["first"] = True
            raise KeyboardInterrupt            # the first Ctrl-C, half-way through
        return real_replace(src, dst)

    def unlink(path, *args, **kwargs):
        if state["first"] and not state["second"]:
            state["second"] = True
            os.kill(os.getpid(), signal.SIGINT)   # the second one, inside the rollback
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        write_all(tmp_path, files)
    monkeypatch.undo()
    assert state["second"]
    assert snapshot(tmp_path) == before and not debris(tmp_path)


def test_stop_all_finishes_though_ctrl_c_arrives_meanwhile(monkeypatch):
    """Five quick Ctrl-Cs crashed stop_all's reaping with a traceback: a signal arriving
    while the children are stopped is raised only once they are all reaped."""
    from rtc import forked

    if not forked.can_fork():
        pytest.skip("this machine cannot fork here")
    children = [forked.share([lambda: __import__("time").sleep(60)], fork=True)
                for _ in range(2)]
    pids = [c.pid for c in children]
    real_stop = forked._stop
    monkeypatch.setattr(forked, "_stop", lambda pid: (os.kill(os.getpid(), signal.SIGINT),
                                                      real_stop(pid)))
    with pytest.raises(KeyboardInterrupt):
        forked.stop_all()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)   # every child reaped
    assert not forked._children


# --------------------------------------------------------------------------- a new folder


def fail_nth_write(monkeypatch, n: int, exc: BaseException) -> None:
    real, calls = os.write, []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == n:
            raise exc
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_a_new_folder_that_cannot_be_written_is_not_created(tmp_path: Path, monkeypatch,
                                                            capsys):
    fail_nth_write(monkeypatch, 3, OSError(errno.ENOSPC, "No space left on device"))
    out = tmp_path / "build"
    assert run_main(monkeypatch, "compile", str(D1), "--out-dir", str(out),
                    "--no-diagrams") == 2
    err = capsys.readouterr().err
    assert "No space left on device; nothing was written" in err
    assert list(tmp_path.iterdir()) == []


def test_sigterm_while_a_new_folder_is_written_leaves_nothing(tmp_path: Path, monkeypatch,
                                                              capsys):
    fail_nth_write(monkeypatch, 4, SystemExit(143))
    out = tmp_path / "build"
    assert run_main(monkeypatch, "compile", str(D1), "--out-dir", str(out),
                    "--no-diagrams") == 143
    assert f"interrupted while writing {out}: it is either absent or complete" \
        in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_new_nested_folder_holds_what_an_existing_one_would(tmp_path: Path):
    new = tmp_path / "a" / "b" / "build"
    old = tmp_path / "old"
    old.mkdir()
    for folder in (new, old):
        res = run_rtc("compile", str(D1), "--out-dir", str(folder), "--no-diagrams")
        assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in old.iterdir())
    assert sorted(p.name for p in new.iterdir()) == names and MANIFEST in names
    for name in names:
        a, b = new / name, old / name
        assert a.read_bytes() == b.read_bytes(), name
        assert a.stat().st_mode == b.stat().st_mode, name
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["build"]


def test_a_new_folder_with_a_name_too_long_to_hide_is_still_written(tmp_path: Path):
    out = tmp_path / ("b" * 250)     # 250 + 14 bytes of the hidden name exceed 255
    res = run_rtc("compile", str(D1), "--out-dir", str(out), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    assert (out / "hccl.json").is_file() and (out / MANIFEST).is_file()


def test_a_dangling_symlink_as_out_dir_is_named(tmp_path: Path):
    (tmp_path / "build").symlink_to(tmp_path / "gone")
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "build"), "--no-diagrams")
    assert res.returncode == 2
    assert f"is a symlink to {tmp_path / 'gone'}, which does not exist" in res.stderr


def test_an_out_dir_under_a_file_names_the_file(tmp_path: Path):
    (tmp_path / "plain").write_text("x")
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "plain" / "sub" / "build"),
                  "--no-diagrams")
    assert res.returncode == 2
    assert f"{tmp_path / 'plain'} is a file, not a folder" in res.stderr


def test_a_killed_runs_hidden_folder_is_swept_by_a_run_into_the_existing_folder(
        built: Path):
    left = built.parent / f".{built.name}.0123abcd.tmp"
    left.mkdir()
    (left / ".rtc-partial").write_text("")
    (left / "hccl.json").write_text("half")
    res = run_rtc("compile", str(PD), "--out-dir", str(built), "--no-diagrams")
    assert res.returncode == 0, res.stderr
    assert not left.exists()


def test_a_second_ctrl_c_after_the_clean_up_exits_130_without_a_traceback(tmp_path: Path):
    import subprocess

    code = ("import rtc.cli as c\n"
            "def main():\n"
            "    raise KeyboardInterrupt\n"
            "c.main = main\n"
            "c.entry()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 130 and "Traceback" not in res.stderr


def test_an_out_dir_name_too_long_for_the_file_system_is_an_error_not_a_traceback(
        tmp_path: Path):
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / ("n" * 256)),
                  "--no-diagrams")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "File name too long" in res.stderr and "give a shorter folder name" in res.stderr


def test_a_dangling_symlink_among_the_parents_is_named(tmp_path: Path):
    (tmp_path / "dl").symlink_to(tmp_path / "gone")
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "dl" / "x"), "--no-diagrams")
    assert res.returncode == 2
    assert f"{tmp_path / 'dl'} is a symlink to {tmp_path / 'gone'}, which does not exist" \
        in res.stderr


def test_a_symlink_loop_as_out_dir_is_named_as_one(tmp_path: Path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    res = run_rtc("compile", str(D1), "--out-dir", str(tmp_path / "loop"), "--no-diagrams")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "which cannot be followed (Too many levels of symbolic links)" in res.stderr
