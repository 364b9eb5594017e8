"""Shared helpers for engine tests: the reference fixture as a memory, a fixed clock and counting ids."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from stratagate.memory import StrataGate
from stratagate.snapshot import normalize_snapshot
from stratagate.storage.memory_backend import MemoryBackend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_ORACLE, REFERENCE_SNAPSHOT


def reference_memory(**options) -> StrataGate:
    """The reference fixture's namespace (v5 snapshot upgraded to v7) in a MemoryBackend."""
    exported = json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]
    backend = MemoryBackend()
    backend.import_snapshot(REFERENCE_NAMESPACE, normalize_snapshot(exported["snapshot"]), exported["revision"])
    return StrataGate.open_with_backend(backend, REFERENCE_NAMESPACE, **options)


class WithoutStoredIndexes:
    """A memory as a search over in-memory indexes sees it (`Retrieval(WithoutStoredIndexes(memory))`): no
    stored index, so every search indexes the events and elements it reads, as a new process once did. The
    oracle of the stored indexes."""

    def __init__(self, memory: StrataGate):
        self._memory = memory

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def event_search_index(self, progress: Any = None) -> None:
        return None

    def element_search_index(self, progress: Any = None) -> None:
        return None


def reference_oracle() -> dict:
    return json.loads(REFERENCE_ORACLE.read_text())["namespaces"][REFERENCE_NAMESPACE]


class Clock:
    """A fixed clock that moves only when told to (or by `step` on every reading)."""

    def __init__(self, start: str = "2026-03-02T01:00:00Z", step: timedelta = timedelta(0)):
        self.now = datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(UTC)
        self.step = step

    def __call__(self) -> datetime:
        current = self.now
        self.now += self.step
        return current

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

