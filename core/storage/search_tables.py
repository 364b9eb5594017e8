"""The persistent event search index: tables beside the v7 schema, in the database or in an outside cache.

The reference's rules let a file hold extra tables (readers select explicit columns of the tables they
know), so these are a v7-compatible addition: the reference and older versions of this package ignore them.
They live in their own MetaData so that schema creation, upgrades and the v7 column checks stay exactly as
they were; `stratagate.search.stored` creates, fills and reads them.

- `search_index_state`: per namespace, the index format (tokenizer and collation version it was built
  with: a different one means rebuild), the namespace revision it is current at (every commit through this
  package moves it along; a writer that does not, such as an older version of this package, leaves it
  behind, and the index is rebuilt), the candidate count N and the total document length (BM25's
  statistics);
- `search_terms`: per term, its document frequency and its settled postings (a blob of positions,
  frequencies and document lengths, packed by `stratagate.search.stored.terms`);
- `search_term_changes`: postings written since the term was settled (frequency 0: the document left);
  a read overlays them on the blob, a write settles a term once they outgrow an eighth of it;
- `search_events`: one row per search candidate (active or superseded event) keyed by its section position,
  with its length and the filter and sort inputs derived once at write time (a commit that replaces the
  event re-derives its old terms from the row it replaces, so they are not stored twice), indexed for the
  per-query filters and orders of `stratagate.search.stored.facets` (eventType, happened range, chronology
  both ways, weight class);
- `search_participants`: one row per candidate and distinct normalized participant name.
"""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    REAL,
    TEXT,
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    event,
)

Text = TEXT().with_variant(TEXT(collation="C"), "postgresql")
Int = Integer().with_variant(BigInteger(), "postgresql")
Real = REAL().with_variant(Double(), "postgresql")
Blob = LargeBinary()  # BYTEA on PostgreSQL

search_metadata = MetaData()


def _table(name: str, *items, **options) -> Table:
    return Table(name, search_metadata, *items, sqlite_strict=True, **options)


search_index_state = _table(
    "search_index_state",
    Column("namespace", Text, primary_key=True),
    Column("format", Text, nullable=False),
    Column("revision", Int, nullable=False),
    Column("documents", Int, nullable=False),
    Column("total_length", Int, nullable=False),
)

search_terms = _table(
    "search_terms",
    Column("namespace", Text, nullable=False),
    Column("term", Text, nullable=False),
    Column("count", Int, nullable=False),
    Column("pending", Int, nullable=False),
    Column("postings", Blob, nullable=False),
    PrimaryKeyConstraint("namespace", "term"),
    sqlite_with_rowid=False,
)
# PostgreSQL compresses a large value by default, so every read of a term's postings would decompress them
# again (about three times the cost of reading them); they are read far more often than written.
_UNCOMPRESSED = DDL("ALTER TABLE search_terms ALTER COLUMN postings SET STORAGE EXTERNAL")
event.listen(search_terms, "after_create", _UNCOMPRESSED.execute_if(dialect="postgresql"))

search_term_changes = _table(
    "search_term_changes",
    Column("namespace", Text, nullable=False),
    Column("term", Text, nullable=False),
    Column("position", Int, nullable=False),
    Column("frequency", Int, nullable=False),
    Column("length", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "term", "position"),
    sqlite_with_rowid=False,
)

search_events = _table(
    "search_events",
    Column("namespace", Text, nullable=False),
    Column("position", Int, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("length", Int, nullable=False),
    Column("participants", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("type_text", Text, nullable=False),
    Column("happened_start", Real),
    Column("happened_end", Real),
    Column("chronology_key", Blob, nullable=False),
    Column("updated_key", Blob, nullable=False),
    Column("pinned", Int, nullable=False),
    Column("floor_weight", Real, nullable=False),
    Column("forced_cap", Real),
    Column("mention_count", Int, nullable=False),
    Column("last_adopted_turn", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "position"),
)

_e = search_events.c
Index("search_events_id_idx", _e.namespace, _e.event_id, unique=True)
Index("search_events_type_idx", _e.namespace, _e.event_type)
Index("search_events_happened_idx", _e.namespace, _e.happened_start, _e.happened_end, _e.position, _e.event_id)
Index("search_events_first_idx", _e.namespace, _e.chronology_key, _e.position)
Index("search_events_latest_idx", _e.namespace, _e.chronology_key.desc(), _e.position)
# Per weight class, its rows in the weight order's tie order (updatedAt descending, then position).
Index("search_events_weight_idx", _e.namespace, _e.mention_count, _e.last_adopted_turn, _e.pinned, _e.floor_weight,
      _e.forced_cap, _e.updated_key.desc(), _e.position, _e.event_id)

search_participants = _table(
    "search_participants",
    Column("namespace", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("position", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "name", "position"),
    sqlite_with_rowid=False,
)

Index("search_participants_position_idx", search_participants.c.namespace, search_participants.c.position)

SEARCH_TABLES = tuple(search_metadata.sorted_tables)
