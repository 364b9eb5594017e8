"""Hostile schema objects (issue 16 item 8): a writable open refuses a database holding a trigger, a view or an
index StrataGate did not create, naming each; a read-only open still reads it, and nothing is lost."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

import stratagate
from stratagate.cli.main import cli
from stratagate.errors import StorageOpenError
from tests.conftest import REFERENCE_DB, REFERENCE_NAMESPACE
from tests.postgres_server import fresh_database

WIPE = "CREATE TRIGGER wipe AFTER UPDATE ON memory_spaces BEGIN DELETE FROM events; END"


def _memory(path: Path) -> None:
    memory = stratagate.open(str(path), namespace="atlas", block_turn_size=1)
    try:
        memory.append_turn("Dana leads project Atlas.", "Noted.")
        memory.add_event("Dana leads Atlas", "lead", source_block_id=memory.list_blocks()[0].id)
    finally:
        memory.close()


def _sql(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as connection, connection:
        for statement in statements:
            connection.execute(statement)


def test_a_trigger_that_would_wipe_events_is_refused_before_any_write(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    _memory(path)
    _sql(path, WIPE)
    with pytest.raises(StorageOpenError, match=r"trigger wipe \(on memory_spaces\)"):
        stratagate.open(str(path), namespace="atlas")
    result = CliRunner().invoke(cli, ["open", str(path)])
    assert result.exit_code == 2 and "holds schema objects StrataGate did not create" in result.output
    reader = stratagate.open(str(path), namespace="atlas", read_only=True)
    try:
        assert len(reader.list_events()) == 1
    finally:
        reader.close()


def test_views_and_extra_indexes_on_our_tables_are_named_and_our_own_are_not(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    _memory(path)
    _sql(
        path,
        "CREATE VIEW recent AS SELECT id FROM events",
        "CREATE INDEX events_title_idx ON events(title)",
        "CREATE TABLE notes (body TEXT)",
        "CREATE INDEX notes_body_idx ON notes(body)",  # not on our tables: left alone
    )
    with pytest.raises(StorageOpenError) as raised:
        stratagate.open(str(path), namespace="atlas")
    assert "index events_title_idx (on events), view recent" in str(raised.value)
    assert "notes_body_idx" not in str(raised.value) and "messages_thread_idx" not in str(raised.value)


def test_a_reference_v5_file_with_a_trigger_is_refused_before_its_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "reference.sqlite"
    shutil.copyfile(REFERENCE_DB, path)
    _sql(path, WIPE)
    before = path.read_bytes()
    with pytest.raises(StorageOpenError, match="trigger wipe"):
        stratagate.open(str(path), namespace=REFERENCE_NAMESPACE)
    assert path.read_bytes() == before and not list(tmp_path.glob("*.bak-*"))


@pytest.mark.postgres
def test_a_trigger_on_postgresql_is_refused(postgres_server) -> None:
    url = fresh_database(postgres_server)
    stratagate.open(url, namespace="atlas").close()
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(
                "CREATE FUNCTION wipe() RETURNS trigger AS $$ BEGIN DELETE FROM events; RETURN NULL; END $$ "
                "LANGUAGE plpgsql"
            ))
            connection.execute(text(
                "CREATE TRIGGER wipe AFTER UPDATE ON memory_spaces FOR EACH STATEMENT EXECUTE FUNCTION wipe()"
            ))
    finally:
        engine.dispose()
    with pytest.raises(StorageOpenError, match=r"trigger wipe \(on memory_spaces\)"):
        stratagate.open(url, namespace="atlas")
    stratagate.open(url, namespace="atlas", read_only=True).close()
