"""A new database file appears under its name whole, or not at all (a killed `copy` once left a 0-byte file)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from stratagate.errors import StorageOpenError
from stratagate.storage.new_file import create_whole
from stratagate.storage.sql import open_backend

KILLED_WHILE_CREATING = """
import os, signal, sqlite3, sys
from pathlib import Path
from stratagate.storage.new_file import create_whole

def make_schema(staging):
    connection = sqlite3.connect(staging)
    connection.execute("CREATE TABLE half (x)")  # SQLite has made the file; the schema is not committed
    os.kill(os.getpid(), signal.SIGKILL)

create_whole(Path(sys.argv[1]), make_schema)
"""


def test_a_process_killed_while_creating_leaves_no_file_under_the_name(tmp_path: Path) -> None:
    target = tmp_path / "memory.sqlite"
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_CREATING, str(target)])
    assert killed.returncode == -signal.SIGKILL
    assert not target.exists()
    assert [p.name.startswith(".memory.sqlite.creating-") for p in tmp_path.iterdir()] == [True]

    with open_backend(target) as backend:  # the rerun a user makes: a new database, the leftover removed
        assert backend.list_namespaces() == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.sqlite"]


def test_a_failed_creation_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "memory.sqlite"

    def make_schema(staging: Path) -> None:
        with closing(sqlite3.connect(staging)) as connection:
            connection.execute("CREATE TABLE t (x)")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        create_whole(target, make_schema)
    assert list(tmp_path.iterdir()) == []


def test_a_name_taken_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "memory.sqlite"

    def make_schema(staging: Path) -> None:
        with closing(sqlite3.connect(staging)) as connection, connection:
            connection.execute("CREATE TABLE t (x)")
        target.write_bytes(b"someone else's")

    with pytest.raises(StorageOpenError, match="created by another process"):
        create_whole(target, make_schema)
    assert target.read_bytes() == b"someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.sqlite"]


def test_a_staging_file_of_a_live_process_is_left_alone(tmp_path: Path) -> None:
    live = tmp_path / f".memory.sqlite.creating-{os.getpid()}-0000"
    live.write_bytes(b"")
    with open_backend(tmp_path / "memory.sqlite"):
        pass
    assert live.exists()
