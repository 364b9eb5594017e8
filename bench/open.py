"""Opening a memory database: 1k vs 100k events, listing 100k event ids, and the RSS of a lister.

Builds two SQLite files through `SqlBackend.commit()` (synthetic, snapshot-shaped records: 100 events per
sealed block of 24 messages, each event citing two of its block's messages), then in one run times:

- open: `open_backend(path)` + `load_space` + `close` (what the app does before drawing anything);
  goal: open at 100k ≤ 1.5× open at 1k. Peer: raw `sqlite3` connect + the same one-row SELECT.
- read-only (forensic) open: a file at rest is read in place with SQLite's immutable mode (no copy, no
  hash until asked); goal: read-only open at 100k ≤ 1.5× at 1k.
- `query_keys(events)`: every event id in section order. Peer: the same SELECT in raw `sqlite3`.
- `fetch` of one page of 100 events from the middle of the list (what a table view draws).
- peak RSS (VmHWM) of a fresh process that opens the 100k file and lists every event id, against a fresh
  process that only imports sqlite3 and SELECTs the ids (the app's budget is < 400 MB).

Writes its table to docs/performance.md (section "open").

    .venv/bin/python bench/open.py [--quick] [--repeats 5] [--no-write]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, median_ms, write_section

from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend

NAMESPACE = "bench:open"
EVENTS_PER_BLOCK = 100
MESSAGES_PER_BLOCK = 24
EVENTS_PER_COMMIT = 2000
STAMP = "2026-03-02T09:00:00.000+08:00"
WORDS = ["atlas", "search", "sqlite", "postgres", "demo", "release", "budget", "meeting", "design", "review"]

BACKEND_LISTER = """
import sys
from stratagate.storage.sql import open_backend
backend = open_backend(sys.argv[1])
ids = backend.query_keys(sys.argv[2], "events")
backend.fetch(sys.argv[2], "events", ids[:100])
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""
RAW_LISTER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1])
statement = "SELECT id FROM events WHERE namespace = ? ORDER BY position"
ids = [row[0] for row in connection.execute(statement, [sys.argv[2]])]
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def _message(block: int, n: int) -> dict:
    return {
        "id": f"msg_{block}_{n}",
        "role": "user" if n % 2 == 0 else "assistant",
        "content": f"{WORDS[(block + n) % len(WORDS)]} message {n} of block {block}",
        "createdAt": STAMP,
    }


def _block(block: int) -> dict:
    return {
        "id": f"blk_{block}", "sequence": block + 1, "startTurn": block * 12 + 1, "endTurn": block * 12 + 12,
        "createdAt": STAMP, "shouldExtract": True, "l0Title": f"Block {block}", "l0Tags": ["bench"],
        "l1Summary": "summary", "l2Keypoints": ["point"], "l3Condensed": "condensed", "l4Readable": "readable",
        "l5Raw": [_message(block, n) for n in range(MESSAGES_PER_BLOCK)],
        "pointerCurrentLevel": 5, "pointerAnchorLevel": 5, "pointerAnchorBlockPosition": block + 1,
        "lastLiftedAt": None, "lastLiftedBy": None,
    }


def _event(number: int) -> dict:
    block = number // EVENTS_PER_BLOCK
    word = WORDS[number % len(WORDS)]
    return {
        "id": f"evt_{number}", "title": f"{word} event {number}", "summary": f"{word} happened ({number})",
        "narrative": f"A longer narrative about {word} and event number {number}.", "tags": [word, "bench"],
        "quotes": [f"we talked about {word}"],
        "sourceMessageIds": [f"msg_{block}_{number % MESSAGES_PER_BLOCK}", f"msg_{block}_{(number + 1) % MESSAGES_PER_BLOCK}"],
        "sourceBlockId": f"blk_{block}",
        "temporal": {"mentionedAt": STAMP, "participants": ["Alice", "Bob"][: 1 + number % 2], "eventType": "meeting"},
        "scope": "user", "criticality": "routine", "confidence": 0.8, "status": "active", "supersededBy": None,
        "weight": {"mentionCount": 1, "lastAdoptedTurn": 1, "lastRetrievedAt": None, "pinned": False,
                   "floorWeight": 0, "forcedCap": None},
        "createdAt": STAMP, "updatedAt": STAMP,
    }


def build(path: Path, events: int) -> float:
    """Write `events` events (and their blocks) through commit(); returns seconds taken."""
    started = time.perf_counter()
    with open_backend(path) as backend:
        revision = backend.create_space(NAMESPACE, {"blockTurnSize": 12})
        blocks = -(-events // EVENTS_PER_BLOCK)
        for start in range(0, blocks, 100):
            changes = ChangeSet(space={"currentTurn": min(blocks, start + 100) * 12})
            for block in range(start, min(blocks, start + 100)):
                changes.upsert("blocks", _block(block))
            revision = backend.commit(NAMESPACE, changes, revision)
        for start in range(0, events, EVENTS_PER_COMMIT):
            changes = ChangeSet()
            for number in range(start, min(events, start + EVENTS_PER_COMMIT)):
                changes.upsert("events", _event(number))
            revision = backend.commit(NAMESPACE, changes, revision)
    return time.perf_counter() - started


def _open_and_read_space(path: Path, read_only: bool = False) -> None:
    with open_backend(path, read_only=read_only) as backend:
        backend.load_space(NAMESPACE)


def _raw_open(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("SELECT * FROM memory_spaces WHERE namespace = ?", [NAMESPACE]).fetchone()
    connection.close()


def _raw_ids(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        statement = "SELECT id FROM events WHERE namespace = ? ORDER BY position"
        return [row[0] for row in connection.execute(statement, [NAMESPACE])]
    finally:
        connection.close()


def _peak_rss_mib(script: str, path: Path) -> float:
    output = subprocess.run(
        [sys.executable, "-c", script, str(path), NAMESPACE], check=True, capture_output=True, text=True
    ).stdout
    return int(output) / 1024


def interleaved_open_ms(paths: list[Path], repeats: int, read_only: bool = False) -> list[float]:
    """Median open time per file, the files opened in turn so that load on the machine hits all alike."""
    samples: list[list[float]] = [[] for _ in paths]
    for path in paths:
        _open_and_read_space(path, read_only)  # warm-up: imports, page cache
    for _ in range(repeats):
        for index, path in enumerate(paths):
            samples[index].append(median_ms(lambda path=path: _open_and_read_space(path, read_only), 1))
    return [statistics.median(times) for times in samples]


def measure(path: Path, events: int, repeats: int) -> dict[str, float]:
    with open_backend(path) as backend:
        keys_ms = median_ms(lambda: backend.query_keys(NAMESPACE, "events"), repeats)
        middle = backend.query_keys(NAMESPACE, "events")[events // 2 : events // 2 + 100]
        page_ms = median_ms(lambda: backend.fetch(NAMESPACE, "events", middle), repeats)
    return {
        "raw_open": median_ms(lambda: _raw_open(path), repeats),
        "keys": keys_ms,
        "raw_keys": median_ms(lambda: _raw_ids(path), repeats),
        "page": page_ms,
        "size_mib": path.stat().st_size / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k vs 10k events instead of 1k vs 100k")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/performance.md")
    arguments = parser.parse_args()
    sizes = (1_000, 10_000 if arguments.quick else 100_000)
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-open-") as directory:
        paths = {events: Path(directory) / f"events-{events}.sqlite" for events in sizes}
        build_seconds = {events: build(path, events) for events, path in paths.items()}
        opens = interleaved_open_ms(list(paths.values()), 3 * arguments.repeats)
        read_only_opens = interleaved_open_ms(list(paths.values()), 3 * arguments.repeats, read_only=True)
        results = {}
        for (events, path), open_ms, read_only_ms in zip(paths.items(), opens, read_only_opens, strict=True):
            results[events] = measure(path, events, arguments.repeats) | {"open": open_ms,
                                                                           "read_only_open": read_only_ms}
            print(f"{events} events: built in {build_seconds[events]:.1f} s; {results[events]}", flush=True)
        large_path = paths[sizes[1]]
        rss = _peak_rss_mib(BACKEND_LISTER, large_path)
        raw_rss = _peak_rss_mib(RAW_LISTER, large_path)

    small, large = (results[size] for size in sizes)
    rows = [
        [f"{events:,}", f"{r['size_mib']:.1f}", f"{build_seconds[events]:.1f}", f"{r['open']:.1f}",
         f"{r['raw_open']:.2f}", f"{r['read_only_open']:.1f}", f"{r['keys']:.1f}", f"{r['raw_keys']:.1f}",
         f"{r['page']:.1f}"]
        for events, r in results.items()
    ]
    headers = ["events", "file MiB", "build via commit() (s)", "open (ms)", "raw sqlite3 open (ms)",
               "read-only open (ms)", "query_keys (ms)", "raw SELECT ids (ms)", "fetch 100 (ms)"]
    ratio = large["open"] / small["open"]
    bullets = "\n".join([
        f"- open at {sizes[1]:,} / open at {sizes[0]:,}: **{ratio:.2f}×** (goal ≤ 1.5×): opening reads only "
        "the `memory_spaces` row; sections load on demand.",
        f"- query_keys of {sizes[1]:,} events: {large['keys']:.0f} ms, "
        f"{large['keys'] / large['raw_keys']:.2f}× the raw sqlite3 SELECT of the same ids.",
        f"- peak RSS of a process that opens {sizes[1]:,} events and lists every id (plus one page of 100 "
        f"records): **{rss:.0f} MiB** (budget < 400 MB); a raw sqlite3 process selecting the same ids: "
        f"{raw_rss:.0f} MiB.",
        f"- read-only open at {sizes[1]:,} / at {sizes[0]:,}: **{large['read_only_open'] / small['read_only_open']:.2f}×** "
        "(goal ≤ 1.5×): a file at rest is read in place in SQLite's immutable mode, neither copied nor hashed "
        "(the sha256 is computed on first use); only a file with a live WAL or hot journal, or a v1–v6 file, "
        "is copied to a private directory. The original stays byte-identical.",
    ])
    markdown = "\n\n".join([
        "## Opening a memory database (`bench/open.py`)",
        markdown_table(headers, rows),
        bullets,
        f"Median of {arguments.repeats} runs per figure ({3 * arguments.repeats} for opens and read-only opens, "
        "the two files opened in turn), after one warm-up.",
    ])
    print(markdown)
    if not arguments.no_write:
        write_section("open", markdown)


if __name__ == "__main__":
    main()
