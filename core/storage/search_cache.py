"""The event search index of a database that cannot hold it, built once into a cache outside the database.

A read-only (forensic) open must leave the file byte-identical, and reference files (v1–v6) must stay as
the reference wrote them, so their index goes to `$XDG_CACHE_HOME/stratagate/search-index/` (or
`$STRATAGATE_CACHE_DIR`): one SQLite file per (database, namespace) holding the same tables as an in-database
index. Its name is a digest of everything that changes when the database does: the file's path, device,
inode, size and mtime, its SQLite change counter, its WAL's size and mtime, and the namespace's revision,
plus the index format. A changed file therefore never meets a stale index: it gets a new cache file (the
older ones of the same database and namespace are removed then).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL

from stratagate.search import stored


def cache_directory() -> Path:
    override = os.environ.get("STRATAGATE_CACHE_DIR")
    base = Path(override) if override else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stratagate"
    return base / "search-index"


def sqlite_file_identity(path: Path) -> str:
    """What changes whenever the file's content may have: path, inode, size, mtime, change counter, WAL."""
    status = path.stat()
    with path.open("rb") as handle:
        change_counter = handle.read(28)[24:28].hex()
    wal = path.with_name(path.name + "-wal")
    wal_part = ""
    if wal.is_file():
        wal_status = wal.stat()
        wal_part = f"wal {wal_status.st_size} {wal_status.st_mtime_ns}"
    return (f"{path.resolve()} {status.st_dev} {status.st_ino} {status.st_size} {status.st_mtime_ns} "
            f"{change_counter} {wal_part}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _engine(path: Path) -> Engine:
    engine = create_engine(URL.create("sqlite", database=str(path)))

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


class CachedIndex:
    """An outside-cache index file, opened for reading (`connect` gives read transactions)."""

    def __init__(self, path: Path):
        self.path = path
        self.engine = _engine(path)

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with self.engine.connect() as connection:
            yield connection

    def index(self, namespace: str) -> stored.StoredEventIndex:
        return stored.StoredEventIndex(self.connect, namespace, follows_commits=False)

    def close(self) -> None:
        self.engine.dispose()


def open_cached_index(identity: str, namespace: str, revision: int, read_source: stored.Connect,
                      progress: stored.Progress | None = None) -> CachedIndex:
    """The cache file for this database state and namespace, built first when missing.

    `identity` names the database's current state (`sqlite_file_identity`, or a server URL); `read_source()`
    gives a read transaction on the database to build from."""
    path = _state_path(identity, namespace, revision).with_suffix(".sqlite")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _build(path, namespace, read_source, progress)
        _remove_older(path)
    return CachedIndex(path)


def _state_path(identity: str, namespace: str, revision: int) -> Path:
    """`<family>-<state>` in the cache directory (without suffix): the family names the database and namespace,
    the state everything that changes with its content."""
    family = _digest(f"{identity.split(' ')[0]} {namespace}")
    return cache_directory() / f"{family}-{_digest(f'{identity} {namespace} {revision} {stored.INDEX_FORMAT}')}"


def _remove_older(path: Path) -> None:
    """Remove the cache files of earlier states of the same database and namespace."""
    family, _state = path.name.split("-", 1)
    current = path.name.split(".", 1)[0]
    for older in path.parent.glob(f"{family}-*"):
        if not older.name.startswith(current):
            older.unlink(missing_ok=True)


def _build(path: Path, namespace: str, read_source: stored.Connect, progress: stored.Progress | None) -> None:
    """Build into a temporary file beside the target, then rename it into place (a crash leaves no half index)."""
    handle, temporary = tempfile.mkstemp(prefix=path.stem, suffix=".building", dir=path.parent)
    os.close(handle)
    engine = _engine(Path(temporary))
    try:
        with read_source() as source, engine.connect() as target, target.begin():
            stored.build(target, namespace, stored.read_event_records(source, namespace),
                         stored.count_candidates(source, namespace), stored.stored_revision(source, namespace), progress)
        engine.dispose()
        os.replace(temporary, path)
    except BaseException:
        engine.dispose()
        Path(temporary).unlink(missing_ok=True)
        raise
