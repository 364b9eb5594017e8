"""Cooperative cancellation: a read run inside `cancellable(event)` stops at the engine's next checkpoint once the
event is set, keeps nothing half-built, and the same read afterwards answers as if it had never been cancelled."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stratagate.cancellation import OperationCancelled, cancellable, checkpoint
from stratagate.memory import open as open_memory
from stratagate.search.index import InvertedIndex
from tests.conftest import REFERENCE_NAMESPACE


def test_a_checkpoint_outside_a_cancellable_scope_never_raises():
    checkpoint()
    with cancellable(threading.Event()):
        checkpoint()


def test_a_cancelled_explained_search_stops_while_indexing_and_keeps_no_half_built_index(
    reference_db_copy: Path, monkeypatch
):
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    try:
        expected = [hit.event.id for hit in memory.search_events("Atlas storage", explain=True)]
        memory.refresh()  # forget the index that search built
        cancelled, indexed = threading.Event(), []
        original_add = InvertedIndex.add

        def add_then_cancel(self, key, fields):
            indexed.append(key)
            original_add(self, key, fields)
            if len(indexed) == 3:
                cancelled.set()  # the user presses Cancel while the index is being built

        monkeypatch.setattr(InvertedIndex, "add", add_then_cancel)
        with cancellable(cancelled), pytest.raises(OperationCancelled):
            memory.search_events("Atlas storage", explain=True)
        assert len(indexed) == 3
        monkeypatch.undo()
        assert [hit.event.id for hit in memory.search_events("Atlas storage", explain=True)] == expected
    finally:
        memory.close()


def test_a_cancelled_scope_stops_section_loading_and_keeps_nothing_of_it(reference_db_copy: Path):
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    try:
        events = len(memory.list_events())
        memory.refresh()
        cancelled = threading.Event()
        cancelled.set()
        with cancellable(cancelled), pytest.raises(OperationCancelled):
            memory.list_events()
        assert len(memory.list_events()) == events
    finally:
        memory.close()
