"""An index's pages asked of the disk before a scan: exactly the index's leaves, every one of them, and the
file is left as it was."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from stratagate.storage import index_prefetch
from stratagate.storage.index_prefetch import prefetch_index

PAGE = 1024


def _file(path: Path) -> None:
    """A table with two indexes whose pages interleave (rows inserted with the indexes present), deep enough
    for three levels at 1 KB pages."""
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA page_size = {PAGE}")
        connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, word TEXT, weight REAL)")
        connection.execute("CREATE INDEX items_word_idx ON items (word, id)")
        connection.execute("CREATE INDEX items_weight_idx ON items (weight, id)")
        connection.executemany("INSERT INTO items (word, weight) VALUES (?, ?)",
                               ((f"word-{number * 7919 % 5000:05d}-padding", number % 97) for number in range(5000)))
    connection.close()


def _pages(path: Path, name: str, kind: str) -> set[int]:
    with sqlite3.connect(path) as connection:
        if not connection.execute("SELECT count(*) FROM pragma_module_list WHERE name = 'dbstat'").fetchone()[0]:
            pytest.skip("this SQLite has no dbstat table")
        found = {row[0] for row in connection.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ?", (name, kind))}
    connection.close()
    return found


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this platform")
def test_the_asked_pages_are_the_index_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "items.sqlite"
    _file(path)
    before = path.read_bytes()
    asked: set[int] = set()

    def advise(_descriptor: int, offset: int, length: int, advice: int) -> None:
        assert advice == os.POSIX_FADV_WILLNEED and offset % PAGE == 0 and length % PAGE == 0
        asked.update(range(offset // PAGE + 1, (offset + length) // PAGE + 1))

    monkeypatch.setattr(index_prefetch.os, "posix_fadvise", advise)
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        prefetch_index(connection, "items_weight_idx")
    engine.dispose()
    leaves, interior = _pages(path, "items_weight_idx", "leaf"), _pages(path, "items_weight_idx", "internal")
    assert len(interior) > 1  # more than a root and its leaves
    assert asked == leaves | interior
    assert path.read_bytes() == before


def test_nothing_is_asked_for_a_database_without_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_prefetch.os, "posix_fadvise", lambda *_arguments: pytest.fail("asked"))
    engine = create_engine("sqlite://")
    with engine.connect() as connection:
        connection.exec_driver_sql("CREATE TABLE items (word TEXT)")
        connection.exec_driver_sql("CREATE INDEX items_word_idx ON items (word)")
        prefetch_index(connection, "items_word_idx")
        prefetch_index(connection, "no_such_index")
    engine.dispose()


def test_an_index_only_in_the_wal_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "items.sqlite"
    _file(path)
    asked: list[int] = []
    monkeypatch.setattr(index_prefetch.os, "posix_fadvise", lambda _descriptor, offset, *_rest: asked.append(offset))
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA journal_mode = WAL")
        connection.exec_driver_sql("PRAGMA wal_autocheckpoint = 0")
        connection.exec_driver_sql("CREATE INDEX items_late_idx ON items (weight, word)")
        connection.commit()
        prefetch_index(connection, "items_late_idx")  # its root is past the end of the main file
    engine.dispose()
    assert all(offset < path.stat().st_size for offset in asked)
