"""The engine behaves the same on an SQLite file and on PostgreSQL (through `stratagate.open`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text as sql_text

import stratagate
from stratagate import rules
from stratagate.demo import counter_ids
from stratagate.errors import SnapshotError, StorageConflictError
from stratagate.journal import backend_entries, new_entry
from stratagate.memory import StrataGate
from tests.core.helpers import Clock
from tests.postgres_server import fresh_database

TURNS = [
    ("Dana leads project Atlas.", "atlas"), ("We decided to use SQLite for storage in Atlas.", "atlas"),
    ("Bob is based in Berlin.", "atlas"), ("Schedule the Atlas demo for March 20.", "atlas"),
    ("Please keep answers short; I prefer bullet points.", "ops"), ("Backups run nightly.", "ops"),
    ("We switched to PostgreSQL for storage instead of SQLite.", "atlas"), ("ok", "atlas"),
    ("Bob moved to Lisbon this month.", "atlas"), ("ok", "atlas"), ("ok", "ops"), ("ok", "ops"),
]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "memory.sqlite")
    return fresh_database(request.getfixturevalue("postgres_server"))


def options() -> dict:
    return {"block_turn_size": 2, "now": Clock("2026-03-20T00:00:00Z", timedelta(seconds=1)),
            "id_factory": counter_ids(), "element_id_factory": counter_ids(), **rules.engine_options()}


def run_script(memory: StrataGate) -> None:
    for number, (text, thread) in enumerate(TURNS):
        memory.append_turn(text, "Noted.", thread_id=thread, created_at=f"2026-03-{number + 2:02d}T09:00:00Z",
                           receipt_id=f"turn-{number}")
    memory.resume_pending_work()
    first = memory.list_events()[0]
    memory.pin_event(first.id, journal_entry=new_entry("test", "pin", [first.id], {"pinned": False}, {"pinned": True},
                                                       time="2026-03-20T00:00:00.000Z"))
    memory.expand_block(memory.list_blocks()[0].id, 5, source="user")
    memory.record_memory_use([first.id], receipt_id="use-1", audit={"verdict": "sufficient"})


def observe(memory: StrataGate) -> dict:
    snapshot = memory.export_snapshot()
    # Storage reloads extraction jobs by block id (the reference's order, §11.17); nothing depends on it.
    snapshot["extractionJobs"].sort(key=lambda job: job["blockId"])
    return {
        "snapshot": snapshot,
        "search": [(hit.event.id, hit.score) for hit in memory.search_events("storage", limit=10)],
        "filtered": [(hit.event.id, hit.score) for hit in memory.search_events("", participants=["Bob"])],
        "elements": [(hit.fact.id, hit.score) for hit in memory.search_elements("Bob")],
        "context": [(entry.id, entry.level, entry.age) for entry in memory.get_block_context()],
        "filter values": {name: memory.event_filter_values(name) for name in ("eventType", "participant")},
    }


def test_a_database_memory_equals_the_same_script_in_memory(database):
    memory = stratagate.open(database, "atlas", **options())
    run_script(memory)
    memory.close()
    reopened = stratagate.open(database, "atlas")
    stored = observe(reopened)
    journal = [(record.action, record.ids) for record in backend_entries(reopened.backend, "atlas")]
    reopened.close()
    ephemeral = stratagate.in_memory(namespace="atlas", **options())
    run_script(ephemeral)
    assert stored == observe(ephemeral)
    snapshot = stored["snapshot"]
    assert len(snapshot["blocks"]) == 6 and snapshot["events"] and snapshot["elements"]
    assert snapshot["blocks"][0]["lastLiftedBy"] == "user"
    assert journal == [("pin", [snapshot["events"][0]["id"]])]


def test_two_writers_conflict_and_the_loser_changes_nothing(database):
    stratagate.open(database, "atlas").close()
    first, second = stratagate.open(database, "atlas"), stratagate.open(database, "atlas")
    first.append_turn("from first", "ok")
    with pytest.raises(StorageConflictError):
        second.append_turn("from second", "ok")
    assert [m.content for m in second.list_open_tail()] == ["from first", "ok"]
    first.close()
    second.close()


def test_a_listing_that_parses_a_damaged_events_json_names_its_row(database):
    memory = stratagate.open(database, "atlas", **options())
    run_script(memory)
    damaged = memory.list_events()[0].id
    with memory.backend.engine.begin() as connection:
        connection.execute(sql_text("UPDATE events SET temporal_json = '{broken' WHERE id = :id"), {"id": damaged})
    memory.close()
    reopened = stratagate.open(database, "atlas", read_only=True)
    for listing in (lambda: reopened.event_filter_values("eventType"),
                    lambda: reopened.event_filter_values("participant"),
                    lambda: reopened.event_ids({"participant": "Bob"}),
                    lambda: reopened.event_key_list({"eventType": "decision"}, "eventType")):
        with pytest.raises(SnapshotError, match=f"row '{damaged}': column temporal_json is not valid JSON"):
            listing()
    reopened.close()
