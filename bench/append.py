#!/usr/bin/env python3
"""`append_turn` cost at 1k and at 10k stored turns: does appending stay flat as the memory grows?

Workload: seeded turns in three threads (short English statements: decisions, preferences, dates, questions,
fillers), block size 12. For each configuration two memories are built, one to 1k turns and one to 10k;
then timed rounds of `ROUND` turns alternate between them (so machine load hits both alike) and the table
gives the median ms per turn.

Configurations (all in this run):
- SQLite file, no model: `stratagate.open(path)` with the reference's default summary (no extraction). This
  is the engine's write path: each turn is one revision-checked commit of the rows it changes.
- in memory, no model: the same on `stratagate.in_memory()` (engine cost without SQL).
- in memory, rule-based models: `stratagate.rules` summarizer, extractor and projector (every 12 turns a
  block is summarized, events extracted and projected to elements).
- peer, whole-snapshot rewrite: the reference's persistence strategy (every mutation re-saves the whole
  namespace), emulated as in-memory append plus writing the full snapshot JSON into SQLite per turn.

First seal in a new process (`--first-seal` runs only this part): a memory of `SEAL_BLOCKS` blocks (3 threads,
12 turns each, 24 messages per block, imported in one transaction) on SQLite and, when a PostgreSQL server
can be started (tests/postgres_server.py), on PostgreSQL. A fresh process opens it and appends 12 turns to one
thread: the first 11 only store their turn, the 12th seals a block. `SEAL_RUNS` fresh processes in turn; the
table gives the medians over them of: the median of the 11, the sealing append, their ratio (goal: at most 2),
and the process's RSS after opening and its peak at the end.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

import stratagate
from stratagate import rules
from stratagate.memory import StrataGate

SIZES = (1_000, 10_000)
QUICK_SIZES = (1_000, 3_000)
ROUND = 96
ROUNDS = 7
PEER_ROUND = 4
SEED = 20260302
NAMES = ["Alice", "Bob", "Carol", "Dana", "Erin", "Frank", "Grace", "Priya"]
TOOLS = ["SQLite", "PostgreSQL", "Redis", "Kafka", "Grafana", "Sentry", "Nginx", "Docker"]
MONTHS = ["March", "April", "May", "June"]
SEAL_BLOCKS = 16_700
QUICK_SEAL_BLOCKS = 2_000
SEAL_NAMESPACE = "seal"
SEAL_RUNS = 5


class Workload:
    """Seeded turns: (user, assistant, thread)."""

    def __init__(self, seed: int = SEED):
        self.rng = random.Random(seed)
        self.count = 0

    def turn(self) -> tuple[str, str, str]:
        rng = self.rng
        self.count += 1
        name, tool, month = rng.choice(NAMES), rng.choice(TOOLS), rng.choice(MONTHS)
        user = rng.choice([
            f"We decided to use {tool} for the cache in project Atlas.",
            f"{name} prefers short status updates.",
            f"Schedule the review with {name} for {month} {rng.randint(1, 28)}.",
            f"How is {name} doing with the {tool} migration?",
            f"{name} is based in Berlin and owns the {tool} setup.",
            "ok",
            f"Load test {self.count}: p95 is {rng.randint(90, 400)} ms.",
        ])
        return user, f"Noted ({self.count}).", f"thread-{rng.randint(1, 3)}"


def append(memory: StrataGate, workload: Workload, count: int, after: Callable[[], None] | None = None) -> None:
    for _ in range(count):
        user, assistant, thread = workload.turn()
        memory.append_turn(user, assistant, thread_id=thread, created_at=1_772_400_000_000 + workload.count * 60_000)
        if after is not None:
            after()


def build(factory: Callable[[], StrataGate], turns: int, label: str) -> tuple[StrataGate, Workload]:
    memory, workload = factory(), Workload()
    start = time.perf_counter()
    append(memory, workload, turns)
    print(f"  built {label}: {turns} turns in {time.perf_counter() - start:.1f} s", flush=True)
    return memory, workload


def interleaved(pairs: list[tuple[StrataGate, Workload, Callable[[], None] | None]], per_round: int,
                rounds: int) -> list[float]:
    """Median ms per turn of each memory, measured in alternating rounds."""
    samples: list[list[float]] = [[] for _ in pairs]
    for _ in range(rounds):
        for index, (memory, workload, after) in enumerate(pairs):
            start = time.perf_counter()
            append(memory, workload, per_round, after)
            samples[index].append((time.perf_counter() - start) * 1000 / per_round)
    return [statistics.median(values) for values in samples]


def snapshot_writer(memory: StrataGate, path: Path) -> Callable[[], None]:
    """The peer: after each mutation, save the whole namespace (as the reference's SqliteStorage.save does)."""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE IF NOT EXISTS snapshot (namespace TEXT PRIMARY KEY, body TEXT NOT NULL)")

    def save() -> None:
        body = json.dumps(memory.export_snapshot(), separators=(",", ":"), ensure_ascii=False)
        with connection:
            connection.execute("INSERT OR REPLACE INTO snapshot VALUES (?, ?)", (memory.namespace, body))
    return save


def seal_snapshot(blocks: int) -> dict:
    """A namespace of `blocks` sealed blocks in 3 threads (12 turns of the workload's sentences each), no tail."""
    template = stratagate.in_memory(block_turn_size=12)
    workload = Workload()
    for _ in range(12):
        user, assistant, _thread = workload.turn()
        template.append_turn(user, assistant, thread_id="thread-1", created_at=1_772_400_000_000)
    snapshot = template.export_snapshot()
    model = snapshot["blocks"][0]
    snapshot["blocks"] = []
    for number in range(blocks):
        position = number // 3
        block = copy.deepcopy(model)
        thread = f"thread-{number % 3 + 1}"
        block.update(id=f"blk_{number}", threadId=thread, sequence=number + 1, startTurn=position * 12 + 1,
                     endTurn=position * 12 + 12, pointerAnchorBlockPosition=position + 1)
        for index, message in enumerate(block["l5Raw"]):
            message.update(id=f"msg_{number}_{index}", threadId=thread, content=f"{message['content']} [{number}]")
        snapshot["blocks"].append(block)
    snapshot["currentTurn"] = (blocks // 3 + 1) * 12
    return snapshot


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (VmRSS) or its peak (VmHWM; unlike ru_maxrss it does not count the
    parent's memory at the fork that started this process)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure_first_seal(database: str) -> None:
    """In this (fresh) process: open, append 12 turns to one thread, print the timings and RSS as JSON."""
    memory = stratagate.open(database, SEAL_NAMESPACE)
    opened_rss = rss_mb()
    workload = Workload(seed=SEED + 1)
    samples, cpu, sealed = [], [], None
    for _ in range(12):
        user, assistant, _thread = workload.turn()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = memory.append_turn(user, assistant, thread_id="thread-1")
        samples.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        sealed = result.sealed_block or sealed
    memory.close()
    assert sealed is not None and samples, "the 12th turn must seal a block"
    print(json.dumps({"append_ms": statistics.median(samples[:-1]), "seal_ms": samples[-1],
                      "append_cpu_ms": statistics.median(cpu[:-1]), "seal_cpu_ms": cpu[-1], "opened_mb": opened_rss,
                      "peak_mb": rss_mb("VmHWM")}))


def first_seal_rows(blocks: int) -> list[list[str]]:
    """Build the memory on SQLite (and PostgreSQL when a server starts), measure each in a fresh process."""
    from stratagate.storage.sql import open_backend

    snapshot = seal_snapshot(blocks)
    targets: list[tuple[str, str]] = []
    server = None
    with tempfile.TemporaryDirectory() as scratch:
        targets.append(("SQLite file", str(Path(scratch) / "seal.sqlite")))
        try:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.postgres_server import PostgresServer, _bin_dir

            bin_dir = _bin_dir()
            if bin_dir is not None:
                server = PostgresServer(bin_dir)
                server.start()
                targets.append(("PostgreSQL", server.create_database("seal")))
        except (ImportError, RuntimeError, OSError) as error:
            print(f"  PostgreSQL skipped: {error}", flush=True)
            server = None
        rows = []
        try:
            for name, database in targets:
                start = time.perf_counter()
                backend = open_backend(database)
                backend.import_namespace(SEAL_NAMESPACE, copy.deepcopy(snapshot))
                if backend.dialect == "postgresql":
                    # What autovacuum does within a minute of a bulk load, and what a memory in use has:
                    # statistics and a visibility map (without it counting a thread's blocks, which the first
                    # seal does, is a sequential scan: about 50 ms here).
                    with backend.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                        connection.exec_driver_sql("VACUUM ANALYZE")
                backend.close()
                print(f"  built {name}: {blocks:,} blocks in {time.perf_counter() - start:.1f} s", flush=True)
                runs = []
                for _ in range(SEAL_RUNS):
                    child = subprocess.run([sys.executable, __file__, "--measure-first-seal", database],
                                           capture_output=True, text=True, check=True)
                    figures = json.loads(child.stdout.strip().splitlines()[-1])
                    runs.append({**figures, "ratio": figures["seal_ms"] / figures["append_ms"],
                                 "cpu_ratio": figures["seal_cpu_ms"] / figures["append_cpu_ms"]})

                def median(key: str, runs: list[dict] = runs) -> float:
                    return statistics.median(run[key] for run in runs)
                rows.append([name, f"{median('append_ms'):.2f}", f"{median('seal_ms'):.2f}",
                             f"{median('ratio'):.1f}×", f"{median('append_cpu_ms'):.2f}",
                             f"{median('seal_cpu_ms'):.2f}", f"{median('cpu_ratio'):.1f}×",
                             f"{median('opened_mb'):.0f}", f"{median('peak_mb'):.0f}"])
        finally:
            if server is not None:
                server.stop()
    return rows


def first_seal(quick: bool) -> None:
    blocks = QUICK_SEAL_BLOCKS if quick else SEAL_BLOCKS
    print(f"first seal in a new process, {blocks:,} blocks", flush=True)
    loads = [os.getloadavg()[0]]
    table = markdown_table(["database", "median append_turn ms", "sealing append_turn ms", "ratio",
                            "append CPU ms", "sealing CPU ms", "CPU ratio", "RSS after open MB", "peak RSS MB"],
                           first_seal_rows(blocks))
    loads.append(os.getloadavg()[0])
    text = (
        "## First block seal in a new process\n\n"
        f"`bench/append.py --first-seal`: a memory of {blocks:,} blocks (3 threads, 24 messages per block) is "
        "opened by a fresh process, which appends 12 turns to one thread; the 12th seals a block. Medians over "
        f"{SEAL_RUNS} such processes. Goal: the sealing append costs at most 2× the median of the other 11, and "
        "RSS stays flat: sealing reads the thread's last block end and the highest sequence from the indexes "
        "instead of every block, and without a summarizer it goes in the turn's own commit.\n\n"
        f"{table}\n\n"
        "Before (the engine loaded every block to seal one; measured once on the same 16,700-block files): the "
        "sealing append took 19.8 and 22.9 s on SQLite (peak RSS 493 MB) and 14.9 s on PostgreSQL (peak 602 MB). "
        "Then the seal still did first-time work the other appends do not: SQLAlchemy compiled the block tally, "
        "the blocks' upsert and the two message deletes on their first use, processed the 24 moved messages' "
        "parameters row by row, deleted those messages from the open tail after the block's rows had taken them "
        "over (a statement that finds nothing), and the condensed transcript counted UTF-16 units character by "
        "character and let `json.loads` raise on every message that cannot be JSON. These statements now go to "
        "the driver as plain SQL (no compiling, no per-row processing), the empty delete is gone, and the "
        "transcript takes the fast path for text without astral characters or a JSON start; the rows written "
        "are the same. Interleaved before/after on the 16,700-block SQLite file (10 fresh processes each, "
        "medians, load 4.2–4.7): sealing / median append 2.0× → 1.4× in wall time and 2.5× → 1.7× in CPU time. "
        "Next pass: a new block's row goes in with `ON CONFLICT DO NOTHING` (a shorter statement to prepare "
        "than the upsert) and, being new, has no stale messages, so the seal no longer sends that DELETE (a "
        "block already stored is still updated and cleaned); the tally for a named thread lost its two "
        "subqueries for the NULL/'' thread and runs on the driver's cursor without a transaction around it; "
        "the condensed transcript skips the fence, paragraph, sentence-split, JSON and tool-hint work for text "
        "that cannot need it (output checked equal to the previous code on random mixes of fillers, fences, "
        "JSON and tool hints) and computes each paste key once; the default summary collapses only the 8 "
        "messages it uses; block messages are copied without `dataclasses.replace`. The rows written are the "
        "same. Interleaved before/after (15 fresh processes each, same files, medians; load 3.6–5.0, so the "
        "appends' wall times were 2–4× their quiet value and only CPU time compares): sealing / median append "
        "in CPU time 2.0× → 1.5–1.7× on SQLite (three sets: 2.00 → 1.50, 2.01 → 1.71, 2.05 → 1.59) and "
        "1.5–1.7× → 1.4× on PostgreSQL (1.68 → 1.37, 1.53 → 1.38); the seal's own CPU time fell by about "
        "0.3 ms on both. What the seal still does beyond an append, and why it is not reliably under 1.6× in "
        "wall time: (1) the tally. It counted the thread's blocks, an index walk over about 5,570 entries, "
        "cold in a new process: 0.4–0.6 ms CPU on SQLite, about 1.3 ms on PostgreSQL including planning in a "
        "new server backend. The count must be exact (the new block's anchor position is the thread's block "
        "count + 1, and lifts rewrite the stored anchors, so no stored block tells it), so each thread's count "
        "is now kept in the database (`stratagate_thread_blocks`, created by a database's first seal and "
        "written in each seal's own commit; a count is used only while the block it was counted with is still "
        "its thread's last, so a block another writer adds makes it count again; docs/compatibility.md): the "
        "tally is one statement of index seeks, 0.2 ms of execution on PostgreSQL instead of 1.7 ms or more, "
        "though a new server backend still spends about 0.7 ms planning it. (2) The writes themselves: the block "
        "row and 24 message rows that change block and position (and so their entries in two indexes); on "
        "PostgreSQL 24 new row versions with their index entries and foreign-key checks (about 1.1 ms) and the block "
        "insert (about 0.5 ms in a new backend), and on SQLite a commit of 45 WAL pages against an append's 9 "
        "(a larger write and fsync). (3) The condensed transcript, now about 0.13 ms cold for 24 short "
        "messages. The machine is shared by other sessions' suites and benchmarks, so wall times vary from run "
        "to run: when the appends' wall time is well above their CPU time (quiet: 1.8 ms wall, 1.7 ms CPU on "
        "SQLite) other processes' waits were added to both columns and the wall ratio understates a quiet "
        "machine's; the CPU ratio is the steadier figure. The load average (1 min) during this run was "
        f"{', '.join(f'{load:.1f}' for load in loads)}."
    )
    print(text)
    write_section("append-first-seal", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} instead of {SIZES}")
    parser.add_argument("--first-seal", action="store_true", help="only the first-seal-in-a-new-process part")
    parser.add_argument("--measure-first-seal", metavar="DATABASE", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure_first_seal:
        measure_first_seal(arguments.measure_first_seal)
        return
    if arguments.first_seal:
        first_seal(arguments.quick)
        return
    small, large = QUICK_SIZES if arguments.quick else SIZES
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        configurations: list[tuple[str, Callable[[int], StrataGate]]] = [
            ("SQLite file, no model", lambda size: stratagate.open(directory / f"{size}.sqlite", "bench")),
            ("in memory, no model", lambda size: stratagate.in_memory()),
            ("in memory, rule-based models", lambda size: stratagate.in_memory(**rules.engine_options())),
        ]
        results: dict[str, list[float]] = {}
        longest_history = 0
        for name, factory in configurations:
            print(name, flush=True)
            built = [build(partial(factory, size), size, f"{size}") for size in (small, large)]
            results[name] = interleaved([(memory, workload, None) for memory, workload in built], ROUND, ROUNDS)
            longest_history = max([longest_history, *(len(element.facts) for element in built[1][0].list_elements())])
            for memory, _workload in built:
                memory.close()
        print("peer: whole-snapshot rewrite", flush=True)
        peers = [build(stratagate.in_memory, size, f"{size}") for size in (small, large)]
        peer_pairs = [(memory, workload, snapshot_writer(memory, directory / f"peer-{index}.sqlite"))
                      for index, (memory, workload) in enumerate(peers)]
        results["peer: whole-snapshot rewrite (reference strategy)"] = interleaved(peer_pairs, PEER_ROUND, ROUNDS)
    for name, (at_small, at_large) in results.items():
        rows.append([name, f"{at_small:.3f}", f"{at_large:.3f}", f"{at_large / at_small:.2f}×"])
    sqlite_large = results["SQLite file, no model"][1]
    peer_large = results["peer: whole-snapshot rewrite (reference strategy)"][1]
    table = markdown_table(
        ["configuration", f"ms/turn at {small:,} turns", f"ms/turn at {large:,} turns", f"{large // 1000}k / {small // 1000}k"],
        rows)
    text = (
        "## append_turn\n\n"
        f"`bench/append.py`: median ms per `append_turn` over {ROUNDS} alternating rounds of {ROUND} turns "
        f"({PEER_ROUND} for the peer) on memories already holding {small:,} and {large:,} turns (3 threads, "
        "blocks of 12). The target is a 10k/1k ratio of at most 1.2 for the engine's write path.\n\n"
        f"{table}\n\n"
        f"At {large:,} turns the SQLite write path costs {sqlite_large:.2f} ms per turn, "
        f"{peer_large / sqlite_large:.0f}× less than re-saving the whole namespace as the reference does.\n\n"
        "In the rule-based row this workload records a new decision for one project every few turns, so at "
        f"{large:,} turns one element holds {longest_history:,} facts. A projection that touches it commits only "
        "the facts it supersedes or adds and the sources it appends (fact-level changes, docs/architecture.md), "
        "and finds the facts to supersede through an index of active facts, so its cost does not follow that "
        "history."
    )
    print(text)
    write_section("append", text)
    first_seal(arguments.quick)


if __name__ == "__main__":
    main()
