"""Statements sent to the database driver as they are, for the small reads a search runs per query: building
them with SQLAlchemy Core (an expanding IN is compiled again for each call) and its per-row result processing
cost more than running them."""

from __future__ import annotations

from sqlalchemy import Connection


def driver_rows(connection: Connection, sql: str, values: tuple | list) -> list[tuple]:
    """Rows of `sql` (with `?` marks), run by the driver's own cursor in the connection's transaction."""
    if connection.dialect.paramstyle != "qmark":
        sql = sql.replace("?", "%s")
    if not connection.in_transaction():
        connection.begin()  # so that the statements of one read see one snapshot (SQLite's BEGIN is explicit)
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql, tuple(values))
        return cursor.fetchall()
    finally:
        cursor.close()


def marks(count: int) -> str:
    return ", ".join("?" * count)
