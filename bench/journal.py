"""What the curation journal costs: a journaled curation write, and verifying/exporting a long journal.

In one run, on copies of the reference database:

- a pin/unpin through the engine facade with a journal entry, against the same write without one (the
  entry is appended in the mutation's own transaction, so the ratio is the journal's whole write cost);
- `journal.verify` over 1,000 and 10,000 entries (re-hashing every entry and checking links and the head),
  against reading the same rows with raw `sqlite3` (the floor any check must pay);
- `journal.export_jsonl` of the same entries.

Writes its table to docs/performance.md (section "journal").

    .venv/bin/python bench/journal.py [--quick] [--repeats 5] [--no-write]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
from contextlib import closing
from itertools import cycle
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, median_ms, write_section
from sqlalchemy import create_engine

from stratagate import journal
from stratagate.memory import open as open_memory

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DB = ROOT / "tests" / "fixtures" / "reference-v5-basic.sqlite"
NAMESPACE = "project:atlas"
ENTRIES_PER_COMMIT = 500


def _entry(index: int) -> dict:
    return journal.new_entry(
        "bench",
        "pin" if index % 2 else "unpin",
        [f"evt_{index % 97}"],
        {"status": "active", "pinned": bool(index % 2 == 0), "supersededBy": None, "forcedCap": None},
        {"status": "active", "pinned": bool(index % 2), "supersededBy": None, "forcedCap": None},
    )


def curation_write_ms(folder: Path, repeats: int) -> tuple[float, float]:
    path = folder / "write.sqlite"
    shutil.copyfile(REFERENCE_DB, path)
    memory = open_memory(path, NAMESPACE)
    states = cycle([True, False])
    try:

        def plain() -> None:
            memory.pin_event("evt_51", next(states))

        def journaled() -> None:
            pinned = next(states)
            memory.pin_event("evt_51", pinned, journal_entry=_entry(int(pinned)))

        plain_ms = median_ms(plain, repeats * 10)
        journaled_ms = median_ms(journaled, repeats * 10)
    finally:
        memory.close()
    return plain_ms, journaled_ms


def build_journal(folder: Path, entries: int) -> Path:
    path = folder / f"journal-{entries}.sqlite"
    shutil.copyfile(REFERENCE_DB, path)
    engine = create_engine(f"sqlite:///{path}")
    for start in range(0, entries, ENTRIES_PER_COMMIT):
        with engine.begin() as connection:
            count = min(ENTRIES_PER_COMMIT, entries - start)
            journal.append_entries(connection, NAMESPACE, [_entry(start + i) for i in range(count)])
    engine.dispose()
    return path


def raw_read(path: Path) -> None:
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("SELECT * FROM stratagate_curation_journal ORDER BY namespace, seq").fetchall()
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 entries only")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--no-write", action="store_true", help="print the table, leave docs/performance.md alone"
    )
    arguments = parser.parse_args()
    sizes = [1_000] if arguments.quick else [1_000, 10_000]
    rows = []
    with tempfile.TemporaryDirectory(prefix="stratagate-bench-journal-") as directory:
        folder = Path(directory)
        plain_ms, journaled_ms = curation_write_ms(folder, arguments.repeats)
        rows.append(
            [
                "pin/unpin one event (engine facade)",
                "1",
                f"{journaled_ms:.2f}",
                "write without journal",
                f"{plain_ms:.2f}",
                f"{journaled_ms / plain_ms:.2f}×",
            ]
        )
        for size in sizes:
            path = build_journal(folder, size)
            engine = create_engine(f"sqlite:///{path}")
            result = journal.verify(engine)
            assert result.ok and result.checked == size, result.describe()
            verify_ms = median_ms(lambda engine=engine: journal.verify(engine), arguments.repeats)
            read_ms = median_ms(lambda path=path: raw_read(path), arguments.repeats)
            out = folder / "journal.jsonl"
            export_ms = median_ms(
                lambda engine=engine, out=out: journal.export_jsonl(journal.iter_entries(engine), out),
                arguments.repeats,
            )
            engine.dispose()
            rows.append(
                [
                    "verify the chain",
                    f"{size:,}",
                    f"{verify_ms:.1f}",
                    "raw sqlite3 read of the rows",
                    f"{read_ms:.1f}",
                    f"{verify_ms / read_ms:.1f}×",
                ]
            )
            rows.append(
                [
                    "export JSON lines",
                    f"{size:,}",
                    f"{export_ms:.1f}",
                    "raw sqlite3 read of the rows",
                    f"{read_ms:.1f}",
                    f"{export_ms / read_ms:.1f}×",
                ]
            )
    table = markdown_table(["operation", "entries", "ms (median)", "peer", "peer ms", "ratio"], rows)
    markdown = (
        "## Curation journal (`bench/journal.py`)\n\n"
        "A journaled curation write appends its hash-chained entry in the same transaction as the change; "
        "`verify` re-hashes every entry.\n\n" + table
    )
    print(markdown)
    if not arguments.no_write:
        write_section("journal", markdown)


if __name__ == "__main__":
    main()
