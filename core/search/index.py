"""An inverted index that ranks exactly like the reference's BM25, at the cost of the query's postings.

`InvertedIndex.rank(query)` gives the same keys, order and scores (bit for bit) as
`bm25_rank(all indexed documents, query, ...)`: N and the mean length are over the whole index, document
frequency is the posting count, and each document's score is summed in query-term order with the
reference's operation order. Only the documents in the query terms' postings are touched, so a query costs
what its postings cost, not a scan of every document.

Postings live in dicts (cheap to update); each term's postings are also kept as numpy arrays, built on first
use and dropped when a write touches the term, so scoring is vectorized. numpy does the same IEEE
operations elementwise, in the same order, as the scalar formula, so the floats are identical.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from stratagate.errors import DuplicateIdError, UnknownIdError
from stratagate.search.bm25 import K1, B, average_length, idf, term_score, unique_query_terms
from stratagate.search.collation import locale_compare_key
from stratagate.search.documents import SearchField
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


@dataclass
class _TermArrays:
    documents: np.ndarray  # document numbers (int64)
    frequencies: np.ndarray  # term frequencies (float64: exact for any realistic count)


class InvertedIndex:
    """Weighted-field documents by key, for BM25 ranking. Thread-safe; writes and ranks are serialized."""

    def __init__(self) -> None:
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
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, _TermArrays] = {}

    def __len__(self) -> int:
        return len(self._numbers)

    def __contains__(self, key: object) -> bool:
        return key in self._numbers

    @property
    def total_length(self) -> int:
        return self._total_length

    def document_frequency(self, term: str) -> int:
        return len(self._postings.get(term, ()))

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
        for key, fields in documents:
            self.add(key, fields)

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
            self._postings.setdefault(term, {})[number] = frequency
            self._arrays.pop(term, None)

    def _unstore(self, number: int) -> None:
        document = self._documents[number]
        assert document is not None
        self._documents[number] = None
        self._total_length -= int(self._lengths[number])
        self._lengths[number] = 0
        for term in _term_frequencies(*document):
            posting = self._postings[term]
            del posting[number]
            if not posting:
                del self._postings[term]
            self._arrays.pop(term, None)

    def _term_arrays(self, term: str) -> _TermArrays | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if posting is None:
                return None
            size = len(posting)
            arrays = _TermArrays(
                np.fromiter(posting.keys(), dtype=np.int64, count=size),
                np.fromiter(posting.values(), dtype=np.float64, count=size),
            )
            self._arrays[term] = arrays
        return arrays

    def rank(
        self,
        query: str,
        restrict_to: Iterable[str] | None = None,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[tuple[str, float]] | list[ExplainedHit]:
        """Documents with a positive BM25 score, best first, ties by `localeCompare` of the key.

        `restrict_to` limits which documents are returned; statistics stay those of the whole index.
        `limit` keeps the first `limit` of the full order. With `explain`, each hit is an `ExplainedHit`
        (this re-tokenizes the hits' fields, so pair it with a limit).
        """
        terms = unique_query_terms(query)
        with self._lock:
            if not terms or not self._numbers:
                return []
            count = len(self._numbers)
            mean_length = average_length(self._total_length, count)
            term_idf: dict[str, float] = {}
            scored: list[tuple[float, _TermArrays]] = []
            for term in terms:
                arrays = self._term_arrays(term)
                if arrays is not None:
                    term_idf[term] = idf(count, len(arrays.documents))
                    scored.append((term_idf[term], arrays))
            if not scored:
                return []
            documents, scores = self._score(scored, mean_length)
            if restrict_to is not None:
                documents, scores = self._restrict(documents, scores, restrict_to)
            positive = scores > 0
            order = self._order(documents[positive], scores[positive], limit)
            if not explain:
                return [(self._keys[number], score) for number, score in order]
            return [self._explain(number, score, terms, term_idf, mean_length) for number, score in order]

    def _score(self, scored: list[tuple[float, _TermArrays]], mean_length: float) -> tuple[np.ndarray, np.ndarray]:
        """Each matched document's score, summed in query-term order like the reference."""
        totals = np.zeros(len(self._lengths), dtype=np.float64)
        for term_idf, arrays in scored:
            frequency = arrays.frequencies
            length = self._lengths[arrays.documents]
            # The reference's expression, operation for operation.
            contribution = term_idf * ((frequency * (K1 + 1)) / (frequency + K1 * (1 - B + B * length / mean_length)))
            totals[arrays.documents] += contribution
        if len(scored) == 1:
            documents = scored[0][1].documents
        else:
            # Every contribution is positive, so the matched documents are the non-zero totals.
            documents = np.flatnonzero(totals)
        return documents, totals[documents]

    def _restrict(
        self, documents: np.ndarray, scores: np.ndarray, restrict_to: Iterable[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        allowed = [number for key in restrict_to if (number := self._numbers.get(key)) is not None]
        keep = np.isin(documents, np.asarray(allowed, dtype=np.int64))
        return documents[keep], scores[keep]

    def _order(self, documents: np.ndarray, scores: np.ndarray, limit: int | None) -> list[tuple[int, float]]:
        """Score descending, then localeCompare of the key, then insertion order."""
        if limit is not None and len(documents) > limit:
            if limit <= 0:
                return []
            # Everything that scores at least the limit-th best score, ties at the boundary included.
            threshold = -np.partition(-scores, limit - 1)[limit - 1]
            keep = scores >= threshold
            documents, scores = documents[keep], scores[keep]
        pairs = sorted(
            zip(documents.tolist(), scores.tolist(), strict=True),
            key=lambda pair: (-pair[1], self._sort_keys[pair[0]], pair[0]),
        )
        return pairs if limit is None else pairs[:limit]

    def _explain(
        self, number: int, score: float, terms: list[str], term_idf: dict[str, float], mean_length: float
    ) -> ExplainedHit:
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
        for term in terms:
            frequency = self._postings.get(term, {}).get(number, 0)
            if not frequency:
                continue
            matched[term] = term_idf[term]
            whole = term_score(term_idf[term], frequency, length, mean_length)
            for name, counts, repeat in field_counts:
                in_field = counts[term] * repeat
                if in_field:
                    contributions.append(FieldContribution(term, name, in_field, whole * in_field / frequency))
        return ExplainedHit(key, score, length, mean_length, matched, tuple(contributions))


def _term_frequencies(layout: tuple[tuple[str, float], ...], texts: tuple[str, ...]) -> Counter[str]:
    """Term frequencies of the weighted token stream (each field's tokens counted `field_repeat` times)."""
    counts: Counter[str] = Counter()
    for (_name, weight), text in zip(layout, texts, strict=True):
        repeat = field_repeat(weight)
        for token in search_tokens(text):
            counts[token] += repeat
    return counts
