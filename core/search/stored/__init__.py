"""The event search index kept in SQL tables (`stratagate.storage.search_tables`): written in the same
transaction as the events it indexes and read per query, so a new process pays nothing to start.

Documents are the search candidates (active and superseded events), numbered by their section position
(the `events.position` column: kept while the event stays, new events after the last), which is the
reference's candidate order. One module per job:

- `documents`: what the index holds for one event (term frequencies, filter and sort inputs);
- `tables`: creating, checking and dropping the tables, and the SQL helpers the others share;
- `writes`: building the index and keeping it current in every commit;
- `ranking`: BM25 over the stored postings (`StoredEventIndex`);
- `facets`: filters and structured orders answered by SQL over the indexed columns (`StoredFacets`; the
  search layer imports it itself: it needs the weight rules, which storage, importing this package, must not).

`ranking` and `writes` are imported on first use of their names: storage imports this
package for its table checks, and a process that only opens, exports or searches a memory needs one of them
at most.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stratagate.search.stored.documents import CANDIDATE_STATUSES, count_candidates, read_event_records
from stratagate.search.stored.tables import (
    INDEX_FORMAT,
    Connect,
    Progress,
    create_tables,
    current_format,
    drop_namespace,
    has_tables,
    is_current,
    stored_revision,
)

if TYPE_CHECKING:
    from stratagate.search.stored.ranking import StoredEventIndex
    from stratagate.search.stored.writes import add_name_terms, build, indexed_before, keep_current

__all__ = [
    "CANDIDATE_STATUSES", "INDEX_FORMAT", "Connect", "Progress", "StoredEventIndex", "add_name_terms", "build",
    "count_candidates", "create_tables", "current_format", "drop_namespace", "has_tables", "indexed_before", "is_current",
    "keep_current", "read_event_records", "stored_revision",
]


def __getattr__(name: str) -> Any:
    if name == "StoredEventIndex":
        from stratagate.search.stored.ranking import StoredEventIndex

        return StoredEventIndex
    if name in ("add_name_terms", "build", "indexed_before", "keep_current"):
        from stratagate.search.stored import writes

        return getattr(writes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
