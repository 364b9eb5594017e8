"""The element search index kept in SQL tables (`stratagate.storage.fact_search_tables`): written in the same
transaction as the elements and facts it indexes and read per query, so a new process pays nothing to start.

Documents are element facts. One module per job:

- `documents`: what the index holds for one fact, derived from its element's and its own rows;
- `tables`: creating, checking and dropping the tables;
- `postings`: reading a query's postings and writing a commit's changes;
- `writes`: building the index and keeping it current in every commit (`Upkeep`);
- `index`: BM25, filters, the structured order and explanations (`StoredFactIndex`).
"""

from stratagate.search.stored_facts.documents import count_facts, read_elements
from stratagate.search.stored_facts.index import StoredFactIndex
from stratagate.search.stored_facts.tables import FACT_INDEX_FORMAT, drop_namespace, has_tables, is_current
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
