"""Build StrataGate SQLite files of older (v1, v4, v5, v6) and newer (v8–v12) schemas, as the specs describe.

Older layouts are the v7 DDL with the later changes taken out (reference spec §8.5 history, schema notes
§1); newer ones add the tables and columns of schema notes §5 to a v7 file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from stratagate.storage import schema

THREADED_V5_BLOCKS = [  # the verified v5 → v6 conversion case: positions 1, 1, 2
    {"thread_id": "thread-a", "end_turn": 6, "anchor": 7},
    {"thread_id": "thread-b", "end_turn": 6, "anchor": 6},
    {"thread_id": "thread-a", "end_turn": 12, "anchor": 12},
]
V2_TABLES = ("elements", "element_sources", "element_facts", "element_fact_sources", "element_projection_jobs")
V4_LATER_TABLES = ("model_response_history",)


def _ddl(table_name: str, version: int) -> str:
    """The CREATE TABLE text of a table as a file of `version` (1–6) had it."""
    text = str(CreateTable(schema.metadata.tables[table_name]).compile(dialect=sqlite.dialect()))
    dropped = {"last_lifted_by"}
    if version < 6:
        dropped.add("block_decay_lambda")
        text = text.replace("pointer_anchor_block_position", "pointer_anchor_turn")
    if version < 5:
        dropped.add("thread_id")
    if version < 4:
        dropped.add("audit_json")
    if version < 2:
        dropped.add("element_ids_json")
    lines = [line for line in text.splitlines() if line.strip().split(" ")[0] not in dropped]
    return "\n".join(lines)


def _tables(version: int) -> list[str]:
    names = [table.name for table in schema.metadata.sorted_tables]
    if version < 2:
        names = [n for n in names if n not in V2_TABLES]
    if version < 3:
        names.remove("ingestion_receipts")
    if version < 5:
        names = [n for n in names if n not in V4_LATER_TABLES]
    return names


def dump(path: Path) -> tuple[int, list[str]]:
    """user_version and the SQL text of every table and row: what a backup must preserve."""
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute("PRAGMA user_version").fetchone()[0], list(connection.iterdump())
    finally:
        connection.close()


def _insert(connection: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    connection.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))


def build_legacy_file(path: Path, version: int, blocks: list[dict[str, Any]] | None = None) -> None:
    """A file at `version` (1–6) with one namespace 'legacy': blocks (default: one unthreaded block), one message
    per block, one event citing it and a usage receipt. `blocks` rows give thread_id, end_turn, anchor."""
    connection = sqlite3.connect(path)
    for name in _tables(version):
        connection.execute(_ddl(name, version))
    if version >= 5:
        for table in (schema.messages, schema.blocks):
            for index in table.indexes:
                if index.name != "messages_container_idx":
                    connection.execute(str(CreateIndex(index).compile(dialect=sqlite.dialect())))
    space = {
        "namespace": "legacy", "schema_version": version, "revision": 4, "current_turn": 12, "block_turn_size": 6,
        "created_at": "2026-01-01T08:00:00.000+08:00", "updated_at": "2026-01-02T08:00:00.000+08:00",
    }
    if version >= 6:
        space["block_decay_lambda"] = 0.25
    _insert(connection, "memory_spaces", space)
    for n, block in enumerate(blocks or [{"thread_id": None, "end_turn": 6, "anchor": 12}], start=1):
        row = {
            "namespace": "legacy", "id": f"blk_{n}", "sequence": n, "start_turn": block["end_turn"] - 5,
            "end_turn": block["end_turn"], "created_at": "2026-01-01T09:00:00.000+08:00", "should_extract": 1,
            "l0_title": f"Block {n}", "l0_tags_json": '["x"]', "l1_summary": "s", "l2_keypoints_json": '["k"]',
            "l3_condensed": "c", "l4_readable": "r", "pointer_current_level": 5, "pointer_anchor_level": 5,
            "pointer_anchor_block_position" if version >= 6 else "pointer_anchor_turn": block["anchor"],
            "last_lifted_at": None,
        }
        if version >= 5:
            row["thread_id"] = block["thread_id"]
        _insert(connection, "blocks", row)
        message = {
            "namespace": "legacy", "id": f"msg_{n}", "block_id": f"blk_{n}", "position": 0, "role": "user",
            "content": f"hello {n}", "created_at": "2026-01-01T09:00:00.000+08:00", "tool_calls_json": None,
        }
        _insert(connection, "messages", message)
    event = {
        "namespace": "legacy", "id": "evt_1", "position": 0, "title": "Kickoff", "summary": "s", "narrative": "n",
        "tags_json": "[]", "quotes_json": "[]", "source_block_id": "blk_1",
        "temporal_json": '{"mentionedAt":"2026-01-01T09:00:00.000+08:00"}', "scope": "user",
        "criticality": "routine", "confidence": 0.5, "status": "active", "superseded_by": None, "mention_count": 1,
        "last_adopted_turn": 6, "last_retrieved_at": None, "pinned": 0, "floor_weight": 0.0, "forced_cap": None,
        "created_at": "2026-01-01T09:00:00.000+08:00", "updated_at": "2026-01-01T09:00:00.000+08:00",
    }
    _insert(connection, "events", event)
    _insert(connection, "event_sources", {"namespace": "legacy", "event_id": "evt_1", "message_id": "msg_1", "position": 0})
    receipt = {"namespace": "legacy", "receipt_id": "answer:1", "event_ids_json": '["evt_1"]',
               "created_at": "2026-01-02T09:00:00.000+08:00"}
    if version >= 2:
        receipt["element_ids_json"] = "[]"
    _insert(connection, "usage_receipts", receipt)
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()


NEWER_SCHEMA_STEPS = {
    8: [
        "CREATE TABLE graph_state (namespace TEXT PRIMARY KEY, nodes_json TEXT NOT NULL DEFAULT '[]', "
        "edges_json TEXT NOT NULL DEFAULT '[]', jobs_json TEXT NOT NULL DEFAULT '[]', updated_at TEXT NOT NULL, "
        "FOREIGN KEY (namespace) REFERENCES memory_spaces(namespace) ON DELETE CASCADE) STRICT",
    ],
    9: [
        "ALTER TABLE blocks ADD COLUMN processing_status TEXT NOT NULL DEFAULT 'ready' "
        "CHECK (processing_status IN ('pending','ready'))",
        "ALTER TABLE extraction_jobs ADD COLUMN next_retry_at TEXT",
        "CREATE TABLE block_summary_jobs (namespace TEXT NOT NULL, block_id TEXT NOT NULL, status TEXT NOT NULL, "
        "attempts INTEGER NOT NULL, last_error TEXT, next_retry_at TEXT, updated_at TEXT NOT NULL, "
        "PRIMARY KEY (namespace, block_id)) STRICT",
    ],
    10: [
        "CREATE TABLE external_memory_import_jobs (namespace TEXT NOT NULL, id TEXT NOT NULL, payload_json TEXT "
        "NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (namespace, id)) STRICT",
    ],
    11: [
        "ALTER TABLE memory_spaces ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default'",
        "ALTER TABLE messages ADD COLUMN agent_id TEXT",
        "ALTER TABLE events ADD COLUMN last_verified_at TEXT",
    ],
    12: [
        "ALTER TABLE events ADD COLUMN formed_turn INTEGER",
        "CREATE TABLE memory_topic_state (namespace TEXT PRIMARY KEY, state_json TEXT NOT NULL, updated_at TEXT "
        "NOT NULL) STRICT",
        "CREATE TABLE persistent_profile (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
    ],
}


def make_newer(path: Path, version: int, namespace: str) -> None:
    """Turn a v7 file into a file of `version` (8–12); from v9 on, one extra block is still 'pending'."""
    connection = sqlite3.connect(path)
    for step in range(8, version + 1):
        for statement in NEWER_SCHEMA_STEPS[step]:
            connection.execute(statement)
    if version >= 9:
        connection.execute(
            "INSERT INTO blocks (namespace, id, sequence, start_turn, end_turn, created_at, should_extract, l0_title, "
            "l0_tags_json, l1_summary, l2_keypoints_json, l3_condensed, l4_readable, pointer_current_level, "
            "pointer_anchor_level, pointer_anchor_block_position, processing_status) VALUES (?, 'blk_pending', 99, "
            "41, 52, '2026-03-22T00:00:00.000+08:00', 1, '', '[]', '', '[]', '', '', 5, 5, 4, 'pending')",
            [namespace],
        )
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()
