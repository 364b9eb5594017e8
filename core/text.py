"""Small text helpers with JavaScript string semantics (lengths in UTF-16 code units)."""

from __future__ import annotations

import re

_WHITESPACE = re.compile(r"\s+")


def utf16_length(text: str) -> int:
    """`text.length` in JavaScript: astral characters count twice."""
    if text.isascii() or max(text) <= "\uffff":  # no astral character (the common case), checked in C
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def utf16_cut(text: str, limit: int) -> str:
    """`text.slice(0, limit)` by UTF-16 code units, except that a surrogate pair is never split (JS would leave
    half a character, which cannot be stored as UTF-8): a pair straddling the cut is dropped whole."""
    if limit <= 0:
        return ""
    if len(text) <= limit and max(text, default="\0") <= "\uffff":
        return text
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:index]
    return text


def collapse_whitespace(text: str) -> str:
    """Whitespace runs to one space, trimmed (the reference's `replace(/\\s+/g, ' ').trim()`)."""
    return _WHITESPACE.sub(" ", text).strip()


def compact(value: object, limit: int) -> str:
    """The reference's `compact(x, n)`: a string collapsed, trimmed and cut to n; anything else ''."""
    return utf16_cut(collapse_whitespace(value), limit) if isinstance(value, str) else ""


def string_list(value: object, max_items: int, item_limit: int = 240) -> list[str]:
    """The reference's `stringList`: compacted non-empty items, exact-deduplicated, first `max_items`."""
    if not isinstance(value, list):
        return []
    items: list[str] = []
    for item in value:
        text = compact(item, item_limit)
        if text and text not in items:
            items.append(text)
            if len(items) == max_items:
                break
    return items
