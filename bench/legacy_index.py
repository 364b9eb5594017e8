#!/usr/bin/env python3
"""The outside search index of a writable v5 file: the search after a commit, kept current or rebuilt.

A v5 file (the reference fixture tests/fixtures/reference-v5-basic.sqlite with `EVENTS` more events written
into it by plain SQL, as the reference would store them) is opened writable, so it stays in its own schema and
its event search index lives in the outside cache. A fresh process builds that index with a first search,
then `COMMITS` times retitles one event (one commit) and searches for the new title. `engine` is this tree
(`now`) or the git revision given with `--baseline` (whose commits left the index to be rebuilt at the next
search); the two alternate over `ROUNDS` rounds and the table gives medians.

    .venv/bin/python bench/legacy_index.py [--quick] [--baseline REV]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "fixtures" / "reference-v5-basic.sqlite"
NAMESPACE = "project:atlas"
EVENTS = 20_000
QUICK_EVENTS = 3_000
COMMITS = 3
ROUNDS = 3
WORDS = ["atlas", "deploy", "review", "cache", "kafka", "redis", "grafana", "berlin", "tea", "coffee", "release",
         "migration", "budget", "hiring", "design"]


def v5_file(path: Path, events: int) -> None:
    shutil.copyfile(REFERENCE, path)
    with closing(sqlite3.connect(path)) as connection, connection:  # closed: the copies read one file, no WAL
        columns = [row[1] for row in connection.execute("PRAGMA table_info(events)")]
        model = dict(zip(columns, connection.execute("SELECT * FROM events LIMIT 1").fetchone(), strict=True))
        last = connection.execute("SELECT max(position) FROM events").fetchone()[0]
        rng = random.Random(1)
        rows = []
        for number in range(events):
            row = {**model, "id": f"evt_bench_{number}", "position": last + 1 + number,
                   "title": f"{' '.join(rng.choices(WORDS, k=5))} {number}",
                   "summary": " ".join(rng.choices(WORDS, k=20))}
            rows.append(tuple(row[name] for name in columns))
        marks = ", ".join("?" * len(columns))
        connection.executemany(f"INSERT INTO events ({', '.join(columns)}) VALUES ({marks})", rows)


def measure(path: str) -> None:
    """In this (fresh) process: build the outside index, then commit and search `COMMITS` times."""
    from stratagate.storage.backend import ChangeSet
    from stratagate.storage.sql import open_backend

    backend = open_backend(path)
    assert backend.legacy is not None, "the file must stay in its own (v5) schema"
    start = time.perf_counter()
    backend.event_search_index(NAMESPACE).rank("atlas")
    figures: dict[str, list[float] | float] = {"build_s": time.perf_counter() - start, "wall": [], "cpu": []}
    for number in range(COMMITS):
        record = backend.fetch(NAMESPACE, "events", [f"evt_bench_{number}"])[0]
        changes = ChangeSet()
        changes.upsert("events", {**record, "title": f"zeppelin {number}"})
        start, start_cpu = time.perf_counter(), time.process_time()
        backend.commit(NAMESPACE, changes, backend.load_space(NAMESPACE)["revision"])
        found = backend.event_search_index(NAMESPACE).rank("zeppelin")
        figures["wall"].append(time.perf_counter() - start)
        figures["cpu"].append(time.process_time() - start_cpu)
        assert len(found) == number + 1, found
    backend.close()
    print(json.dumps(figures))


def run(engine: Path | None, source: Path, scratch: Path) -> dict:
    """One fresh process on a fresh copy of `source` with an empty cache; `engine`: a baseline's folder, or
    None for this tree's installed package."""
    database = scratch / "v5.sqlite"
    shutil.copyfile(source, database)
    cache = scratch / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    environment = {**os.environ, "STRATAGATE_CACHE_DIR": str(cache)}
    if engine is not None:
        environment["PYTHONPATH"] = str(engine)
    child = subprocess.run([sys.executable, __file__, "--measure", str(database)], env=environment,
                           capture_output=True, text=True)
    if child.returncode:
        raise RuntimeError(f"measuring {engine or 'now'} failed:\n{child.stderr}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def baseline_engine(revision: str, scratch: Path) -> Path:
    """The `core` package of a git revision, importable as `stratagate` from the returned folder."""
    archive = scratch / "baseline.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, "core"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(scratch / "baseline", filter="data")
    (scratch / "engine").mkdir()
    (scratch / "engine" / "stratagate").symlink_to(scratch / "baseline" / "core")
    return scratch / "engine"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_EVENTS:,} events instead of {EVENTS:,}")
    parser.add_argument("--baseline", metavar="REV", help="also measure the engine of this git revision")
    parser.add_argument("--measure", metavar="DATABASE", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure:
        measure(arguments.measure)
        return
    events = QUICK_EVENTS if arguments.quick else EVENTS
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        source = scratch / "source.sqlite"
        v5_file(source, events)
        engines: dict[str, Path | None] = {"now": None}
        if arguments.baseline:
            engines[arguments.baseline] = baseline_engine(arguments.baseline, scratch)
        samples: dict[str, list[dict]] = {name: [] for name in engines}
        for _ in range(ROUNDS):
            for name, engine in engines.items():
                samples[name].append(run(engine, source, scratch))
            loads.append(os.getloadavg()[0])
    rows = []
    for name, runs in samples.items():
        walls = [value for run in runs for value in run["wall"]]
        cpus = [value for run in runs for value in run["cpu"]]
        rows.append([name, f"{statistics.median(run['build_s'] for run in runs):.2f}",
                     f"{statistics.median(walls):.3f}", f"{statistics.median(cpus):.3f}"])
    table = markdown_table(["engine", "first search (builds the index) s", "commit + next search s", "CPU s"], rows)
    total = events + 12
    text = (
        f"## Outside search index of a writable v5 file, {total:,} events\n\n"
        f"`bench/legacy_index.py`: the reference's v5 fixture with {events:,} more events, opened writable (it "
        "stays in its own schema, so its search index lives in the outside cache). A fresh process builds the "
        f"index with a first search, then {COMMITS} times commits one retitled event and searches for the new "
        f"title. Medians over {ROUNDS} interleaved processes per engine ({COMMITS} commits each); CPU is the "
        "process's (`time.process_time`). The index follows this process's commits (`search_cache.advance`: "
        "the event changes applied to a copy of the cache file) instead of being rebuilt at the next search; "
        "another writer's commit still means a rebuild. Load average (1 min) on the 2-core machine during the "
        f"run: {', '.join(f'{load:.1f}' for load in loads)}.\n\n{table}"
    )
    print(text)
    write_section("legacy-index", text)


if __name__ == "__main__":
    main()
