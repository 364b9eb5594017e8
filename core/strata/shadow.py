"""`stratum_3_shadow.db`: the SQLite FTS5 index of archived files, schema-compatible with the reference.

Same table, index, FTS5 external-content table and triggers as the reference, so either program can read
the other's database. Added: an UPDATE trigger (the reference had none), a busy timeout, batched inserts
in one transaction (P-2), queries whose words are quoted so `e-commerce` or `c++` search instead of failing
silently (B-17), damage reported as `CorruptShadowIndexError` instead of an empty result.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    Table,
    Text,
    create_engine,
    delete,
    event,
    select,
    text,
)
from sqlalchemy.exc import DBAPIError

from stratagate.strata.archive import quote
from stratagate.strata.errors import CorruptShadowIndexError

SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26

metadata = MetaData()
shadow_index = Table(
    "shadow_index",
    metadata,
    Column("id", Text, primary_key=True),
    Column("original_path", Text, nullable=False),
    Column("keywords", Text, server_default="[]"),
    Column("archive_path", Text, nullable=False),
    Column("summary_preview", Text, server_default=""),
    Column("evicted_at", Text, nullable=False),
)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS shadow_index (
        id TEXT PRIMARY KEY, original_path TEXT NOT NULL, keywords TEXT DEFAULT '[]',
        archive_path TEXT NOT NULL, summary_preview TEXT DEFAULT '', evicted_at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS idx_shadow_keywords ON shadow_index(original_path)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS shadow_fts USING fts5(
        keywords, summary_preview, content='shadow_index', content_rowid='rowid')""",
    """CREATE TRIGGER IF NOT EXISTS shadow_ai AFTER INSERT ON shadow_index BEGIN
        INSERT INTO shadow_fts(rowid, keywords, summary_preview) VALUES (new.rowid, new.keywords, new.summary_preview);
    END""",
    """CREATE TRIGGER IF NOT EXISTS shadow_ad AFTER DELETE ON shadow_index BEGIN
        INSERT INTO shadow_fts(shadow_fts, rowid, keywords, summary_preview)
        VALUES ('delete', old.rowid, old.keywords, old.summary_preview);
    END""",
    """CREATE TRIGGER IF NOT EXISTS shadow_au AFTER UPDATE ON shadow_index BEGIN
        INSERT INTO shadow_fts(shadow_fts, rowid, keywords, summary_preview)
        VALUES ('delete', old.rowid, old.keywords, old.summary_preview);
        INSERT INTO shadow_fts(rowid, keywords, summary_preview) VALUES (new.rowid, new.keywords, new.summary_preview);
    END""",
)


_COLUMNS = "id, original_path, keywords, archive_path, summary_preview, evicted_at"
_INSERT = f"INSERT INTO shadow_index ({_COLUMNS}) VALUES "
_ROW = "(?, ?, ?, ?, ?, ?)"
# Rows per INSERT statement. FTS5 flushes its pending terms at every statement's savepoint, so inserting
# row by row (executemany) wrote one tiny FTS segment per row and merged them: 30-40 µs of CPU per row,
# against about 11 µs for statements of many rows. One statement per eviction batch (2,048 rows, 12,288
# parameters; SQLite allows 32,766) cost about 0.6 µs less per row than 500-row statements (7.0 → 6.0–6.8,
# 20,000 rows alone) and wrote a slightly smaller index.
_ROWS_PER_STATEMENT = 2048


# Page cache of an eviction's insert connection (KiB). SQLite's default (2 MB) spilled pages all through a
# run (20,000 rows alone: 8.9-11.2 µs of CPU per row, against 7.7-8.6 with 32 MiB); 32 MiB held a whole run
# (a 14 MB database at 20,000 rows) and left all of it to the commit, at the run's end. 8 MiB starts spilling
# after about half of such a run, so the older pages reach the disk while files are still being rewritten:
# eviction's end waited about 100 ms less (7 interleaved pairs) for no measurable CPU in the insert thread.
_PENDING_CACHE_KIB = 8 * 1024

Row = tuple[str, str, str, str, str, str]  # column values in table order


def _insert_rows(connection: Connection, rows: list[Row]) -> None:
    """Insert `rows` with few multi-row statements (the trigger still fills the FTS table, row by row)."""
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start : start + _ROWS_PER_STATEMENT]
        statement = _INSERT + ", ".join([_ROW] * len(chunk))
        connection.exec_driver_sql(statement, tuple(chain.from_iterable(chunk)))


def keywords_text(keywords: list[str]) -> str:
    """The keywords column: exactly as `json.dumps` writes the list (the reference's form)."""
    return "[" + ", ".join(map(quote, keywords)) + "]"


@dataclass(frozen=True)
class ShadowEntry:
    id: str
    original_path: str
    keywords: list[str]
    archive_path: str
    summary_preview: str
    evicted_at: str

    def row(self) -> Row:
        return (
            self.id,
            self.original_path,
            keywords_text(self.keywords),
            self.archive_path,
            self.summary_preview,
            self.evicted_at,
        )


def _entry(row) -> ShadowEntry:
    try:
        keywords = json.loads(row.keywords or "[]")
    except json.JSONDecodeError:
        keywords = [row.keywords]
    return ShadowEntry(
        row.id, row.original_path, keywords, row.archive_path, row.summary_preview or "", row.evicted_at
    )


def fts_query(words: str) -> str:
    """Each word as a quoted FTS5 string (implicit AND); FTS operators in user text are plain words."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in words.split())


def _is_corruption(error: DBAPIError) -> bool:
    original = error.orig
    return isinstance(original, sqlite3.DatabaseError) and (
        getattr(original, "sqlite_errorcode", 0) & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB)
    )


class ShadowIndex:
    """One shadow database. `create=False` opens nothing when the file does not exist (reads have no side effects)."""

    def __init__(self, file: Path, create: bool = True):
        self.file = file
        self.exists = file.exists()
        self._engine: Engine | None = None
        if self.exists or create:
            # check_same_thread off: `add_in_background` hands a connection to a worker thread (one user at a time).
            self._engine = create_engine(
                f"sqlite:///{file}", connect_args={"timeout": 30, "check_same_thread": False}
            )
            event.listen(self._engine, "connect", _set_busy_timeout)
            with self._connection() as connection:
                for statement in _SCHEMA:
                    connection.execute(text(statement))
            self.exists = True

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        assert self._engine is not None
        try:
            with self._engine.begin() as connection:
                yield connection
        except DBAPIError as error:
            if _is_corruption(error):
                raise CorruptShadowIndexError(self.file, str(error.orig)) from error
            raise

    def add(self, entries: Iterable[ShadowEntry]) -> None:
        """Insert entries in one transaction (straight to the driver: a bulk insert of thousands of rows
        spent most of its time in per-row parameter processing otherwise)."""
        rows = [entry.row() for entry in entries]
        if rows:
            with self._connection() as connection:
                _insert_rows(connection, rows)

    def add_in_background(self) -> PendingRows:
        """A worker thread that inserts the rows handed to `PendingRows.add`, in one transaction the
        caller commits later.

        Eviction overlaps the FTS indexing (CPU in SQLite, which releases the GIL) with its file moves,
        and commits only once the blobs are on disk.
        """
        assert self._engine is not None
        return PendingRows(self, self._engine.connect())

    def remove(self, entry_ids: Iterable[str]) -> None:
        ids = list(entry_ids)
        if ids:
            with self._connection() as connection:
                connection.execute(delete(shadow_index).where(shadow_index.c.id.in_(ids)))

    def existing_ids(self, entry_ids: list[str]) -> set[str]:
        if self._engine is None or not entry_ids:
            return set()
        with self._connection() as connection:
            rows = connection.execute(select(shadow_index.c.id).where(shadow_index.c.id.in_(entry_ids)))
            return {row.id for row in rows}

    def count(self) -> int:
        if self._engine is None:
            return 0
        with self._connection() as connection:
            return connection.execute(text("SELECT count(*) FROM shadow_index")).scalar_one()

    def all(self) -> list[ShadowEntry]:
        if self._engine is None:
            return []
        with self._connection() as connection:
            rows = connection.execute(
                select(shadow_index).order_by(shadow_index.c.original_path, shadow_index.c.evicted_at)
            )
            return [_entry(row) for row in rows]

    def find(self, id_or_path: str) -> ShadowEntry | None:
        """The row with this id, else the newest row archived from this path (the reference took any row, B-4)."""
        if self._engine is None:
            return None
        with self._connection() as connection:
            row = connection.execute(
                select(shadow_index)
                .where((shadow_index.c.id == id_or_path) | (shadow_index.c.original_path == id_or_path))
                .order_by(
                    (shadow_index.c.id == id_or_path).desc(),
                    shadow_index.c.evicted_at.desc(),
                    text("rowid DESC"),
                )
                .limit(1)
            ).first()
            return _entry(row) if row else None

    def search(self, words: str, top_k: int = 5) -> list[ShadowEntry]:
        query = fts_query(words)
        if self._engine is None or not query:
            return []
        with self._connection() as connection:
            rows = connection.execute(
                text(
                    "SELECT s.* FROM shadow_fts JOIN shadow_index s ON s.rowid = shadow_fts.rowid "
                    "WHERE shadow_fts MATCH :query ORDER BY rank LIMIT :top_k"
                ),
                {"query": query, "top_k": top_k},
            )
            return [_entry(row) for row in rows]

    def check(self) -> None:
        """Raise `CorruptShadowIndexError` when SQLite finds damage (also in the FTS index)."""
        if self._engine is None:
            return
        with self._connection() as connection:
            result = connection.execute(text("PRAGMA quick_check")).scalar_one()
            if result != "ok":
                raise CorruptShadowIndexError(self.file, result)
            connection.execute(text("INSERT INTO shadow_fts(shadow_fts) VALUES ('integrity-check')"))


class PendingRows:
    def __init__(self, index: ShadowIndex, connection: Connection):
        self._index = index
        self._connection = connection
        self._transaction = connection.begin()
        # See _PENDING_CACHE_KIB.
        connection.exec_driver_sql(f"PRAGMA cache_size = -{_PENDING_CACHE_KIB}")
        self._error: BaseException | None = None
        self._queue: queue.SimpleQueue[list[Row] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._insert, name="strata-shadow-insert")
        self._thread.start()

    def add(self, rows: Iterable[Row]) -> None:
        """Queue rows (`ShadowEntry.row()` tuples: eviction builds them without the entry objects)."""
        self._queue.put(list(rows))

    def _insert(self) -> None:
        while (rows := self._queue.get()) is not None:
            if self._error is None:
                try:
                    _insert_rows(self._connection, rows)
                except BaseException as error:  # handed to the caller's thread by commit()
                    self._error = error

    def _stop(self) -> None:
        self._queue.put(None)
        self._thread.join()

    def commit(self, drop_ids: list[str] | None = None) -> None:
        """Commit the inserted rows except `drop_ids` (files that turned out not to be archived)."""
        self._stop()
        try:
            if self._error is not None:
                raise self._error
            ids = drop_ids or []
            for start in range(0, len(ids), _ROWS_PER_STATEMENT):
                chunk = ids[start : start + _ROWS_PER_STATEMENT]
                self._connection.execute(delete(shadow_index).where(shadow_index.c.id.in_(chunk)))
            self._transaction.commit()
        except DBAPIError as error:
            self._transaction.rollback()
            if _is_corruption(error):
                raise CorruptShadowIndexError(self._index.file, str(error.orig)) from error
            raise
        finally:
            self._connection.close()

    def rollback(self) -> None:
        self._stop()
        self._transaction.rollback()
        self._connection.close()


def _set_busy_timeout(dbapi_connection, _record) -> None:
    # The reference's default rollback journal is kept so both programs can share the file.
    dbapi_connection.execute("PRAGMA busy_timeout = 30000")
