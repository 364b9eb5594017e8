"""Values as a reviewer reads them in preview, journal and receipt tables: yes/no, not raw JSON `True`."""

from __future__ import annotations

from typing import Any


def human(value: Any) -> str:
    """One value: booleans as yes/no, nothing as a dash, numbers to three places, lists joined by commas."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list | tuple):
        return ", ".join(human(item) for item in value) or "—"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {human(item)}" for key, item in value.items()) or "—"
    return str(value)


def arrow(before: Any, after: Any) -> str:
    """`before → after` in human values, or just the value when it did not change."""
    return human(before) if before == after else f"{human(before)} → {human(after)}"


def changes(before: Any, after: Any) -> str:
    """What a journal entry changed, field by field (`pinned: no → yes; status: active → forgotten`); fields
    that kept their value are left out. Non-mapping values are shown as one arrow."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return arrow(before, after)
    keys = list(dict.fromkeys([*before, *after]))
    changed = [key for key in keys if before.get(key) != after.get(key)]
    return "; ".join(f"{key}: {arrow(before.get(key), after.get(key))}" for key in changed) or "no change"
