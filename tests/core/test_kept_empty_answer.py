"""A query without words or filters answers from what it kept while nothing was committed (the storage tells
without a read): a commit by anyone, another process included, is seen by the next search."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import stratagate
from stratagate.errors import StorageOpenError
from stratagate.retrieval import Retrieval
from stratagate.storage import revision_notify
from tests.core.helpers import WithoutStoredIndexes
from tests.postgres_server import fresh_database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return (str(tmp_path / "memory.sqlite") if backend == "sqlite"
            else fresh_database(request.getfixturevalue("postgres_server")))


def _memory_with_cards(database: str, count: int = 8) -> list[str]:
    with stratagate.open(database, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        cards = [memory.add_event(f"card {number}", source_block_id=block_id).id for number in range(count)]
        memory.search_events("")  # builds the index into the database, as any writable open's first search does
        return cards


def _pin_in_another_process(database: str, event_id: str) -> None:
    script = textwrap.dedent(f"""
        import stratagate
        with stratagate.open({database!r}, "ns") as memory:
            memory.pin_event({event_id!r})
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def _ids(memory: stratagate.StrataGate) -> list[str]:
    return [hit.id for hit in memory.search_events("")]


def _fresh_answer(memory: stratagate.StrataGate) -> list[str]:
    return [hit.id for hit in Retrieval(WithoutStoredIndexes(memory)).search_events("")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_commit_in_another_process_is_seen_by_the_next_search(tmp_path: Path, backend: str,
                                                                request: pytest.FixtureRequest) -> None:
    database = _database(backend, tmp_path, request)
    cards = _memory_with_cards(database)
    with stratagate.open(database, "ns") as reader:
        before = _ids(reader)
        assert _ids(reader) == before  # kept, answered without a read
        pinned = cards[0] if cards[0] not in before[:1] else cards[1]
        _pin_in_another_process(database, pinned)
        after = _ids(reader)
        assert after[0] == pinned and after != before
        reader.refresh()
        assert after == _fresh_answer(reader)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_commit_by_another_open_or_by_the_reader_is_seen_by_the_next_search(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    database = _database(backend, tmp_path, request)
    cards = _memory_with_cards(database)
    with stratagate.open(database, "ns") as reader, stratagate.open(database, "ns") as writer:
        before = _ids(reader)
        writer.pin_event(cards[2])
        assert _ids(reader)[0] == cards[2]
        reader.refresh()
        reader.forget_event(cards[2])
        assert cards[2] not in _ids(reader)
        writer.refresh()
        assert cards[2] not in _ids(writer)
        reader.restore_event(cards[2])
        assert _ids(writer)[0] == cards[2]
        assert _ids(reader) == _ids(writer) != before


def test_a_caller_changing_its_hits_changes_no_later_answer(tmp_path: Path) -> None:
    database = str(tmp_path / "memory.sqlite")
    with stratagate.open(database, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(3):
            memory.add_event(f"card {number}", source_block_id=block_id, tags=["tag"], quotes=["quote"],
                             temporal={"participants": ["Ann"], "eventType": "meeting", "note": {"kept": [1]}})
    with stratagate.open(database, "ns") as memory:
        memory.search_events("")
        expected = copy.deepcopy([hit.event for hit in memory.search_events("")])  # answered from what was kept
        for _ in range(2):
            for hit in memory.search_events(""):
                event = hit.event
                event.title = "changed"
                for values in (event.tags, event.quotes, event.source_message_ids, event.temporal.participants):
                    values.append("changed")
                event.temporal.extra["note"]["kept"].append("changed")
                event.temporal.extra["added"] = "changed"
                event.weight.pinned = True
            assert [hit.event for hit in memory.search_events("")] == expected


def test_a_commit_inside_an_exclusive_block_is_seen_there_and_after_a_rollback(tmp_path: Path) -> None:
    database = str(tmp_path / "memory.sqlite")
    cards = _memory_with_cards(database)
    with stratagate.open(database, "ns") as memory:
        before = _ids(memory)
        backend = memory.backend
        with pytest.raises(RuntimeError), backend.exclusive("ns"):
            memory.pin_event(cards[3])
            assert _ids(memory)[0] == cards[3]
            raise RuntimeError("roll back")
        memory.refresh()
        assert _ids(memory) == before


@pytest.mark.postgres
def test_a_postgresql_database_without_the_trigger_is_read_with_the_round_trip(
        request: pytest.FixtureRequest) -> None:
    database = fresh_database(request.getfixturevalue("postgres_server"))
    _memory_with_cards(database)
    drop = f"DROP TRIGGER {revision_notify.TRIGGER} ON memory_spaces; DROP FUNCTION {revision_notify.TRIGGER}()"
    # As an older database, before any writable open of this version.
    with stratagate.open(database, "ns") as memory, memory.backend.engine.begin() as connection:
        connection.exec_driver_sql(drop)
    with stratagate.open(database, "ns", read_only=True) as reader:
        before = _ids(reader)
        assert reader.backend.change_marker() is None
        with stratagate.open(database, "ns") as writer:  # creates the trigger again: the reader does not listen
            writer.pin_event(before[-1])
        assert _ids(reader)[0] == before[-1]


@pytest.mark.postgres
def test_a_trigger_of_that_name_doing_anything_else_is_refused(request: pytest.FixtureRequest) -> None:
    database = fresh_database(request.getfixturevalue("postgres_server"))
    _memory_with_cards(database, 1)
    with stratagate.open(database, "ns") as memory, memory.backend.engine.begin() as connection:
        connection.exec_driver_sql(
            f"CREATE OR REPLACE FUNCTION {revision_notify.TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN DELETE FROM events; RETURN NULL; END; $$")
    with pytest.raises(StorageOpenError, match=revision_notify.TRIGGER):
        stratagate.open(database, "ns")
    with stratagate.open(database, "ns", read_only=True) as reader:
        assert reader.backend.change_marker() is None
        assert len(_ids(reader)) == 1
