"""Benchmark memories with realistic blocks, built once per size into the bench cache and reused.

`block_memory(events, blocks)` is a StrataGate SQLite file (v7, its persistent search index built) holding
`blocks` sealed blocks spread over `THREADS` threads, each block 12 turns = 24 raw messages of 40–120 words
with L0–L4 texts of realistic length, and `events` event cards (`search.iter_synthetic_events`: Zipf text,
20 % Han) cut from those blocks in order (`events / blocks` per block, each citing two of its messages).
Everything is streamed into one transaction, so a million events build in bounded memory. The cache is
`memory_files.cache_directory()`; delete a file to rebuild it.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

from memory_files import cache_directory, publish
from search import iter_synthetic_events

from stratagate.storage.sql import open_backend

NAMESPACE = "bench:blocks"
THREADS = 4
TURNS_PER_BLOCK = 12
CHUNK = 2000
"""Records per write while streaming a section."""
FORMAT = 1
"""Bump when the generated content changes, so cached files are rebuilt."""
WORDS = [f"{syllable}{suffix}" for syllable in ("ka", "lo", "mi", "ren", "tu", "sa", "vel", "do", "pri", "na")
         for suffix in ("", "n", "ro", "ta", "lis", "mor", "zen", "qu", "fi", "gor")]


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def _turn_of(block: int) -> tuple[str, int]:
    """(thread, first turn) of block number `block`: threads take blocks round robin, 12 turns each."""
    return f"thread-{block % THREADS}", (block // THREADS) * TURNS_PER_BLOCK + 1


def _messages(block: int, rng: random.Random) -> list[dict]:
    thread, _start = _turn_of(block)
    return [
        {"id": f"msg_{block}_{number}", "role": "user" if number % 2 == 0 else "assistant",
         "content": _words(rng, 40, 120), "createdAt": f"2026-03-01T{number % 24:02d}:00:00.000+08:00",
         "threadId": thread}
        for number in range(2 * TURNS_PER_BLOCK)
    ]


def _blocks(count: int) -> Iterator[dict]:
    rng = random.Random(count)
    for block in range(count):
        thread, start = _turn_of(block)
        position = block // THREADS + 1
        yield {
            "id": f"blk_{block}", "threadId": thread, "sequence": block + 1, "startTurn": start,
            "endTurn": start + TURNS_PER_BLOCK - 1, "createdAt": "2026-03-01T00:00:00.000+08:00",
            "shouldExtract": False, "l0Title": _words(rng, 4, 8), "l0Tags": [_words(rng, 1, 1) for _ in range(3)],
            "l1Summary": _words(rng, 20, 40), "l2Keypoints": [_words(rng, 8, 14) for _ in range(5)],
            "l3Condensed": _words(rng, 80, 120), "l4Readable": _words(rng, 200, 300),
            "l5Raw": _messages(block, rng), "pointerCurrentLevel": 5, "pointerAnchorLevel": 5,
            "pointerAnchorBlockPosition": position, "lastLiftedAt": None, "lastLiftedBy": None,
        }


def _events(count: int, blocks: int) -> Iterator[dict]:
    rng = random.Random(count)
    for number, card in enumerate(iter_synthetic_events(count)):
        block = number * blocks // count
        first = rng.randrange(2 * TURNS_PER_BLOCK - 1)
        yield {
            **card, "sourceMessageIds": [f"msg_{block}_{first}", f"msg_{block}_{first + 1}"],
            "sourceBlockId": f"blk_{block}", "scope": "user",
            "criticality": rng.choice(["routine", "routine", "preference"]), "confidence": 1.0, "supersededBy": None,
            "weight": {"mentionCount": rng.randint(1, 3), "lastAdoptedTurn": rng.randint(0, 100),
                       "lastRetrievedAt": None, "pinned": False, "floorWeight": 0.0, "forcedCap": None},
        }


def _in_chunks(records: Iterator[dict]) -> Iterator[list[dict]]:
    chunk: list[dict] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def block_memory(events: int, blocks: int) -> Path:
    path = cache_directory() / f"blocks-{events}-{blocks}-v{FORMAT}.sqlite"
    if path.exists():
        return path
    building = path.with_suffix(".building")
    for leftover in building.parent.glob(building.name + "*"):
        leftover.unlink()
    print(f"bench: building {events:,} events in {blocks:,} blocks in {path} (once)", file=sys.stderr, flush=True)
    turns = (blocks + THREADS - 1) // THREADS * TURNS_PER_BLOCK
    space = {"currentTurn": turns, "blockTurnSize": TURNS_PER_BLOCK, "blockDecayLambda": 0.3}
    with open_backend(building) as backend, backend.write_transaction(NAMESPACE) as connection:
        backend.start_namespace(connection, NAMESPACE, space, 1, replace=False)
        for section, records in (("blocks", _blocks(blocks)), ("events", _events(events, blocks))):
            for chunk in _in_chunks(records):
                backend.write_records(connection, NAMESPACE, section, chunk)
        print("bench: building the search index", file=sys.stderr, flush=True)
        backend.finish_namespace(connection, NAMESPACE)
    return publish(building, path)


if __name__ == "__main__":
    print(block_memory(int(sys.argv[1]), int(sys.argv[2])))
