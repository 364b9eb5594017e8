"""Building the stored index and keeping it current: every commit that writes events updates it in the same
transaction (`keep_current`), so the index is never behind the rows it indexes."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from sqlalchemy import Connection, bindparam, cast, delete, insert, select, update

from stratagate.arrays import np
from stratagate.cancellation import checkpoint
from stratagate.search.stored.documents import (
    CANDIDATE_STATUSES,
    DOCUMENT_COLUMNS,
    EventDocument,
    document_record,
    event_document,
    participant_names,
    participant_term,
    term_counts,
)
from stratagate.search.stored.tables import (
    CHUNK,
    CURRENT_FORMATS,
    INDEX_FORMAT,
    Progress,
    chunks,
    create_tables,
    drop_namespace,
    has_tables,
    replace,
    upsert,
)
from stratagate.search.stored.terms import SETTLE_AFTER, TRIPLE, Postings, merge, pack, unpack
from stratagate.storage import bulk, schema
from stratagate.storage import search_tables as t

BUILD_BATCH = 20_000
"""Events tokenized between two appends of their postings to the term blobs during a build."""


@dataclass(frozen=True)
class IndexedDocument:
    """What the index holds for an event a commit is about to replace or delete."""

    position: int
    length: int
    counts: dict[str, int]
    participants: frozenset[str]


def indexed_before(connection: Connection, namespace: str, keys: list[str]) -> dict[str, IndexedDocument]:
    """Called by a commit before it writes events: the indexed documents of these events, re-derived from the
    rows about to be replaced (the index was built from them), so the commit can remove their postings."""
    if not keys or not has_tables(connection):
        return {}
    documents, e = t.search_events, schema.events
    found = {}
    for chunk in chunks(keys):
        for row in connection.execute(
                select(documents.c.length, *DOCUMENT_COLUMNS)
                .join_from(documents, e, (e.c.namespace == documents.c.namespace) & (e.c.id == documents.c.event_id))
                .where(documents.c.namespace == namespace, documents.c.event_id.in_(chunk))):
            record = document_record(row)
            found[row.id] = IndexedDocument(row.position, row.length, term_counts(record),
                                            participant_names(record))
    return found


def build(connection: Connection, namespace: str, documents: Iterable[tuple[int, dict[str, Any]]],
          total: int, revision: int, progress: Progress | None = None) -> None:
    """Replace the namespace's index with one of `documents` ((position, event record) of every candidate,
    ascending positions), current at the namespace's `revision`, in the caller's transaction. Postings go to
    the blobs in batches, so memory stays bounded by a batch, not by the memory: each batch appends its
    postings as int32 triples, and the blobs are packed once the last one is in (`terms.pack`)."""
    create_tables(connection)
    drop_namespace(connection, namespace)
    count = total_length = 0
    batch: list[tuple[int, dict[str, Any]]] = []
    for position, record in documents:
        checkpoint()  # a cancelled build rolls back (or leaves no cache file)
        batch.append((position, record))
        if len(batch) >= BUILD_BATCH:
            count, total_length = _build_batch(connection, namespace, batch, count, total_length)
            batch = []
            if progress:
                progress(count, total)
    alone = count == 0  # one batch: its blobs are written packed
    count, total_length = _build_batch(connection, namespace, batch, count, total_length, packed=alone)
    if not alone:
        _pack_terms(connection, namespace)
    connection.execute(insert(t.search_index_state).values(
        namespace=namespace, format=INDEX_FORMAT, revision=revision, documents=count, total_length=total_length))
    _insert_name_terms(connection, namespace)
    if progress:
        progress(count, total)


def add_name_terms(connection: Connection, namespace: str) -> None:
    """Give a current index of the format before name terms (`tables.FORMAT_WITHOUT_NAME_TERMS`) its
    participants' name terms, from its `search_participants` rows, and the current format."""
    _insert_name_terms(connection, namespace)
    state = t.search_index_state
    connection.execute(update(state).where(state.c.namespace == namespace).values(format=INDEX_FORMAT))


def _insert_name_terms(connection: Connection, namespace: str) -> None:
    """Each participant's name term (`documents.participant_term`), from the namespace's `search_participants`
    rows, read in key order (by name, then position) and streamed: one name's positions held at a time."""
    names = t.search_participants
    rows = connection.execute(select(names.c.name, names.c.position).where(names.c.namespace == namespace)
                              .order_by(names.c.name, names.c.position).execution_options(yield_per=20_000))
    for name, group in groupby(rows, key=lambda row: row[0]):
        positions = [row[1] for row in group]
        bulk.insert_rows(connection, t.search_terms, [
            {"namespace": namespace, "term": participant_term(name), "count": len(positions), "pending": 0,
             "postings": _name_blob(positions)}])


def _name_blob(positions: list[int]) -> bytes:
    """A name term's packed postings: frequency 1 and length 0 at each position."""
    found = np.asarray(positions, dtype=np.int64)
    return pack(Postings(found, np.ones(len(found), dtype=np.int64), np.zeros(len(found), dtype=np.int64)))


def _build_batch(connection: Connection, namespace: str, batch: list[tuple[int, dict[str, Any]]],
                 count: int, total_length: int, packed: bool = False) -> tuple[int, int]:
    postings: dict[str, list[int]] = defaultdict(list)
    placed: list[tuple[int, EventDocument]] = []
    for position, record in batch:
        document = event_document(record)
        placed.append((position, document))
        for term, frequency in document.counts.items():
            postings[term] += (position, frequency, document.length)
        total_length += document.length
    first = count == 0
    count += len(batch)
    _insert_documents(connection, namespace, placed, placed)
    terms = t.search_terms
    # In key order: the terms table is a B-tree on (namespace, term) (WITHOUT ROWID on SQLite).
    term_rows = [
        {"namespace": namespace, "term": term, "count": len(triples) // 3, "pending": 0,
         "postings": _blob(np.asarray(triples, dtype=TRIPLE).reshape(-1, 3), packed)}
        for term, triples in sorted(postings.items())
    ]
    if first:  # the namespace's terms were dropped: every one is new
        bulk.insert_rows(connection, terms, term_rows)
        return count, total_length
    bulk.upsert_rows(connection, terms, term_rows, lambda excluded: {
        "count": terms.c.count + excluded.count,
        # SQLite's || yields TEXT (with the same bytes): cast back to a blob.
        "postings": cast(terms.c.postings.concat(excluded.postings), t.Blob)})
    return count, total_length


def _blob(triples: np.ndarray, packed: bool) -> bytes:
    return pack(unpack(triples.tobytes())) if packed else triples.tobytes()


def _pack_terms(connection: Connection, namespace: str) -> None:
    """Pack the namespace's blobs, which hold int32 triples appended batch by batch, a chunk of terms at a
    time."""
    terms = t.search_terms
    repack = update(terms).where(terms.c.namespace == namespace, terms.c.term == bindparam("packed_term")) \
        .values(postings=bindparam("packed_postings"))
    after = None
    while True:
        chosen = select(terms.c.term, terms.c.postings).where(terms.c.namespace == namespace)
        if after is not None:
            chosen = chosen.where(terms.c.term > after)
        rows = connection.execute(chosen.order_by(terms.c.term).limit(CHUNK)).all()
        if not rows:
            return
        connection.execute(repack, [{"packed_term": row.term, "packed_postings": pack(unpack(bytes(row.postings)))}
                                    for row in rows])
        after = rows[-1].term


def _insert_documents(connection: Connection, namespace: str, placed: list[tuple[int, EventDocument]],
                      named: list[tuple[int, EventDocument]]) -> None:
    """Insert the `search_events` rows of `placed` and the `search_participants` rows of `named` (their
    positions hold none)."""
    bulk.insert_rows(connection, t.search_events, [
        {"namespace": namespace, "position": position, **document.row} for position, document in placed])
    bulk.insert_rows(connection, t.search_participants, [
        {"namespace": namespace, "name": name, "position": position}
        for position, document in named for name in sorted(document.participants)])


def keep_current(connection: Connection, namespace: str, expected_revision: int, upserts: list[dict[str, Any]],
                 deletes: list[str], before: dict[str, IndexedDocument]) -> None:
    """Called by every commit, after its sections were written (the namespace's revision already moved from
    `expected_revision` to the next): move the index to the new revision and apply the events' changes
    (`before`: `indexed_before` the events were written).

    Does nothing when the namespace has no current index here (it is built on first search)."""
    if not has_tables(connection):
        return
    state = t.search_index_state
    moved = connection.execute(update(state).where(
        state.c.namespace == namespace, state.c.format.in_(CURRENT_FORMATS), state.c.revision == expected_revision,
    ).values(revision=expected_revision + 1)).rowcount
    if moved and (upserts or deletes):
        _apply_event_changes(connection, namespace, upserts, deletes, before)


def _apply_event_changes(connection: Connection, namespace: str, upserts: list[dict[str, Any]],
                         deletes: list[str], old: dict[str, IndexedDocument]) -> None:
    state_table = t.search_index_state
    state = connection.execute(select(state_table).where(state_table.c.namespace == namespace)).one()
    documents, total_length = state.documents, state.total_length
    name_terms = state.format == INDEX_FORMAT
    upserted = {record["id"]: record for record in upserts}
    keys = list(upserted) + [key for key in deletes if key not in upserted]
    positions: dict[str, int] = {}
    e = schema.events
    for chunk in chunks(list(upserted)):
        for row in connection.execute(select(e.c.id, e.c.position).where(e.c.namespace == namespace,
                                                                           e.c.id.in_(chunk))):
            positions[row.id] = row.position

    changes: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    count_delta: Counter[str] = Counter()
    cleared: list[int] = []
    placed: list[tuple[int, EventDocument]] = []
    names_cleared: list[int] = []
    names_placed: list[tuple[int, EventDocument]] = []
    for key in keys:
        record = upserted.get(key)
        before = old.get(key)
        candidate = record is not None and record["status"] in CANDIDATE_STATUSES
        document = event_document(record) if candidate else None
        if document is not None and before is not None and before.position == positions[key] \
                and before.counts == document.counts:
            # Same postings: only the filter and sort inputs may have changed.
            cleared.append(before.position)
            placed.append((before.position, document))
            if before.participants != document.participants:
                names_cleared.append(before.position)
                names_placed.append((before.position, document))
                if name_terms:
                    _name_changes(changes, count_delta, before.position, before.participants - document.participants, 0)
                    _name_changes(changes, count_delta, before.position, document.participants - before.participants, 1)
            continue
        if before is not None:
            for term in before.counts:
                changes[term][before.position] = (0, 0)
                count_delta[term] -= 1
            if name_terms:
                _name_changes(changes, count_delta, before.position, before.participants, 0)
            documents -= 1
            total_length -= before.length
            cleared.append(before.position)
            names_cleared.append(before.position)
        if document is not None:
            position = positions[key]
            for term, frequency in document.counts.items():
                changes[term][position] = (frequency, document.length)
                count_delta[term] += 1
            if name_terms:
                _name_changes(changes, count_delta, position, document.participants, 1)
            documents += 1
            total_length += document.length
            cleared.append(position)
            placed.append((position, document))
            names_cleared.append(position)
            names_placed.append((position, document))
    for table, positions in ((t.search_participants, names_cleared), (t.search_events, cleared)):
        for chunk in chunks(sorted(set(positions))):
            connection.execute(delete(table).where(table.c.namespace == namespace, table.c.position.in_(chunk)))
    _insert_documents(connection, namespace, placed, names_placed)
    if changes:
        _write_term_changes(connection, namespace, changes, count_delta)
    if (documents, total_length) != (state.documents, state.total_length):
        connection.execute(update(state_table).where(state_table.c.namespace == namespace).values(
            documents=documents, total_length=total_length))


def _name_changes(changes: dict[str, dict[int, tuple[int, int]]], count_delta: Counter[str], position: int,
                  names: frozenset[str], frequency: int) -> None:
    """The name terms' changes for a position leaving (frequency 0) or joining (1) these names; a name that
    leaves and joins again at the same position nets out, as a word's postings do."""
    for name in names:
        term = participant_term(name)
        changes[term][position] = (frequency, 0)
        count_delta[term] += 1 if frequency else -1


def _write_term_changes(connection: Connection, namespace: str, changes: dict[str, dict[int, tuple[int, int]]],
                        count_delta: Counter[str]) -> None:
    terms, term_changes = t.search_terms, t.search_term_changes
    replace(connection, term_changes, [
        {"namespace": namespace, "term": term, "position": position, "frequency": frequency, "length": length}
        for term, by_position in changes.items() for position, (frequency, length) in by_position.items()
    ])
    upsert(connection, terms, [
        {"namespace": namespace, "term": term, "count": count_delta[term], "pending": len(by_position),
         "postings": b""}
        for term, by_position in changes.items()
    ], lambda excluded: {"count": terms.c.count + excluded.count, "pending": terms.c.pending + excluded.pending})
    touched = list(changes)
    due = []
    for chunk in chunks(touched):
        due += connection.execute(select(terms.c.term).where(
            terms.c.namespace == namespace, terms.c.term.in_(chunk), terms.c.pending > SETTLE_AFTER,
            terms.c.pending * 8 > terms.c.count)).scalars().all()
    for term in due:
        _settle(connection, namespace, term)


def _settle(connection: Connection, namespace: str, term: str) -> None:
    """Fold a term's changes into its blob (or drop the term once no document holds it)."""
    terms, term_changes = t.search_terms, t.search_term_changes
    row = connection.execute(select(terms.c.count, terms.c.postings).where(
        terms.c.namespace == namespace, terms.c.term == term)).one()
    overlay = connection.execute(select(term_changes.c.position, term_changes.c.frequency, term_changes.c.length)
                                 .where(term_changes.c.namespace == namespace, term_changes.c.term == term)).all()
    merged = merge(bytes(row.postings), overlay)
    connection.execute(delete(term_changes).where(term_changes.c.namespace == namespace, term_changes.c.term == term))
    if row.count <= 0:
        connection.execute(delete(terms).where(terms.c.namespace == namespace, terms.c.term == term))
    else:
        connection.execute(update(terms).where(terms.c.namespace == namespace, terms.c.term == term).values(
            pending=0, postings=pack(merged)))
