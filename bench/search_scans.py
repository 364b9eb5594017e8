#!/usr/bin/env python3
"""One-shot CLI start-up, and the searches that used to read whole sections: raw messages and elements.

Each row is one new `stratagate` process (or a floor command) run `--runs` times, interleaved with the
other rows; the table gives the median wall time, the median CPU time (user + system) and the largest
peak RSS, all from the kernel's accounting of that child (`wait4`). The machine is shared, so wall time
carries the other processes' load; CPU time is the steadier figure. A child's peak RSS cannot read below
this benchmark process's own RSS when it forks (about 73 MB here): the kernel carries the high-water mark
across fork and exec, so the small floors show that figure.

- start-up floors: `python -c pass`, `python -c "import sqlalchemy"` (the SQL layer every search needs),
  the same with numpy (which ranking words needs), `stratagate --version`, and a plain `stratagate search`
  (words, no `--explain`) on `memory_files.memory_file(100_000)` (its event index in the file), which adds
  ICU, click and the engine's own modules to that floor (every event search kind, cold, beside Python's
  sqlite3 running the FTS5 peer's query: bench/search_cold.py);
- raw-message search (`--kind raw`): the reference's unranked scan of sealed messages, first 6 sharing a
  word with the query, on `block_memories.block_memory(100_000, 16_700)` (400,800 messages in 16,700
  blocks): a word in about every message, and a word found nowhere (the whole namespace is scanned);
- element search (`--kind elements`): `elements_file(20_000)`, 20,000 elements of 5 facts each, its element
  index in the file; a text query, the same with a type filter, and with `--explain`;
- event search with `--explain` on `memory_files.memory_file(100_000)` (its event index in the file): words,
  and a word with a participant (the explanation lists every other candidate as a filter mismatch).

With `--baseline DIR` (a checkout of an earlier commit) every row also runs on that checkout's engine
(its `core/` imported as `stratagate`), interleaved with this one, so the before and after columns come from
the same run.

    .venv/bin/python bench/search_scans.py [--quick] [--runs N] [--baseline DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_memories import NAMESPACE as BLOCKS_NAMESPACE
from block_memories import block_memory
from memory_files import NAMESPACE as EVENTS_NAMESPACE
from memory_files import cache_directory, memory_file, publish
from report import markdown_table, write_section
from search_cold import PYTHON, STRATAGATE, _reaped

from stratagate.storage.sql import open_backend

ELEMENTS_NAMESPACE = "bench:elements"
FACTS_PER_ELEMENT = 5
TYPES = ("person", "project", "place", "tool", "team", "topic")
FORMAT = 2
"""Bump when the generated content changes, so cached files are rebuilt (2: with the element index)."""


def _word(rng: random.Random) -> str:
    # 2,000 syllable pairs with a Zipf-like skew: a few words in many facts, most in a handful.
    rank = min(int(rng.paretovariate(1.1)), 2000) - 1
    return f"{'kalomirentusavedopri'[rank % 10 * 2:rank % 10 * 2 + 2]}{rank // 10:03d}"


def _elements(count: int) -> Iterator[dict]:
    rng = random.Random(count)
    stamp = "2026-03-01T00:00:00.000+08:00"
    for number in range(count):
        facts = [{
            "id": f"fact_{number}_{position}", "key": f"{_word(rng)}_{position}", "mode": "state",
            "value": " ".join(_word(rng) for _ in range(rng.randint(2, 8))), "validFrom": "2026-03-01",
            "sourceEventIds": [], "status": "active", "createdAt": stamp, "updatedAt": stamp,
        } for position in range(FACTS_PER_ELEMENT)]
        yield {
            "id": f"elem_{number}", "name": f"{_word(rng)} {_word(rng)}", "type": rng.choice(TYPES),
            "aliases": [_word(rng) for _ in range(rng.randint(0, 2))], "currentState": "", "sourceEventIds": [],
            "sourceMessageIds": [], "createdAt": stamp, "updatedAt": f"2026-03-{1 + number % 28:02d}T00:00:00.000+08:00",
            "weight": {"mentionCount": 1, "lastAdoptedTurn": 0, "lastRetrievedAt": None, "pinned": False,
                       "floorWeight": 0.0, "forcedCap": None},
            "facts": facts,
        }


def elements_file(count: int) -> Path:
    """A memory of `count` elements (`FACTS_PER_ELEMENT` facts each), built once into the benchmark cache."""
    path = cache_directory() / f"elements-{count}-v{FORMAT}.sqlite"
    if path.exists():
        return path
    building = path.with_suffix(".building")
    for leftover in building.parent.glob(building.name + "*"):
        leftover.unlink()
    print(f"bench: building {count:,} elements in {path} (once)", file=sys.stderr, flush=True)
    space = {"currentTurn": 1, "blockTurnSize": 6, "blockDecayLambda": 0.3}
    with open_backend(building) as backend, backend.write_transaction(ELEMENTS_NAMESPACE) as connection:
        backend.start_namespace(connection, ELEMENTS_NAMESPACE, space, 1, replace=False)
        chunk: list[dict] = []
        for record in _elements(count):
            chunk.append(record)
            if len(chunk) == 1000:
                backend.write_records(connection, ELEMENTS_NAMESPACE, "elements", chunk)
                chunk = []
        if chunk:
            backend.write_records(connection, ELEMENTS_NAMESPACE, "elements", chunk)
        backend.finish_namespace(connection, ELEMENTS_NAMESPACE)
    return publish(building, path)


def _rows(quick: bool) -> list[tuple[str, str, list[str]]]:
    """(group, what, command) for every row."""
    blocks = str(block_memory(10_000, 1_670) if quick else block_memory(100_000, 16_700))
    elements = str(elements_file(2_000 if quick else 20_000))
    events = str(memory_file(10_000 if quick else 100_000))
    search = [STRATAGATE, "search"]
    return [
        ("start-up", "`python -c pass`", [PYTHON, "-c", "pass"]),
        ("start-up", "`python -c \"import sqlalchemy\"`", [PYTHON, "-c", "import sqlalchemy"]),
        ("start-up", "`python -c \"import sqlalchemy, numpy\"` (one OpenBLAS thread, as in the CLI)",
         [PYTHON, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; import sqlalchemy, numpy"]),
        ("start-up", "`stratagate --version`", [STRATAGATE, "--version"]),
        ("start-up", "`stratagate search`, words (no --explain)", [*search, events, "anbado gorvelte", "--namespace",
                                                                 EVENTS_NAMESPACE]),
        ("raw messages", "a word in about every message", [*search, blocks, "sazen", "--namespace", BLOCKS_NAMESPACE,
                                                           "--kind", "raw"]),
        ("raw messages", "a word found nowhere", [*search, blocks, "zzzqqq", "--namespace", BLOCKS_NAMESPACE,
                                                  "--kind", "raw"]),
        ("elements", "text query", [*search, elements, "ka001 mi004", "--namespace", ELEMENTS_NAMESPACE,
                                    "--kind", "elements"]),
        ("elements", "text query + type filter", [*search, elements, "ka001 mi004", "--namespace",
                                                  ELEMENTS_NAMESPACE, "--kind", "elements", "--type", "tool"]),
        ("elements", "text query, --explain", [*search, elements, "ka001 mi004", "--namespace", ELEMENTS_NAMESPACE,
                                               "--kind", "elements", "--explain"]),
        ("events, --explain", "words", [*search, events, "anbado gorvelte", "--namespace", EVENTS_NAMESPACE,
                                        "--explain"]),
        ("events, --explain", "word + participant", [*search, events, "fizenka", "--namespace", EVENTS_NAMESPACE,
                                                     "--participant", "Niaj", "--explain"]),
    ]


def _baseline_path(checkout: Path, directory: str) -> str:
    """A directory where `stratagate` is the checkout's engine, for PYTHONPATH."""
    link = Path(directory) / "stratagate"
    link.symlink_to((checkout / "core").resolve(), target_is_directory=True)
    return directory


BASELINE_SCRIPT = ("import sys\nfrom stratagate.cli import main\nsys.argv[0] = 'stratagate'\n"
                   "getattr(main, 'main', main.cli)()")
"""This venv's `stratagate` script for a baseline checkout: the script calls `main`, which checkouts before
it was added lack (their script called the click group, `cli`)."""


def _measure(command: list[str], pythonpath: str | None) -> tuple[float, float, float]:
    saved = os.environ.get("PYTHONPATH")
    if pythonpath:
        os.environ["PYTHONPATH"] = pythonpath
        if command[0] == STRATAGATE:
            command = [PYTHON, "-c", BASELINE_SCRIPT, *command[1:]]
    try:
        _out, wall, cpu, rss = _reaped(command)
    finally:
        if pythonpath:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
    return wall, cpu, rss


def _summary(samples: list[tuple[float, float, float]]) -> str:
    return (f"{statistics.median(s[0] for s in samples):.2f} / {statistics.median(s[1] for s in samples):.2f} | "
            f"{max(s[2] for s in samples):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small memories (1,670 blocks, 2k elements)")
    parser.add_argument("--runs", type=int, default=3, help="processes per row (default 3)")
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit to measure beside this one")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/performance.md alone")
    arguments = parser.parse_args()
    rows = _rows(arguments.quick)
    engines = {"now": None}
    with tempfile.TemporaryDirectory(prefix="stratagate-baseline-") as directory:
        if arguments.baseline:
            engines = {"before": _baseline_path(arguments.baseline, directory), "now": None}
        samples: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for run in range(arguments.runs):
            for _group, what, command in rows:
                for engine, pythonpath in engines.items():
                    print(f"search_scans: run {run + 1}, {what} ({engine})", file=sys.stderr, flush=True)
                    samples.setdefault((what, engine), []).append(_measure(command, pythonpath))
    load = os.getloadavg()
    headers = ["kind", "what"]
    for engine in engines:
        headers += [f"{engine}: wall / CPU s (median)", f"{engine}: peak RSS MB"]
    table = []
    for group, what, _command in rows:
        cells = [group, what]
        for engine in engines:
            cells += _summary(samples[(what, engine)]).split(" | ")
        table.append(cells)
    size = "10,000 events in 1,670 blocks, 2,000 elements, 10,000 cards" if arguments.quick else \
        "100,000 events in 16,700 blocks (400,800 messages); 20,000 elements (100,000 facts); 100,000 cards"
    markdown = "\n".join([
        "## One-shot CLI start-up; raw-message, element and explained event search without loading their sections",
        "",
        __doc__.split("\n\n", 1)[1].split("\n\n    .venv")[0],
        "",
        f"Memories: {size}. {arguments.runs} processes per row; load average at the end of the run "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) on {os.cpu_count()} cores.",
        "",
        markdown_table(headers, table),
    ])
    print(markdown)
    if not arguments.no_write:
        write_section("search-scans", markdown)


if __name__ == "__main__":
    main()
