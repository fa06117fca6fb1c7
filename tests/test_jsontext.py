"""The fast JSON writer is byte-identical to json.dumps(indent=2, ensure_ascii=False)."""

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
