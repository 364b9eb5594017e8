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
  wall time, CPU time, peak RSS; against the `sqlite3` CLI running the peer's query on the FTS5 file;
- warm, peer: the same queries through Python's sqlite3 on the FTS5 file, median.

Each figure is the median over the rounds. "Cold" is a new process with nothing of StrataGate's cached; the
operating system's file cache is warm (the benchmark cannot drop it). The machine is shared, so CPU time
(user + system) is given beside wall time, and the load average is recorded.

    .venv/bin/python bench/search_cold.py [--quick] [--sizes N ...] [--rounds N] [--postgresql URL] [--no-write]
    .venv/bin/python bench/search_cold.py --million   (the 1M-event tier alone, its own section)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
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

WORKER = """
import json, statistics, sys, time
started = time.perf_counter()
import stratagate
imported = time.perf_counter()
path, namespace, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
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
memory.close()
print(json.dumps({"import_ms": (imported - started) * 1000, "open_ms": (opened - imported) * 1000,
                  "first_ms": (first - opened) * 1000, "first_cpu_ms": first_cpu * 1000,
                  "warm_ms": statistics.median(samples), "warm_cpu_ms": statistics.median(cpu_samples)}))
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
    return stdout, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


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
    `stratagate copy`, which builds the persistent index in the copy's transaction."""
    print(f"search_cold: copying {size:,} events to PostgreSQL", file=sys.stderr, flush=True)
    _reaped([STRATAGATE, "copy", str(memory_file(size)), url, "--replace"])
    return url


def _cold(size: int, kind: str, queries: list[tuple[str, dict]], path: str, peer: Path) -> dict:
    """One round of a kind's cold figures: the worker, the CLI and the sqlite3 CLI, each a new process."""
    worker = [PYTHON, "-c", WORKER, path, NAMESPACE, json.dumps(queries)]
    query, options = queries[0]
    cli = [STRATAGATE, "search", path, *_cli_arguments(query, options), "--namespace", NAMESPACE]
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        stdout, wall, cpu, rss = _reaped(worker, cache=empty)
        row = json.loads(stdout) | {"worker_wall": wall, "worker_cpu": cpu, "worker_rss": rss}
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
        _out, row["cli_wall"], row["cli_cpu"], row["cli_rss"] = _reaped(cli, cache=empty)
    sql, parameters = _fts5_sql(query, options)
    _out, row["sqlite3_wall"], row["sqlite3_cpu"], _rss = _reaped(["sqlite3", str(peer), _inline(sql, parameters)])
    return row


def measure(size: int, by_kind: dict[str, list[tuple[str, dict]]], rounds: int,
            database: str | None = None) -> dict[str, dict]:
    """Every kind's figures at `size` (medians over `rounds`, the kinds interleaved), on the SQLite memory
    file or, given, a database URL holding it."""
    peer = fts5_file(size)
    path = database or str(memory_file(size))
    samples: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    connection = sqlite3.connect(f"{peer.resolve().as_uri()}?mode=ro", uri=True)
    for round_ in range(rounds):
        for kind in KINDS:
            print(f"search_cold: {size:,} events, {kind}, round {round_ + 1}/{rounds}", file=sys.stderr, flush=True)
            row = _cold(size, kind, by_kind[kind], path, peer)
            timings = []
            for query, options in by_kind[kind]:
                sql, parameters = _fts5_sql(query, options)
                start = time.perf_counter()
                connection.execute(sql, parameters).fetchall()
                timings.append((time.perf_counter() - start) * 1000)
            row["fts5_ms"] = statistics.median(timings)
            samples[kind].append(row)
    connection.close()
    return {kind: {name: statistics.median(row[name] for row in rows) for name in rows[0]}
            for kind, rows in samples.items()}


def _table(results: dict[int, dict[str, dict]], database: str, heading: list[str]) -> str:
    sizes = sorted(results)
    detail = []
    for size in sizes:
        for kind in KINDS:
            row = results[size][kind]
            detail.append([
                f"{size:,}", kind, f"{row['open_ms']:.0f}", f"{row['first_ms']:.0f} / {row['first_cpu_ms']:.0f}",
                f"{row['worker_wall']:.2f} / {row['worker_cpu']:.2f}",
                f"{row['warm_ms']:.2f} / {row['warm_cpu_ms']:.2f}",
                f"{row['fts5_ms']:.2f}", f"{row['warm_ms'] / max(row['fts5_ms'], 1e-3):.2f}×",
                f"{row['worker_rss']:.0f}", f"{row['cli_wall']:.2f} / {row['cli_cpu']:.2f}", f"{row['cli_rss']:.0f}",
                f"{row['sqlite3_wall']:.3f} / {row['sqlite3_cpu']:.3f}",
                f"{row['cli_wall'] / max(row['sqlite3_wall'], 1e-3):.0f}×",
            ])
    lines = [
        *heading,
        f"{database}:",
        "",
        "| events | kind | read-only open ms | first search ms, wall / CPU | searching process wall / CPU s "
        "| warm median ms, wall / CPU | FTS5 warm median ms | warm / FTS5 | searching process peak RSS MB "
        "| CLI wall / CPU s | its peak RSS MB | sqlite3 CLI wall / CPU s | CLI / sqlite3 CLI |",
        "|---|---|" + "---:|" * 11,
        *("| " + " | ".join(cells) + " |" for cells in detail),
    ]
    if 10_000 in results and 100_000 in results:
        small, large = 10_000, 100_000
        growth = [[kind, f"{results[large][kind]['warm_ms'] / max(results[small][kind]['warm_ms'], 1e-3):.2f}×",
                   f"{results[large][kind]['warm_cpu_ms'] / max(results[small][kind]['warm_cpu_ms'], 1e-3):.2f}×",
                   f"{results[large][kind]['first_ms'] / max(results[small][kind]['first_ms'], 1e-3):.2f}×",
                   f"{results[large][kind]['fts5_ms'] / max(results[small][kind]['fts5_ms'], 1e-3):.2f}×"]
                  for kind in KINDS]
        lines += ["", f"Growth {small:,} → {large:,} events:", "",
                  markdown_table(["kind", "warm median (wall)", "warm median (CPU)", "first search (wall)",
                                  "FTS5 warm median"], growth)]
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
