"""Read, list, filter, write and delete the records of one section on an open SQL connection.

Each section of the backend contract (see backend.py) maps to one table plus its child tables (a block's
messages, an event's sources, an element's facts and their sources). Reads select explicit v7 column lists,
so extra tables and columns of newer files (v8–v12) are ignored. Writes touch only the records handed in:
a record replaces its row and its child rows; a new record is appended after the section's last position.
An element record without `facts` (optionally appending sources with `addedSourceEventIds`) and the
change-only section `elementFacts` (backend.py) write an element's row and single facts without touching its
other facts and sources.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    LargeBinary,
    Select,
    Table,
    cast,
    delete,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
)

from stratagate.errors import StrataGateError
from stratagate.storage import event_order
from stratagate.storage import records as rec
from stratagate.storage import schema as s
from stratagate.storage.backend import CHANGE_SECTION_KEYS, ELEMENT_FACTS, SECTION_KEYS, Record
from stratagate.storage.driver import driver_rows, marks
from stratagate.storage.event_order import EventOrder
from stratagate.storage.legacy import LegacySchema
from stratagate.storage.packed_keys import SEPARATOR, PackedKeys

CHUNK = 500
"""Keys per IN (...) list: far below SQLite's and PostgreSQL's parameter limits."""
MODEL_RESPONSE_HISTORY_LIMIT = 5


class SectionError(StrataGateError):
    """An unknown section or filter, or a record missing a field it must have."""


def chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), CHUNK):
        yield keys[start : start + CHUNK]


def _key_filter(column, keys: list[str] | None) -> ColumnElement[bool]:
    return true() if keys is None else column.in_(keys)


def _in_order(keys: list[str] | None, *order) -> list:
    """ORDER BY for a whole section; none for a keyed read (the caller orders by the keys asked, and an ORDER BY
    position would make SQLite walk the position index over the whole section instead of the keys)."""
    return list(order) if keys is None else []


_EVENT_COLUMNS = tuple(column.name for column in s.events.columns)


def _keyed_events(connection: Connection, namespace: str, keys: list[str]) -> list[Record]:
    """The events at some ids (a search's hits) and their sources, sent to the driver as they are
    (`driver_rows`); no ORDER BY (see `_in_order`)."""
    if connection.dialect.name == "postgresql":
        # One statement, each event's sources in an array beside it: a round trip less. The ids as one array
        # parameter give one statement text for any number of them, which the driver can prepare.
        rows = driver_rows(connection, (
            f"SELECT {', '.join(_EVENT_COLUMNS)}, ARRAY(SELECT s.message_id FROM event_sources AS s "
            f"WHERE s.namespace = e.namespace AND s.event_id = e.id ORDER BY s.position) "
            f"FROM events AS e WHERE e.namespace = ? AND e.id = ANY(?)"), (namespace, list(keys)))
        return [rec.event_record(dict(zip(_EVENT_COLUMNS, values[:-1], strict=True)), values[-1])
                for values in rows]
    asked = (namespace, *keys)
    rows = driver_rows(connection, f"SELECT {', '.join(_EVENT_COLUMNS)} FROM events "
                                   f"WHERE namespace = ? AND id IN ({marks(len(keys))})", asked)
    sources = _grouped(driver_rows(connection, f"SELECT event_id, message_id FROM event_sources "
                                               f"WHERE namespace = ? AND event_id IN ({marks(len(keys))}) "
                                               f"ORDER BY event_id, position", asked))
    return [rec.event_record(row, sources.get(row["id"], []))
            for row in (dict(zip(_EVENT_COLUMNS, values, strict=True)) for values in rows)]


def upsert(connection: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """INSERT … ON CONFLICT (primary key) DO UPDATE every other column, on SQLite and PostgreSQL alike."""
    if rows:
        connection.exec_driver_sql(driver_sql(connection, _upsert_sql(table)), rows)


def driver_sql(connection: Connection, sql: str) -> str:
    """`sql` with `:name` parameters in the connection's driver's style, to run with `exec_driver_sql` and a
    dict (or a list of dicts). A small commit's statements go to the driver as they are: compiling them and
    SQLAlchemy's processing of every row's parameters cost more than running them, and a new process paid the
    compiling inside its first append that seals a block."""
    return sql if connection.dialect.paramstyle in ("qmark", "named") else _pyformat(sql)


@cache
def _pyformat(sql: str) -> str:
    return re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", sql)


@cache
def _upsert_sql(table: Table) -> str:
    """The same statement on SQLite and PostgreSQL, built once per table."""
    names = [column.name for column in table.columns]
    keys = [column.name for column in table.primary_key.columns]
    columns = ", ".join(f'"{name}"' for name in names)
    values = ", ".join(f":{name}" for name in names)
    conflict = ", ".join(f'"{name}"' for name in keys)
    updates = ", ".join(f'"{name}" = excluded."{name}"' for name in names if name not in keys)
    return (f'INSERT INTO {table.name} ({columns}) VALUES ({values}) '
            f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}")


def _listed(name: str, values: list[str]) -> tuple[str, dict[str, str]]:
    """`:name_0, :name_1, …` for an IN list of `values`, and their parameters."""
    parameters = {f"{name}_{index}": value for index, value in enumerate(values)}
    return ", ".join(f":{key}" for key in parameters), parameters


def _delete_open_tail(connection: Connection, namespace: str, keys: list[str]) -> None:
    marks, parameters = _listed("key", keys)
    sql = f'DELETE FROM messages WHERE "namespace" = :namespace AND "id" IN ({marks}) AND "block_id" IS NULL'
    connection.exec_driver_sql(driver_sql(connection, sql), {"namespace": namespace, **parameters})


def _delete_stale_block_messages(connection: Connection, namespace: str, block: str, keep: list[str]) -> None:
    """A written block's messages that it no longer holds."""
    marks, parameters = _listed("keep", keep)
    kept = f' AND "id" NOT IN ({marks})' if keep else ""
    sql = f'DELETE FROM messages WHERE "namespace" = :namespace AND "block_id" = :block{kept}'
    connection.exec_driver_sql(driver_sql(connection, sql), {"namespace": namespace, "block": block, **parameters})


def _inserted_new(connection: Connection, block_rows: list[dict[str, Any]]) -> bool:
    """Insert the blocks' rows that are new; whether all of them were (else the others are to be updated)."""
    inserted = connection.exec_driver_sql(driver_sql(connection, _INSERT_NEW_BLOCK), block_rows).rowcount
    return inserted == len(block_rows)


_INSERT_NEW_BLOCK = (_upsert_sql(s.blocks).split(" ON CONFLICT ")[0]
                     + ' ON CONFLICT ("namespace", "id") DO NOTHING')
"""A block's row unless its id is stored: for a new block a shorter statement than the upsert (a new
process prepares it in its first seal)."""

_STALE_MESSAGES_AND_BLOCK = (
    'WITH stale AS (DELETE FROM messages WHERE "namespace" = :namespace AND "block_id" = :id '
    'AND NOT ("id" = ANY(:keep))) ' + _upsert_sql(s.blocks))
"""PostgreSQL: a written block's row, and the deletion of the messages it no longer holds (`keep`)."""


def _grouped(pairs: Iterable[Any]) -> dict[str, list[str]]:
    """(parent id, child id) rows, already in child order → parent id → child ids."""
    groups: dict[str, list[str]] = defaultdict(list)
    for parent, child in pairs:
        groups[parent].append(child)
    return groups


class SectionStore:
    """Section reads and writes for one backend (its dialect, whether v9+ pending blocks are hidden, and the
    v5/v6 layout of a file kept in its own schema)."""

    def __init__(self, dialect: str, *, hide_pending_blocks: bool = False, legacy: LegacySchema | None = None):
        self.dialect = dialect
        self.hide_pending_blocks = hide_pending_blocks
        self.legacy = legacy
        """Set for a v5/v6 file kept in its own schema: blocks are read and written in its columns."""
        self._reader_of: dict[str, Callable[[Connection, str, list[str] | None], list[Record]]] | None = None

    # -- public entry points ---------------------------------------------------------------------------

    def read(self, connection: Connection, namespace: str, section: str, keys: list[str] | None) -> list[Record]:
        """Records of a section in section order; all of them when `keys` is None."""
        if self._reader_of is None:  # built once: building readers builds every section's statements' parts
            self._reader_of = self._readers()
        reader = self._reader_of[self._check(section)]
        if keys is None:
            return reader(connection, namespace, None)
        found: dict[str, Record] = {}
        key_name = SECTION_KEYS[section]
        for chunk in chunks(list(dict.fromkeys(keys))):
            found.update((record[key_name], record) for record in reader(connection, namespace, chunk))
        return [found[key] for key in keys if key in found]

    def keys(self, connection: Connection, namespace: str, section: str, where: Record | None) -> list[str]:
        return list(connection.scalars(self._key_statement(namespace, section, where)))

    def packed_keys(
        self, connection: Connection, namespace: str, section: str, where: Record | None, order: EventOrder | None,
        limit: int | None = None,
    ) -> PackedKeys | list[str]:
        """`keys`, packed (a list only if a key holds the packing separator), the first `limit` only if given;
        events may be `order`ed by a shown value. No row object per key: SQLite joins the keys itself (an aggregate over an ordered
        subquery reads it in order), other databases are read from the driver's cursor a chunk at a time."""
        statement = self._key_statement(namespace, section, where)
        if order is not None:
            if section != "events":
                raise SectionError(f"Section {section!r} has no orders (only events do)")
            statement = statement.order_by(None).order_by(*event_order.order_by(self.dialect, order))
        if limit is not None:
            statement = statement.limit(limit)
        if self.dialect == "sqlite":
            ordered = statement.subquery()
            joined = select(func.count(), func.group_concat(ordered.c[0], SEPARATOR)).select_from(ordered)
            count, text = connection.execute(joined).one()
            parts = [text or ""]
        else:
            result = connection.execute(statement)
            parts, count = [], 0
            try:
                while rows := result.cursor.fetchmany(20_000):
                    parts.append(SEPARATOR.join([row[0] for row in rows]))
                    count += len(rows)
            finally:
                result.close()
        packed = PackedKeys.from_joined(parts, count)
        return packed if packed is not None else list(connection.scalars(statement))

    def _key_statement(self, namespace: str, section: str, where: Record | None) -> Select:
        table, key_column, order, base = self._listing(self._check(section))
        clauses = [table.c.namespace == namespace, *base]
        filters = self._filters(section)
        for name, value in (where or {}).items():
            if value is None:  # an unset filter, as the in-memory backend reads it
                continue
            if name not in filters:
                known = ", ".join(sorted(filters)) or "none"
                raise SectionError(f"Section {section!r} has no filter {name!r} (known: {known})")
            clauses.append(filters[name](value))
        return select(key_column).where(*clauses).order_by(*order)

    def filter_values(self, connection: Connection, namespace: str, section: str, name: str) -> list[str]:
        """The distinct values a filter can take in the section (events: `eventType`, `participant`), sorted:
        what a filter box suggests. One pass over the section's JSON, so callers run it off the UI thread."""
        e = s.events
        if (section, name) == ("events", "eventType"):
            value = self._temporal_field(e.c.temporal_json, "eventType")
            statement = select(value).where(e.c.namespace == namespace, value.is_not(None))
        elif (section, name) == ("events", "participant"):
            entries = self._participant_entries(e.c.temporal_json)
            statement = select(entries.c.value).select_from(e).join(entries, literal(True)).where(
                e.c.namespace == namespace, entries.c.value.is_not(None)
            )
        else:
            raise SectionError(f"Section {section!r} lists no values of the filter {name!r}")
        return sorted({str(value) for value in connection.scalars(statement.distinct()) if str(value).strip()})

    def statuses(self, connection: Connection, namespace: str, section: str, wanted: list[str]) -> dict[str, str]:
        """Key → status of the records whose status is one of `wanted`, in one pass over the section."""
        table, key_column, order, base = self._listing(self._check(section))
        if section == "events" and "active" not in wanted:
            base = [*base, s.EVENT_NOT_ACTIVE]  # answered by the partial index of the events not active
        statement = select(key_column, table.c.status).where(
            table.c.namespace == namespace, table.c.status.in_(wanted), *base
        ).order_by(*order)
        return {key: status for key, status in connection.execute(statement)}

    def tail(self, connection: Connection, namespace: str, section: str, known: int) -> tuple[int, list[str]]:
        """How many keys a section holds, and the keys after the first `known` in section order."""
        table, key_column, order, base = self._listing(self._check(section))
        clauses = [table.c.namespace == namespace, *base]
        count = connection.scalar(select(func.count()).select_from(table).where(*clauses)) or 0
        if count <= known:
            return count, []
        statement = select(key_column).where(*clauses).order_by(*order).offset(known)
        return count, list(connection.scalars(statement))

    def write(
        self,
        connection: Connection,
        namespace: str,
        section: str,
        records: list[Record],
        readded: frozenset[str] = frozenset(),
    ) -> None:
        """Insert or replace records. A replaced record keeps its place, except the `readded` keys (deleted in
        the same change): those go after the last record, like new ones, in the order given."""
        writer = self._writers()[self._check(section, change=True)]
        key_name = CHANGE_SECTION_KEYS[section]
        try:
            writer(connection, namespace, records, readded)
        except KeyError as missing:
            culprit = next((r.get(key_name) for r in records if missing.args[0] not in r), "?")
            raise SectionError(
                f"{section} record {culprit!r} is missing the field {missing.args[0]!r}"
            ) from None

    def delete(self, connection: Connection, namespace: str, section: str, keys: list[str]) -> None:
        table, key_column, _order, base = self._listing(self._check(section, change=True))
        if section == "openTail":  # sealing deletes from the open tail: plain SQL, nothing to compile
            for chunk in chunks(keys):
                _delete_open_tail(connection, namespace, chunk)
            return
        for chunk in chunks(keys):
            connection.execute(
                delete(table).where(table.c.namespace == namespace, key_column.in_(chunk), *base)
            )

    @staticmethod
    def _check(section: str, *, change: bool = False) -> str:
        """A section that can be read, or with `change` also one that only a ChangeSet names."""
        known = CHANGE_SECTION_KEYS if change else SECTION_KEYS
        if section not in known:
            raise SectionError(f"Unknown section {section!r} (known: {', '.join(known)})")
        return section

    # -- table, key, order and base filter of each section ---------------------------------------------

    def _listing(self, section: str) -> tuple[Table, Any, list[Any], list[ColumnElement[bool]]]:
        m, b = s.messages, s.blocks
        block_base = [literal_column("processing_status") == "ready"] if self.hide_pending_blocks else []
        return {
            "openTail": (m, m.c.id, [m.c.position, m.c.id], [m.c.block_id.is_(None)]),
            "blocks": (b, b.c.id, [b.c.sequence], block_base),
            "events": (s.events, s.events.c.id, [s.events.c.position, s.events.c.id], []),
            "elements": (s.elements, s.elements.c.id, [s.elements.c.position, s.elements.c.id], []),
            ELEMENT_FACTS: (
                s.element_facts, s.element_facts.c.id, [s.element_facts.c.element_id, s.element_facts.c.position], []
            ),
            "extractionJobs": (
                s.extraction_jobs, s.extraction_jobs.c.block_id, [s.extraction_jobs.c.block_id], []
            ),
            "elementProjectionJobs": (
                s.element_projection_jobs,
                s.element_projection_jobs.c.id,
                [s.element_projection_jobs.c.created_at, s.element_projection_jobs.c.id],
                [],
            ),
            "usageReceipts": (
                s.usage_receipts,
                s.usage_receipts.c.receipt_id,
                [s.usage_receipts.c.created_at, s.usage_receipts.c.receipt_id],
                [],
            ),
            "ingestionReceipts": (
                s.ingestion_receipts,
                s.ingestion_receipts.c.receipt_id,
                [s.ingestion_receipts.c.created_at, s.ingestion_receipts.c.receipt_id],
                [],
            ),
            "successfulModelResponses": (
                s.model_response_history,
                s.model_response_history.c.id,
                [s.model_response_history.c.created_at, s.model_response_history.c.id],
                [],
            ),
        }[section]

    # -- filters for query_keys ------------------------------------------------------------------------

    def _filters(self, section: str) -> dict[str, Callable[[Any], ColumnElement[bool]]]:
        e, m, b, el = s.events, s.messages, s.blocks, s.elements

        # A substring test, not LIKE: SQLite refuses a LIKE pattern over 50,000 bytes (a pasted text), and
        # the text needs no escaping. lower() folds case as LIKE's ASCII-only folding does on SQLite.
        position_in = func.strpos if self.dialect == "postgresql" else func.instr

        def text_in(*columns) -> Callable[[Any], ColumnElement[bool]]:
            return lambda value: or_(*(position_in(func.lower(column), func.lower(literal(str(value)))) > 0
                                       for column in columns))

        def thread(column) -> Callable[[Any], ColumnElement[bool]]:
            return lambda value: or_(column.is_(None), column == "") if value == "" else column == value

        def equals(column) -> Callable[[Any], ColumnElement[bool]]:
            """One value, or any of a list of values."""
            return lambda value: (
                column.in_(list(value)) if isinstance(value, list | tuple | set | frozenset) else column == value
            )

        filters: dict[str, dict[str, Callable[[Any], ColumnElement[bool]]]] = {
            "events": {
                "status": equals(e.c.status),
                "criticality": equals(e.c.criticality),
                "scope": equals(e.c.scope),
                "eventType": lambda value: self._temporal_field(e.c.temporal_json, "eventType") == value,
                "participant": lambda value: self._has_participant(e.c.temporal_json, value),
                "threadId": lambda value: e.c.source_block_id.in_(
                    select(b.c.id).where(b.c.namespace == e.c.namespace, thread(b.c.thread_id)(value))
                ),
                "sourceBlockId": equals(e.c.source_block_id),
                "pinned": lambda value: e.c.pinned == (1 if value else 0),
                "text": text_in(e.c.id, e.c.title, e.c.summary, e.c.narrative),
                "idContains": text_in(e.c.id),
            },
            "blocks": {
                "threadId": thread(b.c.thread_id),
                "messageId": lambda value: b.c.id.in_(
                    select(m.c.block_id).where(m.c.namespace == b.c.namespace, m.c.id == value)
                ),
                "text": text_in(b.c.id, b.c.l0_title, b.c.l1_summary, b.c.l3_condensed),
                "messageTokens": lambda tokens: exists(
                    select(literal(1)).where(m.c.namespace == b.c.namespace, m.c.block_id == b.c.id,
                                             self._may_share_token(m.c.content, tokens))
                ),
            },
            "openTail": {
                "threadId": thread(m.c.thread_id),
                "role": equals(m.c.role),
                "text": text_in(m.c.id, m.c.content),
            },
            "elements": {
                "type": equals(el.c.type),
                "text": text_in(el.c.id, el.c.name, el.c.aliases_json, el.c.current_state),
                "factStatus": lambda value: el.c.id.in_(
                    select(s.element_facts.c.element_id).where(
                        s.element_facts.c.namespace == el.c.namespace, s.element_facts.c.status == value
                    )
                ),
            },
            "extractionJobs": {"status": equals(s.extraction_jobs.c.status)},
            "elementProjectionJobs": {"status": equals(s.element_projection_jobs.c.status)},
            "successfulModelResponses": {"kind": equals(s.model_response_history.c.kind)},
        }
        return filters.get(section, {})

    def _temporal_field(self, column, field: str) -> ColumnElement[Any]:
        return event_order.temporal_field(self.dialect, column, field)

    def _may_share_token(self, column, tokens: list[str]) -> ColumnElement[bool]:
        """True for every text whose search tokens (`search.tokenize`) include one of `tokens`, and for some
        others: a superset the caller narrows by tokenizing. ASCII text is its own NFKC form, lower-cased as
        SQL folds ASCII case, and a word token is a substring of that, so ASCII text is kept only when it holds
        one of the ASCII words; non-ASCII text (where NFKC and ICU's case mapping differ from SQL's) is kept."""
        if self.dialect == "sqlite":
            # length() counts characters (up to a NUL), of a BLOB bytes: equal only for ASCII without NUL.
            non_ascii = func.length(cast(column, LargeBinary)) != func.length(column)
            # SQLite's LIKE ignores ASCII case by itself; lower() would copy every text first.
            contains = column.contains
        else:
            non_ascii = func.octet_length(column) != func.char_length(column)
            contains = column.icontains
        words = sorted({token[len("word:"):] for token in tokens if token.startswith("word:") and token.isascii()})
        return or_(non_ascii, *(contains(word, autoescape=True) for word in words))

    def _participant_entries(self, column) -> Any:
        """temporal.participants as a table of `value`s, one row per participant."""
        if self.dialect == "sqlite":
            return func.json_each(column, "$.participants").table_valued("value")
        return func.jsonb_array_elements_text(
            func.coalesce(cast(column, event_order.jsonb())["participants"], func.jsonb_build_array())
        ).table_valued("value")

    def _has_participant(self, column, name: str) -> ColumnElement[bool]:
        """Case-insensitive (ASCII case, as SQL lower() folds it) membership in temporal.participants."""
        entries = self._participant_entries(column)
        return exists(
            select(literal(1)).select_from(entries).where(func.lower(entries.c.value) == func.lower(str(name)))
        )

    # -- readers ---------------------------------------------------------------------------------------

    def _readers(self) -> dict[str, Callable[[Connection, str, list[str] | None], list[Record]]]:
        return {
            "openTail": self._read_open_tail,
            "blocks": self._read_blocks,
            "events": self._read_events,
            "elements": self._read_elements,
            "extractionJobs": self._simple_reader("extractionJobs", rec.extraction_job_record),
            "elementProjectionJobs": self._simple_reader("elementProjectionJobs", rec.projection_job_record),
            "usageReceipts": self._simple_reader("usageReceipts", rec.usage_receipt_record),
            "ingestionReceipts": self._simple_reader("ingestionReceipts", rec.ingestion_receipt_record),
            "successfulModelResponses": self._simple_reader(
                "successfulModelResponses", rec.model_response_record
            ),
        }

    def _simple_reader(self, section: str, to_record: Callable[[Any], Record]):
        table, key_column, order, base = self._listing(section)

        def read(connection: Connection, namespace: str, keys: list[str] | None) -> list[Record]:
            statement = (
                select(table)
                .where(table.c.namespace == namespace, _key_filter(key_column, keys), *base)
                .order_by(*_in_order(keys, *order))
            )
            return [to_record(row) for row in connection.execute(statement).mappings().all()]

        return read

    def _read_open_tail(self, connection: Connection, namespace: str, keys: list[str] | None) -> list[Record]:
        m = s.messages
        statement = (
            select(m)
            .where(m.c.namespace == namespace, m.c.block_id.is_(None), _key_filter(m.c.id, keys))
            .order_by(*_in_order(keys, m.c.position, m.c.id))
        )
        return [rec.message_record(row) for row in connection.execute(statement).mappings().all()]

    def _read_blocks(self, connection: Connection, namespace: str, keys: list[str] | None) -> list[Record]:
        b, m = (s.blocks if self.legacy is None else self.legacy.blocks), s.messages
        _table, _key, order, base = self._listing("blocks")
        rows = connection.execute(
            select(b)
            .where(b.c.namespace == namespace, _key_filter(b.c.id, keys), *base)
            .order_by(*_in_order(keys, *order))
        ).mappings().all()
        if self.legacy is not None:
            rows = self.legacy.block_rows_read(connection, namespace, rows)
        block_ids = None if keys is None else [row["id"] for row in rows]
        raw: dict[str, list[Record]] = defaultdict(list)
        # Keyed: `block_id IN (...)` alone, which SQLite looks up per key; beside `IS NOT NULL` it would range
        # over every sealed message of the namespace instead.
        held = m.c.block_id.is_not(None) if block_ids is None else m.c.block_id.in_(block_ids)
        message_rows = connection.execute(
            select(m)
            .where(m.c.namespace == namespace, held)
            .order_by(m.c.block_id, m.c.position)
        ).mappings().all()
        for row in message_rows:
            raw[row["block_id"]].append(rec.message_record(row))
        return [rec.block_record(row, raw.get(row["id"], [])) for row in rows]

    def _read_events(self, connection: Connection, namespace: str, keys: list[str] | None) -> list[Record]:
        e, es = s.events, s.event_sources
        if keys is not None:
            return _keyed_events(connection, namespace, keys)
        rows = connection.execute(
            select(e).where(e.c.namespace == namespace).order_by(e.c.position, e.c.id)
        ).mappings().all()
        sources = _grouped(
            connection.execute(
                select(es.c.event_id, es.c.message_id)
                .where(es.c.namespace == namespace)
                .order_by(es.c.event_id, es.c.position)
            )
        )
        return [rec.event_record(row, sources.get(row["id"], [])) for row in rows]

    def _read_elements(self, connection: Connection, namespace: str, keys: list[str] | None) -> list[Record]:
        el, src, f, fs, es = (
            s.elements, s.element_sources, s.element_facts, s.element_fact_sources, s.event_sources
        )
        rows = connection.execute(
            select(el)
            .where(el.c.namespace == namespace, _key_filter(el.c.id, keys))
            .order_by(*_in_order(keys, el.c.position, el.c.id))
        ).mappings().all()
        element_sources = _grouped(
            connection.execute(
                select(src.c.element_id, src.c.event_id)
                .where(src.c.namespace == namespace, _key_filter(src.c.element_id, keys))
                .order_by(src.c.element_id, src.c.position)
            )
        )
        fact_rows = connection.execute(
            select(f)
            .where(f.c.namespace == namespace, _key_filter(f.c.element_id, keys))
            .order_by(f.c.element_id, f.c.position)
        ).mappings().all()
        fact_ids = select(f.c.id).where(f.c.namespace == namespace, _key_filter(f.c.element_id, keys))
        fact_sources = _grouped(
            connection.execute(
                select(fs.c.fact_id, fs.c.event_id)
                .where(fs.c.namespace == namespace, fs.c.fact_id.in_(fact_ids))
                .order_by(fs.c.fact_id, fs.c.position)
            )
        )
        cited_events = select(src.c.event_id).where(
            src.c.namespace == namespace, _key_filter(src.c.element_id, keys)
        )
        event_messages = _grouped(
            connection.execute(
                select(es.c.event_id, es.c.message_id)
                .where(es.c.namespace == namespace, es.c.event_id.in_(cited_events))
                .order_by(es.c.event_id, es.c.position)
            )
        )
        facts: dict[str, list[Record]] = defaultdict(list)
        for row in fact_rows:
            facts[row["element_id"]].append(rec.fact_record(row, fact_sources.get(row["id"], [])))
        result = []
        for row in rows:
            event_ids = element_sources.get(row["id"], [])
            # sourceMessageIds is not stored: it is the union of the source events' messages (spec §8.3).
            message_ids = list(dict.fromkeys(m for event_id in event_ids for m in event_messages.get(event_id, [])))
            result.append(rec.element_record(row, facts.get(row["id"], []), event_ids, message_ids))
        return result

    # -- writers ---------------------------------------------------------------------------------------

    def _writers(self) -> dict[str, Callable[[Connection, str, list[Record], frozenset[str]], None]]:
        return {
            "openTail": self._write_open_tail,
            "blocks": self._write_blocks,
            "events": self._write_events,
            "elements": self._write_elements,
            ELEMENT_FACTS: self._write_element_facts,
            "extractionJobs": self._simple_writer(s.extraction_jobs, rec.extraction_job_row),
            "elementProjectionJobs": self._simple_writer(s.element_projection_jobs, rec.projection_job_row),
            "usageReceipts": self._simple_writer(s.usage_receipts, rec.usage_receipt_row),
            "ingestionReceipts": self._simple_writer(s.ingestion_receipts, rec.ingestion_receipt_row),
            "successfulModelResponses": self._write_model_responses,
        }

    @staticmethod
    def _simple_writer(table: Table, to_row: Callable[[str, Record], dict[str, Any]]):
        def write(connection: Connection, namespace: str, records: list[Record], _readded: frozenset[str]) -> None:
            upsert(connection, table, [to_row(namespace, record) for record in records])

        return write

    @staticmethod
    def _positions(
        connection: Connection,
        table: Table,
        namespace: str,
        keys: list[str],
        readded: frozenset[str],
        *scope: ColumnElement[bool],
    ) -> list[int]:
        """Existing records keep their position; new and re-added ones go after the last, in the order given."""
        existing: dict[str, int] = {}
        for chunk in chunks(keys):
            rows = connection.execute(
                select(table.c.id, table.c.position).where(
                    table.c.namespace == namespace, table.c.id.in_(chunk), *scope
                )
            )
            existing.update((key, position) for key, position in rows)
        last = connection.scalar(
            select(func.max(table.c.position)).where(table.c.namespace == namespace, *scope)
        )
        next_position = -1 if last is None else last
        positions = []
        for key in keys:
            if key not in existing or key in readded:
                next_position += 1
                existing[key] = next_position
            positions.append(existing[key])
        return positions

    def _write_open_tail(
        self, connection: Connection, namespace: str, records: list[Record], readded: frozenset[str]
    ) -> None:
        keys = [r["id"] for r in records]
        positions = self._positions(connection, s.messages, namespace, keys, readded, s.messages.c.block_id.is_(None))
        rows = [rec.message_row(namespace, r, None, p) for r, p in zip(records, positions, strict=True)]
        upsert(connection, s.messages, rows)

    def _write_blocks(
        self, connection: Connection, namespace: str, records: list[Record], _readded: frozenset[str]
    ) -> None:
        block_rows = [rec.block_row(namespace, block) for block in records]
        message_rows = [rec.message_row(namespace, message, block["id"], position)
                        for block in records for position, message in enumerate(block["l5Raw"])]
        if self.legacy is None and _inserted_new(connection, block_rows):
            pass  # New blocks (a seal): no message names them yet, so none to drop and no row to update.
        elif self.legacy is None and self.dialect == "postgresql":
            # Each block's row and the deletion of the messages it no longer holds in one statement: a round
            # trip less per block (the messages' rows follow in one batch).
            connection.exec_driver_sql(_pyformat(_STALE_MESSAGES_AND_BLOCK), [
                {**row, "keep": [message["id"] for message in block["l5Raw"]]}
                for row, block in zip(block_rows, records, strict=True)])
        else:
            if self.legacy is None:
                upsert(connection, s.blocks, block_rows)
            else:
                written = self.legacy.block_rows_written(connection, namespace, block_rows)
                upsert(connection, self.legacy.blocks, written)
            for block in records:
                message_ids = [message["id"] for message in block["l5Raw"]]
                _delete_stale_block_messages(connection, namespace, block["id"], message_ids)
        upsert(connection, s.messages, message_rows)

    def _write_events(
        self, connection: Connection, namespace: str, records: list[Record], readded: frozenset[str]
    ) -> None:
        es = s.event_sources
        keys = [event["id"] for event in records]
        positions = self._positions(connection, s.events, namespace, keys, readded)
        rows = [rec.event_row(namespace, r, p) for r, p in zip(records, positions, strict=True)]
        upsert(connection, s.events, rows)
        for chunk in chunks(keys):
            connection.execute(delete(es).where(es.c.namespace == namespace, es.c.event_id.in_(chunk)))
        source_rows = [
            {"namespace": namespace, "event_id": event["id"], "message_id": message_id, "position": position}
            for event in records
            for position, message_id in enumerate(event["sourceMessageIds"])
        ]
        if source_rows:
            connection.execute(es.insert(), source_rows)

    def _write_elements(
        self, connection: Connection, namespace: str, records: list[Record], readded: frozenset[str]
    ) -> None:
        src, f, fs = s.element_sources, s.element_facts, s.element_fact_sources
        keys = [element["id"] for element in records]
        positions = self._positions(connection, s.elements, namespace, keys, readded)
        upsert(
            connection,
            s.elements,
            [rec.element_row(namespace, r, p) for r, p in zip(records, positions, strict=True)],
        )
        # Whole source lists replace the stored ones; `addedSourceEventIds` go after them (backend.py).
        replaced = [e["id"] for e in records if "addedSourceEventIds" not in e or e["id"] in readded]
        for chunk in chunks(replaced):
            connection.execute(delete(src).where(src.c.namespace == namespace, src.c.element_id.in_(chunk)))
        fact_rows, source_rows, fact_source_rows = [], [], []
        for element in records:
            if "addedSourceEventIds" in element:
                event_ids, start = element["addedSourceEventIds"], self._next_source_position(connection, namespace, element["id"])
            else:
                event_ids, start = element["sourceEventIds"], 0
            source_rows += [
                {"namespace": namespace, "element_id": element["id"], "event_id": event_id, "position": start + i}
                for i, event_id in enumerate(event_ids)
            ]
            if "facts" not in element:  # the element's own fields only: its facts stay as stored
                if element["id"] in readded:  # unless it was deleted in this change: then it has none
                    connection.execute(delete(f).where(f.c.namespace == namespace, f.c.element_id == element["id"]))
                continue
            fact_ids = [fact["id"] for fact in element["facts"]]
            connection.execute(
                delete(f).where(f.c.namespace == namespace, f.c.element_id == element["id"], f.c.id.not_in(fact_ids))
            )
            for position, fact in enumerate(element["facts"]):
                fact_rows.append(rec.fact_row(namespace, fact, element["id"], position))
                fact_source_rows += [
                    {"namespace": namespace, "fact_id": fact["id"], "event_id": event_id, "position": i}
                    for i, event_id in enumerate(fact["sourceEventIds"])
                ]
        upsert(connection, f, fact_rows)
        fact_keys = [row["id"] for row in fact_rows]
        for chunk in chunks(fact_keys):
            connection.execute(delete(fs).where(fs.c.namespace == namespace, fs.c.fact_id.in_(chunk)))
        if source_rows:
            connection.execute(src.insert(), source_rows)
        if fact_source_rows:
            connection.execute(fs.insert(), fact_source_rows)

    @staticmethod
    def _next_source_position(connection: Connection, namespace: str, element_id: str) -> int:
        src = s.element_sources
        last = connection.scalar(
            select(func.max(src.c.position)).where(src.c.namespace == namespace, src.c.element_id == element_id)
        )
        return 0 if last is None else last + 1

    def _write_element_facts(
        self, connection: Connection, namespace: str, records: list[Record], readded: frozenset[str]
    ) -> None:
        """Single facts: a known fact keeps its position in its element, a new one goes after the element's last."""
        f, fs = s.element_facts, s.element_fact_sources
        by_element: dict[str, list[Record]] = defaultdict(list)
        for fact in records:
            by_element[fact["elementId"]].append(fact)
        fact_rows = []
        for element_id, facts in by_element.items():
            keys = [fact["id"] for fact in facts]
            positions = self._positions(connection, f, namespace, keys, readded, f.c.element_id == element_id)
            fact_rows += [
                rec.fact_row(namespace, fact, element_id, position)
                for fact, position in zip(facts, positions, strict=True)
            ]
        upsert(connection, f, fact_rows)
        keys = [fact["id"] for fact in records]
        for chunk in chunks(keys):
            connection.execute(delete(fs).where(fs.c.namespace == namespace, fs.c.fact_id.in_(chunk)))
        source_rows = [
            {"namespace": namespace, "fact_id": fact["id"], "event_id": event_id, "position": i}
            for fact in records
            for i, event_id in enumerate(fact["sourceEventIds"])
        ]
        if source_rows:
            connection.execute(fs.insert(), source_rows)

    def _write_model_responses(
        self, connection: Connection, namespace: str, records: list[Record], _readded: frozenset[str]
    ) -> None:
        table = s.model_response_history
        upsert(connection, table, [rec.model_response_row(namespace, r) for r in records])
        # Only the last five (by created_at, id) are kept, as the reference's history does.
        keep = (
            select(table.c.id)
            .where(table.c.namespace == namespace)
            .order_by(table.c.created_at.desc(), table.c.id.desc())
            .limit(MODEL_RESPONSE_HISTORY_LIMIT)
        )
        connection.execute(
            delete(table).where(table.c.namespace == namespace, table.c.id.not_in(keep))
        )
