"""SQLite files: forensic read-only opens, bad files, older files through a private copy, newer v8–v12 files
read-only. Writable opens of v5/v6 files: test_legacy_schema.py; the explicit upgrade: test_upgrade.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from stratagate.errors import ReadOnlyError, StorageOpenError
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_DB, REFERENCE_NAMESPACE, REFERENCE_ORACLE
from tests.storage.legacy_files import THREADED_V5_BLOCKS, build_legacy_file, make_newer

NS = REFERENCE_NAMESPACE


def _state(directory: Path) -> dict[str, str]:
    """Every file in a directory with its sha256: what 'nothing was written' compares."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        for path in sorted(directory.iterdir())
    }


def _v7_file(path: Path, reference_v7: dict[str, Any]) -> Path:
    with open_backend(path) as backend:
        backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
    return path


def test_forensic_open_of_the_reference_leaves_it_byte_identical(reference_db_copy: Path, reference_v7) -> None:
    before = _state(reference_db_copy.parent)
    with open_backend(reference_db_copy, read_only=True) as backend:
        assert backend.file_sha256 == json.loads(REFERENCE_ORACLE.read_text())["file"]["sha256"]
        assert backend.schema_version == 5 and backend.read_only
        assert "unchanged" in backend.notice
        assert backend.export_namespace(NS) == reference_v7
        assert _state(reference_db_copy.parent) == before
        with pytest.raises(ReadOnlyError):
            backend.commit(NS, ChangeSet(space={"currentTurn": 1}), 103)
    assert _state(reference_db_copy.parent) == before == {REFERENCE_DB.name: backend.file_sha256}


def test_forensic_open_sees_content_still_in_a_live_wal(tmp_path: Path, reference_v7) -> None:
    path = _v7_file(tmp_path / "live.sqlite", reference_v7)
    writer = sqlite3.connect(path)  # kept open so its -wal stays, un-checkpointed
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("INSERT INTO ingestion_receipts VALUES (?, 'only-in-wal', '2026-03-22T00:00:00.000+08:00')", [NS])
        writer.commit()
        assert Path(f"{path}-wal").stat().st_size > 0
        before = _state(tmp_path)
        with open_backend(path, read_only=True) as backend:
            assert backend.query_keys(NS, "ingestionReceipts")[-1] == "only-in-wal"
            assert backend.file_sha256 == before[path.name]
        assert _state(tmp_path) == before
    finally:
        writer.close()


def test_a_new_file_opens_again_while_its_creator_keeps_it_open(tmp_path: Path) -> None:
    # The new schema and user_version are still only in the WAL: the header says version 0.
    path = tmp_path / "new.sqlite"
    creator = open_backend(path)
    try:
        creator.create_space(NS, {})
        second = open_backend(path)
        forensic = open_backend(path, read_only=True)
        assert second.list_namespaces() == [NS]
        assert forensic.list_namespaces() == [NS]
        assert forensic.schema_version == 7
        second.close()
        forensic.close()
    finally:
        creator.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_newer_version_still_in_a_live_wal_is_refused_without_touching_the_file(
    tmp_path: Path, reference_v7, read_only: bool
) -> None:
    # Another program holds the file open and has written user_version 99 only into its WAL.
    path = _v7_file(tmp_path / "future.sqlite", reference_v7)
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("PRAGMA user_version = 99")
        writer.commit()
        before = _state(tmp_path)
        with pytest.raises(StorageOpenError, match="schema 99"):
            open_backend(path, read_only=read_only)
        assert _state(tmp_path) == before
    finally:
        writer.close()


def test_reads_through_a_writable_backend_never_write(tmp_path: Path, reference_v7) -> None:
    path = _v7_file(tmp_path / "memory.sqlite", reference_v7)
    before = _state(tmp_path)
    with open_backend(path) as backend:
        assert backend.file_sha256 == before[path.name]
        backend.list_namespaces()
        backend.load_space(NS)
        for section in ("openTail", "blocks", "events", "elements", "usageReceipts"):
            keys = backend.query_keys(NS, section)
            assert backend.fetch(NS, section, keys) == backend.load_section(NS, section)
        backend.query_keys(NS, "events", {"participant": "Alice", "text": "atlas"})
        backend.export_namespace(NS)
    assert _state(tmp_path) == before


def _bad_file(kind: str, directory: Path) -> Path:
    path = directory / f"{kind}.sqlite"
    if kind == "directory":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "random":
        path.write_bytes(os.urandom(8192))
    elif kind == "text":
        path.write_text("namespace,revision\nproject:atlas,3\n")
    elif kind == "truncated":
        path.write_bytes(REFERENCE_DB.read_bytes()[:40960])
    elif kind == "foreign":
        with closing(sqlite3.connect(path)) as connection, connection:
            connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    elif kind == "versioned-foreign":
        with closing(sqlite3.connect(path)) as connection, connection:
            connection.execute("CREATE TABLE notes (body TEXT)")
            connection.execute("PRAGMA user_version = 3")
    elif kind == "schema-13":
        shutil.copyfile(REFERENCE_DB, path)
        with closing(sqlite3.connect(path)) as connection, connection:
            connection.execute("PRAGMA journal_mode = DELETE")
            connection.execute("PRAGMA user_version = 13")
    return path


BAD_FILES = {
    "missing": "no such file",
    "directory": "is a directory",
    "empty": "empty file (0 bytes)",
    "random": "not an SQLite database",
    "text": "not an SQLite database",
    "truncated": "truncated",
    "foreign": "not a StrataGate one (tables: invoices)",
    "versioned-foreign": "not a StrataGate database (user_version 3, no memory_spaces)",
    "schema-13": "schema 13 is newer than this StrataGate can read",
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "writable"])
def test_a_bad_file_gets_a_clear_error_and_stays_untouched(tmp_path: Path, kind: str, read_only: bool) -> None:
    path = _bad_file(kind, tmp_path)
    before = _state(tmp_path)
    with pytest.raises(StorageOpenError) as raised:
        open_backend(path, read_only=read_only, create=False)
    assert str(path) in str(raised.value) and BAD_FILES[kind] in str(raised.value)
    assert _state(tmp_path) == before
    if kind != "missing":  # a writable open that may create files still refuses a bad existing one
        with pytest.raises(StorageOpenError):
            open_backend(path, read_only=read_only)
        assert _state(tmp_path) == before


@pytest.mark.parametrize("version", [1, 5])
def test_a_read_only_open_of_an_old_file_upgrades_only_a_private_copy(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.sqlite"
    build_legacy_file(path, version, THREADED_V5_BLOCKS if version == 5 else None)
    before = _state(tmp_path)
    with open_backend(path, read_only=True) as backend:
        read_only_view = backend.export_namespace("legacy")
    assert _state(tmp_path) == before
    with open_backend(path) as backend:
        assert backend.export_namespace("legacy") == read_only_view


@pytest.mark.parametrize("version", [8, 9, 10, 11, 12])
def test_a_newer_file_opens_read_only_with_a_notice(tmp_path: Path, version: int, reference_v7) -> None:
    path = _v7_file(tmp_path / f"v{version}.sqlite", reference_v7)
    make_newer(path, version, NS)
    before = _state(tmp_path)
    with open_backend(path) as backend:  # asked writable, opened read-only
        assert backend.read_only and backend.schema_version == version
        assert backend.notice.startswith(f"schema {version} is newer than 7: opened read-only")
        assert ("1 pending block(s) not shown" in backend.notice) == (version >= 9)
        assert backend.export_namespace(NS) == reference_v7
        with pytest.raises(ReadOnlyError, match="newer than 7"):
            backend.commit(NS, ChangeSet(space={"currentTurn": 1}), reference_v7["revision"])
    assert _state(tmp_path) == before
