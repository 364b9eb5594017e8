"""Schema 5 and 6 files kept in their own schema, so an agent running the reference keeps opening them.

The reference StrataGate (schema 5) and its v6 successors refuse a file whose `user_version` is newer than
theirs, so a writable open of a v5/v6 file does not upgrade it (`stratagate migrate` does, on request).
Only two tables differ from v7:

- `blocks`: v5 stores a block's decay anchor as a turn (`pointer_anchor_turn`), v6 as a block position
  (`pointer_anchor_block_position`); neither has `last_lifted_by`.
- `memory_spaces`: v5 has no `block_decay_lambda`; it reads as the v7 default 0.3.

Reads give v7 records: a v5 anchor turn becomes the position the v5 → v6 migration gives it
(`ThreadEnds.position`), so a curated file and its migrated copy decay alike. Writes go back to the file's
columns (`ThreadEnds.turn`). A lift's source (user/agent) has no column before v7 and is not stored; it reads
back as unknown, like a lift the reference made. A change that only v7 can hold (a v5 file's block decay
rate, a whole-snapshot import) raises `SchemaUpgradeRequiredError` before anything is written.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Column, Connection, MetaData, Table, func, select

from stratagate.snapshot import DEFAULT_BLOCK_DECAY_LAMBDA
from stratagate.storage import schema

WRITABLE_VERSIONS = (5, 6)
"""Older versions a writable open keeps as they are (v1–v4 open read-only: the reference itself upgrades
them to v5 on its first writable open)."""

Bucket = tuple[str, str | None]
"""(namespace, thread_id): the blocks an anchor position counts. NULL threads form one bucket, and `''` is its
own bucket, as `thread_id IS thread_id` compares them in the reference's SQL migration."""


class ThreadEnds:
    """The sorted end turns of each bucket's blocks: converts v5 anchor turns to block positions and back."""

    def __init__(self, pairs: Iterable[tuple[Bucket, int]]):
        ends: dict[Bucket, list[int]] = defaultdict(list)
        for bucket, end_turn in pairs:
            ends[bucket].append(end_turn)
        for turns in ends.values():
            turns.sort()
        self._ends = dict(ends)

    def position(self, bucket: Bucket, anchor_turn: int) -> int:
        """The v5 → v6 conversion: how many of the bucket's blocks end by the anchor turn, at least 1."""
        return max(1, bisect_right(self._ends.get(bucket, ()), anchor_turn))

    def turn(self, bucket: Bucket, position: int) -> int:
        """The smallest anchor turn that converts to `position`: the end turn of the bucket's position-th block
        (the anchor the reference gives a block when it seals it)."""
        turns = self._ends[bucket]
        return turns[min(max(position, 1), len(turns)) - 1]


def _file_table(table: Table, version: int) -> Table:
    """`table` as a v5/v6 file holds it: v7-only columns left out, v5's anchor under its own name."""
    columns = []
    for column in table.columns:
        name = column.name
        if name == "last_lifted_by" or (version < 6 and name == "block_decay_lambda"):
            continue
        if version < 6 and name == "pointer_anchor_block_position":
            name = "pointer_anchor_turn"
        columns.append(Column(name, column.type, primary_key=column.primary_key, nullable=column.nullable))
    return Table(table.name, MetaData(), *columns)


@dataclass(frozen=True)
class LegacySchema:
    """How one v5/v6 file's `blocks` and `memory_spaces` map to the v7 rows the rest of storage handles."""

    version: int
    blocks: Table = field(repr=False)
    memory_spaces: Table = field(repr=False)

    @classmethod
    def of(cls, version: int) -> LegacySchema:
        if version not in WRITABLE_VERSIONS:
            raise ValueError(f"schema {version} is not kept in its own schema")
        return cls(version, _file_table(schema.blocks, version), _file_table(schema.memory_spaces, version))

    @property
    def has_decay_lambda(self) -> bool:
        return self.version >= 6

    def space_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A memory_spaces row with v7's columns."""
        return {"block_decay_lambda": DEFAULT_BLOCK_DECAY_LAMBDA, **row}

    def block_rows_read(
        self, connection: Connection, namespace: str, rows: list[Mapping[str, Any]]
    ) -> list[dict]:
        """Blocks rows as read from the file, with v7's columns (anchor position, no lift source)."""
        converted = [{**row, "last_lifted_by": None} for row in rows]
        if self.version >= 6 or not converted:
            return converted
        ends = self._thread_ends(connection, namespace, {row["thread_id"] for row in rows})
        for row in converted:
            turn = row.pop("pointer_anchor_turn")
            row["pointer_anchor_block_position"] = ends.position((namespace, row["thread_id"]), turn)
        return converted

    def block_rows_written(
        self, connection: Connection, namespace: str, rows: list[dict[str, Any]]
    ) -> list[dict]:
        """v7 blocks rows in the file's columns. A v5 anchor position becomes a turn:

        - a position the stored turn already converts to keeps that turn (nothing changes);
        - a new lift gets the thread's current turn, as the reference's `expandBlock` writes it, so the
          reference sees the block freshly lifted (when that turn converts to the lifted position);
        - any other position gets the end turn of the thread's block at that position (the turn a block is
          anchored at when sealed), the smallest turn with that position.
        """
        written = [{key: value for key, value in row.items() if key != "last_lifted_by"} for row in rows]
        if self.version >= 6 or not written:
            return written
        b = self.blocks
        ids = {row["id"] for row in written}
        stored = {
            found.id: found
            for found in connection.execute(
                select(b.c.id, b.c.pointer_anchor_turn, b.c.last_lifted_at).where(
                    b.c.namespace == namespace, b.c.id.in_(sorted(ids))
                )
            )
        }
        threads = {row["thread_id"] for row in written}
        ends = ThreadEnds(
            [
                ((namespace, thread), end)
                for thread, end, block_id in self._thread_blocks(connection, namespace, threads)
                if block_id not in ids
            ]
            + [((namespace, row["thread_id"]), row["end_turn"]) for row in written]
        )
        for row in written:
            bucket = (namespace, row["thread_id"])
            position = row.pop("pointer_anchor_block_position")
            before = stored.get(row["id"])
            if before is not None and ends.position(bucket, before.pointer_anchor_turn) == position:
                row["pointer_anchor_turn"] = before.pointer_anchor_turn
            elif (
                self._is_new_lift(row, before)
                and ends.position(
                    bucket, current := self._thread_current_turn(connection, namespace, row["thread_id"])
                )
                == position
            ):
                row["pointer_anchor_turn"] = current
            else:
                row["pointer_anchor_turn"] = ends.turn(bucket, position)
        return written

    @staticmethod
    def _is_new_lift(row: Mapping[str, Any], before: Any) -> bool:
        stamp = row["last_lifted_at"]
        return stamp is not None and (before is None or before.last_lifted_at != stamp)

    def _thread_blocks(
        self, connection: Connection, namespace: str, threads: set[str | None]
    ) -> list[tuple[str | None, int, str]]:
        """(thread, end turn, id) of the blocks of these threads (None: the unthreaded bucket)."""
        b = self.blocks
        found: list[tuple[str | None, int, str]] = []
        for thread in threads:
            found += connection.execute(
                select(b.c.thread_id, b.c.end_turn, b.c.id).where(
                    b.c.namespace == namespace, b.c.thread_id.is_not_distinct_from(thread)
                )
            ).all()
        return found

    def _thread_ends(self, connection: Connection, namespace: str, threads: set[str | None]) -> ThreadEnds:
        return ThreadEnds(
            ((namespace, thread), end)
            for thread, end, _id in self._thread_blocks(connection, namespace, threads)
        )

    def _thread_current_turn(self, connection: Connection, namespace: str, thread: str | None) -> int:
        """The reference's "thread current turn": user messages of a thread (sealed and open), or the
        namespace's global turn for unthreaded blocks."""
        if not thread:
            return connection.scalar(
                select(self.memory_spaces.c.current_turn).where(self.memory_spaces.c.namespace == namespace)
            )
        m = schema.messages
        return connection.scalar(
            select(func.count()).where(
                m.c.namespace == namespace, m.c.thread_id == thread, m.c.role == "user"
            )
        )
