#!/usr/bin/env python3
"""Live follow's census at 1M events: the events that are not active, with and without their partial index.

The memory is the cached `block_memory(1_000_000, 10_000)` (bench/block_memories.py), copied to a scratch
folder (the cache is shared and stays as it is), where 2 % of the events are made not active in one SQL update
(1 % superseded, 0.5 % forgotten, 0.5 % archived). Each measurement is a fresh process that opens the copy
and takes two censuses (`stratagate.follow.take_census`: a first one, then one since the first, as live follow
does); the table gives the first census, its `key_statuses` part (the non-active events) and the census
after it, in wall and CPU time. Configurations, interleaved over `ROUNDS` rounds (medians):

- without the index, read-only: a v7 file written before `events_inactive_idx` existed (and any read-only
  open of one): the non-active statuses are read from every event, as every census did before;
- first writable census: the same file opened writable; its first census creates the index (once);
- with the index, writable / read-only: every later open.

    .venv/bin/python bench/census.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_memories import NAMESPACE, block_memory
from report import markdown_table, write_section

SIZES = (1_000_000, 10_000)
QUICK_SIZES = (100_000, 16_700)
ROUNDS = 3
FOLLOWED = ["superseded", "forgotten", "archived"]


def measure(path: str, read_only: bool) -> None:
    """In this (fresh) process: open, take two censuses, print the timings as JSON."""
    from stratagate.follow import take_census
    from stratagate.storage.sql import open_backend

    backend = open_backend(path, read_only=read_only)
    figures: dict[str, float] = {}

    def timed(name: str, function):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        figures[f"{name}_s"] = time.perf_counter() - start
        figures[f"{name}_cpu_s"] = time.process_time() - start_cpu
        return result

    first = timed("first", lambda: take_census(backend, NAMESPACE))
    timed("next", lambda: take_census(backend, NAMESPACE, since=first))
    statuses = timed("statuses", lambda: backend.key_statuses(NAMESPACE, "events", FOLLOWED))
    backend.close()
    print(json.dumps({**figures, "not_active": len(statuses)}))


def run(path: Path, read_only: bool) -> dict:
    child = subprocess.run([sys.executable, __file__, "--measure", str(path), *(["--read-only"] * read_only)],
                           capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


def prepare(source: Path, scratch: Path) -> tuple[Path, Path]:
    """Two copies with 2 % of the events not active: one without the partial index, one with it."""
    without = scratch / "without-index.sqlite"
    shutil.copyfile(source, without)
    with sqlite3.connect(without) as connection:
        connection.execute(
            "UPDATE events SET status = CASE position % 200 WHEN 0 THEN 'forgotten' WHEN 1 THEN 'archived' "
            "ELSE 'superseded' END WHERE position % 100 IN (0, 1)")
        connection.execute("DROP INDEX IF EXISTS events_inactive_idx")
    with sqlite3.connect(without) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return without, scratch / "with-index.sqlite"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZES[0]:,} events instead of {SIZES[0]:,}")
    parser.add_argument("--measure", metavar="DATABASE", help=argparse.SUPPRESS)
    parser.add_argument("--read-only", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure:
        measure(arguments.measure, arguments.read_only)
        return
    events, blocks = QUICK_SIZES if arguments.quick else SIZES
    source = block_memory(events, blocks)
    loads = [os.getloadavg()[0]]
    samples: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        without, with_index = prepare(source, Path(scratch))
        for _ in range(ROUNDS):
            shutil.copyfile(without, with_index)
            samples.setdefault("without the index, read-only open", []).append(run(without, True))
            samples.setdefault("first census of a writable open (creates the index)", []).append(
                run(with_index, False))
            samples.setdefault("with the index, writable open", []).append(run(with_index, False))
            samples.setdefault("with the index, read-only open", []).append(run(with_index, True))
            loads.append(os.getloadavg()[0])
    rows = []
    for name, runs in samples.items():
        def median(key: str, runs: list[dict] = runs) -> float:
            return statistics.median(run[key] for run in runs)
        rows.append([name, f"{median('first_s'):.3f}", f"{median('first_cpu_s'):.3f}", f"{median('statuses_s'):.3f}",
                     f"{median('statuses_cpu_s'):.3f}", f"{median('next_s'):.3f}", f"{median('next_cpu_s'):.3f}"])
    not_active = samples["with the index, writable open"][0]["not_active"]
    table = markdown_table(["open", "first census s", "CPU s", "non-active statuses s", "CPU s", "next census s",
                            "CPU s"], rows)
    text = (
        f"## Live follow's census, {events:,} events\n\n"
        f"`bench/census.py`: the cached memory of {events:,} events in {blocks:,} blocks, copied, with "
        f"{not_active:,} events made not active (superseded, forgotten, archived). Each row is a fresh process "
        "that opens the copy and takes live follow's first census and the next one (`take_census`); the "
        "non-active statuses are the census's `key_statuses` part, timed again after both censuses. Medians over "
        f"{ROUNDS} interleaved rounds; CPU is the process's (`time.process_time`). The partial index "
        "`events_inactive_idx` (docs/compatibility.md) holds only the events that are not active; without it "
        "(a file written before it, opened read-only) the statuses are read from every event. The rest of a "
        "census counts each section and lists the keys past the previous count (an index walk over the events' "
        "position index). Load average (1 min) on the 2-core machine during the run: "
        f"{', '.join(f'{load:.1f}' for load in loads)}.\n\n{table}"
    )
    print(text)
    write_section("census", text)


if __name__ == "__main__":
    main()
