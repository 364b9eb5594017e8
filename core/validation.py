"""Checks for values that come from callers and models: each failure names the field and what was wrong.

The reference validated almost nothing (§11.12): NaN confidence reached SQLite, titles had no size limit.
Here every input is type-checked and size-bounded before any state changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from stratagate.errors import InvalidInputError

MAX_ID_LENGTH = 256
MAX_MESSAGE_LENGTH = 2_000_000
MAX_TITLE_LENGTH = 2_000
MAX_TEXT_LENGTH = 100_000
MAX_LIST_ITEM_LENGTH = 10_000
MAX_LIST_ITEMS = 1_000
NUL = "\x00"


def find_nul(value: Any, where: str = "") -> str | None:
    """Where the first NUL character sits in a JSON-like value (e.g. `l5Raw[3].content`), or None.

    Text holding NUL cannot be stored by PostgreSQL; see docs/compatibility.md."""
    if isinstance(value, str):
        return where or "(value)" if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found = path if NUL in str(key) else find_nul(item, path)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = find_nul(item, f"{where}[{index}]")
            if found:
                return found
    return None


def require_str(value: Any, field: str, *, max_length: int = MAX_TEXT_LENGTH, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if NUL in value:  # PostgreSQL cannot store it: refused here so every memory moves between backends
        raise InvalidInputError(f"{field} contains a NUL character (U+0000), which StrataGate does not store")
    if len(value) > max_length:
        raise InvalidInputError(f"{field} is too long ({len(value)} characters; the limit is {max_length})")
    if not allow_empty and not value.strip():
        raise InvalidInputError(f"{field} must not be empty")
    return value


def optional_str(value: Any, field: str, *, max_length: int = MAX_TEXT_LENGTH) -> str | None:
    return None if value is None else require_str(value, field, max_length=max_length)


def require_id(value: Any, field: str) -> str:
    """A trimmed, non-empty id of bounded length."""
    return require_str(value, field, max_length=MAX_ID_LENGTH, allow_empty=False).strip()


def optional_id(value: Any, field: str) -> str | None:
    return None if value is None else require_id(value, field)


def require_str_list(value: Any, field: str, *, max_items: int = MAX_LIST_ITEMS,
                     max_length: int = MAX_LIST_ITEM_LENGTH) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInputError(f"{field} must be a list of strings, got {type(value).__name__}")
    items = list(value)
    if len(items) > max_items:
        raise InvalidInputError(f"{field} has too many items ({len(items)}; the limit is {max_items})")
    for index, item in enumerate(items):
        require_str(item, f"{field}[{index}]", max_length=max_length)
    return items


def require_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{field} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise InvalidInputError(f"{field} must be a finite number, got {value!r}")
    return value


def require_choice(value: Any, field: str, choices: Iterable[str]) -> str:
    options = tuple(choices)
    if value not in options:
        raise InvalidInputError(f"{field} must be one of {', '.join(options)}, got {value!r}")
    return value


def require_bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{field} must be true or false, got {value!r}")
    return value


def unique_in_order(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
