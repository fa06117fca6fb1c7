#!/usr/bin/env python3
"""Mutation fuzzer for rtc: mutate real inputs, feed them to the command line, report crashes.

Kept in the repository but outside the test suite (tests/test_fuzz_smoke.py runs it with a
small ``--n`` so that it keeps working).

Seeds, by kind:

* ``rtc``: every examples/*.rtc and tests/cases/**/*.rtc;
* ``tables``: every JSON file under tests/data/ranktables/ (v1.0, v1.2, v2.0, legacy
  group_list, PD tables, A5 topology files, and the broken ones);
* ``scripts``: the launch scripts, env files, preflight scripts and plan.json that
  ``rtc compile EXAMPLE --out-dir TMP --no-diagrams`` writes (compiled once per run), and
  the hand-written launch scripts under tests/data/launchers/ and tests/data/scripts/;
* ``manifests``: the Kubernetes workloads, ConfigMaps and compose files under
  tests/data/k8s_workloads/, tests/data/k8s/ and tests/data/engines/, and the manifests
  ``rtc compile EXAMPLE --out-dir TMP --target k8s`` writes;
* ``captures``: the tool outputs rtc reads: every capture under tests/data/inventory/
  (npu-smi, hccn_tool, hccn.conf, nvidia-smi, ibv_devinfo), the nccl-tests and HCCL
  Test outputs, and every file of the preflight results under tests/data/preflight/.

Each input is one seed with 1-6 stacked mutations: byte and line level (delete, duplicate,
swap or repeat lines, truncate, flip bytes, splice another seed in), token level (numbers
made huge, negative, zero or non-ASCII digits; ranges reversed; template operators
swapped; words replaced by other words of the corpus; braces and quotes dropped or
doubled; unicode and control characters inserted; deep nesting) and, for JSON seeds,
structural (value types changed, keys renamed, removed or duplicated, lists grown or
emptied, values swapped, subtrees copied, values wrapped in thousands of brackets).

Each input runs once in this process -- ``rtc.cli.main`` with ``sys.argv`` patched and
``SystemExit`` caught (``rtc check``, ``rtc compile --out-dir``, ``rtc validate`` with a
random ``--format`` / ``--schema`` / ``--hardware``, ``rtc import -o``), or the library
(``rtc.api.compile_text`` then ``rank_table``, ``rtc.api.validating.validate_source``,
``rtc.api.importing.import_table``) -- and a fraction (``--subprocess``) also through the
real ``rtc`` console script in a subprocess (every 1/FRACTION-th input of each kind, so
the count is exact). Launch scripts go to ``rtc lint`` (and now and then to ``rtc validate``
and ``rtc check``, which must reject them cleanly); manifests to ``rtc lint`` and ``rtc
validate``; captures to every inventory parser (``api:captures``), to ``rtc calibrate``,
and -- a preflight result file, put back into a copy of its folder -- to ``rtc preflight
report`` / ``nccl``; rank tables also to ``rtc validate --pods FILE TABLE``. In-process
output goes to strict UTF-8 streams as Python sets them up for a user's UTF-8 terminal or
pipe (stdout strict, stderr backslashreplace).

A finding is an exception escaping rtc (a traceback), an exit code other than 0, 1 or 2
(including death by a signal), or "Traceback" anywhere in the output. Findings are
grouped by exception type and innermost rtc frame; the smallest inputs of each group are
saved under ``--out`` (default: a new temporary folder) with a ``.txt`` beside each (the
command, mutations, traceback), and the smallest of each group is run again in a fresh
``rtc`` process to say whether it reproduces there. An input that runs longer than
``--timeout`` is listed (and saved) as slow, not counted as a finding.

    .venv/bin/python tools/fuzz.py --n 10000 --seed 1 --jobs 2 --out /tmp/fuzz-findings

Inputs are derived from (seed, input number) alone, so a run is reproducible whatever
``--jobs`` is. Exit status: 0 no finding, 1 at least one finding, 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rtc_deps import require_project_deps  # noqa: E402

require_project_deps(__file__)  # one line and exit 2 under a Python without rtc's deps

KINDS = ("rtc", "tables", "scripts", "manifests", "captures")
SCRIPT_EXAMPLES = ("a2-2node-dp2-tp8.rtc", "pd-a3.rtc")
K8S_EXAMPLE = "a2-2node-dp2-tp8.rtc"
DATA = ROOT / "tests" / "data"
GOOD_TABLE = ROOT / "tests" / "golden" / "a2-2node-dp2-tp8" / "hccl.json"
DOCS = (".md", ".gz", ".rtc")   # documents and other kinds' seeds beside the captures
MAX_INPUT = 2_000_000          # bytes; a mutation that grows an input past this is undone
SAVED_PER_CRASH = 5            # inputs kept per distinct crash (the smallest)
FILE, DIR = "\0FILE", "\0DIR"  # placeholders in argument lists


# --------------------------------------------------------------------------- seeds

@dataclass(frozen=True)
class Seed:
    """One seed input: its kind, where it came from, its bytes and the file suffix it is
    run under (rtc looks at nothing but the content, the suffix only helps a reader)."""

    kind: str
    name: str
    data: bytes
    suffix: str


def load_seeds(kinds: tuple[str, ...], workdir: Path) -> dict[str, list[Seed]]:
    """The seeds of each kind in ``kinds`` (``workdir`` receives the compiled scripts)."""
    seeds: dict[str, list[Seed]] = {}
    if "rtc" in kinds:
        files = sorted((ROOT / "examples").glob("*.rtc")) + sorted((ROOT / "tests" / "cases").rglob("*.rtc"))
        seeds["rtc"] = [_seed("rtc", p) for p in files]
    if "tables" in kinds:
        seeds["tables"] = [_seed("tables", p)
                           for p in sorted((ROOT / "tests" / "data" / "ranktables").rglob("*.json"))]
    if "scripts" in kinds:
        seeds["scripts"] = _script_seeds(workdir) + [
            _seed("scripts", p) for p in sorted((DATA / "launchers").glob("*.sh"))
            + sorted((DATA / "scripts").rglob("*.sh"))]
    if "manifests" in kinds:
        seeds["manifests"] = [_seed("manifests", p) for d in ("k8s_workloads", "k8s", "engines")
                              for p in sorted((DATA / d).glob("*.y*ml"))] + _k8s_seeds(workdir)
    if "captures" in kinds:
        seeds["captures"] = [_seed("captures", p) for d in ("inventory", "nccl-tests", "preflight")
                             for p in sorted((DATA / d).rglob("*"))
                             if p.is_file() and p.suffix not in DOCS]
    return seeds


def _k8s_seeds(workdir: Path) -> list[Seed]:
    """The manifests ``rtc compile K8S_EXAMPLE --out-dir --target k8s`` writes."""
    target = workdir / "k8s"
    run = run_cli(["compile", str(ROOT / "examples" / K8S_EXAMPLE), "--out-dir", str(target),
                   "--no-diagrams", "--target", "k8s"])
    if run.code != 0 or run.exc is not None:
        raise SystemExit(f"fuzz: compiling examples/{K8S_EXAMPLE} --target k8s failed "
                         f"(exit {run.code}):\n{run.tb or run.output[-2000:]}")
    return [Seed("manifests", f"{K8S_EXAMPLE} -> {p.name}", p.read_bytes(), p.suffix)
            for p in sorted(target.rglob("*.y*ml"))]


def _seed(kind: str, path: Path) -> Seed:
    return Seed(kind, str(path.relative_to(ROOT)), path.read_bytes(), path.suffix)


def _script_seeds(workdir: Path) -> list[Seed]:
    """Compile the script examples once with the real command line (in this process) and
    take the .sh, .env and plan.json files it writes."""
    out: list[Seed] = []
    for name in SCRIPT_EXAMPLES:
        target = workdir / ("scripts-" + Path(name).stem)
        run = run_cli(["compile", str(ROOT / "examples" / name), "--out-dir", str(target),
                       "--no-diagrams"])
        if run.code != 0 or run.exc is not None:
            raise SystemExit(f"fuzz: compiling examples/{name} for the script seeds failed "
                             f"(exit {run.code}):\n{run.tb or run.output[-2000:]}")
        for path in sorted(target.iterdir()):
            if path.suffix in (".sh", ".env") or path.name == "plan.json":
                out.append(Seed("scripts", f"{name} -> {path.name}", path.read_bytes(), path.suffix))
    return out


@dataclass
class Pool:
    """What mutations of one kind may borrow: the seeds (for splicing), the words of the
    corpus and the JSON keys seen in it."""

    seeds: list[Seed]
    words: list[bytes]
    keys: list[str]


WORD_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_\-]*")
RTC_WORDS = (b"cluster", b"server", b"family", b"job", b"network", b"fabric", b"disaggregation",
             b"devices", b"device_ip", b"host", b"servers", b"tp", b"dp", b"pp", b"step", b"base",
             b"super_pod", b"super_device_id", b"hardware", b"env", b"role", b"on", b"off")


def make_pool(seeds: list[Seed]) -> Pool:
    """The borrowable words and keys of ``seeds``."""
    words: set[bytes] = set(RTC_WORDS)
    keys: set[str] = set()
    for s in seeds:
        words.update(WORD_RE.findall(s.data))
        keys.update(m.decode("utf-8", "replace") for m in re.findall(rb'"([^"\\\n]{1,40})"\s*:', s.data))
    return Pool(seeds, sorted(words), sorted(keys) or ["version"])


# --------------------------------------------------------------------------- text mutations

NUMBERS = (b"0", b"-1", b"-0", b"1", b"2", b"3", b"7", b"8", b"15", b"16", b"17", b"255", b"256",
           b"1023", b"65535", b"65536", b"1048576", b"1048577", b"2147483647", b"2147483648",
           b"4294967296", b"-2147483649", b"9223372036854775808", b"18446744073709551617",
           b"99999999999999999999999999", b"9" * 400, b"9" * 5000, b"1e309", b"1.5", b"-1e-9",
           b"0x10", b"007", b"+3", b"1_000", b"NaN", b"Infinity", b"-Infinity",
           "\u0663".encode(), "\uff11\uff16".encode(), "\u00b2".encode(), "\u2167".encode())
SPECIALS = (b"\x00", b"\x1b[31m", b"\x07", b"\x08", b"\x7f", b"\r", b"\t", b"\x0b", b"\x0c",
            b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xef\xbb\xbf",
            *(s.encode() for s in ("\u2028", "\u202e", "\u200b", "\u0301", "\U0001f600",
                                   "\U0010ffff", "\u4e2d\u6587", "\u0130", "\u00df", "\uff46",
                                   "\u0435", "\u0660")),
            b"\\u0000", b"\\ud800", b"\\udfff", b"\\", b"{", b"}", b"{{i}}", b"{i/0}", b"{i**99}",
            b"{", b"..", b"${IFS}", b"$(id)", b"`", b"'", b'"', b"#", b"=", b",", b":", b"../",
            b"A" * 10000, b"\n" * 300, b" " * 1000, b"\t" * 60, b"%s%n", b"-", b"--help")
BRACKETS = b'{}[]"\'(),:='
OPERATORS = (b"+", b"-", b"*", b"/", b"%", b"//", b"**", b"")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pos(rng: random.Random, data: bytes) -> int:
    return rng.randint(0, len(data))


def m_delete_lines(rng, data, pool):
    """Delete 1-3 consecutive lines."""
    ls = _lines(data)
    i = rng.randrange(len(ls))
    del ls[i:i + rng.randint(1, 3)]
    return b"\n".join(ls)


def m_duplicate_lines(rng, data, pool):
    """Duplicate a line, or repeat a run of lines up to 300 times."""
    ls = _lines(data)
    i = rng.randrange(len(ls))
    j = min(len(ls), i + rng.choice((1, 1, 2, 5, 20)))
    times = rng.choice((1, 1, 2, 10, 300))
    ls[j:j] = ls[i:j] * times
    return b"\n".join(ls)


def m_swap_lines(rng, data, pool):
    """Swap two lines, or move one elsewhere."""
    ls = _lines(data)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    if rng.random() < 0.5:
        ls[i], ls[j] = ls[j], ls[i]
    else:
        ls.insert(j, ls.pop(i))
    return b"\n".join(ls)


def m_number(rng, data, pool):
    """Replace one number with a huge, negative, zero, float, hex or non-ASCII one."""
    found = list(re.finditer(rb"\d+", data))
    if not found:
        return data[:_pos(rng, data)] + rng.choice(NUMBERS) + data[_pos(rng, data):]
    m = rng.choice(found)
    return data[:m.start()] + rng.choice(NUMBERS) + data[m.end():]


def m_range(rng, data, pool):
    """Rewrite a ``lo..hi`` range: reversed, empty, huge, negative or malformed."""
    found = list(re.finditer(rb"(\d+)\.\.(\d+)", data))
    if not found:
        return m_number(rng, data, pool)
    m = rng.choice(found)
    lo, hi = m.group(1), m.group(2)
    new = rng.choice((hi + b".." + lo, lo + b"..", b".." + hi, lo + b"..." + hi, lo + b"..-1",
                      lo + b"..99999999", b"-5.." + hi, lo + b".." + lo, lo + b"...",
                      lo + b".." + hi + b".." + hi, b"0..1048576", lo + b".." + b"9" * 30))
    return data[:m.start()] + new + data[m.end():]


def m_operator(rng, data, pool):
    """Swap an arithmetic operator (templates such as ``{i/256}``), or divide by zero."""
    found = list(re.finditer(rb"[-+*/%]", data))
    if not found or rng.random() < 0.2:
        close = [m.start() for m in re.finditer(rb"\}", data)]
        if not close:
            return data
        at = rng.choice(close)
        return data[:at] + rng.choice((b"/0", b"%0", b"**999", b"*-1", b"-", b"+", b"()")) + data[at:]
    m = rng.choice(found)
    return data[:m.start()] + rng.choice(OPERATORS) + data[m.end():]


def m_bracket(rng, data, pool):
    """Drop or double one brace, bracket, quote, comma, colon or equals sign."""
    where = [i for i, b in enumerate(data) if b in BRACKETS]
    if not where:
        return data
    i = rng.choice(where)
    return data[:i] + data[i + 1:] if rng.random() < 0.5 else data[:i] + data[i:i + 1] * rng.choice((2, 2, 3, 50)) + data[i + 1:]


def m_special(rng, data, pool):
    """Insert a control character, odd unicode, invalid UTF-8 or a metacharacter."""
    at = _pos(rng, data)
    if rng.random() < 0.3:  # at the start of a line, or just inside a word
        starts = [m.end() for m in re.finditer(rb"\n|\"|\b", data)] or [0]
        at = rng.choice(starts)
    return data[:at] + rng.choice(SPECIALS) + data[at:]


def m_truncate(rng, data, pool):
    """Cut the input short."""
    return data[:rng.randint(0, len(data))]


def m_bytes(rng, data, pool):
    """Flip bits, overwrite or insert 1-8 random bytes."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        if op < 0.4 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op < 0.7 and buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        else:
            buf.insert(rng.randint(0, len(buf)), rng.randrange(256))
    return bytes(buf)


def m_splice(rng, data, pool):
    """Insert a run of lines from another seed of the same kind."""
    other = _lines(rng.choice(pool.seeds).data)
    i = rng.randrange(len(other))
    chunk = other[i:i + rng.randint(1, 12)]
    ls = _lines(data)
    j = rng.randint(0, len(ls))
    ls[j:j] = chunk
    return b"\n".join(ls)


def m_word(rng, data, pool):
    """Replace a word with another word of the corpus, delete it, or double it."""
    found = list(WORD_RE.finditer(data))
    if not found:
        return data
    m = rng.choice(found)
    op = rng.random()
    new = rng.choice(pool.words) if op < 0.6 else b"" if op < 0.8 else m.group() + b" " + m.group()
    return data[:m.start()] + new + data[m.end():]


def m_long(rng, data, pool):
    """Make a word very long (repeated, or 100,000 letters)."""
    found = list(WORD_RE.finditer(data))
    if not found:
        return data + b"x" * 100_000
    m = rng.choice(found)
    new = m.group() * rng.choice((50, 1000)) if rng.random() < 0.5 else b"a" * 100_000
    return data[:m.start()] + new[:200_000] + data[m.end():]


def m_nest(rng, data, pool):
    """Deep nesting: a run of opening (and maybe closing) braces or brackets."""
    at = _pos(rng, data)
    n = rng.choice((30, 200, 1000, 5000, 50_000))
    op, cl = rng.choice(((b"{", b"}"), (b"[", b"]"), (b"{\n", b"}\n"), (b"(", b")"),
                         (b'{"a":', b"}"), (b"server x {\n", b"}\n")))
    tail = cl * n if rng.random() < 0.6 else b""
    return data[:at] + op * n + tail + data[at:]


def m_newlines(rng, data, pool):
    """CRLF or CR line ends, no final newline, a byte order mark, UTF-16, or nothing."""
    return rng.choice((lambda d: d.replace(b"\n", b"\r\n"), lambda d: d.replace(b"\n", b"\r"),
                       lambda d: d.rstrip(b"\n"), lambda d: b"\xef\xbb\xbf" + d,
                       lambda d: d.decode("utf-8", "replace").encode("utf-16"),
                       lambda d: b"", lambda d: b"\n" * 3 + d.replace(b"\n", b"\n\n")))(data)


TEXT_MUTATIONS = (  # (mutation, weight)
    (m_delete_lines, 3), (m_duplicate_lines, 3), (m_swap_lines, 2), (m_number, 6), (m_range, 2),
    (m_operator, 2), (m_bracket, 4), (m_special, 5), (m_truncate, 2), (m_bytes, 2),
    (m_splice, 3), (m_word, 5), (m_long, 1), (m_nest, 1), (m_newlines, 1),
)


# --------------------------------------------------------------------------- JSON mutations

class Obj(list):
    """A JSON object as a list of [key, value] pairs (so keys can repeat)."""


class Raw(str):
    """Text written as it is into the serialised document (deep nesting, NaN, 1e999)."""


def _parse_json(data: bytes):
    """The document as nested Obj / list / scalars, or None when it is not plain JSON."""
    try:
        return json.loads(data.decode("utf-8-sig"), object_pairs_hook=lambda ps: Obj([list(p) for p in ps]))
    except (ValueError, RecursionError):
        return None


def _dump(node, indent: int | None, ascii_only: bool, level: int = 0) -> str:
    """Serialise what :func:`_parse_json` returned (and the mutations made of it)."""
    if isinstance(node, Raw):
        return str(node)
    if isinstance(node, (Obj, list)):
        if not node:
            return "{}" if isinstance(node, Obj) else "[]"
        pad = "" if indent is None else "\n" + " " * (indent * (level + 1))
        end = "" if indent is None else "\n" + " " * (indent * level)
        if isinstance(node, Obj):
            items = [json.dumps(str(k), ensure_ascii=ascii_only) + ": " + _dump(v, indent, ascii_only, level + 1)
                     for k, v in node]
        else:
            items = [_dump(v, indent, ascii_only, level + 1) for v in node]
        inner = ("," if indent is not None else ", ").join(pad + i for i in items)
        return ("{" if isinstance(node, Obj) else "[") + inner + end + ("}" if isinstance(node, Obj) else "]")
    return json.dumps(node, ensure_ascii=ascii_only)


def _slots(holder: list) -> list[tuple[list, int]]:
    """Every (container, index) in the document; ``holder`` is ``[document]``."""
    out, stack = [], [holder]
    while stack:
        node = stack.pop()
        for i in range(len(node)):
            out.append((node, i))
            child = _get(node, i)
            if isinstance(child, list) and not isinstance(child, Raw):
                stack.append(child)
    return out


def _get(parent, i):
    return parent[i][1] if isinstance(parent, Obj) else parent[i]


def _put(parent, i, value) -> None:
    if isinstance(parent, Obj):
        parent[i][1] = value
    else:
        parent[i] = value


def _other_value(rng: random.Random, value):
    """A value of another type (or an odd one of the same type)."""
    choices = [None, True, False, 0, -1, 1, 2 ** 64, 1.5, "", "x", "8", "-1", " 1", "1e5", [], Obj(),
               [value], Obj([["k", value]]), Raw("NaN"), Raw("1e999"), Raw("-Infinity")]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        choices += [str(value), [value], float(value)]
    digits = value.lstrip("-") if isinstance(value, str) else ""
    if digits.isascii() and digits.isdigit() and len(digits) <= 20:   # not '²', not 5,000 digits
        choices += [int(value), int(value) + 0.5, value + ".0", "0" + value]
    return rng.choice(choices)


def j_type(rng, holder, pool) -> bool:
    """Change the type of one value."""
    parent, i = rng.choice(_slots(holder))
    _put(parent, i, _other_value(rng, _get(parent, i)))
    return True


def _pairs(holder) -> list[tuple[Obj, int]]:
    return [(p, i) for p, i in _slots(holder) if isinstance(p, Obj)]


def _renamed(rng: random.Random, key: str, pool: Pool) -> str:
    k = key or "k"
    return rng.choice((k.upper(), k + "_", k[:-1], k[1:] + k[:1], " " + k, k + " ", "", k * 2,
                       k.replace("e", "\u0435"), k.replace("_", "-"), k + "\u200b",
                       rng.choice(pool.keys), rng.choice(pool.keys)))


def j_key(rng, holder, pool) -> bool:
    """Rename, remove or duplicate one key."""
    pairs = _pairs(holder)
    if not pairs:
        return False
    parent, i = rng.choice(pairs)
    op = rng.random()
    if op < 0.35:
        parent[i][0] = _renamed(rng, str(parent[i][0]), pool)
    elif op < 0.7:
        del parent[i]
    else:
        value = parent[i][1] if rng.random() < 0.5 else _other_value(rng, parent[i][1])
        parent.insert(rng.randint(0, len(parent)), [parent[i][0], value])
    return True


def j_deep(rng, holder, pool) -> bool:
    """Wrap one value in hundreds or thousands of arrays or objects."""
    parent, i = rng.choice(_slots(holder))
    n = rng.choice((20, 100, 1000, 5000, 100_000))
    inner = _dump(_get(parent, i), None, True)
    if rng.random() < 0.5:
        _put(parent, i, Raw("[" * n + inner + "]" * n))
    else:
        _put(parent, i, Raw('{"a": ' * n + inner + "}" * n))
    return True


def j_list(rng, holder, pool) -> bool:
    """Grow a list (its items repeated), or empty a list or object."""
    lists = [(p, i) for p, i in _slots(holder) if isinstance(_get(p, i), list) and not isinstance(_get(p, i), Raw)]
    if not lists:
        return False
    parent, i = rng.choice(lists)
    node = _get(parent, i)
    if rng.random() < 0.35 or not node:
        _put(parent, i, Obj() if isinstance(node, Obj) else [])
    else:
        times = rng.choice((2, 3, 16, 200))
        grown = [([list(p) for p in node] if isinstance(node, Obj) else list(node)) for _ in range(times)]
        _put(parent, i, type(node)(x for part in grown for x in part))
    return True


def j_swap(rng, holder, pool) -> bool:
    """Swap two values, or copy one subtree over another."""
    slots = _slots(holder)
    (p1, i1), (p2, i2) = rng.choice(slots), rng.choice(slots)
    a, b = _get(p1, i1), _get(p2, i2)
    if _contains(a, b) or _contains(b, a):
        return False
    _put(p1, i1, b)
    if rng.random() < 0.5:
        _put(p2, i2, a)
    return True


def _contains(outer, inner) -> bool:
    """True when ``inner`` is ``outer`` or sits inside it (a swap would make a cycle)."""
    if outer is inner:
        return True
    if isinstance(outer, list) and not isinstance(outer, Raw):
        return any(_contains(_get(outer, i), inner) for i in range(len(outer)))
    return False


def j_scalar(rng, holder, pool) -> bool:
    """Replace a string or number with an odd string or an extreme number."""
    slots = [(p, i) for p, i in _slots(holder) if not isinstance(_get(p, i), list) or isinstance(_get(p, i), Raw)]
    if not slots:
        return False
    parent, i = rng.choice(slots)
    if rng.random() < 0.5:
        text = rng.choice(SPECIALS).decode("utf-8", "replace")
        value = rng.choice((text, str(_get(parent, i)) + text, "\ud800", "\x00", "999.1.1.1",
                            "10.0.0.256", "::1", "fe80::1%eth0", "0.0.0.0", "1.2.3", "", " " * 300))
    else:
        number = rng.choice(NUMBERS).decode("utf-8", "replace")
        value = Raw(number) if re.fullmatch(r"-?\d+(\.\d+)?(e\d+)?|NaN|-?Infinity", number) else number
        if rng.random() < 0.5:
            value = str(value)
    _put(parent, i, value)
    return True


JSON_MUTATIONS = ((j_type, 4), (j_key, 5), (j_deep, 1), (j_list, 2), (j_swap, 2), (j_scalar, 5))


def json_mutation(rng: random.Random, data: bytes, pool: Pool) -> tuple[bytes, str] | None:
    """One structural mutation of ``data`` (re-serialised), or None when it is not JSON."""
    doc = _parse_json(data)
    if doc is None:
        return None
    holder = [doc]
    for _attempt in range(4):  # some mutations find nothing to work on (no key, no list)
        fn = _weighted(rng, JSON_MUTATIONS)
        if fn(rng, holder, pool):
            break
    else:
        return None
    text = _dump(holder[0], rng.choice((None, 2, 4)), rng.random() < 0.5)
    return text.encode("utf-8", "surrogatepass"), fn.__name__


def _weighted(rng: random.Random, table):
    return rng.choices([f for f, _w in table], [w for _f, w in table])[0]


def mutate(rng: random.Random, seed: Seed, pool: Pool) -> tuple[bytes, list[str]]:
    """``seed``'s bytes with 1-6 stacked mutations, and the names of the mutations. For
    JSON seeds most mutations are structural, and those come first (a text mutation
    usually leaves no JSON to work on)."""
    data, ops = seed.data, []
    count = 1
    while count < 6 and rng.random() < 0.45:
        count += 1
    structural = sorted((rng.random() < 0.7 for _ in range(count)), reverse=True)
    for use_json in structural:
        done = json_mutation(rng, data, pool) if use_json else None
        if done is None:
            fn = _weighted(rng, TEXT_MUTATIONS)
            done = fn(rng, data, pool), fn.__name__
        if len(done[0]) <= MAX_INPUT:
            data = done[0]
            ops.append(done[1])
    return data, ops


# --------------------------------------------------------------------------- commands

TARGETS = {  # kind -> ((target, weight), ...); "api:" targets call the library
    "rtc": (("check", 5), ("compile", 3), ("api:compile_text", 2)),
    "tables": (("validate", 4), ("import", 3), ("validate-pods", 1), ("api:validate_source", 2),
               ("api:import_table", 1)),
    "scripts": (("lint", 6), ("validate", 1), ("check", 1)),
    "manifests": (("lint", 5), ("validate", 2)),
    "captures": (("api:captures", 4), ("preflight", 3), ("calibrate", 2)),
}
SUBPROCESS_FOR_API = {"api:compile_text": "compile", "api:validate_source": "validate",
                      "api:import_table": "import", "api:captures": "calibrate"}
LINKS = ("roce-200ge", "hccs-910b", "nvlink-bridge")
FORMATS = ("text", "text", "text", "json", "github", "sarif")


def cli_args(rng: random.Random, command: str) -> list[str]:
    """The arguments of one run of ``rtc COMMAND`` (FILE and DIR are placeholders)."""
    from rtc.model.presets import presets
    from rtc.schema.forms import FORMS

    if command == "check":
        return ["check", FILE] + (["--strict"] if rng.random() < 0.2 else [])
    if command == "compile":
        return ["compile", FILE, "--out-dir", DIR + "/out", "--no-diagrams"] + \
            (["--strict"] if rng.random() < 0.1 else [])
    if command == "lint":
        args = ["lint", FILE] + (["--strict"] if rng.random() < 0.2 else [])
        return args + (["--format", rng.choice(FORMATS)] if rng.random() < 0.3 else [])
    if command == "validate-pods":
        return ["validate", "--pods", FILE, str(GOOD_TABLE)]
    if command == "calibrate":
        return ["calibrate", FILE, "--link", rng.choice(LINKS), "--ranks",  # the seeds:
                rng.choice(("2", "8", "16")), "--op", "allreduce"]         # all-reduce runs
    if command == "preflight":
        return ["preflight", "report", DIR + "/res"]   # nccl for a GPU folder: fuzz_one
    if command == "import":
        args = ["import", FILE, "-o", DIR + "/out.rtc"]
        if rng.random() < 0.15:
            args += ["--hardware", rng.choice(list(presets()))]
        if rng.random() < 0.1:
            args += ["--name", rng.choice(("x", "a b", "\u00e9t\u00e9", "1", "-x", "c{i}"))]
        return args
    args = ["validate", FILE, "--format", rng.choice(FORMATS)]
    if rng.random() < 0.2:
        args.append("--strict")
    if rng.random() < 0.15:
        args += ["--hardware", rng.choice(list(presets()))]
    if rng.random() < 0.15:
        args += ["--schema", rng.choice(FORMS)]
    return args


def fill(args: list[str], path: str, workdir: str) -> list[str]:
    """``args`` with the FILE and DIR placeholders replaced."""
    return [path if a == FILE else a.replace(DIR, workdir) for a in args]


def show(args: list[str]) -> str:
    """The command for a reader: ``rtc validate --format json FILE``."""
    return "rtc " + " ".join("FILE" if a == FILE else a.replace(DIR, "DIR") if DIR in a else shlex.quote(a)
                             for a in args)


# --------------------------------------------------------------------------- running

class FuzzTimeout(BaseException):
    """Raised by the alarm when one in-process run takes longer than ``--timeout``."""


@dataclass
class Run:
    """One run of one command: its exit code (None when an exception escaped), what it
    printed, and the exception with its traceback."""

    code: int | None
    output: str = ""
    exc: BaseException | None = None
    tb: str = ""


def _stream(errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
    return stream.buffer.getvalue().decode("utf-8", "replace")


def _exit_code(code) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def run_cli(args: list[str]) -> Run:
    """``rtc ARGS`` in this process: rtc.cli.main with sys.argv patched, SystemExit caught,
    stdout and stderr captured; gc and the SIGTERM handler it changes are restored."""
    import rtc.cli

    out, err = _stream("strict"), _stream("backslashreplace")  # as Python's own stdout, stderr
    saved = sys.argv, sys.stdin, signal.getsignal(signal.SIGTERM)
    sys.argv, sys.stdin = ["rtc", *args], io.TextIOWrapper(io.BytesIO(b""))
    run = Run(None)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rtc.cli.main()
        run.code = 0
    except SystemExit as exc:
        run.code = _exit_code(exc.code)
    except (FuzzTimeout, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - every escaping exception is a finding
        run.exc, run.tb = exc, traceback.format_exc()
    finally:
        sys.argv, sys.stdin = saved[0], saved[1]
        signal.signal(signal.SIGTERM, saved[2])
        gc.enable()
    run.output = _text(out) + _text(err)
    return run


def run_api(target: str, data: bytes, path: str) -> Run:
    """The library call of an ``api:`` target; exit code 0 when the result is ok, else 1."""
    try:
        if target == "api:compile_text":
            from rtc.api import compile_text, rank_table

            res = compile_text(data.decode("utf-8-sig", "replace"), path)
            if res.ok:
                for job in res.topology.jobs or [None]:
                    rank_table(res.topology, job)
            ok = res.ok
        elif target == "api:validate_source":
            from rtc.api.validating import validate_source

            ok = validate_source(data, path).ok
        elif target == "api:captures":
            ok = _captures(data, path)
        else:
            from rtc.api.importing import import_table

            ok = import_table(data, path).ok
    except (FuzzTimeout, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - the API promises never to raise for bad input
        return Run(None, "", exc, traceback.format_exc())
    return Run(0 if ok else 1)


def _captures(data: bytes, path: str) -> bool:
    """Every parser of the tool outputs rtc reads, on the capture ``data`` (at ``path``):
    none may raise; True when the file alone (``load_inventory_files``) gives no error."""
    from rtc import inventory
    from rtc.diagnostics import has_errors
    from rtc.preflight.bench_output import BenchOutputError, read_bench_output

    text = data.decode("utf-8", "replace")
    for name in ("parse_hccn_conf", "parse_ibv_devinfo", "parse_npu_smi_board", "parse_hccn_tool",
                 "parse_npu_smi_topo", "parse_npu_smi_chip_map", "parse_npu_smi_info"):
        getattr(inventory, name)(text)
    from rtc.inventory import allreduce_sweep, nccl_tests, nvidia_smi

    for fn in (nccl_tests.parse_nccl_tests, allreduce_sweep.parse_allreduce_sweep,
               nvidia_smi.parse_gpu_topo, nvidia_smi.parse_gpu_list, nvidia_smi.parse_gpu_names):
        fn(text)
    try:
        read_bench_output(path, text)
    except BenchOutputError:
        pass
    _inv, diags = inventory.load_inventory_files([path])
    return not has_errors(diags)


def _results_folder(seed: Seed, data: bytes, work: str) -> str:
    """``work/res``: a copy of the preflight results folder ``seed`` comes from, with the
    seed's file replaced by ``data`` (a capture from elsewhere: alone in the folder).
    ``preflight nccl`` or ``preflight report``, as the folder is a GPU one or not."""
    res = os.path.join(work, "res")
    origin = ROOT / seed.name
    if origin.is_file() and (DATA / "preflight") in origin.parents:
        shutil.copytree(origin.parent, res)
        name = origin.name
    else:
        os.makedirs(res)
        name = os.path.basename(seed.name)
    with open(os.path.join(res, name), "wb") as f:
        f.write(data)
    return "nccl" if os.path.exists(os.path.join(res, "gpus.csv")) else "report"


def rtc_command() -> list[str]:
    """The installed console script (falls back to ``python -m rtc``)."""
    exe = shutil.which("rtc", path=os.path.dirname(sys.executable)) or shutil.which("rtc")
    return [exe] if exe else [sys.executable, "-m", "rtc"]


def run_subprocess(args: list[str], timeout: float) -> Run | None:
    """The real ``rtc ARGS`` in a subprocess (None when it timed out). A negative exit code
    is death by that signal."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    try:
        res = subprocess.run(rtc_command() + args, capture_output=True, env=env, timeout=timeout,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    return Run(res.returncode, (res.stdout + res.stderr).decode("utf-8", "replace"))


# --------------------------------------------------------------------------- findings

RTC_DIR = str(ROOT / "rtc") + os.sep
FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def _short(filename: str) -> str:
    return "rtc/" + filename[len(RTC_DIR):] if filename.startswith(RTC_DIR) else filename


def _location(frames: list[tuple[str, int, str]]) -> str:
    """The innermost rtc frame (and the innermost frame when that lies outside rtc)."""
    ours = [f for f in frames if f[0].startswith(RTC_DIR)]
    where = ours[-1] if ours else frames[-1] if frames else ("?", 0, "?")
    text = f"{_short(where[0])}:{where[1]} in {where[2]}"
    if frames and ours and frames[-1] is not ours[-1]:
        last = frames[-1]
        text += f" (raised in {Path(last[0]).name}:{last[1]} in {last[2]})"
    return text


def _parse_traceback(text: str) -> tuple[str, str, str]:
    """(exception type, message, location) from the last traceback printed in ``text``."""
    block = text[text.rindex("Traceback"):]
    lines = block.splitlines()
    frames = [(m.group(1), int(m.group(2)), m.group(3)) for m in map(FRAME_RE.match, lines) if m]
    last = max((i for i, ln in enumerate(lines) if FRAME_RE.match(ln)), default=0)
    tail = next((ln for ln in lines[last + 1:] if ln and not ln[0].isspace()), "?")
    kind, _, message = tail.partition(": ")
    return kind.strip().rpartition(".")[2], message.strip(), _location(frames)


def finding_of(run: Run) -> tuple[str, str, str] | None:
    """(exception type, message, location) when ``run`` is a finding, else None."""
    if run.exc is not None:
        frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(run.exc.__traceback__)]
        message = (str(run.exc).splitlines() or [""])[0]
        return type(run.exc).__name__, message[:300], _location(frames)
    if "Traceback" in run.output:
        return _parse_traceback(run.output)
    if run.code not in (0, 1, 2):
        return f"exit code {run.code}", run.output.strip()[-300:], "-"
    return None


@dataclass
class Outcome:
    """One run of one input, as the summary needs it."""

    index: int
    kind: str
    seed: str
    ops: list[str]
    target: str
    mode: str                       # "in-process" or "subprocess"
    command: str
    code: int | None
    seconds: float
    status: str = "ok"              # "ok", "finding" or "slow"
    finding: tuple[str, str, str] | None = None
    tb: str = ""
    data: bytes = b""
    suffix: str = ""
    args: list[str] | None = None   # the rtc arguments (None: a library call)
    saved: str = ""                 # where the input was saved (findings only)


# --------------------------------------------------------------------------- the worker

@dataclass
class Options:
    """The settings a worker needs."""

    seed: int
    timeout: float
    subprocess: float
    max_memory_mb: int


_STATE: dict = {}


def init_worker(seeds: dict[str, list[Seed]], opts: Options, base: str) -> None:
    """Set up this process: seeds and pools, a scratch folder, the alarm, a memory cap."""
    _STATE.update(opts=opts, seeds=seeds, pools={k: make_pool(v) for k, v in seeds.items()},
                  kinds=sorted(seeds, key=KINDS.index),
                  work=tempfile.mkdtemp(prefix=f"w{os.getpid()}-", dir=base))
    signal.signal(signal.SIGALRM, _on_alarm)
    if opts.max_memory_mb > 0:
        limit = opts.max_memory_mb * 1024 * 1024
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise FuzzTimeout()


def run_chunk(indices: list[int]) -> list[Outcome]:
    """Fuzz the inputs with these numbers (in a worker, or in the main process)."""
    return [o for i in indices for o in fuzz_one(i)]


def _scratch(suffix: str, data: bytes) -> tuple[str, str]:
    """Write the input into a clean scratch folder: (input path, folder)."""
    work = _STATE["work"]
    for name in ("out", "out.rtc", "res"):
        target = os.path.join(work, name)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, ignore_errors=True)
        elif os.path.lexists(target):
            os.unlink(target)
    path = os.path.join(work, "input" + suffix)
    with open(path, "wb") as f:
        f.write(data)
    return path, work


def fuzz_one(index: int) -> list[Outcome]:
    """Make input number ``index`` and run it: in this process, and maybe in a subprocess."""
    opts: Options = _STATE["opts"]
    rng = random.Random(f"{opts.seed}:{index}")
    kind = _STATE["kinds"][index % len(_STATE["kinds"])]
    seed = rng.choice(_STATE["seeds"][kind])
    data, ops = mutate(rng, seed, _STATE["pools"][kind])
    target = _weighted(rng, TARGETS[kind])
    args = None if target.startswith("api:") else cli_args(rng, target)
    path, work = _scratch(seed.suffix, data)
    if target == "preflight":
        args[1] = _results_folder(seed, data, work)
    base = dict(index=index, kind=kind, seed=seed.name, ops=ops, data=data, suffix=seed.suffix)
    outcomes = [_timed(lambda: _in_process(target, args, data, path, work), opts.timeout,
                       Outcome(target=target, mode="in-process", args=args,
                               command=show(args) if args else target + "(FILE)", code=None,
                               seconds=0.0, **base))]
    nth = index // len(_STATE["kinds"])  # this input is the nth of its kind
    if int((nth + 1) * opts.subprocess) > int(nth * opts.subprocess):  # evenly spread per kind
        sub_args = args or cli_args(rng, SUBPROCESS_FOR_API[target])
        path, work = _scratch(seed.suffix, data)
        if target == "preflight":
            _results_folder(seed, data, work)
        outcome = Outcome(target=sub_args[0], mode="subprocess", command=show(sub_args), args=sub_args,
                          code=None, seconds=0.0, **base)
        start = time.perf_counter()
        run = run_subprocess(fill(sub_args, path, work), opts.timeout)
        outcomes.append(_settle(outcome, run, time.perf_counter() - start))
    return outcomes


def _in_process(target: str, args: list[str] | None, data: bytes, path: str, work: str) -> Run:
    return run_api(target, data, path) if args is None else run_cli(fill(args, path, work))


def _timed(fn, timeout: float, outcome: Outcome) -> Outcome:
    """Run ``fn`` under the alarm and fill in ``outcome``."""
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        run = fn()
    except FuzzTimeout:
        run = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return _settle(outcome, run, time.perf_counter() - start)


def _settle(outcome: Outcome, run: Run | None, seconds: float) -> Outcome:
    """Fill in the outcome of one run (None: it timed out); keep the data only for findings
    and slow runs."""
    outcome.seconds = seconds
    if run is None:
        outcome.status = "slow"
    else:
        outcome.code = run.code
        outcome.finding = finding_of(run)
        if outcome.finding is not None:
            outcome.status = "finding"
            outcome.tb = run.tb or run.output[-6000:]
    if outcome.status == "ok":
        outcome.data = b""
    return outcome


# --------------------------------------------------------------------------- the run

def run_all(n: int, jobs: int, seeds: dict, opts: Options, base: str) -> list[Outcome]:
    """Fuzz inputs 0..n-1 over ``jobs`` processes (here when ``jobs`` is 1), with progress
    on stderr."""
    size = max(1, min(50, n // (max(jobs, 1) * 8) or 1))
    chunks = [list(range(i, min(n, i + size))) for i in range(0, n, size)]
    outcomes: list[Outcome] = []
    start, shown = time.perf_counter(), 0
    if jobs <= 1:
        init_worker(seeds, opts, base)
        results = map(run_chunk, chunks)
    else:
        import multiprocessing

        ctx = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
        pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=init_worker,
                                   initargs=(seeds, opts, base))
        results = pool.map(run_chunk, chunks)
    try:
        for part in results:
            outcomes.extend(part)
            done = len({o.index for o in outcomes})
            if done * 10 // n > shown * 10 // n or done == n:
                shown = done
                bad = sum(o.status == "finding" for o in outcomes)
                print(f"fuzz: {done}/{n} inputs, {bad} findings, {time.perf_counter() - start:.0f}s",
                      file=sys.stderr, flush=True)
    finally:
        if jobs > 1:
            pool.shutdown(cancel_futures=True)
    return outcomes


def save_findings(outcomes: list[Outcome], out_dir: Path | None) -> tuple[dict, Path | None]:
    """Group the findings by (type, location); save the smallest inputs of each group, and
    the first slow inputs. Returns ({signature: [outcomes, smallest first]}, the folder
    used, None when there was nothing to save and no ``out_dir``)."""
    groups: dict[tuple, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if o.status == "finding":
            groups[(o.finding[0], o.finding[2])].append(o)
    slow = [o for o in outcomes if o.status == "slow"][:SAVED_PER_CRASH * 2]
    if not groups and not slow:
        return {}, out_dir
    if out_dir is None:
        out_dir = Path(tempfile.mkdtemp(prefix="rtc-fuzz-findings-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    for items in groups.values():
        items.sort(key=lambda o: (len(o.data), o.index))
        for o in items[:SAVED_PER_CRASH]:
            _save(o, out_dir, "")
    for o in slow:
        _save(o, out_dir, "slow-")
    return dict(groups), out_dir


def _save(o: Outcome, out_dir: Path, prefix: str) -> None:
    """Write one input, and beside it a .txt: the command, mutations, what happened."""
    name = f"{prefix}{o.kind}-{o.index:05d}-{o.target.replace('api:', '')}-{o.mode}"
    path = out_dir / (name + o.suffix)
    path.write_bytes(o.data)
    what = (f"finding: {o.finding[0]}: {o.finding[1]}\nat: {o.finding[2]}" if o.finding
            else f"slow: still running after {o.seconds:.1f}s")
    path.with_name(name + ".txt").write_text(
        f"command: {o.command}\nmode: {o.mode}\nseed: {o.seed}\nmutations: {', '.join(o.ops)}\n"
        f"exit code: {o.code}\n{what}\n\n{o.tb}\n", encoding="utf-8", errors="replace")
    o.saved = str(path)


def reproduces(o: Outcome, timeout: float) -> str:
    """Whether a saved input gives a finding in a fresh ``rtc`` process."""
    path = o.saved
    if not path:
        return "not saved"
    args = o.args or cli_args(random.Random(0), SUBPROCESS_FOR_API[o.target])
    with tempfile.TemporaryDirectory(prefix="rtc-fuzz-repro-") as tmp:
        run = run_subprocess(fill(args, path, tmp), timeout)
    if run is None:
        return "timed out in a fresh process"
    found = finding_of(run)
    how = "rtc " + shlex.join(fill(args, path, "DIR"))
    return (f"yes ({how}: {found[0]})" if found else f"no ({how} exits {run.code} cleanly)")


# --------------------------------------------------------------------------- the summary

def print_summary(outcomes: list[Outcome], n: int, seconds: float, opts: Options, jobs: int) -> None:
    """Inputs per kind, runs and exit codes per command, slow inputs."""
    first = {o.index: o for o in outcomes if o.mode == "in-process"}
    kinds = Counter(o.kind for o in first.values())
    print(f"rtc fuzz: {n} inputs in {seconds:.1f}s (seed {opts.seed}, jobs {jobs}, "
          f"{n / max(seconds, 1e-9):.0f} inputs/s)")
    print("inputs per kind: " + ", ".join(f"{k} {kinds[k]}" for k in KINDS if k in kinds))
    rows: dict[tuple, Counter] = defaultdict(Counter)
    for o in outcomes:
        code = {"slow": "timeout", "finding": "finding"}.get(o.status, o.code)
        rows[(o.kind, o.target, o.mode)][code] += 1
    print("runs (kind, command, mode: exit codes; api targets: 0 ok, 1 diagnostics):")
    for (kind, target, mode), codes in sorted(rows.items()):
        total = sum(codes.values())
        print(f"  {kind:8} {target:20} {mode:11} {total:6}  "
              + ", ".join(f"{c}: {k}" for c, k in sorted(codes.items(), key=lambda x: str(x[0]))))
    overall = Counter(o.code for o in outcomes if o.status == "ok")
    print("exit codes (clean runs): " + ", ".join(f"{c}: {k}" for c, k in sorted(overall.items())))
    subs = sum(o.mode == "subprocess" for o in outcomes)
    print(f"subprocess runs: {subs}")
    slow = [o for o in outcomes if o.status == "slow"]
    print(f"timeouts (over {opts.timeout:g}s, not counted as findings): {len(slow)}")
    for o in slow[:10]:
        print(f"  input {o.index} ({o.seed}; {', '.join(o.ops)}): {o.command} [{o.mode}]"
              + (f" -> {o.saved}" if o.saved else ""))
    top = sorted((o for o in outcomes if o.status != "slow"), key=lambda o: -o.seconds)[:3]
    print("slowest runs: " + "; ".join(f"{o.seconds:.2f}s input {o.index} {o.mode} {o.command} ({o.seed})"
                                       for o in top))


def print_findings(groups: dict, out_dir: Path | None, timeout: float) -> None:
    """The distinct crashes: type, location, how many inputs, command, saved input, and
    whether the smallest reproduces in a fresh process."""
    total = sum(len(v) for v in groups.values())
    print(f"findings: {total} runs, {len(groups)} distinct (by exception type and location)")
    for k, ((kind, where), items) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1])), 1):
        o = items[0]
        print(f"  [{k}] {kind}: {o.finding[1][:200]}")
        print(f"      at {where}")
        cmds = Counter(f"{i.command} [{i.mode}]" for i in items)
        print(f"      {len(items)} runs: " + "; ".join(f"{c} x{m}" for c, m in cmds.most_common(4)))
        print(f"      input: {o.saved or '?'} (seed {o.seed}; {', '.join(o.ops)})")
        print(f"      fresh process: {reproduces(o, timeout)}")
    if groups:
        print(f"saved inputs: {out_dir}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="how many inputs (default 1000)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="comma list of " + ", ".join(KINDS) + " (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="keep the crashing inputs here")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--subprocess", type=float, default=0.02, metavar="FRACTION",
                    help="fraction of inputs also run by the real rtc in a subprocess (default 0.02)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run before it counts as slow")
    ap.add_argument("--max-memory-mb", type=int, default=4096,
                    help="address-space cap per worker (0: none; default 4096)")
    args = ap.parse_args(argv)
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds or args.n < 1 or args.jobs < 1 or not 0 <= args.subprocess <= 1:
        ap.error(f"unknown kinds {bad}" if bad else "--n and --jobs must be at least 1, --kinds not "
                 "empty, --subprocess between 0 and 1")
    args.kinds = kinds
    return args


def sources_stamp() -> float:
    """The newest modification time of rtc's own sources (lazy imports and subprocesses
    load them during the run: an edit meanwhile can give findings of a half-saved file)."""
    return max((p.stat().st_mtime for p in (ROOT / "rtc").rglob("*.py")), default=0.0)


def main(argv: list[str] | None = None) -> int:
    """Fuzz, print the summary, return 1 when there is any finding."""
    args = parse_args(argv)
    opts = Options(args.seed, args.timeout, args.subprocess, args.max_memory_mb)
    base = tempfile.mkdtemp(prefix="rtc-fuzz-")
    stamp = sources_stamp()
    try:
        seeds = load_seeds(args.kinds, Path(base))
        print("seeds: " + ", ".join(f"{k} {len(v)}" for k, v in seeds.items()), file=sys.stderr)
        start = time.perf_counter()
        outcomes = run_all(args.n, args.jobs, seeds, opts, base)
        seconds = time.perf_counter() - start
        groups, out_dir = save_findings(outcomes, args.out)
        print_summary(outcomes, args.n, seconds, opts, args.jobs)
        print_findings(groups, out_dir, args.timeout)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if sources_stamp() != stamp:
        print("note: files under rtc/ changed during the run; a finding that does not reproduce "
              "in a fresh process may come from a half-saved file")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
