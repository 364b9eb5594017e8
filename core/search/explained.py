"""What `explain=True` adds to a search over a stored index (which keeps no field texts): a hit's BM25
explanation from its fields and the index's statistics (the same `ExplainedHit` as `InvertedIndex.rank(...,
explain=True)` gives), and which candidates the hard filters left out."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Connection

from stratagate.arrays import np
from stratagate.search.bm25 import average_length, idf, term_score, unique_query_terms
from stratagate.search.collation import locale_compare_key, sort_tied_runs
from stratagate.search.documents import SearchField, event_search_fields
from stratagate.search.index import ExplainedHit, FieldContribution
from stratagate.search.stored import StoredEventIndex
from stratagate.search.stored.tables import driver_rows, marks
from stratagate.search.subsets import Subset
from stratagate.search.tokenize import field_repeat, search_tokens


def explained_hit(
    key: str,
    score: float,
    length: int,
    mean_length: float,
    term_idf: list[tuple[str, float]],
    fields: list[SearchField],
) -> ExplainedHit:
    """`term_idf`: (term, idf) of the query's indexed terms in query order; `fields`: the document's, as
    indexed."""
    field_counts = [
        (name, Counter(search_tokens(text)), field_repeat(weight)) for name, text, weight in fields
    ]
    contributions = []
    matched: dict[str, float] = {}
    for term, weight in term_idf:
        frequency = sum(counts[term] * repeat for _name, counts, repeat in field_counts)
        if not frequency:
            continue
        matched[term] = weight
        whole = term_score(weight, frequency, length, mean_length)
        for name, counts, repeat in field_counts:
            in_field = counts[term] * repeat
            if in_field:
                contributions.append(FieldContribution(term, name, in_field, whole * in_field / frequency))
    return ExplainedHit(key, score, length, mean_length, matched, tuple(contributions))


def filter_mismatches(
    connection: Connection,
    namespace: str,
    table: str,
    key: str,
    order: str,
    filters: list[tuple[str, Subset]],
) -> list[tuple[str, list[str]]]:
    """(key, the names of the filters it fails) of every row of a stored index's `table` (`search_events`,
    `search_facts`) that fails one, in `order`."""
    tests = ", ".join(f"CASE WHEN ({subset.sql}) THEN 1 ELSE 0 END" for _name, subset in filters)
    values = tuple(value for _name, subset in filters for value in subset.values)
    rows = driver_rows(
        connection,
        f"SELECT {key}, {tests} FROM {table} WHERE namespace = ? ORDER BY {order}",
        (*values, namespace),
    )
    found = []
    for item, *passed in rows:
        failed = [name for (name, _subset), ok in zip(filters, passed, strict=True) if not ok]
        if failed:
            found.append((item, failed))
    return found


def explain_stored_events(
    index: StoredEventIndex,
    query: str,
    records: dict[str, dict[str, Any]],
) -> dict[str, ExplainedHit]:
    """BM25 details of those of the events (id → record) that match the query, from the stored event
    index."""
    terms = unique_query_terms(query)
    if not terms or not records:
        return {}
    with index.connect() as connection:
        placed = driver_rows(
            connection,
            f"SELECT position, event_id, length FROM search_events WHERE namespace = ? "
            f"AND event_id IN ({marks(len(records))})",
            (index.namespace, *records),
        )
        positions = [position for position, _event_id, _length in placed]
        lengths = {event_id: length for _position, event_id, length in placed}
        documents, total_length = driver_rows(
            connection,
            "SELECT documents, total_length FROM search_index_state WHERE namespace = ?",
            (index.namespace,),
        )[0]
        frequencies = dict(
            driver_rows(
                connection,
                f"SELECT term, count FROM search_terms WHERE namespace = ? AND "
                f"count > 0 AND term IN ({marks(len(terms))})",
                (index.namespace, *terms),
            )
        )
    scores = rank_within(index, query, np.asarray(positions, dtype=np.int64))
    mean_length = average_length(total_length, documents)
    term_idf = [(term, idf(documents, frequencies[term])) for term in terms if term in frequencies]
    return {
        event_id: explained_hit(
            event_id, score, lengths[event_id], mean_length, term_idf, event_search_fields(records[event_id])
        )
        for event_id, score in scores
    }


def rank_within(index: StoredEventIndex, query: str, allowed: np.ndarray) -> list[tuple[str, float]]:
    """`index.rank(query)` restricted to the documents at `allowed` positions (statistics stay those of every
    candidate): the same order, ties by `localeCompare` of the id then position."""
    if not len(allowed):
        return []
    with index.connect() as connection:
        positions, scores = index.scored(connection, query, allowed)
        ids = index.ids(connection, positions)
    pairs = list(zip(ids, scores.tolist(), strict=True))
    tied = np.flatnonzero(scores[1:] == scores[:-1]).tolist()
    sort_tied_runs(pairs, tied, key=lambda pair: locale_compare_key(pair[0]))
    return pairs
