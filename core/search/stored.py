"""The event search index kept in SQL tables (`stratagate.storage.search_tables`): written in the same
transaction as the events it indexes, read one query term at a time, so a new process pays nothing to start.

Documents are the search candidates (active and superseded events), numbered by their section position
(the `events.position` column: kept while the event stays, new events after the last), which is the
reference's candidate order. Ranking gives the same keys, order and scores as `InvertedIndex.rank` over the
same events, and so as the reference's BM25: N and the mean length are over every candidate, the document
frequency is the term's posting count, and each document's score is summed in query-term order with the same
numpy operations.

A term's postings are a settled blob of (position, frequency, length) int32 triples plus the rows of
`search_term_changes` written since (frequency 0: the document left the term); a read overlays the changes on
the blob. A write settles a term once its changes outgrow an eighth of its settled postings (and 64), so a
write costs O(1) per term amortized and a read costs one blob and a few rows per term.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import icu
import numpy as np
from sqlalchemy import Connection, cast, delete, func, insert, inspect, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from stratagate.search.bm25 import average_length, idf, unique_query_terms
from stratagate.search.collation import locale_compare_key
from stratagate.search.documents import event_search_fields
from stratagate.search.postings import contributions
from stratagate.search.tokenize import field_repeat, normalize_search_text, search_tokens
from stratagate.storage import bulk, schema
from stratagate.storage import search_tables as t
from stratagate.timeutil import parse_js_date

INDEX_FORMAT = f"3 icu{icu.ICU_VERSION} unicode{icu.UNICODE_VERSION}"
"""What the stored tokens and sort keys depend on: an index written with another one is rebuilt."""
CANDIDATE_STATUSES = ("active", "superseded")
CHUNK = 500
BUILD_BATCH = 20_000
"""Events tokenized between two appends of their postings to the term blobs during a build."""
SETTLE_AFTER = 64

Connect = Callable[[], AbstractContextManager[Connection]]
Progress = Callable[[int, int], None]
"""`progress(done, total)` during a build."""

_TRIPLE = np.dtype("<i4")


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def _upsert(connection: Connection, table: Any, rows: list[dict[str, Any]], set_: Callable[[Any], dict]) -> None:
    if not rows:
        return
    if connection.dialect.name == "sqlite":
        statement = sqlite_insert(table)
    else:  # imported here: an SQLite reader never loads the PostgreSQL dialect (see storage.sections)
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        statement = postgresql_insert(table)
    keys = [column.name for column in table.primary_key.columns]
    connection.execute(statement.on_conflict_do_update(index_elements=keys, set_=set_(statement.excluded)), rows)


def _replace(connection: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
    keys = {column.name for column in table.primary_key.columns}
    _upsert(connection, table, rows, lambda excluded: {c.name: excluded[c.name] for c in table.columns
                                                       if c.name not in keys})


# -- documents -------------------------------------------------------------------------------------------------


def chronology_text(record: dict[str, Any]) -> str:
    """The first of happenedStart, happenedEnd, mentionedAt and createdAt that is set (`event_cache.chronology`)."""
    temporal = record.get("temporal") or {}
    for name in ("happenedStart", "happenedEnd", "mentionedAt"):
        if temporal.get(name) is not None:
            return temporal[name]
    return record["createdAt"]


def _epoch(value: str | None) -> float | None:
    if value is None:
        return None
    parsed = parse_js_date(value) if value else None
    return None if parsed is None else float(parsed)


@dataclass(frozen=True)
class EventDocument:
    """What the index holds for one candidate: its term frequencies and its filter and sort inputs."""

    counts: dict[str, int]
    length: int
    row: dict[str, Any]
    """The `search_events` row without namespace and position."""


def term_counts(record: dict[str, Any]) -> dict[str, int]:
    """The term frequencies of the event's weighted token stream."""
    counts: Counter[str] = Counter()
    for _name, text, weight in event_search_fields(record):
        repeat = field_repeat(weight)
        for token in search_tokens(text):
            counts[token] += repeat
    return dict(counts)


def event_document(record: dict[str, Any]) -> EventDocument:
    counts = term_counts(record)
    temporal = record.get("temporal") or {}
    first = temporal.get("happenedStart") if temporal.get("happenedStart") is not None else temporal.get("happenedEnd")
    last = temporal.get("happenedEnd") if temporal.get("happenedEnd") is not None else temporal.get("happenedStart")
    weight = record["weight"]
    length = sum(counts.values())
    return EventDocument(counts, length, {
        "event_id": record["id"],
        "length": length,
        "participants": "\n".join(normalize_search_text(name) for name in temporal.get("participants") or []),
        "event_type": normalize_search_text(temporal.get("eventType") or ""),
        "type_text": normalize_search_text(f"{record['title']} {record['summary']} {' '.join(record['tags'])}"),
        "happened_start": _epoch(first),
        "happened_end": _epoch(last),
        "chronology_key": locale_compare_key(chronology_text(record)),
        "updated_key": locale_compare_key(record["updatedAt"]),
        "pinned": int(bool(weight["pinned"])),
        "floor_weight": weight["floorWeight"],
        "forced_cap": weight.get("forcedCap"),
        "mention_count": weight["mentionCount"],
        "last_adopted_turn": weight["lastAdoptedTurn"],
    })


# -- writing ---------------------------------------------------------------------------------------------------


def create_tables(connection: Connection) -> None:
    """Create the tables, replacing them when an earlier format's columns differ (their indexes rebuild)."""
    if has_tables(connection):
        inspector = inspect(connection)
        existing = set(inspector.get_table_names())
        if any(table.name in existing and {column["name"] for column in inspector.get_columns(table.name)}
               != {column.name for column in table.columns} for table in t.SEARCH_TABLES):
            t.search_metadata.drop_all(connection)
    t.search_metadata.create_all(connection, checkfirst=True)


def has_tables(connection: Connection) -> bool:
    if connection.dialect.name == "sqlite":
        found = connection.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'search_index_state'").scalar_one()
        return bool(found)
    return bool(connection.exec_driver_sql("SELECT to_regclass('search_index_state') IS NOT NULL").scalar_one())


def is_current(connection: Connection, namespace: str) -> bool:
    """Whether the tables hold an index of the namespace in this format, current at its stored revision."""
    if not has_tables(connection):
        return False
    state, spaces = t.search_index_state, schema.memory_spaces
    # The format first: an index of an earlier format may lack the columns read below.
    if connection.scalar(select(state.c.format).where(state.c.namespace == namespace)) != INDEX_FORMAT:
        return False
    found = connection.execute(select(state.c.revision, spaces.c.revision)
                               .join_from(state, spaces, state.c.namespace == spaces.c.namespace)
                               .where(state.c.namespace == namespace)).first()
    return found is not None and found[0] == found[1]


def stored_revision(connection: Connection, namespace: str) -> int:
    spaces = schema.memory_spaces
    return connection.scalar(select(spaces.c.revision).where(spaces.c.namespace == namespace)) or 0


def drop_namespace(connection: Connection, namespace: str) -> None:
    for table in reversed(t.SEARCH_TABLES):
        connection.execute(delete(table).where(table.c.namespace == namespace))


def read_event_records(connection: Connection, namespace: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(position, the fields a document needs) for every candidate, in section order, streamed."""
    e = schema.events
    statement = (
        select(*_DOCUMENT_COLUMNS)
        .where(e.c.namespace == namespace, e.c.status.in_(CANDIDATE_STATUSES))
        .order_by(e.c.position)
        .execution_options(yield_per=2000)
    )
    for row in connection.execute(statement):
        yield row.position, _document_record(row)


_DOCUMENT_COLUMNS = tuple(getattr(schema.events.c, name) for name in (
    "position", "id", "title", "summary", "narrative", "tags_json", "quotes_json", "temporal_json", "pinned",
    "floor_weight", "forced_cap", "mention_count", "last_adopted_turn", "created_at", "updated_at"))


def _document_record(row: Any) -> dict[str, Any]:
    """The event record fields a document is derived from, from a row of `_DOCUMENT_COLUMNS`."""
    return {
        "id": row.id, "title": row.title, "summary": row.summary, "narrative": row.narrative,
        "tags": json.loads(row.tags_json), "quotes": json.loads(row.quotes_json),
        "temporal": json.loads(row.temporal_json), "createdAt": row.created_at, "updatedAt": row.updated_at,
        "weight": {"pinned": row.pinned, "floorWeight": row.floor_weight, "forcedCap": row.forced_cap,
                   "mentionCount": row.mention_count, "lastAdoptedTurn": row.last_adopted_turn},
    }


@dataclass(frozen=True)
class IndexedDocument:
    """What the index holds for an event a commit is about to replace or delete."""

    position: int
    length: int
    counts: dict[str, int]


def indexed_before(connection: Connection, namespace: str, keys: list[str]) -> dict[str, IndexedDocument]:
    """Called by a commit before it writes events: the indexed documents of these events, re-derived from the
    rows about to be replaced (the index was built from them), so the commit can remove their postings."""
    if not keys or not has_tables(connection):
        return {}
    documents, e = t.search_events, schema.events
    found = {}
    for chunk in _chunks(keys):
        for row in connection.execute(
                select(documents.c.length, *_DOCUMENT_COLUMNS)
                .join_from(documents, e, (e.c.namespace == documents.c.namespace) & (e.c.id == documents.c.event_id))
                .where(documents.c.namespace == namespace, documents.c.event_id.in_(chunk))):
            found[row.id] = IndexedDocument(row.position, row.length, term_counts(_document_record(row)))
    return found


def count_candidates(connection: Connection, namespace: str) -> int:
    e = schema.events
    return connection.scalar(select(func.count()).select_from(e).where(
        e.c.namespace == namespace, e.c.status.in_(CANDIDATE_STATUSES))) or 0


def build(connection: Connection, namespace: str, documents: Iterable[tuple[int, dict[str, Any]]],
          total: int, revision: int, progress: Progress | None = None) -> None:
    """Replace the namespace's index with one of `documents` ((position, event record) of every candidate,
    ascending positions), current at the namespace's `revision`, in the caller's transaction. Postings go to
    the blobs in batches, so memory stays bounded by a batch, not by the memory."""
    create_tables(connection)
    drop_namespace(connection, namespace)
    count = total_length = 0
    batch: list[tuple[int, dict[str, Any]]] = []
    for position, record in documents:
        batch.append((position, record))
        if len(batch) >= BUILD_BATCH:
            count, total_length = _build_batch(connection, namespace, batch, count, total_length)
            batch = []
            if progress:
                progress(count, total)
    count, total_length = _build_batch(connection, namespace, batch, count, total_length)
    connection.execute(insert(t.search_index_state).values(
        namespace=namespace, format=INDEX_FORMAT, revision=revision, documents=count, total_length=total_length))
    if progress:
        progress(count, total)


def _build_batch(connection: Connection, namespace: str, batch: list[tuple[int, dict[str, Any]]],
                 count: int, total_length: int) -> tuple[int, int]:
    postings: dict[str, list[int]] = defaultdict(list)
    rows = []
    for position, record in batch:
        document = event_document(record)
        rows.append({"namespace": namespace, "position": position, **document.row})
        for term, frequency in document.counts.items():
            postings[term] += (position, frequency, document.length)
        total_length += document.length
    first = count == 0
    count += len(batch)
    bulk.insert_rows(connection, t.search_events, rows)
    terms = t.search_terms
    # In key order: the terms table is a B-tree on (namespace, term) (WITHOUT ROWID on SQLite).
    term_rows = [
        {"namespace": namespace, "term": term, "count": len(triples) // 3, "pending": 0,
         "postings": np.asarray(triples, dtype=_TRIPLE).tobytes()}
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
        state.c.namespace == namespace, state.c.format == INDEX_FORMAT, state.c.revision == expected_revision,
    ).values(revision=expected_revision + 1)).rowcount
    if moved and (upserts or deletes):
        _apply_event_changes(connection, namespace, upserts, deletes, before)


def _apply_event_changes(connection: Connection, namespace: str, upserts: list[dict[str, Any]],
                         deletes: list[str], old: dict[str, IndexedDocument]) -> None:
    state_table, documents_table = t.search_index_state, t.search_events
    state = connection.execute(select(state_table).where(state_table.c.namespace == namespace)).one()
    documents, total_length = state.documents, state.total_length
    upserted = {record["id"]: record for record in upserts}
    keys = list(upserted) + [key for key in deletes if key not in upserted]
    positions: dict[str, int] = {}
    e = schema.events
    for chunk in _chunks(list(upserted)):
        for row in connection.execute(select(e.c.id, e.c.position).where(e.c.namespace == namespace,
                                                                           e.c.id.in_(chunk))):
            positions[row.id] = row.position

    changes: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    count_delta: Counter[str] = Counter()
    gone: list[int] = []
    rows = []
    for key in keys:
        record = upserted.get(key)
        before = old.get(key)
        candidate = record is not None and record["status"] in CANDIDATE_STATUSES
        document = event_document(record) if candidate else None
        if document is not None and before is not None and before.position == positions[key] \
                and before.counts == document.counts:
            rows.append({"namespace": namespace, "position": before.position, **document.row})
            continue  # same postings: only the filter and sort inputs may have changed
        if before is not None:
            for term in before.counts:
                changes[term][before.position] = (0, 0)
                count_delta[term] -= 1
            documents -= 1
            total_length -= before.length
            gone.append(before.position)
        if document is not None:
            position = positions[key]
            for term, frequency in document.counts.items():
                changes[term][position] = (frequency, document.length)
                count_delta[term] += 1
            documents += 1
            total_length += document.length
            rows.append({"namespace": namespace, "position": position, **document.row})
    for chunk in _chunks(gone):
        connection.execute(delete(documents_table).where(documents_table.c.namespace == namespace,
                                                         documents_table.c.position.in_(chunk)))
    _replace(connection, documents_table, rows)
    if changes:
        _write_term_changes(connection, namespace, changes, count_delta)
    if (documents, total_length) != (state.documents, state.total_length):
        connection.execute(update(state_table).where(state_table.c.namespace == namespace).values(
            documents=documents, total_length=total_length))


def _write_term_changes(connection: Connection, namespace: str, changes: dict[str, dict[int, tuple[int, int]]],
                        count_delta: Counter[str]) -> None:
    terms, term_changes = t.search_terms, t.search_term_changes
    _replace(connection, term_changes, [
        {"namespace": namespace, "term": term, "position": position, "frequency": frequency, "length": length}
        for term, by_position in changes.items() for position, (frequency, length) in by_position.items()
    ])
    _upsert(connection, terms, [
        {"namespace": namespace, "term": term, "count": count_delta[term], "pending": len(by_position),
         "postings": b""}
        for term, by_position in changes.items()
    ], lambda excluded: {"count": terms.c.count + excluded.count, "pending": terms.c.pending + excluded.pending})
    touched = list(changes)
    due = []
    for chunk in _chunks(touched):
        due += connection.execute(select(terms.c.term).where(
            terms.c.namespace == namespace, terms.c.term.in_(chunk), terms.c.pending > SETTLE_AFTER,
            terms.c.pending * (8 * _TRIPLE.itemsize * 3) > func.length(terms.c.postings))).scalars().all()
    for term in due:
        _settle(connection, namespace, term)


def _settle(connection: Connection, namespace: str, term: str) -> None:
    """Fold a term's changes into its blob (or drop the term once no document holds it)."""
    terms, term_changes = t.search_terms, t.search_term_changes
    row = connection.execute(select(terms.c.count, terms.c.postings).where(
        terms.c.namespace == namespace, terms.c.term == term)).one()
    overlay = connection.execute(select(term_changes.c.position, term_changes.c.frequency, term_changes.c.length)
                                 .where(term_changes.c.namespace == namespace, term_changes.c.term == term)).all()
    merged = _merge(bytes(row.postings), overlay)
    connection.execute(delete(term_changes).where(term_changes.c.namespace == namespace, term_changes.c.term == term))
    if row.count <= 0:
        connection.execute(delete(terms).where(terms.c.namespace == namespace, terms.c.term == term))
    else:
        connection.execute(update(terms).where(terms.c.namespace == namespace, terms.c.term == term).values(
            pending=0, postings=merged.tobytes()))


def _merge(blob: bytes, overlay: list[Any]) -> np.ndarray:
    """The current (position, frequency, length) triples: the blob's, overridden by the overlay's rows."""
    settled = np.frombuffer(blob, dtype=_TRIPLE).reshape(-1, 3)
    if not overlay:
        return settled
    changed = np.asarray(overlay, dtype=np.int64).reshape(-1, 3).astype(_TRIPLE)
    fresh = settled[~np.isin(settled[:, 0], changed[:, 0])]
    holding = changed[changed[:, 1] > 0]
    merged = np.concatenate([fresh, holding])
    return merged[np.argsort(merged[:, 0], kind="stable")]


# -- reading ---------------------------------------------------------------------------------------------------


class StoredEventIndex:
    """BM25 over the stored index of one namespace, through `connect()` (a read transaction).

    `facets_saved_at`: where the filter columns (`stratagate.search.facets`) of this exact state of the index
    may be kept between processes (None: the database may change under this process)."""

    def __init__(self, connect: Connect, namespace: str, facets_saved_at: Path | None = None, *,
                 follows_commits: bool = True):
        self.connect = connect
        self.namespace = namespace
        self.facets_saved_at = facets_saved_at
        self.follows_commits = follows_commits
        """False for an index in the outside cache (`search_cache`): it shows one revision, so after a commit
        its holder asks the backend again for the index of the new revision."""

    def rank(self, query: str, allowed: np.ndarray | None = None, limit: int | None = None,
             ids_of: Callable[[np.ndarray], list[str] | None] | None = None) -> list[tuple[str, float]]:
        """(event id, score) with a positive score, best first, ties by `localeCompare` of the id then section
        order; only documents at `allowed` positions when given (statistics stay those of every candidate).
        `ids_of(positions)` names documents when it can (else they are read from the index)."""
        terms = unique_query_terms(query)
        if not terms or (limit is not None and limit <= 0) or (allowed is not None and not len(allowed)):
            return []
        with self.connect() as connection:
            state = self._query(connection, "SELECT documents, total_length FROM search_index_state "
                                            "WHERE namespace = {}", [])[0]
            postings = self._postings(connection, terms)
            documents, total_length = state
            if not documents or not postings:
                return []
            mean_length = average_length(total_length, documents)
            size = 1 + max((int(triples[:, 0].max()) for _count, triples in postings if len(triples)), default=-1)
            totals = np.zeros(size, dtype=np.float64)
            for count, triples in postings:
                totals[triples[:, 0]] += contributions(idf(documents, count), triples[:, 1],
                                                       triples[:, 2].astype(np.float64), mean_length)
            positions = np.flatnonzero(totals)
            if allowed is not None:
                positions = positions[np.isin(positions, allowed)]
            scores = totals[positions]
            if limit is not None and len(positions) > limit:
                # Everything that scores at least the limit-th best score, ties at the boundary included.
                threshold = -np.partition(-scores, limit - 1)[limit - 1]
                keep = scores >= threshold
                positions, scores = positions[keep], scores[keep]
            order = np.argsort(-scores, kind="stable")
            positions, scores = positions[order], scores[order]
            ids = ids_of(positions) if ids_of is not None else None
            if ids is None:
                ids = self.ids(connection, positions)
        pairs = list(zip(ids, scores.tolist(), strict=True))
        # Only runs of equal scores need the collation keys; the sort is stable, so position breaks their ties.
        tied = np.flatnonzero(scores[1:] == scores[:-1])
        start = 0
        while start < len(tied):
            first = end = int(tied[start])
            while start < len(tied) and int(tied[start]) == end:
                end += 1
                start += 1
            pairs[first : end + 1] = sorted(pairs[first : end + 1], key=lambda pair: locale_compare_key(pair[0]))
        return pairs if limit is None else pairs[:limit]

    def _postings(self, connection: Connection, terms: list[str]) -> list[tuple[int, np.ndarray]]:
        """(document frequency, current triples) of each indexed query term, in query order."""
        settled = {term: (count, postings) for term, count, postings in self._query(
            connection, "SELECT term, count, postings FROM search_terms WHERE namespace = {} AND count > 0 "
                        "AND term IN ({})", terms)}
        overlay: dict[str, list[Any]] = defaultdict(list)
        if settled:
            for term, position, frequency, length in self._query(
                    connection, "SELECT term, position, frequency, length FROM search_term_changes "
                                "WHERE namespace = {} AND term IN ({})", list(settled)):
                overlay[term].append((position, frequency, length))
        return [(settled[term][0], _merge(bytes(settled[term][1]), overlay.get(term, [])))
                for term in terms if term in settled]

    def _query(self, connection: Connection, sql: str, values: list[Any]) -> list[tuple]:
        """Rows of `sql` (its first {} the namespace, its second an IN list of `values`), sent to the driver
        as is: a search runs a few such statements, and building them with SQLAlchemy Core costs more than
        running them."""
        mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        statement = sql.format(mark, ", ".join([mark] * len(values)))
        return [tuple(row) for row in connection.exec_driver_sql(statement, (self.namespace, *values))]

    def ids(self, connection: Connection, positions: np.ndarray) -> list[str]:
        """The event ids at these positions, in the order given."""
        found: dict[int, str] = {}
        for chunk in _chunks(positions.tolist()):
            found.update(self._query(connection, "SELECT position, event_id FROM search_events "
                                                 "WHERE namespace = {} AND position IN ({})", chunk))
        return [found[position] for position in positions.tolist()]
