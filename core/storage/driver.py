"""Statements sent to the database driver as they are, for the small reads a search runs per query: building
them with SQLAlchemy Core (an expanding IN is compiled again for each call) and its per-row result processing
cost more than running them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

_BEGIN = "stratagate_deferred_begin"
_END = "stratagate_end_with_next"


def defer_begin(connection: Connection, begin: str | None) -> None:
    """Have the PostgreSQL connection's next statement (in autocommit mode) start the transaction with `begin`:
    `driver_rows` sends both in one round trip, any other statement sends it first (`begin_deferred`). None:
    no longer (the read is over)."""
    if begin is None:
        connection.info.pop(_BEGIN, None)
    else:
        connection.info[_BEGIN] = begin


def end_with_next(connection: Connection, begin_after: str | None) -> None:
    """Have the PostgreSQL connection's next `driver_rows` statement end its transaction: its COMMIT goes in
    the same round trip, and a statement after it begins another transaction with `begin_after`. None: no
    longer (what was to be the last read sent no statement)."""
    if begin_after is None:
        connection.info.pop(_END, None)
    else:
        connection.info[_END] = begin_after


def begin_deferred(connection: Connection, cursor: Any, *_args: Any) -> None:
    """SQLAlchemy's `before_cursor_execute` on PostgreSQL engines: send a deferred BEGIN first."""
    begin = connection.info.pop(_BEGIN, None)
    if begin is not None:
        cursor.connection.execute(begin, prepare=False)


def driver_rows(connection: Connection, sql: str, values: tuple | list, *, binary: bool = False,
                alone: bool = False) -> list[tuple]:
    """Rows of `sql` (with `?` marks), run by the driver's own cursor in the connection's transaction.
    `binary`: PostgreSQL sends the results in binary (a blob as its bytes, not twice as many hex digits).
    `alone`: the statement is the whole read, which sees one snapshot by itself: outside a transaction it is
    run without beginning one (no BEGIN and ROLLBACK around it)."""
    postgresql = connection.dialect.paramstyle != "qmark"
    if postgresql:
        sql = sql.replace("?", "%s")
    if not alone and not connection.in_transaction():
        connection.begin()  # so that the statements of one read see one snapshot (SQLite's BEGIN is explicit)
    driver = connection.connection.driver_connection
    cursor = driver.cursor(binary=True) if binary and postgresql else driver.cursor()  # type: ignore[union-attr]
    try:
        begin = connection.info.pop(_BEGIN, None) if postgresql else None
        begin_after = connection.info.pop(_END, None) if postgresql else None
        if begin is None and begin_after is None:
            cursor.execute(sql, tuple(values))
        else:
            with driver.pipeline():  # type: ignore[union-attr]  # one round trip for all
                if begin is not None:
                    driver.execute(begin, prepare=False)  # type: ignore[union-attr]
                cursor.execute(sql, tuple(values))
                if begin_after is not None:
                    driver.execute("COMMIT", prepare=False)  # type: ignore[union-attr]
            if begin_after is not None:
                defer_begin(connection, begin_after)
        return cursor.fetchall()
    finally:
        cursor.close()


def marks(count: int) -> str:
    return ", ".join("?" * count)


def one_of(connection: Connection, values: list | tuple) -> tuple[str, tuple]:
    """(condition, its values) testing a column against `values`, to follow the column: `IN (?, …)`, or on
    PostgreSQL `= ANY(?)` with one array, the same statement text for any number of values, which the driver
    prepares once it has run it a few times (the server then parses it once)."""
    if connection.dialect.paramstyle == "qmark":
        return f"IN ({marks(len(values))})", tuple(values)
    return "= ANY(?)", (list(values),)
