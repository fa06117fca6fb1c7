"""rtc.resources.package_toml: TOML data tables parsed once and kept in the per-user cache."""

from __future__ import annotations

import os
import tomllib

import pytest

from rtc import resources


@pytest.fixture
def tables(tmp_path, monkeypatch):
    """A package folder with one TOML table, and an empty cache folder."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "t.toml").write_text('[a]\nx = 1\ny = "two"\nz = [1.5, true]\n')
    monkeypatch.setattr(resources, "PACKAGE_DIR", pkg)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return pkg / "sub" / "t.toml"


def _cached(tmp_path) -> list[str]:
    return sorted(os.listdir(tmp_path / "cache" / "rtc"))


def test_a_second_read_comes_from_the_cache_without_parsing(tables, tmp_path, monkeypatch):
    first = resources.package_toml("sub", "t.toml")
    assert first == {"a": {"x": 1, "y": "two", "z": [1.5, True]}}
    assert len(_cached(tmp_path)) == 1 and _cached(tmp_path)[0].startswith("t.toml-")

    def refuse(*a, **k):
        raise AssertionError("parsed again")

    monkeypatch.setattr(tomllib, "loads", refuse)
    assert resources.package_toml("sub", "t.toml") == first


def test_an_edited_table_is_parsed_again(tables):
    assert resources.package_toml("sub", "t.toml")["a"]["x"] == 1
    tables.write_text("[a]\nx = 22\n")
    assert resources.package_toml("sub", "t.toml") == {"a": {"x": 22}}


def test_an_edit_of_the_same_size_is_seen_by_its_modification_time(tables):
    assert resources.package_toml("sub", "t.toml")["a"]["x"] == 1
    st = tables.stat()
    tables.write_text(tables.read_text().replace("x = 1", "x = 7"))
    os.utime(tables, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert resources.package_toml("sub", "t.toml")["a"]["x"] == 7


@pytest.mark.parametrize("junk", [b"", b"\x00garbage", b"\xe9" * 40])
def test_a_corrupt_cache_is_rebuilt(tables, tmp_path, junk):
    resources.package_toml("sub", "t.toml")
    cached = tmp_path / "cache" / "rtc" / _cached(tmp_path)[0]
    cached.write_bytes(junk)
    assert resources.package_toml("sub", "t.toml")["a"]["y"] == "two"
    assert cached.read_bytes() != junk


def test_no_cache_folder_still_reads_the_table(tables, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert resources.cache_folder() is None
    assert resources.package_toml("sub", "t.toml")["a"]["x"] == 1


def test_a_value_marshal_cannot_keep_is_parsed_every_time(tables, tmp_path):
    tables.write_text("when = 2026-12-02\n")
    assert str(resources.package_toml("sub", "t.toml")["when"]) == "2026-12-02"
    assert not [n for n in _cached(tmp_path) if n.startswith("t.toml-")]


def test_a_broken_table_raises_and_caches_nothing(tables, tmp_path):
    tables.write_text("[a\n")
    with pytest.raises(tomllib.TOMLDecodeError):
        resources.package_toml("sub", "t.toml")
    assert not (tmp_path / "cache" / "rtc").exists() or not _cached(tmp_path)


@pytest.mark.parametrize("sub,name", [("model", "presets.toml"), ("cost", "models.toml"),
                                      ("cost", "links.toml")])
def test_the_shipped_tables_read_the_same_from_the_cache(sub, name, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    parsed = tomllib.loads((resources.PACKAGE_DIR / sub / name).read_text("utf-8"))
    assert resources.package_toml(sub, name) == parsed   # a miss: parsed, then kept
    assert resources.package_toml(sub, name) == parsed   # a hit: from the cache


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relcache")
    assert resources.cache_folder() == str(tmp_path / "home" / ".cache" / "rtc")
    assert not (tmp_path / "relcache").exists()


def test_copies_of_rtc_in_many_places_keep_the_cache_bounded(tmp_path, monkeypatch):
    """Each clone, venv or temporary copy of rtc has its own package path and so its own
    cache entry; the cache keeps the CACHE_KEEP newest per table, not one per copy ever
    made (a new user found 27 copies of each table after a day of tests)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for i in range(7):
        pkg = tmp_path / f"copy{i}"
        (pkg / "sub").mkdir(parents=True)
        (pkg / "sub" / "t.toml").write_text(f"x = {i}\n")
        monkeypatch.setattr(resources, "PACKAGE_DIR", pkg)
        assert resources.package_toml("sub", "t.toml") == {"x": i}
    names = _cached(tmp_path)
    assert len(names) == resources.CACHE_KEEP
    # the newest copy is still served from the cache
    monkeypatch.setattr(tomllib, "loads", lambda *a, **k: pytest.fail("parsed again"))
    assert resources.package_toml("sub", "t.toml") == {"x": 6}


def test_old_grammar_caches_are_pruned_when_a_new_grammar_is_built(tmp_path, monkeypatch):
    from rtc.syntax import parser

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "rtc"
    folder.mkdir(parents=True)
    for i in range(6):
        old = folder / f"grammar-old{i:012d}.lark-cache"
        old.write_bytes(b"x")
        os.utime(old, ns=(i * 10**9, i * 10**9))
    (folder / "links.toml-00000000-py311.marshal").write_bytes(b"kept")
    path = parser._cache_path()
    left = sorted(n for n in os.listdir(folder) if n.startswith("grammar-"))
    assert left == [f"grammar-old{i:012d}.lark-cache" for i in (3, 4, 5)]
    assert not os.path.exists(path)            # lark writes it: CACHE_KEEP with the new one
    assert (folder / "links.toml-00000000-py311.marshal").exists()
