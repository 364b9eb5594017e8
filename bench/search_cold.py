#!/usr/bin/env python3
"""Event search on a memory file, cold and warm, against SQLite FTS5 with the same filters.

The memories are `memory_files.memory_file(size)` (the synthetic cards of bench/search.py, 20 blocks, decay
inputs that vary), built once into the benchmark cache with their persistent index; the peer is
`memory_files.fts5_file(size)`, the same cards in an FTS5 table with the filter columns beside it.

Query kinds: the reference benchmark's mix (words, word + participants, word + happened range, empty +
eventType + latest, empty) and single words by document frequency (frequent: in about every card; mid:
about 5 %; rare: about 0.2 %). For each size and kind:

- cold, engine: a new Python process opens the file read-only (`stratagate.open(..., read_only=True)`,
  as the app and the CLI do), runs the kind's first query (first search) and then all of the kind's
  queries (warm median); its peak RSS comes from the kernel (`wait4`). "Nothing cached": the process gets an
  empty StrataGate cache directory, so it reads every candidate's filter row; "cache kept": the filter
  columns a previous read-only process saved for this state of the file are loaded instead;
- cold, CLI: one `stratagate search FILE QUERY --namespace NS [filters]` process, nothing cached and cache
  kept: wall time, CPU time, peak RSS; against the `sqlite3` CLI running the peer's query on the FTS5 file;
- warm, peer: the same queries through Python's sqlite3 on the FTS5 file, median.

"Cold" is a new process with nothing of StrataGate's cached; the operating system's file cache is warm
(the benchmark cannot drop it). The machine is shared, so CPU time (user + system) is given beside wall time.

    .venv/bin/python bench/search_cold.py [--quick] [--sizes N ...] [--million] [--no-write]
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
query, options = queries[0]
memory.search_events(query, **options)
first = time.perf_counter()
samples = []
for query, options in queries:
    start = time.perf_counter()
    memory.search_events(query, **options)
    samples.append((time.perf_counter() - start) * 1000)
memory.close()
print(json.dumps({"import_ms": (imported - started) * 1000, "open_ms": (opened - imported) * 1000,
                  "first_ms": (first - opened) * 1000, "warm_ms": statistics.median(samples)}))
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


def measure(size: int, by_kind: dict[str, list[tuple[str, dict]]], database: str | None = None) -> dict[str, dict]:
    """Every kind's figures at `size`, on the SQLite memory file or, given, a database URL holding it."""
    peer = fts5_file(size)
    path = database or str(memory_file(size))
    rows: dict[str, dict] = {}
    connection = sqlite3.connect(f"{peer.resolve().as_uri()}?mode=ro", uri=True)
    for kind in KINDS:
        queries = by_kind[kind]
        print(f"search_cold: {size:,} events, {kind}", file=sys.stderr, flush=True)
        worker = [PYTHON, "-c", WORKER, str(path), NAMESPACE, json.dumps(queries)]
        query, options = queries[0]
        cli = [STRATAGATE, "search", str(path), *_cli_arguments(query, options), "--namespace", NAMESPACE]
        with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
            stdout, _wall, _cpu, _rss = _reaped(worker, cache=empty)
            first_uncached = json.loads(stdout)["first_ms"]
        with tempfile.TemporaryDirectory(prefix="stratagate-bench-cache-") as empty:
            _out, cli_wall, cli_cpu, cli_rss = _reaped(cli, cache=empty)
        stdout, _wall, _cpu, rss = _reaped(worker)
        row = json.loads(stdout) | {"worker_rss": rss, "first_uncached_ms": first_uncached,
                                    "cli_uncached": (cli_wall, cli_cpu, cli_rss)}
        _out, row["cli_wall"], row["cli_cpu"], row["cli_rss"] = _reaped(cli)
        sql, parameters = _fts5_sql(query, options)
        _out, row["sqlite3_wall"], row["sqlite3_cpu"], _rss = _reaped(["sqlite3", str(peer), _inline(sql, parameters)])
        samples = []
        for query, options in queries:
            sql, parameters = _fts5_sql(query, options)
            start = time.perf_counter()
            connection.execute(sql, parameters).fetchall()
            samples.append((time.perf_counter() - start) * 1000)
        row["fts5_ms"] = statistics.median(samples)
        rows[kind] = row
    connection.close()
    return rows


def _table(results: dict[int, dict[str, dict]], database: str) -> str:
    sizes = sorted(results)
    detail = []
    for size in sizes:
        for kind in KINDS:
            row = results[size][kind]
            uncached_wall, uncached_cpu, uncached_rss = row["cli_uncached"]
            detail.append([
                f"{size:,}", kind, f"{row['open_ms']:.0f}", f"{row['first_uncached_ms']:.0f}",
                f"{row['first_ms']:.0f}", f"{row['warm_ms']:.2f}",
                f"{row['fts5_ms']:.2f}", f"{row['warm_ms'] / max(row['fts5_ms'], 1e-3):.2f}×",
                f"{row['worker_rss']:.0f}", f"{uncached_wall:.2f} / {uncached_cpu:.2f}", f"{uncached_rss:.0f}",
                f"{row['cli_wall']:.2f} / {row['cli_cpu']:.2f}", f"{row['cli_rss']:.0f}",
                f"{row['sqlite3_wall']:.3f} / {row['sqlite3_cpu']:.3f}",
                f"{row['cli_wall'] / max(row['sqlite3_wall'], 1e-3):.0f}×",
            ])
    heading = [
        f"## Event search on a memory file: cold and warm, against FTS5 ({', '.join(f'{s:,}' for s in sizes)} events)",
        "",
        __doc__.split("\n\n", 1)[1].split("\n\n    .venv")[0],
        "",
    ] if database == "SQLite" else [
        "The same memories copied into PostgreSQL (`stratagate copy`, which builds the index in the copy's "
        "transaction); the peer columns are the same FTS5 file on SQLite.", "",
    ]
    lines = [
        *heading,
        f"{database}:",
        "",
        "| events | kind | read-only open ms | first search ms, nothing cached | first search ms, cache kept "
        "| warm median ms | FTS5 warm median ms | warm / FTS5 | searching process peak RSS MB "
        "| CLI wall / CPU s, nothing cached | its peak RSS MB | CLI wall / CPU s, cache kept | its peak RSS MB "
        "| sqlite3 CLI wall / CPU s | CLI (cache kept) / sqlite3 CLI |",
        "|---|---|" + "---:|" * 13,
        *("| " + " | ".join(cells) + " |" for cells in detail),
    ]
    if len(sizes) >= 2:
        small, large = sizes[-2], sizes[-1]
        growth = [[kind, f"{results[large][kind]['warm_ms'] / max(results[small][kind]['warm_ms'], 1e-3):.2f}×",
                   f"{results[large][kind]['first_uncached_ms'] / max(results[small][kind]['first_uncached_ms'], 1e-3):.2f}×",
                   f"{results[large][kind]['fts5_ms'] / max(results[small][kind]['fts5_ms'], 1e-3):.2f}×"]
                  for kind in KINDS]
        lines += ["", f"Growth {small:,} → {large:,} events:", "",
                  markdown_table(["kind", "warm median", "first search, nothing cached", "FTS5 warm median"],
                                 growth)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k events only")
    parser.add_argument("--sizes", type=int, nargs="+", help="event counts to measure")
    parser.add_argument("--million", action="store_true", help="add the 1M-event tier (built once, then cached)")
    parser.add_argument("--postgresql", metavar="URL",
                        help="also measure the memories copied into this PostgreSQL database (its namespace is replaced)")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/performance.md alone")
    arguments = parser.parse_args()
    sizes = list(arguments.sizes or (QUICK_SIZES if arguments.quick else SIZES))
    if arguments.million:
        sizes.append(MILLION)
    by_kind = queries_by_kind()
    results = {size: measure(size, by_kind) for size in sizes}
    markdown = _table(results, "SQLite")
    if arguments.postgresql:
        on_server = {size: measure(size, by_kind, postgresql_copy(size, arguments.postgresql)) for size in sizes}
        markdown += "\n\n" + _table(on_server, "PostgreSQL")
    print(markdown)
    if not arguments.no_write:
        write_section("search-cold", markdown)


if __name__ == "__main__":
    main()
