"""A JSON column reads as `json.loads` reads its text; text it refuses is a SnapshotError naming the row
and column."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.errors import SnapshotError
from stratagate.storage.records import load_json
from tests.property_budget import examples

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=12)
_texts = st.one_of(
    _values.map(lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))),
    st.tuples(st.sampled_from(["", " ", "\n", "\ufeff"]), _values.map(json.dumps),
              st.sampled_from(["", " ", "\t\n", "x", ",1", "]"])).map("".join),
    st.text(alphabet='[]{}",:0123456789.-eEtrufalsnNI \\'),
)


@settings(max_examples=examples(300), deadline=None)
@given(text=_texts)
def test_a_json_column_reads_as_json_loads_reads_it(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError as error:
        refused = f"row 'e1': column tags_json is not valid JSON ({error})"
        with pytest.raises(SnapshotError, match=re.escape(refused)):
            load_json({"id": "e1", "tags_json": text}, "tags_json")
        return
    found = load_json({"id": "e1", "tags_json": text}, "tags_json")
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_text_nested_too_deeply_is_refused_by_name() -> None:
    refused = "row 'e1': column tags_json is not valid JSON (nested too deeply)"
    with pytest.raises(SnapshotError, match=re.escape(refused)):
        load_json({"id": "e1", "tags_json": "[" * 100_000 + "]" * 100_000}, "tags_json")
