"""Event search filters and structured orders answered per query by SQL over the stored index's columns.

Nothing is loaded per process: a filter is a condition on `search_events` (a `Subset`) that the indexes of
`search_tables` serve, and a structured order is read with ORDER BY, so a new process's first filtered or
empty search costs what its query reads, not a pass over every candidate:

- participants and eventType: the distinct stored values come from a loose index scan (one seek per distinct
  value), are matched fuzzily here, and the matches become an IN list (participants through
  `search_participants`); eventType's second chance ("title summary tags" containing the requested text, or
  within it) is a substring test over the candidates' `type_text` in SQL;
- happened ranges: a range on the (happened_start, happened_end) index;
- chronology: ORDER BY chronology_key, position (ICU sort keys compare bytewise in both databases, as in
  Python);
- weight at a turn: a candidate's weight depends only on its weight class (pinned, floor, cap, mention count,
  last adopted turn), so each class's exact weight is computed once and only the rows of the classes that can
  reach the top are read (`_weight_head`).

Ties keep section order (position), the candidate order the reference's stable sorts keep.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection

from stratagate.arrays import np
from stratagate.search.stored.ranking import StoredEventIndex
from stratagate.search.stored.tables import driver_rows, marks, ordered_positions, position_set
from stratagate.search.subsets import ALL, NONE, Subset, all_of
from stratagate.storage.index_prefetch import prefetch_index
from stratagate.weights import decay_lambda

CLASS_COLUMNS = "pinned, floor_weight, forced_cap, mention_count, last_adopted_turn"
WEIGHT_INDEX_ORDER = ("mention_count, last_adopted_turn, pinned, floor_weight, forced_cap, updated_key DESC, "
                      "position")
"""`search_events_weight_idx`'s order. Within one class it is the class's tie order (updatedAt descending, then
position); spelled out whole, PostgreSQL reads a class's first rows in index order instead of sorting all of
them: it does not count `forced_cap IS NULL` as fixing the column, so "updated_key DESC, position" alone
does not match the index for it (1.2 ms at 100k events for three classes of 1,600 rows)."""
_CLASSES_IN_ONE_CASE = 2000
"""Above this many weight classes the full weight order is sorted here instead of by one CASE."""
WeightClass = tuple[int, float, float | None, int, int]


def _matches(left: str, right: str) -> bool:
    """`fuzzy_search_match` on texts both already normalized."""
    return bool(left and right and (left == right or right in left or left in right))


def _head_key(subset: Subset, temporal_intent: object, turn: int, top: int) -> tuple:
    """What a structured head depends on besides the revision (the turn only for the weight order)."""
    return subset, temporal_intent if temporal_intent in ("first", "latest") else turn, top


def class_weight(weight_class: WeightClass, turn: int) -> float:
    """`weights.weight_at` of a candidate of this class at `turn` (candidates are never forgotten or archived),
    the same operations in the same order, so the same float."""
    pinned, floor_weight, forced_cap, mention_count, last_adopted_turn = weight_class
    if pinned:
        return 1.0
    decayed = max(floor_weight, math.exp(-decay_lambda(mention_count) * max(0, turn - last_adopted_turn)))
    return decayed if forced_cap is None else min(decayed, forced_cap)


CLASSES_AT_ONCE = 100
"""Weight classes whose rows one statement reads (SQLite joins at most 500 SELECTs in one)."""
KEPT_SUBSETS = 256
"""How many filter subsets' weight classes one revision keeps (the oldest asked goes first)."""
KEPT_HEADS = 64
"""How many structured heads (`structured` with `top`) one revision keeps (the least recently asked goes
first)."""
KEPT_POSITION_SETS = 16
"""How many filter subsets' positions one revision keeps (the least recently asked goes first): a query with
words and a filter reads its subset's positions whole, in time linear in the subset (about 0.7 ms for one
person's 6,600 events at 100k events), and the same people and types are asked for again and again."""


class StoredFacets:
    """Filters and structured orders over one namespace's stored candidates (see the module docstring)."""

    def __init__(self, index: StoredEventIndex):
        self._index = index
        self._connect = index.connect
        self.namespace = index.namespace
        self._classes_at = -1
        self._classes: dict[Subset, list[tuple[WeightClass, int]]] = {}
        self._weighted: dict[tuple[Subset, int], list[tuple[float, WeightClass, int]]] = {}
        self._kept_at = -1
        self._kept: dict[tuple, object] = {}
        """What the queries of one revision share (see `_kept_for`)."""
        self._revision_in: tuple[object, int] = (None, -1)
        """(the read transaction, the index's revision in it): a search asks several times in one."""
        self._change_marker = index.change_marker
        self._confirmed: tuple[object, int] | None = None
        """(a change marker, a revision read after it): while the marker stays, the index is at that revision."""
        self._marked = threading.local()
        """This thread's `marker`, read before its next revision read (`unchanged_head_and_hits`)."""
        self._keeping = threading.Lock()
        """`_kept_at`, `_kept` and `_confirmed` change together (the app searches from two threads)."""
        self._read_ahead: set[str] = set()
        """The indexes whose pages were asked of the disk before a statement read them whole."""

    # filters -----------------------------------------------------------------------------------------------
    def with_participants(self, wanted: list[str]) -> Subset:
        """Candidates with, for every wanted (normalized) name, a participant matching it fuzzily."""
        with self._connect() as connection:
            names = self._distinct(connection, "search_participants", "name")
        parts, groups = [], []
        for requested in wanted:
            matching = [name for name in names if _matches(name, requested)]
            if not matching:
                return NONE
            direct = (f"SELECT position FROM search_participants WHERE namespace = ? "
                      f"AND name IN ({marks(len(matching))})")
            parts.append(Subset(f"position IN ({direct})", (self.namespace, *matching), direct))
            groups.append(tuple(matching))
        return replace(all_of(parts), names=tuple(groups))

    def with_event_type(self, requested: str) -> Subset:
        """Candidates whose eventType, or else whose "title summary tags", matches `requested` (normalized,
        not empty) fuzzily."""
        with self._connect() as connection:
            types = [value for value in self._distinct(connection, "search_events", "event_type")
                     if _matches(value, requested)]
            contains = "instr({}, {}) > 0" if connection.dialect.name == "sqlite" else "strpos({}, {}) > 0"
        text = Subset(f"type_text <> '' AND ({contains.format('type_text', '?')} OR {contains.format('?', 'type_text')})",
                      (requested, requested))
        if not types:
            return text
        return Subset(f"event_type IN ({marks(len(types))}) OR ({text.sql})", (*types, *text.values))

    def happened_within(self, low: float, high: float) -> Subset:
        """Candidates whose happened interval (both ends parseable) overlaps [low, high] (NaN: none).

        An interval ending at or after `low` starts at or after `low` less the longest interval, so that
        bound (lowered by a few ulps for the rounding of the differences) limits the happened index's range
        to the intervals that can overlap, instead of every one starting before `high`."""
        if math.isnan(low) or math.isnan(high):
            return NONE
        with self._connect() as connection:
            sql = "SELECT max(happened_end - happened_start) FROM search_events WHERE namespace = ?"

            def read() -> float | None:
                self._read_whole(connection, "search_events_happened_idx")
                return driver_rows(connection, sql, (self.namespace,))[0][0]

            longest = self._kept_for(connection, ("longest interval",), read)
        if longest is None or not math.isfinite(low) or not math.isfinite(longest):
            return Subset("happened_start <= ? AND happened_end >= ?", (high, low))
        start = low - longest - 4 * (math.ulp(low) + math.ulp(longest))
        return Subset("happened_start <= ? AND happened_end >= ? AND happened_start >= ?", (high, low, start))

    # reads -------------------------------------------------------------------------------------------------
    def structured(self, subset: Subset, temporal_intent: object, turn: int, top: int | None = None) -> list[str]:
        """The ids of `subset` in the structured order (chronology for a temporal intent, else weight at `turn`
        then updatedAt, both descending; ties keep section order), or only the first `top` (the last
        `KEPT_HEADS` asked are kept for the revision: a query without words asks for the same head again
        whenever it is repeated, and the app repeats its list's)."""
        if top is None:
            return [item for _position, item in self.ordered(subset, temporal_intent, turn)]
        with self._connect() as connection:
            key = _head_key(subset, temporal_intent, turn, top)
            return list(self._recently_asked(connection, "heads", key, KEPT_HEADS,
                                             lambda: self._head(connection, subset, temporal_intent, turn, top)))

    def head_and_hits_kept(self, subset: Subset, temporal_intent: object, turn: int, top: int) -> bool:
        """Whether this head and its hits' events (`kept_for_revision` under "hit events") are kept for the
        revision last read: if the index is still there, reading its revision is all the query reads."""
        heads, events = self._kept.get(("heads",)), self._kept.get(("hit events",))
        head = heads.get(_head_key(subset, temporal_intent, turn, top)) if heads else None
        return head is not None and events is not None and tuple(head) in events

    def unchanged_head_and_hits(self, subset: Subset, temporal_intent: object, turn: int,
                                top: int) -> tuple[list[str], dict[str, Any]] | None:
        """(the head, its hits' events) as `head_and_hits_kept` finds them, when the storage's change marker
        tells without a read that no commit moved the index since its revision was read: then the query reads
        nothing. None otherwise; this thread's next revision read is then confirmed by the marker read now."""
        marker = self._change_marker()
        if marker is not None:
            with self._keeping:
                kept = self._kept if self._confirmed == (marker, self._kept_at) else {}
            heads, events = kept.get(("heads",)), kept.get(("hit events",))
            head = heads.get(_head_key(subset, temporal_intent, turn, top)) if heads else None
            found = events.get(tuple(head)) if head is not None and events is not None else None
            if found is not None:
                return head, found
        self._marked.marker = marker
        return None

    def kept_for_revision(self, name: str, key: object, compute: Callable[[], Any]) -> Any:
        """`compute()` for `key`, kept for the index's revision among the last `KEPT_HEADS` keys asked under
        `name`, as the heads are (what a query without words reads after its head is kept with it)."""
        with self._connect() as connection:
            return self._recently_asked(connection, name, key, KEPT_HEADS, compute)

    def _head(self, connection: Connection, subset: Subset, temporal_intent: object, turn: int,
              top: int) -> list[str]:
        if temporal_intent in ("first", "latest"):
            direction = " DESC" if temporal_intent == "latest" else ""
            return [row[0] for row in self._select(connection, "event_id", subset,
                                                   f"chronology_key{direction}, position", top)]
        return self._weight_head(connection, subset, turn, top)

    def ordered(self, subset: Subset, temporal_intent: object, turn: int) -> list[tuple[int, str]]:
        """(position, id) of all of `subset` in the structured order (see `structured`)."""
        with self._connect() as connection:
            if temporal_intent in ("first", "latest"):
                direction = " DESC" if temporal_intent == "latest" else ""
                return self._select(connection, "position, event_id", subset, f"chronology_key{direction}, position")
            return self._weight_ordered(connection, subset, turn)

    def positions(self, connection: Connection, subset: Subset) -> np.ndarray:
        """The subset's positions, ascending (read-only: the last `KEPT_POSITION_SETS` subsets' are kept for
        the revision)."""
        return self._recently_asked(connection, "positions", subset, KEPT_POSITION_SETS,
                                    lambda: self._read_positions(connection, subset))

    def _read_positions(self, connection: Connection, subset: Subset) -> np.ndarray:
        # A participants filter's positions are its names' terms: a blob each instead of a row per position.
        found = None if subset.names is None else self._index.name_positions(connection, subset.names)
        if found is None and subset.direct is not None:
            found = position_set(connection, subset.direct, subset.values)
        elif found is None:
            sql = f"SELECT position FROM search_events WHERE namespace = ? AND ({subset.sql})"
            found = position_set(connection, sql, (self.namespace, *subset.values))
        found.flags.writeable = False  # kept and shared by later queries
        return found

    def places(self, connection: Connection, temporal_intent: object, turn: int) -> np.ndarray:
        """Every candidate's place in the structured order of all candidates (see `structured`), indexed by
        position (-1 where no candidate is): a subset's order is its positions sorted by place. Read once per
        revision and turn, positions only, from the order's indexes."""
        if temporal_intent in ("first", "latest"):
            return self._kept_for(connection, ("places", temporal_intent),  # type: ignore[return-value]
                                  lambda: self._places(connection, temporal_intent))
        return self._kept_for(connection, ("places", "weight", turn),  # type: ignore[return-value]
                              lambda: self._places(connection, "weight", turn))

    def _places(self, connection: Connection, kind: object, turn: int = 0) -> np.ndarray:
        if kind == "weight":
            order = self._weight_positions(connection, turn)
        else:
            direction = " DESC" if kind == "latest" else ""
            sql = (f"SELECT position FROM search_events WHERE namespace = ? "
                   f"ORDER BY chronology_key{direction}, position")
            self._read_whole(connection, f"search_events_{kind}_idx")
            order = ordered_positions(connection, sql, (self.namespace,))
        # int32: a subset's places are sorted for each query with words and a filter, twice as fast as int64.
        places = np.full(int(order.max()) + 1 if len(order) else 0, -1, dtype=np.int32)
        places[order] = np.arange(len(order), dtype=np.int32)
        return places

    def _read_whole(self, connection: Connection, index: str) -> None:
        """Before a statement that reads the index whole, the first time: its pages asked of the disk at once
        (`prefetch_index`; a new process's first search on a file not in the OS cache would otherwise wait for
        each of its scattered pages in turn)."""
        if index not in self._read_ahead:
            self._read_ahead.add(index)
            prefetch_index(connection, index)

    def _kept_for(self, connection: Connection, key: tuple, compute: Callable[[], object]) -> object:
        """`compute()`, kept until the index moves to another revision."""
        revision = self._revision(connection)
        with self._keeping:
            if self._kept_at != revision:
                self._kept_at, self._kept = revision, {}
            kept = self._kept
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    def _recently_asked(self, connection: Connection, name: str, key: object, bound: int,
                        compute: Callable[[], Any]) -> Any:
        """`compute()` for `key`, kept for the revision among the last `bound` keys asked under `name` (the
        least recently asked goes first)."""
        kept: dict[object, Any] = self._kept_for(connection, (name,), dict)  # type: ignore[assignment]
        found = kept.pop(key, None)
        if found is None:
            found = compute()
            if len(kept) >= bound:
                del kept[next(iter(kept))]
        kept[key] = found  # the most recently asked last
        return found

    def _weight_positions(self, connection: Connection, turn: int) -> np.ndarray:
        """Every candidate's position in the weight order at `turn`. The weight index lists each class's rows
        in the order of its ties (updatedAt descending, then position), so a class alone at its weight is a
        slice of one index scan; only classes of equal weight are merged, by their rows' updatedAt."""
        index_order = "mention_count, last_adopted_turn, pinned, floor_weight, forced_cap"
        self._read_whole(connection, "search_events_weight_idx")
        classes = [(tuple(row[:5]), row[5]) for row in driver_rows(
            connection, f"SELECT {CLASS_COLUMNS}, count(*) FROM search_events WHERE namespace = ? "
                        f"GROUP BY {index_order} ORDER BY {index_order}", (self.namespace,))]
        scanned = ordered_positions(connection, f"SELECT position FROM search_events WHERE namespace = ? "
                                                f"ORDER BY {WEIGHT_INDEX_ORDER}",
                                    (self.namespace,))
        starts = np.cumsum([0] + [count for _key, count in classes])
        by_weight: dict[float, list[int]] = {}
        for number, (key, _count) in enumerate(classes):
            by_weight.setdefault(class_weight(key, turn), []).append(number)  # type: ignore[arg-type]
        parts = []
        for weight in sorted(by_weight, reverse=True):
            numbers = by_weight[weight]
            if len(numbers) == 1:
                parts.append(scanned[starts[numbers[0]]:starts[numbers[0] + 1]])
            else:
                rows = self._class_rows(connection, ALL, [(classes[number][0], None) for number in numbers])
                parts.append(np.array([row[0] for row in _by_weight(rows, turn)], dtype=np.int64))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _weight_ordered(self, connection: Connection, subset: Subset, turn: int) -> list[tuple[int, str]]:
        """The subset's (position, id) in the weight order, sorted by the database: each weight class's place
        among the distinct exact weights (computed here, once per class) is handed to it as a CASE over the
        classes."""
        classes = [key for key, _count in self._weight_classes(connection, ALL)]
        if not classes:
            return []  # no candidate at all
        if len(classes) > _CLASSES_IN_ONE_CASE:
            return [(row[0], row[1]) for row in _by_weight(self._select(
                connection, f"position, event_id, updated_key, {CLASS_COLUMNS}", subset), turn)]
        weights = [class_weight(key, turn) for key in classes]
        place = {weight: number for number, weight in enumerate(sorted(set(weights), reverse=True))}
        same = "IS" if connection.dialect.name == "sqlite" else "IS NOT DISTINCT FROM"
        when = (f"WHEN mention_count = ? AND last_adopted_turn = ? AND pinned = ? AND floor_weight = ? "
                f"AND forced_cap {same} ? THEN ?")
        values = [value for (pinned, floor_weight, forced_cap, mentions, adopted), weight
                  in zip(classes, weights, strict=True)
                  for value in (mentions, adopted, pinned, floor_weight, forced_cap, place[weight])]
        return [(row[0], row[1]) for row in driver_rows(connection, (
            f"SELECT position, event_id FROM search_events WHERE namespace = ? AND ({subset.sql}) "
            f"ORDER BY CASE {' '.join([when] * len(classes))} END, updated_key DESC, position"),
            (self.namespace, *subset.values, *values))]

    def committed(self) -> None:
        """Read the revision again, even in the same transaction: a commit in it (an exclusive block's) moved
        the index."""
        self._revision_in = (None, -1)

    def _revision(self, connection: Connection) -> int:
        transaction, revision = self._revision_in
        if transaction is None or transaction is not connection.get_transaction():
            # A marker read before this transaction began is confirmed by the revision it sees.
            marker, self._marked.marker = getattr(self._marked, "marker", None), None
            revision = driver_rows(connection, "SELECT revision FROM search_index_state WHERE namespace = ?",
                                   (self.namespace,))[0][0]
            # The transaction is held, so that no later one can be this object.
            self._revision_in = (connection.get_transaction(), revision)
            if marker is not None:
                with self._keeping:
                    self._confirmed = (marker, revision)
        return revision

    def _weight_head(self, connection: Connection, subset: Subset, turn: int, top: int) -> list[str]:
        """The first `top` ids of the subset in the weight order, reading only the rows that can be among them.

        Exact: let `threshold` be the weight at which the classes, heaviest first, reach `top` rows. Fewer
        than `top` rows weigh more than it: they are all among the first `top`. At least `top` rows weigh at
        least it, so no lighter row is. The rest of the first `top` are rows weighing exactly `threshold`,
        ordered among themselves by updatedAt descending then position, so the first `top - heavier` of them
        in that order (read with ORDER BY ... LIMIT) complete it."""
        weighted = self._weighted_classes(connection, subset, turn)
        if not weighted:
            return []
        threshold, total = weighted[-1][0], 0
        for weight, _key, count in weighted:
            total += count
            if total >= top:
                threshold = weight
                break
        heavier = [key for weight, key, _count in weighted if weight > threshold]
        tied = [key for weight, key, _count in weighted if weight == threshold]
        rest = top - sum(count for weight, _key, count in weighted if weight > threshold)
        rows = self._class_rows(connection, subset,
                                [(key, None) for key in heavier] + [(key, rest) for key in tied])
        return [row[1] for row in _by_weight(rows, turn)[:top]]

    def _weighted_classes(self, connection: Connection, subset: Subset,
                          turn: int) -> list[tuple[float, WeightClass, int]]:
        """(weight at `turn`, class, candidate count) of the subset's weight classes, heaviest first, kept with
        the classes (the turn moves less often than queries come)."""
        classes = self._weight_classes(connection, subset)
        found = self._weighted.get((subset, turn))
        if found is None:
            if len(self._weighted) >= KEPT_SUBSETS:
                del self._weighted[next(iter(self._weighted))]
            found = self._weighted[subset, turn] = sorted(
                ((class_weight(key, turn), key, count) for key, count in classes), key=lambda item: -item[0])
        return found

    def _weight_classes(self, connection: Connection, subset: Subset) -> list[tuple[WeightClass, int]]:
        """(class, candidate count) of the subset's weight classes, kept until the index moves to another
        revision (the empty query and the full weight order ask for every candidate's each time)."""
        revision = self._revision(connection)
        if self._classes_at != revision:
            self._classes_at, self._classes, self._weighted = revision, {}, {}
        if subset not in self._classes:
            if len(self._classes) >= KEPT_SUBSETS:  # a long-lived process asks for ever new filter mixes
                del self._classes[next(iter(self._classes))]
            if subset == ALL:
                self._read_whole(connection, "search_events_weight_idx")
            self._classes[subset] = [(tuple(row[:5]), row[5]) for row in driver_rows(  # type: ignore[misc]
                connection, f"SELECT {CLASS_COLUMNS}, count(*) FROM search_events WHERE namespace = ? "
                            # In the weight index's column order, so its scan groups them without a sort.
                            f"AND ({subset.sql}) GROUP BY mention_count, last_adopted_turn, pinned, floor_weight, "
                            f"forced_cap", (self.namespace, *subset.values))]
        return self._classes[subset]

    def _class_rows(self, connection: Connection, subset: Subset,
                    classes: list[tuple[WeightClass, int | None]]) -> list[tuple]:
        """The subset's rows in these classes, each class's with its limit (None: all; a number: the class's
        first rows by updatedAt descending then position, which hold the first of all the classes weighing
        the same), one index range each (`search_events_weight_idx` lists a class's rows in that order), read
        by one statement for up to `CLASSES_AT_ONCE` classes: a round trip each on PostgreSQL."""
        rows: list[tuple] = []
        for start in range(0, len(classes), CLASSES_AT_ONCE):
            part = classes[start : start + CLASSES_AT_ONCE]
            selects, values = [], []
            for number, (key, limit) in enumerate(part):
                pinned, floor_weight, forced_cap, mention_count, last_adopted_turn = key
                cap, cap_values = (("forced_cap IS NULL", ()) if forced_cap is None
                                   else ("forced_cap = ?", (forced_cap,)))
                within = Subset(f"mention_count = ? AND last_adopted_turn = ? AND pinned = ? AND floor_weight = ? "
                                f"AND {cap}", (mention_count, last_adopted_turn, pinned, floor_weight, *cap_values))
                sql, sql_values = self._select_sql("position, event_id, updated_key", all_of([subset, within]),
                                                   WEIGHT_INDEX_ORDER, limit)
                selects.append(f"SELECT {number} AS class, c{number}.* FROM ({sql}) AS c{number}")
                values += sql_values
            found = driver_rows(connection, " UNION ALL ".join(selects), values)
            rows += [(*row[1:], *part[row[0]][0]) for row in found]
        return rows

    def _select(self, connection: Connection, columns: str, subset: Subset, order: str | None = None,
                limit: int | None = None) -> list[tuple]:
        return driver_rows(connection, *self._select_sql(columns, subset, order, limit))

    def _select_sql(self, columns: str, subset: Subset, order: str | None = None,
                    limit: int | None = None) -> tuple[str, tuple]:
        sql = f"SELECT {columns} FROM search_events WHERE namespace = ? AND ({subset.sql})"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return sql, (self.namespace, *subset.values)

    def _distinct(self, connection: Connection, table: str, column: str) -> list[str]:
        """The column's distinct values in the namespace by a loose index scan (one index seek per value),
        kept for the revision."""
        collate = "" if connection.dialect.name == "sqlite" else ' COLLATE "C"'
        return self._kept_for(connection, ("distinct", table, column), lambda: [  # type: ignore[return-value]
            row[0] for row in driver_rows(connection, (
            f"WITH RECURSIVE seen(value) AS ("
            f"SELECT (SELECT min({column}) FROM {table} WHERE namespace = ?){collate} UNION ALL "
            f"SELECT (SELECT min({column}) FROM {table} WHERE namespace = ? AND {column} > seen.value){collate} "
            f"FROM seen WHERE seen.value IS NOT NULL) SELECT value FROM seen WHERE value IS NOT NULL"),
            (self.namespace, self.namespace))])


def _by_weight(rows: list[tuple], turn: int) -> list[tuple]:
    """Rows (position, event id, updated key, *class) in the weight order: weight descending, then updatedAt
    descending, then position (Python's sorts are stable, reversed ones too)."""
    weights: dict[tuple, float] = {}

    def weight(row: tuple) -> float:
        key = tuple(row[3:8])
        found = weights.get(key)
        if found is None:
            found = weights[key] = class_weight(key, turn)  # type: ignore[arg-type]
        return found

    ordered = sorted(rows, key=lambda row: row[0])
    ordered.sort(key=lambda row: bytes(row[2]), reverse=True)
    ordered.sort(key=weight, reverse=True)
    return ordered
