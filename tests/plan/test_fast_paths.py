"""The faster forms that `rtc compile` uses at scale give exactly what the plain forms they
replaced give: the rank table's address text, the file-name test, vLLM flag parsing, a
process's cached words and the rank lists of a placement."""

from __future__ import annotations

import ipaddress
import unicodedata
from typing import NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from rtc.emit.hccl_json import _int_text
from rtc.model.topology import MAX_NAME_CHARS, file_name_problem
from rtc.parallel.placement import _MAX_WORLD, _rank_lists
from rtc.plan.launch import Proc, Ref
from rtc.plan.versions import VLLM_ALIASES, VLLM_SWITCHES, vllm_flags
from rtc.textfmt import ip_text_memo as _ip_texts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6),
                          st.integers(0, 2**24 - 1).map(lambda n: ipaddress.IPv4Address(n << 8))),
                max_size=40))
def test_ip_text_is_str(ips):
    text = _ip_texts()  # one function for the list: its cache carries across addresses
    assert [text(ip) for ip in ips] == [str(ip) for ip in ips]


@given(st.integers(-5, 10**12))
def test_int_text_is_str(n):
    assert _int_text(n) == str(n)


# file_name_problem as it was, as a table: the first test a name fails gives its reason.
_PER_CHARACTER = (
    (lambda n: "/" in n or "\\" in n, "holds a path separator"),
    (lambda n: n in (".", ".."), "is a folder name"),
    (lambda n: any(ord(c) < 32 or ord(c) == 127 or unicodedata.category(c) == "Cf" for c in n),
     "holds a control or invisible formatting character"),
    (lambda n: any(0xD800 <= ord(c) <= 0xDFFF for c in n),
     "holds a lone surrogate (not a character)"),
    (lambda n: n.startswith("-"), "starts with '-'"),
    (lambda n: len(n) > MAX_NAME_CHARS, f"is longer than {MAX_NAME_CHARS} characters"),
)


def _slow_file_name_problem(name: str) -> str | None:
    return next((why for test, why in _PER_CHARACTER if test(name)), None)


names = st.one_of(st.text(max_size=12),
                  st.text(st.characters(max_codepoint=127), max_size=12),
                  st.text(st.sampled_from("ab-./\x00\x1f\x7f\u00ad\u200b\ud800é"), max_size=8))


@settings(max_examples=400, deadline=None)
@given(names)
def test_file_name_problem_same_as_per_character_test(name):
    assert file_name_problem(name) == _slow_file_name_problem(name)


def _slow_vllm_flags(words: list[str]) -> dict:
    """vllm_flags as it was (index arithmetic with startswith)."""
    out: dict = {}
    k = 0
    while k < len(words):
        w = words[k]
        if w.startswith("-") and not w[1:2].isdigit():
            name, eq, value = w.partition("=")
            name = VLLM_ALIASES.get(name, name)
            if eq:
                out[name] = value
            elif name in VLLM_SWITCHES or k + 1 >= len(words) or words[k + 1].startswith("-"):
                out[name] = None
            else:
                out[name] = words[k + 1]
                k += 1
        k += 1
    return out


words = st.lists(st.one_of(st.sampled_from(sorted(VLLM_ALIASES) + list(VLLM_SWITCHES)
                                           + ["--port", "-1", "8000", "-", "", "--x=1", "-tp=2",
                                              "serve", "--data-parallel-size"]),
                           st.text(max_size=4)), max_size=12)


@settings(max_examples=400, deadline=None)
@given(words)
def test_vllm_flags_same_as_before(ws):
    assert vllm_flags(ws) == _slow_vllm_flags(ws)


def test_proc_words_and_flags_cached_yet_equal():
    p = Proc(["vllm", "serve", Ref("MODEL"), "-tp", "8", "--headless"])
    first = p.words()
    first.append("--changed")  # a caller's list is its own: the cache is untouched
    assert p.words() == ["vllm", "serve", "$MODEL", "-tp", "8", "--headless"]
    assert p.words({"MODEL": "/m"})[2] == "/m"
    assert p.flags() == vllm_flags(p.words()) == {"--tensor-parallel-size": "8",
                                                  "--headless": None}
    assert p.flags() is p.flags()


def _slow_rank_lists(plans, alloc):
    """_rank_lists as it was: one step per rank."""
    rank_node, rank_position = [-1] * alloc, [-1] * alloc
    for p in plans:
        for k in range(p.placed):
            r = p.first_rank + k
            if 0 <= r < alloc:
                rank_node[r] = p.index
                rank_position[r] = p.first_position + k
    return rank_node, rank_position


class _Plan(NamedTuple):
    index: int
    first_position: int
    first_rank: int
    placed: int


plans = st.lists(st.builds(_Plan, st.integers(0, 9), st.integers(0, 60), st.integers(-8, 60),
                           st.integers(0, 12)), max_size=8)


@settings(max_examples=300, deadline=None)
@given(plans, st.integers(1, 64))
def test_rank_lists_by_slices_same_as_per_rank(ps, world):
    assert _rank_lists(ps, world) == _slow_rank_lists(ps, min(world, _MAX_WORLD))
