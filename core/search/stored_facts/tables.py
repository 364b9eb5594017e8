"""The element index's tables: creating, checking and dropping them."""

from __future__ import annotations

import icu
from sqlalchemy import Connection, delete

from stratagate.search.stored.tables import create_index_tables, index_is_current, tables_exist
from stratagate.storage import fact_search_tables as t

FACT_INDEX_FORMAT = f"1 icu{icu.ICU_VERSION} unicode{icu.UNICODE_VERSION}"
"""What the stored tokens, sort keys and tables depend on: an index written with another one is rebuilt."""


def create_tables(connection: Connection) -> None:
    """Create the tables, replacing them when an earlier format's columns or indexes differ (every namespace's
    element index is rebuilt then)."""
    create_index_tables(connection, t.fact_search_metadata, t.FACT_SEARCH_TABLES, t.search_fact_state)


def has_tables(connection: Connection) -> bool:
    return tables_exist(connection, t.search_fact_state)


def is_current(connection: Connection, namespace: str) -> bool:
    """Whether the tables hold an element index of the namespace in this format, current at its revision."""
    return index_is_current(connection, t.search_fact_state, namespace, FACT_INDEX_FORMAT) is not None


def drop_namespace(connection: Connection, namespace: str) -> None:
    for table in reversed(t.FACT_SEARCH_TABLES):
        connection.execute(delete(table).where(table.c.namespace == namespace))
