"""Cooperative cancellation: a read run inside `cancellable(event)` stops at the engine's next checkpoint once the
event is set, keeps nothing half-built, and the same read afterwards answers as if it had never been cancelled."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stratagate.cancellation import OperationCancelled, cancellable, checkpoint
from stratagate.memory import open as open_memory
from stratagate.search import stored
from tests.conftest import REFERENCE_NAMESPACE


def test_a_checkpoint_outside_a_cancellable_scope_never_raises():
    checkpoint()
    with cancellable(threading.Event()):
        checkpoint()


def test_a_cancelled_explained_search_stops_while_indexing_and_keeps_no_half_built_index(
    reference_db_copy: Path, monkeypatch, tmp_path: Path
):
    """The reference's v5 file gets its event index built into the outside cache on the first search: a
    cancel during that build leaves no cache file, and the next search builds it whole."""
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    expected = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    try:
        wanted = [hit.event.id for hit in expected.search_events("Atlas storage", explain=True)]
    finally:
        expected.close()
    for built in (tmp_path / "cache").rglob("*.sqlite"):
        built.unlink()
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    try:
        cancelled, indexed = threading.Event(), []
        original_records = stored.read_event_records

        def records_then_cancel(connection, namespace):
            for item in original_records(connection, namespace):
                indexed.append(item[0])
                if len(indexed) == 3:
                    cancelled.set()  # the user presses Cancel while the index is being built
                yield item

        monkeypatch.setattr(stored, "read_event_records", records_then_cancel)
        with cancellable(cancelled), pytest.raises(OperationCancelled):
            memory.search_events("Atlas storage", explain=True)
        assert len(indexed) == 3
        assert not [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]
        monkeypatch.undo()
        monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
        assert [hit.event.id for hit in memory.search_events("Atlas storage", explain=True)] == wanted
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
