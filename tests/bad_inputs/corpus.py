"""The bad-input corpus: the small hand-written files beside this module plus the big and binary cases,
generated into a directory at test time (so no large file is committed).

`database_cases(folder)` are files handed to commands that open a database; `snapshot_cases(folder)` files
handed to `stratagate import snapshot`; `newer_schema_cases(folder)` files of schema 8-12, which open
read-only (any write is refused). Each case is (name, path, words the error must contain).
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import stratagate
from tests.storage.legacy_files import make_newer

HERE = Path(__file__).parent
NAMESPACE = "bad"
TEN_MB = 10 * 1024 * 1024
DEEP = 100_000  # nesting levels: far beyond Python's recursion limit

Case = tuple[str, Path, str]


def committed(name: str) -> Path:
    return HERE / name


def valid_database(path: Path) -> Path:
    """A small v7 memory: one sealed block with one event card."""
    with stratagate.open(path, NAMESPACE, block_turn_size=1) as memory:
        block = memory.append_turn("Alice picked Postgres for Atlas.", "Noted.").sealed_block
        memory.add_event("Database choice", "Alice picked Postgres.", id="evt_1", source_block_id=block.id)
    return path


def valid_snapshot() -> dict:
    """The export of `valid_database`'s content: {namespace: {"snapshot": ..., "revision": ...}}."""
    return json.loads(committed("valid-snapshot.json").read_text())


def _with_row_edit(folder: Path, name: str, statement: str, *parameters: object) -> Path:
    path = valid_database(folder / name)
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(statement, parameters)
    return path


def database_cases(folder: Path) -> list[Case]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(10)
    reference = HERE.parent / "fixtures" / "reference-v5-basic.sqlite"
    cases: list[Case] = []

    empty = folder / "empty.sqlite"
    empty.write_bytes(b"")
    cases.append(("zero-byte", empty, "empty file"))
    truncated = folder / "truncated.sqlite"
    truncated.write_bytes(reference.read_bytes()[:5000])
    cases.append(("truncated", truncated, "truncated"))
    noise = folder / "random.sqlite"
    noise.write_bytes(rng.randbytes(64 * 1024))
    cases.append(("random bytes", noise, "not an SQLite database"))
    foreign = folder / "foreign.sqlite"
    with closing(sqlite3.connect(foreign)) as connection, connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        connection.execute("INSERT INTO invoices (total) VALUES (12.5)")
    cases.append(("foreign SQLite database", foreign, "not a StrataGate"))
    future = valid_database(folder / "schema-99.sqlite")
    with closing(sqlite3.connect(future)) as connection, connection:
        connection.execute("PRAGMA user_version = 99")
    cases.append(("schema version 99", future, "schema 99"))

    cases.append(("wrong JSON type in a row", _with_row_edit(
        folder, "wrong-type.sqlite", "UPDATE events SET tags_json = ?", '{"not": "a list"}'), "tags"))
    cases.append(("malformed JSON in a row", _with_row_edit(
        folder, "malformed-json.sqlite", "UPDATE events SET temporal_json = ?", '{"mentionedAt": '), "temporal"))
    cases.append(("deep JSON in a row", _with_row_edit(
        folder, "deep-json.sqlite", "UPDATE events SET quotes_json = ?", "[" * DEEP + "]" * DEEP), "quotes"))
    cases.append(("number for a date in a row", _with_row_edit(
        folder, "number-date.sqlite", "UPDATE events SET temporal_json = ?", '{"mentionedAt": 12}'), "mentionedAt"))
    cases.append(("10 MB message in a row", _with_row_edit(
        folder, "huge-message.sqlite", "UPDATE messages SET content = ? WHERE role = 'user'", "x" * TEN_MB),
        "content"))
    return cases


def snapshot_cases(folder: Path) -> list[Case]:
    folder.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = [
        ("not JSON", committed("not-json.json"), "not a JSON snapshot file"),
        ("truncated JSON", committed("truncated-snapshot.json"), "not a JSON snapshot file"),
        ("wrong JSON types", committed("snapshot-wrong-types.json"), "tags"),
        ("NaN number", committed("snapshot-nan.json"), "confidence must be a finite number"),
    ]
    empty = folder / "empty.json"
    empty.write_bytes(b"")
    cases.append(("zero-byte snapshot", empty, "not a JSON snapshot file"))
    binary = folder / "random.json"
    binary.write_bytes(random.Random(11).randbytes(4096))
    cases.append(("random bytes snapshot", binary, "snapshot"))
    deep = folder / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    cases.append(("deep JSON", deep, "nested too deeply"))

    huge = valid_snapshot()
    huge[NAMESPACE]["snapshot"]["openTail"].append({
        "id": "msg_huge", "role": "user", "content": "x" * TEN_MB, "createdAt": "2026-03-02T09:00:00.000+08:00"})
    huge_file = folder / "huge-message.json"
    huge_file.write_text(json.dumps(huge))
    cases.append(("10 MB message", huge_file, "content"))
    return cases


def newer_schema_cases(folder: Path) -> list[Case]:
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for version in range(8, 13):
        path = valid_database(folder / f"schema-{version}.sqlite")
        make_newer(path, version, NAMESPACE)
        cases.append((f"schema {version}", path, f"schema {version} is newer"))
    return cases


def copy_case(path: Path, folder: Path) -> Path:
    """A private copy (the committed files are read-only inputs)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(path, folder / path.name))
