"""Statements sent to the database driver as they are, for the small reads a search runs per query: building
them with SQLAlchemy Core (an expanding IN is compiled again for each call) and its per-row result processing
cost more than running them."""

from __future__ import annotations

from sqlalchemy import Connection


def driver_rows(connection: Connection, sql: str, values: tuple | list, *, binary: bool = False) -> list[tuple]:
    """Rows of `sql` (with `?` marks), run by the driver's own cursor in the connection's transaction.
    `binary`: PostgreSQL sends the results in binary (a blob as its bytes, not twice as many hex digits)."""
    postgresql = connection.dialect.paramstyle != "qmark"
    if postgresql:
        sql = sql.replace("?", "%s")
    if not connection.in_transaction():
        connection.begin()  # so that the statements of one read see one snapshot (SQLite's BEGIN is explicit)
    driver = connection.connection.driver_connection
    cursor = driver.cursor(binary=True) if binary and postgresql else driver.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql, tuple(values))
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
