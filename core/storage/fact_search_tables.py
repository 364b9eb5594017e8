"""The persistent element search index: tables beside the v7 schema, in the database or in an outside cache.

Element search ranks facts: one document per element fact (every status), its text the element's name,
aliases and type and the fact's key and value. Like the event index (`search_tables`), these tables are a
v7-compatible addition the reference and older versions of this package ignore, in their own MetaData,
created, filled and read by `stratagate.search.stored_facts`:

- `search_fact_state`: per namespace, the index format, the namespace revision it is current at, the document
  count N and the total document length (BM25's statistics), and the next free document slot;
- `search_fact_terms`, `search_fact_term_changes`: per term, its document frequency and its postings, a
  settled blob of int32 (slot, frequency, length) triples plus the changes written since (as `search_terms`);
- `search_facts`: one row per fact keyed by its slot (a number it keeps while it stays, for the postings),
  with its place in section order (element position, fact position: the reference's candidate order), its
  length, its element's type, and the ICU sort keys of its id and of its element's updatedAt (the
  structured order);
- `search_fact_names`: per element, its distinct normalized name and aliases (the name filter).
"""

from __future__ import annotations

from sqlalchemy import Column, Index, MetaData, PrimaryKeyConstraint, Table

from stratagate.storage.search_tables import Blob, Int, Text

fact_search_metadata = MetaData()


def _table(name: str, *items, **options) -> Table:
    return Table(name, fact_search_metadata, *items, sqlite_strict=True, **options)


search_fact_state = _table(
    "search_fact_state",
    Column("namespace", Text, primary_key=True),
    Column("format", Text, nullable=False),
    Column("revision", Int, nullable=False),
    Column("documents", Int, nullable=False),
    Column("total_length", Int, nullable=False),
    Column("next_slot", Int, nullable=False),
)

search_fact_terms = _table(
    "search_fact_terms",
    Column("namespace", Text, nullable=False),
    Column("term", Text, nullable=False),
    Column("count", Int, nullable=False),
    Column("pending", Int, nullable=False),
    Column("postings", Blob, nullable=False),
    PrimaryKeyConstraint("namespace", "term"),
    sqlite_with_rowid=False,
)

search_fact_term_changes = _table(
    "search_fact_term_changes",
    Column("namespace", Text, nullable=False),
    Column("term", Text, nullable=False),
    Column("slot", Int, nullable=False),
    Column("frequency", Int, nullable=False),
    Column("length", Int, nullable=False),
    PrimaryKeyConstraint("namespace", "term", "slot"),
    sqlite_with_rowid=False,
)

search_facts = _table(
    "search_facts",
    Column("namespace", Text, nullable=False),
    Column("slot", Int, nullable=False),
    Column("fact_id", Text, nullable=False),
    Column("element_id", Text, nullable=False),
    Column("element_position", Int, nullable=False),
    Column("fact_position", Int, nullable=False),
    Column("length", Int, nullable=False),
    Column("type", Text, nullable=False),
    Column("id_key", Blob, nullable=False),
    Column("updated_key", Blob, nullable=False),
    PrimaryKeyConstraint("namespace", "slot"),
    sqlite_with_rowid=False,
)

_f = search_facts.c
Index("search_facts_id_idx", _f.namespace, _f.fact_id, unique=True)
Index("search_facts_element_idx", _f.namespace, _f.element_id)
Index("search_facts_type_idx", _f.namespace, _f.type)
# The structured order (element updatedAt descending, then fact id, then section order), covering the ids.
Index(
    "search_facts_order_idx",
    _f.namespace,
    _f.updated_key.desc(),
    _f.id_key,
    _f.element_position,
    _f.fact_position,
    _f.fact_id,
)

search_fact_names = _table(
    "search_fact_names",
    Column("namespace", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("element_id", Text, nullable=False),
    PrimaryKeyConstraint("namespace", "name", "element_id"),
    sqlite_with_rowid=False,
)

Index("search_fact_names_element_idx", search_fact_names.c.namespace, search_fact_names.c.element_id)

FACT_SEARCH_TABLES = tuple(fact_search_metadata.sorted_tables)
