"""Block spans and thread ids read with SQL: what the app paints a timeline from, without any block's text.

A span record is a block's identity, place and decay pointer plus how many raw messages it holds:
`{id, threadId?, sequence, startTurn, endTurn, l0Title, pointerCurrentLevel, pointerAnchorLevel,
pointerAnchorBlockPosition, messageCount}`, in sequence order. Its L1–L5 texts are never read. A v5/v6 file
kept in its own schema gives v7 anchor positions (`LegacySchema.block_rows_read`), like a full block read.
Called only by `SqlBackend.block_spans` / `SqlBackend.thread_ids`.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Connection, Table, func, literal_column, select

from stratagate.storage import schema as s
from stratagate.storage.backend import Record
from stratagate.storage.sections import SectionStore

SPAN_COLUMNS = ("id", "thread_id", "sequence", "start_turn", "end_turn", "l0_title", "pointer_current_level",
                "pointer_anchor_level")


def block_spans(connection: Connection, sections: SectionStore, namespace: str, thread_id: str | None) -> list[Record]:
    """Spans of every block (`thread_id` None) or of one thread's blocks, in sequence order."""
    legacy = sections.legacy
    b, m = (s.blocks if legacy is None else legacy.blocks), s.messages
    anchor = "pointer_anchor_block_position" if legacy is None or legacy.version >= 6 else "pointer_anchor_turn"
    counts = (
        select(m.c.block_id, func.count().label("message_count"))
        .where(m.c.namespace == namespace, m.c.block_id.is_not(None))
        .group_by(m.c.block_id)
        .subquery()
    )
    clauses = _listed(b, sections, namespace)
    if thread_id is not None:
        clauses.append(b.c.thread_id == thread_id)
    statement = (
        select(*(b.c[name] for name in SPAN_COLUMNS), b.c[anchor],
               func.coalesce(counts.c.message_count, 0).label("message_count"))
        .select_from(b.outerjoin(counts, counts.c.block_id == b.c.id))
        .where(*clauses)
        .order_by(b.c.sequence)
    )
    if legacy is None:
        # Plain tuples: at 16k blocks, mappings and a dict per row cost more than the query itself.
        return [_span_record(*row) for row in connection.execute(statement)]
    rows = legacy.block_rows_read(connection, namespace, [dict(row) for row in connection.execute(statement).mappings()])
    return [_span_record(*(row[name] for name in (*SPAN_COLUMNS, "pointer_anchor_block_position", "message_count")))
            for row in rows]


def _listed(blocks: Table, sections: SectionStore, namespace: str) -> list[ColumnElement[bool]]:
    """The namespace's blocks as `SectionStore` lists them (a v9+ file's pending blocks hidden)."""
    clauses = [blocks.c.namespace == namespace]
    if sections.hide_pending_blocks:
        clauses.append(literal_column("processing_status") == "ready")
    return clauses


def _span_record(block_id: str, thread_id: str | None, sequence: int, start_turn: int, end_turn: int, title: str,
                 current_level: int, anchor_level: int, anchor_position: int, message_count: int) -> Record:
    """A span record from the values in `SPAN_COLUMNS` order, then the anchor position and message count."""
    record: Record = {"id": block_id}
    if thread_id:
        record["threadId"] = thread_id
    record["sequence"] = sequence
    record["startTurn"] = start_turn
    record["endTurn"] = end_turn
    record["l0Title"] = title
    record["pointerCurrentLevel"] = current_level
    record["pointerAnchorLevel"] = anchor_level
    record["pointerAnchorBlockPosition"] = anchor_position
    record["messageCount"] = message_count
    return record


def thread_ids(connection: Connection, sections: SectionStore, namespace: str) -> list[str | None]:
    """Threads of the namespace's blocks (by their first block), then those only the open tail has (by
    first message); None stands for unthreaded (stored as NULL or '')."""
    b, m = (s.blocks if sections.legacy is None else sections.legacy.blocks), s.messages
    of_blocks = connection.execute(
        select(b.c.thread_id).where(*_listed(b, sections, namespace))
        .group_by(b.c.thread_id).order_by(func.min(b.c.sequence))
    ).scalars()
    # The open tail is short: read it in order by the container index rather than group it, which SQLite
    # would do through the thread index, visiting every sealed message (seconds at 400k messages).
    of_tail = connection.execute(
        select(m.c.thread_id).where(m.c.namespace == namespace, m.c.block_id.is_(None)).order_by(m.c.position)
    ).scalars()
    return list(dict.fromkeys(thread or None for thread in [*of_blocks, *of_tail]))
