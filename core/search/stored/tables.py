"""The stored index's tables: creating, checking and dropping them, and the SQL helpers its modules share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import icu
from sqlalchemy import Connection, Index, MetaData, Table, delete, inspect, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from stratagate.arrays import np
from stratagate.storage import schema
from stratagate.storage import search_tables as t
from stratagate.storage.driver import driver_rows
from stratagate.storage.driver import marks as marks  # the search modules take it from here too

INDEX_FORMAT = f"6 icu{icu.ICU_VERSION} unicode{icu.UNICODE_VERSION}"
"""What the stored tokens, sort keys and tables depend on: an index written with another one is rebuilt."""
FORMAT_WITHOUT_NAME_TERMS = f"5 icu{icu.ICU_VERSION} unicode{icu.UNICODE_VERSION}"
"""The format before each participant's positions were also kept as a term (`documents.participant_term`):
such an index is read as it is (its participants' positions come from `search_participants`) and gets the
terms at its next writable open (`writes.add_name_terms`); a version that knows only this format rebuilds
an index of the new one instead of leaving its name terms behind."""
CURRENT_FORMATS = (INDEX_FORMAT, FORMAT_WITHOUT_NAME_TERMS)
CHUNK = 500

Connect = Callable[[], AbstractContextManager[Connection]]
Progress = Callable[[int, int], None]
"""`progress(done, total)` during a build."""


def chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def upsert(connection: Connection, table: Any, rows: list[dict[str, Any]], set_: Callable[[Any], dict]) -> None:
    if not rows:
        return
    if connection.dialect.name == "sqlite":
        statement = sqlite_insert(table)
    else:  # imported here: an SQLite reader never loads the PostgreSQL dialect (see storage.sections)
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        statement = postgresql_insert(table)
    keys = [column.name for column in table.primary_key.columns]
    connection.execute(statement.on_conflict_do_update(index_elements=keys, set_=set_(statement.excluded)), rows)


def replace(connection: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
    keys = {column.name for column in table.primary_key.columns}
    upsert(connection, table, rows, lambda excluded: {c.name: excluded[c.name] for c in table.columns
                                                      if c.name not in keys})


def position_set(connection: Connection, sql: str, values: tuple | list) -> np.ndarray:
    """The distinct `position` values of a SELECT (with `?` marks), ascending. The database joins them into
    one text, parsed here at once: thousands of one-number rows cost more to fetch than to select."""
    sqlite = connection.dialect.name == "sqlite"
    join = "group_concat(position)" if sqlite else "string_agg(position::text, ',')"
    text = driver_rows(connection, f"SELECT {join} FROM ({sql}) AS selected", values)[0][0]
    if not text:
        return np.zeros(0, dtype=np.int64)
    found = np.fromstring(text, dtype=np.int64, sep=",")
    if np.all(found[1:] > found[:-1]):  # as an index read them (one participant's): already a sorted set
        return found
    found.sort()
    return found[np.concatenate(([True], found[1:] != found[:-1]))]


def ordered_positions(connection: Connection, sql: str, values: tuple | list) -> np.ndarray:
    """The `position` column of an ordered SELECT (with `?` marks), in its order. SQLite joins them into one
    text (its aggregate reads an ordered subquery in order, as `SectionStore.packed_keys` relies on too)."""
    if connection.dialect.name != "sqlite":
        return np.array([row[0] for row in driver_rows(connection, sql, values)], dtype=np.int64)
    text = driver_rows(connection, f"SELECT group_concat(position) FROM ({sql}) AS selected", values)[0][0]
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)


def create_tables(connection: Connection) -> None:
    """Create the tables, replacing them when an earlier format's columns or indexes differ (every namespace's
    index is rebuilt then)."""
    create_index_tables(connection, t.search_metadata, t.SEARCH_TABLES, t.search_index_state)


def create_index_tables(connection: Connection, metadata: MetaData, tables: tuple[Table, ...],
                        state: Table) -> None:
    """`create_tables` for one index's tables (`state` is the table that says it is there)."""
    if tables_exist(connection, state):
        inspector = inspect(connection)
        existing = set(inspector.get_table_names())
        if any(table.name not in existing
               or {column["name"] for column in inspector.get_columns(table.name)} != {c.name for c in table.columns}
               or {(index["name"], tuple(index["column_names"])) for index in inspector.get_indexes(table.name)}
               != {(index.name, _indexed_columns(index)) for index in table.indexes}
               for table in tables):
            metadata.drop_all(connection, checkfirst=True)
    metadata.create_all(connection, checkfirst=True)


def _indexed_columns(index: Index) -> tuple[str, ...]:
    """The names of the columns an index lists (a descending one is a `.desc()` of its column)."""
    return tuple(getattr(expression, "name", None) or expression.element.name for expression in index.expressions)


def has_tables(connection: Connection) -> bool:
    return tables_exist(connection, t.search_index_state)


def tables_exist(connection: Connection, state: Table) -> bool:
    """Whether an index's `state` table (and so its other tables) is in the database."""
    if connection.dialect.name == "sqlite":
        found = connection.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (state.name,)).scalar_one()
        return bool(found)
    return bool(connection.exec_driver_sql("SELECT to_regclass(%s) IS NOT NULL", (state.name,)).scalar_one())


def index_exists(connection: Connection, table: str, name: str) -> bool:
    """Whether the database has the index `name` on `table` (on PostgreSQL: a relation of that name, which
    only an index can be)."""
    if connection.dialect.name == "sqlite":
        return bool(driver_rows(connection, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                                            "AND tbl_name = ? AND name = ?", (table, name))[0][0])
    return bool(driver_rows(connection, "SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])


def is_current(connection: Connection, namespace: str) -> bool:
    """Whether the tables hold an index of the namespace in a format this version reads (`CURRENT_FORMATS`),
    current at its stored revision."""
    return current_format(connection, namespace) is not None


def current_format(connection: Connection, namespace: str) -> str | None:
    """The format of the namespace's index when `is_current`, else None."""
    return index_is_current(connection, t.search_index_state, namespace, *CURRENT_FORMATS)


def index_is_current(connection: Connection, state: Table, namespace: str, *index_formats: str) -> str | None:
    """`current_format` for the index whose state table is `state`, in one of `index_formats`."""
    if not tables_exist(connection, state):
        return None
    spaces = schema.memory_spaces
    # The format first: an index of an earlier format may lack the columns read below.
    found_format = connection.scalar(select(state.c.format).where(state.c.namespace == namespace))
    if found_format not in index_formats:
        return None
    found = connection.execute(select(state.c.revision, spaces.c.revision)
                               .join_from(state, spaces, state.c.namespace == spaces.c.namespace)
                               .where(state.c.namespace == namespace)).first()
    return found_format if found is not None and found[0] == found[1] else None


def stored_revision(connection: Connection, namespace: str) -> int:
    spaces = schema.memory_spaces
    return connection.scalar(select(spaces.c.revision).where(spaces.c.namespace == namespace)) or 0


def drop_namespace(connection: Connection, namespace: str) -> None:
    for table in reversed(t.SEARCH_TABLES):
        connection.execute(delete(table).where(table.c.namespace == namespace))
