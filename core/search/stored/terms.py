"""A term's postings as stored: a settled blob of (position, frequency, length) int32 triples plus the rows of
`search_term_changes` written since (frequency 0: the document left the term). A read overlays the changes on
the blob; a write settles a term once its changes outgrow an eighth of its settled postings (and 64), so a
write costs O(1) per term amortized and a read costs one blob and a few rows per term."""

from __future__ import annotations

from typing import Any

from stratagate.arrays import np

TRIPLE = "<i4"
"""The dtype of a triple's numbers."""
SETTLE_AFTER = 64


def merge(blob: bytes, overlay: list[Any]) -> np.ndarray:
    """The current (position, frequency, length) triples: the blob's, overridden by the overlay's rows, in
    ascending, distinct positions (a blob is built in position order and settled through this function)."""
    settled = np.frombuffer(blob, dtype=TRIPLE).reshape(-1, 3)
    if not overlay:
        return settled
    changed = np.asarray(overlay, dtype=np.int64).reshape(-1, 3).astype(TRIPLE)
    fresh = settled[~np.isin(settled[:, 0], changed[:, 0])]
    holding = changed[changed[:, 1] > 0]
    merged = np.concatenate([fresh, holding])
    return merged[np.argsort(merged[:, 0], kind="stable")]
