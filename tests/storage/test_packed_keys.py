"""Packed keys read like the list of str they replace, and the stores list the same keys packed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.storage.event_order import EVENT_ORDERS, EventOrder
from stratagate.storage.packed_keys import SEPARATOR, PackedKeys
from stratagate.storage.sql import SqlBackend, open_backend
from tests.property_budget import examples

NS = "project:atlas"
keys_without_separator = st.lists(st.text(alphabet=st.characters(blacklist_characters=SEPARATOR), max_size=12))


@settings(max_examples=examples(200), deadline=None)
@given(keys_without_separator, st.text(max_size=12))
def test_packed_keys_read_and_search_like_a_list(keys: list[str], probe: str) -> None:
    packed = PackedKeys.pack(keys)
    assert packed is not None and len(packed) == len(keys) and list(packed) == keys
    assert [packed[index] for index in range(-len(keys), len(keys))] == keys + keys
    assert packed[1:-1:2] == keys[1:-1:2]
    for key in [*keys, probe]:
        assert (key in packed) == (key in keys)
        if key in keys:
            assert packed.index(key) == keys.index(key)
        else:
            with pytest.raises(ValueError):
                packed.index(key)


def test_a_key_holding_the_separator_is_not_packed() -> None:
    assert PackedKeys.pack(["a", f"b{SEPARATOR}c"]) is None
    with pytest.raises(IndexError):
        PackedKeys.pack(["a"])[1]  # type: ignore[index]


def test_the_stores_list_the_same_keys_packed(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], 1)
    for where in (None, {"status": "active"}, {"text": "atlas"}, {"pinned": True}, {"status": "none such"}):
        packed = backend.packed_keys(NS, "events", where)
        assert isinstance(packed, PackedKeys) and list(packed) == backend.query_keys(NS, "events", where)
    assert list(backend.packed_keys(NS, "blocks")) == backend.query_keys(NS, "blocks")


def test_every_event_order_is_the_same_on_each_store(backend: SqlBackend, reference_v7: dict[str, Any], tmp_path) -> None:
    """PostgreSQL orders events as SQLite does (the app's tests check SQLite's against the shown rows)."""
    snapshot = reference_v7["snapshot"]
    backend.import_namespace(NS, snapshot, 1)
    reference = open_backend(tmp_path / "reference.sqlite")
    try:
        reference.import_namespace(NS, snapshot, 1)
        for name in EVENT_ORDERS:
            for descending in (False, True):
                order = EventOrder(name, descending, turn=snapshot["currentTurn"] + 40)
                listed = list(backend.packed_keys(NS, "events", None, order))
                assert listed == list(reference.packed_keys(NS, "events", None, order)), (name, descending)
    finally:
        reference.close()
    with pytest.raises(ValueError, match="Unknown event order"):
        EventOrder("colour")
