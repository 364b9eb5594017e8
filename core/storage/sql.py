"""The SQL storage backend: schema v7 on SQLite files and PostgreSQL servers.

`open_backend(database)` takes a file path or a SQLAlchemy URL and returns a `SqlBackend`, which implements
the `StorageBackend` contract (backend.py). Opening reads no records (sections load on demand), and:

- a writable open of a v5/v6 file keeps its schema (legacy.py), so the reference still opens it; a v1–v4
  file opens read-only. Upgrading to v7 is explicit: `migrate_file` (upgrade.py, `stratagate migrate`);
- a read-only open never touches the file: it opens a private copy (migrated there if old), checks that
  the original's sha256 did not change, and creates no `-wal`/`-shm` beside it;
- v8–v12 files open read-only with a notice; anything else that is not a StrataGate v1–v12 database raises
  `StorageOpenError` naming the file and the reason, before anything is written.

Every commit is one transaction that starts by bumping the namespace's revision where it still equals the
caller's (`UPDATE … WHERE revision = expected`): a stale writer changes nothing and gets
`StorageConflictError` (`StorageBusyError` when it waited longer than the timeout for another writer's lock).
`exclusive(namespace)` holds the write lock across reads and one commit, for a writer that lost a race.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    delete,
    event,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, IntegrityError, OperationalError

from stratagate.errors import (
    CommitOutcomeUnknownError,
    NamespaceExistsError,
    ReadOnlyError,
    SchemaUpgradeRequiredError,
    SnapshotError,
    StorageBusyError,
    StorageConflictError,
    StorageOpenError,
    StorageWriteError,
)
from stratagate.search import stored, stored_facts
from stratagate.snapshot import DEFAULT_BLOCK_DECAY_LAMBDA, validate_section
from stratagate.storage import (
    bulk,
    files,
    migrations,
    records,
    revision_notify,
    schema,
    schema_objects,
    search_cache,
    spans,
    thread_blocks,
)
from stratagate.storage.backend import CHANGE_SECTION_KEYS, ELEMENT_FACTS, ChangeSet, Record
from stratagate.storage.change_watch import ChangeWatch, SqliteChangeWatch, Unchanging
from stratagate.storage.driver import begin_deferred, defer_begin, driver_rows, end_with_next
from stratagate.storage.event_order import EventOrder
from stratagate.storage.legacy import WRITABLE_VERSIONS, LegacySchema
from stratagate.storage.new_file import create_whole
from stratagate.storage.sections import SectionError, SectionStore
from stratagate.timeutil import now_utc8

WRITE_ORDER = (
    "blocks", "openTail", "events", "elements", ELEMENT_FACTS, "extractionJobs", "elementProjectionJobs", "usageReceipts",
    "ingestionReceipts", "successfulModelResponses",
)
"""Parents before children, so references resolve; deletes run afterwards in the reverse order."""
IMPORT_ORDER = tuple(section for section in WRITE_ORDER if section != ELEMENT_FACTS)
"""The order whole namespaces are written in (facts are nested in their elements)."""
TRANSFER_CHUNK = 1000
"""Records per read when a namespace is streamed (export, copy), so memory stays flat as a memory grows."""
PAGE_CACHE_KIB = 32 * 1024
"""SQLite's page cache per connection, at most (its default is 2 MB). A search reads its terms' postings
blobs whole, 0.3 MB packed for a frequent word at 100k events (1.2 MB in an index of int32 triples): with
the default, a few such blobs evict each other within one query, and every query reads them from the
operating system again (7 ms instead of 1 ms, measured with the triples)."""
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ"
"""A read transaction on PostgreSQL: one snapshot for all its statements."""
Progress = Callable[[str], None]
SPACE_FIELDS = ("currentTurn", "blockTurnSize", "blockDecayLambda")
SNAPSHOT_SECTIONS = (
    "openTail", "blocks", "events", "elements", "extractionJobs", "elementProjectionJobs", "usageReceipts",
    "ingestionReceipts", "successfulModelResponses",
)


class SqlBackend:
    """A StrataGate database on SQLite or PostgreSQL (see the module docstring)."""

    writes_in_process = 0
    """Write transactions ended by any backend of this process (`change_marker`): another open's commit in
    this process is seen at once, before its notification arrives."""

    def __init__(
        self,
        engine: Engine,
        *,
        location: str,
        read_only: bool,
        schema_version: int,
        notice: str | None = None,
        path: Path | None = None,
        sha256: str | None = None,
        hide_pending_blocks: bool = False,
        forensic_copy: files.ForensicCopy | None = None,
        identity: str | None = None,
        legacy: LegacySchema | None = None,
        counts_kept: bool = False,
        changes: ChangeWatch | None = None,
    ):
        self.engine = engine
        self.location = location
        self.read_only = read_only
        self.schema_version = schema_version
        """The file's version as found, before any upgrade."""
        self.legacy = legacy
        """Set when a v5/v6 file is written in its own schema."""
        self.notice = notice
        self.dialect = engine.dialect.name
        self._path = path
        self._sha256 = sha256
        self._forensic_copy = forensic_copy
        if forensic_copy is not None:  # the private copy goes even if close() is never called
            weakref.finalize(self, forensic_copy.cleanup)
        self._sections = SectionStore(self.dialect, hide_pending_blocks=hide_pending_blocks, legacy=legacy)
        # What names the database's current state for the outside search cache (see search_cache).
        self._identity = identity or location
        self._cached_index: search_cache.CachedIndex | None = None
        self._cached_state: tuple[str, int] | None = None
        self._cached_fact_index: search_cache.CachedIndex | None = None
        self._cached_fact_state: tuple[str, int] | None = None
        self._held: Connection | None = None
        """The connection of an `exclusive` block: every read and write inside the block runs on it."""
        self._shared = threading.local()
        """This thread's connection of a `shared_read` block (`connection`): every read inside runs on it."""
        self._counts_kept = counts_kept and legacy is None
        """Whether the database holds the threads' block counts (`thread_blocks`; never a v5/v6 file)."""
        self._tallied: tuple[str, str | None, int, int] | None = None
        """(namespace, thread, its block count, the highest sequence) of the last `block_tally`: the seal that
        follows stores its thread's new count in its commit."""
        self._inactive_indexed = False
        """Whether `events_inactive_idx` is known to be there (`_ensure_inactive_index`)."""
        self._changes = changes
        """`change_marker`'s source: a value that moves with every commit, read without a transaction."""

    @property
    def file_sha256(self) -> str | None:
        """sha256 of the database file (None on a server). A read-only open reports the bytes it verified
        (hashed once, on first use, when the file was read in place); a writable one hashes the file as it is
        now (content still in its WAL is not included)."""
        if self._sha256 is not None or self._path is None:
            return self._sha256
        digest = files.sha256_file(self._path)
        if self.read_only:
            self._sha256 = digest
        return digest

    # -- reads ---------------------------------------------------------------------------------------------

    def list_namespaces(self) -> list[str]:
        with self._reading() as connection:
            ms = schema.memory_spaces
            return list(connection.scalars(select(ms.c.namespace).order_by(ms.c.namespace)))

    def load_space(self, namespace: str) -> Record | None:
        with self._reading_one() as connection:
            return self._space(connection, namespace)

    def load_section(self, namespace: str, section: str) -> list[Record]:
        with self._reading() as connection:
            return self._read_checked(connection, namespace, section, None)

    def query_keys(self, namespace: str, section: str, where: Record | None = None) -> list[str]:
        with self._reading_json(namespace, section) as connection:
            return self._sections.keys(connection, namespace, section, where)

    def fetch(self, namespace: str, section: str, keys: list[str]) -> list[Record]:
        with self._reading() as connection:
            return self._read_checked(connection, namespace, section, list(keys))

    def packed_keys(
        self, namespace: str, section: str, where: Record | None = None, order: EventOrder | None = None,
        limit: int | None = None,
    ) -> Sequence[str]:
        with self._reading_json(namespace, section) as connection:
            return self._sections.packed_keys(connection, namespace, section, where, order, limit)

    def filter_values(self, namespace: str, section: str, name: str) -> list[str]:
        with self._reading_json(namespace, section) as connection:
            return self._sections.filter_values(connection, namespace, section, name)

    @contextmanager
    def _reading_json(self, namespace: str, section: str) -> Iterator[Connection]:
        """`_reading` for the listings whose filters and orders parse the events' temporal JSON in SQL: an
        event whose JSON does not parse is reported by its id and field, as reading it is, instead of as
        the database's bare error."""
        try:
            with self._reading() as connection:
                yield connection
        except DBAPIError as error:
            damaged = self._damaged_temporal(namespace) if section == "events" else None
            if damaged is None:
                raise
            raise SnapshotError(f"{self.location}: namespace {namespace!r}: row {damaged!r}: "
                                f"column temporal_json is not valid JSON") from error

    def _damaged_temporal(self, namespace: str) -> str | None:
        """The id of the namespace's first event whose temporal JSON does not parse, if any: one pass, on
        the error path only, on a connection of its own (a failed statement ends a PostgreSQL transaction)."""
        e = schema.events
        statement = select(e.c.id, e.c.temporal_json).where(e.c.namespace == namespace)
        try:
            with self.engine.connect() as connection:
                for event_id, text in connection.execution_options(yield_per=5_000).execute(statement):
                    try:
                        json.loads(text, parse_constant=_not_json)
                    except (TypeError, ValueError):
                        return event_id
        except DBAPIError:  # the database cannot be read now, or not this way: its own error says enough
            return None
        return None

    def key_statuses(self, namespace: str, section: str, statuses: list[str]) -> dict[str, str]:
        if section == "events" and "active" not in statuses:
            self._ensure_inactive_index()
        with self._reading() as connection:
            return self._sections.statuses(connection, namespace, section, statuses)

    def _ensure_inactive_index(self) -> None:
        """Create the partial index of events that are not active in a writable v7 database written before it
        existed: once, one pass over the events. Without it (read-only opens, v5/v6 files, which must hold
        only what the reference wrote) listing them reads every event."""
        if self._inactive_indexed or self.read_only or self.legacy is not None or self._held is not None:
            return
        index = schema.events_inactive_idx
        with self._reading() as connection:
            present = inspect(connection).has_index("events", index.name)
        if not present:
            with self._writing("events_inactive_idx") as connection:
                index.create(connection, checkfirst=True)
        self._inactive_indexed = True

    def key_tail(self, namespace: str, section: str, known: int) -> tuple[int, list[str]]:
        with self._reading() as connection:
            return self._sections.tail(connection, namespace, section, known)

    def _read_checked(self, connection: Connection, namespace: str, section: str, keys: list[str] | None) -> list[Record]:
        """Records checked like a snapshot's, so a damaged row is a SnapshotError naming the file, not bad data."""
        try:
            records = self._sections.read(connection, namespace, section, keys)
            validate_section(section, records)
        except SnapshotError as error:
            raise SnapshotError(f"{self.location}: namespace {namespace!r}: {error}") from None
        return records

    def block_tally(self, namespace: str, thread_id: str | None) -> tuple[int, int | None, int]:
        self._tallied = None
        if thread_id is not None and self._counts_kept:
            with self._reading_one() as connection:
                kept = thread_blocks.tally(connection, namespace, thread_id)
            if kept is not None:
                self._tallied = (namespace, thread_id, kept[0], kept[2])
                return kept
        tally = self._counted_tally(namespace, thread_id)
        if self.legacy is None:
            self._tallied = (namespace, thread_id, tally[0], tally[2])
        return tally

    def _counted_tally(self, namespace: str, thread_id: str | None) -> tuple[int, int | None, int]:
        # Index lookups in one statement run by the driver's cursor, outside a transaction: a new process's
        # first seal would otherwise spend more on compiling the query and on SQLAlchemy's work around it than
        # on running it. No thread is stored as NULL or '' (foreign files): one equality each, as
        # `IS NULL OR = ''` would scan the namespace's blocks. PostgreSQL's text columns use the "C"
        # collation; a parameter compared in another would miss the indexes.
        sql = _block_tally_sql(self.dialect == "postgresql", thread_id is None)
        per_thread_values = [namespace] * 4 if thread_id is None else [namespace, thread_id] * 2
        values = [*per_thread_values, namespace]
        with self._reading_one() as connection:
            [(*per_thread, highest)] = driver_rows(connection, sql, values, alone=True)
        ends = [end for end in per_thread[1::2] if end is not None]
        return sum(per_thread[0::2]), max(ends) if ends else None, highest or 0

    def block_spans(self, namespace: str, thread_id: str | None = None) -> list[Record]:
        with self._reading() as connection:
            return spans.block_spans(connection, self._sections, namespace, thread_id)

    def thread_ids(self, namespace: str) -> list[str | None]:
        with self._reading() as connection:
            return spans.thread_ids(connection, self._sections, namespace)

    def count(self, namespace: str, section: str) -> int:
        """How many records a section holds (for summaries), without loading them."""
        return len(self.query_keys(namespace, section))

    def export_namespace(self, namespace: str, progress: Progress | None = None) -> Record:
        """`{"snapshot": {...v7...}, "revision": N}`, read in one transaction so it is consistent.

        `progress(section)` is called after each section is read."""
        with self._reading() as connection:
            space = self._space(connection, namespace)
            if space is None:
                raise SectionError(f"{self.location}: no namespace {namespace!r}")
            snapshot: Record = {
                "schemaVersion": schema.SCHEMA_VERSION,
                "currentTurn": space["currentTurn"],
                "blockTurnSize": space["blockTurnSize"],
                "blockDecayLambda": space["blockDecayLambda"],
            }
            for section in SNAPSHOT_SECTIONS:
                snapshot[section] = self._read_checked(connection, namespace, section, None)
                if progress:
                    progress(section)
        return {"snapshot": snapshot, "revision": space["revision"]}

    # -- streamed transfers (export, copy): a section is read and written in chunks, never held whole ------

    @contextmanager
    def read_transaction(self) -> Iterator[Connection]:
        """One consistent read for a caller that streams several namespaces (an export or a copy)."""
        with self._reading() as connection:
            yield connection

    @contextmanager
    def write_transaction(self, what: str) -> Iterator[Connection]:
        """One write transaction for a caller that writes several namespaces at once (a copy: all or
        nothing). `what` names the namespaces in an error message."""
        with self._writing(what) as connection:
            yield connection

    def read_space(self, connection: Connection, namespace: str) -> Record:
        space = self._space(connection, namespace)
        if space is None:
            raise SectionError(f"{self.location}: no namespace {namespace!r}")
        return space

    def iter_section(self, connection: Connection, namespace: str, section: str) -> Iterator[list[Record]]:
        """A section's records in section order, `TRANSFER_CHUNK` at a time (only its keys are held whole)."""
        keys = self._sections.keys(connection, namespace, section, None)
        for start in range(0, len(keys), TRANSFER_CHUNK):
            yield self._read_checked(connection, namespace, section, keys[start : start + TRANSFER_CHUNK])

    def start_namespace(
        self, connection: Connection, namespace: str, space: Record, revision: int, *, replace: bool
    ) -> None:
        """Create `namespace` (space fields from `space`) inside the caller's write transaction; an existing
        one is refused unless `replace`, and then its rows go in the same transaction."""
        if self.legacy is not None:
            raise SchemaUpgradeRequiredError(
                self.location, self.schema_version, f"importing a whole namespace ({namespace!r})"
            )
        ms = schema.memory_spaces
        exists = connection.scalar(select(ms.c.revision).where(ms.c.namespace == namespace)) is not None
        if exists and not replace:
            raise NamespaceExistsError(f"{self.location}: namespace {namespace!r} already exists (replace it explicitly)")
        if exists:
            if stored.has_tables(connection):
                stored.drop_namespace(connection, namespace)
            if stored_facts.has_tables(connection):
                stored_facts.drop_namespace(connection, namespace)
            for table in reversed(schema.metadata.sorted_tables):
                connection.execute(delete(table).where(table.c.namespace == namespace))
            self._forget_thread_counts(connection, namespace)
            self._tallied = None
        now = now_utc8()
        connection.execute(
            insert(ms).values(
                namespace=namespace,
                schema_version=schema.SCHEMA_VERSION,
                revision=revision,
                created_at=now,
                updated_at=now,
                **records.space_values({key: space[key] for key in SPACE_FIELDS}),
            )
        )

    def write_records(self, connection: Connection, namespace: str, section: str, section_records: list[Record]) -> None:
        """Append whole records to a section of a namespace being written by `start_namespace`."""
        if section_records and not bulk.append(connection, namespace, section, section_records):
            self._sections.write(connection, namespace, section, section_records)

    def finish_namespace(self, connection: Connection, namespace: str) -> None:
        """After the last `write_records` of a namespace: build its search indexes in the same transaction."""
        self._build_search_index(connection, namespace)
        self._build_fact_index(connection, namespace)

    def _space(self, connection: Connection, namespace: str) -> Record | None:
        ms = schema.memory_spaces if self.legacy is None else self.legacy.memory_spaces
        row = connection.execute(select(ms).where(ms.c.namespace == namespace)).mappings().first()
        if row is None:
            return None
        return records.space_record(row if self.legacy is None else self.legacy.space_row(row))

    # -- writes --------------------------------------------------------------------------------------------

    def create_space(self, namespace: str, space: Record) -> int:
        now = now_utc8()
        row = {
            "namespace": namespace,
            "schema_version": self.schema_version if self.legacy else schema.SCHEMA_VERSION,
            "revision": 1,
            "current_turn": space.get("currentTurn", 0),
            "block_turn_size": space.get("blockTurnSize", 12),
            "block_decay_lambda": space.get("blockDecayLambda", 0.3),
            "created_at": space.get("createdAt", now),
            "updated_at": space.get("updatedAt", now),
        }
        table = schema.memory_spaces
        if self.legacy is not None:
            self._check_decay_lambda(namespace, row.pop("block_decay_lambda"))
            if not self.legacy.has_decay_lambda:
                table = self.legacy.memory_spaces
        with self._writing(namespace) as connection:
            existing = connection.scalar(select(table.c.revision).where(table.c.namespace == namespace))
            if existing is not None:
                raise StorageConflictError(namespace, 0, existing)
            connection.execute(insert(table).values(row))
        return 1

    def _check_decay_lambda(self, namespace: str, value: float) -> None:
        """A v5 file has no column for the block decay rate: only the v7 default may be asked of it."""
        assert self.legacy is not None
        if not self.legacy.has_decay_lambda and value != DEFAULT_BLOCK_DECAY_LAMBDA:
            raise SchemaUpgradeRequiredError(
                self.location, self.schema_version, f"setting block decay lambda {value} of {namespace!r}"
            )

    def commit(self, namespace: str, changes: ChangeSet, expected_revision: int) -> int:
        if isinstance(expected_revision, bool) or not isinstance(expected_revision, int) or expected_revision < 0:
            raise SectionError(f"expected_revision must be a non-negative integer, got {expected_revision!r}")
        unknown = set(changes.space) - set(SPACE_FIELDS)
        unknown |= (set(changes.upserts) | set(changes.deletes)) - set(CHANGE_SECTION_KEYS)
        if unknown:
            raise SectionError(f"commit to {namespace!r}: unknown fields or sections {sorted(unknown)}")
        ms = schema.memory_spaces
        values: dict[str, Any] = records.space_values(changes.space)
        if self.legacy is not None and "block_decay_lambda" in values and not self.legacy.has_decay_lambda:
            self._check_decay_lambda(namespace, values.pop("block_decay_lambda"))
        values.update(revision=ms.c.revision + 1, updated_at=now_utc8())
        with self._writing(namespace) as connection:
            bumped = connection.execute(
                update(ms).where(ms.c.namespace == namespace, ms.c.revision == expected_revision).values(values)
            )
            if bumped.rowcount != 1:
                actual = connection.scalar(select(ms.c.revision).where(ms.c.namespace == namespace))
                raise StorageConflictError(namespace, expected_revision, actual)
            # The change means "delete, then upsert" (a key in both ends up present, placed last). Rows are
            # written parents first and deleted children first, so references resolve at every statement.
            upserted = {
                section: {record.get(CHANGE_SECTION_KEYS[section]) for record in records if isinstance(record, dict)}
                for section, records in changes.upserts.items()
            }
            event_keys = [record.get("id") for record in changes.upserts.get("events", []) if isinstance(record, dict)]
            event_keys += list(changes.deletes.get("events", []))
            indexed = stored.indexed_before(connection, namespace, event_keys)
            cached_before = self._cached_documents_before(namespace, expected_revision, event_keys)
            fact_upkeep = stored_facts.Upkeep.before(connection, namespace, expected_revision,
                                                     changes.upserts, changes.deletes)
            for section in WRITE_ORDER:
                if changes.upserts.get(section):
                    readded = frozenset(changes.deletes.get(section, ())) & upserted[section]
                    self._sections.write(connection, namespace, section, changes.upserts[section], readded)
            # A sealed block's messages left the open tail when the block's rows took them over (their
            # block_id is set): deleting them from it again would find nothing.
            written = dict(upserted, openTail=upserted.get("openTail", set()) | {
                message.get("id") for block in changes.upserts.get("blocks", []) if isinstance(block, dict)
                for message in block.get("l5Raw") or () if isinstance(message, dict)
            })
            for section in reversed(WRITE_ORDER):
                doomed = [key for key in changes.deletes.get(section, ()) if key not in written.get(section, ())]
                if doomed:
                    self._sections.delete(connection, namespace, section, doomed)
            stored.keep_current(connection, namespace, expected_revision, changes.upserts.get("events", []),
                                changes.deletes.get("events", []), indexed)
            if fact_upkeep is not None:
                fact_upkeep.after(connection)
            counts_kept = self._counts_kept
            if self.legacy is None and (changes.upserts.get("blocks") or changes.deletes.get("blocks")):
                counts_kept = self._keep_thread_counts(connection, namespace, changes)
            if changes.journal:
                from stratagate.journal import append_entries

                append_entries(connection, namespace, changes.journal)
        self._counts_kept = counts_kept
        if cached_before is not None:
            self._advance_cached_index(namespace, expected_revision, changes, cached_before)
        elif not event_keys and self._cached_state == (namespace, expected_revision) and self._held is None:
            self._cached_state = (namespace, expected_revision + 1)  # no event changed: the index still holds
        return expected_revision + 1

    def _keep_thread_counts(self, connection: Connection, namespace: str, changes: ChangeSet) -> bool:
        """In a commit that writes or deletes blocks: a seal's new block (the one block written, in the thread
        `block_tally` counted, at the sequence after the highest it read; the commit's revision check means
        nothing was written in between) stores its thread's new count (an unthreaded one changes no count);
        any other change to the blocks drops the namespace's counts, which the next seal counts again.
        Returns whether the table exists now."""
        tallied, self._tallied = self._tallied, None
        blocks = changes.upserts.get("blocks") or []
        if (tallied is not None and tallied[0] == namespace and not changes.deletes.get("blocks")
                and len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].get("threadId") == tallied[1]
                and blocks[0].get("sequence") == tallied[3] + 1):
            if tallied[1] is None:  # no count is kept for unthreaded blocks; no other thread's count changed
                return self._counts_kept
            thread_blocks.keep(connection, namespace, tallied[1], tallied[2] + 1, tallied[3] + 1, blocks[0]["id"],
                               create=not self._counts_kept)
            return True
        return self._forget_thread_counts(connection, namespace)

    def _forget_thread_counts(self, connection: Connection, namespace: str) -> bool:
        """Drop the namespace's block counts where the table is there; returns whether it is."""
        if not (self._counts_kept or thread_blocks.exists(connection)):
            return False
        thread_blocks.forget(connection, namespace)
        return True

    def _cached_documents_before(self, namespace: str, revision: int, keys: list[str]) -> dict[str, Any] | None:
        """In a commit to a v5/v6 file whose outside index this backend holds at `revision`, before its writes:
        that index's documents of the events it writes (see `_advance_cached_index`); None otherwise."""
        held = self._cached_index is not None and self._cached_state == (namespace, revision)
        if not keys or not held or self._path is None:
            return None
        try:
            return search_cache.documents_before(self._cached_index, self._path, namespace, keys)
        except Exception:  # a cache that cannot be read is rebuilt at the next search; the commit goes on
            return None

    def _advance_cached_index(self, namespace: str, revision: int, changes: ChangeSet,
                              before: dict[str, Any]) -> None:
        """After a commit to a v5/v6 file (whose search index lives in the outside cache): move the cached
        index to the new revision with the commit's event changes instead of rebuilding it at the next search.
        When that cannot be done (another writer committed meanwhile), the next search rebuilds it."""
        assert self._cached_index is not None and self._path is not None
        upserts = [record for record in changes.upserts.get("events", []) if isinstance(record, dict)]
        try:
            advanced = search_cache.advance(self._cached_index, self._identity, namespace, revision, self._path,
                                            upserts, list(changes.deletes.get("events", [])), before)
        except Exception:  # the commit is stored: a cached index that could not follow it is rebuilt
            return
        if advanced is not None:
            self._cached_index, self._cached_state = advanced, (namespace, revision + 1)

    def import_namespace(
        self,
        namespace: str,
        snapshot: Record,
        revision: int = 1,
        *,
        replace: bool = False,
        progress: Progress | None = None,
    ) -> None:
        """Write a whole (validated, v7) snapshot as `namespace` in one transaction.

        Refuses an existing namespace unless `replace`, in which case the old rows go in the same transaction.
        `progress(section)` is called after each section is written."""
        with self._writing(namespace) as connection:
            self.start_namespace(connection, namespace, snapshot, revision, replace=replace)
            for section in IMPORT_ORDER:
                self.write_records(connection, namespace, section, snapshot[section])
                if progress:
                    progress(section)
            self.finish_namespace(connection, namespace)

    @contextmanager
    def exclusive(self, namespace: str) -> Iterator[None]:
        """Hold the write lock until the block ends (SQLite: the database's, PostgreSQL: the namespace row's):
        reads and the commit inside see and write one state that no other writer can change meanwhile. A
        writer waiting for the lock queues (PostgreSQL) or polls (SQLite's busy timeout) for it."""
        if self._held is not None:
            raise RuntimeError(f"{self.location}: exclusive blocks do not nest")
        with self._writing(namespace) as connection:
            if self.dialect == "postgresql":
                ms = schema.memory_spaces
                connection.execute(select(ms.c.revision).where(ms.c.namespace == namespace).with_for_update())
            self._held = connection
            try:
                yield
            finally:
                self._held = None

    @contextmanager
    def shared_read(self) -> Iterator[None]:
        """Run this thread's reads inside on one read transaction: one snapshot for all of them, and one
        BEGIN and end instead of a pair per read, each a round trip on PostgreSQL (a search reads its
        index, its filters and its hits). Writes inside are not seen: call it after any build. Nests."""
        if self._held is not None or self._shared_connection() is not None:
            yield
            return
        with self._reading() as connection:
            self._shared.connection = connection
            try:
                yield
            finally:
                self._shared.connection = None

    @contextmanager
    def last_read(self) -> Iterator[None]:
        """Inside a `shared_read`, the next statement is the last it needs: on PostgreSQL its COMMIT goes with
        it, a round trip less (a search's hits end it). A read after that statement sees a new snapshot."""
        connection = self._shared_connection()
        if connection is None or self.dialect != "postgresql":
            yield
            return
        end_with_next(connection, _BEGIN_READ)
        try:
            yield
        finally:
            end_with_next(connection, None)

    def change_marker(self) -> object | None:
        """A value equal to one read earlier only if no commit changed the database in between, read without a
        transaction (what lets a kept answer skip confirming its revision). None when that cannot be told so,
        or inside an exclusive block or a `shared_read`, whose snapshot may be older than the value."""
        if self._changes is None or self._held is not None or self._shared_connection() is not None:
            return None
        # Read first: a write of this process moves the marker as it ends, before its notification arrives.
        writes = SqlBackend.writes_in_process
        marker = self._changes.marker()
        return None if marker is None else (writes, marker)

    def _shared_connection(self) -> Connection | None:
        """This thread's connection of a `shared_read` block, if it is in one."""
        return getattr(self._shared, "connection", None)

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """One read transaction that sees a single snapshot (SQLite's default; REPEATABLE READ on PostgreSQL,
        so a section read in several queries, or an export, cannot mix two commits)."""
        if self._held is not None:
            yield self._held
            return
        shared = self._shared_connection()
        if shared is not None:
            yield shared
            return
        if self.dialect != "postgresql":
            with self.engine.connect() as connection:
                yield connection
            return
        with self.engine.connect() as connection:
            # The driver leaves the transaction to us, so that its BEGIN goes with the first statement.
            connection.execution_options(isolation_level="AUTOCOMMIT")
            driver = connection.connection.driver_connection
            defer_begin(connection, _BEGIN_READ)
            try:
                yield connection
            finally:
                defer_begin(connection, None)
                end_with_next(connection, None)
            # COMMIT ends a read as ROLLBACK would, but psycopg forgets its prepared statements on a ROLLBACK
            # (and deallocates them: another round trip), so the next read would parse them again. Nothing is
            # sent when the read's last statement carried it (`last_read`).
            driver.commit()  # type: ignore[union-attr]

    @contextmanager
    def _reading_one(self) -> Iterator[Connection]:
        """`_reading` for a read of one statement, which sees one snapshot by itself: on PostgreSQL it runs
        outside a transaction, sparing the BEGIN and its end (two round trips)."""
        if self.dialect != "postgresql" or self._held is not None or self._shared_connection() is not None:
            with self._reading() as connection:
                yield connection
            return
        with self.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT")
            yield connection

    @contextmanager
    def _writing(self, namespace: str) -> Iterator[Connection]:
        """One write transaction (BEGIN IMMEDIATE on SQLite); database refusals become StorageWriteError."""
        if self.read_only:
            reason = self.notice or "opened read-only"
            raise ReadOnlyError(f"{self.location}: cannot write to {namespace!r}: {reason}")
        if self._held is not None:
            yield self._held  # the exclusive block's transaction commits or rolls back as a whole
            return
        committing = False
        try:
            with self.engine.connect() as connection:
                connection.execution_options(sqlite_immediate=True)
                with connection.begin():
                    yield connection
                    committing = True  # leaving the block sends COMMIT
        except (IntegrityError, OperationalError, DataError) as error:
            detail = str(error.orig).splitlines()[0] if error.orig else str(error)
            if committing and error.connection_invalidated:
                # The server may have committed before the connection went: only a fresh read can tell.
                raise CommitOutcomeUnknownError(
                    f"{self.location}: the connection was lost while committing a write to {namespace!r}; it may "
                    f"or may not be stored: reopen and check (or retry with the same receipt id): {detail}"
                ) from error
            if _lost_the_lock(error):
                raise StorageBusyError(namespace, self.location, detail) from error
            raise StorageWriteError(
                f"{self.location}: write to {namespace!r} rejected, nothing was written: {detail}"
            ) from error
        finally:
            SqlBackend.writes_in_process += 1

    # -- search index --------------------------------------------------------------------------------------

    def event_search_index(self, namespace: str, progress: stored.Progress | None = None) -> stored.StoredEventIndex:
        """The namespace's persistent event search index. Built once when missing: into the database when it
        is writable v7 (then kept current by every commit), else into the outside cache (`search_cache`): a
        v5/v6 file must hold only what the reference wrote, which would not keep an index current."""
        writable = not self.read_only and self.legacy is None
        marker = self.change_marker()  # before the reads below: a commit after them moves it
        with self._reading() as connection:
            found = stored.current_format(connection, namespace)
        # An index of the format before name terms is read as it is, and given them where it may be written.
        if found == stored.INDEX_FORMAT or (found is not None and not writable):
            return stored.StoredEventIndex(self._reading, namespace, events_beside=True,
                                           change_marker=self.change_marker)
        if writable:
            with self._writing(namespace) as connection:
                found = stored.current_format(connection, namespace)
                if found is None:
                    self._build_search_index(connection, namespace, progress)
                elif found != stored.INDEX_FORMAT:
                    stored.add_name_terms(connection, namespace)
            return stored.StoredEventIndex(self._reading, namespace, events_beside=True,
                                           change_marker=self.change_marker)
        space = self.load_space(namespace)
        revision = -1 if space is None else space["revision"]
        if self._cached_index is None or self._cached_state != (namespace, revision):
            # A writable v5/v6 file moves on with every commit (ours and the reference's): a new revision gets
            # its own cache file.
            if self._cached_index is not None:
                self._cached_index.close()
            self._cached_index = search_cache.open_cached_index(self._identity, namespace, revision, self._reading,
                                                                progress)
            self._cached_state = (namespace, revision)
        index = self._cached_index.index(namespace)
        index.still_current = self._unchanged_since(marker)
        return index

    @staticmethod
    def _build_search_index(connection: Connection, namespace: str, progress: stored.Progress | None = None) -> None:
        stored.build(connection, namespace, stored.read_event_records(connection, namespace),
                     stored.count_candidates(connection, namespace), stored.stored_revision(connection, namespace),
                     progress)

    def element_search_index(self, namespace: str,
                             progress: stored.Progress | None = None) -> stored_facts.StoredFactIndex:
        """The namespace's persistent element search index, found or built as `event_search_index`'s."""
        marker = self.change_marker()
        with self._reading() as connection:
            if stored_facts.is_current(connection, namespace):
                return stored_facts.StoredFactIndex(self._reading, namespace)
        if not self.read_only and self.legacy is None:
            with self._writing(namespace) as connection:
                if not stored_facts.is_current(connection, namespace):
                    self._build_fact_index(connection, namespace, progress)
            return stored_facts.StoredFactIndex(self._reading, namespace)
        space = self.load_space(namespace)
        revision = -1 if space is None else space["revision"]
        if self._cached_fact_index is None or self._cached_fact_state != (namespace, revision):
            if self._cached_fact_index is not None:
                self._cached_fact_index.close()
            self._cached_fact_index = search_cache.open_cached_fact_index(self._identity, namespace, revision,
                                                                          self._reading, progress)
            self._cached_fact_state = (namespace, revision)
        index = self._cached_fact_index.fact_index(namespace)
        index.still_current = self._unchanged_since(marker)
        return index

    def _unchanged_since(self, marker: object | None) -> Callable[[], bool]:
        """Whether no commit changed the database since `change_marker` gave `marker` (False when unknown):
        an outside-cache index asks it before each search, so a read-only open follows other writers' commits
        (it then asks for the index again: the same one, another revision's, or a writer's in-database one)."""
        return lambda: marker is not None and self.change_marker() == marker

    @staticmethod
    def _build_fact_index(connection: Connection, namespace: str,
                          progress: stored.Progress | None = None) -> None:
        stored_facts.build(connection, namespace, stored_facts.read_elements(connection, namespace),
                           stored_facts.count_facts(connection, namespace),
                           stored.stored_revision(connection, namespace), progress)

    def close(self) -> None:
        self.engine.dispose()
        if self._changes is not None:
            self._changes.close()
        for cached in (self._cached_index, self._cached_fact_index):
            if cached is not None:
                cached.close()
        self._cached_index = self._cached_fact_index = None
        if self._forensic_copy is not None:
            self._forensic_copy.cleanup()
            self._forensic_copy = None

    def __enter__(self) -> SqlBackend:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# -- opening ---------------------------------------------------------------------------------------------


def open_backend(
    database: str | os.PathLike[str], *, read_only: bool = False, timeout: float = 5.0, create: bool = True
) -> SqlBackend:
    """Open a StrataGate database: a file path, or a SQLAlchemy URL (`sqlite:///…`, `postgresql://…`).

    `create` lets a writable open make a new, empty v7 database where none exists; a read-only open never
    creates anything."""
    text = os.fspath(database)
    if "://" not in text:
        return _open_sqlite_file(Path(text), read_only=read_only, timeout=timeout, create=create)
    try:
        url = make_url(text)
    except ArgumentError as error:
        raise StorageOpenError(text, f"is not a valid database URL ({error})") from error
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise StorageOpenError(text, "an SQLite URL must name a file")
        return _open_sqlite_file(Path(url.database), read_only=read_only, timeout=timeout, create=create)
    if url.get_backend_name() == "postgresql":
        return _open_postgresql(url, read_only=read_only, timeout=timeout, create=create)
    raise StorageOpenError(url.render_as_string(hide_password=True), "only SQLite and PostgreSQL are supported")


def sqlite_engine(path: Path, timeout: float, *, immutable: bool = False) -> Engine:
    """An engine on the file; `immutable` opens it with SQLite's `immutable=1` (no locks, no side files, no
    writes), only for a file at rest: no hot journal, no WAL with frames."""
    url = (URL.create("sqlite", database=path.resolve().as_uri(), query={"immutable": "1", "uri": "true"})
           if immutable else URL.create("sqlite", database=str(path)))
    engine = create_engine(url, connect_args={"timeout": timeout})

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Transactions are begun explicitly below, so the driver must not open its own.
        dbapi_connection.isolation_level = None
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute(f"PRAGMA busy_timeout = {max(0, int(timeout * 1000))}")
        dbapi_connection.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
        ensure_math_functions(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        if connection.get_execution_options().get("sqlite_immediate", False):
            _begin_immediate(connection, timeout)
        else:
            # A read's BEGIN takes no lock, so it cannot be refused: sent by the driver itself, it spares a
            # search (a few read transactions per query) SQLAlchemy's work around a statement.
            connection.connection.driver_connection.execute("BEGIN")  # type: ignore[union-attr]

    return engine


def ensure_math_functions(dbapi_connection: sqlite3.Connection) -> None:
    """The event lists' weight order uses `exp` and `ln`, which SQLite has only when it was built with its
    math functions: give a build without them Python's."""
    try:
        dbapi_connection.execute("SELECT exp(0), ln(1)")
    except sqlite3.OperationalError:
        dbapi_connection.create_function("exp", 1, math.exp, deterministic=True)
        dbapi_connection.create_function("ln", 1, math.log, deterministic=True)


def _begin_immediate(connection: Connection, timeout: float) -> None:
    """BEGIN IMMEDIATE (take the write lock), waiting up to `timeout` for another writer to release it.

    SQLite's own busy handler sleeps longer the longer a writer has waited (1 ms up to 100 ms between tries),
    so a writer that just committed and comes straight back beats one that has been waiting: under a tight
    loop one writer could starve. Here every waiter tries again after a short random pause, whatever it has
    waited, so the lock goes to waiters about evenly."""
    deadline = time.monotonic() + timeout
    connection.exec_driver_sql("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                return
            except OperationalError as error:
                if not _lost_the_lock(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(random.uniform(0.0002, 0.002))
    finally:
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {max(0, int(timeout * 1000))}")


def _open_sqlite_file(path: Path, *, read_only: bool, timeout: float, create: bool) -> SqlBackend:
    location = str(path)
    if not path.exists() and not path.is_symlink() and not read_only and create:
        if not path.parent.is_dir():
            raise StorageOpenError(location, f"its folder {path.parent} does not exist")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise StorageOpenError(location, f"its folder {path.parent} is read-only; no database can be created there")
        create_whole(path, lambda staging: _prepare_sqlite(
            staging, location, version=0, read_only=False, timeout=timeout, new_file=True).close())
        return _open_sqlite_file(path, read_only=False, timeout=timeout, create=False)
    version = files.read_header(path).user_version
    live_wal = files.has_live_wal(path)
    # A forensic open reads a private copy (file and WAL); the original is never connected to. A live WAL is
    # read through such a copy too: the header lags behind it (a just-created schema, an upgrade), and
    # connecting to the original could checkpoint the WAL into a file that then turns out to be refused.
    identity = search_cache.sqlite_file_identity(path) if read_only else None
    copy = files.forensic_copy(path) if live_wal else None
    try:
        tables = None
        if live_wal:
            version, tables = files.read_through_sqlite(copy.database)
        if version > schema.NEWEST_READABLE_VERSION or version < 0:
            raise StorageOpenError(
                location,
                f"schema {version} is newer than this StrataGate can read "
                f"({schema.SCHEMA_VERSION}, or up to {schema.NEWEST_READABLE_VERSION} read-only)",
            )
        if version > schema.SCHEMA_VERSION or 0 < version < min(WRITABLE_VERSIONS):
            read_only = True
            identity = identity or search_cache.sqlite_file_identity(path)
        if not read_only:
            # Refuse a foreign file before SQLite connects for writing (which could leave side files).
            _check_is_stratagate(location, version, files.peek_table_names(path) if tables is None else tables)
            _check_writable(path, location)
            if copy is not None:
                copy.cleanup()
                copy = None
            return _prepare_sqlite(path, location, version=version, read_only=False, timeout=timeout)
        if copy is None and version >= schema.SCHEMA_VERSION and not files.has_hot_journal(path):
            # Nothing to replay and nothing to upgrade: read the original in SQLite's immutable mode, which
            # never writes, locks or creates a side file, so nothing is copied; the file's identity (inode,
            # size, mtime, change counter) after the checks proves it did not change under them.
            backend = _prepare_sqlite(path, location, version=version, read_only=True, timeout=timeout,
                                      immutable=True, identity=identity)
            if search_cache.sqlite_file_identity(path) != identity:
                backend.close()
                raise StorageOpenError(location, "changed while it was being read (is another program writing it?)")
            return backend
        if copy is None:
            copy = files.forensic_copy(path)
        backend = _prepare_sqlite(
            copy.database, location, version=version, read_only=True, timeout=timeout, forensic_copy=copy,
            identity=identity,
        )
        if files.sha256_file(path) != copy.sha256:
            backend.close()
            raise StorageOpenError(location, "changed while it was being read (is another program writing it?)")
    except BaseException:
        if copy is not None:
            copy.cleanup()
        raise
    return backend


def _prepare_sqlite(
    path: Path,
    location: str,
    *,
    version: int,
    read_only: bool,
    timeout: float,
    new_file: bool = False,
    forensic_copy: files.ForensicCopy | None = None,
    immutable: bool = False,
    identity: str | None = None,
) -> SqlBackend:
    """Check what the file holds, create or upgrade its schema as allowed, and wrap it in a SqlBackend."""
    engine = sqlite_engine(path, timeout, immutable=immutable)
    try:
        notice, hide_pending, legacy, counts_kept = _check_and_upgrade(engine, location, version, read_only,
                                                                       forensic_copy)
    except DBAPIError as error:
        engine.dispose()
        if new_file:
            path.unlink(missing_ok=True)
        raise StorageOpenError(location, _sqlite_open_failure(error)) from error
    except BaseException:
        engine.dispose()
        raise
    return SqlBackend(
        engine,
        location=location,
        read_only=read_only,
        schema_version=version or schema.SCHEMA_VERSION,
        notice=notice,
        path=None if forensic_copy else path,
        sha256=forensic_copy.sha256 if forensic_copy else None,
        hide_pending_blocks=hide_pending,
        forensic_copy=forensic_copy,
        identity=identity,
        legacy=legacy,
        counts_kept=counts_kept,
        # A read-only open reads the file in immutable mode or a private copy: nothing commits to either.
        changes=Unchanging() if read_only else SqliteChangeWatch(path, timeout),
    )


def _check_and_upgrade(
    engine: Engine,
    location: str,
    version: int,
    read_only: bool,
    forensic_copy: files.ForensicCopy | None,
) -> tuple[str | None, bool, LegacySchema | None, bool]:
    """Returns the notice to show, whether v9+ pending blocks must be hidden, the v5/v6 layout of a file
    written in its own schema, and whether it keeps the threads' block counts (`thread_blocks`). Only a
    private forensic copy is ever upgraded here."""
    with engine.connect() as connection:
        tables = migrations.table_names(connection)
        hostile = [] if read_only else schema_objects.unexpected_objects(connection)
    _check_is_stratagate(location, version, tables)
    if hostile:
        raise StorageOpenError(location, schema_objects.refusal(hostile))
    if version == 0:
        if read_only:
            raise StorageOpenError(location, "is an empty SQLite database, not a StrataGate one")
        set_wal(engine)
        with immediate_transaction(engine) as connection:
            migrations.create_schema(connection)
        return None, False, None, False
    notice = None
    legacy = None
    if version < schema.SCHEMA_VERSION and forensic_copy is None:
        legacy = LegacySchema.of(version)
        notice = (
            f"schema {version}: kept in its own schema so the reference StrataGate still opens it "
            f"(`stratagate migrate` upgrades it to {schema.SCHEMA_VERSION})"
        )
    elif version < schema.SCHEMA_VERSION:
        notice = f"schema {version}: read through an upgraded private copy; the file is unchanged"
        if version < min(WRITABLE_VERSIONS):
            notice += f" (`stratagate migrate` upgrades it to {schema.SCHEMA_VERSION} for curation)"
        with immediate_transaction(engine) as connection:
            migrations.upgrade(connection, version)
    elif version > schema.SCHEMA_VERSION:
        notice = f"schema {version} is newer than {schema.SCHEMA_VERSION}: opened read-only"
    if not read_only:
        set_wal(engine)
    replaced = {} if legacy is None else {"blocks": legacy.blocks, "memory_spaces": legacy.memory_spaces}
    with engine.connect() as connection:
        # The explicit column lists (v7, or the file's own v5/v6 ones) must all be there, whatever else a
        # newer file holds. Plain SQL: compiling fourteen SELECTs costs a one-shot process (the CLI) ~40 ms.
        # [name], not "name": SQLite reads a double-quoted name that is no column as a string literal.
        for table in (replaced.get(table.name, table) for table in schema.metadata.sorted_tables):
            listed = ", ".join(f"[{column.name}]" for column in table.columns)
            connection.exec_driver_sql(f"SELECT {listed} FROM [{table.name}] LIMIT 1").all()
        hide_pending = "processing_status" in migrations.columns(connection, "blocks")
        if hide_pending:
            pending = connection.exec_driver_sql(
                "SELECT COUNT(*) FROM blocks WHERE processing_status <> 'ready'"
            ).scalar_one()
            if pending:
                notice = f"{notice}; {pending} pending block(s) not shown"
    return notice, hide_pending, legacy, thread_blocks.TABLE in tables


def _check_writable(path: Path, location: str) -> None:
    """A writable open needs to write the file and to create its `-wal`/`-shm` beside it. SQLite would
    otherwise fall back to reading it, leave those files behind and fail only at the first write."""
    if not os.access(path, os.W_OK):
        raise StorageOpenError(location, "is a read-only file; open it read-only (--read-only) or make it writable")
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StorageOpenError(
            location, f"its folder {folder} is read-only (SQLite writes {path.name}-wal there); open it read-only"
        )


def _sqlite_open_failure(error: DBAPIError) -> str:
    """The reason an SQLite open failed, naming the real cause rather than SQLite's generic wording."""
    detail = str(error.orig).splitlines()[0] if error.orig else str(error)
    if "locked" in detail or "busy" in detail:
        return f"is locked by another process ({detail}); try again later, or open it read-only"
    if "readonly" in detail or "read-only" in detail:
        return f"is a read-only file ({detail}); open it read-only"
    return f"is not a readable StrataGate database ({detail})"


def _check_is_stratagate(location: str, version: int, tables: list[str]) -> None:
    """Version 0 must be an empty file (a new database); any other version must have memory_spaces."""
    if version == 0 and tables:
        raise StorageOpenError(
            location, f"is an SQLite database but not a StrataGate one (tables: {', '.join(sorted(tables)[:5])})"
        )
    if version > 0 and "memory_spaces" not in tables:
        raise StorageOpenError(location, f"is not a StrataGate database (user_version {version}, no memory_spaces)")


@cache
def _block_tally_sql(postgresql: bool, null_thread: bool) -> str:
    """`SqlBackend.block_tally`'s statement: for each way the thread is stored, its block count and its last
    block's end turn; then the namespace's highest sequence. A named thread has one way, so its statement
    has no subqueries for another (each would cost a prepare in a new process)."""
    c = ' COLLATE "C"' if postgresql else ""
    threads = ["thread_id IS NULL", f"thread_id = ''{c}"] if null_thread else [f"thread_id = ?{c}"]
    tally = [f"(SELECT {what} FROM blocks WHERE namespace = ?{c} AND {thread}{order})"
             for thread in threads
             for what, order in (("count(*)", ""), ("end_turn", " ORDER BY sequence DESC LIMIT 1"))]
    return f"SELECT {', '.join(tally)}, (SELECT max(sequence) FROM blocks WHERE namespace = ?{c})"


BUSY_SQLSTATES = ("55P03", "40P01", "40001")
"""PostgreSQL: lock timeout, deadlock, serialization failure."""


def _not_json(constant: str) -> None:
    """`json.loads`' hook for NaN and Infinity: Python reads them, neither database's JSON does."""
    raise ValueError(f"{constant} is not JSON")


def _lost_the_lock(error: DBAPIError) -> bool:
    """Whether the database refused a write because another writer held the lock (not for the data)."""
    if getattr(error.orig, "sqlstate", None) in BUSY_SQLSTATES:
        return True
    text = str(error.orig).lower()
    return "database is locked" in text or "database is busy" in text


def set_wal(engine: Engine) -> None:
    raw = engine.raw_connection()
    try:
        raw.driver_connection.execute("PRAGMA journal_mode = WAL")
    finally:
        raw.close()


@contextmanager
def immediate_transaction(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as connection:
        connection.execution_options(sqlite_immediate=True)
        with connection.begin():
            yield connection


_INSTANCE = """
SELECT CASE WHEN has_function_privilege('pg_control_system()', 'EXECUTE')
            THEN (SELECT system_identifier FROM pg_control_system()) END,
       (SELECT oid FROM pg_database WHERE datname = current_database()), to_regclass(%(events)s)::oid
"""
"""What names this database instance for the outside search cache beside its URL (see search_cache): the
cluster's system identifier, the database's and the events table's OIDs. A database dropped and re-created at
the same URL gets new OIDs, so it never meets the cache files of the old one at the same revision."""


def _open_postgresql(url: URL, *, read_only: bool, timeout: float, create: bool) -> SqlBackend:
    schema.use_postgresql()
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    location = url.render_as_string(hide_password=True)
    options = f"-c lock_timeout={max(1, int(timeout * 1000))}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    # A statement run twice is prepared (psycopg's default waits for five): a search runs the same few texts
    # (their lists are arrays), and a prepared one is neither parsed again nor, after a few runs, planned again.
    engine = create_engine(url, connect_args={"connect_timeout": max(1, int(timeout)), "options": options,
                                              "prepare_threshold": 1})
    event.listen(engine, "before_cursor_execute", begin_deferred)
    try:
        with engine.connect() as connection:
            tables = inspect(connection).get_table_names()
            meta = schema.stratagate_metadata
            version = (
                int(connection.scalar(select(meta.c.value).where(meta.c.key == "schema_version")))
                if meta.name in tables
                else None
            )
            instance = connection.exec_driver_sql(_INSTANCE, {"events": schema.events.name}).one()
        notice = _check_postgresql(engine, location, tables, version, read_only, create)
    except DBAPIError as error:
        engine.dispose()
        detail = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise StorageOpenError(location, f"cannot be opened ({detail})") from error
    except BaseException:
        engine.dispose()
        raise
    if version is not None and version > schema.SCHEMA_VERSION:
        read_only = True
    if not read_only:
        revision_notify.install(engine)
    return SqlBackend(
        engine,
        location=location,
        read_only=read_only,
        schema_version=version or schema.SCHEMA_VERSION,
        notice=notice,
        counts_kept=thread_blocks.TABLE in tables,
        identity=" ".join([location, *(str(part) for part in instance)]),
        changes=revision_notify.PostgresChangeWatch(engine),
    )


def _check_postgresql(
    engine: Engine, location: str, tables: list[str], version: int | None, read_only: bool, create: bool
) -> str | None:
    if version is None:
        if "memory_spaces" in tables:
            raise StorageOpenError(location, "has a memory_spaces table but no stratagate_metadata version row")
        if read_only or not create:
            raise StorageOpenError(location, "holds no StrataGate schema")
        with engine.begin() as connection:
            schema.metadata.create_all(connection)
            schema.postgres_metadata.create_all(connection)
            connection.execute(
                insert(schema.stratagate_metadata).values(key="schema_version", value=str(schema.SCHEMA_VERSION))
            )
        return None
    if version > schema.NEWEST_READABLE_VERSION or version < schema.SCHEMA_VERSION:
        raise StorageOpenError(location, f"has schema {version}; this StrataGate reads {schema.SCHEMA_VERSION}")
    if version > schema.SCHEMA_VERSION:
        return f"schema {version} is newer than {schema.SCHEMA_VERSION}: opened read-only"
    if not read_only:
        with engine.connect() as connection:
            hostile = schema_objects.unexpected_objects(connection)
        if hostile:
            raise StorageOpenError(location, schema_objects.refusal(hostile))
    return None
