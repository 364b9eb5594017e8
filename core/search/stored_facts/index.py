"""Element search over the stored element index of one namespace: BM25 with the in-memory index's keys,
order and scores (`InvertedIndex.rank` over every fact, indexed in section order, as a new process builds
it), the name and type filters and the structured order answered by SQL, and per-hit explanations.

Facts are numbered by slot, which is not section order, so a tie that `localeCompare` of the ids leaves falls
back on the facts' section order (element position, fact position) explicitly, where the in-memory index uses
its insertion order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import Connection

from stratagate.arrays import np
from stratagate.search.bm25 import average_length, idf, unique_query_terms
from stratagate.search.collation import locale_compare_key, sort_tied_runs
from stratagate.search.documents import SearchField
from stratagate.search.explained import explained_hit, filter_mismatches
from stratagate.search.index import ExplainedHit
from stratagate.search.postings import contributions
from stratagate.search.stored.tables import Connect, chunks, driver_rows, marks
from stratagate.search.stored_facts import postings
from stratagate.search.subsets import NONE, Subset
from stratagate.search.tokenize import normalize_search_text

SECTION_ORDER = "element_position, fact_position"
STRUCTURED_ORDER = f"updated_key DESC, id_key, {SECTION_ORDER}"
"""Element updatedAt descending, then fact id (`localeCompare`), then section order (the reference's two
stable sorts over the candidates in section order)."""


class StoredFactIndex:
    """The element index of one namespace, read through `connect()` (a read transaction)."""

    def __init__(self, connect: Connect, namespace: str, *, follows_commits: bool = True):
        self.connect = connect
        self.namespace = namespace
        self.follows_commits = follows_commits
        """False for an index in the outside cache: it shows one revision (see `StoredEventIndex`)."""
        self.still_current: Callable[[], bool] = lambda: True
        """For an outside-cache index: as `StoredEventIndex.still_current`."""

    # filters and orders ------------------------------------------------------------------------------------
    def with_name(self, requested: str) -> Subset:
        """Facts of the elements whose name or an alias matches `requested` fuzzily (`fuzzy_search_match`)."""
        wanted = normalize_search_text(requested)
        with self.connect() as connection:
            names = [
                row[0]
                for row in driver_rows(
                    connection,
                    "SELECT DISTINCT name FROM search_fact_names WHERE namespace = ?",
                    (self.namespace,),
                )
            ]
        matching = [name for name in names if wanted and (name == wanted or wanted in name or name in wanted)]
        if not matching:
            return NONE
        return Subset(
            f"element_id IN (SELECT element_id FROM search_fact_names WHERE namespace = ? "
            f"AND name IN ({marks(len(matching))}))",
            (self.namespace, *matching),
        )

    @staticmethod
    def of_type(element_type: str) -> Subset:
        return Subset("type = ?", (element_type,))

    def _select(self, connection: Connection, columns: str, subset: Subset, order: str) -> list[tuple]:
        return driver_rows(
            connection,
            f"SELECT {columns} FROM search_facts WHERE namespace = ? AND ({subset.sql}) ORDER BY {order}",
            (self.namespace, *subset.values),
        )

    def exists(self, subset: Subset) -> bool:
        with self.connect() as connection:
            return bool(
                driver_rows(
                    connection,
                    f"SELECT 1 FROM search_facts WHERE namespace = ? AND ({subset.sql}) LIMIT 1",
                    (self.namespace, *subset.values),
                )
            )

    def structured(self, subset: Subset) -> list[str]:
        """The subset's fact ids in the structured order (`STRUCTURED_ORDER`)."""
        with self.connect() as connection:
            return [row[0] for row in self._select(connection, "fact_id", subset, STRUCTURED_ORDER)]

    def mismatches(self, filters: list[tuple[str, Subset]]) -> list[tuple[str, list[str]]]:
        """(fact id, the names of the filters it fails) of every fact that fails one, in section order."""
        with self.connect() as connection:
            return filter_mismatches(
                connection, self.namespace, "search_facts", "fact_id", SECTION_ORDER, filters
            )

    def elements_of(self, fact_ids: list[str]) -> dict[str, str]:
        """The element id of each of these facts."""
        found: dict[str, str] = {}
        with self.connect() as connection:
            for chunk in chunks(fact_ids):
                found.update(
                    driver_rows(
                        connection,
                        f"SELECT fact_id, element_id FROM search_facts WHERE "
                        f"namespace = ? AND fact_id IN ({marks(len(chunk))})",
                        (self.namespace, *chunk),
                    )
                )
        return found

    # BM25 --------------------------------------------------------------------------------------------------
    def rank(
        self, query: str, subset: Subset | None = None, limit: int | None = None
    ) -> list[tuple[str, float]]:
        """(fact id, score) with a positive score, best first, ties by `localeCompare` of the id then section
        order; only facts of `subset` when given (statistics stay those of every fact)."""
        terms = unique_query_terms(query)
        if not terms or (limit is not None and limit <= 0):
            return []
        with self.connect() as connection:
            return self._rank(connection, terms, subset, limit)

    def _rank(
        self, connection: Connection, terms: list[str], subset: Subset | None, limit: int | None
    ) -> list[tuple[str, float]]:
        documents, total_length = self._statistics(connection)
        found = postings.read(connection, self.namespace, terms)
        if not documents or not found:
            return []
        mean_length = average_length(total_length, documents)
        size = 1 + max(
            (int(triples[:, 0].max()) for _term, _count, triples in found if len(triples)), default=-1
        )
        totals = np.zeros(size, dtype=np.float64)
        for _term, count, triples in found:
            totals[triples[:, 0]] += contributions(
                idf(documents, count), triples[:, 1], triples[:, 2].astype(np.float64), mean_length
            )
        slots = np.flatnonzero(totals)
        if subset is not None:
            allowed = np.asarray(
                [row[0] for row in self._select(connection, "slot", subset, "slot")], dtype=np.int64
            )
            slots = slots[np.isin(slots, allowed)]
        scores = totals[slots]
        if limit is not None and len(slots) > limit:
            # Everything that scores at least the limit-th best score, ties at the boundary included.
            threshold = -np.partition(-scores, limit - 1)[limit - 1]
            keep = scores >= threshold
            slots, scores = slots[keep], scores[keep]
        order = np.argsort(-scores, kind="stable")
        slots, scores = slots[order], scores[order]
        named = self._named(connection, slots.tolist())
        ranked = [(named[slot], score) for slot, score in zip(slots.tolist(), scores.tolist(), strict=True)]
        tied = np.flatnonzero(scores[1:] == scores[:-1]).tolist()
        sort_tied_runs(ranked, tied, key=lambda pair: (locale_compare_key(pair[0][0]), pair[0][1]))
        return [(name[0], score) for name, score in (ranked if limit is None else ranked[:limit])]

    def _statistics(self, connection: Connection) -> tuple[int, int]:
        rows = driver_rows(
            connection,
            "SELECT documents, total_length FROM search_fact_state WHERE namespace = ?",
            (self.namespace,),
        )
        return rows[0] if rows else (0, 0)

    def _named(self, connection: Connection, slots: list[int]) -> dict[int, tuple[str, tuple[int, int]]]:
        """(fact id, its place in section order) of each slot, by primary-key seeks from a joined list."""
        found = {}
        for chunk in chunks(slots):
            for slot, fact_id, element_position, fact_position in driver_rows(
                connection,
                (
                    f"WITH wanted(slot) AS (VALUES {', '.join(['(?)'] * len(chunk))}) "
                    f"SELECT f.slot, f.fact_id, f.element_position, f.fact_position FROM wanted "
                    f"JOIN search_facts AS f ON f.namespace = ? AND f.slot = wanted.slot"
                ),
                (*chunk, self.namespace),
            ):
                found[slot] = (fact_id, (element_position, fact_position))
        return found

    def explain(
        self,
        query: str,
        fact_ids: Iterable[str],
        fields_of: Callable[[dict[str, str]], dict[str, list[SearchField]]],
    ) -> dict[str, ExplainedHit]:
        """BM25 details of those of `fact_ids` that match; `fields_of(fact id → element id)` gives their
        search fields (the index keeps no text)."""
        terms = unique_query_terms(query)
        wanted = list(dict.fromkeys(fact_ids))
        if not terms or not wanted:
            return {}
        with self.connect() as connection:
            scores = dict(
                self._rank(
                    connection, terms, Subset(f"fact_id IN ({marks(len(wanted))})", tuple(wanted)), None
                )
            )
            if not scores:
                return {}
            documents, total_length = self._statistics(connection)
            frequencies = {
                term: count for term, count, _triples in postings.read(connection, self.namespace, terms)
            }
            placed = driver_rows(
                connection,
                f"SELECT fact_id, element_id, length FROM search_facts WHERE "
                f"namespace = ? AND fact_id IN ({marks(len(scores))})",
                (self.namespace, *scores),
            )
        fields = fields_of({fact_id: element_id for fact_id, element_id, _length in placed})
        lengths = {fact_id: length for fact_id, _element_id, length in placed}
        mean_length = average_length(total_length, documents)
        term_idf = [(term, idf(documents, frequencies[term])) for term in terms if term in frequencies]
        return {
            fact_id: explained_hit(fact_id, score, lengths[fact_id], mean_length, term_idf, fields[fact_id])
            for fact_id, score in scores.items()
        }
