"""One term's postings as numpy arrays, for vectorized BM25: impact-ordered with per-block score bounds.

The index keeps each term's postings in a dict (cheap to update) and builds a `TermPostings` snapshot of it
on first use. Writes after the build do not rebuild it: they mark the changed documents stale, and those
documents are read back from the live dict, so a write costs O(1) per term and a query still sees exactly
the current postings. The index drops a snapshot once too many of its documents are stale.

The snapshot is sorted by each posting's BM25 impact (at the mean length of build time) and cut into blocks
of `block` postings (64 by default). A block's highest frequency and shortest document bound the score any of its
postings can contribute at any mean length, which is what lets a top-k query stop early.
"""

from __future__ import annotations

import numpy as np

from stratagate.search.bm25 import K1, B


def contributions(term_idf: float, frequencies: np.ndarray, lengths: np.ndarray, mean_length: float) -> np.ndarray:
    """BM25 term contributions, elementwise, with the reference's operation order (bit-identical floats)."""
    return term_idf * ((frequencies * (K1 + 1)) / (frequencies + K1 * (1 - B + B * lengths / mean_length)))


class TermPostings:
    """A term's postings at build time, plus the documents whose posting changed since."""


    def __init__(self, posting: dict[int, int], lengths: np.ndarray, mean_length: float, block: int):
        size = len(posting)
        documents = np.fromiter(posting.keys(), dtype=np.int64, count=size)
        frequencies = np.fromiter(posting.values(), dtype=np.int64, count=size)
        impact = frequencies / (frequencies + K1 * (1 - B + B * lengths[documents] / mean_length))
        order = np.argsort(-impact, kind="stable")
        self.documents = documents[order]
        self.frequencies = frequencies[order]
        self.block = block
        starts = np.arange(0, size, self.block)
        self.block_max_frequency = np.maximum.reduceat(self.frequencies, starts)
        self.block_min_length = np.minimum.reduceat(lengths[self.documents], starts)
        by_document = np.argsort(documents, kind="stable")
        self.sorted_documents = documents[by_document]
        self.sorted_frequencies = frequencies[by_document]
        self.stale: set[int] = set()

    def __len__(self) -> int:
        return len(self.documents)

    def mark_stale(self, number: int) -> None:
        self.stale.add(number)

    def too_stale(self) -> bool:
        return len(self.stale) > max(32, len(self.documents) // 16)

    def current(self, live: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Every current posting (documents, frequencies): the snapshot's fresh ones and the stale ones' live values."""
        if not self.stale:
            return self.documents, self.frequencies
        stale = np.fromiter(self.stale, dtype=np.int64, count=len(self.stale))
        fresh = ~np.isin(self.documents, stale)
        changed = [(number, live[number]) for number in self.stale if number in live]
        changed_documents = np.array([number for number, _ in changed], dtype=np.int64)
        changed_frequencies = np.array([frequency for _, frequency in changed], dtype=np.int64)
        return (
            np.concatenate([self.documents[fresh], changed_documents]),
            np.concatenate([self.frequencies[fresh], changed_frequencies]),
        )

    def stale_postings(self, live: dict[int, int]) -> np.ndarray:
        """The stale documents that still hold the term (a top-k query scores them first)."""
        return np.array([number for number in self.stale if number in live], dtype=np.int64)

    def frequencies_of(self, documents: np.ndarray, live: dict[int, int]) -> np.ndarray:
        """The term's current frequency in each of `documents` (0 where absent)."""
        position = np.searchsorted(self.sorted_documents, documents)
        position[position == len(self.sorted_documents)] = 0
        found = self.sorted_documents[position] == documents
        frequencies = np.where(found, self.sorted_frequencies[position], 0)
        if self.stale:
            stale = np.fromiter(self.stale, dtype=np.int64, count=len(self.stale))
            for index in np.flatnonzero(np.isin(documents, stale)).tolist():
                frequencies[index] = live.get(int(documents[index]), 0)
        return frequencies

    def remaining_bounds(self, term_idf: float, mean_length: float) -> np.ndarray:
        """`bounds[b]`: no fresh posting in block b or later contributes more (one extra 0 at the end).

        A posting is fresh when its document has not changed since the build, so its length is unchanged."""
        block_bounds = contributions(term_idf, self.block_max_frequency, self.block_min_length, mean_length)
        suffix_max = np.maximum.accumulate(block_bounds[::-1])[::-1]
        return np.append(suffix_max, 0.0)
