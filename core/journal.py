"""The curation journal: an append-only, hash-chained log of every curation action.

Each pin, forget, restore, archive or supersede (and each undo of one) appends an entry: who did it, when,
what action, on which ids, and the records' state before and after. The storage backend appends the
entries of a `ChangeSet.journal` inside the mutation's own transaction, so an entry exists exactly when its
mutation does.

Entries are chained per namespace: entry `seq` stores the hash of entry `seq - 1` (`prev_hash`) and its own
`hash`, a SHA-256 over the canonical JSON of its fields and `prev_hash`. A second table keeps the head of
each chain (last seq and hash), so deleting the newest entries is caught too. `verify` walks the chain and
names the first entry that was edited, deleted or moved. Without a secret key a writer who rewrites the whole
chain and its head cannot be caught from the file alone; `verify` prints the head hash so it can be recorded
elsewhere and compared later.

The tables live beside the StrataGate tables and have no foreign keys into them: the reference and other
readers ignore them, and a database without them simply has an empty journal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    Table,
    Text,
    delete,
    func,
    insert,
    inspect,
    select,
    update,
)

from stratagate.errors import StrataGateError

JOURNAL_TABLE = "stratagate_curation_journal"
HEADS_TABLE = "stratagate_curation_journal_heads"
GENESIS_HASH = "0" * 64
"""`prev_hash` of the first entry of every namespace."""

metadata = MetaData()

journal_table = Table(
    JOURNAL_TABLE,
    metadata,
    Column("namespace", Text, primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("entry_time", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("ids_json", Text, nullable=False),
    Column("before_json", Text, nullable=False),
    Column("after_json", Text, nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
    sqlite_strict=True,
)

heads_table = Table(
    HEADS_TABLE,
    metadata,
    Column("namespace", Text, primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("hash", Text, nullable=False),
    sqlite_strict=True,
)


class JournalEntryError(StrataGateError):
    """A journal entry handed to `append_entries` is malformed (names the field at fault)."""


@dataclass(frozen=True)
class JournalRecord:
    """One stored journal entry."""

    namespace: str
    seq: int
    time: str
    actor: str
    action: str
    ids: list[str]
    before: Any
    after: Any
    prev_hash: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "seq": self.seq,
            "time": self.time,
            "actor": self.actor,
            "action": self.action,
            "ids": self.ids,
            "before": self.before,
            "after": self.after,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of `verify`: either every chain is intact, or the first bad entry and why."""

    ok: bool
    checked: int
    """How many entries were checked (over every namespace)."""
    heads: dict[str, str]
    """Namespace -> hash of its newest entry, to record elsewhere and compare later."""
    namespace: str | None = None
    bad_seq: int | None = None
    reason: str | None = None

    def describe(self) -> str:
        if self.ok:
            return f"journal OK: {self.checked} entries"
        return f"journal of {self.namespace}: entry {self.bad_seq} {self.reason}"


def new_entry(
    actor: str, action: str, ids: Iterable[str], before: Any, after: Any, time: str | None = None
) -> dict[str, Any]:
    """A journal entry for `ChangeSet.journal`; `time` defaults to now (UTC, ISO 8601)."""
    entry = {
        "time": time or datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "actor": actor,
        "action": action,
        "ids": list(ids),
        "before": before,
        "after": after,
    }
    _validate(entry)
    return entry


def chain_entries(
    namespace: str, entries: Iterable[dict[str, Any]], last_seq: int, last_hash: str
) -> list[JournalRecord]:
    """Number and hash entries that follow the entry (`last_seq`, `last_hash`) of a namespace's chain.

    Pure: the SQL functions below and the in-memory backend both use it."""
    records = []
    seq, prev_hash = last_seq, last_hash
    for entry in entries:
        _validate(entry)
        seq += 1
        fields = {
            "namespace": namespace,
            "seq": seq,
            "time": entry["time"],
            "actor": entry["actor"],
            "action": entry["action"],
            "ids": list(entry["ids"]),
            "before": entry["before"],
            "after": entry["after"],
        }
        digest = entry_hash(fields, prev_hash)
        records.append(JournalRecord(**fields, prev_hash=prev_hash, hash=digest))
        prev_hash = digest
    return records


def entry_hash(fields: dict[str, Any], prev_hash: str) -> str:
    """SHA-256 of the canonical JSON of an entry's fields (namespace and seq included) and `prev_hash`."""
    payload = {
        key: fields[key] for key in ("namespace", "seq", "time", "actor", "action", "ids", "before", "after")
    }
    payload["prev_hash"] = prev_hash
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def append_entries(
    connection: Connection, namespace: str, entries: list[dict[str, Any]]
) -> list[JournalRecord]:
    """Append entries to a namespace's chain on `connection`, inside the caller's transaction.

    Creates the journal tables when missing. The caller (the storage backend) holds the write lock of the
    mutation these entries describe, so reading the head and appending cannot interleave with another
    writer; the primary key rejects a duplicate seq if it ever did."""
    if not entries:
        return []
    metadata.create_all(connection, checkfirst=True)
    head = connection.execute(
        select(heads_table.c.seq, heads_table.c.hash).where(heads_table.c.namespace == namespace)
    ).first()
    last_seq, last_hash = (head.seq, head.hash) if head else (0, GENESIS_HASH)
    records = chain_entries(namespace, entries, last_seq, last_hash)
    connection.execute(insert(journal_table), [_row(record) for record in records])
    newest = records[-1]
    if head:
        connection.execute(
            update(heads_table)
            .where(heads_table.c.namespace == namespace)
            .values(seq=newest.seq, hash=newest.hash)
        )
    else:
        connection.execute(insert(heads_table).values(namespace=namespace, seq=newest.seq, hash=newest.hash))
    return records


def restore_entries(connection: Connection, namespace: str, records: list[JournalRecord]) -> None:
    """Make `records` (a whole chain, e.g. from an export or another database) the namespace's journal, inside
    the caller's transaction, hashes unchanged; a chain that `verify` would not pass is refused."""
    if any(record.namespace != namespace for record in records):
        raise JournalEntryError(f"journal of {namespace!r}: holds entries of another namespace")
    if records:
        problem = _first_problem(records, (records[-1].seq, records[-1].hash))
        if problem is not None:
            raise JournalEntryError(f"journal of {namespace!r}: entry {problem[0]} {problem[1]}")
    metadata.create_all(connection, checkfirst=True)
    connection.execute(delete(journal_table).where(journal_table.c.namespace == namespace))
    connection.execute(delete(heads_table).where(heads_table.c.namespace == namespace))
    if records:
        connection.execute(insert(journal_table), [_row(record) for record in records])
        connection.execute(insert(heads_table).values(namespace=namespace, seq=records[-1].seq, hash=records[-1].hash))


def record_from_json(data: Any) -> JournalRecord:
    """A stored entry from its `JournalRecord.to_json` form (as an export file carries it)."""
    fields = ("namespace", "seq", "time", "actor", "action", "ids", "before", "after", "prev_hash", "hash")
    if not isinstance(data, dict) or set(data) != set(fields):
        raise JournalEntryError(f"a journal entry must be an object with exactly {', '.join(fields)}")
    if not isinstance(data["seq"], int) or isinstance(data["seq"], bool):
        raise JournalEntryError(f"journal entry seq must be an integer, got {data['seq']!r}")
    for name in ("namespace", "prev_hash", "hash"):
        if not isinstance(data[name], str):
            raise JournalEntryError(f"journal entry {data['seq']}: {name} must be a string")
    _validate(data)
    return JournalRecord(**data)


def read_entries(bind: Engine | Connection, namespace: str | None = None) -> list[JournalRecord]:
    """Stored entries in (namespace, seq) order; all namespaces when `namespace` is None.

    A database without the journal table has an empty journal. Reads only: never creates a table."""
    return list(iter_entries(bind, namespace))


def iter_entries(bind: Engine | Connection, namespace: str | None = None) -> Iterator[JournalRecord]:
    with _connected(bind) as connection:
        if not inspect(connection).has_table(JOURNAL_TABLE):
            return
        query = select(journal_table).order_by(journal_table.c.namespace, journal_table.c.seq)
        if namespace is not None:
            query = query.where(journal_table.c.namespace == namespace)
        for row in connection.execute(query):
            yield _record(row)


def backend_entries(backend: Any, namespace: str) -> list[JournalRecord]:
    """The journal of a namespace in any storage backend: the SQL tables of a database backend, or the
    entries an in-memory backend keeps (chained here, as a database would have chained them)."""
    engine = getattr(backend, "engine", None)
    if engine is not None:
        return read_entries(engine, namespace)
    entries = backend.journal(namespace) if hasattr(backend, "journal") else []
    return chain_entries(namespace, entries, 0, GENESIS_HASH)


def verify_backend(backend: Any, namespace: str) -> VerifyResult:
    """`verify` for a database backend; an in-memory journal cannot be tampered with from outside."""
    engine = getattr(backend, "engine", None)
    if engine is not None:
        return verify(engine, namespace)
    records = backend_entries(backend, namespace)
    heads = {namespace: records[-1].hash} if records else {}
    return VerifyResult(True, len(records), heads)


def count_entries(bind: Engine | Connection) -> int:
    with _connected(bind) as connection:
        if not inspect(connection).has_table(JOURNAL_TABLE):
            return 0
        return connection.execute(select(func.count()).select_from(journal_table)).scalar_one()


def verify(bind: Engine | Connection, namespace: str | None = None) -> VerifyResult:
    """Walk every chain (or one namespace's) and report the first entry that is not what was appended."""
    with _connected(bind) as connection:
        records = read_entries(connection, namespace)
        heads = _read_heads(connection)
    if namespace is not None:
        heads = {name: head for name, head in heads.items() if name == namespace}
    by_namespace: dict[str, list[JournalRecord]] = {}
    for record in records:
        by_namespace.setdefault(record.namespace, []).append(record)
    checked = 0
    head_hashes: dict[str, str] = {}
    for name in sorted(set(by_namespace) | set(heads)):
        chain = by_namespace.get(name, [])
        problem = _first_problem(chain, heads.get(name))
        if problem is not None:
            bad_seq, reason = problem
            return VerifyResult(False, checked, head_hashes, name, bad_seq, reason)
        checked += len(chain)
        if chain:
            head_hashes[name] = chain[-1].hash
    return VerifyResult(True, checked, head_hashes)


def export_jsonl(records: Iterable[JournalRecord], out: Path) -> int:
    """Write entries as JSON lines (one object per entry, keys as in `JournalRecord.to_json`)."""
    count = 0
    with out.open("w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record.to_json(), ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count


def _first_problem(chain: list[JournalRecord], head: tuple[int, str] | None) -> tuple[int, str] | None:
    by_hash = {record.hash: record for record in chain}
    prev_hash = GENESIS_HASH
    for expected_seq, record in enumerate(chain, start=1):
        if record.seq != expected_seq:
            return expected_seq, "is missing (deleted)"
        fields = record.to_json()
        if entry_hash(fields, record.prev_hash) != record.hash:
            moved_from = _original_seq(fields, record.prev_hash, record.hash, len(chain) + 1)
            if moved_from is not None:
                return expected_seq, f"was reordered (it holds entry {moved_from}'s content)"
            return expected_seq, "was edited (its hash does not match its content)"
        if record.prev_hash != prev_hash:
            if record.prev_hash in by_hash:
                return expected_seq, f"was reordered (it follows entry {by_hash[record.prev_hash].seq})"
            return expected_seq, "has a broken link (previous hash does not match entry before it)"
        prev_hash = record.hash
    last_seq = chain[-1].seq if chain else 0
    if head is None:
        return (1, "has no chain head (the heads table was edited)") if chain else None
    head_seq, head_hash = head
    if head_seq > last_seq:
        return last_seq + 1, "is missing (deleted)"
    if head_seq < last_seq or head_hash != prev_hash:
        return head_seq, "does not match the chain head (the journal was edited)"
    return None


def _original_seq(fields: dict[str, Any], prev_hash: str, stored_hash: str, limit: int) -> int | None:
    """The seq an entry was hashed under, when its content was moved to another seq."""
    for seq in range(1, limit + 1):
        if entry_hash({**fields, "seq": seq}, prev_hash) == stored_hash:
            return seq
    return None


def _read_heads(connection: Connection) -> dict[str, tuple[int, str]]:
    if not inspect(connection).has_table(HEADS_TABLE):
        return {}
    rows = connection.execute(select(heads_table.c.namespace, heads_table.c.seq, heads_table.c.hash))
    return {row.namespace: (row.seq, row.hash) for row in rows}


def _validate(entry: dict[str, Any]) -> None:
    for field_name in ("time", "actor", "action"):
        value = entry.get(field_name)
        if not isinstance(value, str) or not value.strip():
            raise JournalEntryError(
                f"journal entry field {field_name!r} must be a non-empty string, got {value!r}"
            )
    ids = entry.get("ids")
    if not isinstance(ids, list | tuple) or not all(isinstance(item, str) for item in ids):
        raise JournalEntryError(f"journal entry field 'ids' must be a list of strings, got {ids!r}")
    for field_name in ("before", "after"):
        if field_name not in entry:
            raise JournalEntryError(f"journal entry field {field_name!r} is missing")
        try:
            _canonical(entry[field_name])
        except (TypeError, ValueError) as error:
            raise JournalEntryError(
                f"journal entry field {field_name!r} is not plain JSON: {error}"
            ) from None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _row(record: JournalRecord) -> dict[str, Any]:
    return {
        "namespace": record.namespace,
        "seq": record.seq,
        "entry_time": record.time,
        "actor": record.actor,
        "action": record.action,
        "ids_json": _canonical(record.ids),
        "before_json": _canonical(record.before),
        "after_json": _canonical(record.after),
        "prev_hash": record.prev_hash,
        "hash": record.hash,
    }


def _record(row: Any) -> JournalRecord:
    return JournalRecord(
        namespace=row.namespace,
        seq=row.seq,
        time=row.entry_time,
        actor=row.actor,
        action=row.action,
        ids=_loads(row.ids_json),
        before=_loads(row.before_json),
        after=_loads(row.after_json),
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


def _loads(text: str) -> Any:
    # An edited cell may no longer be JSON; keep its text so `verify` reports it as edited.
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (TypeError, ValueError):
        return text


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not canonical JSON: an entry never holds them, so a cell that does was edited.
    raise ValueError(f"not canonical JSON: {name}")


@contextmanager
def _connected(bind: Engine | Connection) -> Iterator[Connection]:
    """Use a Connection as is, or open one from an Engine for the duration of a block."""
    if isinstance(bind, Connection):
        yield bind
        return
    with bind.connect() as connection:
        yield connection
