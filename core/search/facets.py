"""Event search filters and structured orders answered from the stored index's `search_events` rows.

The rows hold what each candidate's write derived (normalized participants and type texts, parsed happened
bounds, collation keys, weight inputs), so loading them is one narrow SELECT, with no event record, JSON,
date parsing or tokenizing. They become columns (numpy arrays), and every filter and order is an array
operation:

- participants and eventType: a map from each distinct normalized value to its rows, matched fuzzily per
  distinct value (there are few); the eventType text's second chance finds substrings in one joined string;
- happened ranges: two float columns;
- the weight order at a turn: exact weights (the reference's `math.exp`, once per distinct mention count and
  elapsed turns) ranked once per turn together with the updatedAt key and position, so a query takes the top
  of its subset from that rank (`argpartition`), without sorting or recomputing anything per candidate;
- the chronology order: ranked once, the same way.

Rows are in section order (their position ascends), which is the candidate order the reference's stable
sorts keep for ties. `refresh(keys)` re-reads the rows of events this process wrote.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import Connection

from stratagate.search.stored import Connect
from stratagate.weights import decay_lambda

_SEPARATOR = "\x00"
_COLUMNS = ("position", "event_id", "participants", "event_type", "type_text", "happened_start", "happened_end",
            "chronology_key", "updated_key", "pinned", "floor_weight", "forced_cap", "mention_count",
            "last_adopted_turn")


def _matches(left: str, right: str) -> bool:
    """`fuzzy_search_match` on texts both already normalized."""
    return bool(left and right and (left == right or right in left or left in right))


@dataclass
class _Rows:
    """The candidates' columns, row i being the i-th candidate in section order."""

    positions: np.ndarray
    ids: list[str]
    participants: dict[str, np.ndarray]
    types: dict[str, np.ndarray]
    type_texts: list[str]
    happened_start: np.ndarray
    happened_end: np.ndarray
    chronology_rank: np.ndarray
    updated_rank: np.ndarray
    pinned: np.ndarray
    floor_weight: np.ndarray
    forced_cap: np.ndarray
    mention_count: np.ndarray
    last_adopted_turn: np.ndarray


def _key_ranks(keys: list[bytes]) -> np.ndarray:
    """Each key's rank in byte order (equal keys, equal ranks). ICU sort keys hold no zero byte before their
    terminator, so numpy's fixed-width bytes (which drop trailing zeros) compare them as memcmp does."""
    if not keys:
        return np.zeros(0, dtype=np.int64)
    _unique, inverse = np.unique(np.array(keys, dtype=bytes), return_inverse=True)
    return inverse.astype(np.int64)


_NUMERIC = ("positions", "happened_start", "happened_end", "chronology_rank", "updated_rank", "pinned",
            "floor_weight", "forced_cap", "mention_count", "last_adopted_turn")


def _save(columns: _Rows, path: Path) -> None:
    """Write the columns to `path` (numpy arrays, and the texts as JSON), atomically."""
    groups = {}
    for name in ("participants", "types"):
        values: dict[str, np.ndarray] = getattr(columns, name)
        groups[f"{name}_rows"] = np.concatenate(list(values.values())) if values else np.zeros(0, np.int64)
        groups[f"{name}_ends"] = np.cumsum([len(rows) for rows in values.values()], dtype=np.int64)
    texts = json.dumps({"ids": columns.ids, "type_texts": columns.type_texts,
                        "participants": list(columns.participants), "types": list(columns.types)})
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".npz")
    with os.fdopen(handle, "wb") as stream:
        np.savez(stream, texts=np.frombuffer(texts.encode(), dtype=np.uint8), **groups,
                 **{name: getattr(columns, name) for name in _NUMERIC})
    os.replace(temporary, path)


def _saved(path: Path) -> _Rows:
    with np.load(path) as saved:
        texts = json.loads(saved["texts"].tobytes())
        groups = {}
        for name in ("participants", "types"):
            rows, ends = saved[f"{name}_rows"], saved[f"{name}_ends"]
            groups[name] = {value: rows[start:end] for value, start, end
                            in zip(texts[name], [0, *ends[:-1].tolist()], ends.tolist(), strict=True)}
        return _Rows(ids=texts["ids"], type_texts=texts["type_texts"], **groups,
                     **{name: saved[name] for name in _NUMERIC})


class EventFacets:
    """Filters and structured orders over one namespace's candidates (see the module docstring).

    `saved_at`: where the columns of this state of the index are kept (given for a database that cannot
    change under this process, such as a read-only open): a later process loads them instead of the rows."""

    def __init__(self, connect: Connect, namespace: str, saved_at: Path | None = None):
        self._connect = connect
        self.namespace = namespace
        self._reset()
        if saved_at is not None and saved_at.exists():
            try:
                self._rows = _saved(saved_at)
                self._rows_read: list[tuple] | None = None
                return
            except (OSError, ValueError, KeyError):  # a damaged cache file is rebuilt below
                pass
        with self._connect() as connection:
            self._rows_read = self._select(connection, "", [])
        if saved_at is not None:
            # An unwritable cache only costs the next process this same read.
            with contextlib.suppress(OSError):
                _save(self._columns(), saved_at)

    # loading -----------------------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._rows: _Rows | None = None
        self._joined_texts: str | None = None
        self._weight_turn: int | None = None
        self._weight_rank = np.zeros(0, dtype=np.int64)
        self._chronology_ranks: dict[bool, np.ndarray] = {}

    def _select(self, connection: Connection, condition: str, values: list[str]) -> list[tuple]:
        """The rows' columns in section order, through the driver's own cursor: at 100k rows SQLAlchemy's
        per-row result processing would cost more than the query."""
        mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        condition = condition.format(", ".join([mark] * len(values)))
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(f"SELECT {', '.join(_COLUMNS)} FROM search_events WHERE namespace = {mark}{condition} "
                           "ORDER BY position", (self.namespace, *values))
            return cursor.fetchall()
        finally:
            cursor.close()

    def refresh(self, keys: list[str]) -> None:
        """Re-read the rows of these events (after this process committed them)."""
        changed = set(keys)
        if self._rows_read is None:
            with self._connect() as connection:
                self._rows_read = self._select(connection, "", [])
        rows = [row for row in self._rows_read if row[1] not in changed]
        with self._connect() as connection:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                rows += self._select(connection, " AND event_id IN ({})", chunk)
        rows.sort(key=lambda row: row[0])
        self._rows_read = rows
        self._reset()

    def _columns(self) -> _Rows:
        if self._rows is None:
            assert self._rows_read is not None
            records = self._rows_read
            participants: dict[str, list[int]] = defaultdict(list)
            types: dict[str, list[int]] = defaultdict(list)
            for row, record in enumerate(records):
                for name in set(record[2].split("\n")):
                    participants[name].append(row)
                types[record[3]].append(row)
            column = list(zip(*records, strict=True)) if records else [[] for _ in range(len(_COLUMNS))]
            self._rows = _Rows(
                positions=np.asarray(column[0], dtype=np.int64),
                ids=list(column[1]),
                participants={name: np.asarray(rows) for name, rows in participants.items()},
                types={name: np.asarray(rows) for name, rows in types.items()},
                type_texts=list(column[4]),
                # None (no parseable date, no cap) becomes NaN.
                happened_start=np.array(column[5], dtype=np.float64),
                happened_end=np.array(column[6], dtype=np.float64),
                chronology_rank=_key_ranks([bytes(v) for v in column[7]]),
                updated_rank=_key_ranks([bytes(v) for v in column[8]]),
                pinned=np.asarray(column[9], dtype=bool),
                floor_weight=np.asarray(column[10], dtype=np.float64),
                forced_cap=np.array(column[11], dtype=np.float64),
                mention_count=np.asarray(column[12], dtype=np.int64),
                last_adopted_turn=np.asarray(column[13], dtype=np.int64),
            )
        return self._rows

    # reads -------------------------------------------------------------------------------------------------
    def all_rows(self) -> np.ndarray:
        return np.arange(len(self._columns().ids))

    def ids(self, rows: np.ndarray) -> list[str]:
        ids = self._columns().ids
        return [ids[row] for row in rows.tolist()]

    def positions(self, rows: np.ndarray) -> np.ndarray:
        return self._columns().positions[rows]

    def ids_at_positions(self, positions: np.ndarray) -> list[str] | None:
        """The ids at these section positions; None if a position is not among the loaded rows (another
        process wrote since they were read)."""
        columns = self._columns()
        rows = np.searchsorted(columns.positions, positions)
        if len(rows) and (rows.max() >= len(columns.positions) or not np.array_equal(columns.positions[rows], positions)):
            return None
        return self.ids(rows)

    def with_participants(self, wanted: list[str]) -> np.ndarray:
        """Rows with, for every wanted (normalized) name, a participant matching it fuzzily."""
        columns = self._columns()
        matching: np.ndarray | None = None
        for requested in wanted:
            groups = [rows for have, rows in columns.participants.items() if _matches(have, requested)]
            having = np.unique(np.concatenate(groups)) if groups else np.zeros(0, dtype=np.int64)
            matching = having if matching is None else np.intersect1d(matching, having)
        return np.zeros(0, dtype=np.int64) if matching is None else matching

    def with_event_type(self, requested: str) -> np.ndarray:
        """Rows whose eventType, or else whose "title summary tags", matches `requested` (normalized) fuzzily."""
        columns = self._columns()
        groups = [rows for have, rows in columns.types.items() if _matches(have, requested)]
        if requested:
            groups.append(self._texts_matching(requested))
        return np.unique(np.concatenate(groups)) if groups else np.zeros(0, dtype=np.int64)

    def _texts_matching(self, requested: str) -> np.ndarray:
        """Rows whose type text contains `requested`, or is non-empty and within it."""
        texts = self._columns().type_texts
        if _SEPARATOR in requested:
            return np.asarray([row for row, text in enumerate(texts) if _matches(text, requested)], dtype=np.int64)
        if self._joined_texts is None:
            self._joined_texts = _SEPARATOR.join(texts)
            lengths = np.fromiter((len(text) for text in texts), dtype=np.int64, count=len(texts))
            self._text_lengths = lengths
            self._text_starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]) if len(texts) else lengths
        joined, found = self._joined_texts, []
        offset = joined.find(requested)
        while offset >= 0:
            row = int(np.searchsorted(self._text_starts, offset, side="right")) - 1
            found.append(row)
            # The next match can only be in a later text.
            offset = joined.find(requested, int(self._text_starts[row] + self._text_lengths[row]) + 1)
        short = np.flatnonzero((self._text_lengths > 0) & (self._text_lengths <= len(requested)))
        found += [row for row in short.tolist() if texts[row] in requested]
        return np.asarray(found, dtype=np.int64)

    def happened_within(self, low: float, high: float) -> np.ndarray:
        """Rows whose happened interval (both ends parseable) overlaps [low, high]."""
        columns = self._columns()
        starts, ends = columns.happened_start, columns.happened_end
        with np.errstate(invalid="ignore"):
            return np.flatnonzero(np.isfinite(starts) & np.isfinite(ends) & (starts <= high) & (ends >= low))

    # structured orders -------------------------------------------------------------------------------------
    def structured(self, rows: np.ndarray, temporal_intent: object, turn: int, top: int | None = None) -> list[str]:
        """The ids of `rows` (ascending) in the structured order (chronology for a temporal intent, else weight at
        `turn` then updatedAt, both descending; ties keep section order), or only the first `top`."""
        if temporal_intent in ("first", "latest"):
            rank = self._chronology(temporal_intent == "latest")
        else:
            rank = self._weight(turn)
        keys = rank[rows]
        if top is not None and top < len(keys):
            head = np.argpartition(keys, top - 1)[:top]
            rows, keys = rows[head], keys[head]
        return self.ids(rows[np.argsort(keys, kind="stable")])

    def _chronology(self, descending: bool) -> np.ndarray:
        """Each row's place in the chronology order (ascending, or descending with section order kept)."""
        rank = self._chronology_ranks.get(descending)
        if rank is None:
            columns = self._columns()
            chronology = columns.chronology_rank
            order = np.lexsort((columns.positions, -chronology if descending else chronology))
            rank = self._chronology_ranks[descending] = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
        return rank

    def _weight(self, turn: int) -> np.ndarray:
        """Each row's place in the weight order at `turn` (computed once per turn and set of rows)."""
        columns = self._columns()
        if self._weight_turn != turn or len(self._weight_rank) != len(columns.ids):
            weights = self.weights(turn)
            order = np.lexsort((columns.positions, -columns.updated_rank, -weights))
            self._weight_rank = np.empty(len(order), dtype=np.int64)
            self._weight_rank[order] = np.arange(len(order))
            self._weight_turn = turn
        return self._weight_rank

    def weights(self, turn: int) -> np.ndarray:
        """`weights.weight_at` of every row at `turn`, bit for bit: the decay uses `math.exp` once per distinct
        (mention count, elapsed turns); floor, cap and pin are exact array operations."""
        columns = self._columns()
        elapsed = np.maximum(0, turn - columns.last_adopted_turn)
        mentions = columns.mention_count
        if len(elapsed) and max(int(elapsed.max()), int(np.abs(mentions).max())) < 1 << 31:
            # Both fit in 32 bits (always, in practice): one int64 key per pair, a much faster unique.
            unique, inverse = np.unique((mentions << 32) | elapsed, return_inverse=True)
            pairs = [(key >> 32, key & 0xFFFFFFFF) for key in unique.tolist()]
        else:
            unique, inverse = np.unique(np.stack([mentions, elapsed], axis=1), axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            pairs = unique.tolist()
        decays = np.asarray([math.exp(-decay_lambda(count) * turns) for count, turns in pairs], dtype=np.float64)
        decayed = np.maximum(columns.floor_weight, decays[inverse])
        capped = np.where(np.isnan(columns.forced_cap), decayed, np.minimum(decayed, columns.forced_cap))
        return np.where(columns.pinned, 1.0, capped)
