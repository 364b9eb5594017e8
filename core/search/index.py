"""An inverted index that ranks exactly like the reference's BM25, at the cost of the query's postings.

`InvertedIndex.rank(query)` gives the same keys, order and scores (bit for bit) as
`bm25_rank(all indexed documents, query, ...)`: N and the mean length are over the whole index, document
frequency is the posting count, and each document's score is summed in query-term order with the
reference's operation order (numpy does the same IEEE operations elementwise, so the floats are identical).

Postings are numpy arrays plus a small dict of recent changes per term (`postings.TermPostings`), so a write
costs O(1) per term and the index takes about 40 % less memory than dicts of dicts. Only the query terms'
postings are read. With a `limit`, not even all of those: postings are impact-ordered in blocks with score
bounds, and scoring stops once no unread posting can reach the limit-th best score, which is exact (the
bound is a true upper bound), not an approximation.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stratagate.arrays import np
from stratagate.cancellation import OperationCancelled, checkpoint
from stratagate.errors import DuplicateIdError, UnknownIdError
from stratagate.search.bm25 import average_length, idf, term_score, unique_query_terms
from stratagate.search.collation import locale_compare_key, sort_tied_runs
from stratagate.search.documents import SearchField
from stratagate.search.postings import TermPostings, contributions
from stratagate.search.tokenize import field_repeat, search_tokens


@dataclass(frozen=True)
class FieldContribution:
    """The part of one query term's score that comes from one field of a document."""

    term: str
    field: str
    frequency: int  # occurrences of the term in the field, times the field's weight
    score: float


@dataclass(frozen=True)
class ExplainedHit:
    """A ranked document with where its score comes from, in query-term order then field order.

    BM25 scores the concatenated weighted token stream, not fields: a term's score depends on its total
    frequency in the document. So each term's score is split over the fields in proportion to each field's
    share of that frequency; the shares of a term add up to its score (up to float rounding).
    """

    key: str
    score: float
    length: int
    average_length: float
    term_idf: dict[str, float]
    contributions: tuple[FieldContribution, ...]


class InvertedIndex:
    """Weighted-field documents by key, for BM25 ranking. Thread-safe; writes and ranks are serialized."""

    def __init__(self, block_size: int = 64, settle_after: int = 64) -> None:
        """`block_size`: postings per score-bound block; `settle_after`: pending changes a term keeps before
        they are folded into its arrays. Tests make both tiny to exercise early stopping and settling."""
        self._block_size = block_size
        self._settle_after = settle_after
        self._lock = threading.RLock()
        # Each key gets a document number for life (a replace keeps it): it indexes the arrays below and is
        # the insertion order, which breaks ties that localeCompare calls equal, as the reference's stable sort.
        self._numbers: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._sort_keys: list[bytes] = []
        # Per document: its field layout ((name, weight), ...), shared between documents, and its field
        # texts. Kept to find its postings on remove and to split scores by field in explain.
        self._layouts: dict[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]] = {}
        self._documents: list[tuple[tuple[tuple[str, float], ...], tuple[str, ...]] | None] = []
        self._lengths = np.zeros(1024, dtype=np.float64)
        self._total_length = 0  # an int, so the mean is the exact float the reference's sum gives
        self._terms: dict[str, TermPostings] = {}
        self._compacted_size = 0
        self._bulk = False  # inside add_many: terms settle at the compactions, not one by one

    def __len__(self) -> int:
        return len(self._numbers)

    def __contains__(self, key: object) -> bool:
        return key in self._numbers

    @property
    def total_length(self) -> int:
        return self._total_length

    def document_frequency(self, term: str) -> int:
        postings = self._terms.get(term)
        return 0 if postings is None else postings.count

    def add(self, key: str, fields: Sequence[SearchField]) -> None:
        """Index a new document; `DuplicateIdError` if the key is already indexed."""
        with self._lock:
            if key in self._numbers:
                raise DuplicateIdError(f"The search index already holds {key!r}; use replace to re-index it")
            number = len(self._keys)
            self._keys.append(key)
            self._sort_keys.append(locale_compare_key(key))
            self._documents.append(None)
            self._numbers[key] = number
            self._store(number, fields)

    def replace(self, key: str, fields: Sequence[SearchField]) -> None:
        """Re-index a document in place (it keeps its insertion order), or add it if it is new."""
        with self._lock:
            number = self._numbers.get(key)
            if number is None:
                self.add(key, fields)
                return
            self._unstore(number)
            self._store(number, fields)

    def remove(self, key: str) -> None:
        """Drop a document; `UnknownIdError` if it is not indexed."""
        with self._lock:
            number = self._numbers.pop(key, None)
            if number is None:
                raise UnknownIdError(f"The search index does not hold {key!r}")
            self._unstore(number)
            self._keys[number] = None

    def add_many(self, documents: Iterable[tuple[str, Sequence[SearchField]]]) -> None:
        """Add documents in bulk; the postings are compacted into arrays as the index doubles, and at the end."""
        with self._lock:
            self._bulk = True
            try:
                for key, fields in documents:
                    checkpoint()
                    self.add(key, fields)
                    if len(self._numbers) >= max(4096, 2 * self._compacted_size):
                        self.compact()
            except OperationCancelled:
                self._bulk = False  # the caller drops this half-built index: settling it would only cost time
                raise
            finally:
                if self._bulk:
                    self._bulk = False
                    self.compact()

    def compact(self) -> None:
        """Fold every term's pending changes into its arrays (saves memory after many writes)."""
        with self._lock:
            mean_length = average_length(self._total_length, max(1, len(self._numbers)))
            for postings in self._terms.values():
                postings.settle(self._lengths, mean_length)
            self._compacted_size = len(self._numbers)

    def _store(self, number: int, fields: Sequence[SearchField]) -> None:
        layout = tuple((name, weight) for name, _text, weight in fields)
        layout = self._layouts.setdefault(layout, layout)
        texts = tuple(text for _name, text, _weight in fields)
        counts = _term_frequencies(layout, texts)
        length = sum(counts.values())
        self._documents[number] = (layout, texts)
        if number >= len(self._lengths):
            self._lengths = np.concatenate([self._lengths, np.zeros(len(self._lengths), dtype=np.float64)])
        self._lengths[number] = length
        self._total_length += length
        for term, frequency in counts.items():
            postings = self._terms.get(term)
            if postings is None:
                postings = self._terms[term] = TermPostings(self._block_size, self._settle_after)
            postings.add(number, frequency)
            self._settle_if_due(postings)

    def _unstore(self, number: int) -> None:
        document = self._documents[number]
        assert document is not None
        self._documents[number] = None
        self._total_length -= int(self._lengths[number])
        self._lengths[number] = 0
        for term in _term_frequencies(*document):
            postings = self._terms[term]
            postings.remove(number)
            if postings.count == 0:
                del self._terms[term]
            else:
                self._settle_if_due(postings)

    def _settle_if_due(self, postings: TermPostings) -> None:
        if not self._bulk and postings.needs_settling():
            postings.settle(self._lengths, average_length(self._total_length, max(1, len(self._numbers))))

    def rank(
        self,
        query: str,
        restrict_to: Iterable[str] | None = None,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[tuple[str, float]] | list[ExplainedHit]:
        """Documents with a positive BM25 score, best first, ties by `localeCompare` of the key.

        `restrict_to` limits which documents are returned; statistics stay those of the whole index.
        `limit` keeps the first `limit` of the full order (and lets scoring stop early). With `explain`,
        each hit is an `ExplainedHit` (this re-tokenizes the hits' fields, so pair it with a limit).
        """
        terms = unique_query_terms(query)
        with self._lock:
            if not terms or not self._numbers or (limit is not None and limit <= 0):
                return []
            mean_length = average_length(self._total_length, len(self._numbers))
            query_terms = _QueryTerms(self, terms, mean_length)
            if not query_terms.postings:
                return []
            if restrict_to is not None:
                documents, scores = query_terms.score_restricted(self._restricted_numbers(restrict_to))
            elif limit is not None:
                documents, scores = query_terms.score_top(limit)
            else:
                documents, scores = query_terms.score_all()
            positive = scores > 0
            order = self._order(documents[positive], scores[positive], limit)
            if not explain:
                return [(self._keys[number], score) for number, score in order]
            return [self._explain(number, score, query_terms) for number, score in order]

    def _restricted_numbers(self, keys: Iterable[str]) -> np.ndarray:
        numbers = [number for key in keys if (number := self._numbers.get(key)) is not None]
        return np.unique(np.asarray(numbers, dtype=np.int64))

    def _order(self, documents: np.ndarray, scores: np.ndarray, limit: int | None) -> list[tuple[int, float]]:
        """Score descending, then localeCompare of the key, then insertion order (`documents` ascend)."""
        if limit is not None and len(documents) > limit:
            # Everything that scores at least the limit-th best score, ties at the boundary included.
            threshold = -np.partition(-scores, limit - 1)[limit - 1]
            keep = scores >= threshold
            documents, scores = documents[keep], scores[keep]
        order = np.argsort(-scores, kind="stable")
        numbers, values = documents[order].tolist(), scores[order].tolist()
        # Only runs of equal scores need the collation keys.
        tied = np.flatnonzero(scores[order][1:] == scores[order][:-1]).tolist()
        sort_tied_runs(numbers, tied, key=self._sort_keys.__getitem__)
        pairs = list(zip(numbers, values, strict=True))
        return pairs if limit is None else pairs[:limit]

    def _explain(self, number: int, score: float, query_terms: _QueryTerms) -> ExplainedHit:
        document = self._documents[number]
        key = self._keys[number]
        assert document is not None and key is not None
        layout, texts = document
        length = int(self._lengths[number])
        field_counts = [
            (name, Counter(search_tokens(text)), field_repeat(weight))
            for (name, weight), text in zip(layout, texts, strict=True)
        ]
        contributions = []
        matched: dict[str, float] = {}
        for term, term_idf, postings in query_terms.postings:
            frequency = postings.frequency_of(number)
            if not frequency:
                continue
            matched[term] = term_idf
            whole = term_score(term_idf, frequency, length, query_terms.mean_length)
            for name, counts, repeat in field_counts:
                in_field = counts[term] * repeat
                if in_field:
                    contributions.append(FieldContribution(term, name, in_field, whole * in_field / frequency))
        return ExplainedHit(key, score, length, query_terms.mean_length, matched, tuple(contributions))


class _QueryTerms:
    """The query's indexed terms, in query order, with their idf and postings; scores documents three ways."""

    # The first pass of a top-k query reads this many blocks of each term; each later pass twice as many.
    FIRST_PASS_BLOCKS = 4

    def __init__(self, index: InvertedIndex, terms: list[str], mean_length: float):
        self.index = index
        self.mean_length = mean_length
        count = len(index)
        self.postings: list[tuple[str, float, TermPostings]] = []
        for term in terms:
            postings = index._terms.get(term)
            if postings is not None:
                self.postings.append((term, idf(count, postings.count), postings))

    def _exact(self, documents: np.ndarray) -> np.ndarray:
        """Scores of distinct `documents`, summed in query-term order (a missing term adds exactly 0.0)."""
        lengths = self.index._lengths[documents]
        totals = np.zeros(len(documents), dtype=np.float64)
        for _term, term_idf, postings in self.postings:
            totals += contributions(term_idf, postings.frequencies_of(documents), lengths, self.mean_length)
        return totals

    def score_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Every matched document: each term's postings are read once, whole."""
        lengths = self.index._lengths
        totals = np.zeros(len(lengths), dtype=np.float64)
        for _term, term_idf, postings in self.postings:
            documents, frequencies = postings.current()
            totals[documents] += contributions(term_idf, frequencies, lengths[documents], self.mean_length)
        # Every contribution is positive, so the matched documents are the non-zero totals.
        documents = np.flatnonzero(totals)
        return documents, totals[documents]

    def score_restricted(self, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Only the allowed documents: look them up when they are fewer than the postings."""
        if len(allowed) < sum(postings.count for _term, _idf, postings in self.postings):
            return allowed, self._exact(allowed)
        documents, scores = self.score_all()
        keep = np.isin(documents, allowed)
        return documents[keep], scores[keep]

    def score_top(self, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """A superset of the `limit` best documents, with exact scores.

        Each pass reads the next, lower-impact, slice of every term's postings and scores the documents
        not seen yet in full. A document never seen has each of its postings in an unread slice, so its
        score is at most the sum of the terms' remaining bounds: once that is below the limit-th best
        score, no unseen document can enter the result, ties included.
        """
        bounds = [arrays.remaining_bounds(term_idf, self.mean_length) for _term, term_idf, arrays in self.postings]
        seen = np.zeros(len(self.index._lengths), dtype=bool)
        # Documents whose postings changed since they were settled are scored first, outside the blocks.
        batches = [postings.changed_holders() for _term, _idf, postings in self.postings]
        scored_documents: list[np.ndarray] = []
        scored_scores: list[np.ndarray] = []
        start, blocks = 0, self.FIRST_PASS_BLOCKS  # in blocks
        while True:
            batches += [
                arrays.documents[start * arrays.block : (start + blocks) * arrays.block]
                for _term, _idf, arrays in self.postings
            ]
            documents = np.unique(np.concatenate(batches))
            documents = documents[~seen[documents]]
            seen[documents] = True
            scored_documents.append(documents)
            scored_scores.append(self._exact(documents))
            batches = []
            start += blocks
            blocks *= 2
            if all(start * arrays.block >= len(arrays) for _term, _idf, arrays in self.postings):
                break
            remaining = 0.0
            for term_bounds in bounds:
                remaining += term_bounds[min(start, len(term_bounds) - 1)]
            scores = np.concatenate(scored_scores)
            if len(scores) >= limit:
                kth_best = -np.partition(-scores, limit - 1)[limit - 1]
                # The margin covers the rounding of the bound's own sum.
                if remaining * (1 + 1e-9) < kth_best:
                    break
        documents, scores = np.concatenate(scored_documents), np.concatenate(scored_scores)
        ascending = np.argsort(documents)
        return documents[ascending], scores[ascending]


def _term_frequencies(layout: tuple[tuple[str, float], ...], texts: tuple[str, ...]) -> Counter[str]:
    """Term frequencies of the weighted token stream (each field's tokens counted `field_repeat` times)."""
    counts: Counter[str] = Counter()
    for (_name, weight), text in zip(layout, texts, strict=True):
        repeat = field_repeat(weight)
        for token in search_tokens(text):
            counts[token] += repeat
    return counts
