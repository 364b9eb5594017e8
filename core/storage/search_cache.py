"""The event and element search indexes of a database that cannot hold them, built once into a cache
outside it.

A read-only (forensic) open must leave the file byte-identical, and reference files (v1–v6) must stay as
the reference wrote them, so their index goes to `$XDG_CACHE_HOME/stratagate/search-index/` (or
`$STRATAGATE_CACHE_DIR`): one SQLite file per (database, namespace, index) holding the same tables as an
in-database index. Its name is a digest of everything that changes when the database does: the file's path,
device, inode, size and mtime, its SQLite change counter, its WAL's size and mtime, and the namespace's
revision, plus the index format; for PostgreSQL, its URL, the cluster's system identifier and the OIDs of the
database and its events table (a database re-created at the same URL gets new ones), and the revision. A
changed database therefore never meets a stale index: it gets a new cache file (the older ones of the same
database, namespace and index are removed then).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event, update
from sqlalchemy.engine import URL

from stratagate.search import stored, stored_facts
from stratagate.storage.search_tables import search_index_state


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


def _engine(path: Path, *, read_only: bool = False) -> Engine:
    if read_only:
        # Never creates the file: another process's newer build may have removed it, and an empty file put
        # back in its place would then answer "no such table" instead of "unable to open".
        url = URL.create("sqlite", database=f"file:{quote(str(path))}", query={"mode": "ro", "uri": "true"})
    else:
        url = URL.create("sqlite", database=str(path))
    engine = create_engine(url)

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
        self.engine = _engine(path, read_only=True)
        self._views: dict[tuple[str, str], Any] = {}
        """(kind, namespace) → the one index object over this file: its holder keeps what it derived from it
        (kept postings, facets) while the file stays current."""

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with self.engine.connect() as connection:
            yield connection

    def index(self, namespace: str) -> stored.StoredEventIndex:
        key = ("events", namespace)
        if key not in self._views:
            self._views[key] = stored.StoredEventIndex(self.connect, namespace, follows_commits=False)
        return self._views[key]

    def fact_index(self, namespace: str) -> stored_facts.StoredFactIndex:
        key = ("elements", namespace)
        if key not in self._views:
            self._views[key] = stored_facts.StoredFactIndex(self.connect, namespace, follows_commits=False)
        return self._views[key]

    def close(self) -> None:
        self.engine.dispose()


def open_cached_index(identity: str, namespace: str, revision: int, read_source: stored.Connect,
                      progress: stored.Progress | None = None) -> CachedIndex:
    """The event index's cache file for this database state and namespace, built first when missing.

    `identity` names the database's current state (`sqlite_file_identity`, or a server's URL and instance);
    `read_source()` gives a read transaction on the database to build from."""
    def build(source: Connection, target: Connection) -> None:
        stored.build(target, namespace, stored.read_event_records(source, namespace),
                     stored.count_candidates(source, namespace), stored.stored_revision(source, namespace),
                     progress)

    return CachedIndex(_cache_file(_state_path(identity, namespace, revision), read_source, build))


def open_cached_fact_index(identity: str, namespace: str, revision: int, read_source: stored.Connect,
                           progress: stored.Progress | None = None) -> CachedIndex:
    """The element index's cache file for this database state and namespace (a family of its own), built first
    when missing; as `open_cached_index`."""
    def build(source: Connection, target: Connection) -> None:
        stored_facts.build(target, namespace, stored_facts.read_elements(source, namespace),
                           stored_facts.count_facts(source, namespace),
                           stored.stored_revision(source, namespace), progress)

    path = _state_path(identity, namespace, revision, "elements", stored_facts.FACT_INDEX_FORMAT)
    return CachedIndex(_cache_file(path, read_source, build))


def _cache_file(state_path: Path, read_source: stored.Connect,
                build: Callable[[Connection, Connection], None]) -> Path:
    path = state_path.with_suffix(".sqlite")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _build(path, read_source, build)
        _remove_older(path)
    return path


@contextmanager
def _attached(path: Path, source: Path) -> Iterator[Connection]:
    """A connection to the index file `path` with the SQLite file `source` attached: the index's changes read
    the events' rows from `events`, which is then the source's."""
    engine = _engine(path)
    try:
        with engine.connect() as connection:
            # An attach must come before any transaction: it goes to the driver before SQLAlchemy begins one.
            connection.connection.driver_connection.execute(  # type: ignore[union-attr]
                "ATTACH DATABASE ? AS source", (str(source),))
            yield connection
    finally:
        engine.dispose()


def documents_before(cached: CachedIndex, source: Path, namespace: str, keys: list[str]) -> dict[str, Any]:
    """`stored.indexed_before` for the cached index: called by a commit to `source` before it writes these
    events (their documents are re-derived from the rows about to be replaced)."""
    if not cached.path.exists():  # removed by another process's newer build (connecting would create it)
        raise FileNotFoundError(cached.path)
    with _attached(cached.path, source) as connection, connection.begin():
        return stored.indexed_before(connection, namespace, keys)


def advance(cached: CachedIndex, identity: str, namespace: str, revision: int, source: Path,
            upserts: list[dict[str, Any]], deletes: list[str], before: dict[str, Any]) -> CachedIndex | None:
    """The cache file of `revision + 1`, made from `cached` by applying the event changes of the commit that
    moved the SQLite file `source` from `revision` to `revision + 1` (`before`: `documents_before` it wrote
    them), as an in-database index is kept current; the older file is removed. `cached` may be the file of
    an earlier revision when the commits since changed no event (the caller knows: they were its own). A copy
    is changed, never the published file (another process may be reading it).

    None when the file is no longer at `revision + 1` (another writer committed since, or the commit has not
    ended yet): then the next search builds the index anew. The event positions are read from `source` in
    the same transaction as that check, so they are the ones of `revision + 1`."""
    path = _state_path(identity, namespace, revision + 1).with_suffix(".sqlite")
    handle, temporary = tempfile.mkstemp(prefix=path.stem, suffix=".building", dir=path.parent)
    os.close(handle)
    try:
        shutil.copyfile(cached.path, temporary)
        with _attached(Path(temporary), source) as connection, connection.begin():
            current = connection.exec_driver_sql(
                "SELECT revision FROM source.memory_spaces WHERE namespace = ?", (namespace,)).scalar()
            if current == revision + 1:
                state = search_index_state
                connection.execute(update(state).where(state.c.namespace == namespace).values(revision=revision))
                stored.keep_current(connection, namespace, revision, upserts, deletes, before)
            advanced = current == revision + 1 and stored.is_current(connection, namespace)
        if not advanced:
            Path(temporary).unlink(missing_ok=True)
            return None
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    cached.close()
    _remove_older(path)
    return CachedIndex(path)


def _state_path(identity: str, namespace: str, revision: int, kind: str = "",
                index_format: str = stored.INDEX_FORMAT) -> Path:
    """`<family>-<state>` in the cache directory (without suffix): the family names the database, namespace
    and kind of index (events: no kind), the state everything that changes with its content."""
    family = _digest(f"{identity.split(' ')[0]} {namespace}{f' {kind}' if kind else ''}")
    return cache_directory() / f"{family}-{_digest(f'{identity} {namespace} {revision} {index_format}')}"


def _remove_older(path: Path) -> None:
    """Remove the cache files of earlier states of the same database and namespace."""
    family, _state = path.name.split("-", 1)
    current = path.name.split(".", 1)[0]
    for older in path.parent.glob(f"{family}-*"):
        if not older.name.startswith(current):
            older.unlink(missing_ok=True)


def _build(path: Path, read_source: stored.Connect, build: Callable[[Connection, Connection], None]) -> None:
    """Build into a temporary file beside the target, then rename it into place (a crash leaves no half index)."""
    handle, temporary = tempfile.mkstemp(prefix=path.stem, suffix=".building", dir=path.parent)
    os.close(handle)
    engine = _engine(Path(temporary))
    try:
        with read_source() as source, engine.connect() as target, target.begin():
            build(source, target)
        engine.dispose()
        os.replace(temporary, path)
    except BaseException:
        engine.dispose()
        Path(temporary).unlink(missing_ok=True)
        raise
