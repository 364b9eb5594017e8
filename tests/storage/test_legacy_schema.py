"""A v5/v6 file opened writable is curated in its own schema, so the reference StrataGate still loads it.

The checks against the reference's loader rules are structural (reference_rules.py); tests/interop/ has the
reference itself load curated files where a local build exists.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import stratagate
from stratagate import journal
from stratagate.errors import ReadOnlyError, SchemaUpgradeRequiredError, StorageConflictError
from stratagate.memory import StrataGate
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE
from tests.storage.legacy_files import THREADED_V5_BLOCKS, build_legacy_file, dump
from tests.storage.reference_rules import check_loadable, layout

NS = REFERENCE_NAMESPACE


def _scalar(path: Path, query: str):
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute(query).fetchone()[0]


def _entry(action: str, ids: list[str]) -> dict:
    return journal.new_entry("reviewer", action, ids, None, None)


@pytest.mark.parametrize("version", [5, 6])
def test_a_writable_open_keeps_the_schema_and_reads_like_a_migrated_copy(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "memory.sqlite"
    build_legacy_file(path, version, THREADED_V5_BLOCKS)
    reference_layout = layout(path)
    with open_backend(path, read_only=True) as backend:
        migrated_view = backend.export_namespace("legacy")
    with open_backend(path) as backend:
        assert not backend.read_only and backend.schema_version == version
        assert f"schema {version}: kept in its own schema" in backend.notice
        assert backend.export_namespace("legacy") == migrated_view
        assert backend.commit("legacy", ChangeSet(space={"currentTurn": 13}), 4) == 5
    assert sorted(p.name for p in tmp_path.iterdir() if ".bak" in p.name) == []
    check_loadable(path, version, reference_layout)
    positions = [block["pointerAnchorBlockPosition"] for block in migrated_view["snapshot"]["blocks"]]
    assert positions == ([1, 1, 2] if version == 5 else [7, 6, 12])


def test_curation_of_the_reference_file_stays_loadable_by_the_reference(reference_db_copy: Path) -> None:
    reference_layout = layout(reference_db_copy)  # before any write
    revision = _scalar(reference_db_copy, "SELECT revision FROM memory_spaces")
    with stratagate.open(reference_db_copy, NS) as memory:
        first, second, third = (event.id for event in memory.list_events()[:3])
        memory.pin_event(first, journal_entry=_entry("pin", [first]))
        memory.forget_event(second, journal_entry=_entry("forget", [second]))
        memory.archive_event(third)
        memory.restore_event(third)
        memory.supersede_event(third, first, journal_entry=_entry("supersede", [third, first]))
        block = memory.list_blocks()[0]
        memory.lift_block(block.id, 5, "user", journal_entry=_entry("lift", [block.id]))
        assert journal.verify_backend(memory.backend, NS).ok
        current_turn = memory.current_turn
    check_loadable(reference_db_copy, 5, reference_layout)
    assert _scalar(reference_db_copy, "SELECT revision FROM memory_spaces") == revision + 6
    with closing(sqlite3.connect(reference_db_copy)) as connection:
        rows = {
            row[0]: row[1:]
            for row in connection.execute("SELECT id, pinned, status, superseded_by FROM events")
        }
        assert rows[first] == (1, "active", None) and rows[second][1:] == ("forgotten", None)
        assert rows[third][1:] == ("superseded", first)
        lifted = connection.execute(
            "SELECT pointer_anchor_level, pointer_anchor_turn FROM blocks WHERE id = ?", (block.id,)
        )
        assert lifted.fetchone() == (5, current_turn)  # what the reference's expandBlock writes: unthreaded
        assert connection.execute("SELECT COUNT(*) FROM stratagate_curation_journal").fetchone()[0] == 4
    with stratagate.open(reference_db_copy, NS, read_only=True) as memory:
        assert memory.get_event(first).weight.pinned and memory.get_event(second).status == "forgotten"


def test_a_v5_lift_is_stored_as_the_turn_the_reference_would_write(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    build_legacy_file(path, 5, THREADED_V5_BLOCKS)
    with stratagate.open(path, "legacy") as memory:
        lift = memory.lift_block("blk_1", 5, "user")
        assert lift.before.anchor_block_position == 1
        # Thread-a counts 2 user turns in this file, which converts to position 1, not the lifted 2: the end turn
        # of thread-a's latest block is stored instead (the reference file's lift below gets the current turn).
        assert _scalar(path, "SELECT pointer_anchor_turn FROM blocks WHERE id = 'blk_1'") == 12
        memory.refresh()
        lifted = memory.get_block("blk_1")
        assert (lifted.pointer_anchor_block_position, lifted.last_lifted_by) == (
            2,
            None,
        )  # the source needs v7
        memory.set_block_pointer("blk_1", lift.before)  # the undo
        assert _scalar(path, "SELECT pointer_anchor_turn FROM blocks WHERE id = 'blk_1'") == 6
        memory.refresh()
        assert memory.get_block("blk_1").pointer_anchor_block_position == 1


def test_what_needs_v7_is_refused_naming_file_schema_and_operation(tmp_path: Path, reference_v7) -> None:
    path = tmp_path / "memory.sqlite"
    build_legacy_file(path, 5)
    before = dump(path)
    with stratagate.open(path, "legacy") as memory:
        with pytest.raises(SchemaUpgradeRequiredError) as refused:
            memory.set_block_decay_lambda(0.5)
        assert memory.revision == 4
        with pytest.raises(SchemaUpgradeRequiredError, match="importing a whole namespace \\('copy'\\)"):
            memory.backend.import_namespace("copy", reference_v7["snapshot"])
    message = str(refused.value)
    assert str(path) in message and "schema 5" in message and "block decay lambda 0.5" in message
    assert "stratagate migrate" in message
    assert _scalar(path, "SELECT revision FROM memory_spaces") == 4
    assert dump(path) == before  # the writable open set WAL mode, as the reference does; no row changed


def test_a_v6_file_keeps_its_decay_rate_column(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    build_legacy_file(path, 6)
    reference_layout = layout(path)
    with stratagate.open(path, "legacy") as memory:
        assert memory.block_decay_lambda == 0.25
        memory.set_block_decay_lambda(0.4)
    assert _scalar(path, "SELECT block_decay_lambda FROM memory_spaces") == 0.4
    check_loadable(path, 6, reference_layout)


def test_a_stale_writer_gets_a_conflict_on_a_v5_file(reference_db_copy: Path) -> None:
    with stratagate.open(reference_db_copy, NS) as first, stratagate.open(reference_db_copy, NS) as second:
        event = first.list_events()[0].id
        second.list_events()
        first.pin_event(event)
        with pytest.raises(StorageConflictError):
            second.forget_event(event)
        second.forget_event(event)  # after the conflict it caught up, so the retry keeps the pin
    with closing(sqlite3.connect(reference_db_copy)) as connection:
        assert connection.execute("SELECT pinned, status FROM events WHERE id = ?", (event,)).fetchone() == (
            1,
            "forgotten",
        )


def test_a_new_namespace_in_a_v5_file_is_a_v5_namespace(reference_db_copy: Path) -> None:
    reference_layout = layout(reference_db_copy)  # before any write
    StrataGate.open_with_backend(open_backend(reference_db_copy), "scratch").close()
    with closing(sqlite3.connect(reference_db_copy)) as connection:
        assert connection.execute(
            "SELECT schema_version FROM memory_spaces WHERE namespace = 'scratch'"
        ).fetchone() == (5,)
    check_loadable(reference_db_copy, 5, reference_layout)


@pytest.mark.parametrize("version", [1, 4])
def test_an_older_file_opens_read_only_pointing_at_migrate(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.sqlite"
    build_legacy_file(path, version)
    before = path.read_bytes()
    with open_backend(path) as backend:
        assert backend.read_only and "stratagate migrate" in backend.notice
        with pytest.raises(ReadOnlyError):
            backend.commit("legacy", ChangeSet(space={"currentTurn": 13}), 4)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite"]


def test_the_search_index_of_a_v5_file_lives_outside_it_and_follows_its_writes(
    reference_db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    reference_layout = layout(reference_db_copy)
    with stratagate.open(reference_db_copy, NS) as memory:
        event = memory.list_events()[0]
        query = event.title
        assert event.id in [hit for hit, _score in memory.backend.event_search_index(NS).rank(query)]
        memory.forget_event(event.id)  # forgotten events are no search candidates
        assert event.id not in [hit for hit, _score in memory.backend.event_search_index(NS).rank(query)]
    check_loadable(reference_db_copy, 5, reference_layout)


def test_a_search_after_curating_a_v5_file_sees_the_curation(
    reference_db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    with stratagate.open(reference_db_copy, NS) as memory:
        assert "evt_51" in [hit.event.id for hit in memory.search_events("atlas")]
        memory.forget_event("evt_51")
        assert "evt_51" not in [hit.event.id for hit in memory.search_events("atlas")]
        memory.restore_event("evt_51")
        assert "evt_51" in [hit.event.id for hit in memory.search_events("atlas")]
    assert len(list((tmp_path / "cache").rglob("*.sqlite"))) == 1  # the index of each older revision is gone


def test_the_outside_index_of_a_writable_v5_file_follows_its_commits_without_a_rebuild(
    reference_db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stratagate.storage import search_cache

    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    queries = ["Atlas", "Zeppelin", "deploy", "prefers", "project"]
    with open_backend(reference_db_copy) as backend:
        backend.event_search_index(NS)  # built once
        monkeypatch.setattr(search_cache, "_build", lambda *_: pytest.fail("rebuilt the cached index"))
        events = backend.load_section(NS, "events")
        first, second = events[0], events[1]
        changes = ChangeSet()
        changes.upsert("events", {**first, "title": "Zeppelin"})
        backend.commit(NS, changes, backend.load_space(NS)["revision"])
        changes = ChangeSet()
        changes.upsert("events", {**second, "status": "forgotten"})
        backend.commit(NS, changes, backend.load_space(NS)["revision"])
        backend.commit(NS, ChangeSet(space={"currentTurn": 99}), backend.load_space(NS)["revision"])
        assert [key for key, _score in backend.event_search_index(NS).rank("Zeppelin")] == [first["id"]]
        changes = ChangeSet()  # an event change after a commit that changed none
        changes.upsert("events", {**events[2], "title": f"{events[2]['title']} Zeppelin"})
        backend.commit(NS, changes, backend.load_space(NS)["revision"])
        kept = {query: backend.event_search_index(NS).rank(query) for query in queries}
        assert {key for key, _score in kept["Zeppelin"]} == {first["id"], events[2]["id"]}
        assert second["id"] not in {key for ranked in kept.values() for key, _score in ranked}
        assert len(list((tmp_path / "cache").rglob("*.sqlite"))) == 1
    monkeypatch.undo()
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "fresh"))
    with open_backend(reference_db_copy) as fresh:  # the same file's index built anew ranks alike
        assert {query: fresh.event_search_index(NS).rank(query) for query in queries} == kept


def test_a_writable_v5_files_outside_index_is_rebuilt_after_another_writers_commit(
    reference_db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    with open_backend(reference_db_copy) as viewer, open_backend(reference_db_copy) as other:
        assert viewer.event_search_index(NS).rank("Zeppelin") == []
        record = other.load_section(NS, "events")[0]
        changes = ChangeSet()
        changes.upsert("events", {**record, "title": "Zeppelin"})
        other.commit(NS, changes, other.load_space(NS)["revision"])
        assert [key for key, _score in viewer.event_search_index(NS).rank("Zeppelin")] == [record["id"]]


def test_a_removed_cache_file_is_never_recreated_empty_by_a_reader(
    reference_db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process's newer build removes the older cache files of the same database.
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from stratagate.storage.search_cache import CachedIndex

    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    with stratagate.open(reference_db_copy, NS, read_only=True) as memory:
        assert memory.search_events("atlas")
    [path] = (tmp_path / "cache").rglob("*.sqlite")
    path.unlink()
    reader = CachedIndex(path)
    with pytest.raises(OperationalError, match="unable to open"), reader.connect() as connection:
        connection.execute(text("SELECT 1"))
    reader.close()
    assert not path.exists()
