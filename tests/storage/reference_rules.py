"""What the reference StrataGate (schema 5) and its v6 successors require to open and load a file.

Read from the reference's `src/sqlite.ts` and `src/storage.ts` at 3862391 (and, for v6, schema notes §1.3):

- a writable open refuses `user_version` above its own and a read-only open anything but its own;
- `load` refuses a namespace whose `memory_spaces.schema_version` differs;
- it selects columns by name and `SELECT *`, and its saves INSERT named columns: an extra table is ignored,
  but an extra column in one of its tables must not be NOT NULL without a default, and a missing one breaks;
- it `JSON.parse`s these columns, and its snapshot check needs every event's source block and messages,
  every element's and fact's source events, and every extraction job's block to exist.

`check_loadable` asserts all of that on a file, structurally, so CI can check a curated file without Node.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

JOURNAL_TABLES = {"stratagate_curation_journal", "stratagate_curation_journal_heads"}
"""The inspector's tables the reference tolerates (it never reads them)."""

JSON_COLUMNS = {
    "blocks": ("l0_tags_json", "l2_keypoints_json"),
    "messages": ("tool_calls_json",),
    "events": ("tags_json", "quotes_json", "temporal_json"),
    "elements": ("aliases_json",),
    "element_facts": ("value_json",),
    "element_projection_jobs": ("source_event_ids_json", "element_ids_json"),
    "usage_receipts": ("event_ids_json", "element_ids_json", "audit_json"),
}


def layout(path: Path) -> dict[str, list[tuple[str, str, int, str | None]]]:
    """Every table's columns as (name, type, notnull, default), in order."""
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as connection:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {
            table: [
                (row[1], row[2], row[3], row[4])
                for row in connection.execute(f'PRAGMA table_info("{table}")')
            ]
            for table in tables
        }


def check_loadable(path: Path, version: int, reference_layout: dict[str, list]) -> None:
    """Assert that the reference of schema `version`, whose own files have `reference_layout`, loads `path`."""
    found = layout(path)
    for table, columns in reference_layout.items():
        assert found.get(table) == columns, f"{table}: columns {found.get(table)} differ from {columns}"
    extra = set(found) - set(reference_layout)
    assert extra <= JOURNAL_TABLES, f"tables the reference does not know: {sorted(extra - JOURNAL_TABLES)}"
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == version
        spaces = connection.execute("SELECT namespace, schema_version FROM memory_spaces").fetchall()
        assert spaces and all(stored == version for _namespace, stored in spaces), spaces
        for table, columns in JSON_COLUMNS.items():
            for column in columns:
                for (text,) in connection.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"):
                    json.loads(text)
        _check_references(connection)


def _check_references(connection: sqlite3.Connection) -> None:
    """The reference's `validateReferences`, over every namespace."""
    orphans = {
        "event without its source block": """
            SELECT e.id FROM events e LEFT JOIN blocks b ON b.namespace = e.namespace AND b.id = e.source_block_id
            WHERE b.id IS NULL""",
        "event source message outside the event's block": """
            SELECT s.event_id FROM event_sources s JOIN events e ON e.namespace = s.namespace AND e.id = s.event_id
            LEFT JOIN messages m ON m.namespace = s.namespace AND m.id = s.message_id
            WHERE m.block_id IS NOT e.source_block_id""",
        "element source event missing": """
            SELECT s.element_id FROM element_sources s
            LEFT JOIN events e ON e.namespace = s.namespace AND e.id = s.event_id WHERE e.id IS NULL""",
        "fact source event missing": """
            SELECT s.fact_id FROM element_fact_sources s
            LEFT JOIN events e ON e.namespace = s.namespace AND e.id = s.event_id WHERE e.id IS NULL""",
        "extraction job without its block": """
            SELECT j.block_id FROM extraction_jobs j
            LEFT JOIN blocks b ON b.namespace = j.namespace AND b.id = j.block_id WHERE b.id IS NULL""",
    }
    for problem, query in orphans.items():
        assert connection.execute(query).fetchall() == [], problem
