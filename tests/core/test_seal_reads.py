"""Sealing a block reads only what it needs: a new process's first seal does not load the namespace's blocks
(16.7k blocks took seconds and 600 MB to load), and the block lands where a memory that had them all loaded
puts it (sequence, turns, position in its thread), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.memory import StrataGate
from stratagate.storage import thread_blocks
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


def _tallies(database: str) -> list[tuple]:
    """Each named thread's tally as a new process's seal reads it, and as counting its blocks gives it."""
    backend = open_backend(database)
    try:
        return [(backend.block_tally("seal", thread), backend._counted_tally("seal", thread))
                for thread in ("alpha", "beta")]
    finally:
        backend.close()


def _kept(database: str) -> dict[str, tuple[int, int]]:
    backend = open_backend(database)
    try:
        with backend.engine.connect() as connection:
            return {thread: (blocks, last) for thread, blocks, last, last_id in connection.exec_driver_sql(
                f"SELECT thread_id, blocks, last_sequence, last_block_id FROM {thread_blocks.TABLE}")
                if last_id == connection.exec_driver_sql(f"SELECT id FROM blocks WHERE sequence = {last}").scalar()}
    finally:
        backend.close()


def test_kept_block_counts_follow_seals_and_are_counted_again_when_stale(database: str):
    with stratagate.open(database, "seal", block_turn_size=2) as memory:
        _append(memory, 4)
    for rounds in (2, 2):  # new processes seal with the kept counts
        with stratagate.open(database, "seal") as memory:
            _append(memory, rounds)
            sealed = {block.thread_id: block for block in memory.list_blocks()}
    assert _kept(database) == {thread: (4, sealed[thread].sequence) for thread in ("alpha", "beta")}
    for kept, counted in _tallies(database):
        assert kept == counted

    # A writer that does not keep the counts (the reference, on a v7 file) adds a block: its thread's count
    # is stale (its last sequence moved) and the next tally counts the blocks.
    backend = open_backend(database)
    with backend.engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO blocks SELECT namespace, 'blk_foreign', thread_id, sequence + 1, start_turn + 2, "
            "end_turn + 2, created_at, should_extract, l0_title, l0_tags_json, l1_summary, l2_keypoints_json, "
            "l3_condensed, l4_readable, pointer_current_level, pointer_anchor_level, 5, last_lifted_at, "
            f"last_lifted_by FROM blocks WHERE id = '{sealed['beta'].id}'")
    backend.close()
    assert [kept for kept, _counted in _tallies(database)] == [counted for _kept, counted in _tallies(database)]
    assert _tallies(database)[1][1][0] == 5

    # A lift (a commit writing a stored block) drops the namespace's counts; the next seal keeps them again.
    with stratagate.open(database, "seal") as memory:
        memory.lift_block(sealed["alpha"].id)
    assert _kept(database) == {}
    for kept, counted in _tallies(database):
        assert kept == counted
    with stratagate.open(database, "seal") as memory:
        _append(memory, 2)
        placed = {block.thread_id: block for block in memory.list_blocks()}
    assert placed["beta"].pointer_anchor_block_position == 6  # 4 sealed, the foreign one, this one
    assert _kept(database)["alpha"] == (5, placed["alpha"].sequence)
    for kept, counted in _tallies(database):
        assert kept == counted
