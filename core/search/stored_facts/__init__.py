"""The element search index kept in SQL tables (`stratagate.storage.fact_search_tables`): written in the same
transaction as the elements and facts it indexes and read per query, so a new process pays nothing to start.

Documents are element facts. One module per job:

- `documents`: what the index holds for one fact, derived from its element's and its own rows;
- `tables`: creating, checking and dropping the tables;
- `postings`: reading a query's postings and writing a commit's changes;
- `writes`: building the index and keeping it current in every commit (`Upkeep`);
- `index`: BM25, filters, the structured order and explanations (`StoredFactIndex`).

`index` and `writes` (with the explanations) are imported on first use of their names: storage
imports this package for its table checks, and an event search or an export never needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stratagate.search.stored_facts.documents import count_facts, read_elements
from stratagate.search.stored_facts.tables import FACT_INDEX_FORMAT, drop_namespace, has_tables, is_current

if TYPE_CHECKING:
    from stratagate.search.stored_facts.index import StoredFactIndex
    from stratagate.search.stored_facts.writes import Upkeep, build

__all__ = [
    "FACT_INDEX_FORMAT",
    "StoredFactIndex",
    "Upkeep",
    "build",
    "count_facts",
    "drop_namespace",
    "has_tables",
    "is_current",
    "read_elements",
]


def __getattr__(name: str) -> Any:
    if name == "StoredFactIndex":
        from stratagate.search.stored_facts.index import StoredFactIndex

        return StoredFactIndex
    if name in ("Upkeep", "build"):
        from stratagate.search.stored_facts import writes

        return getattr(writes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
