"""SQLite schema creation and the v1–v6 → v7 upgrade (reference/stratagate-schema-v6-v7.md §1.3).

The upgrade runs on a connection whose transaction the caller opened with BEGIN IMMEDIATE, so it is one
transaction: it commits whole or not at all. Each step checks the table's columns first, so a half-upgraded
file from another tool upgrades too. Columns added by ALTER land at the end of their table, as in files the
reference migrated; the loader addresses columns by name.
"""

from __future__ import annotations

from sqlalchemy import Connection

from stratagate.storage import schema
from stratagate.storage.legacy import ThreadEnds

LAST_LIFTED_BY_DDL = (
    "last_lifted_by TEXT CHECK (last_lifted_by IS NULL OR last_lifted_by IN ('user', 'agent'))"
)



def convert_anchor_turns(connection: Connection) -> None:
    """v5 → v6: a turn anchor becomes the number of same-thread blocks sealed by that turn, at least 1 (the
    reference's correlated UPDATE, schema notes §1.1). One ordered pass: the end turns of each thread are
    sorted once and every anchor is a binary search, so 20k blocks in a few threads cost milliseconds where
    a COUNT per block over its thread grew with the square of the thread's length."""
    rows = connection.exec_driver_sql(
        "SELECT rowid, namespace, thread_id, end_turn, pointer_anchor_block_position FROM blocks"
    ).all()
    ends = ThreadEnds(((namespace, thread), end) for _rowid, namespace, thread, end, _anchor in rows)
    changed = [
        (position, rowid)
        for rowid, namespace, thread, _end, anchor in rows
        if (position := ends.position((namespace, thread), anchor)) != anchor
    ]
    if changed:
        connection.exec_driver_sql(
            "UPDATE blocks SET pointer_anchor_block_position = ? WHERE rowid = ?", changed
        )


def user_version(connection: Connection) -> int:
    return connection.exec_driver_sql("PRAGMA user_version").scalar_one()


def table_names(connection: Connection) -> list[str]:
    return list(
        connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).scalars()
    )


def columns(connection: Connection, table: str) -> list[str]:
    return [row[1] for row in connection.exec_driver_sql(f'PRAGMA table_info("{table}")')]


def create_schema(connection: Connection) -> None:
    """A new file: every v7 table and index, then `user_version = 7`."""
    schema.metadata.create_all(connection)
    connection.exec_driver_sql(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")


def upgrade(connection: Connection, from_version: int) -> None:
    """Bring a v1–v6 file to v7, in the caller's (immediate) transaction."""
    # 1. Missing tables (elements in a v1 file, model_response_history in a v4 one) get the v7 layout.
    schema.metadata.create_all(connection, checkfirst=True)

    def add_missing(table: str, column: str, ddl: str) -> None:
        if column not in columns(connection, table):
            connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {ddl}")

    # 2–4. Receipt columns of v1–v3 and the v6 per-namespace decay rate.
    if from_version == 1:
        add_missing("usage_receipts", "element_ids_json", "element_ids_json TEXT NOT NULL DEFAULT '[]'")
    add_missing("usage_receipts", "audit_json", "audit_json TEXT NOT NULL DEFAULT '{}'")
    add_missing("memory_spaces", "block_decay_lambda", "block_decay_lambda REAL NOT NULL DEFAULT 0.3")
    # 5–7. Blocks: thread ownership (v5), anchors as block positions (v6), lift source (v7).
    block_columns = columns(connection, "blocks")
    if "thread_id" not in block_columns:
        connection.exec_driver_sql("ALTER TABLE blocks ADD COLUMN thread_id TEXT")
    if "pointer_anchor_block_position" not in block_columns:
        connection.exec_driver_sql(
            "ALTER TABLE blocks RENAME COLUMN pointer_anchor_turn TO pointer_anchor_block_position"
        )
        convert_anchor_turns(connection)
    if "last_lifted_by" not in block_columns:
        connection.exec_driver_sql(f"ALTER TABLE blocks ADD COLUMN {LAST_LIFTED_BY_DDL}")
    # 8–9. Message thread ownership and the indexes over it.
    add_missing("messages", "thread_id", "thread_id TEXT")
    for table in schema.metadata.sorted_tables:
        for index in table.indexes:
            index.create(connection, checkfirst=True)
    # 10–11. Every namespace of the file, and the file itself, now say v7.
    connection.exec_driver_sql(
        f"UPDATE memory_spaces SET schema_version = {schema.SCHEMA_VERSION} "
        f"WHERE schema_version < {schema.SCHEMA_VERSION}"
    )
    connection.exec_driver_sql(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
