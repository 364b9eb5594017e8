"""The curation journal on real SQLite files: appending, chaining, tamper detection, CLI verify/export."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine

from stratagate import journal
from stratagate.cli.main import cli
from tests.property_budget import examples

NAMESPACE = "project:atlas"


def _entries(count: int, start: int = 0) -> list[dict]:
    return [
        journal.new_entry(
            actor="reviewer",
            action="pin" if index % 2 == 0 else "forget",
            ids=[f"evt_{index}"],
            before={"status": "active", "pinned": False},
            after={"status": "active", "pinned": True} if index % 2 == 0 else {"status": "forgotten"},
            time=f"2026-12-01T03:{index:02d}:00.000Z",
        )
        for index in range(start, start + count)
    ]


def _append(path: Path, entries: list[dict], namespace: str = NAMESPACE) -> list[journal.JournalRecord]:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            return journal.append_entries(connection, namespace, entries)
    finally:
        engine.dispose()


def _verify(path: Path, namespace: str | None = None) -> journal.VerifyResult:
    engine = create_engine(f"sqlite:///{path}")
    try:
        return journal.verify(engine, namespace)
    finally:
        engine.dispose()


def _raw(path: Path, sql: str, *params) -> None:
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(sql, params)
    connection.close()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def journaled_db(reference_db_copy: Path) -> Path:
    _append(reference_db_copy, _entries(3))
    _append(reference_db_copy, _entries(2, start=3))
    return reference_db_copy


def test_appended_entries_chain_across_transactions(journaled_db: Path):
    engine = create_engine(f"sqlite:///{journaled_db}")
    records = journal.read_entries(engine, NAMESPACE)
    engine.dispose()
    assert [record.seq for record in records] == [1, 2, 3, 4, 5]
    assert records[0].prev_hash == journal.GENESIS_HASH
    for previous, record in zip(records, records[1:], strict=False):
        assert record.prev_hash == previous.hash
    assert records[3].ids == ["evt_3"] and records[3].after == {"status": "forgotten"}
    result = _verify(journaled_db)
    assert result.ok and result.checked == 5
    assert result.heads == {NAMESPACE: records[-1].hash}


def test_namespaces_have_independent_chains(journaled_db: Path):
    _append(journaled_db, _entries(2), namespace="project:other")
    result = _verify(journaled_db)
    assert result.ok and result.checked == 7
    assert set(result.heads) == {NAMESPACE, "project:other"}
    assert _verify(journaled_db, "project:other").checked == 2


def test_a_database_without_a_journal_verifies_empty_and_reads_create_nothing(reference_db_copy: Path):
    before = _sha256(reference_db_copy)
    result = _verify(reference_db_copy)
    assert result.ok and result.checked == 0
    assert _sha256(reference_db_copy) == before


def test_journal_tables_leave_strategate_tables_untouched(reference_db_copy: Path):
    def stratagate_rows(path: Path) -> dict[str, list]:
        with closing(sqlite3.connect(path)) as connection, connection:
            names = [
                row[0]
                for row in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
                )
                if not row[0].startswith("stratagate_curation_journal")
            ]
            rows = {
                name: connection.execute(f'SELECT * FROM "{name}" ORDER BY 1, 2').fetchall() for name in names
            }
            assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        connection.close()
        return rows

    before = stratagate_rows(reference_db_copy)
    _append(reference_db_copy, _entries(2))
    assert stratagate_rows(reference_db_copy) == before


def test_an_edited_field_is_named(journaled_db: Path):
    _raw(
        journaled_db,
        "UPDATE stratagate_curation_journal SET after_json = ? WHERE seq = 3",
        '{"status":"active"}',
    )
    result = _verify(journaled_db)
    assert not result.ok
    assert (result.namespace, result.bad_seq) == (NAMESPACE, 3)
    assert "edited" in result.reason


def test_an_edit_that_rehashes_the_entry_breaks_the_next_link(journaled_db: Path):
    # A forger who recomputes entry 2's hash after editing it still breaks entry 3's prev_hash.
    engine = create_engine(f"sqlite:///{journaled_db}")
    records = journal.read_entries(engine, NAMESPACE)
    engine.dispose()
    forged = {**records[1].to_json(), "actor": "mallory"}
    forged_hash = journal.entry_hash(forged, records[1].prev_hash)
    _raw(
        journaled_db,
        "UPDATE stratagate_curation_journal SET actor = 'mallory', hash = ? WHERE seq = 2",
        forged_hash,
    )
    result = _verify(journaled_db)
    assert (result.ok, result.bad_seq) == (False, 3)
    assert "broken link" in result.reason


def test_a_deleted_entry_is_named(journaled_db: Path):
    _raw(journaled_db, "DELETE FROM stratagate_curation_journal WHERE seq = 2")
    result = _verify(journaled_db)
    assert (result.ok, result.bad_seq) == (False, 2)
    assert "deleted" in result.reason


def test_deleting_the_newest_entry_is_caught_by_the_chain_head(journaled_db: Path):
    _raw(journaled_db, "DELETE FROM stratagate_curation_journal WHERE seq = 5")
    result = _verify(journaled_db)
    assert (result.ok, result.bad_seq) == (False, 5)
    assert "deleted" in result.reason


def test_deleting_every_entry_is_caught_by_the_chain_head(journaled_db: Path):
    _raw(journaled_db, "DELETE FROM stratagate_curation_journal")
    result = _verify(journaled_db)
    assert (result.ok, result.bad_seq) == (False, 1)
    assert "deleted" in result.reason


def test_swapped_entries_are_reported_as_reordered(journaled_db: Path):
    _raw(journaled_db, "UPDATE stratagate_curation_journal SET seq = -1 WHERE seq = 2")
    _raw(journaled_db, "UPDATE stratagate_curation_journal SET seq = 2 WHERE seq = 4")
    _raw(journaled_db, "UPDATE stratagate_curation_journal SET seq = 4 WHERE seq = -1")
    result = _verify(journaled_db)
    assert (result.ok, result.bad_seq) == (False, 2)
    assert "reordered" in result.reason and "entry 4" in result.reason


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seq=st.integers(min_value=1, max_value=5),
    column=st.sampled_from(
        ["entry_time", "actor", "action", "ids_json", "before_json", "after_json", "prev_hash"]
    ),
    text=st.text(min_size=1, max_size=20),
)
@example(seq=1, column="ids_json", text="Infinity")  # valid to json.loads, not canonical JSON
def test_any_single_cell_edit_is_detected(
    tmp_path_factory, reference_db_copy: Path, seq: int, column: str, text: str
):
    path = tmp_path_factory.mktemp("edit") / "memory.sqlite"
    shutil.copyfile(reference_db_copy, path)
    _append(path, _entries(5))
    with closing(sqlite3.connect(path)) as connection, connection:
        (current,) = connection.execute(
            f"SELECT {column} FROM stratagate_curation_journal WHERE seq = ?", (seq,)
        ).fetchone()
    connection.close()
    if current == text:
        return
    _raw(path, f"UPDATE stratagate_curation_journal SET {column} = ? WHERE seq = ?", text, seq)
    result = _verify(path)
    assert not result.ok
    assert result.bad_seq == seq


def test_malformed_entries_are_rejected_and_nothing_is_written(reference_db_copy: Path):
    bad = {**_entries(1)[0], "after": {"weight": float("nan")}}
    with pytest.raises(journal.JournalEntryError, match="'after'"):
        _append(reference_db_copy, [_entries(1)[0], bad])
    assert _verify(reference_db_copy).checked == 0
    with pytest.raises(journal.JournalEntryError, match="'actor'"):
        journal.new_entry(actor=" ", action="pin", ids=["evt_1"], before=None, after=None)


def test_cli_verify_reports_ok_and_leaves_the_file_unchanged(journaled_db: Path):
    before = _sha256(journaled_db)
    result = CliRunner().invoke(cli, ["journal", "verify", str(journaled_db)])
    assert result.exit_code == 0, result.output
    assert "journal OK: 5 entries" in result.output
    assert f"{NAMESPACE}: head " in result.output
    assert _sha256(journaled_db) == before
    assert not journaled_db.with_name(journaled_db.name + "-shm").exists()


def test_cli_verify_exits_2_naming_the_first_bad_entry(journaled_db: Path):
    _raw(journaled_db, "UPDATE stratagate_curation_journal SET ids_json = '[\"evt_9\"]' WHERE seq = 4")
    result = CliRunner().invoke(cli, ["journal", "verify", str(journaled_db)])
    assert result.exit_code == 2
    assert f"journal of {NAMESPACE}: entry 4 was edited" in result.output


def test_cli_verify_of_a_missing_file_is_a_clear_error(tmp_path: Path):
    result = CliRunner().invoke(cli, ["journal", "verify", str(tmp_path / "nope.sqlite")])
    assert result.exit_code == 2
    assert "nope.sqlite: no such file" in result.output


def test_cli_export_writes_json_lines_in_chain_order(journaled_db: Path, tmp_path: Path):
    out = tmp_path / "journal.jsonl"
    result = CliRunner().invoke(cli, ["journal", "export", str(journaled_db), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["seq"] for line in lines] == [1, 2, 3, 4, 5]
    assert lines[0]["prev_hash"] == journal.GENESIS_HASH
    assert lines[1]["prev_hash"] == lines[0]["hash"]
    assert lines[2] == {
        "namespace": NAMESPACE,
        "seq": 3,
        "time": "2026-12-01T03:02:00.000Z",
        "actor": "reviewer",
        "action": "pin",
        "ids": ["evt_2"],
        "before": {"status": "active", "pinned": False},
        "after": {"status": "active", "pinned": True},
        "prev_hash": lines[1]["hash"],
        "hash": lines[2]["hash"],
    }
    # The exported lines carry everything needed to re-check the chain outside the database.
    for line in lines:
        assert journal.entry_hash(line, line["prev_hash"]) == line["hash"]


@pytest.mark.postgres
def test_curation_through_the_engine_journals_on_postgresql(postgres_server, reference_db_copy: Path):
    """The storage backend appends the journal in the mutation's transaction on PostgreSQL too, and a
    stale writer's entry is never written."""
    from stratagate.errors import StorageConflictError
    from stratagate.memory import open as open_memory
    from stratagate.storage.sql import open_backend
    from tests.postgres_server import fresh_database

    url = fresh_database(postgres_server, "journal")
    source = open_memory(reference_db_copy, NAMESPACE, read_only=True)
    with open_backend(url) as backend:
        backend.import_namespace(NAMESPACE, source.export_snapshot())
    source.close()
    first, second = open_memory(url, NAMESPACE), open_memory(url, NAMESPACE)
    try:
        first.get_event("evt_51")
        second.pin_event("evt_51", journal_entry=_entries(1)[0])
        with pytest.raises(StorageConflictError):
            first.forget_event("evt_51", journal_entry=_entries(2)[1])
        second.forget_event("evt_55", journal_entry=_entries(2)[1])
        records = journal.read_entries(second.backend.engine, NAMESPACE)
        assert [(record.seq, record.action) for record in records] == [(1, "pin"), (2, "forget")]
        assert journal.verify(second.backend.engine).ok
        with second.backend.engine.begin() as connection:
            connection.exec_driver_sql(
                "UPDATE stratagate_curation_journal SET actor = 'mallory' WHERE seq = 1"
            )
        result = journal.verify(second.backend.engine)
        assert (result.ok, result.bad_seq) == (False, 1)
    finally:
        first.close()
        second.close()
