"""Whole records appended to a namespace being created (imports and copies), as plain driver-level inserts.

A namespace written by `SqlBackend.start_namespace` starts empty, and its records are unique (snapshots are
validated, copies come from primary keys), so the large sections need none of a commit's work per record
(no upsert, no delete of replaced child rows, no lookup of existing positions): each chunk is one
`executemany` of a plain INSERT on SQLite and one `COPY … FROM STDIN` on PostgreSQL (the one place rows do not
go through SQLAlchemy's statements: per-row statements, even pipelined, cost a round of parsing and planning
each). Positions continue after the section's last one, exactly as `SectionStore.write` numbers new records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, Table, column, func, select, table
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from stratagate.storage import records as rec
from stratagate.storage import schema as s
from stratagate.storage.backend import Record

Row = dict[str, Any]


def append(connection: Connection, namespace: str, section: str, records: list[Record]) -> bool:
    """Insert `records` (new to the namespace) into `section`; False when the section is not written here
    (the small ones go through `SectionStore.write`, which also trims the model response history)."""
    writer = _APPENDERS.get(section)
    if writer is None:
        return False
    writer(connection, namespace, records)
    return True


def _append_blocks(connection: Connection, namespace: str, blocks: list[Record]) -> None:
    insert_rows(connection, s.blocks, [rec.block_row(namespace, block) for block in blocks])
    insert_rows(connection, s.messages, [
        rec.message_row(namespace, message, block["id"], position)
        for block in blocks
        for position, message in enumerate(block["l5Raw"])
    ])


def _append_open_tail(connection: Connection, namespace: str, messages: list[Record]) -> None:
    m = s.messages
    first = _next_position(connection, m, namespace, m.c.block_id.is_(None))
    insert_rows(connection, m, [
        rec.message_row(namespace, message, None, first + offset) for offset, message in enumerate(messages)
    ])


def _append_events(connection: Connection, namespace: str, events: list[Record]) -> None:
    first = _next_position(connection, s.events, namespace)
    insert_rows(connection, s.events, [
        rec.event_row(namespace, event, first + offset) for offset, event in enumerate(events)
    ])
    insert_rows(connection, s.event_sources, [
        {"namespace": namespace, "event_id": event["id"], "message_id": message_id, "position": position}
        for event in events
        for position, message_id in enumerate(event["sourceMessageIds"])
    ])


_APPENDERS: dict[str, Callable[[Connection, str, list[Record]], None]] = {
    "blocks": _append_blocks,
    "openTail": _append_open_tail,
    "events": _append_events,
}


def _next_position(connection: Connection, table: Table, namespace: str, *scope: ColumnElement[bool]) -> int:
    last = connection.scalar(select(func.max(table.c.position)).where(table.c.namespace == namespace, *scope))
    return 0 if last is None else last + 1


def insert_rows(connection: Connection, target: Any, rows: Sequence[Row]) -> None:
    """Plain INSERT of `rows` (every column of `target`, a table) in the caller's transaction, through the
    driver."""
    if not rows:
        return
    names = [name.name for name in target.columns]
    values: Iterable[tuple[Any, ...]] = (tuple(row[name] for name in names) for row in rows)
    columns = ", ".join(names)
    if connection.dialect.name != "postgresql":
        marks = ", ".join("?" * len(names))
        connection.exec_driver_sql(f"INSERT INTO {target.name} ({columns}) VALUES ({marks})", list(values))
        return
    statement = f"COPY {target.name} ({columns}) FROM STDIN"
    driver = connection.connection.driver_connection
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for value in values:
                copy.write_row(value)
    except connection.dialect.loaded_dbapi.Error as error:
        # The same exception classes as a statement through SQLAlchemy (an IntegrityError for a broken key).
        raise DBAPIError.instance(statement, None, error, connection.dialect.loaded_dbapi.Error) from error


def upsert_rows(connection: Connection, target: Table, rows: Sequence[Row], set_: Callable[[Any], dict]) -> None:
    """INSERT … ON CONFLICT (primary key) DO UPDATE SET `set_(excluded)` for many rows (unique keys). On
    PostgreSQL the rows are copied into a temporary table and merged by one statement."""
    if not rows:
        return
    keys = [key.name for key in target.primary_key.columns]
    if connection.dialect.name != "postgresql":
        statement = sqlite_insert(target)
        connection.execute(statement.on_conflict_do_update(index_elements=keys, set_=set_(statement.excluded)), rows)
        return
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert  # only where PostgreSQL is used

    names = [name.name for name in target.columns]
    stage = table(f"{target.name}_stage", *(column(name) for name in names))
    connection.exec_driver_sql(f"CREATE TEMPORARY TABLE {stage.name} (LIKE {target.name}) ON COMMIT DROP")
    insert_rows(connection, stage, rows)
    statement = postgresql_insert(target).from_select(names, select(*stage.c))
    connection.execute(statement.on_conflict_do_update(index_elements=keys, set_=set_(statement.excluded)))
    connection.exec_driver_sql(f"DROP TABLE {stage.name}")
