"""JS `String.prototype.localeCompare` for tie-breaks and chronology sorts (spec §11 item 18).

V8 compares with an ICU collator for the default locale (en-US, whose collation is the root collation) at
the default (tertiary) strength, so `"a" < "B" < "b"` and digits sort before letters, unlike code-point order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import icu

_thread_state = threading.local()


def _collator() -> icu.Collator:
    # Collators are cheap to keep and not documented as shareable across threads: one per thread.
    collator = getattr(_thread_state, "collator", None)
    if collator is None:
        collator = _thread_state.collator = icu.Collator.createInstance(icu.Locale.getRoot())
    return collator


def locale_compare(left: str, right: str) -> int:
    """-1, 0 or 1, as `left.localeCompare(right)`."""
    return _collator().compare(left, right)


@lru_cache(maxsize=65536)
def locale_compare_key(text: str) -> bytes:
    """A sort key: `sorted(xs, key=locale_compare_key)` orders like `xs.sort((a, b) => a.localeCompare(b))`."""
    return _collator().getSortKey(text)


def sort_tied_runs(items: list[Any], tied: Sequence[int], key: Callable[[Any], Any]) -> None:
    """Sort, in place and by `key`, each run of `items` that tie: `tied` lists, ascending, every i where
    items[i] ties items[i + 1]. Only ties need the collation keys; the sort is stable."""
    start = 0
    while start < len(tied):
        first = end = tied[start]
        while start < len(tied) and tied[start] == end:
            end += 1
            start += 1
        items[first : end + 1] = sorted(items[first : end + 1], key=key)
