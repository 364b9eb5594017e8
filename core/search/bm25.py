"""The reference's BM25 (spec §6.2), written plainly: it re-tokenizes every item on every call.

It is the oracle that `InvertedIndex` must match score for score; searches use the index.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from stratagate.search.collation import locale_compare_key
from stratagate.search.tokenize import search_tokens

K1 = 1.2
B = 0.75

Item = TypeVar("Item")


def unique_query_terms(query: str) -> list[str]:
    """The query's tokens without repeats, in first-seen order (the order scores are summed in)."""
    return list(dict.fromkeys(search_tokens(query)))


def idf(item_count: int, document_frequency: int) -> float:
    return math.log(1 + (item_count - document_frequency + 0.5) / (document_frequency + 0.5))


def term_score(term_idf: float, frequency: int, length: int, average_length: float) -> float:
    """One term's BM25 contribution, with the reference's operation order (it matters at the last ulp)."""
    return term_idf * ((frequency * (K1 + 1)) / (frequency + K1 * (1 - B + B * length / average_length)))


def average_length(total_length: int, document_count: int) -> float:
    """Mean document length, 1 when it is 0 (JS `total / n || 1`)."""
    return (total_length / document_count) or 1.0


def bm25_rank(
    items: Sequence[Item],
    query: str,
    doc_fn: Callable[[Item], list[str]],
    key_fn: Callable[[Item], str],
) -> list[tuple[Item, float]]:
    """Items with a positive score, best first; ties by `localeCompare` of their key."""
    terms = unique_query_terms(query)
    if not terms or not items:
        return []
    documents = [doc_fn(item) for item in items]
    mean_length = average_length(sum(len(tokens) for tokens in documents), len(documents))
    document_frequency: Counter[str] = Counter()
    for tokens in documents:
        document_frequency.update(set(tokens))
    term_idf = {term: idf(len(items), document_frequency[term]) for term in terms}

    ranked = []
    for item, tokens in zip(items, documents, strict=True):
        frequencies = Counter(tokens)
        score = 0.0
        for term in terms:
            if frequencies[term]:
                score += term_score(term_idf[term], frequencies[term], len(tokens), mean_length)
        if score > 0:
            ranked.append((item, score))
    ranked.sort(key=lambda pair: (-pair[1], locale_compare_key(key_fn(pair[0]))))
    return ranked
