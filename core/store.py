"""The store a memory's collaborators work through, and the model callbacks they may call.

`StrataGate` (the facade) owns one `NamespaceStore` and hands it, as a `Store`, to `Retrieval` and
`Derivation`; the callbacks go to them as `ModelHooks`. They depend on these two narrow interfaces, never on
the facade's insides, the way `raw_search.MemoryTurnSearch` depends on `raw_search.TurnSource`.

Guarantees of a `Store`:

- `section(name)` is the loaded state, keyed by record key in section order; never edit what it returns,
  change it through a `Mutation` from `mutation()`;
- `commit(tx)` is one backend transaction with the revision check; the state changes only after it
  succeeded; on `StorageConflictError` nothing was written and the state has been reloaded;
- `block_order()` is kept current as blocks are sealed;
- `writing()` wraps a write operation (its reads and its commit): after this store lost a race it holds the
  backend's write lock and reloads inside it, so a retry cannot lose the same race again;
- `retrying(operation)` runs an operation that decides everything from the state it reads, and once more
  under the write lock if it lost a race (for derived work, whose model call must not be repeated).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from stratagate.callbacks import Extractor, Projector, Summarizer
from stratagate.errors import ReadOnlyError, StorageConflictError
from stratagate.model import Block
from stratagate.state import MemoryState, Mutation
from stratagate.storage.backend import StorageBackend
from stratagate.timeutil import to_utc8_iso

T = TypeVar("T")
CONTENDED_FOR = 1.0
"""Seconds after a lost race during which a store's writes take the write lock first (`writing`)."""


class BlockOrder:
    """Block ids per thread in sealing order, each block's index in its thread, and the highest sequence.

    Kept up to date as blocks are sealed (blocks are never deleted and never change thread)."""

    def __init__(self, blocks: Iterable[Block]):
        self.threads: dict[str | None, list[str]] = {}
        self.index: dict[str, int] = {}
        self.max_sequence = 0
        for block in sorted(blocks, key=lambda b: b.sequence):
            self.add(block)

    def add(self, block: Block) -> None:
        if block.id in self.index:
            return
        thread = self.threads.setdefault(block.thread_id, [])
        self.index[block.id] = len(thread)
        thread.append(block.id)
        self.max_sequence = max(self.max_sequence, block.sequence)


class Store(Protocol):
    """What the facade's collaborators may use of a memory: its state, its commit, its clock and ids."""

    @property
    def current_turn(self) -> int: ...

    def section(self, name: str) -> dict[str, Any]: ...

    def mutation(self) -> Mutation: ...

    def commit(self, tx: Mutation) -> None: ...

    def writing(self) -> AbstractContextManager[None]: ...

    def retrying(self, operation: Callable[[], T]) -> T: ...

    def require_writable(self) -> None: ...

    def now(self) -> object: ...

    def stamp(self) -> str: ...

    def new_id(self, prefix: str) -> str: ...

    def new_element_id(self, prefix: str) -> str: ...

    def block_order(self) -> BlockOrder: ...


@dataclass(frozen=True)
class ModelHooks:
    """The model callbacks of a memory (None: that step is not run by the engine)."""

    summarizer: Summarizer | None = None
    extractor: Extractor | None = None
    projector: Projector | None = None


class NamespaceStore:
    """The `Store` of one namespace: the loaded `MemoryState` over a backend, commits with the revision check,
    the clock and id factories, and the block order. Built by `StrataGate.open_with_backend`."""

    def __init__(self, backend: StorageBackend, state: MemoryState, *, now: Callable[[], object],
                 new_id: Callable[[str], str], new_element_id: Callable[[str], str]):
        self.backend = backend
        self.state = state
        self._now = now
        self._new_id = new_id
        self._new_element_id = new_element_id
        self._block_order: BlockOrder | None = None
        self._lost_race_at = -math.inf
        """When a commit of this store last raised StorageConflictError (time.monotonic())."""
        state.listeners.append(self._on_applied)

    @property
    def current_turn(self) -> int:
        return self.state.current_turn

    @property
    def read_only(self) -> bool:
        return bool(self.backend.read_only)

    def section(self, name: str) -> dict[str, Any]:
        return self.state.section(name)

    def mutation(self) -> Mutation:
        return Mutation(self.state)

    def require_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{self.backend.location} ({self.state.namespace}) is open read-only")

    def commit(self, tx: Mutation) -> None:
        self.require_writable()
        try:
            revision = self.backend.commit(self.state.namespace, tx.to_change_set(), self.state.revision)
        except StorageConflictError:
            # Another writer got there first: nothing of this mutation was applied; catch up with what is
            # stored, so a retry works on current state (and lazily loaded sections never mix revisions).
            self._lost_race_at = time.monotonic()
            self.state.reload()
            raise
        self.state.apply(tx, revision)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Run one write operation (the reads it decides on, and its commit) in this block.

        Optimistic at first: the commit's revision check catches another writer. But a writer whose commits
        keep succeeding always holds current state, so with optimism alone it wins every race and the other
        writer, which must reload after each conflict, can starve. So for `CONTENDED_FOR` seconds after this
        store lost a race, its operations run under the backend's write lock, on state reloaded inside it:
        the retry cannot lose, and while writers contend they queue for the lock instead of racing.
        """
        if time.monotonic() - self._lost_race_at > CONTENDED_FOR:
            yield
            return
        namespace = self.state.namespace
        before = self.state.revision
        try:
            with self.backend.exclusive(namespace):
                space = self.backend.load_space(namespace)
                if space is None or space["revision"] != self.state.revision:
                    self.state.reload()
                before = self.state.revision
                yield
        except BaseException:
            if self.state.revision != before:
                # The commit inside was applied to the state but its transaction did not end: catch up.
                self.state.reload()
            raise

    def retrying(self, operation: Callable[[], T]) -> T:
        """`operation()` (reads, builds and commits one mutation, calls no model); if another writer committed
        first, once more under the write lock on reloaded state, where it cannot lose again. A second
        `StorageConflictError` only comes from a lock wait longer than the timeout (`StorageBusyError`)."""
        try:
            with self.writing():
                return operation()
        except StorageConflictError:
            with self.writing():
                return operation()

    def now(self) -> object:
        return self._now()

    def stamp(self) -> str:
        return to_utc8_iso(self._now())

    def new_id(self, prefix: str) -> str:
        return self._new_id(prefix)

    def new_element_id(self, prefix: str) -> str:
        return self._new_element_id(prefix)

    def block_order(self) -> BlockOrder:
        if self._block_order is None:
            self._block_order = BlockOrder(self.section("blocks").values())
        return self._block_order

    def _on_applied(self, section: str, keys: list[str]) -> None:
        if section == "*":
            self._block_order = None
        elif section == "blocks" and self._block_order is not None:
            blocks = self.section("blocks")
            for key in keys:
                self._block_order.add(blocks[key])
