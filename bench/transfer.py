"""`stratagate export`, `import snapshot` and `copy` of a 100k-event memory: wall time and peak RSS.

Builds one SQLite file through `SqlBackend.commit()` in the shape of a long-lived agent's memory (6 events per
sealed block of 24 messages: 100k events, 16.7k blocks, 400k messages), then runs each command in a fresh
process and reads its peak RSS (VmHWM, the high-water mark, not the RSS at exit):

- export -o JSON; import snapshot of that JSON into a new SQLite file;
- copy to a new SQLite file; copy to a new PostgreSQL database (a throwaway server, as the tests start it).

Goals (issue 15): peak RSS ≤ 300 MB for `copy` to SQLite and to PostgreSQL; PostgreSQL ≤ 1.5× SQLite's time.
`--baseline REV` runs the same commands with the engine of git revision REV too (its `core/` extracted to a
temp dir and put first on the path), for a before/after table.

    .venv/bin/python bench/transfer.py [--quick] [--baseline REV] [--no-write]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package, for its PostgreSQL server

from report import markdown_table, write_section

from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend
from tests.postgres_server import PostgresServer, _bin_dir

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "bench:transfer"
EVENTS_PER_BLOCK = 6
MESSAGES_PER_BLOCK = 24
BLOCKS_PER_COMMIT = 500
STAMP = "2026-03-02T09:00:00.000+08:00"
WORDS = ["atlas", "search", "sqlite", "postgres", "demo", "release", "budget", "meeting", "design", "review"]

RUNNER = """
import sys
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])  # a baseline engine, found before the installed one
from stratagate.cli.main import cli
try:
    cli(sys.argv[2:], standalone_mode=False)
finally:
    hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(f"peak-rss-kib {hwm}", file=sys.stderr)
"""


def _message(block: int, n: int) -> dict:
    word = WORDS[(block * 7 + n) % len(WORDS)]
    return {
        "id": f"msg_{block}_{n}", "role": "user" if n % 2 == 0 else "assistant",
        "content": f"{word} message {n} of block {block}: we went over the {word} plan once more in detail.",
        "createdAt": STAMP,
    }


def _block(block: int) -> dict:
    return {
        "id": f"blk_{block}", "sequence": block + 1, "startTurn": block * 12 + 1, "endTurn": block * 12 + 12,
        "createdAt": STAMP, "shouldExtract": True, "l0Title": f"Block {block}", "l0Tags": ["bench"],
        "l1Summary": f"summary of block {block}", "l2Keypoints": ["point"], "l3Condensed": "condensed",
        "l4Readable": "readable", "l5Raw": [_message(block, n) for n in range(MESSAGES_PER_BLOCK)],
        "pointerCurrentLevel": 5, "pointerAnchorLevel": 5, "pointerAnchorBlockPosition": block + 1,
        "lastLiftedAt": None, "lastLiftedBy": None,
    }


def _event(number: int) -> dict:
    block, word = number // EVENTS_PER_BLOCK, WORDS[number % len(WORDS)]
    return {
        "id": f"evt_{number}", "title": f"{word} event {number}", "summary": f"{word} happened ({number})",
        "narrative": f"A longer narrative about {word} and event number {number}.", "tags": [word, "bench"],
        "quotes": [f"we talked about {word}"],
        "sourceMessageIds": [f"msg_{block}_{number % MESSAGES_PER_BLOCK}"], "sourceBlockId": f"blk_{block}",
        "temporal": {"mentionedAt": STAMP, "participants": ["Alice", "Bob"][: 1 + number % 2], "eventType": "meeting"},
        "scope": "user", "criticality": "routine", "confidence": 0.8, "status": "active", "supersededBy": None,
        "weight": {"mentionCount": 1, "lastAdoptedTurn": 1, "lastRetrievedAt": None, "pinned": False,
                   "floorWeight": 0, "forcedCap": None},
        "createdAt": STAMP, "updatedAt": STAMP,
    }


def build(path: Path, events: int) -> float:
    """Write `events` events with their blocks through commit(); returns seconds taken."""
    started = time.perf_counter()
    blocks = -(-events // EVENTS_PER_BLOCK)
    with open_backend(path) as backend:
        revision = backend.create_space(NAMESPACE, {"blockTurnSize": 12})
        for start in range(0, blocks, BLOCKS_PER_COMMIT):
            end = min(blocks, start + BLOCKS_PER_COMMIT)
            changes = ChangeSet(space={"currentTurn": end * 12})
            for block in range(start, end):
                changes.upsert("blocks", _block(block))
            for number in range(start * EVENTS_PER_BLOCK, min(events, end * EVENTS_PER_BLOCK)):
                changes.upsert("events", _event(number))
            revision = backend.commit(NAMESPACE, changes, revision)
    return time.perf_counter() - started


def run(engine: str, *arguments: str) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one `stratagate` command in a fresh process."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", RUNNER, engine, *arguments], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"stratagate {' '.join(arguments)} failed: {result.stderr[-2000:]}")
    peak = next(line.split()[1] for line in result.stderr.splitlines() if line.startswith("peak-rss-kib"))
    return seconds, int(peak) / 1024


def baseline_engine(revision: str, directory: Path) -> Path:
    """`core/` of `revision` as an importable `stratagate` package under `directory`."""
    directory.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "core"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive.stdout, check=True)
    (directory / "core").rename(directory / "stratagate")
    return directory


def measure(engine: str, source: Path, work: Path, server: PostgresServer, label: str) -> dict[str, tuple[float, float]]:
    exported = work / f"{label}.json"
    return {
        "export -o JSON": run(engine, "export", str(source), "-o", str(exported)),
        "import snapshot → SQLite": run(engine, "import", "snapshot", str(exported), "--database",
                                        str(work / f"{label}-imported.sqlite")),
        "copy → SQLite": run(engine, "copy", str(source), str(work / f"{label}-copied.sqlite")),
        "copy → PostgreSQL": run(engine, "copy", str(source), server.create_database(f"bench_{label}")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k events instead of 100k")
    parser.add_argument("--baseline", metavar="REV", help="also measure the engine of this git revision")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/performance.md")
    arguments = parser.parse_args()
    events = 10_000 if arguments.quick else 100_000
    bin_dir = _bin_dir()
    if bin_dir is None:
        print("bench/transfer.py: skipped, PostgreSQL's initdb is not installed (packaging/setup-env.sh installs it)")
        return
    server = PostgresServer(bin_dir)
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="stratagate-bench-transfer-") as directory:
            work = Path(directory)
            source = work / "source.sqlite"
            build_seconds = build(source, events)
            size_mib = source.stat().st_size / 2**20
            print(f"built {events:,} events ({size_mib:.0f} MiB) in {build_seconds:.1f} s", flush=True)
            engines = {"now": ""}
            if arguments.baseline:
                engines[arguments.baseline] = str(baseline_engine(arguments.baseline, work / "baseline"))
            results = {}
            for label, engine in engines.items():
                results[label] = measure(engine, source, work, server, label.replace("-", "_")[:12])
                print(label, results[label], flush=True)
    finally:
        server.stop()

    rows = [
        [command, label, f"{seconds:.1f}", f"{peak:.0f}"]
        for command in results["now"]
        for label in engines
        for seconds, peak in [results[label][command]]
    ]
    headers = ["command", "engine", "wall (s)", "peak RSS (MiB)"]
    now = results["now"]
    ratio = now["copy → PostgreSQL"][0] / now["copy → SQLite"][0]
    bullets = "\n".join([
        f"- copy peak RSS: **{now['copy → SQLite'][1]:.0f} MiB** to SQLite, **{now['copy → PostgreSQL'][1]:.0f} MiB** "
        "to PostgreSQL (goal ≤ 300 MB): sections are read and written 1,000 records at a time in one transaction.",
        f"- copy to PostgreSQL / copy to SQLite: **{ratio:.2f}×** (goal ≤ 1.5×).",
        "- import still parses the whole JSON file (and validates it whole) before writing, so its peak grows "
        "with the file.",
    ])
    markdown = (
        f"## Export, import and copy, {events:,} events (`bench/transfer.py`)\n\n"
        f"Source: one SQLite file of {events:,} events in {-(-events // EVENTS_PER_BLOCK):,} blocks of "
        f"{MESSAGES_PER_BLOCK} messages ({size_mib:.0f} MiB), built in {build_seconds:.0f} s. Each command runs "
        "once in a fresh process; peak RSS is its VmHWM. `engine` is this tree (`now`) or the git revision "
        "given with `--baseline`.\n\n"
        f"{markdown_table(headers, rows)}\n\n{bullets}"
    )
    print(markdown)
    if not arguments.no_write:
        write_section("transfer", markdown)


if __name__ == "__main__":
    main()
