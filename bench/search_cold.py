#!/usr/bin/env python3
"""Event search on a memory file, cold and warm, against SQLite FTS5 with the same filters.

The memories are `memory_files.memory_file(size)` (the synthetic cards of bench/search.py, 20 blocks, decay
inputs that vary), built once into the benchmark cache with their persistent index; the peer is
`memory_files.fts5_file(size)`, the same cards in an FTS5 table with the filter columns beside it.

Query kinds: the reference benchmark's mix (words, word + participants, word + happened range, empty +
eventType + latest, empty) and single words by document frequency (frequent: in about every card; mid:
about 5 %; rare: about 0.2 %). For each size and kind, `--rounds` times, the kinds interleaved:

- cold, engine: a new Python process with an empty StrataGate cache directory opens the file read-only
  (`stratagate.open(..., read_only=True)`, as the app and the CLI do), runs the kind's first query (first
  search) and then all of the kind's queries (warm median); its CPU time and peak RSS come from the kernel
  (`wait4`);
- cold, CLI: one `stratagate search FILE QUERY --namespace NS [filters]` process (empty cache directory):
  wall time, CPU time, peak RSS; against the `sqlite3` CLI running the peer's query on the FTS5 file, and
  against the floor of any Python tool: `python -c` that imports sqlite3 and runs the same peer query
  (Python's start-up alone, `python -c pass`, and with SQLAlchemy imported: bench/search_scans.py);
- warm, both: after its first query, the process runs each of the kind's queries once (the warm median:
  each distinct query's first run in a process that has searched before), then each of the kind's first
  `STEADY_QUERIES` queries `STEADY_REPEATS` times (the steady median: the same query again, as a user
  refining a search does). The peer does exactly the same in its own new Python process through Python's
  sqlite3 on the FTS5 file, so both sides start each round as cold as each other. The peer's query returns
  rowids only; a search returns its hits' contents, so the peer's first runs are also timed with the hits'
  nine fields fetched (the same query as a subquery, joined back to the FTS5 table by rowid).

- from the disk (SQLite only), after the columns above (which read both files whole first, to have them in
  the OS cache): the same first search (the worker's open and first query, the CLI, the sqlite3 CLI) with
  the memory file, or the peer's FTS5 file, evicted from the OS cache just before
  (`posix_fadvise(POSIX_FADV_DONTNEED)` after an fsync, checked with `fincore`), and only that file: Python
  and its libraries stay cached, as on a machine where the tool is used every day but this memory was not
  opened lately. What each process read from the disk is the kernel's count (`ru_inblock`).

Each figure is the median over the rounds. "Cold" is a new process with nothing of StrataGate's cached; in
the first columns the memory file is in the operating system's file cache (as right after another process
read it), in the "from the disk" ones it is not. The machine is shared, so CPU time (user + system) is given
beside wall time, and the load average is recorded.

    .venv/bin/python bench/search_cold.py [--quick] [--sizes N ...] [--rounds N] [--postgresql URL] [--no-write]
    .venv/bin/python bench/search_cold.py --million   (the 1M-event tier alone, its own section)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_files import NAMESPACE, fts5_file, memory_file
from report import markdown_table, write_section
from search import SEED, _mix_kind, _Text, reference_mix_queries
from sqlalchemy import create_engine

from stratagate.search.documents import event_search_fields

SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
MILLION = 1_000_000
LIMIT = 6
ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
STRATAGATE = str(Path(PYTHON).with_name("stratagate"))
MIX_KINDS = ("words", "word + participants", "word + happened range", "empty + eventType + latest", "empty")
WORD_KINDS = ("frequent word", "mid word", "rare word")
KINDS = MIX_KINDS + WORD_KINDS
WEIGHTS = ", ".join(str(weight) for _name, _text, weight in event_search_fields({}))

STEADY_REPEATS = 10  # runs of each query for the steady median
# The steady phase repeats only a kind's first queries: the words kind has 143, and FTS5 spends about a second
# on each frequent one at 1M events, so repeating them all would keep the 1M tier from ever finishing.
STEADY_QUERIES = 5
WORKER = """
import json, resource, statistics, sys, time
started = time.perf_counter()
import stratagate
imported = time.perf_counter()
path, namespace, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
repeats, steady_queries = int(sys.argv[4]), int(sys.argv[5])
memory = stratagate.open(path, namespace, read_only=True)
opened = time.perf_counter()
cpu = time.process_time()
query, options = queries[0]
memory.search_events(query, **options)
first = time.perf_counter()
first_cpu = time.process_time() - cpu
samples, cpu_samples = [], []
for query, options in queries:
    start, cpu = time.perf_counter(), time.process_time()
    memory.search_events(query, **options)
    samples.append((time.perf_counter() - start) * 1000)
    cpu_samples.append((time.process_time() - cpu) * 1000)
usage, warm_end = resource.getrusage(resource.RUSAGE_SELF), time.time()  # the searching process's figures
steady = []
for query, options in queries[:steady_queries]:
    for _ in range(repeats):
        start = time.perf_counter()
        memory.search_events(query, **options)
        steady.append((time.perf_counter() - start) * 1000)
memory.close()
print(json.dumps({"import_ms": (imported - started) * 1000, "open_ms": (opened - imported) * 1000,
                  "first_ms": (first - opened) * 1000, "first_cpu_ms": first_cpu * 1000,
                  "warm_ms": statistics.median(samples), "warm_cpu_ms": statistics.median(cpu_samples),
                  "steady_ms": statistics.median(steady), "warm_end": warm_end,
                  "worker_cpu": usage.ru_utime + usage.ru_stime, "worker_rss": usage.ru_maxrss / 1024}))
"""

# The floor of a one-shot Python search: start, import sqlite3, run the peer's query once.
PYTHON_PEER = ("import sqlite3, sys\n"
               "sqlite3.connect(sys.argv[1], uri=True).execute(sys.argv[2], sys.argv[3:]).fetchall()")

# The peer's process does what WORKER does, on the FTS5 file: first query, each query once, then repeated.
PEER_WORKER = """
import json, sqlite3, statistics, sys, time
uri, statements = sys.argv[1], json.loads(sys.argv[2])
repeats, steady_queries = int(sys.argv[3]), int(sys.argv[4])
connection = sqlite3.connect(uri, uri=True)
connection.execute(*statements[0]).fetchall()
samples, with_rows = [], []
for sql, parameters in statements:
    start = time.perf_counter()
    connection.execute(sql, parameters).fetchall()
    samples.append((time.perf_counter() - start) * 1000)
for sql, parameters in statements:
    sql = f"SELECT events.* FROM ({sql}) AS hits JOIN events ON events.rowid = hits.rowid"
    start = time.perf_counter()
    connection.execute(sql, parameters).fetchall()
    with_rows.append((time.perf_counter() - start) * 1000)
steady = []
for sql, parameters in statements[:steady_queries]:
    for _ in range(repeats):
        start = time.perf_counter()
        connection.execute(sql, parameters).fetchall()
        steady.append((time.perf_counter() - start) * 1000)
print(json.dumps({"fts5_ms": statistics.median(samples), "fts5_rows_ms": statistics.median(with_rows),
                  "fts5_steady_ms": statistics.median(steady)}))
"""


def _word_queries() -> dict[str, list[tuple[str, dict]]]:
    vocabulary = _Text(random.Random(SEED)).vocabulary  # sorted by Zipf rank
    return {
        "frequent word": [(word, {}) for word in vocabulary[:5]],
        "mid word": [(word, {}) for word in vocabulary[60:65]],
        "rare word": [(word, {}) for word in vocabulary[3000:3005]],
    }


def queries_by_kind() -> dict[str, list[tuple[str, dict]]]:
    by_kind: dict[str, list[tuple[str, dict]]] = {kind: [] for kind in MIX_KINDS}
    for query, options in reference_mix_queries():
        by_kind[_mix_kind(query, options)].append((query, options))
    return {**by_kind, **_word_queries()}


def _reaped(command: list[str], cache: str | None = None) -> tuple[str, float, float, float]:
    """(stdout, wall s, CPU s, peak RSS MB) of a child process, from the kernel's accounting (wait4), so the
    figures are this child's alone. `cache`: the child's StrataGate cache directory (default: the user's)."""
    stdout, wall, usage = _run(command, cache)
    return stdout, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _run(command: list[str], cache: str | None = None) -> tuple[str, float, os.struct_rusage]:
    """(stdout, wall s, the kernel's resource usage) of a child process (see `_reaped`)."""
    environment = os.environ | ({"STRATAGATE_CACHE_DIR": cache} if cache else {})
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env=environment)
    stdout = process.stdout.read()  # type: ignore[union-attr]
    stderr = process.stderr.read()  # type: ignore[union-attr]
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if process.returncode:
        raise RuntimeError(f"{' '.join(command[:3])} failed: {stderr.strip()[-500:]}")
    return stdout, wall, usage


def evicted(path: Path | str) -> None:
    """The file's pages dropped from the OS cache (written back first), and only its: the next process reads
    it from the disk while Python and its libraries stay cached, as on a machine where the tool is used every
    day but this memory was not opened lately. Checked with `fincore` where it is installed."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)
    if shutil.which("fincore"):
        resident = int(subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                                      capture_output=True, text=True, check=True).stdout)
        if resident > max(os.path.getsize(path) // 100, 1 << 20):
            raise RuntimeError(f"{path}: {resident:,} bytes still in the OS cache after POSIX_FADV_DONTNEED")


def cached(path: Path | str) -> None:
    """The file read whole, so that it is in the OS cache (as right after another process read it)."""
    with open(path, "rb", buffering=0) as file:
        while file.read(1 << 20):
            pass


def _read_mb(usage: os.struct_rusage) -> float:
    """What the process read from the disk (the kernel counts 512-byte blocks)."""
    return usage.ru_inblock * 512 / 1e6


def _cli_arguments(query: str, options: dict) -> list[str]:
    arguments = [query]
    for name in options.get("participants", []):
        arguments += ["--participant", name]
    for option, flag in (("event_type", "--event-type"), ("happened_from", "--happened-from"),
                         ("happened_to", "--happened-to"), ("temporal_intent", "--temporal-intent")):
        if option in options:
            arguments += [flag, options[option]]
    return arguments


def _fts5_sql(query: str, options: dict) -> tuple[str, list[str]]:
    """The peer's query for the same kind: FTS5 MATCH with column filters, joined to `meta` for dates."""
    words = " OR ".join(f'"{word}"' for word in re.findall(r"\w+", query))
    rank = f"ORDER BY bm25(events, {WEIGHTS}) LIMIT {LIMIT}"
    if "participants" in options:
        return f"SELECT rowid FROM events WHERE events MATCH ? {rank}", [
            f'({words}) AND participants : "{options["participants"][0]}"']
    if "happened_from" in options:
        return (f"SELECT events.rowid FROM events JOIN meta ON meta.rowid = events.rowid WHERE events MATCH ? "
                f"AND meta.happened BETWEEN ? AND ? {rank}", [words, options["happened_from"], options["happened_to"]])
    if "event_type" in options:
        return (f"SELECT events.rowid FROM events JOIN meta ON meta.rowid = events.rowid WHERE events MATCH ? "
                f"ORDER BY meta.happened DESC LIMIT {LIMIT}", [f'event_type : "{options["event_type"]}"'])
    if not words:
        return f"SELECT rowid FROM meta ORDER BY updated_at DESC LIMIT {LIMIT}", []
    return f"SELECT rowid FROM events WHERE events MATCH ? {rank}", [words]


def _inline(sql: str, parameters: list[str]) -> str:
    for value in parameters:
        sql = sql.replace("?", "'" + value.replace("'", "''") + "'", 1)
    return sql


def postgresql_copy(size: int, url: str) -> str:
    """The size's memory copied into the PostgreSQL database at `url` (replacing the previous size's), with
    `stratagate copy`, which builds the persistent index in the copy's transaction, then vacuumed and analyzed
    as autovacuum leaves it about a minute later. Measured before that, the replaced rows' cleared visibility
    map made every index-only scan fetch each row's heap page (a happened range's 4,287 positions: 58 ms
    instead of 1 ms of server time at 100k events), and autovacuum passing in the middle of a run moved the
    filtered kinds' figures from one run to the next."""
    print(f"search_cold: copying {size:,} events to PostgreSQL", file=sys.stderr, flush=True)
    _reaped([STRATAGATE, "copy", str(memory_file(size)), url, "--replace"])
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("VACUUM (ANALYZE)")
    finally:
        engine.dispose()
    return url


def _cold(size: int, kind: str, queries: list[tuple[str, dict]], path: str, peer: Path) -> dict:
    """One round of a kind's cold figures: the worker, the CLI, the sqlite3 CLI and Python's sqlite3 running
    the peer's query, each a new process."""
    worker = [PYTHON, "-c", WORKER, path, NAMESPACE, json.dumps(queries), str(STEADY_REPEATS),
              str(STEADY_QUERIES)]
    query, options = queries[0]
    cli = [STRATAGATE, "search", path, *_cli_arguments(query, options), "--namespace", NAMESPACE]
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        spawned = time.time()
        row = json.loads(_reaped(worker, cache=empty)[0])
        row["worker_wall"] = row.pop("warm_end") - spawned  # to the end of the warm pass (not the steady one)
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        _out, row["cli_wall"], row["cli_cpu"], row["cli_rss"] = _reaped(cli, cache=empty)
    sql, parameters = _fts5_sql(query, options)
    _out, row["sqlite3_wall"], row["sqlite3_cpu"], _rss = _reaped(["sqlite3", str(peer), _inline(sql, parameters)])
    uri = f"{peer.resolve().as_uri()}?mode=ro"
    python_peer = [PYTHON, "-c", PYTHON_PEER, uri, sql, *parameters]
    _out, row["python_wall"], row["python_cpu"], _rss = _reaped(python_peer)
    statements = [_fts5_sql(query, options) for query, options in queries]
    peer_worker = [PYTHON, "-c", PEER_WORKER, uri, json.dumps(statements),
                   str(STEADY_REPEATS), str(STEADY_QUERIES)]
    return row | json.loads(_reaped(peer_worker)[0])


def _from_disk(queries: list[tuple[str, dict]], path: str, peer: Path) -> dict:
    """One round of a kind's first search with the memory file (the peer's: the FTS5 file) evicted from the
    OS cache just before: the worker's open and first query, the CLI, the sqlite3 CLI."""
    query, options = queries[0]
    worker = [PYTHON, "-c", WORKER, path, NAMESPACE, json.dumps(queries[:1]), "1", "1"]
    cli = [STRATAGATE, "search", path, *_cli_arguments(query, options), "--namespace", NAMESPACE]
    row = {}
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        evicted(path)
        stdout, _wall, usage = _run(worker, cache=empty)
        found = json.loads(stdout)
        row |= {"disk_open_ms": found["open_ms"], "disk_first_ms": found["first_ms"],
                "disk_first_cpu_ms": found["first_cpu_ms"], "disk_worker_mb": _read_mb(usage)}
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        evicted(path)
        _out, row["disk_cli_wall"], usage = _run(cli, cache=empty)
        row["disk_cli_cpu"], row["disk_cli_mb"] = usage.ru_utime + usage.ru_stime, _read_mb(usage)
    evicted(peer)
    _out, row["disk_sqlite3_wall"], usage = _run(["sqlite3", str(peer), _inline(*_fts5_sql(query, options))])
    row["disk_sqlite3_cpu"], row["disk_sqlite3_mb"] = usage.ru_utime + usage.ru_stime, _read_mb(usage)
    return row


def measure(size: int, by_kind: dict[str, list[tuple[str, dict]]], rounds: int,
            database: str | None = None) -> dict[str, dict]:
    """Every kind's figures at `size` (medians over `rounds`, the kinds interleaved), on the SQLite memory
    file or, given, a database URL holding it."""
    peer = fts5_file(size)
    path = database or str(memory_file(size))
    samples: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    for round_ in range(rounds):
        if database is None:  # the cached columns first, with both files read whole: the disk ones evict them
            cached(path)
            cached(peer)
        for kind in KINDS:
            print(f"search_cold: {size:,} events, {kind}, round {round_ + 1}/{rounds}", file=sys.stderr, flush=True)
            samples[kind].append(_cold(size, kind, by_kind[kind], path, peer))
        for kind in KINDS if database is None else ():
            print(f"search_cold: {size:,} events, {kind} from the disk, round {round_ + 1}/{rounds}", file=sys.stderr,
                  flush=True)
            samples[kind][-1] |= _from_disk(by_kind[kind], path, peer)
    return {kind: {name: statistics.median(row[name] for row in rows) for name in rows[0]}
            for kind, rows in samples.items()}


def _ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / max(denominator, 1e-3):.2f}×"


def _table(results: dict[int, dict[str, dict]], database: str, heading: list[str]) -> str:
    sizes = sorted(results)
    cold, warm, disk = [], [], []
    for size in sizes:
        for kind in KINDS:
            row = results[size][kind]
            if "disk_first_ms" in row:
                disk.append([
                    f"{size:,}", kind, f"{row['open_ms']:.0f} → {row['disk_open_ms']:.0f}",
                    f"{row['first_ms']:.0f} / {row['first_cpu_ms']:.0f} → "
                    f"{row['disk_first_ms']:.0f} / {row['disk_first_cpu_ms']:.0f}", f"{row['disk_worker_mb']:.1f}",
                    f"{row['cli_wall']:.2f} / {row['cli_cpu']:.2f} → {row['disk_cli_wall']:.2f} / {row['disk_cli_cpu']:.2f}",
                    f"{row['disk_cli_mb']:.1f}",
                    f"{row['sqlite3_wall']:.3f} / {row['sqlite3_cpu']:.3f} → "
                    f"{row['disk_sqlite3_wall']:.3f} / {row['disk_sqlite3_cpu']:.3f}", f"{row['disk_sqlite3_mb']:.1f}",
                ])
            cold.append([
                f"{size:,}", kind, f"{row['open_ms']:.0f}", f"{row['first_ms']:.0f} / {row['first_cpu_ms']:.0f}",
                f"{row['worker_wall']:.2f} / {row['worker_cpu']:.2f}", f"{row['worker_rss']:.0f}",
                f"{row['cli_wall']:.2f} / {row['cli_cpu']:.2f}", f"{row['cli_rss']:.0f}",
                f"{row['sqlite3_wall']:.3f} / {row['sqlite3_cpu']:.3f}",
                f"{row['cli_wall'] / max(row['sqlite3_wall'], 1e-3):.0f}×",
                f"{row['python_wall']:.3f} / {row['python_cpu']:.3f}",
                f"{row['cli_wall'] / max(row['python_wall'], 1e-3):.1f}×",
            ])
            warm.append([
                f"{size:,}", kind, f"{row['warm_ms']:.2f} / {row['warm_cpu_ms']:.2f}", f"{row['fts5_ms']:.2f}",
                _ratio(row["warm_ms"], row["fts5_ms"]), f"{row['fts5_rows_ms']:.2f}",
                _ratio(row["warm_ms"], row["fts5_rows_ms"]), f"{row['steady_ms']:.2f}", f"{row['fts5_steady_ms']:.2f}",
                _ratio(row["steady_ms"], row["fts5_steady_ms"]),
            ])
    lines = [
        *heading,
        f"{database}, cold (a new process each):",
        "",
        markdown_table(["events", "kind", "read-only open ms", "first search ms, wall / CPU",
                        "searching process to the end of its warm pass, wall / CPU s", "its peak RSS MB",
                        "CLI wall / CPU s", "CLI peak RSS MB", "sqlite3 CLI wall / CPU s",
                        "CLI / sqlite3 CLI", "`python -c` sqlite3 + the same query, wall / CPU s",
                        "CLI / that"],
                       cold),
        *(["", f"{database}, cold with the file in the OS cache → with the file from the disk (only the memory "
                "file, or the FTS5 file for the peer, evicted from the OS cache just before; Python and its "
                "libraries stay cached):", "",
           markdown_table(["events", "kind", "read-only open ms", "first search ms, wall / CPU",
                           "read from the disk by that process MB", "CLI wall / CPU s", "CLI read MB",
                           "sqlite3 CLI wall / CPU s", "sqlite3 CLI read MB"], disk)] if disk else []),
        "",
        f"{database}, warm (after the process's first query), against FTS5 in a process doing the same:",
        "",
        markdown_table(["events", "kind", "each query's first run: median ms, wall / CPU", "FTS5 ms", "÷ FTS5",
                        "FTS5 with the hits' fields ms", "÷ that",
                        f"steady (first {STEADY_QUERIES} queries, each {STEADY_REPEATS}×): median ms", "FTS5 ms", "÷ FTS5"], warm),
    ]
    if 10_000 in results and 100_000 in results:
        small, large = results[10_000], results[100_000]
        growth = [[kind, _ratio(large[kind]["warm_ms"], small[kind]["warm_ms"]),
                   _ratio(large[kind]["warm_cpu_ms"], small[kind]["warm_cpu_ms"]),
                   _ratio(large[kind]["steady_ms"], small[kind]["steady_ms"]),
                   _ratio(large[kind]["first_ms"], small[kind]["first_ms"]),
                   _ratio(large[kind]["fts5_ms"], small[kind]["fts5_ms"]),
                   _ratio(large[kind]["fts5_steady_ms"], small[kind]["fts5_steady_ms"])]
                  for kind in KINDS]
        lines += ["", "Growth 10,000 → 100,000 events:", "",
                  markdown_table(["kind", "first run (wall)", "first run (CPU)", "steady", "first search (wall)",
                                  "FTS5 first run", "FTS5 steady"], growth)]
    return "\n".join(lines)


def _load() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k events only")
    parser.add_argument("--sizes", type=int, nargs="+", help="event counts to measure")
    parser.add_argument("--million", action="store_true",
                        help="only the 1M-event tier (built once, then cached), written to its own section")
    parser.add_argument("--rounds", type=int, default=3, help="cold processes per kind (medians are reported)")
    parser.add_argument("--postgresql", metavar="URL",
                        help="also measure the memories copied into this PostgreSQL database (its namespace is replaced)")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/performance.md alone")
    arguments = parser.parse_args()
    sizes = [MILLION] if arguments.million else list(arguments.sizes or (QUICK_SIZES if arguments.quick else SIZES))
    by_kind = queries_by_kind()
    load_before = _load()
    results = {size: measure(size, by_kind, arguments.rounds) for size in sizes}
    on_server = {}
    if arguments.postgresql:
        on_server = {size: measure(size, by_kind, arguments.rounds, postgresql_copy(size, arguments.postgresql))
                     for size in sizes}
    title = (f"## Event search on a memory file: cold and warm, against FTS5 "
             f"({', '.join(f'{size:,}' for size in sizes)} events)")
    intro = __doc__.split("\n\n", 1)[1].split("\n\n    .venv")[0]
    if arguments.million:
        intro = ("`bench/search_cold.py --million`: the same measurements as the section above, on a memory of "
                 "1,000,000 events (built once into the benchmark cache and reused).")
    markdown = _table(results, "SQLite", [title, "", intro, ""])
    if on_server:
        markdown += "\n\n" + _table(on_server, "PostgreSQL", [
            "The same memories copied into PostgreSQL (`stratagate copy`, which builds the index in the copy's "
            "transaction); the peer columns are the same FTS5 file on SQLite.", ""])
    markdown += (f"\n\nMedians of {arguments.rounds} rounds. Load average (1 / 5 / 15 min) before the runs: "
                 f"{load_before}; after: {_load()} (2 cores, shared with other work).")
    print(markdown)
    if not arguments.no_write:
        write_section("search-cold-million" if arguments.million else "search-cold", markdown)


if __name__ == "__main__":
    main()
