"""The element index's tables: creating, checking and dropping them."""

from __future__ import annotations

import icu
from sqlalchemy import Connection, delete, inspect, select

from stratagate.storage import fact_search_tables as t
from stratagate.storage import schema

FACT_INDEX_FORMAT = f"1 icu{icu.ICU_VERSION} unicode{icu.UNICODE_VERSION}"
"""What the stored tokens, sort keys and tables depend on: an index written with another one is rebuilt."""


def create_tables(connection: Connection) -> None:
    """Create the tables, replacing them when an earlier format's columns or indexes differ (every namespace's
    element index is rebuilt then)."""
    if has_tables(connection):
        inspector = inspect(connection)
        existing = set(inspector.get_table_names())
        if any(
            table.name not in existing
            or {column["name"] for column in inspector.get_columns(table.name)}
            != {c.name for c in table.columns}
            or {index["name"] for index in inspector.get_indexes(table.name)}
            != {i.name for i in table.indexes}
            for table in t.FACT_SEARCH_TABLES
        ):
            t.fact_search_metadata.drop_all(connection, checkfirst=True)
    t.fact_search_metadata.create_all(connection, checkfirst=True)


def has_tables(connection: Connection) -> bool:
    if connection.dialect.name == "sqlite":
        found = connection.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'search_fact_state'"
        ).scalar_one()
        return bool(found)
    return bool(
        connection.exec_driver_sql("SELECT to_regclass('search_fact_state') IS NOT NULL").scalar_one()
    )


def is_current(connection: Connection, namespace: str) -> bool:
    """Whether the tables hold an element index of the namespace in this format, current at its revision."""
    if not has_tables(connection):
        return False
    state, spaces = t.search_fact_state, schema.memory_spaces
    if connection.scalar(select(state.c.format).where(state.c.namespace == namespace)) != FACT_INDEX_FORMAT:
        return False
    found = connection.execute(
        select(state.c.revision, spaces.c.revision)
        .join_from(state, spaces, state.c.namespace == spaces.c.namespace)
        .where(state.c.namespace == namespace)
    ).first()
    return found is not None and found[0] == found[1]


def drop_namespace(connection: Connection, namespace: str) -> None:
    for table in reversed(t.FACT_SEARCH_TABLES):
        connection.execute(delete(table).where(table.c.namespace == namespace))
