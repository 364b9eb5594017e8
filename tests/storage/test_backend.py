"""The StorageBackend contract on SQLite and PostgreSQL: lazy reads, incremental commits, revision checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sqlalchemy import create_engine, event, inspect
from sqlalchemy.exc import DBAPIError

from stratagate import journal
from stratagate.errors import ReadOnlyError, StorageConflictError, StorageOpenError, StorageWriteError
from stratagate.storage.backend import ChangeSet
from stratagate.storage.driver import driver_rows
from stratagate.storage.sections import SectionError
from stratagate.storage.sql import SNAPSHOT_SECTIONS, SqlBackend, open_backend
from tests.postgres_server import fresh_database

NS = "project:atlas"


def _space(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {key: snapshot[key] for key in ("currentTurn", "blockTurnSize", "blockDecayLambda")}


def _written_tables(backend: SqlBackend, action) -> set[str]:
    """The tables that INSERT/UPDATE/DELETE statements touched while `action` ran."""
    touched: set[str] = set()

    def record(_conn, _cursor, statement: str, *_args) -> None:
        words = statement.split()
        verb = words[0].upper()
        if verb in ("INSERT", "UPDATE", "DELETE"):
            index = {"INSERT": 2, "UPDATE": 1, "DELETE": 2}[verb]
            touched.add(words[index].strip('"'))

    event.listen(backend.engine, "before_cursor_execute", record)
    try:
        action()
    finally:
        event.remove(backend.engine, "before_cursor_execute", record)
    return touched


def test_a_new_database_is_empty_and_v7(backend: SqlBackend) -> None:
    assert backend.list_namespaces() == []
    assert backend.schema_version == 7
    assert backend.load_space("nobody") is None
    assert backend.load_section("nobody", "events") == []
    if backend.dialect == "sqlite":
        with backend.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA user_version").scalar() == 7
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            ddl = connection.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table'").scalars().all()
        assert ddl and all(sql.rstrip().endswith("STRICT") for sql in ddl)


def test_import_then_export_is_lossless(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
    exported = backend.export_namespace(NS)
    assert exported == reference_v7
    assert list(exported["snapshot"]["blocks"][0])[-3:] == [
        "pointerAnchorBlockPosition", "lastLiftedAt", "lastLiftedBy"
    ]


def test_incremental_commits_build_the_same_namespace(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    snapshot = reference_v7["snapshot"]
    assert backend.create_space(NS, _space(snapshot)) == 1
    revision = 1
    # One section per mutation, in an order an engine could use; each returns the next revision.
    for section in SNAPSHOT_SECTIONS:
        changes = ChangeSet()
        for record in snapshot[section]:
            changes.upsert(section, record)
        revision = backend.commit(NS, changes, revision)
    assert revision == 1 + len(SNAPSHOT_SECTIONS)
    assert backend.export_namespace(NS) == {"snapshot": snapshot, "revision": revision}
    assert backend.load_space(NS)["revision"] == revision


def test_a_commit_writes_only_the_rows_it_changes(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], 5)
    event_record = copy.deepcopy(backend.fetch(NS, "events", ["evt_52"])[0])
    event_record["weight"]["pinned"] = True
    changes = ChangeSet(space={"currentTurn": 41})
    changes.upsert("events", event_record)

    touched = _written_tables(backend, lambda: backend.commit(NS, changes, 5))

    # The event's search-index row holds its weight inputs (pinned orders empty queries), and both indexes
    # move to the new revision; no postings change, and nothing of the element index but its revision.
    assert touched == {"memory_spaces", "events", "event_sources", "search_events", "search_index_state",
                       "search_fact_state"}
    assert backend.fetch(NS, "events", ["evt_52"]) == [event_record]
    assert backend.load_space(NS)["currentTurn"] == 41
    others = [e for e in backend.load_section(NS, "events") if e["id"] != "evt_52"]
    assert others == [e for e in reference_v7["snapshot"]["events"] if e["id"] != "evt_52"]


def test_a_stale_revision_raises_and_writes_nothing(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], 7)
    before = backend.export_namespace(NS)
    changes = ChangeSet(space={"currentTurn": 99})
    changes.upsert("ingestionReceipts", {"id": "late", "createdAt": "2026-03-22T00:00:00.000+08:00"})
    with pytest.raises(StorageConflictError) as raised:
        backend.commit(NS, changes, 6)
    assert (raised.value.expected_revision, raised.value.actual_revision) == (6, 7)
    with pytest.raises(StorageConflictError):
        backend.commit("missing-namespace", changes, 0)
    assert backend.export_namespace(NS) == before


def test_a_rejected_write_rolls_back_the_whole_commit(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], 3)
    before = backend.export_namespace(NS)
    orphan = copy.deepcopy(reference_v7["snapshot"]["events"][0]) | {"id": "evt_new", "sourceBlockId": "blk_nope"}
    changes = ChangeSet(space={"currentTurn": 50})
    changes.upsert("ingestionReceipts", {"id": "r-new", "createdAt": "2026-03-22T00:00:00.000+08:00"})
    changes.upsert("events", orphan)
    with pytest.raises(StorageWriteError, match="nothing was written"):
        backend.commit(NS, changes, 3)
    missing_field = ChangeSet()
    missing_field.upsert("usageReceipts", {"id": "u1", "createdAt": "x"})
    with pytest.raises(SectionError, match="u1.*eventIds"):
        backend.commit(NS, missing_field, 3)
    assert backend.export_namespace(NS) == before


def test_sealing_moves_open_tail_messages_into_a_block(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(reference_v7["snapshot"])
    backend.import_namespace(NS, snapshot, 1)
    tail = snapshot["openTail"]
    sealed = copy.deepcopy(snapshot["blocks"][-1]) | {
        "id": "blk_new", "sequence": 4, "startTurn": 37, "endTurn": 40, "l5Raw": tail[:4],
        "pointerAnchorBlockPosition": 4,
    }
    changes = ChangeSet()
    changes.upsert("blocks", sealed)
    for message in tail[:4]:
        changes.delete("openTail", message["id"])
    newer = {"id": "msg_new", "role": "user", "content": "later", "createdAt": "2026-03-22T09:00:00.000+08:00"}
    changes.upsert("openTail", newer)
    backend.commit(NS, changes, 1)
    assert backend.load_section(NS, "openTail") == [*tail[4:], newer]
    assert backend.fetch(NS, "blocks", ["blk_new"]) == [sealed]
    assert backend.query_keys(NS, "blocks") == [b["id"] for b in snapshot["blocks"]] + ["blk_new"]


def test_query_keys_and_fetch_page_a_section(backend: SqlBackend, reference_v7: dict[str, Any]) -> None:
    snapshot = reference_v7["snapshot"]
    backend.import_namespace(NS, snapshot, 1)
    events = snapshot["events"]
    assert backend.query_keys(NS, "events") == [e["id"] for e in events]
    assert backend.query_keys(NS, "events", {"status": "forgotten"}) == [
        e["id"] for e in events if e["status"] == "forgotten"
    ]
    assert backend.query_keys(NS, "events", {"participant": "aLiCe"}) == [
        e["id"] for e in events if "Alice" in e["temporal"].get("participants", [])
    ]
    assert backend.query_keys(NS, "events", {"status": ["forgotten", "superseded"], "criticality": None}) == [
        e["id"] for e in events if e["status"] in ("forgotten", "superseded")
    ]
    assert backend.query_keys(NS, "events", {"text": "EVT_5"}) == [e["id"] for e in events if "evt_5" in e["id"]]
    assert backend.query_keys(NS, "events", {"eventType": "meeting"}) == [
        e["id"] for e in events if e["temporal"].get("eventType") == "meeting"
    ]
    assert backend.query_keys(NS, "events", {"text": "POSTGRESQL"}) == [
        e["id"] for e in events if "postgresql" in (e["title"] + e["summary"] + e["narrative"]).lower()
    ]
    assert backend.query_keys(NS, "events", {"text": "100%_"}) == []
    assert backend.query_keys(NS, "events", {"text": "postgresql" * 10_000}) == []  # over LIKE's pattern limit
    assert backend.query_keys(NS, "events", {"idContains": "VT_5"}) == [e["id"] for e in events if "vt_5" in e["id"]]
    assert backend.query_keys(NS, "extractionJobs") == sorted(j["blockId"] for j in snapshot["extractionJobs"])
    wanted = [events[3]["id"], "unknown", events[0]["id"]]
    assert backend.fetch(NS, "events", wanted) == [events[3], events[0]]
    elements = snapshot["elements"]
    assert backend.fetch(NS, "elements", [elements[1]["id"]]) == [elements[1]]
    with pytest.raises(SectionError, match="no filter 'colour'"):
        backend.query_keys(NS, "events", {"colour": "red"})
    with pytest.raises(SectionError, match="Unknown section"):
        backend.load_section(NS, "gossip")


def test_key_tail_counts_a_section_and_lists_only_the_keys_past_a_count(
    backend: SqlBackend, reference_v7: dict[str, Any]
) -> None:
    snapshot = reference_v7["snapshot"]
    backend.import_namespace(NS, snapshot, 1)
    ids = [event["id"] for event in snapshot["events"]]
    assert backend.key_tail(NS, "events", 0) == (len(ids), ids)
    assert backend.key_tail(NS, "events", len(ids) - 2) == (len(ids), ids[-2:])
    assert backend.key_tail(NS, "events", len(ids) + 5) == (len(ids), [])
    with_superseded = [element["id"] for element in snapshot["elements"]
                       if any(fact.get("status") == "superseded" for fact in element.get("facts", []))]
    assert backend.query_keys(NS, "elements", {"factStatus": "superseded"}) == with_superseded


def test_key_statuses_lists_the_events_not_active_and_creates_their_index_where_it_is_missing(
    database: str, reference_v7: dict[str, Any]
) -> None:
    snapshot = copy.deepcopy(reference_v7["snapshot"])
    for event_record, status in zip(snapshot["events"], ("forgotten", "archived"), strict=False):
        event_record["status"] = status
    expected = {record["id"]: record["status"] for record in snapshot["events"]
                if record["status"] != "active"}
    assert len(expected) >= 2
    backend = open_backend(database)
    backend.import_namespace(NS, snapshot, 1)
    with backend.engine.begin() as connection:  # as a v7 database written before the index existed
        connection.exec_driver_sql("DROP INDEX events_inactive_idx")
    backend.close()
    backend = open_backend(database)
    try:
        assert backend.key_statuses(NS, "events", ["superseded", "forgotten", "archived"]) == expected
        with backend.engine.connect() as connection:
            assert inspect(connection).has_index("events", "events_inactive_idx")
        assert backend.key_statuses(NS, "events", ["active"]) == {
            record["id"]: "active" for record in snapshot["events"] if record["status"] == "active"}
    finally:
        backend.close()


def test_model_response_history_keeps_the_last_five(backend: SqlBackend) -> None:
    backend.create_space(NS, {})
    revision = 1
    for n in range(8):
        changes = ChangeSet()
        changes.upsert(
            "successfulModelResponses",
            {"id": f"r{n}", "kind": "summarizer", "response": "{}", "createdAt": f"2026-03-0{n + 1}T00:00:00Z"},
        )
        revision = backend.commit(NS, changes, revision)
    assert backend.query_keys(NS, "successfulModelResponses") == ["r3", "r4", "r5", "r6", "r7"]


def test_journal_entries_commit_with_their_mutation(backend: SqlBackend) -> None:
    backend.create_space(NS, {})
    entry = journal.new_entry("tester", "pin", ["evt_1"], before=None, after={"pinned": True})
    changes = ChangeSet(space={"currentTurn": 1}, journal=[entry])
    backend.commit(NS, changes, 1)
    with pytest.raises(StorageConflictError):
        backend.commit(NS, ChangeSet(journal=[entry]), 1)
    entries = journal.read_entries(backend.engine, NS)
    assert [(e.seq, e.action, e.ids) for e in entries] == [(1, "pin", ["evt_1"])]


def test_create_space_refuses_an_existing_namespace(backend: SqlBackend) -> None:
    assert backend.create_space(NS, {"blockTurnSize": 6}) == 1
    with pytest.raises(StorageConflictError):
        backend.create_space(NS, {})
    space = backend.load_space(NS)
    assert (space["revision"], space["blockTurnSize"], space["blockDecayLambda"], space["schemaVersion"]) == (1, 6, 0.3, 7)


def test_a_read_only_open_refuses_every_write(database: str, reference_v7: dict[str, Any]) -> None:
    with open_backend(database) as writer:
        writer.import_namespace(NS, reference_v7["snapshot"], 2)
    with open_backend(database, read_only=True) as reader:
        assert reader.read_only and reader.export_namespace(NS) == reference_v7 | {"revision": 2}
        for write in (
            lambda: reader.create_space("other", {}),
            lambda: reader.commit(NS, ChangeSet(space={"currentTurn": 1}), 2),
            lambda: reader.import_namespace("other", reference_v7["snapshot"]),
        ):
            with pytest.raises(ReadOnlyError):
                write()
        assert reader.load_space(NS)["revision"] == 2
        if reader.dialect == "postgresql":  # the server refuses writes too, whatever the code above does
            with pytest.raises(DBAPIError, match="read-only transaction"), reader.engine.begin() as connection:
                connection.exec_driver_sql("DELETE FROM memory_spaces")


def test_a_shared_reads_last_statement_carries_its_commit_on_postgresql(postgres_server) -> None:
    backend = open_backend(fresh_database(postgres_server))
    stamp = "SELECT transaction_timestamp()"
    try:
        with backend.shared_read(), backend._reading() as connection:
            first = driver_rows(connection, stamp, ())
            with backend.last_read():
                last = driver_rows(connection, stamp, ())
                assert connection.connection.driver_connection.info.transaction_status.name == "IDLE"
            after = driver_rows(connection, stamp, ())  # a read after the last one begins another transaction
        assert first == last != after
        with backend.shared_read(), backend._reading() as connection:
            with backend.last_read():
                pass  # what was to be the last read sent no statement: the next read's first one ends nothing
            assert driver_rows(connection, stamp, ()) == driver_rows(connection, stamp, ())
    finally:
        backend.close()


def test_postgresql_versions_unreachable_servers_and_foreign_databases(postgres_server) -> None:
    url = fresh_database(postgres_server)
    with pytest.raises(StorageOpenError, match="holds no StrataGate schema"):
        open_backend(url, read_only=True)
    with open_backend(url) as backend:  # a writable open creates the schema and its version row
        backend.create_space(NS, {})
        with backend.engine.begin() as connection:
            connection.exec_driver_sql("UPDATE stratagate_metadata SET value = '9' WHERE key = 'schema_version'")
    with open_backend(url) as backend:
        assert backend.read_only and backend.schema_version == 9
        assert backend.notice == "schema 9 is newer than 7: opened read-only"
        assert backend.list_namespaces() == [NS]
        with pytest.raises(ReadOnlyError):
            backend.create_space("other", {})
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE stratagate_metadata SET value = '13'")
    engine.dispose()
    with pytest.raises(StorageOpenError, match="has schema 13"):
        open_backend(url)
    nowhere = "postgresql://someone:secret@/nothing?host=/nonexistent-socket-dir&port=1"
    with pytest.raises(StorageOpenError, match="cannot be opened") as raised:
        open_backend(nowhere, timeout=1)
    assert "secret" not in str(raised.value) and "someone" in str(raised.value)


def test_a_block_rewritten_with_fewer_or_no_messages_drops_the_others(backend: SqlBackend,
                                                                      reference_v7: dict[str, Any]) -> None:
    block = copy.deepcopy(reference_v7["snapshot"]["blocks"][0])
    tail = copy.deepcopy(reference_v7["snapshot"]["openTail"][:2])
    revision = backend.create_space(NS, _space(reference_v7["snapshot"]))
    changes = ChangeSet()
    changes.upsert("blocks", block)
    for message in tail:
        changes.upsert("openTail", message)
    revision = backend.commit(NS, changes, revision)
    for kept in (block["l5Raw"][:1], []):
        changes = ChangeSet()
        changes.upsert("blocks", {**block, "l5Raw": kept})
        changes.delete("openTail", tail[0]["id"])
        revision = backend.commit(NS, changes, revision)
        assert backend.fetch(NS, "blocks", [block["id"]])[0]["l5Raw"] == kept
    assert backend.load_section(NS, "openTail") == tail[1:]
