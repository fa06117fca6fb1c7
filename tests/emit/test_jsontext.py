"""The fast JSON writers are byte-identical to json.dumps (and ip_text to str)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import GOLDEN
from rtc.emit.jsontext import dumps_indented

scalars = st.one_of(st.text(), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(values)
def test_same_as_json_dumps(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/hccl*.json")), ids=lambda p: p.parent.name)
def test_goldens_round_trip(path):
    text = path.read_text(encoding="utf-8")
    assert dumps_indented(json.loads(text)) + "\n" == text


def test_rejects_non_json():
    with pytest.raises(TypeError):
        dumps_indented({"a": object()})


# Lists of same-keyed all-string objects take a one-format-per-object path: keys and
# values with '%', quotes, backslashes and non-ASCII must come out exactly as json.dumps.
tricky = st.text(alphabet="ab%s\"\\é\n", max_size=5)
keys = st.lists(tricky, min_size=1, max_size=4, unique=True)


@settings(max_examples=200, deadline=None)
@given(keys, st.data())
def test_flat_object_lists_same_as_json_dumps(key_list, data):
    rows = data.draw(st.lists(st.fixed_dictionaries({k: tricky for k in key_list}),
                              min_size=1, max_size=5))
    # sometimes break the pattern: a different key order, or a non-string value
    if data.draw(st.booleans()) and len(key_list) > 1:
        rows.append(dict(reversed(list(rows[0].items()))))
    if data.draw(st.booleans()):
        rows.append({key_list[0]: 7})
    doc = {"server_list": [{"server_id": "%s%%", "device": rows}]}
    assert dumps_indented(doc) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert dumps_indented(rows) == json.dumps(rows, indent=2, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(values, st.booleans())
def test_one_line_encoder_same_as_json_dumps(value, ascii_only):
    from rtc.textfmt import one_line_encoder

    assert one_line_encoder(ascii_only)(value) == json.dumps(value, ensure_ascii=ascii_only)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.ip_addresses(), st.none()))
def test_ip_text_is_str(ip):
    from rtc.textfmt import ip_text

    assert ip_text(ip) == (None if ip is None else str(ip))
