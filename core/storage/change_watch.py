"""Telling, without a read transaction, that no commit changed an SQLite database since an answer was read.

A search keeps its answer for the index's revision, but confirming the revision is a read transaction: a
connection checked out of the pool, BEGIN, a statement and a rollback, more than the kept answer itself
costs. SQLite's `PRAGMA data_version` answers the question for less: its value, read twice on one connection,
differs when any *other* connection (of this process or another) committed in between. So the watch holds a
connection of its own that never writes and never stays in a transaction: every commit, ours through the
pool included, is another connection's, and none is missed. The pragma reads the WAL index (shared memory),
so it sees another process's commit as soon as that commit returned.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Protocol


class ChangeWatch(Protocol):
    def marker(self) -> object | None:
        """A value that differs from any read before it when a commit happened in between (None: unknown)."""

    def close(self) -> None: ...


class Unchanging:
    """A database nothing can commit to: a read-only open reads SQLite's immutable mode or a private copy."""

    def marker(self) -> int:
        return 0

    def close(self) -> None:
        pass


class SqliteChangeWatch:
    """`PRAGMA data_version` on a connection held for that alone (opened at the first `marker`)."""

    def __init__(self, path: Path, timeout: float):
        self._path = path
        self._timeout = timeout
        self._connection: sqlite3.Connection | None = None
        self._cursor: sqlite3.Cursor | None = None
        """The connection's one cursor, run again for each read (no cursor object per read)."""
        self._lock = threading.Lock()
        """One statement at a time on the connection: the app reads from a worker thread too."""

    def marker(self) -> int:
        """A value that differs from any read before it when a commit happened in between."""
        with self._lock:
            if self._cursor is None:
                # Autocommit: the pragma's read ends with it, so the watch never holds back a checkpoint.
                self._connection = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None,
                                                   check_same_thread=False)
                self._cursor = self._connection.cursor()
            return self._cursor.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = self._cursor = None
