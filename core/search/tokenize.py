"""The reference's search text normalization and tokenizer (spec §6.1), reproduced with ICU.

The reference runs in Node, where `String.prototype.normalize`, `toLocaleLowerCase` and `Intl.Segmenter` are
all ICU. Doing the same three steps with ICU here (and not with Python's own `unicodedata`/`str.lower`/regex)
keeps the token stream, and so every BM25 statistic, identical to the reference's.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable
from functools import lru_cache

import icu

# JavaScript's `\s` and `String.prototype.trim` set (WhiteSpace + LineTerminator), which is not Python's `\s`.
_JS_TRIM_CHARS = "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_WHITESPACE_RUN = re.compile(f"[{re.escape(_JS_TRIM_CHARS)}]+")

# ICU word-break rule statuses below 100 (UBRK_WORD_NONE_LIMIT) are spaces and punctuation; JS reports
# every other segment as `isWordLike`.
_WORD_NONE_LIMIT = 100

_NFKC = icu.Normalizer2.getNFKCInstance()
_ROOT = icu.Locale.getRoot()


def _han_pattern() -> re.Pattern[str]:
    """`\\p{Script=Han}+` with ICU's Unicode tables (Python's `re` has no script classes)."""
    han = icu.UnicodeSet("[:Script=Han:]")
    ranges = "".join(
        f"\\U{ord(start):08x}-\\U{ord(end):08x}" for start, end in han.ranges()
    )
    return re.compile(f"[{ranges}]+")


_HAN_RUN = _han_pattern()
_thread_state = threading.local()


def _word_breaker() -> icu.BreakIterator:
    # A BreakIterator holds its text, so each thread gets its own.
    breaker = getattr(_thread_state, "breaker", None)
    if breaker is None:
        breaker = _thread_state.breaker = icu.BreakIterator.createWordInstance(_ROOT)
    return breaker


# Names, event types, dates and filter values recur across documents and queries: short texts are cached
# (long ones are mostly unique, and their tokens would fill memory).
_CACHE_SIZE = 8192
_CACHED_LENGTH = 80


def normalize_search_text(text: str) -> str:
    """NFKC, lowercase (ICU full case mapping, as JS `toLocaleLowerCase`), whitespace runs to one space, trim."""
    return _normalize_cached(text) if len(text) <= _CACHED_LENGTH else _normalize(text)


def _normalize(text: str) -> str:
    lowered = icu.CaseMap.toLower(_ROOT, _NFKC.normalize(text))
    return _JS_WHITESPACE_RUN.sub(" ", lowered).strip(_JS_TRIM_CHARS)


_normalize_cached = lru_cache(maxsize=_CACHE_SIZE)(_normalize)


def _word_segments(text: str) -> list[str]:
    """The word-like segments of `text` (UAX #29 with ICU's CJK/Thai dictionaries)."""
    breaker = _word_breaker()
    breaker.setText(text)
    # ICU boundaries are UTF-16 offsets: equal to Python indices unless the text has astral characters.
    if text.isascii() or max(text) <= "\uffff":
        units, decode = text, None
    else:
        units, decode = text.encode("utf-16-le"), True
    segments = []
    start = breaker.first()
    for end in breaker:
        if breaker.getRuleStatus() >= _WORD_NONE_LIMIT:
            segment = units[2 * start : 2 * end].decode("utf-16-le") if decode else units[start:end]
            segment = segment.strip(_JS_TRIM_CHARS)
            if segment:
                segments.append(segment)
        start = end
    return segments


def search_tokens(text: str) -> list[str]:
    """`word:<segment>` for each word-like segment, then Han bigrams (`han2:`) or a lone `han1:` per Han run."""
    return list(_tokens_cached(text) if len(text) <= _CACHED_LENGTH else _tokens(text))


def _tokens(text: str) -> tuple[str, ...]:
    normalized = normalize_search_text(text)
    if not normalized:
        return ()
    tokens = [f"word:{segment}" for segment in _word_segments(normalized)]
    for run in _HAN_RUN.findall(normalized):
        if len(run) == 1:
            tokens.append(f"han1:{run}")
        tokens.extend(f"han2:{run[i : i + 2]}" for i in range(len(run) - 1))
    return tuple(tokens)


_tokens_cached = lru_cache(maxsize=_CACHE_SIZE)(_tokens)


def fuzzy_search_match(candidate: str, requested: str) -> bool:
    """Both normalized, non-empty, and equal or one containing the other."""
    left = normalize_search_text(candidate)
    right = normalize_search_text(requested)
    return bool(left and right and (left == right or right in left or left in right))


def field_repeat(weight: float) -> int:
    """How many times a field's tokens count: max(1, floor(weight))."""
    return max(1, math.floor(weight))


def weighted_search_tokens(fields: Iterable[tuple[str, float]]) -> list[str]:
    """Each field's tokens repeated `field_repeat(weight)` times, fields concatenated in order."""
    tokens: list[str] = []
    for text, weight in fields:
        tokens.extend(search_tokens(text) * field_repeat(weight))
    return tokens
