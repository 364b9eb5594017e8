"""The element index's postings: reading a query's terms and writing a commit's changes, as the event index
keeps its own (`stratagate.search.stored.terms`: a settled blob per term plus the changes written since)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from sqlalchemy import Connection, delete, func, select, update

from stratagate.arrays import np
from stratagate.search.stored.tables import chunks, driver_rows, marks, replace, upsert
from stratagate.search.stored.terms import SETTLE_AFTER, TRIPLE, merge
from stratagate.storage import fact_search_tables as t

Changes = dict[str, dict[int, tuple[int, int]]]
"""term → slot → (frequency, length); frequency 0: the document left the term."""


def read(connection: Connection, namespace: str, terms: list[str]) -> list[tuple[str, int, np.ndarray]]:
    """(term, document frequency, current (slot, frequency, length) triples) of each indexed query term, in
    query order."""
    settled = {
        term: (count, postings)
        for term, count, postings in driver_rows(
            connection,
            f"SELECT term, count, postings FROM search_fact_terms WHERE namespace = ? AND count > 0 "
            f"AND term IN ({marks(len(terms))})",
            (namespace, *terms),
        )
    }
    overlay: dict[str, list[Any]] = defaultdict(list)
    if settled:
        for term, slot, frequency, length in driver_rows(
            connection,
            f"SELECT term, slot, frequency, length FROM search_fact_term_changes "
            f"WHERE namespace = ? AND term IN ({marks(len(settled))})",
            (namespace, *settled),
        ):
            overlay[term].append((slot, frequency, length))
    return [
        (term, settled[term][0], merge(bytes(settled[term][1]), overlay.get(term, [])).triples())
        for term in terms
        if term in settled
    ]


def settled_rows(namespace: str, postings: dict[str, list[int]]) -> list[dict[str, Any]]:
    """`search_fact_terms` rows for flat (slot, frequency, length) lists, in key order."""
    return [
        {
            "namespace": namespace,
            "term": term,
            "count": len(triples) // 3,
            "pending": 0,
            "postings": np.asarray(triples, dtype=TRIPLE).tobytes(),
        }
        for term, triples in sorted(postings.items())
    ]


def write_changes(
    connection: Connection, namespace: str, changes: Changes, count_delta: Counter[str]
) -> None:
    """Record the changed postings and document frequencies; settle the terms whose changes outgrew their
    blob."""
    terms, term_changes = t.search_fact_terms, t.search_fact_term_changes
    replace(
        connection,
        term_changes,
        [
            {"namespace": namespace, "term": term, "slot": slot, "frequency": frequency, "length": length}
            for term, by_slot in changes.items()
            for slot, (frequency, length) in by_slot.items()
        ],
    )
    upsert(
        connection,
        terms,
        [
            {
                "namespace": namespace,
                "term": term,
                "count": count_delta[term],
                "pending": len(by_slot),
                "postings": b"",
            }
            for term, by_slot in changes.items()
        ],
        lambda excluded: {
            "count": terms.c.count + excluded.count,
            "pending": terms.c.pending + excluded.pending,
        },
    )
    due = []
    for chunk in chunks(list(changes)):
        due += (
            connection.execute(
                select(terms.c.term).where(
                    terms.c.namespace == namespace,
                    terms.c.term.in_(chunk),
                    terms.c.pending > SETTLE_AFTER,
                    terms.c.pending * (8 * np.dtype(TRIPLE).itemsize * 3) > func.length(terms.c.postings),
                )
            )
            .scalars()
            .all()
        )
    for term in due:
        _settle(connection, namespace, term)


def _settle(connection: Connection, namespace: str, term: str) -> None:
    """Fold a term's changes into its blob (or drop the term once no document holds it)."""
    terms, term_changes = t.search_fact_terms, t.search_fact_term_changes
    where_term = (terms.c.namespace == namespace) & (terms.c.term == term)
    row = connection.execute(select(terms.c.count, terms.c.postings).where(where_term)).one()
    where_changes = (term_changes.c.namespace == namespace) & (term_changes.c.term == term)
    overlay = connection.execute(
        select(term_changes.c.slot, term_changes.c.frequency, term_changes.c.length).where(where_changes)
    ).all()
    merged = merge(bytes(row.postings), overlay).triples()
    connection.execute(delete(term_changes).where(where_changes))
    if row.count <= 0:
        connection.execute(delete(terms).where(where_term))
    else:
        connection.execute(update(terms).where(where_term).values(pending=0, postings=merged.tobytes()))
