"""What the element index holds for one fact, derived from its element's and its own rows when it is
written."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, select

from stratagate.search.collation import locale_compare_key
from stratagate.search.documents import element_fact_search_fields
from stratagate.search.tokenize import field_repeat, normalize_search_text, search_tokens
from stratagate.storage import records, schema

READ_CHUNK = 500
"""Elements read per statement when the index is built or elements are re-indexed."""


@dataclass(frozen=True)
class IndexedElement:
    """An element as the index sees it: what its facts' documents, filters and orders are derived from."""

    id: str
    position: int
    name: str
    aliases: tuple[str, ...]
    type: str
    updated_at: str
    facts: tuple[tuple[str, int, str, Any], ...]
    """(fact id, fact position, key, value) in fact order."""

    def names(self) -> frozenset[str]:
        """The distinct normalized name and aliases (`search_fact_names`), the empty one left out."""
        return frozenset(name for name in map(normalize_search_text, (self.name, *self.aliases)) if name)


@dataclass(frozen=True)
class FactDocument:
    counts: dict[str, int]
    length: int
    row: dict[str, Any]
    """The `search_facts` row without namespace and slot."""


def fact_fields(element: IndexedElement, key: str, value: Any) -> list[tuple[str, str, float]]:
    return element_fact_search_fields(
        {"name": element.name, "aliases": list(element.aliases), "type": element.type},
        {"key": key, "value": value},
    )


def term_counts(fields: list[tuple[str, str, float]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for _name, text, weight in fields:
        repeat = field_repeat(weight)
        for token in search_tokens(text):
            counts[token] += repeat
    return dict(counts)


def element_columns(element: IndexedElement) -> dict[str, Any]:
    """The `search_facts` columns every fact of the element shares."""
    return {
        "element_id": element.id,
        "element_position": element.position,
        "type": element.type,
        "updated_key": locale_compare_key(element.updated_at),
    }


def fact_row(element: IndexedElement, fact_id: str, position: int, length: int) -> dict[str, Any]:
    """The fact's `search_facts` row without namespace and slot."""
    return {
        "fact_id": fact_id,
        **element_columns(element),
        "fact_position": position,
        "length": length,
        "id_key": locale_compare_key(fact_id),
    }


def fact_document(element: IndexedElement, fact_id: str, position: int, key: str, value: Any) -> FactDocument:
    counts = term_counts(fact_fields(element, key, value))
    length = sum(counts.values())
    return FactDocument(counts, length, fact_row(element, fact_id, position, length))


def read_elements(
    connection: Connection, namespace: str, ids: list[str] | None = None
) -> Iterator[IndexedElement]:
    """The elements (all of them in section order, or those of `ids` that exist), a chunk at a time."""
    el = schema.elements
    if ids is None:
        ids = list(
            connection.execute(
                select(el.c.id).where(el.c.namespace == namespace).order_by(el.c.position, el.c.id)
            ).scalars()
        )
    for start in range(0, len(ids), READ_CHUNK):
        yield from _read_chunk(connection, namespace, ids[start : start + READ_CHUNK])


def _read_chunk(connection: Connection, namespace: str, ids: list[str]) -> list[IndexedElement]:
    el, f = schema.elements, schema.element_facts
    facts: dict[str, list[tuple[str, int, str, Any]]] = {key: [] for key in ids}
    for row in connection.execute(
        select(f.c.id, f.c.element_id, f.c.position, f.c.key, f.c.value_json)
        .where(f.c.namespace == namespace, f.c.element_id.in_(ids))
        .order_by(f.c.element_id, f.c.position)
    ).mappings():
        facts[row["element_id"]].append(
            (row["id"], row["position"], row["key"], records.load_json(row, "value_json"))
        )
    found = {}
    for row in connection.execute(
        select(el.c.id, el.c.position, el.c.name, el.c.aliases_json, el.c.type, el.c.updated_at).where(
            el.c.namespace == namespace, el.c.id.in_(ids)
        )
    ).mappings():
        found[row["id"]] = IndexedElement(
            row["id"],
            row["position"],
            row["name"],
            tuple(records.load_json(row, "aliases_json")),
            row["type"],
            row["updated_at"],
            tuple(facts[row["id"]]),
        )
    return [found[key] for key in ids if key in found]


def count_facts(connection: Connection, namespace: str) -> int:
    f = schema.element_facts
    return connection.scalar(select(func.count()).select_from(f).where(f.c.namespace == namespace)) or 0
