"""The contract between the memory engine (`stratagate.memory`) and a storage backend.

Records cross this boundary as plain dicts in the snapshot shape (camelCase keys, as the reference's
`exportSnapshot()` writes them, upgraded to v7: blocks carry `pointerAnchorBlockPosition` and `lastLiftedBy`,
the space carries `blockDecayLambda`). The engine never sees rows; a backend never sees engine objects.

Sections and the key each record is identified by:

| section                    | key         | notes                                              |
|----------------------------|-------------|----------------------------------------------------|
| `openTail`                 | `id`        | messages not yet sealed, in arrival order           |
| `blocks`                   | `id`        | with `l5Raw` (the sealed messages) nested           |
| `events`                   | `id`        | with `sourceMessageIds`, `temporal`, `weight`       |
| `elements`                 | `id`        | with `facts` nested (each with `sourceEventIds`)    |
| `extractionJobs`           | `blockId`   |                                                     |
| `elementProjectionJobs`    | `id`        |                                                     |
| `usageReceipts`            | `id`        |                                                     |
| `ingestionReceipts`        | `id`        |                                                     |
| `successfulModelResponses` | `id`        | the backend keeps the last 5                        |

The space record holds `schemaVersion, revision, currentTurn, blockTurnSize, blockDecayLambda, createdAt,
updatedAt`.

Fact-level changes. A commit's cost should follow what the mutation changed, not how much history the element
it touched holds (one project can gather thousands of facts; adding the next one must not rewrite them all).
So a ChangeSet may also carry the change-only section `elementFacts` (key: the fact's `id`; record: the fact
record plus `elementId`), and an `elements` upsert comes in two forms:

- with `facts`: the whole element; its stored facts become exactly these (new elements, imports);
- without `facts`: the element's own fields only; its stored facts stay as they are. Such a record may give
  `addedSourceEventIds` / `addedSourceMessageIds` instead of `sourceEventIds` / `sourceMessageIds`: ids not
  yet among the element's sources, appended after the stored ones (the engine only ever adds sources).

`elementFacts` upserts are applied after `elements` upserts: a known fact id is replaced in place (it keeps its
position in the element), a new one is appended after the element's last fact. Its element must exist once the
change's `elements` upserts are applied. `elementFacts` deletes remove single facts. Reads never return this
section: `load_section("elements")` and `fetch` give elements with their facts nested, and snapshots keep
that shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

SECTION_KEYS: dict[str, str] = {
    "openTail": "id",
    "blocks": "id",
    "events": "id",
    "elements": "id",
    "extractionJobs": "blockId",
    "elementProjectionJobs": "id",
    "usageReceipts": "id",
    "ingestionReceipts": "id",
    "successfulModelResponses": "id",
}

ELEMENT_FACTS = "elementFacts"
"""The change-only section of single facts (see the module docstring); its key is `id`."""
CHANGE_SECTION_KEYS: dict[str, str] = {**SECTION_KEYS, ELEMENT_FACTS: "id"}
"""Every section a ChangeSet may name."""

Record = dict[str, Any]
SPAN_KEYS = ("id", "threadId", "sequence", "startTurn", "endTurn", "l0Title", "pointerCurrentLevel",
             "pointerAnchorLevel", "pointerAnchorBlockPosition")
"""The fields of a block record a span keeps (`block_spans` adds `messageCount`)."""


def nest_facts(element: Record, facts: list[Record]) -> Record:
    """An element record (without `facts`) with `facts` in their snapshot place, after `currentState`."""
    record: Record = {}
    for key, value in element.items():
        record[key] = value
        if key == "currentState":
            record["facts"] = facts
    record.setdefault("facts", facts)
    return record


@dataclass
class ChangeSet:
    """Everything one mutation changes: the backend writes exactly this, in one transaction."""

    space: Record = field(default_factory=dict)
    """Changed space fields (`currentTurn`, `blockTurnSize`, `blockDecayLambda`); never `revision`."""
    upserts: dict[str, list[Record]] = field(default_factory=dict)
    """Section -> whole records to insert or replace, in the order they belong in the section."""
    deletes: dict[str, list[str]] = field(default_factory=dict)
    """Section -> keys to remove (e.g. open-tail messages that a sealed block now owns)."""
    journal: list[Record] = field(default_factory=list)
    """Curation-journal entries (see `stratagate.journal`) appended in the same transaction, so a journal
    entry exists exactly when its mutation does."""

    def upsert(self, section: str, record: Record) -> None:
        self.upserts.setdefault(section, []).append(record)

    def delete(self, section: str, key: str) -> None:
        self.deletes.setdefault(section, []).append(key)

    def is_empty(self) -> bool:
        return not (self.space or self.upserts or self.deletes or self.journal)


class StorageBackend(Protocol):
    """What the engine needs from a store. `MemoryBackend` and the SQL backends implement it."""

    location: str
    """What to show the user: a file path, or a URL without its password."""
    read_only: bool

    def list_namespaces(self) -> list[str]: ...

    def load_space(self, namespace: str) -> Record | None:
        """The space record, or None when the namespace does not exist. Cheap: reads one row."""

    def create_space(self, namespace: str, space: Record) -> int:
        """Create an empty namespace; returns its revision (1)."""

    def load_section(self, namespace: str, section: str) -> list[Record]:
        """Every record of a section, in section order. The engine calls it lazily, once per section."""

    def query_keys(self, namespace: str, section: str, where: Record | None = None) -> list[str]:
        """Keys of a section in section order, optionally filtered (`status`, `eventType`, `criticality`,
        `participant`, `threadId`, `text` substring, events also `pinned` (a bool); blocks also `messageId`: the
        block holding that message, and `messageTokens`: at least the blocks holding a message whose search
        tokens include one of these, maybe more, for the caller to check; elements also `factStatus`: elements
        with a fact of that status). Blocks come in sequence order. Lets the app list 100k rows holding ids
        only."""

    def fetch(self, namespace: str, section: str, keys: list[str]) -> list[Record]:
        """The records for these keys, in the order asked; unknown keys are skipped."""

    def packed_keys(
        self, namespace: str, section: str, where: Record | None = None, order: Any = None, limit: int | None = None
    ) -> Sequence[str]:
        """`query_keys` held compactly (`stratagate.storage.packed_keys`) where the store can, the first `limit`
        only if given; events also in an `EventOrder` (`stratagate.storage.event_order`) on SQL stores. For
        lists of a million keys."""

    def filter_values(self, namespace: str, section: str, name: str) -> list[str]:
        """The distinct values the `query_keys` filter `name` can take in the section (events: `eventType`,
        `participant`), sorted: what a filter box suggests."""

    def key_statuses(self, namespace: str, section: str, statuses: list[str]) -> dict[str, str]:
        """Key → status of the records (events, jobs) whose status is one of `statuses`, in one pass."""

    def key_tail(self, namespace: str, section: str, known: int) -> tuple[int, list[str]]:
        """(how many keys the section holds, the keys after the first `known` in section order): what a
        follower needs to name the records added since it last counted, without listing the others."""

    def block_tally(self, namespace: str, thread_id: str | None) -> tuple[int, int | None, int]:
        """(blocks in the thread, its last block's end turn or None, the namespace's highest block sequence):
        what sealing the thread's next block needs, read without loading any block."""

    def block_spans(self, namespace: str, thread_id: str | None = None) -> list[Record]:
        """Every block's (or one thread's) span in sequence order, without its texts: `{id, threadId?, sequence,
        startTurn, endTurn, l0Title, pointerCurrentLevel, pointerAnchorLevel, pointerAnchorBlockPosition,
        messageCount}` (what a timeline is drawn from)."""

    def thread_ids(self, namespace: str) -> list[str | None]:
        """Threads of the blocks by first block, then those only in the open tail by first message; None is
        unthreaded. Read without loading any block or message."""

    def commit(self, namespace: str, changes: ChangeSet, expected_revision: int) -> int:
        """Apply one mutation atomically if the stored revision equals `expected_revision`; returns the new
        revision (expected + 1). Raises `StorageConflictError` and writes nothing when it does not."""

    def event_search_index(self, namespace: str, progress: Any = None) -> Any:
        """The namespace's persistent event search index (`stratagate.search.stored.StoredEventIndex`), built
        once if missing (`progress(done, total)` reports the build); None when the backend keeps none (searches
        then index the loaded events in memory)."""

    def element_search_index(self, namespace: str, progress: Any = None) -> Any:
        """The namespace's persistent element search index (`stratagate.search.stored_facts.StoredFactIndex`),
        as `event_search_index`; None when the backend keeps none."""

    def exclusive(self, namespace: str) -> AbstractContextManager[None]:
        """Hold the namespace's write lock until the block ends: reads and the one commit inside it see and
        write a state no other writer changes meanwhile (a writer that lost a race uses it to retry fairly)."""

    def shared_read(self) -> AbstractContextManager[None]:
        """Run the calling thread's reads inside on one read transaction (one snapshot, one round trip to
        begin it); writes inside are not seen."""

    def last_read(self) -> AbstractContextManager[None]:
        """Inside a `shared_read`: its next statement is the last it needs, so the transaction may end with it
        (on a server, in the same round trip); a read after it may see a newer snapshot."""

    def close(self) -> None: ...
