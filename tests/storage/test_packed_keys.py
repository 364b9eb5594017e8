"""Packed keys read like the list of str they replace, and the stores list the same keys packed."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.storage.event_order import EVENT_ORDERS, EventOrder
from stratagate.storage.packed_keys import SEPARATOR, PackedKeys
from stratagate.storage.sql import SqlBackend, ensure_math_functions, open_backend
from stratagate.weights import BASE_LAMBDA
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
                order = EventOrder(name, descending, turn=snapshot["currentTurn"] + 40, base_lambda=BASE_LAMBDA)
                listed = list(backend.packed_keys(NS, "events", None, order))
                assert listed == list(reference.packed_keys(NS, "events", None, order)), (name, descending)
    finally:
        reference.close()
    with pytest.raises(ValueError, match="Unknown event order"):
        EventOrder("colour")
    with pytest.raises(ValueError, match="base decay rate"):
        EventOrder("weight")


class _SqliteWithoutMath:
    """A connection to an SQLite built without its math functions: `exp` and `ln` are unknown until added."""

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:")
        self.added: list[str] = []

    def execute(self, sql: str) -> sqlite3.Cursor:
        if not self.added and ("exp(" in sql or "ln(" in sql):
            raise sqlite3.OperationalError("no such function: exp")
        return self.connection.execute(sql)

    def create_function(self, name: str, arity: int, function: Any, *, deterministic: bool) -> None:
        self.added.append(name)
        self.connection.create_function(name, arity, function, deterministic=deterministic)


def test_an_sqlite_without_math_functions_gets_pythons_for_the_weight_order() -> None:
    connection = _SqliteWithoutMath()
    ensure_math_functions(connection)
    assert connection.added == ["exp", "ln"]
    assert connection.execute("SELECT exp(0), ln(1)").fetchone() == (1.0, 0.0)
    present = sqlite3.connect(":memory:")
    ensure_math_functions(present)  # a build with them keeps its own
