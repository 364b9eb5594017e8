"""Each thread's block count, kept beside the blocks so that sealing a block does not count them.

A new block's anchor position is its thread's block count + 1, and no stored block tells that count (lifts
rewrite the anchors), so sealing counted the thread's entries in `blocks_thread_idx`: about 0.7 ms of a new
PostgreSQL server process's time for 5,600 blocks. The table keeps, per (namespace, thread), the count and the
sequence and id of the thread's last block when it was counted; a count is used only while that block is still
the thread's last. Blocks are only ever added after the highest sequence (this engine and the reference alike:
the reference never deletes a row, and its new block takes the next sequence), so a block added by a writer
that does not keep the table (the reference, an older version of this package, a bulk load) makes its
thread's count stale and the next seal counts again. A commit of this engine that deletes blocks, or writes
blocks other than a seal's new one, drops the namespace's counts, and so does replacing the namespace.

The table is created by the first seal of a writable v7 database (so a new file's schema stays the
reference's DDL until then) and never in a v5/v6 file; without it the count is walked as before."""

from __future__ import annotations

from functools import cache

from sqlalchemy import Column, Connection, Integer, MetaData, Table, Text

from stratagate.storage.driver import driver_rows
from stratagate.storage.sections import driver_sql

TABLE = "stratagate_thread_blocks"

metadata = MetaData()

thread_blocks = Table(
    TABLE,
    metadata,
    Column("namespace", Text, primary_key=True),
    Column("thread_id", Text, primary_key=True),
    Column("blocks", Integer, nullable=False),
    Column("last_sequence", Integer, nullable=False),
    Column("last_block_id", Text, nullable=False),
    sqlite_strict=True,
)


@cache
def tally_sql(postgresql: bool) -> str:
    """A named thread's kept count (NULL when none is kept for its current last block), its last block's end
    turn, and the namespace's highest sequence: `block_tally`'s answer in one statement of index seeks (no
    row when the thread has no block). Its last block is looked up once: each table reference costs a new
    server process planning time."""
    c = ' COLLATE "C"' if postgresql else ""
    return (f"SELECT (SELECT blocks FROM {TABLE} WHERE namespace = ? AND thread_id = ? "
            f"AND last_sequence = last.sequence AND last_block_id = last.id), last.end_turn, "
            f"(SELECT max(sequence) FROM blocks WHERE namespace = ?{c}) "
            f"FROM (SELECT sequence, id, end_turn FROM blocks WHERE namespace = ?{c} AND thread_id = ?{c} "
            f"ORDER BY sequence DESC LIMIT 1) AS last")


def tally(connection: Connection, namespace: str, thread_id: str) -> tuple[int, int, int] | None:
    """(the kept count, the thread's last end turn, the highest sequence), or None when no count is kept for
    the thread's last block or the thread has none."""
    sql = tally_sql(connection.dialect.name == "postgresql")
    rows = driver_rows(connection, sql, [namespace, thread_id, namespace, namespace, thread_id], alone=True)
    return (rows[0][0], rows[0][1], rows[0][2]) if rows and rows[0][0] is not None else None


def keep(connection: Connection, namespace: str, thread_id: str, blocks: int, last_sequence: int,
         last_block_id: str, *, create: bool) -> None:
    """Store the thread's count after a seal, in the seal's transaction (`create`: the table may be missing)."""
    if create:
        metadata.create_all(connection, checkfirst=True)
    sql = (f"INSERT INTO {TABLE} (namespace, thread_id, blocks, last_sequence, last_block_id) "
           "VALUES (:namespace, :thread_id, :blocks, :last_sequence, :last_block_id) "
           "ON CONFLICT (namespace, thread_id) DO UPDATE SET blocks = excluded.blocks, "
           "last_sequence = excluded.last_sequence, last_block_id = excluded.last_block_id")
    connection.exec_driver_sql(driver_sql(connection, sql), {
        "namespace": namespace, "thread_id": thread_id, "blocks": blocks, "last_sequence": last_sequence,
        "last_block_id": last_block_id})


def forget(connection: Connection, namespace: str) -> None:
    """Drop the namespace's counts (its blocks changed in a way the counts do not follow)."""
    sql = f"DELETE FROM {TABLE} WHERE namespace = :namespace"
    connection.exec_driver_sql(driver_sql(connection, sql), {"namespace": namespace})


def exists(connection: Connection) -> bool:
    if connection.dialect.name == "postgresql":
        sql = "SELECT to_regclass(?) IS NOT NULL"
    else:
        sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
    return bool(driver_rows(connection, sql, [TABLE])[0][0])
