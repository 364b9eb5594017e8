"""The schema v7 tables as SQLAlchemy Table objects, shared by SQLite and PostgreSQL.

Column names, order, nullability and keys follow the consolidated v7 DDL (reference/stratagate-schema-v6-v7.md
§2). Per dialect:

- SQLite: every table is STRICT; the schema version lives in `PRAGMA user_version`.
- PostgreSQL: REAL becomes DOUBLE PRECISION (PostgreSQL's REAL is 4 bytes and would round confidences),
  INTEGER becomes BIGINT, and TEXT uses the "C" collation so that ids sort by code point as in SQLite. There
  is no `user_version`: the version lives in the `stratagate_metadata` table (key `schema_version`).

JSON columns stay TEXT on both, so a snapshot round-trips byte for byte between them.

Indexes beyond the reference DDL: `events_position_idx (namespace, position, id)` covers listing 100k
event ids in section order (no sort, no table lookups) and finding the last position when appending;
`element_facts_element_idx (namespace, element_id, position)` finds one element's facts, and the position after
its last one when a fact is appended, without reading every fact of the namespace. A partial one,
`events_inactive_idx (namespace, position, id, status) WHERE status != 'active'`, holds only the events that
are not active, so live follow's census lists them without reading a million active ones; a v7 file written
before it gets it at the first census of a writable open (`SqlBackend.key_statuses`).
"""

from __future__ import annotations

from sqlalchemy import (
    REAL,
    TEXT,
    BigInteger,
    CheckConstraint,
    Column,
    Double,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    UniqueConstraint,
    literal_column,
)

SCHEMA_VERSION = 7
"""The version this package writes."""
NEWEST_READABLE_VERSION = 12
"""Files up to this version open read-only (their extra tables and columns are ignored)."""

Text = TEXT().with_variant(TEXT(collation="C"), "postgresql")
Int = Integer().with_variant(BigInteger(), "postgresql")
Real = REAL().with_variant(Double(), "postgresql")

metadata = MetaData()


def _table(name: str, *items) -> Table:
    return Table(name, metadata, *items, sqlite_strict=True)


def _namespace() -> Column:
    return Column("namespace", Text, nullable=False)


def _space_cascade() -> ForeignKeyConstraint:
    return ForeignKeyConstraint(["namespace"], ["memory_spaces.namespace"], ondelete="CASCADE")


memory_spaces = _table(
    "memory_spaces",
    Column("namespace", Text, primary_key=True),
    Column("schema_version", Int, nullable=False),
    Column("revision", Int, nullable=False),
    Column("current_turn", Int, nullable=False),
    Column("block_turn_size", Int, nullable=False),
    Column("block_decay_lambda", Real, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
)

blocks = _table(
    "blocks",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("thread_id", Text),
    Column("sequence", Int, nullable=False),
    Column("start_turn", Int, nullable=False),
    Column("end_turn", Int, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("should_extract", Int, nullable=False),
    Column("l0_title", Text, nullable=False),
    Column("l0_tags_json", Text, nullable=False),
    Column("l1_summary", Text, nullable=False),
    Column("l2_keypoints_json", Text, nullable=False),
    Column("l3_condensed", Text, nullable=False),
    Column("l4_readable", Text, nullable=False),
    Column("pointer_current_level", Int, nullable=False),
    Column("pointer_anchor_level", Int, nullable=False),
    Column("pointer_anchor_block_position", Int, nullable=False),
    Column("last_lifted_at", Text),
    Column(
        "last_lifted_by",
        Text,
        CheckConstraint("last_lifted_by IS NULL OR last_lifted_by IN ('user', 'agent')"),
    ),
    PrimaryKeyConstraint("namespace", "id"),
    UniqueConstraint("namespace", "sequence"),
    _space_cascade(),
)

messages = _table(
    "messages",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("block_id", Text),
    Column("thread_id", Text),
    Column("position", Int, nullable=False),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("tool_calls_json", Text),
    PrimaryKeyConstraint("namespace", "id"),
    _space_cascade(),
    ForeignKeyConstraint(["namespace", "block_id"], ["blocks.namespace", "blocks.id"], ondelete="CASCADE"),
)

events = _table(
    "events",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("position", Int, nullable=False),
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("narrative", Text, nullable=False),
    Column("tags_json", Text, nullable=False),
    Column("quotes_json", Text, nullable=False),
    Column("source_block_id", Text, nullable=False),
    Column("temporal_json", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("criticality", Text, nullable=False),
    Column("confidence", Real, nullable=False),
    Column("status", Text, nullable=False),
    Column("superseded_by", Text),
    Column("mention_count", Int, nullable=False),
    Column("last_adopted_turn", Int, nullable=False),
    Column("last_retrieved_at", Text),
    Column("pinned", Int, nullable=False),
    Column("floor_weight", Real, nullable=False),
    Column("forced_cap", Real),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "id"),
    ForeignKeyConstraint(["namespace", "source_block_id"], ["blocks.namespace", "blocks.id"]),
)

event_sources = _table(
    "event_sources",
    _namespace(),
    Column("event_id", Text, nullable=False),
    Column("message_id", Text, nullable=False),
    Column("position", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "event_id", "message_id"),
    ForeignKeyConstraint(["namespace", "event_id"], ["events.namespace", "events.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["namespace", "message_id"], ["messages.namespace", "messages.id"]),
)

elements = _table(
    "elements",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("position", Int, nullable=False),
    Column("name", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("aliases_json", Text, nullable=False),
    Column("current_state", Text, nullable=False),
    Column("mention_count", Int, nullable=False),
    Column("last_adopted_turn", Int, nullable=False),
    Column("last_retrieved_at", Text),
    Column("pinned", Int, nullable=False),
    Column("floor_weight", Real, nullable=False),
    Column("forced_cap", Real),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "id"),
    _space_cascade(),
)

element_sources = _table(
    "element_sources",
    _namespace(),
    Column("element_id", Text, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("position", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "element_id", "event_id"),
    ForeignKeyConstraint(
        ["namespace", "element_id"], ["elements.namespace", "elements.id"], ondelete="CASCADE"
    ),
    ForeignKeyConstraint(["namespace", "event_id"], ["events.namespace", "events.id"]),
)

element_facts = _table(
    "element_facts",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("element_id", Text, nullable=False),
    Column("position", Int, nullable=False),
    Column("key", Text, nullable=False),
    Column("mode", Text, nullable=False),
    Column("value_json", Text, nullable=False),
    Column("valid_from", Text),
    Column("valid_to", Text),
    Column("confidence", Real),
    Column("status", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "id"),
    ForeignKeyConstraint(
        ["namespace", "element_id"], ["elements.namespace", "elements.id"], ondelete="CASCADE"
    ),
)

element_fact_sources = _table(
    "element_fact_sources",
    _namespace(),
    Column("fact_id", Text, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("position", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "fact_id", "event_id"),
    ForeignKeyConstraint(
        ["namespace", "fact_id"], ["element_facts.namespace", "element_facts.id"], ondelete="CASCADE"
    ),
    ForeignKeyConstraint(["namespace", "event_id"], ["events.namespace", "events.id"]),
)

extraction_jobs = _table(
    "extraction_jobs",
    _namespace(),
    Column("block_id", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempts", Int, nullable=False),
    Column("last_error", Text),
    Column("updated_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "block_id"),
    ForeignKeyConstraint(["namespace", "block_id"], ["blocks.namespace", "blocks.id"], ondelete="CASCADE"),
)

model_response_history = _table(
    "model_response_history",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("response", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "id"),
    _space_cascade(),
)

element_projection_jobs = _table(
    "element_projection_jobs",
    _namespace(),
    Column("id", Text, nullable=False),
    Column("source_event_ids_json", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempts", Int, nullable=False),
    Column("element_ids_json", Text, nullable=False),
    Column("reason", Text),
    Column("last_error", Text),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "id"),
    _space_cascade(),
)

usage_receipts = _table(
    "usage_receipts",
    _namespace(),
    Column("receipt_id", Text, nullable=False),
    Column("event_ids_json", Text, nullable=False),
    Column("element_ids_json", Text, nullable=False),
    Column("audit_json", Text, nullable=False, server_default="{}"),
    Column("created_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "receipt_id"),
    _space_cascade(),
)

ingestion_receipts = _table(
    "ingestion_receipts",
    _namespace(),
    Column("receipt_id", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "receipt_id"),
    _space_cascade(),
)

Index("messages_container_idx", messages.c.namespace, messages.c.block_id, messages.c.position)
Index("messages_thread_idx", messages.c.namespace, messages.c.thread_id, messages.c.position)
Index("blocks_thread_idx", blocks.c.namespace, blocks.c.thread_id, blocks.c.sequence)
Index("events_position_idx", events.c.namespace, events.c.position, events.c.id)
Index("element_facts_element_idx", element_facts.c.namespace, element_facts.c.element_id, element_facts.c.position)
EVENT_NOT_ACTIVE = events.c.status != literal_column("'active'")
"""The partial index's condition, written as a query must write it for SQLite to use that index (a literal,
not a parameter)."""
events_inactive_idx = Index(
    "events_inactive_idx", events.c.namespace, events.c.position, events.c.id, events.c.status,
    sqlite_where=EVENT_NOT_ACTIVE,
)


def use_postgresql() -> None:
    """Give the partial index its condition on PostgreSQL too; called when a PostgreSQL database is opened.
    Naming a PostgreSQL option here at import would load that dialect (asyncio and every driver's module)
    into every process, SQLite ones included."""
    events_inactive_idx.dialect_options["postgresql"]["where"] = EVENT_NOT_ACTIVE

postgres_metadata = MetaData()
stratagate_metadata = Table(
    "stratagate_metadata",
    postgres_metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
"""PostgreSQL only: holds `schema_version` (SQLite keeps it in `PRAGMA user_version`)."""
