"""Block spans and thread ids come from SQL and agree with the blocks they summarize, on every backend and
on v5/v6 files kept in their own schema, without loading any block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import stratagate
from stratagate.blocks import BlockSpan
from stratagate.memory import StrataGate
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE
from tests.storage.legacy_files import THREADED_V5_BLOCKS, build_legacy_file


def _from_blocks(memory: StrataGate, thread_id: str | None = None) -> list[BlockSpan]:
    """The spans as the loaded blocks and `get_block_context` give them (the slow path the spans replace)."""
    blocks = {block.id: block for block in memory.list_blocks(thread_id)}
    return [
        BlockSpan(entry.id, entry.thread_id, blocks[entry.id].sequence, *entry.turn_range,
                  blocks[entry.id].l0_title, entry.level, entry.age, len(blocks[entry.id].l5_raw))
        for entry in memory.get_block_context(thread_id)
    ]


def _threads_from_blocks(memory: StrataGate) -> list[str | None]:
    seen = dict.fromkeys(block.thread_id for block in sorted(memory.list_blocks(), key=lambda b: b.sequence))
    seen.update(dict.fromkeys(message.thread_id for message in memory.list_open_tail()))
    return list(seen)


def _check_against_blocks(location: Any, namespace: str) -> None:
    """Spans and threads first, in a fresh open (nothing loaded), then the same from the loaded blocks."""
    with open_backend(location) as backend:
        memory = StrataGate.open_with_backend(backend, namespace)
        threads = memory.thread_ids()
        # None: every block (the engine has no "unthreaded only" filter)
        spans = {thread: memory.block_spans(thread) for thread in dict.fromkeys([None, *threads])}
        assert not memory._state.is_loaded("blocks") and not memory._state.is_loaded("openTail")
        assert spans[None], "the case must hold blocks"
        assert threads == _threads_from_blocks(memory)
        for thread, found in spans.items():
            assert found == _from_blocks(memory, thread)
        wanted = [span.id for span in spans[None][::-1][:2]]
        assert [block.id for block in memory.get_blocks(wanted)] == wanted
        message = memory.get_blocks(wanted[:1])[0].l5_raw[-1].id
        assert memory.block_ids({"messageId": message}) == wanted[:1]
        assert memory.block_ids({"messageId": "msg_none"}) == []


def test_spans_match_the_blocks_on_sqlite_and_postgresql(database: str, reference_v7: dict[str, Any]) -> None:
    with open_backend(database) as backend:
        backend.import_namespace(REFERENCE_NAMESPACE, reference_v7["snapshot"])
    with stratagate.open(database, REFERENCE_NAMESPACE) as memory:  # more blocks, in two threads and none
        for turn in range(30):
            memory.append_turn(f"u{turn}", f"a{turn}", thread_id=["t-1", "t-2", None][turn % 3])
        memory.lift_block(memory.block_spans()[0].id, 5, "user")
    _check_against_blocks(database, REFERENCE_NAMESPACE)


@pytest.mark.parametrize("version", [5, 6])
def test_spans_of_a_file_kept_in_its_own_schema(tmp_path: Path, version: int) -> None:
    path = tmp_path / "memory.sqlite"
    build_legacy_file(path, version, THREADED_V5_BLOCKS)
    with open_backend(path) as backend:
        assert backend.legacy is not None
    _check_against_blocks(path, "legacy")


def test_spans_in_memory(reference_v7: dict[str, Any]) -> None:
    backend = MemoryBackend()
    backend.import_snapshot(REFERENCE_NAMESPACE, reference_v7["snapshot"])
    memory = StrataGate.open_with_backend(backend, REFERENCE_NAMESPACE)
    for turn in range(24):
        memory.append_turn(f"u{turn}", f"a{turn}", thread_id=["t-1", None][turn % 2])
    assert memory.thread_ids() == _threads_from_blocks(memory)
    assert memory.block_spans() == _from_blocks(memory)
    assert memory.block_spans("t-1") == _from_blocks(memory, "t-1")
    last = memory.block_spans()[-1].id
    assert memory.block_ids({"messageId": memory.get_blocks([last])[0].l5_raw[0].id}) == [last]
