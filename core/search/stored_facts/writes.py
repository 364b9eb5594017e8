"""Building the element index and keeping it current: a commit that writes elements or facts re-derives the
documents of the elements it touches in the same transaction (`Upkeep`), so the index is never behind the rows
it indexes."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, cast, delete, insert, select, update

from stratagate.cancellation import checkpoint
from stratagate.search.stored.tables import Progress, chunks
from stratagate.search.stored_facts import postings
from stratagate.search.stored_facts.documents import (
    FactDocument,
    IndexedElement,
    element_columns,
    fact_document,
    fact_fields,
    fact_row,
    read_elements,
)
from stratagate.search.stored_facts.tables import FACT_INDEX_FORMAT, create_tables, drop_namespace, has_tables
from stratagate.storage import bulk, schema
from stratagate.storage import fact_search_tables as t

BUILD_BATCH = 4000
"""Elements tokenized between two appends of their postings to the term blobs during a build."""


def build(
    connection: Connection,
    namespace: str,
    elements: Iterable[IndexedElement],
    total: int,
    revision: int,
    progress: Progress | None = None,
) -> None:
    """Replace the namespace's element index with one of `elements` (all of them, in section order),
    current at the namespace's `revision`, in the caller's transaction; `progress(facts done, total)`."""
    create_tables(connection)
    drop_namespace(connection, namespace)
    slot = total_length = 0
    batch: list[IndexedElement] = []

    def flush() -> None:
        nonlocal slot, total_length
        first = slot == 0
        term_postings: dict[str, list[int]] = defaultdict(list)
        placed: list[tuple[int, FactDocument]] = []
        for element in batch:
            for fact_id, position, key, value in element.facts:
                document = fact_document(element, fact_id, position, key, value)
                placed.append((slot, document))
                for term, frequency in document.counts.items():
                    term_postings[term] += (slot, frequency, document.length)
                total_length += document.length
                slot += 1
        _insert_rows(connection, namespace, placed, batch)
        rows = postings.settled_rows(namespace, term_postings)
        if first:  # the namespace's terms were dropped: every one is new
            bulk.insert_rows(connection, t.search_fact_terms, rows)
        else:
            terms = t.search_fact_terms
            bulk.upsert_rows(
                connection,
                terms,
                rows,
                lambda excluded: {
                    "count": terms.c.count + excluded.count,
                    # SQLite's || yields TEXT (with the same bytes): cast back to a blob.
                    "postings": cast(terms.c.postings.concat(excluded.postings), t.Blob),
                },
            )
        batch.clear()
        if progress:
            progress(slot, total)

    for element in elements:
        checkpoint()  # a cancelled build rolls back (or leaves no cache file)
        batch.append(element)
        if len(batch) >= BUILD_BATCH:
            flush()
    flush()
    connection.execute(
        insert(t.search_fact_state).values(
            namespace=namespace,
            format=FACT_INDEX_FORMAT,
            revision=revision,
            documents=slot,
            total_length=total_length,
            next_slot=slot,
        )
    )


def _insert_rows(
    connection: Connection,
    namespace: str,
    placed: list[tuple[int, FactDocument]],
    elements: list[IndexedElement],
) -> None:
    _insert_facts(connection, namespace, [(slot, document.row) for slot, document in placed])
    _insert_names(connection, namespace, elements)


def _insert_facts(connection: Connection, namespace: str, rows: list[tuple[int, dict[str, Any]]]) -> None:
    bulk.insert_rows(
        connection, t.search_facts, [{"namespace": namespace, "slot": slot, **row} for slot, row in rows]
    )


def _insert_names(connection: Connection, namespace: str, elements: list[IndexedElement]) -> None:
    bulk.insert_rows(
        connection,
        t.search_fact_names,
        [
            {"namespace": namespace, "name": name, "element_id": element.id}
            for element in elements
            for name in sorted(element.names())
        ],
    )


@dataclass
class Upkeep:
    """One commit's upkeep of the element index: `before` reads the touched elements as indexed, before the
    commit writes its sections; `after` re-reads them and applies the differences."""

    namespace: str
    expected_revision: int
    elements: list[str]
    indexed: dict[str, IndexedElement]

    @classmethod
    def before(
        cls,
        connection: Connection,
        namespace: str,
        expected_revision: int,
        upserts: Mapping[str, list[Any]],
        deletes: Mapping[str, list[str]],
    ) -> Upkeep | None:
        """None when the namespace has no element index current at `expected_revision` here (a search rebuilds
        it), else the upkeep of this commit."""
        if not has_tables(connection):
            return None
        state = t.search_fact_state
        revision = connection.scalar(
            select(state.c.revision).where(
                state.c.namespace == namespace, state.c.format == FACT_INDEX_FORMAT
            )
        )
        if revision != expected_revision:
            return None
        elements = [record.get("id") for record in upserts.get("elements", []) if isinstance(record, dict)]
        elements += deletes.get("elements", [])
        facts = [record.get("id") for record in upserts.get("elementFacts", []) if isinstance(record, dict)]
        elements += [
            record.get("elementId") for record in upserts.get("elementFacts", []) if isinstance(record, dict)
        ]
        facts += deletes.get("elementFacts", [])
        facts += [
            fact.get("id")
            for record in upserts.get("elements", [])
            if isinstance(record, dict)
            for fact in record.get("facts") or []
            if isinstance(fact, dict)
        ]
        elements += _owners(connection, namespace, [key for key in facts if isinstance(key, str)])
        touched = list(dict.fromkeys(key for key in elements if isinstance(key, str)))
        return cls(
            namespace,
            expected_revision,
            touched,
            {element.id: element for element in read_elements(connection, namespace, touched)},
        )

    def after(self, connection: Connection) -> None:
        state = t.search_fact_state
        connection.execute(
            update(state)
            .where(
                state.c.namespace == self.namespace,
                state.c.revision == self.expected_revision,
            )
            .values(revision=self.expected_revision + 1)
        )
        if self.elements:
            _apply(
                connection,
                self.namespace,
                self.indexed,
                {element.id: element for element in read_elements(connection, self.namespace, self.elements)},
            )


def _owners(connection: Connection, namespace: str, facts: list[str]) -> list[str]:
    """The elements that hold these facts now."""
    f = schema.element_facts
    owners = []
    for chunk in chunks(facts):
        owners += (
            connection.execute(select(f.c.element_id).where(f.c.namespace == namespace, f.c.id.in_(chunk)))
            .scalars()
            .all()
        )
    return owners


def _apply(
    connection: Connection,
    namespace: str,
    before: dict[str, IndexedElement],
    after: dict[str, IndexedElement],
) -> None:
    """Apply the differences between the touched elements as indexed (`before`) and as written (`after`).

    Only a fact whose search text changed is tokenized (before and after); one whose text stayed keeps its
    postings and its row, whose element columns (type, updatedAt, element position) are set per element."""
    facts, state_table = t.search_facts, t.search_fact_state
    stored: dict[str, tuple[int, int]] = {}
    for chunk in chunks(list(before)):
        stored.update(
            (fact_id, (slot, length))
            for fact_id, slot, length in connection.execute(
                select(facts.c.fact_id, facts.c.slot, facts.c.length).where(
                    facts.c.namespace == namespace, facts.c.element_id.in_(chunk)
                )
            )
        )
    old = {fact[0]: (element, *fact) for element in before.values() for fact in element.facts}
    new = {fact[0]: (element, *fact) for element in after.values() for fact in element.facts}
    state = connection.execute(select(state_table).where(state_table.c.namespace == namespace)).one()
    documents, total_length, next_slot = state.documents, state.total_length, state.next_slot
    changes: postings.Changes = defaultdict(dict)
    count_delta: Counter[str] = Counter()
    cleared: list[int] = []
    placed: list[tuple[int, dict[str, Any]]] = []
    for fact_id in list(old) + [key for key in new if key not in old]:
        was, now = old.get(fact_id), new.get(fact_id)
        if (
            was is not None
            and now is not None
            and fact_fields(was[0], *was[3:]) == fact_fields(now[0], *now[3:])
        ):
            slot, length = stored[fact_id]
            if (was[0].id, was[2]) != (now[0].id, now[2]):  # same postings, another place
                cleared.append(slot)
                placed.append((slot, fact_row(now[0], fact_id, now[2], length)))
            continue
        slot = next_slot
        if was is not None:
            slot, length = stored[fact_id]
            for term in fact_document(*was).counts:
                changes[term][slot] = (0, 0)
                count_delta[term] -= 1
            documents -= 1
            total_length -= length
            cleared.append(slot)
        elif now is not None:
            next_slot += 1
        if now is not None:
            document = fact_document(*now)
            for term, frequency in document.counts.items():
                changes[term][slot] = (frequency, document.length)
                count_delta[term] += 1
            documents += 1
            total_length += document.length
            placed.append((slot, document.row))
    for element in after.values():
        was_element = before.get(element.id)
        if was_element is not None and element_columns(was_element) != element_columns(element):
            connection.execute(
                update(facts)
                .where(facts.c.namespace == namespace, facts.c.element_id == element.id)
                .values(element_columns(element))
            )
    for chunk in chunks(cleared):
        connection.execute(delete(facts).where(facts.c.namespace == namespace, facts.c.slot.in_(chunk)))
    _insert_facts(connection, namespace, placed)
    renamed = [
        key
        for key in dict.fromkeys([*before, *after])
        if (before[key].names() if key in before else None) != (after[key].names() if key in after else None)
    ]
    names = t.search_fact_names
    for chunk in chunks(renamed):
        connection.execute(delete(names).where(names.c.namespace == namespace, names.c.element_id.in_(chunk)))
    _insert_names(connection, namespace, [after[key] for key in renamed if key in after])
    if changes:
        postings.write_changes(connection, namespace, changes, count_delta)
    connection.execute(
        update(state_table)
        .where(state_table.c.namespace == namespace)
        .values(documents=documents, total_length=total_length, next_slot=next_slot)
    )
