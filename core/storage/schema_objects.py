"""Schema objects StrataGate did not create: triggers, views, and extra indexes on its tables.

A trigger runs inside every write: one `AFTER UPDATE ON memory_spaces … DELETE FROM events` loses the whole
memory at the first commit, silently. StrataGate creates no view in any schema version, only the indexes its
table definitions name, and one trigger, on PostgreSQL only, whose function does nothing but notify readers
(`revision_notify`: accepted only with exactly that function's body). So a writable open compares the
database with those and refuses to write beside anything else, naming it (a read-only open fires nothing and
is allowed).

`unexpected_objects` is the one check. It takes what is expected, so a file kept in an older schema (v5/v6,
written in its own schema) is checked against that schema's indexes: see `expected_indexes`.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, MetaData

from stratagate import journal
from stratagate.storage import fact_search_tables, revision_notify, schema, search_tables, thread_blocks

V7_METADATA = (schema.metadata, schema.postgres_metadata, journal.metadata, search_tables.search_metadata,
               fact_search_tables.fact_search_metadata, thread_blocks.metadata)
"""Every table a v7 database may hold, with the indexes StrataGate creates on them."""


def expected_indexes(metadatas: Iterable[MetaData] = V7_METADATA) -> tuple[set[str], set[str]]:
    """(our table names, the index names our table definitions create) for these metadatas."""
    tables = {table.name for metadata in metadatas for table in metadata.tables.values()}
    indexes = {index.name for metadata in metadatas for table in metadata.tables.values() for index in table.indexes}
    return tables, indexes


def unexpected_objects(
    connection: Connection, tables: set[str] | None = None, indexes: set[str] | None = None
) -> list[str]:
    """Every trigger and view in the database, and every index on one of `tables` that is not in `indexes`
    (indexes that back a primary key or unique constraint are the database's own and never listed).
    Defaults: the v7 schema. Each item reads like "trigger wipe (on memory_spaces)"."""
    if tables is None or indexes is None:
        tables, indexes = expected_indexes()
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(
            "SELECT type, name, tbl_name FROM sqlite_master "
            "WHERE type IN ('trigger', 'view') OR (type = 'index' AND sql IS NOT NULL) ORDER BY type, name"
        ).all()
    else:
        rows = connection.exec_driver_sql(POSTGRESQL_OBJECTS).all()
    found = []
    for kind, name, table in rows:
        if kind == "index" and (table not in tables or name in indexes):
            continue
        if (kind, name, table) == ("trigger", revision_notify.TRIGGER, "memory_spaces") and \
                connection.dialect.name == "postgresql" and revision_notify.installed(connection):
            continue  # this package's own: it only notifies readers of a commit
        found.append(f"{kind} {name}" if kind == "view" else f"{kind} {name} (on {table})")
    return found


POSTGRESQL_OBJECTS = """
SELECT 'trigger', t.tgname, c.relname FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE NOT t.tgisinternal AND n.nspname = current_schema()
UNION ALL
SELECT 'view', v.viewname, v.viewname FROM pg_views v WHERE v.schemaname = current_schema()
UNION ALL
SELECT 'index', i.relname, c.relname FROM pg_index x
  JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema()
    AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)
ORDER BY 1, 2
"""


def refusal(found: list[str]) -> str:
    """The StorageOpenError reason for a writable open of a database holding `found`."""
    return (
        f"holds schema objects StrataGate did not create: {', '.join(found)}. A trigger runs inside every "
        "write and can destroy data; remove them (after checking what they do) or open the file read-only"
    )
