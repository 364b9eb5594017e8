"""Sealing a block reads only what it needs: a new process's first seal does not load the namespace's blocks
(16.7k blocks took seconds and 600 MB to load), and the block lands where a memory that had them all loaded
puts it (sequence, turns, position in its thread), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.memory import StrataGate
from stratagate.storage.sql import open_backend
from tests.postgres_server import fresh_database

THREADS = ("alpha", None, "beta")


class CountingLoads:
    """A backend that records which sections the engine loads whole."""

    def __init__(self, backend):
        self._backend = backend
        self.loaded: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self._backend, name)

    def load_section(self, namespace: str, section: str):
        self.loaded.append(section)
        return self._backend.load_section(namespace, section)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "seal.sqlite")
    return fresh_database(request.getfixturevalue("postgres_server"))


def _append(memory: StrataGate, rounds: int) -> None:
    for number in range(rounds):
        for thread in THREADS:
            memory.append_turn(f"{thread} turn {number}", "ok", thread_id=thread)


def _placement(memory: StrataGate) -> list[tuple]:
    return sorted((b.sequence, b.thread_id, b.start_turn, b.end_turn, b.pointer_anchor_block_position,
                   [m.content for m in b.l5_raw]) for b in memory.list_blocks())


def test_a_new_process_seals_without_loading_blocks(database: str):
    with stratagate.open(database, "seal", block_turn_size=2) as memory:
        _append(memory, 5)  # two blocks per thread sealed, one turn left in each tail
    expected = stratagate.in_memory(block_turn_size=2)
    _append(expected, 7)

    backend = CountingLoads(open_backend(database))
    memory = StrataGate.open_with_backend(backend, "seal")
    results = [memory.append_turn(f"{thread} turn {number}", "ok", thread_id=thread)
               for number in (5, 6) for thread in THREADS]
    assert "blocks" not in backend.loaded
    sealed = [result.sealed_block for result in results if result.sealed_block is not None]
    assert [(block.thread_id, block.sequence) for block in sealed] == [("alpha", 7), (None, 8), ("beta", 9)]
    assert _placement(memory) == _placement(expected)
    memory.close()
