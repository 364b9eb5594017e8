"""One term's postings, for vectorized BM25: settled numpy arrays plus a small dict of recent changes.

Settled postings are numpy arrays (16 bytes a posting, against about 40 in a Python dict), sorted by each
posting's BM25 impact at the mean length of settling time and cut into blocks of `block` postings. A block's
highest frequency and shortest document bound the score any of its postings can contribute at any mean
length, which is what lets a top-k query stop early. A second copy in document order serves lookups.

Writes do not touch the arrays: they record the document's new frequency (0 when it no longer holds the
term) in `changes`, and every read consults `changes` first, so a query always sees the current postings.
A document's length only changes when it is rewritten, which records it in `changes` for every term it held
or holds, so the bounds of the settled blocks stay valid for the documents they still answer for. Once
`changes` outgrows an eighth of the settled postings, `settle` folds it into new arrays.
"""

from __future__ import annotations

from stratagate.arrays import np
from stratagate.search.bm25 import K1, B


def contributions(term_idf: float, frequencies: np.ndarray, lengths: np.ndarray, mean_length: float) -> np.ndarray:
    """BM25 term contributions, elementwise, with the reference's operation order (bit-identical floats):
    `term_idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + B * length / mean_length)))`, each operation done in
    place on one of two float64 arrays (the expression would allocate eight; IEEE + and * commute exactly)."""
    denominator = np.multiply(lengths, B, dtype=np.float64)
    denominator /= mean_length
    denominator += 1 - B
    denominator *= K1
    denominator += frequencies
    result = np.multiply(frequencies, K1 + 1, dtype=np.float64)
    result /= denominator
    result *= term_idf
    return result


class TermPostings:
    """Every current posting of one term: `documents`/`frequencies` as settled, overridden by `changes`."""

    def __init__(self, block: int, settle_after: int):
        """`block`: postings per bounded block; `settle_after`: changes are folded into the arrays once there
        are more than this many and more than an eighth of the settled postings."""
        self.block = block
        self.settle_after = settle_after
        self.count = 0  # documents holding the term now: its document frequency
        self.changes: dict[int, int] = {}
        no_documents = np.zeros(0, dtype=np.int32)
        self._settle(no_documents, no_documents, np.zeros(0, dtype=np.float64), 1.0)

    def __len__(self) -> int:
        """Settled postings (some may be overridden by `changes`)."""
        return len(self.documents)

    def add(self, number: int, frequency: int) -> None:
        self.changes[number] = frequency
        self.count += 1

    def remove(self, number: int) -> None:
        self.changes[number] = 0
        self.count -= 1

    def needs_settling(self) -> bool:
        return len(self.changes) > max(self.settle_after, len(self.documents) // 8)

    def settle(self, lengths: np.ndarray, mean_length: float) -> None:
        """Fold `changes` into the arrays."""
        if not self.changes:
            return
        changed = np.fromiter(self.changes.keys(), dtype=np.int32, count=len(self.changes))
        changed_frequencies = np.fromiter(self.changes.values(), dtype=np.int32, count=len(self.changes))
        fresh = ~np.isin(self.documents, changed)
        holding = changed_frequencies > 0
        documents = np.concatenate([self.documents[fresh], changed[holding]])
        frequencies = np.concatenate([self.frequencies[fresh], changed_frequencies[holding]])
        self.changes = {}
        self._settle(documents, frequencies, lengths, mean_length)

    def _settle(self, documents: np.ndarray, frequencies: np.ndarray, lengths: np.ndarray, mean_length: float) -> None:
        impact = frequencies / (frequencies + K1 * (1 - B + B * lengths[documents] / mean_length))
        order = np.argsort(-impact, kind="stable")
        self.documents = documents[order]
        self.frequencies = frequencies[order]
        starts = np.arange(0, len(documents), self.block)
        if len(documents):
            self.block_max_frequency = np.maximum.reduceat(self.frequencies, starts)
            self.block_min_length = np.minimum.reduceat(lengths[self.documents], starts)
        else:
            self.block_max_frequency = np.zeros(0, dtype=np.int32)
            self.block_min_length = np.zeros(0, dtype=np.float64)
        by_document = np.argsort(documents, kind="stable")
        self.sorted_documents = documents[by_document]
        self.sorted_frequencies = frequencies[by_document]

    def frequency_of(self, number: int) -> int:
        if number in self.changes:
            return self.changes[number]
        position = int(np.searchsorted(self.sorted_documents, number))
        if position < len(self.sorted_documents) and self.sorted_documents[position] == number:
            return int(self.sorted_frequencies[position])
        return 0

    def frequencies_of(self, documents: np.ndarray) -> np.ndarray:
        """The current frequency in each of `documents` (0 where absent)."""
        position = np.searchsorted(self.sorted_documents, documents)
        position[position == len(self.sorted_documents)] = 0
        if len(self.sorted_documents):
            found = self.sorted_documents[position] == documents
            frequencies = np.where(found, self.sorted_frequencies[position], 0)
        else:
            frequencies = np.zeros(len(documents), dtype=np.int32)
        if self.changes:
            changed = np.fromiter(self.changes.keys(), dtype=np.int32, count=len(self.changes))
            for index in np.flatnonzero(np.isin(documents, changed)).tolist():
                frequencies[index] = self.changes[int(documents[index])]
        return frequencies

    def changed_holders(self) -> np.ndarray:
        """The changed documents that hold the term (a top-k query scores them first)."""
        return np.array([number for number, frequency in self.changes.items() if frequency], dtype=np.int32)

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """Every current posting: (documents, frequencies)."""
        if not self.changes:
            return self.documents, self.frequencies
        changed = np.fromiter(self.changes.keys(), dtype=np.int32, count=len(self.changes))
        changed_frequencies = np.fromiter(self.changes.values(), dtype=np.int32, count=len(self.changes))
        fresh = ~np.isin(self.documents, changed)
        holding = changed_frequencies > 0
        return (
            np.concatenate([self.documents[fresh], changed[holding]]),
            np.concatenate([self.frequencies[fresh], changed_frequencies[holding]]),
        )

    def remaining_bounds(self, term_idf: float, mean_length: float) -> np.ndarray:
        """`bounds[b]`: no unchanged posting in block b or later contributes more (one extra 0 at the end)."""
        block_bounds = contributions(term_idf, self.block_max_frequency, self.block_min_length, mean_length)
        suffix_max = np.maximum.accumulate(block_bounds[::-1])[::-1]
        return np.append(suffix_max, 0.0)
